//! The reference kernels (`springsim::reference`, one function per WGSL entry point, per particle, as the
//! GPU gathers) against the CPU engine (`springsim::cpu`, which evaluates each spring once and runs on
//! rayon): the implicit Euler system, its operator, its integration and strain check, the colliders,
//! Shinya's linearized explicit Euler (`leu_*`) and the power iteration for k₀ (`power_*`).

use springsim::cpu::implicit::{implicit_integrate, implicit_matvec, implicit_prepare, ImplicitSystem};
use springsim::cpu::{collide, forces::max_strain, CpuModel, V3};
use springsim::model::{curtain, Collider};
use springsim::reference::implicit as kernel;

/// A deterministic value in [-0.5, 0.5).
fn hash(i: usize) -> f64 {
    let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h ^ (h >> 29)) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// A jittered, moving state of an n×n curtain (pinned particles at rest).
fn state(cm: &CpuModel, positions: &[[f64; 3]], amp: f64) -> (Vec<V3>, Vec<V3>) {
    let x =
        positions.iter().enumerate().map(|(i, p)| V3::from(*p) + V3::new(hash(6 * i), hash(6 * i + 1), hash(6 * i + 2)) * amp).collect();
    let v = (0..cm.n)
        .map(|i| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { V3::new(hash(6 * i + 3), hash(6 * i + 4), hash(6 * i + 5)) })
        .collect();
    (x, v)
}

fn max_rel(a: &[V3], b: &[V3]) -> f64 {
    let scale = b.iter().map(|v| v.norm()).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    a.iter().zip(b).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max) / scale
}

#[test]
fn implicit_kernels_match_the_engine() {
    for n in [9, 41] {
        let model = curtain(n, None).unwrap();
        let cm = CpuModel::new(&model).unwrap();
        // strong jitter: some springs compressed (c < 0 before the clamp)
        let (x, v) = state(&cm, &model.positions, 0.3 / n as f64);
        let h = 2e-3;
        for exact in [false, true] {
            let mut sys = ImplicitSystem::default();
            implicit_prepare(&cm, h, exact, &x, &v, &mut sys);
            let mut blocks = vec![[0.0; 6]; cm.incidence.entries.len()];
            let mut rhs = vec![V3::zeros(); cm.n];
            let mut inv_diag = vec![V3::zeros(); cm.n];
            for i in 0..cm.n {
                let (e0, e1) = (cm.incidence.offsets[i] as usize, cm.incidence.offsets[i + 1] as usize);
                let row = kernel::implicit_prepare(i, &cm, h, exact, &x, &v, &mut blocks[e0..e1]);
                (rhs[i], inv_diag[i]) = (row.rhs, row.inv_diag);
            }
            // the same sums in another order: equal to rounding
            let (er, ed) = (max_rel(&rhs, &sys.rhs), max_rel(&inv_diag, &sys.inv_diag));
            assert!(er < 1e-12 && ed < 1e-12, "{n}×{n}, exact {exact}: rhs differs by {er:e}, the diagonal by {ed:e}");
            for i in 0..cm.n {
                if cm.inv_mass[i] == 0.0 {
                    assert_eq!((rhs[i], inv_diag[i]), (V3::zeros(), V3::zeros()), "pinned {i}");
                }
            }
            // the operator
            let p: Vec<V3> = (0..cm.n)
                .map(|i| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { V3::new(hash(3 * i + 7), hash(3 * i + 8), hash(3 * i + 9)) })
                .collect();
            let mut ap = vec![V3::zeros(); cm.n];
            implicit_matvec(&cm, &sys, &p, &mut ap);
            let ap_ref: Vec<V3> = (0..cm.n)
                .map(|i| {
                    let (e0, e1) = (cm.incidence.offsets[i] as usize, cm.incidence.offsets[i + 1] as usize);
                    kernel::operator_apply(i, &cm, h, &blocks[e0..e1], &p)
                })
                .collect();
            let e = max_rel(&ap_ref, &ap);
            assert!(e < 1e-12, "{n}×{n}, exact {exact}: A·p differs by {e:e}");
        }
        // integration: bit for bit
        let dv: Vec<V3> = (0..cm.n).map(|i| V3::new(hash(i + 11), hash(i + 12), hash(i + 13)) * 1e-2).collect();
        let (mut xo, mut vo) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n]);
        implicit_integrate(&cm, h, &x, &v, &dv, &mut xo, &mut vo);
        for i in 0..cm.n {
            assert_eq!(kernel::implicit_integrate(i, &cm, h, &x, &v, &dv), (xo[i], vo[i]), "particle {i}");
        }
        // the strain check: some particle is flagged exactly when the largest strain is over the limit
        let worst = max_strain(&cm, &x);
        for limit in [worst * 0.5, worst * 0.999, worst * 1.001, worst * 2.0] {
            let flagged = (0..cm.n).any(|i| kernel::implicit_strain(i, &cm, limit, f64::INFINITY, &x, &x));
            assert_eq!(flagged, worst > limit, "{n}×{n}: limit {limit:e}, largest strain {worst:e}");
        }
        // the step check: flagged exactly when some spring's length changed by more than the limit × L
        let x2: Vec<V3> = x.iter().enumerate().map(|(i, p)| p + V3::new(hash(i + 21), hash(i + 22), hash(i + 23)) * 2e-3).collect();
        let change = (0..cm.end_a.len())
            .filter(|&s| cm.rest[s] > 0.0)
            .map(|s| {
                let (a, b) = (cm.end_a[s] as usize, cm.end_b[s] as usize);
                ((x2[a] - x2[b]).norm() - (x[a] - x[b]).norm()).abs() / cm.rest[s]
            })
            .fold(0.0, f64::max);
        assert!(change > 0.0);
        for limit in [change * 0.5, change * 0.999, change * 1.001, change * 2.0] {
            let flagged = (0..cm.n).any(|i| kernel::implicit_strain(i, &cm, f64::INFINITY, limit, &x, &x2));
            assert_eq!(flagged, change > limit, "{n}×{n}: step limit {limit:e}, largest change {change:e}");
        }
    }
}

