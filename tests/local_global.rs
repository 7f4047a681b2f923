//! Liu et al. 2013 local/global and the Newton reference on the CPU (f64): the "must be shown" items of
//! the local/global issue that need no GPU. Figures print with `--nocapture`.

mod common;

use springsim::cpu::local_global::{
    chebyshev_rho, chebyshev_rho_used, chebyshev_solve, local_global_apply, local_global_energy, local_global_inv_diag, local_global_local,
    local_global_objective, local_global_residual, relative_error, ChebyshevWork, GlobalCholesky, LocalGlobal, LocalGlobalParams,
};
use springsim::cpu::newton::Newton;
use springsim::cpu::sparse::SpdFactor;
use springsim::cpu::{CpuModel, V3};
use springsim::stepping::CpuSimulator;
use springsim::{Error, GlobalSolve, Method, Model, Simulator, StepSettings};

const H: f64 = 1.0 / 30.0;

/// The frame studied: the curtain two frames into its fall, still smooth enough for Newton's method to
/// converge from y (see `cpu::newton` for what happens once it buckles).
const FRAME: usize = 2;

fn v3(a: &[[f64; 3]]) -> Vec<V3> {
    a.iter().map(|p| V3::from(*p)).collect()
}

/// The curtain after `frames` frames of local/global (Cholesky, 10 iterations): a swinging state.
fn swinging(n: usize, k: Option<f64>, frames: usize) -> (Model, CpuModel, Vec<V3>, Vec<V3>) {
    let model = springsim::model::curtain(n, k).unwrap();
    let mut sim = CpuSimulator::new(&model, Method::LocalGlobal, StepSettings::default()).unwrap();
    for _ in 0..frames {
        sim.step_frame().unwrap();
    }
    let cm = CpuModel::new(&model).unwrap();
    let (x, v) = sim.read_state().unwrap();
    (model, cm, v3(&x), v3(&v))
}

/// x* of the frame from (q, v): Newton to a relative gradient of 1e-13.
fn newton_star(cm: &CpuModel, q: &[V3], v: &[V3]) -> (Vec<V3>, f64, usize) {
    let mut nt = Newton::new(cm, H).unwrap();
    let mut x = vec![V3::zeros(); cm.n];
    let mut vo = vec![V3::zeros(); cm.n];
    let rep = nt.step(cm, 200, 1e-11, q, v, &mut x, &mut vo).unwrap();
    assert!(rep.residual < 1e-8, "Newton did not converge: relative gradient {:e} after {} iterations", rep.residual, rep.iterations);
    let g = local_global_energy(cm, &nt.params, nt.y(), &x);
    (x, g, rep.iterations)
}

fn lg(cm: &CpuModel, global: GlobalSolve) -> LocalGlobal {
    LocalGlobal::new(cm, H, global, 1e-12, 500).unwrap()
}

#[test]
fn block_coordinate_descent_never_increases_g() {
    let (_, cm, q, v) = swinging(81, None, 8);
    for global in [GlobalSolve::Cholesky, GlobalSolve::Cg] {
        let mut s = LocalGlobal::new(&cm, H, global, 1e-10, 30).unwrap();
        let mut x = vec![V3::zeros(); cm.n];
        s.begin(&cm, &q, &v, &mut x);
        let p = s.params;
        let y = s.y().to_vec();
        s.local(&cm, &x);
        let mut g = local_global_objective(&cm, &p, &y, &x, s.d());
        let g_start = g;
        for it in 0..50 {
            s.global_step(&cm, &mut x).unwrap();
            let after_global = local_global_objective(&cm, &p, &y, &x, s.d());
            assert!(after_global <= g + 1e-12 * g.abs(), "{global:?} iteration {it}: the global step raised g from {g} to {after_global}");
            s.local(&cm, &x);
            let after_local = local_global_objective(&cm, &p, &y, &x, s.d());
            assert!(
                after_local <= after_global + 1e-12 * g.abs(),
                "{global:?} iteration {it}: the local step raised g from {after_global} to {after_local}"
            );
            g = after_local;
        }
        println!("{global:?}: g(x, d) {g_start:.9e} -> {g:.9e} over 50 iterations, never increasing");
        assert!(g < g_start);
    }
}

