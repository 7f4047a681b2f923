//! Helpers shared by the kernel structs (one per WGSL file): compiling a file's entry points by name,
//! bind group layout entries, bind groups.

use crate::error::{Error, Result};
use crate::gpu::base::kernel::Subsets;
pub use crate::gpu::base::kernel::{Bindings, GroupLayout, Kernel};
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
/// symplectic Euler 2%). On an NVIDIA H200 a build that read every parameter block as a uniform
/// ([`crate::gpu::base::specialize::params_as_uniforms`] on every kernel file) ran the explicit family at
/// 512² and 1024² and the 1024² local/global Chebyshev frame within 3% of this one, either way.
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
/// rounded up to the device's storage (and uniform: [`crate::gpu::base::specialize::params_as_uniforms`])
/// offset alignment.
pub fn params_stride(device: &wgpu::Device, size: usize) -> u32 {
    let limits = device.limits();
    let a = limits.min_storage_buffer_offset_alignment.max(limits.min_uniform_buffer_offset_alignment).max(1);
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
    layouts: Vec<GroupLayout>,
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
    pub fn layout(&self, group: usize) -> Result<GroupLayout> {
        self.layouts.get(group).cloned().ok_or_else(|| Error::internal_gpu(format!("{}: no bind group {group}", self.file)))
    }

    /// Whether each kernel has a layout of its own (the file's layout is over the device's limits).
    pub fn per_kernel(&self) -> bool {
        self.layouts.first().is_some_and(|l| l.subsets.is_some())
    }
}

