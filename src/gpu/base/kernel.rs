//! One compiled entry point ([`Kernel`]): what the engine's kernel structs hold and what a counted pass
//! ([`crate::gpu::profiling::cost::CountedPass`]) binds, so that a per-dispatch timing can name each dispatch, and the
//! bind group layouts and bind groups of a kernel file ([`GroupLayout`], [`Bindings`]). A leaf: the
//! pipelines and bind groups are built in [`crate::gpu::base::pipelines`], which re-exports them.

/// One compiled entry point: its pipeline and its name, by which a per-dispatch timing reports it
/// ([`crate::gpu::profiling::timestamps::PhaseTimer::time_each_dispatch`]).
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The compute pipeline.
    pub pipeline: wgpu::ComputePipeline,
    /// The WGSL entry point.
    pub name: &'static str,
}

/// The layout of one bind group of a kernel file. Where the file's layout fits the device (every
/// adapter springsim has met natively), one layout that all the file's kernels share. Where it does
/// not (WebGPU's default of 8 storage buffers per shader stage, what a browser grants a page), one
/// layout per distinct set of bindings its kernels use ([`crate::gpu::base::uses`]): a pipeline
/// layout per kernel then counts that kernel's buffers alone, and a [`Bindings`] made for this layout
/// holds a bind group per set, which [`crate::gpu::profiling::cost::CountedPass`] picks for the kernel
/// it dispatches.
#[derive(Clone, Debug)]
pub struct GroupLayout {
    pub(crate) entries: std::sync::Arc<[wgpu::BindGroupLayoutEntry]>,
    pub(crate) shared: Option<wgpu::BindGroupLayout>,
    pub(crate) subsets: Option<std::sync::Arc<Subsets>>,
}

/// The per-kernel layouts of one group: the distinct sets of bindings and which kernel uses which.
#[derive(Debug)]
pub(crate) struct Subsets {
    /// (the bindings kept, their layout).
    pub(crate) sets: Vec<(Vec<u32>, wgpu::BindGroupLayout)>,
    /// (kernel, index in `sets`).
    pub(crate) kernels: Vec<(&'static str, usize)>,
}

/// A bind group of one [`GroupLayout`]: one wgpu bind group, or one per set of bindings of a
/// per-kernel layout. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Bindings {
    pub(crate) shared: Option<wgpu::BindGroup>,
    /// (the bind group of each set, the positions of its dynamic offsets among the layout's).
    pub(crate) sets: std::sync::Arc<[(wgpu::BindGroup, Vec<usize>)]>,
    pub(crate) subsets: Option<std::sync::Arc<Subsets>>,
}

impl Bindings {
    /// The wgpu bind group that `kernel` binds, and which of the layout's dynamic offsets it takes:
    /// `None` for a shared bind group (every kernel binds it with every offset).
    pub(crate) fn for_kernel(&self, kernel: &str) -> Option<(&wgpu::BindGroup, &[usize])> {
        let subsets = self.subsets.as_ref()?;
        let set = subsets.kernels.iter().find(|(k, _)| *k == kernel)?.1;
        self.sets.get(set).map(|(g, o)| (g, o.as_slice()))
    }

    /// The one bind group every kernel binds, when the layout is shared.
    pub(crate) fn shared(&self) -> Option<&wgpu::BindGroup> {
        self.shared.as_ref()
    }
}