#[test]
fn local_global_converges_to_newtons_solution() {
    // Liu's Figure 3 curtain size (441 vertices)
    let (_, cm, q, v) = swinging(21, None, FRAME);
    let (x_star, g_star, newton_its) = newton_star(&cm, &q, &v);
    let mut s = lg(&cm, GlobalSolve::Cholesky);
    let mut x = vec![V3::zeros(); cm.n];
    s.begin(&cm, &q, &v, &mut x);
    let p = s.params;
    let y = s.y().to_vec();
    let g0 = local_global_energy(&cm, &p, &y, &x);
    let mut reached = None;
    let mut err = 1.0;
    for it in 1..=20_000 {
        s.local(&cm, &x);
        s.global_step(&cm, &mut x).unwrap();
        err = relative_error(local_global_energy(&cm, &p, &y, &x), g_star, g0);
        if err < 1e-6 {
            reached = Some(it);
            break;
        }
    }
    let dx = x.iter().zip(&x_star).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
    // x* is the minimiser of eq. 8 by a gradient written apart from the local/global code that Newton
    // shares (common::liu8_gradient, itself held to finite differences of g in tests/fd.rs), so that
    // "local/global converges to Newton" is not only "to a point of its own residual": measured 9.7e-12
    // (Newton stops at 1e-11 by its own measure)
    let model = springsim::model::curtain(21, None).unwrap();
    let norm = |g: Vec<V3>| g.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt();
    let stationary = norm(common::liu8_gradient(&model, H, &y, &x_star)) / norm(common::liu8_gradient(&model, H, &y, &y));
    println!("21x21 curtain: Newton converged in {newton_its} iterations (independent ‖∇g(x*)‖/‖∇g(y)‖ = {stationary:.1e}); local/global reached relative error {err:.2e} after {reached:?} iterations (max |x - x*| = {dx:.2e} m)");
    assert!(stationary < 1e-10, "Newton's x* is not stationary for eq. 8: {stationary:e}");
    assert!(reached.is_some(), "local/global did not reach 1e-6 in 20000 iterations (last error {err:e})");
    assert!(dx < 1e-3, "positions differ from Newton's by {dx} m");
}