/// Makes the bind group of `layout` from `entries` (one per binding of the file's layout; a per-kernel
/// layout takes those of its bindings).
pub fn bind_entries(device: &wgpu::Device, layout: &GroupLayout, label: &str, entries: &[wgpu::BindGroupEntry]) -> Bindings {
    if let Some(shared) = &layout.shared {
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(label), layout: shared, entries });
        return Bindings { shared: Some(group), sets: std::sync::Arc::new([]), subsets: None };
    }
    let subsets = layout.subsets.clone().expect("a group layout is shared or per kernel");
    let mut dynamic: Vec<u32> = layout
        .entries
        .iter()
        .filter(|e| matches!(e.ty, wgpu::BindingType::Buffer { has_dynamic_offset: true, .. }))
        .map(|e| e.binding)
        .collect();
    dynamic.sort_unstable();
    let sets: Vec<(wgpu::BindGroup, Vec<usize>)> = subsets
        .sets
        .iter()
        .map(|(kept, set_layout)| {
            let kept_entries: Vec<wgpu::BindGroupEntry> = entries.iter().filter(|e| kept.contains(&e.binding)).cloned().collect();
            let group =
                device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(label), layout: set_layout, entries: &kept_entries });
            let offsets = dynamic.iter().enumerate().filter(|(_, b)| kept.contains(b)).map(|(i, _)| i).collect();
            (group, offsets)
        })
        .collect();
    Bindings { shared: None, sets: sets.into(), subsets: Some(subsets) }
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
///
/// Where the file's layout binds more storage buffers than the device allows, each kernel gets a
/// layout of the bindings it uses ([`GroupLayout`]); the second halves of split tables that the
/// constants say are not split (`NBR_SPLIT` = 0, ...) are then left out of the module
/// ([`crate::gpu::base::specialize::SPLIT_PARTS`]), and a kernel still over the limit is refused with
/// one line naming it.
pub fn build_specialized(
    device: &wgpu::Device,
    options: &GpuOptions,
    file: &'static str,
    groups: &[&[wgpu::BindGroupLayoutEntry]],
    entry_points: &[&'static str],
    constants: &[(&str, f64)],
) -> Result<Kernels> {
    let label = format!("springsim.{}", file.trim_end_matches(".wgsl"));
    let mut source = compose_split(kernel_wgsl(file)?, options.split_bytes(device));
    let mut owned: Vec<Vec<wgpu::BindGroupLayoutEntry>> = groups.iter().map(|g| g.to_vec()).collect();
    let mut uses = None;
    if check_bindings(device, file, groups).is_err() {
        // a layout per kernel: without the unsplit tables' second halves, then, where a kernel is
        // still over, with the parameter blocks read as uniforms
        source = crate::gpu::base::specialize::drop_unsplit_parts(&source, constants);
        let found = match kernel_uses(device, file, &source, &owned, entry_points) {
            Ok(found) => found,
            Err(_) => {
                let (uniform, slots) = crate::gpu::base::specialize::params_as_uniforms(&source);
                source = uniform;
                for (g, entries) in owned.iter_mut().enumerate() {
                    for e in entries.iter_mut().filter(|e| slots.contains(&(g as u32, e.binding))) {
                        if let wgpu::BindingType::Buffer { ty, .. } = &mut e.ty {
                            *ty = wgpu::BufferBindingType::Uniform;
                        }
                    }
                }
                kernel_uses(device, file, &source, &owned, entry_points)?
            }
        };
        uses = Some(found);
    }
    let groups: Vec<&[wgpu::BindGroupLayoutEntry]> = owned.iter().map(Vec::as_slice).collect();
    let desc = wgpu::ShaderModuleDescriptor { label: Some(&label), source: wgpu::ShaderSource::Wgsl(source.into()) };
    let module = options.create_shader_module(device, desc);
    let new_layout = |entries: &[wgpu::BindGroupLayoutEntry]| {
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries })
    };
    let layouts: Vec<GroupLayout> = match &uses {
        None => groups
            .iter()
            .map(|entries| GroupLayout { entries: (*entries).into(), shared: Some(new_layout(entries)), subsets: None })
            .collect(),
        Some(uses) => groups
            .iter()
            .enumerate()
            .map(|(g, entries)| {
                let mut sets: Vec<(Vec<u32>, wgpu::BindGroupLayout)> = Vec::new();
                let mut kernels = Vec::new();
                for ep in entry_points {
                    let kept: Vec<u32> = entries.iter().map(|e| e.binding).filter(|b| uses[*ep].contains(&(g as u32, *b))).collect();
                    let index = match sets.iter().position(|(k, _)| *k == kept) {
                        Some(i) => i,
                        None => {
                            let kept_entries: Vec<wgpu::BindGroupLayoutEntry> =
                                entries.iter().filter(|e| kept.contains(&e.binding)).cloned().collect();
                            sets.push((kept, new_layout(&kept_entries)));
                            sets.len() - 1
                        }
                    };
                    kernels.push((*ep, index));
                }
                GroupLayout { entries: (*entries).into(), shared: None, subsets: Some(std::sync::Arc::new(Subsets { sets, kernels })) }
            })
            .collect(),
    };
    let pipeline_layout = |kernel: &str| {
        let refs: Vec<Option<&wgpu::BindGroupLayout>> = layouts
            .iter()
            .map(|l| match (&l.shared, &l.subsets) {
                (Some(shared), _) => Some(shared),
                (None, Some(s)) => s.kernels.iter().find(|(k, _)| *k == kernel).map(|(_, i)| &s.sets[*i].1),
                (None, None) => None,
            })
            .collect();
        device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some(&label), bind_group_layouts: &refs, immediate_size: 0 })
    };
    let shared_layout = if uses.is_none() { Some(pipeline_layout("")) } else { None };
    let pipelines = entry_points
        .iter()
        .map(|&ep| {
            let own;
            let layout = match &shared_layout {
                Some(l) => l,
                None => {
                    own = pipeline_layout(ep);
                    &own
                }
            };
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(ep),
                layout: Some(layout),
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

/// Whether a kernel file's layout `groups` fits the device as one layout that its kernels share (else
/// [`build_specialized`] gives each kernel its own).
pub fn fits(device: &wgpu::Device, groups: &[&[wgpu::BindGroupLayoutEntry]]) -> bool {
    check_bindings(device, "", groups).is_ok()
}

/// The bindings of each of `entry_points` in `source`, each kernel's checked against the device's
/// limits on its own.
fn kernel_uses(
    device: &wgpu::Device,
    file: &str,
    source: &str,
    groups: &[Vec<wgpu::BindGroupLayoutEntry>],
    entry_points: &[&'static str],
) -> Result<std::collections::HashMap<String, std::collections::BTreeSet<crate::gpu::base::uses::Slot>>> {
    let found = crate::gpu::base::uses::entry_point_uses(source);
    for ep in entry_points {
        let Some(slots) = found.get(*ep) else {
            return Err(Error::internal_gpu(format!("{file}: entry point {ep} not found in its source")));
        };
        let kernel_groups: Vec<Vec<wgpu::BindGroupLayoutEntry>> = groups
            .iter()
            .enumerate()
            .map(|(g, entries)| entries.iter().filter(|e| slots.contains(&(g as u32, e.binding))).cloned().collect())
            .collect();
        let refs: Vec<&[wgpu::BindGroupLayoutEntry]> = kernel_groups.iter().map(Vec::as_slice).collect();
        check_bindings(device, &format!("{file} ({ep})"), &refs)?;
    }
    Ok(found)
}

/// Refuses a kernel file whose layout binds more storage buffers to the compute stage, or more with a
/// dynamic offset, than the device allows: one line naming the file, the count and the limit, where
/// wgpu would otherwise raise a validation error (a panic, unless the host set an error handler).
pub fn check_bindings(device: &wgpu::Device, file: &str, groups: &[&[wgpu::BindGroupLayoutEntry]]) -> Result<()> {
    let count = |uniform: bool, dynamic: bool| {
        groups
            .iter()
            .flat_map(|g| g.iter())
            .filter(|e| match e.ty {
                wgpu::BindingType::Buffer { ty, has_dynamic_offset, .. } => {
                    (ty == wgpu::BufferBindingType::Uniform) == uniform && (!dynamic || has_dynamic_offset)
                }
                _ => false,
            })
            .count() as u32
    };
    let limits = device.limits();
    for (count, limit, name) in [
        (count(false, false), limits.max_storage_buffers_per_shader_stage, "max_storage_buffers_per_shader_stage"),
        (count(false, true), limits.max_dynamic_storage_buffers_per_pipeline_layout, "max_dynamic_storage_buffers_per_pipeline_layout"),
        (count(true, false), limits.max_uniform_buffers_per_shader_stage, "max_uniform_buffers_per_shader_stage"),
        (count(true, true), limits.max_dynamic_uniform_buffers_per_pipeline_layout, "max_dynamic_uniform_buffers_per_pipeline_layout"),
    ] {
        if count > limit {
            return Err(Error::AdapterLimit { what: file.to_string(), limit_name: name, requested: count.into(), available: limit.into() });
        }
    }
    Ok(())
}

/// A bind group of one parameter table at binding 0 read through a dynamic offset, `size` bytes per entry
/// (for a [`dynamic_params`] layout).
pub fn bind_dynamic(device: &wgpu::Device, layout: &GroupLayout, label: &str, buffer: &wgpu::Buffer, size: usize) -> Bindings {
    let entries = [wgpu::BindGroupEntry {
        binding: 0,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset: 0, size: wgpu::BufferSize::new(size as u64) }),
    }];
    bind_entries(device, layout, label, &entries)
}

/// A bind group of whole buffers, bound in order from binding 0.
pub fn bind(device: &wgpu::Device, layout: &GroupLayout, label: &str, buffers: &[&wgpu::Buffer]) -> Bindings {
    let entries: Vec<wgpu::BindGroupEntry> =
        buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
    bind_entries(device, layout, label, &entries)
}
