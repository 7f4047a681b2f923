//! The smoothed-aggregation multigrid preconditioner of Liu's `cg` global step (`cpu::multigrid`, f64):
//! the hierarchy, the V-cycle as a symmetric positive definite operator, the iterations it saves, and the
//! precision it buys over Jacobi at the same budget. Figures print with `--nocapture`.

mod common;

use springsim::cpu::implicit::{pcg_solve, pcg_solve_with, CgWork};
use springsim::cpu::local_global::{
    chebyshev_rho, local_global_apply, local_global_inv_diag, local_global_residual, multigrid_rho, GlobalCholesky, LocalGlobal,
    LocalGlobalParams, MULTIGRID_RHO_ITERATIONS,
};
use springsim::cpu::multigrid::{aggregate, global_matrix, Csr, Multigrid, COARSE_ROWS};
use springsim::cpu::{CpuModel, V3};
use springsim::stepping::CpuSimulator;
use springsim::{GlobalSolve, Method, Preconditioner, Simulator, StepSettings};

const H: f64 = 1.0 / 30.0;

fn hash01(k: u64) -> f64 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

fn random(n: usize, seed: u64) -> Vec<V3> {
    (0..n).map(|i| V3::new(hash01(seed + 3 * i as u64), hash01(seed + 3 * i as u64 + 1), hash01(seed + 3 * i as u64 + 2))).collect()
}

fn dot(a: &[V3], b: &[V3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.dot(y)).sum()
}

/// The curtain after `frames` frames of local/global (Cholesky): a swinging state.
fn swinging(n: usize, frames: usize) -> (CpuModel, Vec<V3>, Vec<V3>) {
    let model = springsim::model::curtain(n, None).unwrap();
    let mut sim = CpuSimulator::new(&model, Method::LocalGlobal, StepSettings::default()).unwrap();
    for _ in 0..frames {
        sim.step_frame().unwrap();
    }
    let (x, v) = sim.read_state().unwrap();
    let cm = CpuModel::new(&model).unwrap();
    let to = |a: &[[f64; 3]]| a.iter().map(|p| V3::from(*p)).collect::<Vec<_>>();
    (cm, to(&x), to(&v))
}

#[test]
fn sparse_products_match_dense_ones() {
    // a 4×3 and a 3×4 with duplicates in the input rows (summed) and an empty row
    let a = Csr::from_rows(3, [vec![(2, 1.0), (0, 2.0), (2, 0.5)], vec![], vec![(1, -1.0)], vec![(0, 3.0), (1, 4.0)]]);
    assert_eq!(a.ptr, vec![0, 2, 2, 3, 5]);
    assert_eq!(a.col, vec![0, 2, 1, 0, 1]);
    assert_eq!(a.val, vec![2.0, 1.5, -1.0, 3.0, 4.0]);
    let dense = |m: &Csr| {
        let mut d = vec![vec![0.0; m.cols]; m.rows()];
        for (i, row) in d.iter_mut().enumerate() {
            for (j, v) in m.row(i) {
                row[j] += v;
            }
        }
        d
    };
    let at = a.transpose();
    let (da, dat) = (dense(&a), dense(&at));
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(da[i][j], dat[j][i]);
        }
    }
    let p = a.matmul(&at);
    let dp = dense(&p);
    for i in 0..4 {
        for j in 0..4 {
            let want: f64 = (0..3).map(|k| da[i][k] * da[j][k]).sum();
            assert_eq!(dp[i][j], want, "({i}, {j})");
        }
    }
}

#[test]
fn hierarchy_coarsens_the_curtain_and_leaves_pins_out() {
    let (cm, _, _) = swinging(81, 0);
    let p = LocalGlobalParams::new(&cm, H);
    let a = global_matrix(&cm, &p);
    // the assembled matrix is the operator local_global_apply uses
    let u = random(cm.n, 11);
    let mut au = vec![V3::zeros(); cm.n];
    local_global_apply(&cm, &p, &u, &mut au);
    let pinned: Vec<usize> = (0..cm.n).filter(|&i| cm.inv_mass[i] == 0.0).collect();
    let max = au.iter().enumerate().map(|(i, aui)| (a.row_dot(i, &u) - aui).norm() / aui.norm().max(1e-300)).fold(0.0f64, f64::max);
    assert!(max < 1e-13, "assembled A vs local_global_apply: {max:e}");
    let (agg, nc) = aggregate(&a);
    assert!(pinned.iter().all(|&i| agg[i] == u32::MAX), "a pinned particle was aggregated");
    assert!((0..cm.n).filter(|&i| cm.inv_mass[i] != 0.0).all(|i| (agg[i] as usize) < nc), "a free particle was left out");
    let mg = Multigrid::new(a).unwrap();
    let sizes = mg.sizes();
    println!("81x81 curtain: levels {sizes:?}, operator complexity {:.2}", mg.complexity());
    assert!(sizes.len() >= 3, "{sizes:?}");
    assert!(*sizes.last().unwrap() <= COARSE_ROWS);
    assert!(sizes.windows(2).all(|w| w[1] * 4 < w[0]), "each level at least 4× smaller: {sizes:?}");
    assert!(mg.complexity() < 3.0);
}