#[test]
fn three_column_cholesky_equals_the_full_kronecker_solve() {
    // 81×81: faer's factor is supernodal, so the interleaved three-column substitution is the one checked
    let (_, cm, q, v) = swinging(81, None, 3);
    let p = LocalGlobalParams::new(&cm, H);
    let mut r = vec![V3::zeros(); cm.n];
    let mut y = vec![V3::zeros(); cm.n];
    springsim::cpu::local_global::local_global_inertia(&cm, &p, &q, &v, &mut y);
    let mut d = vec![V3::zeros(); cm.end_a.len()];
    local_global_local(&cm, &y, &mut d);
    local_global_residual(&cm, &p, &y, &d, &q, &mut r);
    let mut chol = GlobalCholesky::new(&cm, &p).unwrap();
    assert!(chol.is_supernodal(), "the interleaved solve is not exercised");
    let mut delta = vec![V3::zeros(); cm.n];
    chol.solve(&r, &mut delta).unwrap();
    // the full 3m×3m matrix (M + h²L) ⊗ I₃, assembled entry by entry from the operator's definition
    let free: Vec<usize> = (0..cm.n).filter(|&i| cm.inv_mass[i] != 0.0).collect();
    let mut row = vec![usize::MAX; cm.n];
    for (k, &i) in free.iter().enumerate() {
        row[i] = k;
    }
    let h2 = H * H;
    let mut pairs = Vec::new();
    let mut vals = Vec::new();
    for (k, &i) in free.iter().enumerate() {
        let ksum: f64 = cm.incidence.of(i).iter().map(|&e| cm.k[(e >> 1) as usize]).sum();
        for a in 0..3 {
            pairs.push((3 * k + a, 3 * k + a));
            vals.push(cm.mass[i] * p.mass_diag + h2 * ksum);
        }
    }
    for s in 0..cm.end_a.len() {
        let (a, b) = (row[cm.end_a[s] as usize], row[cm.end_b[s] as usize]);
        if a != usize::MAX && b != usize::MAX {
            for c in 0..3 {
                pairs.push((3 * a.max(b) + c, 3 * a.min(b) + c));
                vals.push(-h2 * cm.k[s]);
            }
        }
    }
    let mut full = SpdFactor::new(3 * free.len(), &pairs, 1, "the full matrix").unwrap();
    full.factor(&vals, "the full matrix").unwrap();
    let mut rhs = faer::Mat::<f64>::zeros(3 * free.len(), 1);
    for (k, &i) in free.iter().enumerate() {
        for a in 0..3 {
            rhs[(3 * k + a, 0)] = r[i][a];
        }
    }
    full.solve_in_place(rhs.as_mut()).unwrap();
    let mut err = 0.0f64;
    let mut scale = 0.0f64;
    for (k, &i) in free.iter().enumerate() {
        for a in 0..3 {
            err = err.max((rhs[(3 * k + a, 0)] - delta[i][a]).abs());
            scale = scale.max(delta[i][a].abs());
        }
    }
    println!("m×m three-column solve vs 3m×3m: max difference {err:.2e} (solution scale {scale:.2e})");
    assert!(err <= 1e-12 * scale.max(1e-300) || err < 1e-15, "difference {err:e}");
    assert!(scale > 0.0);
}

#[test]
fn cg_and_chebyshev_global_steps_agree_with_cholesky() {
    let (_, cm, q, v) = swinging(41, None, 6);
    let p = LocalGlobalParams::new(&cm, H);
    let mut y = vec![V3::zeros(); cm.n];
    springsim::cpu::local_global::local_global_inertia(&cm, &p, &q, &v, &mut y);
    let mut d = vec![V3::zeros(); cm.end_a.len()];
    local_global_local(&cm, &y, &mut d);
    let mut r = vec![V3::zeros(); cm.n];
    local_global_residual(&cm, &p, &y, &d, &y, &mut r);
    let mut exact = vec![V3::zeros(); cm.n];
    GlobalCholesky::new(&cm, &p).unwrap().solve(&r, &mut exact).unwrap();
    let norm = |a: &[V3]| a.iter().map(|x| x.norm_squared()).sum::<f64>().sqrt();
    let diff = |a: &[V3]| norm(&a.iter().zip(&exact).map(|(x, y)| x - y).collect::<Vec<_>>()) / norm(&exact);
    // residual of a candidate, relative to ‖r‖
    let resid = |a: &[V3]| {
        let mut ad = vec![V3::zeros(); cm.n];
        local_global_apply(&cm, &p, a, &mut ad);
        norm(&r.iter().zip(&ad).map(|(x, y)| x - y).collect::<Vec<_>>()) / norm(&r)
    };
    let mut inv_d = vec![V3::zeros(); cm.n];
    local_global_inv_diag(&cm, &p, &mut inv_d);
    for tol in [1e-4, 1e-8] {
        let mut x = vec![V3::zeros(); cm.n];
        let rep = springsim::cpu::implicit::pcg_solve(
            |u, o| local_global_apply(&cm, &p, u, o),
            &inv_d,
            &r,
            &mut x,
            tol,
            10_000,
            &mut Default::default(),
        )
        .unwrap();
        let (e, res) = (diff(&x), resid(&x));
        println!("cg tol {tol:e}: {} iterations, residual {res:.2e}, error vs Cholesky {e:.2e}", rep.iterations);
        assert!(res <= tol * 1.0001, "cg residual {res:e} above its tolerance {tol:e}");
        // the error is bounded by the residual times the condition number; in practice far less
        assert!(e < tol * 100.0, "cg differs from Cholesky by {e:e} at tolerance {tol:e}");
    }
    let rho = chebyshev_rho(&cm, &p, 300);
    let mut w = ChebyshevWork::default();
    for iters in [200, 2000] {
        let mut x = vec![V3::zeros(); cm.n];
        let res = chebyshev_solve(&cm, &p, &inv_d, &r, &mut x, chebyshev_rho_used(rho), iters, &mut w);
        let e = diff(&x);
        println!("chebyshev (rho {rho:.6}) {iters} iterations: residual {res:.2e}, error vs Cholesky {e:.2e}");
        assert!((res - resid(&x)).abs() < 1e-9, "chebyshev_solve reports its own residual");
        assert!(e < 100.0 * res.max(1e-14), "chebyshev differs from Cholesky by {e:e} at residual {res:e}");
        if iters == 2000 {
            assert!(res < 1e-8, "2000 Chebyshev iterations left residual {res:e}");
        }
    }
}