#[test]
fn collide_kernel_matches_the_engine() {
    let mut model = curtain(41, None).unwrap();
    model.colliders = vec![Collider::ground(-0.1, 0.4), Collider::HalfSpace { normal: [1.0, 0.2, 0.0], offset: -0.2, friction: 0.0 }];
    let cm = CpuModel::new(&model).unwrap();
    let (mut x, mut v) = state(&cm, &model.positions, 0.5);
    let want: Vec<(V3, V3)> = (0..cm.n).map(|i| springsim::reference::collide::collide(i, &cm, &x, &v)).collect();
    assert!(want.iter().zip(&x).filter(|(w, x)| w.0 != **x).count() > 10, "the state reaches into the colliders");
    collide::collide(&cm, &mut x, &mut v);
    for i in 0..cm.n {
        assert_eq!((x[i], v[i]), want[i], "particle {i}");
    }
}

/// The engine's whole-array LEU against `reference::leu`, bit for bit: the linearization (a₀ and every
/// incidence entry's blocks), a step from a moved state (some particles over the speed limit, one
/// with the cursor spring, a central field) and the fix-up.
#[test]
fn leu_kernels_match_the_engine() {
    use springsim::cpu::forces::StepParams;
    use springsim::cpu::{leu, Scratch};
    use springsim::reference::leu as kernel;
    let model = curtain(21, None).unwrap();
    let mut cm = CpuModel::new(&model).unwrap();
    cm.central_strength = 0.3;
    let free = (0..cm.n).rev().find(|&i| cm.inv_mass[i] != 0.0).unwrap();
    cm.cursor = Some(springsim::model::Cursor { particle: free, target: [0.1, -0.2, 0.3], stiffness: 40.0, damping: 0.5 });
    let (x0, v0) = state(&cm, &model.positions, 0.02);
    let p = StepParams { h: 1e-3, alpha: 0.01 };
    let (mut lin, mut scratch) = (leu::Linearization::default(), Scratch::default());
    leu::leu_linearize(&cm, &p, &x0, &v0, &mut lin, &mut scratch);
    let mut blocks = vec![([0.0; 6], [0.0; 6]); cm.incidence.entries.len()];
    let mut a0 = vec![V3::zeros(); cm.n];
    for (i, a) in a0.iter_mut().enumerate() {
        let (e0, e1) = (cm.incidence.offsets[i] as usize, cm.incidence.offsets[i + 1] as usize);
        *a = kernel::leu_linearize(i, &cm, &p, &x0, &v0, &mut blocks[e0..e1]);
    }
    assert_eq!(a0, lin.a0, "a₀");
    assert_eq!(blocks, lin.blocks, "the blocks");
    assert!(blocks.iter().any(|(k, d)| k[3] != 0.0 && d[0] != 0.0), "the blocks are not all zero");
    // a step from a moved state
    let (x, mut v) = state(&cm, &model.positions, 0.03);
    v.iter_mut().enumerate().for_each(|(i, vi)| *vi += v0[i]);
    let speed_limit = 0.6;
    let (mut xo, mut vo) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n]);
    let diverged = leu::leu_step(&cm, &p, &lin, speed_limit, &x, &v, &mut xo, &mut vo);
    let mut any_over = false;
    for i in 0..cm.n {
        let (xi, vi, over) = kernel::leu_step(i, &cm, p.h, speed_limit, &x, &v, &x0, &v0, &a0, &blocks);
        assert_eq!((xi, vi), (xo[i], vo[i]), "leu_step, particle {i}");
        assert_eq!(over, vi.norm() > speed_limit, "leu_step's flag, particle {i}");
        any_over |= over;
    }
    assert!(any_over && diverged, "the step trips the speed limit");
    assert!((0..cm.n).any(|i| !kernel::leu_step(i, &cm, p.h, speed_limit, &x, &v, &x0, &v0, &a0, &blocks).2), "not every particle");
    // the fix-up: linearize at (x, v) and step with the exact force
    leu::leu_fixup(&cm, &p, &mut lin, &x, &v, &mut xo, &mut vo, &mut scratch);
    for i in 0..cm.n {
        let (e0, e1) = (cm.incidence.offsets[i] as usize, cm.incidence.offsets[i + 1] as usize);
        let (xi, vi, ai) = kernel::leu_fixup(i, &cm, &p, &x, &v, &mut blocks[e0..e1]);
        assert_eq!((xi, vi, ai), (xo[i], vo[i], lin.a0[i]), "leu_fixup, particle {i}");
    }
    assert_eq!(blocks, lin.blocks, "the fix-up's blocks");
}

