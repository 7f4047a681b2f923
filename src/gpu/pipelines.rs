//! Helpers shared by the pipeline structs (one per WGSL file).

use super::layout::compose;

/// Whether the kernels keep wgpu's runtime checks (bounds checks, loop bounding):
/// `SPRINGSIM_SHADER_CHECKS=1`. Off by default; they cost a large share of the time on lavapipe.
pub fn shader_checks() -> bool {
    std::env::var("SPRINGSIM_SHADER_CHECKS").is_ok_and(|v| v == "1")
}

/// A uniform buffer binding.
pub fn uniform(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None },
        count: None,
    }
}

/// A uniform buffer binding with a dynamic offset, of `size` bytes per entry (one struct per dispatch).
pub fn dynamic_uniform(binding: u32, size: usize) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: wgpu::BufferSize::new(size as u64),
        },
        count: None,
    }
}

/// A storage buffer binding.
pub fn storage(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Builds a bind group layout and one compute pipeline per entry point of a kernel file.
pub fn build(
    device: &wgpu::Device,
    label: &str,
    kernel_src: &str,
    entries: &[wgpu::BindGroupLayoutEntry],
    entry_points: &[&str],
) -> (wgpu::BindGroupLayout, Vec<wgpu::ComputePipeline>) {
    let (mut layouts, pipelines) = build_groups(device, label, kernel_src, &[entries], entry_points);
    (layouts.remove(0), pipelines)
}

/// Builds one bind group layout per group (group g from `groups[g]`) and one compute pipeline per entry
/// point of a kernel file.
pub fn build_groups(
    device: &wgpu::Device,
    label: &str,
    kernel_src: &str,
    groups: &[&[wgpu::BindGroupLayoutEntry]],
    entry_points: &[&str],
) -> (Vec<wgpu::BindGroupLayout>, Vec<wgpu::ComputePipeline>) {
    let desc = wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(compose(kernel_src).into()) };
    let module = if shader_checks() {
        device.create_shader_module(desc)
    } else {
        // SAFETY: every index our kernels form is in range by construction: particle indices are
        // guarded by `i < n`; spring endpoints and CSR entries come from a model that passed
        // `Model::validate` (endpoints < n) and from `Incidence::build` (offsets[n] = entries.len());
        // the buffers are sized from the same counts in `GpuState::new` (the PCG's vectors and partials
        // from n and the workgroup count that `CgPass` carries). The loops are bounded by the CSR
        // offsets, the partial count or the workgroup size. Set SPRINGSIM_SHADER_CHECKS=1 to keep
        // wgpu's bounds checks and loop bounding.
        unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    };
    let layouts: Vec<wgpu::BindGroupLayout> = groups
        .iter()
        .map(|entries| device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(label), entries }))
        .collect();
    let refs: Vec<Option<&wgpu::BindGroupLayout>> = layouts.iter().map(Some).collect();
    let pl =
        device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some(label), bind_group_layouts: &refs, immediate_size: 0 });
    let pipelines = entry_points
        .iter()
        .map(|ep| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(ep),
                layout: Some(&pl),
                module: &module,
                entry_point: Some(ep),
                compilation_options: Default::default(),
                cache: None,
            })
        })
        .collect();
    (layouts, pipelines)
}

/// A bind group of one uniform buffer at binding 0 read through a dynamic offset, `size` bytes per entry
/// (for a [`dynamic_uniform`] layout).
pub fn bind_dynamic(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    label: &str,
    buffer: &wgpu::Buffer,
    size: usize,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset: 0, size: wgpu::BufferSize::new(size as u64) }),
        }],
    })
}

/// A bind group of whole buffers, bound in order from binding 0.
pub fn bind(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, label: &str, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> =
        buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(label), layout, entries: &entries })
}
