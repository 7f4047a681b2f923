//! `GpuOptions`: how the GPU engine compiles its kernels. Safe by default: every shader module is
//! created with wgpu's runtime checks (bounds checks, loop bounding) on. This file is the one place
//! where a host can turn them off, and only through the `unsafe` [`GpuOptions::with_unchecked_shaders`].

/// Options of a [`super::GpuEngine`] beyond the step settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuOptions {
    /// true: the kernels run without wgpu's runtime checks (set only by the unsafe opt-out).
    unchecked_shaders: bool,
    /// Storage buffers are split into bindings of at most this many bytes when it is below the device's
    /// `max_storage_buffer_binding_size` ([`GpuOptions::with_max_binding_bytes`]); `None`: the device's.
    max_binding: Option<u64>,
}

impl GpuOptions {
    /// The kernels are created without wgpu's runtime checks (`create_shader_module_trusted` with
    /// `ShaderRuntimeChecks::unchecked()`): no bounds checks on buffer indexing and no loop bounding.
    /// On lavapipe this makes the kernels faster (see the measurements in BENCHMARKS).
    ///
    /// # Safety
    ///
    /// The caller asserts that every index the kernels form is in range and every loop ends. springsim's
    /// kernels are written so that this holds for the buffers the engine allocates itself: particle
    /// indices are guarded by `i < n`; spring endpoints and CSR entries come from a model that passed
    /// `Model::validate` (endpoints < n) and from `Incidence::build` (offsets\[n\] = entries.len()); the
    /// buffers are sized from the same counts; the loops are bounded by the CSR offsets, the partial
    /// count or the workgroup size. A host that writes the engine's buffers itself (positions through
    /// `positions_buffer`, or anything bound to the kernels) must keep those invariants: an index out of
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

    /// The cap of [`GpuOptions::with_max_binding_bytes`], if any.
    pub fn max_binding_bytes(&self) -> Option<u64> {
        self.max_binding
    }

    /// The bytes at which the engine splits a storage buffer into bindings on `device`: the device's
    /// `max_storage_buffer_binding_size`, or the smaller cap of [`GpuOptions::with_max_binding_bytes`],
    /// rounded down to a multiple of 256 and kept within [256 B, 1 GiB]
    /// ([`super::alloc::split_bytes`]).
    pub fn split_bytes(&self, device: &wgpu::Device) -> u64 {
        super::alloc::split_bytes(device.limits().max_storage_buffer_binding_size, self.max_binding)
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
