//! Criterion benchmarks of Liu et al.'s local/global iteration on the CPU (f64), one phase at a time:
//! the local step (eq. 10), the right-hand side / residual gather (eq. 14), the two fused into one sweep
//! over the springs (the CPU step's path), the prefactored Cholesky
//! solve of the global step (three columns) and the prefactorisation itself, the multigrid preconditioner
//! of the `cg` global step (one V-cycle, 5 preconditioned CG iterations, the hierarchy's set-up), on Liu's 81×81 curtain and
//! on a 256×256 curtain; and the phases of Baraff–Witkin's implicit step (the system, one product,
//! 10 Jacobi-PCG iterations). Run with `cargo bench --bench global`; docs/PERFORMANCE.md has the CPU figures.
//! With `CI` set, the 81×81 curtain only, with short times (see `common`).

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use springsim::cpu::implicit::{pcg_solve_with, CgWork};
use springsim::cpu::local_global::{
    local_global_apply, local_global_inertia, local_global_local, local_global_local_residual, local_global_residual, GlobalCholesky,
    LocalGlobalParams,
};
use springsim::cpu::multigrid::Multigrid;
use springsim::cpu::sweep::SpringSweep;
use springsim::cpu::{CpuModel, V3};
use std::time::Duration;

fn phases(c: &mut Criterion, side: usize) {
    let model = springsim::model::curtain(side, None).expect("curtain");
    let cm = CpuModel::new(&model).expect("model");
    let p = LocalGlobalParams::new(&cm, 1.0 / 30.0);
    let q: Vec<V3> = model.positions.iter().map(|a| V3::new(a[0], a[1], a[2])).collect();
    let v = vec![V3::zeros(); cm.n];
    let mut y = vec![V3::zeros(); cm.n];
    local_global_inertia(&cm, &p, &q, &v, &mut y);
    let mut d = vec![V3::zeros(); cm.end_a.len()];
    let mut r = vec![V3::zeros(); cm.n];
    let mut delta = vec![V3::zeros(); cm.n];
    let mut g = c.benchmark_group(format!("local_global/curtain{side}"));
    g.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    if common::ci() {
        common::configure(&mut g, 2.0);
    }
    g.bench_function("local", |b| b.iter(|| local_global_local(&cm, &y, &mut d)));
    g.bench_function("residual", |b| b.iter(|| local_global_residual(&cm, &p, &y, &d, &y, &mut r)));
    let sweep = SpringSweep::for_model(&cm);
    g.bench_function("local_residual", |b| b.iter(|| local_global_local_residual(&cm, &p, &sweep, &y, &y, &mut r)));
    // the solves' right-hand side, set here so that it does not depend on which benchmarks a filter ran
    local_global_local_residual(&cm, &p, &sweep, &y, &y, &mut r);
    let mut chol = GlobalCholesky::new(&cm, &p).expect("factor");
    g.bench_function("solve", |b| b.iter(|| chol.solve(&r, &mut delta).expect("solve")));
    // the multigrid preconditioner of the cg global step: one V-cycle, and 5 preconditioned CG iterations
    let mut mg = Multigrid::for_global(&cm, &p).expect("hierarchy");
    let mut z = vec![V3::zeros(); cm.n];
    g.bench_function("vcycle", |b| b.iter(|| mg.apply(&r, &mut z)));
    let mut w = CgWork::default();
    g.bench_function("mg_pcg5", |b| {
        b.iter(|| {
            delta.iter_mut().for_each(|a| *a = V3::zeros());
            pcg_solve_with(|u, o| local_global_apply(&cm, &p, u, o), |a, z| mg.apply(a, z), &r, &mut delta, 0.0, 5, &mut w).expect("pcg")
        })
    });
    g.sample_size(10);
    g.bench_function("prefactor", |b| b.iter(|| GlobalCholesky::new(&cm, &p).expect("factor")));
    g.bench_function("refactor", |b| b.iter(|| chol.refactor(&cm, &p).expect("factor")));
    g.bench_function("mg_setup", |b| b.iter(|| Multigrid::for_global(&cm, &p).expect("hierarchy")));
    g.finish();
}

/// Baraff–Witkin's implicit step on the 81×81 curtain and the 256×256 cloth (the two scenes), one phase at a time: the system (spring blocks,
/// right-hand side, preconditioner), one matrix-free product A·p, and 10 Jacobi-PCG iterations.
fn implicit_phases(c: &mut Criterion, scene: &str, model: springsim::model::Model) {
    use springsim::cpu::implicit::{implicit_matvec, implicit_prepare, pcg_solve, CgWork, ImplicitSystem};
    let cm = CpuModel::new(&model).expect("model");
    let h = 1.0 / 30.0;
    let x: Vec<V3> = model.positions.iter().map(|a| V3::new(a[0], a[1], a[2])).collect();
    let v: Vec<V3> = (0..cm.n).map(|i| V3::new(0.0, 0.0, 0.01 * (i % 7) as f64)).collect();
    let mut sys = ImplicitSystem::default();
    implicit_prepare(&cm, h, false, &x, &v, &mut sys);
    let mut out = vec![V3::zeros(); cm.n];
    let mut dv = vec![V3::zeros(); cm.n];
    let mut w = CgWork::default();
    let mut g = c.benchmark_group(format!("implicit/{scene}"));
    g.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    if common::ci() {
        common::configure(&mut g, 2.0);
    }
    g.bench_function("prepare", |b| b.iter(|| implicit_prepare(&cm, h, false, &x, &v, &mut sys)));
    g.bench_function("matvec", |b| b.iter(|| implicit_matvec(&cm, &sys, &v, &mut out)));
    g.bench_function("pcg10", |b| {
        b.iter(|| {
            dv.iter_mut().for_each(|d| *d = V3::zeros());
            pcg_solve(|p, o| implicit_matvec(&cm, &sys, p, o), &sys.inv_diag, &sys.rhs, &mut dv, 0.0, 10, &mut w).expect("pcg")
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    phases(c, 81);
    if !common::ci() {
        phases(c, 256);
    }
    for (name, m) in common::scenes() {
        implicit_phases(c, name, m);
    }
}

criterion_group!(global, benches);
criterion_main!(global);
