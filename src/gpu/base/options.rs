//! `GpuOptions`: how the GPU engine compiles its kernels. Safe by default: every shader module is
//! created with wgpu's runtime checks (bounds checks, loop bounding) on. This file is the one place
//! where a host can turn them off, and only through the `unsafe` [`GpuOptions::with_unchecked_shaders`].

/// Options of a [`crate::gpu::GpuEngine`] beyond the step settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuOptions {
    /// true: the kernels run without wgpu's runtime checks (set only by the unsafe opt-out).
    unchecked_shaders: bool,
    /// Storage buffers are split into bindings of at most this many bytes when it is below the device's
    /// `max_storage_buffer_binding_size` ([`GpuOptions::with_max_binding_bytes`]); `None`: the device's.
    max_binding: Option<u64>,
    /// The PCG's dot products are reduced by a one-workgroup dispatch from this many workgroups per
    /// vector on ([`GpuOptions::with_pcg_reduce_from`]); `None`: [`PCG_REDUCE_FROM`].
    pcg_reduce_from: Option<u32>,
}

/// From this many workgroups per vector (64 particles each, so from 65,536 particles, the 256² cloth)
/// the PCG sums its per-workgroup partial dot products in a one-workgroup `pcg_reduce` dispatch before
/// the kernel that needs them, instead of letting every workgroup of that kernel sum all G partials
/// again: G² loads a dispatch, 268 M at the 1024² cloth (G = 16,384). Below it the re-sum costs less than a
/// dispatch. See `shaders/pcg.wgsl`; on an NVIDIA H200 it took a Jacobi-PCG iteration at 1024² from
/// 0.73 to 0.45 ms, and on lavapipe the 256² implicit row 755 → 559 ms.
pub const PCG_REDUCE_FROM: u32 = 1024;

impl GpuOptions {
    /// The kernels are created without wgpu's runtime checks (`create_shader_module_trusted` with
    /// `ShaderRuntimeChecks::unchecked()`): no bounds checks on buffer indexing and no loop bounding.
    /// On lavapipe this makes the kernels 1–4% faster; on an NVIDIA H100 the 1024² local/global frame
    /// was no faster (32.6 ms against 31.2 with the checks).
    ///
    /// # Safety
    ///
    /// The caller asserts that every index the kernels form is in range and every loop ends. springsim's
    /// kernels are written so that this holds for the buffers the engine allocates itself: particle
    /// indices are guarded by `i < n`; spring endpoints and CSR entries come from a model that passed
    /// `Model::validate` (endpoints < n) and from `Incidence::build` (offsets\[n\] = entries.len()); the
    /// buffers are sized from the same counts; the loops are bounded by the CSR offsets, the partial
    /// count or the workgroup size. A host that writes the engine's buffers itself (positions through
    /// `GpuSimulator::positions`, or anything bound to the kernels) must keep those invariants: an index out of
    /// range then reads or writes outside the buffer, which is undefined behaviour on the device.
    pub unsafe fn with_unchecked_shaders(mut self) -> Self {
        self.unchecked_shaders = true;
        self
    }

    /// Whether the kernels keep wgpu's runtime checks (true unless the host opted out).
    pub fn shader_checks(&self) -> bool {
        !self.unchecked_shaders
    }

    /// Splits the large storage buffers (the neighbour table, implicit Euler's blocks, local/global's
    /// tables and work vectors, the multigrid matrices) into bindings of at most `bytes` (rounded down to
    /// a multiple of 256, at least 256) when that is below the device's `max_storage_buffer_binding_size`:
    /// the split path at a size where the device would not need it (tests), or a host that keeps its
    /// bindings smaller than the device allows.
    pub fn with_max_binding_bytes(mut self, bytes: u64) -> Self {
        self.max_binding = Some(bytes);
        self
    }

    /// The PCG reduces its dot products in a dispatch of their own from `groups` workgroups per vector on
    /// (default [`PCG_REDUCE_FROM`]); 1: always, `u32::MAX`: never. Both give the same numbers bit for bit
    /// (the same sums in the same order); tests use it to run either path at a small size.
    pub fn with_pcg_reduce_from(mut self, groups: u32) -> Self {
        self.pcg_reduce_from = Some(groups);
        self
    }

    /// The threshold of [`GpuOptions::with_pcg_reduce_from`].
    pub fn pcg_reduce_from(&self) -> u32 {
        self.pcg_reduce_from.unwrap_or(PCG_REDUCE_FROM)
    }

    /// The cap of [`GpuOptions::with_max_binding_bytes`], if any.
    pub fn max_binding_bytes(&self) -> Option<u64> {
        self.max_binding
    }

    /// The bytes at which the engine splits a storage buffer into bindings on `device`: the device's
    /// `max_storage_buffer_binding_size`, or the smaller cap of [`GpuOptions::with_max_binding_bytes`],
    /// rounded down to a multiple of 256 and kept within [256 B, 1 GiB]
    /// ([`crate::gpu::base::alloc::split_bytes`]).
    pub fn split_bytes(&self, device: &wgpu::Device) -> u64 {
        crate::gpu::base::alloc::split_bytes(device.limits().max_storage_buffer_binding_size, self.max_binding)
    }

    /// Creates a shader module with or without the runtime checks, as these options say.
    pub(crate) fn create_shader_module(&self, device: &wgpu::Device, desc: wgpu::ShaderModuleDescriptor) -> wgpu::ShaderModule {
        if self.unchecked_shaders {
            // SAFETY: `unchecked_shaders` is set only by `with_unchecked_shaders`, whose caller took on
            // the obligations in its `# Safety` section.
            unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
        } else {
            device.create_shader_module(desc)
        }
    }
}
