//! The GPU side: device context, buffers (`GpuState`), one pipeline struct per WGSL file, the simulator.

pub mod collide;
pub mod context;
pub mod explicit;
pub mod implicit;
pub mod layout;
pub mod leu;
pub mod local_global;
pub mod multigrid;
pub mod pcg;
pub mod pipelines;
pub mod power;
pub mod simulator;
pub mod state;

pub use context::GpuContext;
pub use simulator::{GpuPipelines, GpuSimulator};
pub use state::GpuState;
