//! The PCG's dot products reduced in a dispatch of their own (`pcg_reduce`, used from
//! `springsim::gpu::base::options::PCG_REDUCE_FROM` workgroups per vector on) give the same numbers bit for bit
//! as the per-workgroup sums of a small solve: the same loop and the same tree over the same partials.
//! Forced at 24² with `GpuOptions::with_pcg_reduce_from(1)`, for implicit Euler (Jacobi and multigrid)
//! and for local/global's
//! `cg` global step with and without the multigrid V-cycle (which rewrites the r·z partials between
//! the PCG's kernels). The counts of the extra dispatches are checked in tests/gpu_cost.rs.

mod common;

use springsim::gpu::GpuOptions;
use springsim::method::{GlobalSolve, Preconditioner};
use springsim::stepping::GpuSimulator;
use springsim::{Method, Simulator, StepSettings};

/// Positions, velocities and the last frame's (CG iterations, residual) after `frames` frames of
/// `method` on the 24² cloth with `options`.
fn run(
    ctx: &springsim::gpu::GpuContext,
    method: Method,
    settings: &StepSettings,
    options: GpuOptions,
    frames: usize,
) -> (Vec<[f64; 3]>, (usize, f64)) {
    let model = springsim::model::cloth(24, None).unwrap();
    let mut sim = GpuSimulator::new_with_options(&ctx.device, &ctx.queue, &model, method, settings.clone(), options).unwrap();
    let mut last = (0, 0.0);
    for _ in 0..frames {
        let r = sim.step_frame().unwrap();
        last = (r.iterations, r.residual);
    }
    let (x, v) = sim.read_state().unwrap();
    (x.into_iter().chain(v).collect(), last)
}

fn compare(method: Method, global: GlobalSolve, precond: Preconditioner) {
    let Some(ctx) = common::gpu() else { return };
    let settings = StepSettings { global, preconditioner: precond, cg_tolerance: 1e-5, ..Default::default() };
    let frames = 3;
    let (plain, plain_solve) = run(&ctx, method, &settings, GpuOptions::default().with_pcg_reduce_from(u32::MAX), frames);
    let (reduced, reduced_solve) = run(&ctx, method, &settings, GpuOptions::default().with_pcg_reduce_from(1), frames);
    let (start, _) = run(&ctx, method, &settings, GpuOptions::default(), 0);
    let moved = plain.iter().zip(&start).map(|(a, b)| (0..3).map(|c| (a[c] - b[c]).abs()).fold(0.0, f64::max)).fold(0.0, f64::max);
    let diff = plain.iter().zip(&reduced).map(|(a, b)| (0..3).map(|c| (a[c] - b[c]).abs()).fold(0.0, f64::max)).fold(0.0, f64::max);
    println!(
        "{} {} {}: {frames} frames, reduced vs per-workgroup sums: max |Δ| = {diff:e} (motion {moved:e}); last frame's solves {plain_solve:?} / {reduced_solve:?}",
        method.name(),
        global.name(),
        precond.name()
    );
    assert!(moved > 1e-3, "the cloth did not move ({moved})");
    assert!(plain_solve.0 > 0, "no CG iterations ran");
    assert_eq!(diff, 0.0, "the reduced dot products change the state by {diff}");
    assert_eq!(plain_solve.0, reduced_solve.0, "the CG stopped after other iteration counts");
    assert_eq!(plain_solve.1.to_bits(), reduced_solve.1.to_bits(), "the residuals differ");
}

#[test]
fn implicit_euler_reduced_matches_per_workgroup_sums() {
    compare(Method::ImplicitEuler, GlobalSolve::Cg, Preconditioner::Jacobi);
}

#[test]
fn implicit_euler_multigrid_reduced_matches_per_workgroup_sums() {
    compare(Method::ImplicitEuler, GlobalSolve::Cg, Preconditioner::Multigrid);
}

#[test]
fn local_global_cg_reduced_matches_per_workgroup_sums() {
    compare(Method::LocalGlobal, GlobalSolve::Cg, Preconditioner::Jacobi);
}

#[test]
fn local_global_cg_multigrid_reduced_matches_per_workgroup_sums() {
    compare(Method::LocalGlobal, GlobalSolve::Cg, Preconditioner::Multigrid);
}
