//! The f64 twin of the WGSL kernels, written to be read beside the papers: one plain function per compute
//! entry point, with the kernel's name and its bindings' order (per-particle kernels take the particle
//! index first). Safe Rust only, no SIMD, no threads: the CPU engine ([`crate::cpu`]) runs these in
//! parallel, and the tests hold the GPU to them.
//!
//! Here so far: the force model ([`forces`]: `accel`), [`explicit`] (`euler_step` … `rk4_stage4`),
//! [`collide`], [`implicit`] (`implicit_prepare`, `implicit_integrate`, `implicit_strain` and the PCG
//! operator) and [`local_global`] (`lg_inertia`, `lg_local`, `lg_residual`). The other kernels' twins
//! still live in their whole-array form beside the engine: `leu_*` in `crate::cpu::leu`, `power_matvec`
//! in `crate::cpu::power`, the Chebyshev and step kernels of Liu's method in `crate::cpu::local_global`,
//! `pcg_*` in [`crate::linalg::cg`] and `mg_*` in [`crate::linalg::multigrid`].

pub mod collide;
pub mod explicit;
pub mod forces;
pub mod implicit;
pub mod leu;
pub mod local_global;
pub mod model;
pub mod pcg;
pub mod power;
pub mod stats;
