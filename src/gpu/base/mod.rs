//! What every GPU kernel family stands on: the device context and options, the checked allocator and the
//! size budget, the shared particle state, the layouts shared with WGSL (the one source of truth for the
//! structs and the workgroup size) and the helpers that build pipelines and bind groups.

pub mod alloc;
pub mod budget;
pub mod context;
pub mod kernel;
pub mod layout;
pub mod options;
pub mod pipelines;
pub mod specialize;
pub mod state;
pub mod uses;
