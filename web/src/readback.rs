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
    let positions = sim.positions();
    let size = positions.size();
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("springsim.web_positions"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(positions.buffer(), positions.offset(), &buffer, 0, size);
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

/// The RGBA8 pixels of `texture` (a 4-byte-per-pixel format, `COPY_SRC`), row after row: copied after
/// the work submitted so far, mapped, awaited.
pub async fn texture_rgba(device: &wgpu::Device, queue: &wgpu::Queue, texture: &wgpu::Texture) -> Result<Vec<u8>, JsValue> {
    let (w, h) = (texture.width(), texture.height());
    let row = (4 * w).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("springsim.web_pixels"),
        size: u64::from(row) * u64::from(h),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(row), rows_per_image: Some(h) },
        },
        wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
    );
    queue.submit([encoder.finish()]);
    mapped(&buffer).await?;
    let data = buffer.slice(..).get_mapped_range().map_err(|e| format!("reading a mapped buffer: {e:?}"))?;
    let pixels = data.chunks_exact(row as usize).flat_map(|r| &r[..4 * w as usize]).copied().collect();
    drop(data);
    buffer.unmap();
    Ok(pixels)
}

/// Resolves in a later task of the page's event loop (a message to itself: unlike `setTimeout`, never
/// held back), letting the browser deliver what the GPU finished (mapped buffers) meanwhile.
pub async fn next_task() -> Result<(), JsValue> {
    let channel = web_sys::MessageChannel::new()?;
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        channel.port1().set_onmessage(Some(&resolve));
    });
    channel.port2().post_message(&JsValue::NULL)?;
    wasm_bindgen_futures::JsFuture::from(promise).await.map(|_| ())
}
