//! The GPU engine as middleware: the device context, the shared particle state (`GpuState`), one
//! integrator per method family (its kernels, buffers and bind groups, built when the method is chosen),
//! the checked allocator, the options (shader runtime checks on unless a host opts out explicitly), and
//! the engine `GpuEngine` (the stepping policy drives it: `springsim::GpuSimulator`).

pub mod alloc;
pub mod budget;
pub mod collide;
pub mod context;
pub mod cost;
pub mod cost_model;
pub mod explicit;
pub mod implicit;
pub mod implicit_mg;
pub mod integrator;
pub mod kernel;
pub mod layout;
pub mod leu;
pub mod lg_rows;
pub mod local_global;
pub mod local_global_integrator;
pub mod multigrid;
pub mod options;
pub mod pcg;
pub mod pipelines;
pub mod power;
pub mod reports;
pub mod self_collision;
pub mod signals;
pub mod simulator;
pub mod specialize;
pub mod state;
pub mod step_end;
pub mod strain_limit;
pub mod timestamps;
pub mod wind;

pub use context::GpuContext;
pub use cost::{CountedPass, GpuCost, GpuCounters, Phase};
pub use cost_model::{CostModel, KernelCost};
pub use options::GpuOptions;
pub use simulator::{GpuCgState, GpuEngine, LgEval};
pub use state::GpuState;
pub use timestamps::{GpuTimes, KernelTime, TimestampSupport};
