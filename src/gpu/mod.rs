//! The GPU engine as middleware, in the layers' shape:
//!
//! - [`base`]: the device context, the options (shader runtime checks on unless a host opts out
//!   explicitly), the checked allocator and the size budget, the shared particle state (`GpuState`),
//!   the layouts shared with WGSL and the pipelines' helpers;
//! - [`methods`]: one integrator per method family (its kernels, buffers and bind groups, built when the
//!   method is chosen): the explicit family, LEU, implicit Euler with its PCG and multigrid, local/global
//!   with its rows and multigrid, and k₀'s power iteration;
//! - [`step_end`]: what runs at every step's end (strain limiting, self-collision, the colliders) and
//!   the aerodynamic wind;
//! - [`reports`]: the frame reports a frame late (the ring of mapped slots) and the guard's signals
//!   reduced on the GPU;
//! - [`profiling`]: the counting layer, the cost model and the GPU timestamps;
//! - [`engine`]: `GpuEngine`, which holds them together (the stepping policy drives it:
//!   `springsim::GpuSimulator`).

pub mod base;
pub mod engine;
pub mod methods;
pub mod profiling;
pub mod reports;
pub mod step_end;

pub use base::context::{GpuContext, LimitsRequest};
pub use base::options::GpuOptions;
pub use base::state::GpuState;
pub use engine::{GpuCgState, GpuEngine, GpuProbe, LocalGlobalEval};
pub use profiling::cost::{CountedPass, GpuCost, GpuCounters, Phase};
pub use profiling::cost_model::{CostModel, KernelCost};
pub use profiling::timestamps::{GpuTimes, KernelTime, TimestampSupport};
