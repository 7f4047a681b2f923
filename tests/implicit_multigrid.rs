//! The aggregation multigrid that preconditions implicit Euler's CG (`springsim::linalg::spring_mg`):
//! its coarse matrices are the Galerkin products PᵀAP of the step's matrix, its V-cycle is symmetric
//! positive definite (so CG may use it), its iteration count stays flat where Jacobi's grows with the
//! resolution, and the default implicit Euler (which uses it on the CPU) reaches its tolerance where
//! Jacobi-PCG stops short. Each test prints what it measured.

mod common;

use common::hash01;
use springsim::cpu::implicit::{self, CgWork, FineImplicit, ImplicitSystem};
use springsim::cpu::{CpuModel, V3};
use springsim::linalg::spring_mg::SpringMg;
use springsim::method::{DivergencePolicy, GuardSettings, Preconditioner};
use springsim::stepping::CpuSimulator;
use springsim::{Method, Simulator, StepSettings};

/// The system of one step h = 1/30 s of an n×n cloth at a stretched, moving state (a few frames of the
/// default implicit Euler, then a deterministic jiggle so that every spring block is distinct).
fn cloth_system(n: usize, frames: usize) -> (CpuModel, ImplicitSystem) {
    let model = springsim::model::cloth(n, None).unwrap();
    let mut sim = CpuSimulator::new(&model, Method::ImplicitEuler, StepSettings::default()).unwrap();
    for _ in 0..frames {
        sim.step_frame().unwrap();
    }
    let (x, v) = sim.read_state().unwrap();
    let cm = CpuModel::new(&model).unwrap();
    let len = 1.0 / n as f64;
    let x: Vec<V3> = x
        .iter()
        .enumerate()
        .map(|(i, p)| V3::from(*p) + V3::new(hash01((3 * i) as u64), hash01((3 * i + 1) as u64), hash01((3 * i + 2) as u64)) * (0.2 * len))
        .collect();
    let v: Vec<V3> =
        v.iter().enumerate().map(|(i, p)| V3::from(*p) + V3::new(hash01((7 * i) as u64), hash01((7 * i + 1) as u64), 0.0) * 0.1).collect();
    let mut sys = ImplicitSystem::default();
    implicit::implicit_prepare(&cm, 1.0 / 30.0, false, &x, &v, &mut sys);
    (cm, sys)
}

fn dot(a: &[V3], b: &[V3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.dot(y)).sum()
}

/// Every coarse level's matrix is Pᵀ A P of the level above, with P the 0/1 map of each node to its
/// aggregate (⊗ I₃). Level 1 is checked against the matrix-free product of the step (A (P eⱼ) summed over
/// each aggregate, one product per coarse column, so it is independent of the hierarchy's own sums); the
/// coarser levels against the dense product of the level above. On the 48×48 cloth (2304 particles, two
/// of them pinned; three levels). Tolerance 1e-12 of the largest entry (the same numbers summed in
/// another order).
#[test]
fn coarse_levels_are_the_galerkin_products_of_the_step_matrix() {
    let (cm, sys) = cloth_system(48, 2);
    let mut mg = implicit::spring_multigrid(&cm, &sys.sweep).unwrap();
    let fine = FineImplicit { m: &cm, sys: &sys };
    mg.update(&fine).unwrap();
    assert!(mg.levels() >= 3, "levels {:?}", mg.sizes());
    let agg = mg.aggregates(0);
    let a1 = mg.level_matrix(1, &fine);
    let nc = a1.nrows() / 3;
    let (mut pe, mut ape) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n]);
    let mut worst1: f64 = 0.0;
    for jc in 0..3 * nc {
        // P e_J: 1 in component jc % 3 on every member of aggregate jc / 3
        for (i, p) in pe.iter_mut().enumerate() {
            *p = V3::zeros();
            if agg[i] as usize == jc / 3 {
                p[jc % 3] = 1.0;
            }
        }
        implicit::implicit_matvec(&cm, &sys, &pe, &mut ape);
        let mut col = vec![0.0; 3 * nc];
        for (i, y) in ape.iter().enumerate() {
            if agg[i] != u32::MAX {
                for k in 0..3 {
                    col[3 * agg[i] as usize + k] += y[k];
                }
            }
        }
        for (ic, c) in col.iter().enumerate() {
            worst1 = worst1.max((c - a1[(ic, jc)]).abs());
        }
    }
    let mut worst = vec![worst1 / a1.amax()];
    for l in 1..mg.levels() - 1 {
        let (a, c) = (mg.level_matrix(l, &fine), mg.level_matrix(l + 1, &fine));
        let mut p = nalgebra::DMatrix::<f64>::zeros(a.nrows(), c.nrows());
        for (i, &g) in mg.aggregates(l).iter().enumerate() {
            for k in 0..3 {
                p[(3 * i + k, 3 * g as usize + k)] = 1.0;
            }
        }
        let galerkin = p.transpose() * &a * &p;
        worst.push((galerkin - &c).amax() / c.amax());
    }
    eprintln!("48x48 cloth, levels {:?}: each level vs PᵀAP of the one above, relative: {worst:?}", mg.sizes());
    assert!(worst.iter().all(|&w| w < 1e-12), "{worst:?}");
}