#[test]
fn ten_iterations_beat_one_newton_iteration() {
    // Liu §5: ten local/global iterations reach a lower relative error than one Newton iteration (0.196 vs
    // 0.2496 on their frame), at a fraction of its time
    let (_, cm, q, v) = swinging(81, None, FRAME);
    let (_, g_star, _) = newton_star(&cm, &q, &v);
    let mut s = lg(&cm, GlobalSolve::Cholesky);
    let mut x = vec![V3::zeros(); cm.n];
    let mut vo = vec![V3::zeros(); cm.n];
    let t = std::time::Instant::now();
    s.step(&cm, 10, &q, &v, &mut x, &mut vo).unwrap();
    let t_local_global = t.elapsed().as_secs_f64();
    let p = s.params;
    let y = s.y().to_vec();
    let g0 = local_global_energy(&cm, &p, &y, &y);
    let e_local_global = relative_error(local_global_energy(&cm, &p, &y, &x), g_star, g0);
    let mut nt = Newton::new(&cm, H).unwrap();
    let t = std::time::Instant::now();
    let mut xn = vec![V3::zeros(); cm.n];
    nt.step(&cm, 1, 0.0, &q, &v, &mut xn, &mut vo).unwrap();
    let t_newton = t.elapsed().as_secs_f64();
    let e_newton = relative_error(local_global_energy(&cm, &p, &y, &xn), g_star, g0);
    println!(
        "81x81 curtain, frame 3: 10 local/global iterations: relative error {e_local_global:.4} in {:.1} ms; one Newton iteration: {e_newton:.4} in {:.1} ms",
        t_local_global * 1e3,
        t_newton * 1e3
    );
    assert!(e_local_global < e_newton, "10 iterations ({e_local_global}) did not beat one Newton iteration ({e_newton})");
}

#[test]
fn error_after_ten_iterations_grows_with_stiffness() {
    // Liu's Figure 3 trend on their 441-vertex curtain
    let mut errs = Vec::new();
    for k in [100.0, 1000.0, 10_000.0] {
        let (_, cm, q, v) = swinging(21, Some(k), FRAME);
        let (_, g_star, _) = newton_star(&cm, &q, &v);
        let mut s = lg(&cm, GlobalSolve::Cholesky);
        let mut x = vec![V3::zeros(); cm.n];
        let mut vo = vec![V3::zeros(); cm.n];
        s.step(&cm, 10, &q, &v, &mut x, &mut vo).unwrap();
        let y = s.y().to_vec();
        let g0 = local_global_energy(&cm, &s.params, &y, &y);
        let e = relative_error(local_global_energy(&cm, &s.params, &y, &x), g_star, g0);
        println!("| k = {k:>7} N/m | relative error after 10 iterations {e:.3e} |");
        errs.push(e);
    }
    assert!(errs[0] < errs[1] && errs[1] < errs[2], "errors {errs:?} do not grow with stiffness");
}

