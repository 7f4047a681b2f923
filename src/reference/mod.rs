//! The f64 twin of the WGSL kernels, written to be read beside the papers: one plain function per compute
//! entry point, with the kernel's name and its bindings' order (per-particle kernels take the particle
//! index first). No `unsafe`, no SIMD, no threads: the CPU engine ([`crate::cpu`]) runs these in
//! parallel, and the tests hold the GPU to them.

pub mod collide;
pub mod explicit;
pub mod forces;
pub mod implicit;
pub mod local_global;
pub mod model;