/// The V-cycle z = B r is symmetric (r₂·B r₁ = r₁·B r₂) and positive (r·B r > 0), which CG needs of a
/// preconditioner; on the 48×48 cloth with random right-hand sides, to 1e-9 of |r₁||Br₂|.
#[test]
fn the_v_cycle_is_symmetric_positive_definite() {
    let (cm, sys) = cloth_system(48, 2);
    let mut mg = implicit::spring_multigrid(&cm, &sys.sweep).unwrap();
    let fine = FineImplicit { m: &cm, sys: &sys };
    mg.update(&fine).unwrap();
    let rand = |seed: usize| -> Vec<V3> {
        (0..cm.n)
            .map(|i| {
                if cm.inv_mass[i] == 0.0 {
                    V3::zeros()
                } else {
                    V3::new(hash01((seed + 3 * i) as u64), hash01((seed + 3 * i + 1) as u64), hash01((seed + 3 * i + 2) as u64))
                        - V3::repeat(0.5)
                }
            })
            .collect()
    };
    let mut worst: f64 = 0.0;
    for t in 0..4 {
        let (r1, r2) = (rand(100_000 * t + 1), rand(100_000 * t + 50_000));
        let (mut z1, mut z2) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n]);
        mg.apply(&fine, &r1, &mut z1);
        mg.apply(&fine, &r2, &mut z2);
        let asym = (dot(&r2, &z1) - dot(&r1, &z2)).abs() / (dot(&r1, &r1).sqrt() * dot(&z2, &z2).sqrt());
        worst = worst.max(asym);
        assert!(dot(&r1, &z1) > 0.0 && dot(&r2, &z2) > 0.0, "r·Br ≤ 0");
    }
    eprintln!("48x48 cloth, levels {:?}: V-cycle asymmetry |r₂·Br₁ − r₁·Br₂| / |r₁||Br₂| ≤ {worst:.1e}", mg.sizes());
    assert!(worst < 1e-9, "asymmetry {worst:e}");
}

/// Iterations to a relative residual of 1e-6 for one step of the n×n cloth, Jacobi-PCG and multigrid-PCG
/// (a budget of 5000; `None` when the budget ran out).
fn iterations(n: usize) -> (Option<usize>, usize) {
    let (cm, sys) = cloth_system(n, 1);
    let mut w = CgWork::default();
    let mut x = vec![V3::zeros(); cm.n];
    let jac = implicit::pcg_solve(|p, o| implicit::implicit_matvec(&cm, &sys, p, o), &sys.inv_diag, &sys.rhs, &mut x, 1e-6, 5000, &mut w)
        .unwrap();
    let mut mg: SpringMg = implicit::spring_multigrid(&cm, &sys.sweep).unwrap();
    let fine = FineImplicit { m: &cm, sys: &sys };
    mg.update(&fine).unwrap();
    x.iter_mut().for_each(|v| *v = V3::zeros());
    let rep = implicit::pcg_solve_with(
        |p, o| implicit::implicit_matvec(&cm, &sys, p, o),
        |r, z| mg.apply(&fine, r, z),
        &sys.rhs,
        &mut x,
        1e-6,
        5000,
        &mut w,
    )
    .unwrap();
    assert!(rep.residual <= 1e-6, "multigrid-PCG stopped at {:e} on the {n}² cloth", rep.residual);
    ((jac.residual <= 1e-6).then_some(jac.iterations), rep.iterations)
}