#[test]
fn pinned_corners_stay_exactly_fixed_for_300_frames() {
    let model = springsim::model::curtain(21, None).unwrap();
    let pinned: Vec<usize> = (0..model.n_particles()).filter(|&i| model.pinned[i]).collect();
    assert_eq!(pinned.len(), 2);
    for global in [GlobalSolve::Cholesky, GlobalSolve::Cg, GlobalSolve::Chebyshev] {
        let mut sim = CpuSimulator::new(&model, Method::LocalGlobal, StepSettings { global, ..Default::default() }).unwrap();
        for _ in 0..300 {
            sim.step_frame().unwrap();
        }
        let (x, v) = sim.read_state().unwrap();
        for &i in &pinned {
            assert_eq!(x[i], model.positions[i], "{global:?}: pinned particle {i} moved");
            assert_eq!(v[i], [0.0; 3]);
        }
        let sag = x.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
        println!("{global:?}: after 300 frames the sag is {sag:.4} m");
        assert!(sag.is_finite() && sag < -0.5, "{global:?}: the curtain did not hang (lowest y {sag})");
    }
}

#[test]
fn a_matrix_that_cannot_be_factored_is_a_clear_error() {
    // a free particle with zero mass and no spring: its row of M + h²L is zero. Model validation refuses a
    // zero mass, so the laid-out model is edited directly, as an embedding application could.
    let mut model = springsim::model::curtain(5, None).unwrap();
    model.add_particle([3.0, 0.0, 0.0], 1.0);
    let mut cm = CpuModel::new(&model).unwrap();
    let last = cm.n - 1;
    cm.mass[last] = 0.0;
    let e = GlobalCholesky::new(&cm, &LocalGlobalParams::new(&cm, H)).unwrap_err();
    let msg = e.to_string();
    println!("{msg}");
    assert!(matches!(e, Error::NotPositiveDefinite { pivot_row: Some(_), .. }), "{e:?}");
    assert!(msg.contains("not positive definite") && msg.contains("faer"), "{msg}");
    // and a negative stiffness
    let mut cm = CpuModel::new(&model).unwrap();
    cm.k.iter_mut().for_each(|k| *k = -*k * 1e6);
    assert!(matches!(GlobalCholesky::new(&cm, &LocalGlobalParams::new(&cm, H)), Err(Error::NotPositiveDefinite { .. })));
}

#[test]
fn local_global_and_newton_run_through_the_simulator() {
    let model = springsim::model::curtain(21, None).unwrap();
    let mut lgs =
        CpuSimulator::new(&model, Method::LocalGlobal, StepSettings { local_global_iterations: 1000, ..Default::default() }).unwrap();
    let mut nts = CpuSimulator::new(&model, Method::Newton, StepSettings::default()).unwrap();
    for f in 0..1 {
        let a = lgs.step_frame().unwrap();
        let b = nts.step_frame().unwrap();
        println!("frame {f}: local/global {a:?}; Newton {b:?}");
        assert_eq!(a.substeps, 1, "local/global takes the frame step");
        assert!(b.iterations >= 1 && b.residual < 1e-8, "Newton: {b:?}");
        assert!(a.residual < 0.01, "1000 local/global iterations leave a relative gradient of {}", a.residual);
    }
    let (xa, _) = lgs.read_state().unwrap();
    let (xb, _) = nts.read_state().unwrap();
    let d = xa.iter().zip(&xb).map(|(a, b)| (V3::from(*a) - V3::from(*b)).norm()).fold(0.0, f64::max);
    println!("after a frame, 1000-iteration local/global is {d:.2e} m from Newton");
    assert!(d < 1e-3, "{d}");
    // switching keeps the state
    let before = lgs.read_state().unwrap();
    lgs.set_method(Method::Newton).unwrap();
    assert_eq!(lgs.read_state().unwrap(), before);
    // a solver that does not suit the method is an error naming the field
    let e = CpuSimulator::new(&model, Method::LocalGlobal, StepSettings { global: GlobalSolve::Tridiagonal, ..Default::default() });
    assert!(e.is_err_and(|e| e.to_string().contains("global")));
}