#[test]
fn v_cycle_is_symmetric_positive_definite_and_zero_on_pins() {
    let (cm, _, _) = swinging(41, 0);
    let p = LocalGlobalParams::new(&cm, H);
    let mut mg = Multigrid::for_global(&cm, &p).unwrap();
    let mask = |mut v: Vec<V3>| {
        for (vi, &w) in v.iter_mut().zip(&cm.inv_mass) {
            if w == 0.0 {
                *vi = V3::zeros();
            }
        }
        v
    };
    let (u, w) = (mask(random(cm.n, 1)), mask(random(cm.n, 2)));
    let (mut bu, mut bw) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n]);
    mg.apply(&u, &mut bu);
    mg.apply(&w, &mut bw);
    let (a, b) = (dot(&w, &bu), dot(&u, &bw));
    println!("w·Bu = {a:.15e}, u·Bw = {b:.15e}, u·Bu = {:.6e}", dot(&u, &bu));
    assert!((a - b).abs() <= 1e-12 * a.abs().max(b.abs()), "B is not symmetric: {a} vs {b}");
    assert!(dot(&u, &bu) > 0.0 && dot(&w, &bw) > 0.0);
    for (i, (bi, &w)) in bu.iter().zip(&cm.inv_mass).enumerate() {
        if w == 0.0 {
            assert_eq!(*bi, V3::zeros(), "pinned particle {i}");
        }
    }
}

#[test]
fn multigrid_cg_needs_a_fraction_of_jacobis_iterations() {
    let (cm, q, v) = swinging(81, 8);
    let p = LocalGlobalParams::new(&cm, H);
    // one global step's system at a swinging state: A δ = r at x = y with fresh directions
    let mut lg = LocalGlobal::new(&cm, H, GlobalSolve::Cholesky, 0.0, 1).unwrap();
    let mut x = vec![V3::zeros(); cm.n];
    lg.begin(&cm, &q, &v, &mut x);
    lg.local(&cm, &x);
    let mut r = vec![V3::zeros(); cm.n];
    local_global_residual(&cm, &p, lg.y(), lg.d(), &x, &mut r);
    let mut exact = vec![V3::zeros(); cm.n];
    GlobalCholesky::new(&cm, &p).unwrap().solve(&r, &mut exact).unwrap();
    let mut inv_diag = vec![V3::zeros(); cm.n];
    local_global_inv_diag(&cm, &p, &mut inv_diag);
    let mut mg = Multigrid::for_global(&cm, &p).unwrap();
    let mut w = CgWork::default();
    let err = |d: &[V3]| {
        d.iter().zip(&exact).map(|(a, b)| (a - b).norm_squared()).sum::<f64>().sqrt()
            / exact.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt()
    };
    let mut dj = vec![V3::zeros(); cm.n];
    let jac = pcg_solve(|u, o| local_global_apply(&cm, &p, u, o), &inv_diag, &r, &mut dj, 1e-8, 5000, &mut w).unwrap();
    let mut dm = vec![V3::zeros(); cm.n];
    let mgr = pcg_solve_with(|u, o| local_global_apply(&cm, &p, u, o), |a, z| mg.apply(a, z), &r, &mut dm, 1e-8, 5000, &mut w).unwrap();
    println!(
        "81x81 global step to a relative residual of 1e-8: Jacobi-PCG {} iterations (error {:.1e}), multigrid-PCG {} (error {:.1e})",
        jac.iterations,
        err(&dj),
        mgr.iterations,
        err(&dm)
    );
    assert!(err(&dm) < 1e-6 && err(&dj) < 1e-5);
    assert!(mgr.iterations * 10 < jac.iterations, "multigrid {} vs Jacobi {}", mgr.iterations, jac.iterations);
    // five iterations, the budget the precision checks use
    let mut d5 = vec![V3::zeros(); cm.n];
    pcg_solve_with(|u, o| local_global_apply(&cm, &p, u, o), |a, z| mg.apply(a, z), &r, &mut d5, 0.0, 5, &mut w).unwrap();
    let mut j5 = vec![V3::zeros(); cm.n];
    pcg_solve(|u, o| local_global_apply(&cm, &p, u, o), &inv_diag, &r, &mut j5, 0.0, 5, &mut w).unwrap();
    println!("five iterations: multigrid error {:.1e}, Jacobi {:.1e}", err(&d5), err(&j5));
    assert!(err(&d5) < 1e-2 && err(&j5) > 10.0 * err(&d5));
}