/// Shinya §5: Jacobi-PCG's iterations grow as h√k₀, i.e. with the resolution (k₀ × 4 per doubling);
/// the multigrid's grow far slower. Plain aggregation is not resolution-independent (its coarse spaces
/// are piecewise constant): measured, its count grows about as the square root of Jacobi's. Fitted over
/// the 32², 64² and 128² cloths, iterations ∝ (h√k₀)^p: multigrid p ≤ 0.6 where Jacobi's p ≥ 0.9, and at
/// 128² multigrid needs under a fifth of Jacobi's iterations.
#[test]
fn multigrid_iterations_grow_far_slower_than_jacobis() {
    let runs: Vec<(usize, usize, usize)> = [32, 64, 128]
        .into_iter()
        .map(|n| {
            let (j, m) = iterations(n);
            (n, j.unwrap_or(5000), m)
        })
        .collect();
    // least-squares slope of log(iterations) against log(n) (h√k₀ ∝ n)
    let slope = |f: &dyn Fn(&(usize, usize, usize)) -> usize| {
        let pts: Vec<(f64, f64)> = runs.iter().map(|r| ((r.0 as f64).ln(), (f(r) as f64).ln())).collect();
        let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / 3.0, pts.iter().map(|p| p.1).sum::<f64>() / 3.0);
        pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>()
    };
    let (pj, pm) = (slope(&|r| r.1), slope(&|r| r.2));
    eprintln!(
        "iterations to 1e-6, one step at h = 1/30, (n, Jacobi, multigrid): {runs:?}; fitted exponents Jacobi {pj:.2}, multigrid {pm:.2}"
    );
    assert!(pj >= 0.9, "Jacobi exponent {pj} (the premise)");
    assert!(pm <= 0.6, "multigrid exponent {pm}");
    let (_, j128, m128) = runs[2];
    assert!(5 * m128 <= j128, "multigrid {m128} vs Jacobi {j128} at 128²");
}

/// The default implicit Euler on the CPU preconditions with the multigrid (`auto`) and its solves reach the
/// tolerance on the 128² cloth, where Jacobi-PCG with the same budget stops short and leaves the cloth
/// stretched further (10 frames, the largest strain of any frame and the last solve's residual).
#[test]
fn default_implicit_euler_solves_to_its_tolerance_on_a_fine_cloth() {
    let model = springsim::model::cloth(128, None).unwrap();
    let run = |p: Preconditioner| {
        let s = StepSettings {
            preconditioner: p,
            guard: GuardSettings { policy: DivergencePolicy::Ignore, ..Default::default() },
            ..Default::default()
        };
        let mut sim = CpuSimulator::new(&model, Method::ImplicitEuler, s).unwrap();
        let (mut strain, mut resid): (f64, f64) = (0.0, 0.0);
        for _ in 0..10 {
            let r = sim.step_frame().unwrap();
            resid = resid.max(r.residual);
            strain = strain.max(springsim::cpu::forces::max_strain(sim.engine().model(), &sim.engine().x));
        }
        (strain, resid)
    };
    assert_eq!(StepSettings::default().preconditioner.resolve(Method::ImplicitEuler), Preconditioner::Multigrid);
    let (s_mg, r_mg) = run(Preconditioner::Auto);
    let (s_j, r_j) = run(Preconditioner::Jacobi);
    eprintln!("128² cloth, 10 frames: multigrid: strain {s_mg:.3}, worst frame-end residual {r_mg:.1e}; Jacobi: strain {s_j:.3}, residual {r_j:.1e}");
    let tol = StepSettings::default().cg_tolerance;
    assert!(r_mg <= tol, "multigrid residual {r_mg:e}");
    assert!(r_j > 100.0 * tol, "Jacobi reached {r_j:e} (the premise)");
    assert!(s_mg < s_j, "multigrid strain {s_mg} vs Jacobi {s_j}");
}