/// `reference::power`: `power_matvec` is the engine's S x bit for bit, and the iteration of
/// `power_matvec` and `power_reduce` (the GPU's: x = y/|y| folded into the next matvec, the dot products
/// summed in one sequential pass) reaches the engine's k₀ (the spring sweep, other summation orders) to
/// 1e-12 relative.
#[test]
fn power_kernels_match_the_engine() {
    use springsim::cpu::power::{power_k0, power_matvec, power_start};
    use springsim::reference::power as kernel;
    let mut model = curtain(21, None).unwrap();
    model.positions[30] = model.positions[31]; // a collapsed spring: skipped by both
    let mut cm = CpuModel::new(&model).unwrap();
    cm.central_strength = 0.7;
    let (pos, _) = state(&cm, &model.positions, 0.0);
    let start: Vec<V3> = (0..cm.n)
        .map(|i| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { V3::new(power_start(i, 0), power_start(i, 1), power_start(i, 2)) })
        .collect();
    let mut y = vec![V3::zeros(); cm.n];
    power_matvec(&cm, &pos, &start, &mut y);
    for (i, yi) in y.iter().enumerate() {
        assert_eq!(kernel::power_matvec(i, &cm, &pos, &start, 1.0).y, *yi, "power_matvec, particle {i}");
    }
    // the GPU's iteration: the first pass normalises the start vector through y_norm_sq = |start|²
    let iters = 60;
    let mut y_in = start.clone();
    let mut y_norm_sq: f64 = start.iter().map(|a| a.norm_squared()).sum();
    let mut lambda = 0.0;
    for _ in 0..iters {
        let rows: Vec<kernel::PowerRow> = (0..cm.n).map(|i| kernel::power_matvec(i, &cm, &pos, &y_in, y_norm_sq)).collect();
        (y_norm_sq, lambda) = kernel::power_reduce(&rows);
        y_in = rows.iter().map(|r| r.y).collect();
    }
    let want = power_k0(&cm, &pos, iters);
    let rel = (lambda - want).abs() / want;
    assert!(want > cm.central_strength && rel < 1e-12, "k₀: reference {lambda:e}, engine {want:e} ({rel:e} relative)");
    // power_reduce is the plain sum
    let rows = [
        kernel::PowerRow { y: V3::zeros(), y_dot_y: 1.5, x_dot_y: -2.0 },
        kernel::PowerRow { y: V3::zeros(), y_dot_y: 0.25, x_dot_y: 3.0 },
    ];
    assert_eq!(kernel::power_reduce(&rows), (1.75, 1.0));
}