/// The precision the issue asks of the GPU paths, on the f64 twin: after 30 frames of the 41×41 curtain,
/// `cg` and `chebyshev` with the multigrid preconditioner and 5 iterations per global step sag within
/// 0.1% and 0.2% of `cholesky`; Jacobi at the same budget does not reach 2% (so the check can fail).
#[test]
fn multigrid_cg_sags_like_cholesky_at_a_small_budget() {
    let model = springsim::model::curtain(41, None).unwrap();
    let sag = |global, budget, precond| {
        let s = StepSettings { global, global_iterations: budget, preconditioner: precond, ..StepSettings::default() };
        let mut sim = CpuSimulator::new(&model, Method::LocalGlobal, s).unwrap();
        for _ in 0..30 {
            sim.step_frame().unwrap();
        }
        sim.read_state().unwrap().0.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min)
    };
    let chol = sag(GlobalSolve::Cholesky, 1, Preconditioner::Jacobi);
    let mg = sag(GlobalSolve::Cg, 5, Preconditioner::Multigrid);
    let jac = sag(GlobalSolve::Cg, 5, Preconditioner::Jacobi);
    let cheb_mg = sag(GlobalSolve::Chebyshev, 5, Preconditioner::Multigrid);
    let cheb_jac = sag(GlobalSolve::Chebyshev, 5, Preconditioner::Jacobi);
    let rel = |s: f64| (s - chol).abs() / chol.abs();
    println!(
        "41x41, 30 frames: sag cholesky {chol:.6}; cg/5 multigrid {mg:.6} ({:.1e}), jacobi {jac:.6} ({:.1e}); chebyshev/5 multigrid {cheb_mg:.6} ({:.1e}), jacobi {cheb_jac:.6} ({:.1e})",
        rel(mg),
        rel(jac),
        rel(cheb_mg),
        rel(cheb_jac)
    );
    assert!(rel(mg) < 1e-3, "cg multigrid {mg} vs cholesky {chol}");
    assert!(rel(cheb_mg) < 2e-3, "chebyshev multigrid {cheb_mg} vs cholesky {chol}");
    assert!(rel(jac) > 0.02, "cg jacobi {jac} vs cholesky {chol}");
    assert!(rel(cheb_jac) > 0.02, "chebyshev jacobi {cheb_jac} vs cholesky {chol}");
}

/// The radius Chebyshev's weights are built for: ρ(I − BA) with the V-cycle is far below Jacobi's
/// ρ(I − D⁻¹A) (0.998 and up on the curtain), and the power iteration's estimate is a true lower bound
/// within 5% (checked against 400 iterations).
#[test]
fn multigrid_iteration_radius_is_far_below_jacobis() {
    let (cm, _, _) = swinging(41, 0);
    let p = LocalGlobalParams::new(&cm, H);
    let mut mg = Multigrid::for_global(&cm, &p).unwrap();
    let rho = multigrid_rho(&cm, &p, &mut mg, MULTIGRID_RHO_ITERATIONS);
    let rho_long = multigrid_rho(&cm, &p, &mut mg, 400);
    let rho_jacobi = chebyshev_rho(&cm, &p, 300);
    println!("41x41: rho(I - BA) {rho:.4} ({MULTIGRID_RHO_ITERATIONS} its), {rho_long:.4} (400 its); rho(I - D^-1 A) {rho_jacobi:.6}");
    assert!(rho > 0.0 && rho < 0.6, "{rho}");
    assert!(rho_jacobi > 0.99);
    assert!((rho_long - rho).abs() < 0.05 * rho_long, "{rho} vs {rho_long}");
}

