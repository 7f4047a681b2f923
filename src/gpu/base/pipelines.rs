//! Helpers shared by the kernel structs (one per WGSL file): compiling a file's entry points by name,
//! bind group layout entries, bind groups.

use crate::error::{Error, Result};
pub use crate::gpu::base::kernel::Kernel;
use crate::gpu::base::layout::{compose_split, kernel_wgsl};
use crate::gpu::base::options::GpuOptions;

/// A parameter block: a read-only storage binding of one struct the host writes (`Params`, a method's
/// constants).
///
/// Parameter blocks are storage, not uniform, buffers because lavapipe (Mesa's software Vulkan, the CI
/// platform) specializes a shader on the values of the uniform buffer words its branches and loop
/// bounds read: every dispatch whose uniform values changed, or whose pipeline was rebound, compiled a
/// new LLVM variant, and Mesa 22.3 keeps each one (explicit Euler compiled 41 shaders a frame at 32²,
/// implicit Euler's multigrid 101, and the host memory grew by megabytes a frame). Storage loads are
/// never specialized. They cost lavapipe a little where nothing was recompiled (Jacobi-PCG 6–14%,
/// symplectic Euler 2%); on a real GPU they are a few loads from one cached address a kernel, not yet
/// measured against uniform reads.
pub fn params(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A table of parameter blocks read through a dynamic offset, `size` bytes per entry (one struct per
/// dispatch), as a read-only storage binding for the reason [`params`] gives; entries lie
/// [`params_stride`] bytes apart.
pub fn dynamic_params(binding: u32, size: usize) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: true,
            min_binding_size: wgpu::BufferSize::new(size as u64),
        },
        count: None,
    }
}

/// The distance between the entries of a [`dynamic_params`] table of `size`-byte structs: the size,
/// rounded up to the device's storage offset alignment.
pub fn params_stride(device: &wgpu::Device, size: usize) -> u32 {
    let a = device.limits().min_storage_buffer_offset_alignment.max(1);
    (size as u32).div_ceil(a) * a
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

/// The compiled kernels of one WGSL file: a bind group layout per group and the pipelines of the entry
/// points asked for, found by name.
pub struct Kernels {
    layouts: Vec<wgpu::BindGroupLayout>,
    pipelines: Vec<Kernel>,
    file: &'static str,
}

impl Kernels {
    /// The pipeline of entry point `name` (one of those compiled).
    pub fn pipeline(&self, name: &str) -> Result<Kernel> {
        self.pipelines
            .iter()
            .find(|k| k.name == name)
            .cloned()
            .ok_or_else(|| Error::internal_gpu(format!("{}: entry point {name} was not compiled", self.file)))
    }

    /// The layout of bind group `group` (its `@group` number in the WGSL).
    pub fn layout(&self, group: usize) -> Result<wgpu::BindGroupLayout> {
        self.layouts.get(group).cloned().ok_or_else(|| Error::internal_gpu(format!("{}: no bind group {group}", self.file)))
    }
}

/// Compiles the kernel file `file` (a name in [`crate::gpu::base::layout::KERNEL_WGSL`]): one bind group layout per
/// group (group g from `groups[g]`) and one compute pipeline per entry point in `entry_points`, with or
/// without wgpu's runtime checks as `options` say.
pub fn build(
    device: &wgpu::Device,
    options: &GpuOptions,
    file: &'static str,
    groups: &[&[wgpu::BindGroupLayoutEntry]],
    entry_points: &[&'static str],
) -> Result<Kernels> {
    build_specialized(device, options, file, groups, entry_points, &[])
}

/// [`build`] with values for the module's pipeline-overridable constants (`override` in the WGSL, by
/// name; those not given keep their defaults), e.g. [`crate::gpu::base::specialize::ForceFeatures::constants`].
pub fn build_specialized(
    device: &wgpu::Device,
    options: &GpuOptions,
    file: &'static str,
    groups: &[&[wgpu::BindGroupLayoutEntry]],
    entry_points: &[&'static str],
    constants: &[(&str, f64)],
) -> Result<Kernels> {
    check_bindings(device, file, groups)?;
    let label = format!("springsim.{}", file.trim_end_matches(".wgsl"));
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(&label),
        source: wgpu::ShaderSource::Wgsl(compose_split(kernel_wgsl(file)?, options.split_bytes(device)).into()),
    };
    let module = options.create_shader_module(device, desc);
    let layouts: Vec<wgpu::BindGroupLayout> = groups
        .iter()
        .map(|entries| device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries }))
        .collect();
    let refs: Vec<Option<&wgpu::BindGroupLayout>> = layouts.iter().map(Some).collect();
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&label),
        bind_group_layouts: &refs,
        immediate_size: 0,
    });
    let pipelines = entry_points
        .iter()
        .map(|&ep| {
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(ep),
                layout: Some(&pl),
                module: &module,
                entry_point: Some(ep),
                compilation_options: wgpu::PipelineCompilationOptions { constants, ..Default::default() },
                cache: None,
            });
            Kernel { pipeline, name: ep }
        })
        .collect();
    Ok(Kernels { layouts, pipelines, file })
}

/// Refuses a kernel file whose layout binds more storage buffers to the compute stage, or more with a
/// dynamic offset, than the device allows: one line naming the file, the count and the limit, where
/// wgpu would otherwise raise a validation error (a panic, unless the host set an error handler).
pub fn check_bindings(device: &wgpu::Device, file: &str, groups: &[&[wgpu::BindGroupLayoutEntry]]) -> Result<()> {
    let storage = |dynamic: bool| {
        groups
            .iter()
            .flat_map(|g| g.iter())
            .filter(|e| match e.ty {
                wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Storage { .. }, has_dynamic_offset, .. } => {
                    !dynamic || has_dynamic_offset
                }
                _ => false,
            })
            .count() as u32
    };
    let limits = device.limits();
    for (count, limit, name) in [
        (storage(false), limits.max_storage_buffers_per_shader_stage, "max_storage_buffers_per_shader_stage"),
        (storage(true), limits.max_dynamic_storage_buffers_per_pipeline_layout, "max_dynamic_storage_buffers_per_pipeline_layout"),
    ] {
        if count > limit {
            return Err(Error::AdapterLimit { what: file.to_string(), limit_name: name, requested: count.into(), available: limit.into() });
        }
    }
    Ok(())
}

/// A bind group of one parameter table at binding 0 read through a dynamic offset, `size` bytes per entry
/// (for a [`dynamic_params`] layout).
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