#[test]
fn newton_hessian_is_the_derivative_of_the_gradient() {
    let (_, cm, q, v) = swinging(21, None, 10);
    let mut nt = Newton::new(&cm, H).unwrap();
    let mut x = vec![V3::zeros(); cm.n];
    nt.begin(&cm, &q, &v, &mut x);
    let p = nt.params;
    // H u by blocks
    let u: Vec<V3> = (0..cm.n)
        .map(|i| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { V3::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos(), 0.3) })
        .collect();
    let mut hu: Vec<V3> = (0..cm.n).map(|i| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { u[i] * (cm.mass[i] * p.mass_diag) }).collect();
    for s in 0..cm.end_a.len() {
        let k = springsim::cpu::newton::spring_hessian(&cm, s, &x, false) * (H * H);
        let (a, b) = (cm.end_a[s] as usize, cm.end_b[s] as usize);
        let du = u[a] - u[b];
        if cm.inv_mass[a] != 0.0 {
            hu[a] += k * du;
        }
        if cm.inv_mass[b] != 0.0 {
            hu[b] -= k * du;
        }
    }
    let eps = 1e-7;
    let xp: Vec<V3> = x.iter().zip(&u).map(|(a, b)| a + b * eps).collect();
    let xm: Vec<V3> = x.iter().zip(&u).map(|(a, b)| a - b * eps).collect();
    nt.gradient(&cm, &xp);
    let mut r1 = vec![V3::zeros(); cm.n];
    let mut d = vec![V3::zeros(); cm.end_a.len()];
    local_global_local(&cm, &xp, &mut d);
    local_global_residual(&cm, &p, nt.y(), &d, &xp, &mut r1);
    let mut r2 = vec![V3::zeros(); cm.n];
    local_global_local(&cm, &xm, &mut d);
    local_global_residual(&cm, &p, nt.y(), &d, &xm, &mut r2);
    let mut err = 0.0f64;
    let mut sc = 0.0f64;
    for i in 0..cm.n {
        let fd = -(r1[i] - r2[i]) / (2.0 * eps);
        err = err.max((fd - hu[i]).norm());
        sc = sc.max(hu[i].norm());
    }
    println!("Hessian-vector product vs central differences of ∇g: max error {err:.2e} (scale {sc:.2e})");
    assert!(err < 1e-6 * sc, "the Hessian is not the gradient's derivative: {err:e}");
}

/// Timing of the parts of a local/global iteration (run with --ignored --nocapture; speed is not asserted).
#[test]
#[ignore = "timing only: run with --release --ignored --nocapture"]
fn local_global_iteration_timing() {
    let (_, cm, q, v) = swinging(81, None, FRAME);
    let p = LocalGlobalParams::new(&cm, H);
    let t = std::time::Instant::now();
    let mut chol = GlobalCholesky::new(&cm, &p).unwrap();
    println!("prefactor {:.2} ms, factor nnz {}", t.elapsed().as_secs_f64() * 1e3, chol.factor_nnz());
    let mut y = vec![V3::zeros(); cm.n];
    springsim::cpu::local_global::local_global_inertia(&cm, &p, &q, &v, &mut y);
    let mut d = vec![V3::zeros(); cm.end_a.len()];
    let mut r = vec![V3::zeros(); cm.n];
    let mut delta = vec![V3::zeros(); cm.n];
    let reps = 200;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        local_global_local(&cm, &y, &mut d);
    }
    let tl = t.elapsed().as_secs_f64() / reps as f64;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        local_global_residual(&cm, &p, &y, &d, &y, &mut r);
    }
    let tr = t.elapsed().as_secs_f64() / reps as f64;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        chol.solve(&r, &mut delta).unwrap();
    }
    let ts = t.elapsed().as_secs_f64() / reps as f64;
    let mut s = lg(&cm, GlobalSolve::Cholesky);
    let mut x = vec![V3::zeros(); cm.n];
    let mut vo = vec![V3::zeros(); cm.n];
    let t = std::time::Instant::now();
    for _ in 0..20 {
        s.step(&cm, 10, &q, &v, &mut x, &mut vo).unwrap();
    }
    let tf = t.elapsed().as_secs_f64() / 20.0;
    println!("local {:.3} ms, residual {:.3} ms, solve {:.3} ms; a 10-iteration step {:.2} ms", tl * 1e3, tr * 1e3, ts * 1e3, tf * 1e3);
}