/// `reference::local_global`'s global-step kernels against the engine, bit for bit: the operator
/// `local_global_apply`, Chebyshev-Jacobi iterations of `local_global_chebyshev` against `chebyshev_solve`, the multigrid
/// split (`local_global_cheb_residual`, the V-cycle, `local_global_cheb_combine`) against `chebyshev_solve_with`, and
/// `local_global_advance`, `local_global_velocity` and `local_global_report` against a whole step of `LocalGlobal`.
#[test]
fn local_global_kernels_match_the_engine() {
    use springsim::cpu::local_global::{
        chebyshev_omega, chebyshev_rho, chebyshev_rho_used, chebyshev_solve, chebyshev_solve_with, jacobi_apply, local_global_apply,
        local_global_inv_diag, local_global_local_residual, ChebyshevWork, LocalGlobal, LocalGlobalParams,
    };
    use springsim::cpu::multigrid::Multigrid;
    use springsim::cpu::sweep::SpringSweep;
    use springsim::method::GlobalSolve;
    use springsim::reference::local_global as kernel;
    let model = curtain(21, None).unwrap();
    let mut cm = CpuModel::new(&model).unwrap();
    cm.central_strength = 0.2;
    let (q, v) = state(&cm, &model.positions, 0.01);
    let p = LocalGlobalParams::new(&cm, 1e-2);
    let free = |i: usize, a: V3| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { a };
    // the operator
    let u: Vec<V3> = (0..cm.n).map(|i| free(i, V3::new(hash(3 * i), hash(3 * i + 1), hash(3 * i + 2)))).collect();
    let mut au = vec![V3::zeros(); cm.n];
    local_global_apply(&cm, &p, &u, &mut au);
    assert!(au.iter().any(|a| a.norm() > 0.0));
    for (i, a) in au.iter().enumerate() {
        assert_eq!(kernel::local_global_apply(i, &cm, &p, &u), *a, "local_global_apply, particle {i}");
    }
    // Chebyshev-Jacobi: `iters` iterations of local_global_chebyshev from δ₀ = δ₋₁ = 0
    let r: Vec<V3> = (0..cm.n).map(|i| free(i, V3::new(hash(3 * i + 5), hash(3 * i + 6), hash(3 * i + 7)))).collect();
    let mut inv_diag = vec![V3::zeros(); cm.n];
    local_global_inv_diag(&cm, &p, &mut inv_diag);
    let rho = chebyshev_rho_used(chebyshev_rho(&cm, &p, 100));
    let iters = 12;
    let (mut delta, mut work) = (vec![V3::zeros(); cm.n], ChebyshevWork::default());
    chebyshev_solve(&cm, &p, &inv_diag, &r, &mut delta, rho, iters, &mut work);
    let (mut cur, mut prev, mut omega) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n], 1.0);
    for k in 0..iters {
        omega = chebyshev_omega(k, rho, omega);
        let next: Vec<V3> = (0..cm.n).map(|i| kernel::local_global_chebyshev(i, &cm, &p, omega, &r, &inv_diag, &cur, &prev)).collect();
        prev = std::mem::replace(&mut cur, next);
    }
    assert!(cur.iter().any(|a| a.norm() > 0.0));
    assert_eq!(cur, delta, "local_global_chebyshev against chebyshev_solve");
    // the GPU's order: the first iteration taken by local_global_local_residual (local_global_chebyshev_start, no gather),
    // the middle ones by local_global_chebyshev, the last by local_global_chebyshev_advance, which adds δ to x
    let start: Vec<V3> = (0..cm.n).map(|i| kernel::local_global_chebyshev_start(i, &r, &inv_diag)).collect();
    let zero = vec![V3::zeros(); cm.n];
    let first: Vec<V3> = (0..cm.n).map(|i| kernel::local_global_chebyshev(i, &cm, &p, 1.0, &r, &inv_diag, &zero, &zero)).collect();
    assert!(start.iter().any(|a| a.norm() > 0.0));
    assert_eq!(start, first, "local_global_chebyshev_start against local_global_chebyshev from δ₀ = δ₋₁ = 0");
    let (mut cur2, mut prev2, mut omega) = (start, vec![V3::zeros(); cm.n], chebyshev_omega(0, rho, 1.0));
    for k in 1..iters - 1 {
        omega = chebyshev_omega(k, rho, omega);
        let next: Vec<V3> = (0..cm.n).map(|i| kernel::local_global_chebyshev(i, &cm, &p, omega, &r, &inv_diag, &cur2, &prev2)).collect();
        prev2 = std::mem::replace(&mut cur2, next);
    }
    omega = chebyshev_omega(iters - 1, rho, omega);
    for i in 0..cm.n {
        let fused = kernel::local_global_chebyshev_advance(i, &cm, &p, omega, &r, &inv_diag, &cur2, &prev2, &q);
        assert_eq!(fused, kernel::local_global_advance(i, &cm, &q, &delta), "local_global_chebyshev_advance, particle {i}");
    }
    // the Jacobi sweep is the preconditioned form δ̂ = δₖ + D⁻¹(r − Aδₖ) to rounding
    let mut pre = vec![V3::zeros(); cm.n];
    chebyshev_solve_with(&cm, &p, |s, z| jacobi_apply(&inv_diag, s, z), &r, &mut pre, rho, iters, &mut work);
    let scale = pre.iter().map(|a| a.norm()).fold(0.0, f64::max);
    let gap = pre.iter().zip(&cur).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
    assert!(scale > 0.0 && gap <= 1e-12 * scale, "local_global_chebyshev's sweep against δ + D⁻¹(r − Aδ): {gap:e} of {scale:e}");
    // the fused local step and residual: local_global_local then local_global_residual, to rounding, with one spring's ends
    // made to coincide (the guard direction, seen from both ends)
    let mut x: Vec<V3> = (0..cm.n).map(|i| free(i, V3::new(hash(3 * i + 8), hash(3 * i + 9), hash(3 * i + 10)) * 0.01) + q[i]).collect();
    let s = (0..cm.end_a.len()).find(|&s| cm.inv_mass[cm.end_a[s] as usize] != 0.0 && cm.inv_mass[cm.end_b[s] as usize] != 0.0).unwrap();
    let (a, b) = (cm.end_a[s] as usize, cm.end_b[s] as usize);
    x[a] = x[b];
    let y: Vec<V3> = (0..cm.n).map(|i| q[i] + v[i] * 0.01).collect();
    let d: Vec<V3> = (0..cm.end_a.len()).map(|s| kernel::local_global_local(s, &cm, &x)).collect();
    for i in 0..cm.n {
        let (fused, two) = (kernel::local_global_local_residual(i, &cm, &p, &y, &x), kernel::local_global_residual(i, &cm, &p, &y, &d, &x));
        assert!(
            (fused - two).norm() <= 1e-12 * two.norm().max(1e-3),
            "local_global_local_residual, particle {i}: {fused:?} against {two:?}"
        );
    }
    // Chebyshev with the multigrid V-cycle: local_global_cheb_residual, B, local_global_cheb_combine
    let mut mg = Multigrid::for_global(&cm, &p).unwrap();
    let rho = 0.5;
    chebyshev_solve_with(&cm, &p, |s, z| mg.apply(s, z), &r, &mut delta, rho, iters, &mut work);
    let (mut cur, mut prev, mut omega) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n], 1.0);
    let mut z = vec![V3::zeros(); cm.n];
    for k in 0..iters {
        omega = chebyshev_omega(k, rho, omega);
        let s: Vec<V3> = (0..cm.n).map(|i| kernel::local_global_cheb_residual(i, &cm, &p, &r, &cur)).collect();
        mg.apply(&s, &mut z);
        let next: Vec<V3> = (0..cm.n).map(|i| kernel::local_global_cheb_combine(i, omega, &cur, &prev, &z)).collect();
        prev = std::mem::replace(&mut cur, next);
    }
    assert!(cur.iter().any(|a| a.norm() > 0.0));
    assert_eq!(cur, delta, "local_global_cheb_residual and local_global_cheb_combine against chebyshev_solve_with");
    // local_global_advance: x + δ on the free particles, the pinned ones untouched
    for i in 0..cm.n {
        let want = if cm.inv_mass[i] == 0.0 { q[i] } else { q[i] + delta[i] };
        assert_eq!(kernel::local_global_advance(i, &cm, &q, &delta), want, "local_global_advance, particle {i}");
    }
    // a whole step: the engine's end of step is local_global_velocity's, and its residual ratio is local_global_report's of
    // the engine's own first and last residuals (the same sequential sums; the GPU's workgroup sums
    // differ from these by rounding only)
    let mut lg = LocalGlobal::new(&cm, p.h, GlobalSolve::Chebyshev, 1e-10, 20).unwrap();
    let iterations = 3;
    let (mut x, mut v_new) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n]);
    let report = lg.step(&cm, iterations, &q, &v, &mut x, &mut v_new).unwrap();
    for i in 0..cm.n {
        let x_before = if cm.inv_mass[i] == 0.0 { lg.y()[i] } else { x[i] };
        let mut before = x.clone();
        before[i] = x_before;
        assert_eq!(kernel::local_global_velocity(i, &cm, &p, &q, &before), (x[i], v_new[i]), "local_global_velocity, particle {i}");
    }
    let sweep = SpringSweep::for_model(&cm);
    let (mut r_first, mut r_last) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n]);
    local_global_local_residual(&cm, &p, &sweep, lg.y(), lg.y(), &mut r_first);
    local_global_local_residual(&cm, &p, &sweep, lg.y(), &x, &mut r_last);
    let stats = kernel::local_global_report(&r_first, &r_last);
    assert!(stats.first > 0.0 && stats.last < stats.first, "{stats:?}");
    assert_eq!(stats.ratio, report.residual, "local_global_report against LocalGlobalReport::residual");
    assert_eq!(
        kernel::local_global_report(&[V3::zeros()], &[V3::new(1.0, 0.0, 0.0)]),
        kernel::LocalGlobalStats { first: 0.0, last: 1.0, ratio: 0.0 }
    );
}

