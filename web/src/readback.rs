//! Reading GPU buffers back in a page: mapped asynchronously, awaited as a promise (a page cannot
//! block on the GPU).

use springsim::GpuSimulator;
use wasm_bindgen::JsValue;

/// The buffer's mapping, as a future that resolves once the browser has mapped it.
pub async fn mapped(buffer: &wgpu::Buffer) -> Result<(), JsValue> {
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = match r {
                Ok(()) => resolve.call0(&JsValue::NULL),
                Err(e) => reject.call1(&JsValue::NULL, &JsValue::from(format!("mapping a buffer failed: {e}"))),
            };
        });
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.map(|_| ())
}

/// The `vec4<f32>` words of a mapped buffer as (x, y, z) per particle.
pub fn xyz(buffer: &wgpu::Buffer) -> Result<Vec<f32>, String> {
    let data = buffer.slice(..).get_mapped_range().map_err(|e| format!("reading a mapped buffer: {e:?}"))?;
    let words: Vec<f32> = data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    drop(data);
    buffer.unmap();
    Ok(words.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect())
}

/// A `MAP_READ` buffer holding a copy of the simulator's positions, recorded into `encoder`.
pub fn copy_positions(device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder, sim: &GpuSimulator) -> wgpu::Buffer {
    let range = sim.positions_range();
    let size = range.end - range.start;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("springsim.web_positions"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(sim.positions_buffer(), range.start, &buffer, 0, size);
    buffer
}

/// The simulator's positions, (x, y, z) per particle: copied after the work submitted so far, mapped,
/// awaited.
pub async fn positions(device: &wgpu::Device, queue: &wgpu::Queue, sim: &GpuSimulator) -> Result<Vec<f32>, JsValue> {
    let mut encoder = device.create_command_encoder(&Default::default());
    let buffer = copy_positions(device, &mut encoder, sim);
    queue.submit([encoder.finish()]);
    mapped(&buffer).await?;
    Ok(xyz(&buffer)?)
}
