//! The f64 twin of the WGSL kernels, written to be read beside the papers: one plain function per compute
//! entry point, with the kernel's name and its bindings' order (per-particle kernels take the particle
//! index first). Safe Rust only, no SIMD, no threads: the CPU engine ([`crate::cpu`]) runs these in
//! parallel, and the tests hold the GPU to them.
//!
//! What is where: the force model ([`forces`]: `accel`), the force fields ([`fields`]: `field_accel`,
//! `wind_kick`), [`explicit`] (`euler_step` … `rk4_stage4`),
//! [`collide`] (`collide`, `move_pins`), [`contact`] (`collide_positions` and the contact filter of
//! local/global's kernels), [`strain_limit`] (`strain_limit_first`,
//! `strain_limit_check`, `strain_limit_pass`, `strain_limit_copy`), [`self_collision`], [`implicit`] (`implicit_prepare`, `implicit_integrate`, `implicit_strain` and the PCG
//! operator `operator_apply`), [`leu`] (`leu_linearize`, `leu_step`, `leu_fixup`), [`power`]
//! (`power_matvec`, `power_reduce` and the shared start vector), [`local_global`] (`local_global_inertia`,
//! `local_global_local`, `local_global_residual`, `local_global_local_residual` (the two fused, the GPU's kernel), `local_global_chebyshev`, `local_global_chebyshev_start` (the first iteration, which `local_global_local_residual` takes), `local_global_chebyshev_advance` (the last, with the advance), `local_global_cheb_residual`, `local_global_cheb_combine`, `local_global_advance`,
//! `local_global_velocity`, `local_global_report` and the operator `local_global_apply`), [`pcg`] (`pcg_begin`, `pcg_matvec`,
//! `pcg_update`, `pcg_finish`, per row for any operator) and [`multigrid`] (`mg_down`, `mg_restrict`,
//! `mg_coarse`, `mg_up`, `mg_post`, per row of a level; the hierarchy is built in
//! [`crate::linalg::multigrid`]). Where a GPU kernel's dot products are sums over workgroups
//! (`power_reduce`, `local_global_report`, the PCG's), the twin sums sequentially in row order, and
//! `tests/reference.rs` states the tolerance against the engine. [`self_collision`] (the spatial hash `sc_count` … `sc_sort`, `sc_repulse` and the `self_gap` checker). [`model`] holds the f64 model layout
//! and [`stats`] the energy and strain statistics; [`signals`] (`signals_partial`, `signals_reduce`) the divergence guard's sums; [`roughness`] the angle between adjacent triangles
//! (from read-back positions, no kernel of its own).

pub mod collide;
pub mod contact;
pub mod explicit;
pub mod fields;
pub mod forces;
pub mod implicit;
pub mod leu;
pub mod local_global;
pub mod model;
pub mod multigrid;
pub mod pcg;
pub mod power;
pub mod roughness;
pub mod self_collision;
pub mod signals;
pub mod stats;
pub mod strain_limit;