/// A whole solve by the `reference::pcg` kernels, the GPU's sequence: `pcg_begin`, then (`pcg_dir`,
/// `pcg_matvec`, `pcg_update`) per iteration with the dot products summed in row order by `pcg_sum`,
/// then `pcg_finish`. Returns (x, iterations, relative residual).
fn reference_pcg(
    n: usize,
    operator: impl Fn(usize, &[V3]) -> V3 + Copy,
    b: &[V3],
    inv_diag: &[V3],
    warm: Option<&[V3]>,
    tol: f64,
    budget: usize,
) -> (Vec<V3>, usize, f64) {
    use springsim::reference::pcg as kernel;
    let begin: Vec<kernel::PcgBegin> = (0..n).map(|i| kernel::pcg_begin(i, operator, b, inv_diag, warm)).collect();
    let mut x = warm.map_or(vec![V3::zeros(); n], <[V3]>::to_vec);
    let mut r: Vec<V3> = begin.iter().map(|row| row.r).collect();
    let mut z: Vec<V3> = begin.iter().map(|row| row.z).collect();
    let [mut rz, mut rr, bb] = kernel::pcg_sum(begin.iter().map(|row| row.dots));
    let (mut p, mut rz_prev) = (vec![V3::zeros(); n], 0.0);
    for k in 0..budget {
        if kernel::pcg_converged(rr, bb, tol) {
            return (x, k, kernel::pcg_finish(rr, bb));
        }
        let beta = kernel::pcg_beta(rz, rz_prev);
        p = (0..n).map(|j| kernel::pcg_dir(j, beta, &z, &p)).collect();
        let rows: Vec<(V3, f64)> = (0..n).map(|i| kernel::pcg_matvec(i, operator, &p)).collect();
        let ap: Vec<V3> = rows.iter().map(|row| row.0).collect();
        let [pap] = kernel::pcg_sum(rows.iter().map(|row| [row.1]));
        assert!(pap > 0.0, "breakdown at {k}");
        let alpha = rz / pap;
        rz_prev = rz;
        let update: Vec<kernel::PcgUpdate> = (0..n).map(|i| kernel::pcg_update(i, alpha, &x, &r, &p, &ap, inv_diag)).collect();
        x = update.iter().map(|row| row.x).collect();
        r = update.iter().map(|row| row.r).collect();
        z = update.iter().map(|row| row.z).collect();
        [rz, rr] = kernel::pcg_sum(update.iter().map(|row| row.dots));
    }
    (x, budget, kernel::pcg_finish(rr, bb))
}

