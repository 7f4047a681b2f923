//! Embedding springsim in a host wgpu application: the host owns the device, the queue and the
//! encoder; springsim records its compute passes into the host's encoder and never submits.
//!
//! `cargo run --release --example embed`

use springsim::wgpu;
use springsim::{gpu::GpuSimulator, model, Method, Simulator, StepSettings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The host's own device (here a headless one; a windowed app would pass its surface).
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))?;
    println!("host adapter: {}", adapter.get_info().name);

    let cloth = model::curtain(41, None)?;
    let mut sim = GpuSimulator::new(&device, &queue, &cloth, Method::SymplecticEuler, StepSettings::default())?;
    println!("h = {:.3e} s, {} steps per frame", sim.plan().h, sim.plan().substeps);

    // The buffer a renderer binds as its vertex buffer: the first n vec4<f32> are the positions.
    let range = sim.state().positions_range();
    println!("positions: {} bytes of {:?}", range.end - range.start, sim.positions_buffer().usage());

    for frame in 0..10 {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("host frame") });
        sim.encode_frame(&mut encoder)?;
        // ... the host records its render pass here, reading sim.positions_buffer() ...
        queue.submit([encoder.finish()]);
        if frame % 5 == 4 {
            let (x, _) = sim.read_state()?;
            let low = x.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
            println!("frame {}: lowest point y = {low:.4} m", frame + 1);
        }
    }
    Ok(())
}