#[test]
fn multigrid_is_refused_where_it_does_not_apply() {
    let model = springsim::model::curtain(11, None).unwrap();
    for (method, global) in [(Method::LocalGlobal, GlobalSolve::Auto), (Method::LocalGlobal, GlobalSolve::Cholesky)] {
        let s = StepSettings { global, preconditioner: Preconditioner::Multigrid, ..StepSettings::default() };
        let e = CpuSimulator::new(&model, method, s).and_then(|mut sim| sim.step_frame().map(|_| ()));
        let msg = e.expect_err("multigrid with a solver it does not fit").to_string();
        assert!(msg.contains("preconditioner") && msg.contains("multigrid"), "{msg}");
    }
    assert!(Preconditioner::parse("ilu").unwrap_err().to_string().contains("jacobi, multigrid"));
    // implicit Euler's multigrid runs on both backends (tests/implicit_multigrid.rs,
    // tests/gpu_implicit_mg.rs); this 11×11 curtain (≤ 128 free particles, no coarse level) gets Jacobi
    // on the GPU and still steps
    let s = StepSettings { preconditioner: Preconditioner::Multigrid, ..StepSettings::default() };
    assert!(CpuSimulator::new(&model, Method::ImplicitEuler, s.clone()).and_then(|mut sim| sim.step_frame()).is_ok());
    if let Some(ctx) = common::gpu() {
        let mut g = springsim::stepping::GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::ImplicitEuler, s).unwrap();
        g.step_frame().unwrap();
        let (x, _) = g.read_state().unwrap();
        assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())));
        springsim::stepping::GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::ImplicitEuler, StepSettings::default()).unwrap();
    }
}

/// The last level stays small where coarsening cannot help: a curtain with all but a few particles pinned
/// (the pinned rows are empty and aggregate into nothing), a model without springs (a diagonal matrix: its
/// inverse is 1/a_ii, exact) and a fully pinned one (B = 0). No dense n×n inverse is ever formed.
#[test]
fn degenerate_models_keep_the_coarse_solve_small() {
    let mut model = springsim::model::curtain(41, None).unwrap();
    for (i, p) in model.pinned.iter_mut().enumerate() {
        *p = i % 37 != 5;
    }
    let cm = CpuModel::new(&model).unwrap();
    let free = (0..cm.n).filter(|&i| cm.inv_mass[i] != 0.0).count();
    let p = LocalGlobalParams::new(&cm, H);
    let mut mg = Multigrid::for_global(&cm, &p).unwrap();
    println!("{free} free of {}: levels {:?}, coarse inverse {} entries", cm.n, mg.sizes(), mg.coarse_inv.nnz());
    assert!(mg.coarse_inv.nnz() <= free * free);
    // the preconditioned CG still solves A δ = r exactly enough
    let r: Vec<V3> = random(cm.n, 5).into_iter().enumerate().map(|(i, v)| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { v }).collect();
    let mut d = vec![V3::zeros(); cm.n];
    let rep =
        pcg_solve_with(|u, o| local_global_apply(&cm, &p, u, o), |a, z| mg.apply(a, z), &r, &mut d, 1e-10, 50, &mut CgWork::default())
            .unwrap();
    assert!(rep.residual <= 1e-10, "{rep:?}");

    // no springs: 1/a_ii on the last level, one iteration solves it
    let mut lone = springsim::model::curtain(41, None).unwrap();
    lone.springs.clear();
    let cm = CpuModel::new(&lone).unwrap();
    let p = LocalGlobalParams::new(&cm, H);
    let mut mg = Multigrid::for_global(&cm, &p).unwrap();
    assert!(mg.coarse_inv.nnz() <= cm.n, "{}", mg.coarse_inv.nnz());
    let r = random(cm.n, 9).into_iter().enumerate().map(|(i, v)| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { v }).collect::<Vec<_>>();
    let mut d = vec![V3::zeros(); cm.n];
    let rep = pcg_solve_with(|u, o| local_global_apply(&cm, &p, u, o), |a, z| mg.apply(a, z), &r, &mut d, 1e-12, 5, &mut CgWork::default())
        .unwrap();
    assert!(rep.iterations <= 2 && rep.residual <= 1e-12, "{rep:?}");

    // everything pinned: B r = 0
    let mut stuck = springsim::model::curtain(11, None).unwrap();
    stuck.pinned.iter_mut().for_each(|p| *p = true);
    let cm = CpuModel::new(&stuck).unwrap();
    let mut mg = Multigrid::for_global(&cm, &LocalGlobalParams::new(&cm, H)).unwrap();
    let mut z = vec![V3::repeat(1.0); cm.n];
    mg.apply(&random(cm.n, 3), &mut z);
    assert!(z.iter().all(|v| *v == V3::zeros()));
}