/// The `reference::pcg` kernels against the engine's `pcg_solve` on Liu's global matrix (from x = 0) and
/// on the implicit Euler system (warm-started): the engine sums its dot products in blocks of 1024 rows,
/// the reference in row order, so the solutions agree to rounding only: 1e-12 relative (measured: 9e-16),
/// the same iteration count, and the final relative residual to 1e-9 relative (measured: 5e-13).
#[test]
fn pcg_kernels_match_the_engine() {
    use springsim::cpu::implicit::{implicit_matvec, implicit_prepare, ImplicitSystem};
    use springsim::cpu::local_global::{local_global_apply, local_global_inv_diag, LocalGlobalParams};
    use springsim::linalg::cg::{pcg_solve, CgWork};
    use springsim::reference::local_global::local_global_apply as local_global_row;
    let model = curtain(41, None).unwrap();
    let cm = CpuModel::new(&model).unwrap();
    let free = |i: usize, a: V3| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { a };
    let b: Vec<V3> = (0..cm.n).map(|i| free(i, V3::new(hash(3 * i + 1), hash(3 * i + 2), hash(3 * i + 3)))).collect();
    let check = |what: &str, got: (Vec<V3>, usize, f64), want: (Vec<V3>, usize, f64)| {
        let e = max_rel(&got.0, &want.0);
        assert!(e < 1e-12, "{what}: x differs by {e:e}");
        assert!(got.1 == want.1 && want.1 > 3, "{what}: {} iterations against the engine's {}", got.1, want.1);
        assert!(want.2 > 0.0 && (got.2 - want.2).abs() <= 1e-9 * want.2, "{what}: residual {:e} against {:e}", got.2, want.2);
    };
    // Liu's global step, from x = 0
    let p = LocalGlobalParams::new(&cm, 1e-2);
    let mut inv_diag = vec![V3::zeros(); cm.n];
    local_global_inv_diag(&cm, &p, &mut inv_diag);
    let (tol, budget) = (1e-8, 200);
    let mut x = vec![V3::zeros(); cm.n];
    let rep = pcg_solve(|u, out| local_global_apply(&cm, &p, u, out), &inv_diag, &b, &mut x, tol, budget, &mut CgWork::default()).unwrap();
    let got = reference_pcg(cm.n, |i, u| local_global_row(i, &cm, &p, u), &b, &inv_diag, None, tol, budget);
    check("global step", got, (x, rep.iterations, rep.residual));
    // implicit Euler, warm-started from a guess
    let (xs, vs) = state(&cm, &model.positions, 0.2 / 41.0);
    let h = 2e-3;
    let mut sys = ImplicitSystem::default();
    implicit_prepare(&cm, h, false, &xs, &vs, &mut sys);
    let warm: Vec<V3> = (0..cm.n).map(|i| free(i, V3::new(hash(i + 40), hash(i + 41), hash(i + 42)) * 1e-3)).collect();
    let mut blocks = vec![[0.0; 6]; cm.incidence.entries.len()];
    for i in 0..cm.n {
        let (e0, e1) = (cm.incidence.offsets[i] as usize, cm.incidence.offsets[i + 1] as usize);
        springsim::reference::implicit::implicit_prepare(i, &cm, h, false, &xs, &vs, &mut blocks[e0..e1]);
    }
    let row = |i: usize, u: &[V3]| {
        let (e0, e1) = (cm.incidence.offsets[i] as usize, cm.incidence.offsets[i + 1] as usize);
        springsim::reference::implicit::operator_apply(i, &cm, h, &blocks[e0..e1], u)
    };
    let (tol, budget) = (1e-10, 300);
    let mut x = warm.clone();
    let rep = pcg_solve(|u, out| implicit_matvec(&cm, &sys, u, out), &sys.inv_diag, &sys.rhs, &mut x, tol, budget, &mut CgWork::default())
        .unwrap();
    let got = reference_pcg(cm.n, row, &sys.rhs, &sys.inv_diag, Some(&warm), tol, budget);
    check("implicit Euler", got, (x, rep.iterations, rep.residual));
}

