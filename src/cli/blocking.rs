//! The calls of the command line that wait on the GPU outside any frame: `springsim info`'s listing of
//! the adapters (the instance's enumeration is a future; the command waits for it).

use anyhow::Result;
use springsim::gpu::base::context::{adapter_name, instance_from_env};

/// `springsim info`: every adapter the instance finds, with its driver and the limits springsim sizes
/// its buffers and dispatches by.
pub fn info() -> Result<()> {
    let instance = instance_from_env();
    let adapters = pollster::block_on(instance.enumerate_adapters(springsim::wgpu::Backends::all()));
    if adapters.is_empty() {
        outln!("no adapters found (WGPU_BACKEND={})", std::env::var("WGPU_BACKEND").unwrap_or_else(|_| "all".into()))?;
    }
    for a in adapters {
        let info = a.get_info();
        let l = a.limits();
        outln!("{}", adapter_name(&info))?;
        outln!("  driver: {} {}", info.driver, info.driver_info)?;
        outln!(
            "  limits: max_storage_buffer_binding_size = {}, max_buffer_size = {}, max_storage_buffers_per_shader_stage = {}, max_compute_workgroup_size_x = {}, max_compute_invocations_per_workgroup = {}, max_compute_workgroups_per_dimension = {}",
            l.max_storage_buffer_binding_size,
            l.max_buffer_size,
            l.max_storage_buffers_per_shader_stage,
            l.max_compute_workgroup_size_x,
            l.max_compute_invocations_per_workgroup,
            l.max_compute_workgroups_per_dimension
        )?;
    }
    Ok(())
}
