//! One compiled entry point ([`Kernel`]): what the engine's kernel structs hold and what a counted pass
//! ([`crate::gpu::profiling::cost::CountedPass`]) binds, so that a per-dispatch timing can name each dispatch. A leaf: the
//! pipelines are built in [`crate::gpu::base::pipelines`], which re-exports it.

/// One compiled entry point: its pipeline and its name, by which a per-dispatch timing reports it
/// ([`crate::gpu::profiling::timestamps::PhaseTimer::time_each_dispatch`]).
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The compute pipeline.
    pub pipeline: wgpu::ComputePipeline,
    /// The WGSL entry point.
    pub name: &'static str,
}