/// The `reference::multigrid` kernels against the engine's V-cycle (`Multigrid::apply`), bit for bit: one
/// V(1,1)-cycle on the global matrix of Liu's method, run level by level with `mg_down`, `mg_restrict`,
/// `mg_coarse`, `mg_up` and `mg_post` over the engine's hierarchy.
#[test]
fn multigrid_kernels_match_the_engine() {
    use springsim::cpu::local_global::LocalGlobalParams;
    use springsim::cpu::multigrid::Multigrid;
    use springsim::reference::multigrid as kernel;
    let model = curtain(41, None).unwrap();
    let cm = CpuModel::new(&model).unwrap();
    let mut mg = Multigrid::for_global(&cm, &LocalGlobalParams::new(&cm, 1e-2)).unwrap();
    assert!(mg.levels.len() >= 2, "a hierarchy of {} level(s)", mg.levels.len());
    let r: Vec<V3> = (0..cm.n)
        .map(|i| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { V3::new(hash(3 * i), hash(3 * i + 1), hash(3 * i + 2)) })
        .collect();
    let mut want = vec![V3::zeros(); cm.n];
    mg.apply(&r, &mut want);
    // down: per level its right-hand side b, smoothed x and residual t
    let levels = mg.levels.len();
    let (mut b, mut x, mut t) = (vec![r.clone()], Vec::new(), Vec::new());
    for lv in &mg.levels[..levels - 1] {
        let bl = b.last().unwrap();
        let rows: Vec<(V3, V3)> = (0..lv.a.rows()).map(|i| kernel::mg_down(i, lv.a.rows_view(), &lv.wdinv, bl)).collect();
        x.push(rows.iter().map(|row| row.0).collect::<Vec<V3>>());
        t.push(rows.iter().map(|row| row.1).collect::<Vec<V3>>());
        let tl = t.last().unwrap();
        b.push((0..lv.r.rows()).map(|c| kernel::mg_restrict(c, lv.r.rows_view(), tl)).collect());
    }
    let bl = b.last().unwrap();
    let mut z: Vec<V3> = (0..bl.len()).map(|i| kernel::mg_coarse(i, mg.coarse_inv.rows_view(), bl).0).collect();
    // up
    for l in (0..levels - 1).rev() {
        let lv = &mg.levels[l];
        let tl: Vec<V3> = (0..lv.a.rows()).map(|i| kernel::mg_up(i, lv.p.rows_view(), &x[l], &z)).collect();
        let rows: Vec<(V3, f64)> = (0..lv.a.rows()).map(|i| kernel::mg_post(i, lv.a.rows_view(), &lv.wdinv, &b[l], &tl)).collect();
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row.1, b[l][i].dot(&row.0), "mg_post's r·z term, level {l}, row {i}");
        }
        z = rows.iter().map(|row| row.0).collect();
    }
    assert!(z.iter().any(|a| a.norm() > 0.0));
    assert_eq!(z, want, "the reference V-cycle against Multigrid::apply");
}