/// The CPU step fuses the local step into the residual (`local_global_local_residual`, one sweep over the springs
/// in chunks). It must agree with the two-pass twins `local_global_local` + `local_global_residual` (the GPU's kernels) to
/// rounding, 1e-12 of the residual's scale, and give the same bits with 1, 3 and 5 chunks: on a
/// swinging 41×41 curtain (pinned top row) with two particles moved onto a neighbour each, so that the
/// coincident-endpoint guard runs in both orientations of its spring.
#[test]
fn fused_local_residual_matches_the_two_pass_twins() {
    use springsim::cpu::local_global::local_global_local_residual;
    use springsim::cpu::sweep::SpringSweep;
    let (mut model, _, q, v) = swinging(41, None, 3);
    // the builders list springs low index first: turn one around, so that its lower end is its b
    let (s0, s1) = (100, 2000);
    let sp = &mut model.springs[s1];
    (sp.a, sp.b) = (sp.b, sp.a);
    let cm = CpuModel::new(&model).unwrap();
    assert!(cm.end_a[s0] < cm.end_b[s0] && cm.end_a[s1] > cm.end_b[s1]);
    let p = LocalGlobalParams::new(&cm, H);
    let mut y = vec![V3::zeros(); cm.n];
    springsim::cpu::local_global::local_global_inertia(&cm, &p, &q, &v, &mut y);
    let mut x = y.clone();
    // coincident endpoints, in both orientations of the guard's (L, 0, 0)
    x[cm.end_a[s0] as usize] = x[cm.end_b[s0] as usize];
    x[cm.end_b[s1] as usize] = x[cm.end_a[s1] as usize];
    let mut d = vec![V3::zeros(); cm.end_a.len()];
    local_global_local(&cm, &x, &mut d);
    let mut two = vec![V3::zeros(); cm.n];
    local_global_residual(&cm, &p, &y, &d, &x, &mut two);
    let scale = two.iter().map(|a| a.norm()).fold(0.0, f64::max);
    let mut first: Option<Vec<V3>> = None;
    for chunks in [1, 3, 5] {
        let sw = SpringSweep::new(&cm, chunks);
        let mut fused = vec![V3::zeros(); cm.n];
        local_global_local_residual(&cm, &p, &sw, &y, &x, &mut fused);
        let diff = (0..cm.n).map(|i| (fused[i] - two[i]).norm()).fold(0.0, f64::max);
        println!("{chunks} chunk(s): fused against two passes, max difference {diff:.2e} (scale {scale:.2e})");
        assert!(diff <= 1e-12 * scale, "{chunks} chunks: fused residual differs by {diff:e}");
        match &first {
            None => first = Some(fused),
            Some(f) => assert_eq!(&fused, f, "{chunks} chunks changed the bits"),
        }
    }
    assert!(scale > 0.0);
    assert!((0..cm.n).filter(|&i| cm.inv_mass[i] == 0.0).all(|i| first.as_ref().unwrap()[i] == V3::zeros()), "pinned rows are zero");
}
