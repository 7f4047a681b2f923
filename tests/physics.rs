//! The papers' claims, checked on the CPU twin (and on the GPU where it is cheap).

mod common;

use common::{gpu, hash01};
use nalgebra::{DMatrix, SymmetricEigen};
use springsim::cpu::{power, CpuModel, V3};
use springsim::model::{Forces, Model};
use springsim::stepping::plan::h_max;
use springsim::stepping::CpuSimulator;
use springsim::stepping::GpuSimulator;
use springsim::{Method, Simulator, StepSettings};

/// k₀ of M⁻¹K_c by a dense symmetric eigen-solve of M^{-1/2} K_c M^{-1/2}, K_c assembled from the
/// per-spring blocks k[n̂n̂ᵀ + max(0, 1 − L/l)(I − n̂n̂ᵀ)] independently of the matrix-free code.
fn dense_k0(model: &Model, x: &[V3]) -> f64 {
    let cm = CpuModel::new(model).unwrap();
    let n = cm.n;
    let mut k = DMatrix::<f64>::zeros(3 * n, 3 * n);
    for s in 0..cm.end_a.len() {
        let (a, b) = (cm.end_a[s] as usize, cm.end_b[s] as usize);
        let d = x[a] - x[b];
        let l = d.norm();
        let nn = d / l;
        let c = (1.0 - cm.rest[s] / l).max(0.0);
        let blk = (nn * nn.transpose() + (nalgebra::Matrix3::identity() - nn * nn.transpose()) * c) * cm.k[s];
        for r in 0..3 {
            for q in 0..3 {
                k[(3 * a + r, 3 * a + q)] += blk[(r, q)];
                k[(3 * b + r, 3 * b + q)] += blk[(r, q)];
                k[(3 * a + r, 3 * b + q)] -= blk[(r, q)];
                k[(3 * b + r, 3 * a + q)] -= blk[(r, q)];
            }
        }
    }
    for i in 0..3 * n {
        for j in 0..3 * n {
            k[(i, j)] *= (cm.inv_mass[i / 3] * cm.inv_mass[j / 3]).sqrt();
        }
    }
    SymmetricEigen::new(k).eigenvalues.max()
}

fn deformed_cloth() -> (Model, Vec<V3>) {
    let model = springsim::model::cloth(6, None).unwrap();
    let x: Vec<V3> = model
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            V3::new(p[0] * 1.1 + 0.01 * hash01(3 * i as u64), 0.03 * hash01(3 * i as u64 + 1), p[2] + 0.01 * hash01(3 * i as u64 + 2))
        })
        .collect();
    (model, x)
}

#[test]
fn power_iteration_k0_matches_dense_eigensolve() {
    let (model, x) = deformed_cloth();
    let cm = CpuModel::new(&model).unwrap();
    let dense = dense_k0(&model, &x);
    let pw = power::power_k0(&cm, &x, 500);
    let rel = (pw - dense).abs() / dense;
    eprintln!("k0 dense {dense:.6e} power {pw:.6e} rel {rel:.2e}");
    assert!(rel < 0.01, "power iteration k0 {pw} vs dense {dense}");
    // the GPU power iteration at the same (deformed) positions
    if let Some(ctx) = gpu() {
        let mut deformed = model.clone();
        deformed.positions = x.iter().map(|p| [p.x, p.y, p.z]).collect();
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &deformed, Method::ExplicitEuler, StepSettings::default()).unwrap();
        let kg = g.probe().power_k0(500).unwrap();
        let relg = (kg - dense).abs() / dense;
        eprintln!("k0 gpu {kg:.6e} rel {relg:.2e}");
        assert!(relg < 0.01, "GPU power iteration k0 {kg} vs dense {dense}");
    }
}

/// An undamped free chain along x, perturbed along x only, so that its motion is exactly linear.
fn chain() -> Model {
    let n = 16;
    let mut m = Model::new(Forces::none());
    for i in 0..n {
        m.add_particle([i as f64 * 0.1, 0.0, 0.0], 0.01);
    }
    for i in 0..n as u32 - 1 {
        m.add_spring(i, i + 1, 100.0, 0.0);
    }
    for i in 0..n {
        m.positions[i][0] += 1e-3 * hash01(i as u64);
    }
    m
}

/// Runs `steps` steps at h = scale·h_max and returns the largest displacement from rest seen, relative
/// to the initial one (∞ when it left the finite range).
fn growth(model: &Model, method: Method, d0: f64, scale: f64, rayleigh: bool, steps: usize) -> f64 {
    let mut model = model.clone();
    model.forces.drag = d0;
    let rest: Vec<f64> = (0..model.n_particles()).map(|i| i as f64 * 0.1).collect();
    let amp = |x: &[V3]| x.iter().zip(&rest).map(|(p, r)| (p.x - r).abs()).fold(0.0, f64::max);
    let settings = StepSettings { rayleigh, power_iterations: 5000, ..Default::default() };
    let mut sim = CpuSimulator::new(&model, method, settings).unwrap();
    let hm = h_max(method, sim.plan().k0, d0, 0.0);
    sim.set_h(scale * hm).unwrap();
    let a0 = amp(&sim.engine().x);
    let mut worst: f64 = 0.0;
    for _ in 0..steps {
        sim.engine_mut().step();
        let a = amp(&sim.engine().x);
        if !a.is_finite() {
            return f64::INFINITY;
        }
        worst = worst.max(a);
    }
    worst / a0
}

#[test]
fn shinya_stability_boundary() {
    let model = chain();
    // k0 of this chain: check the power iteration against the dense solve first.
    let cm = CpuModel::new(&model).unwrap();
    let x: Vec<V3> = model.positions.iter().map(|p| V3::from(*p)).collect();
    let dense = dense_k0(&model, &x);
    let pw = power::power_k0(&cm, &x, 5000);
    assert!((pw - dense).abs() / dense < 1e-3, "chain k0 {pw} vs {dense}");
    let cases = [
        ("symplectic-euler, undamped", Method::SymplecticEuler, 0.0, false),
        ("explicit-euler, Rayleigh eq. 31, d0 = 0.1", Method::ExplicitEuler, 0.1, true),
        ("rk4, Rayleigh eq. 33, d0 = 0.1", Method::Rk4, 0.1, true),
    ];
    for (name, method, d0, rayleigh) in cases {
        // 20,000 steps: RK4 just past its limit grows slowly (|R| of its top mode is barely above 1).
        let below = growth(&model, method, d0, 0.95, rayleigh, 20_000);
        let above = growth(&model, method, d0, 1.05, rayleigh, 20_000);
        eprintln!("{name}: max amplitude / initial at 0.95 h_max = {below:.3}, at 1.05 h_max = {above:e}");
        assert!(below < 10.0, "{name}: not bounded at 0.95 h_max (growth {below})");
        // A blow-up: the 1 mm perturbation grows over a thousandfold (to metres, in a chain of 10 cm
        // springs) or leaves the finite range; past that the springs invert and the motion is no
        // longer the linear one Shinya analyses.
        assert!(above > 1e3, "{name}: did not blow up at 1.05 h_max (growth {above})");
    }
    // And without Rayleigh damping explicit Euler is unstable even below h_max (Shinya eq. 22: Y < X).
    let undamped = growth(&model, Method::ExplicitEuler, 0.0, 0.5, false, 10_000);
    assert!(undamped > 1e3, "undamped explicit Euler at 0.5 h_max stayed bounded ({undamped})");
}

fn orbit_radii(method: Method, backend_gpu: bool) -> Option<Vec<f64>> {
    let model = springsim::scene::build("orbit", &Default::default()).unwrap();
    let period = 2.0 * std::f64::consts::PI / 5.0;
    let h = period / 100.0;
    let settings = StepSettings { rayleigh: false, ..Default::default() };
    let mut radii = Vec::new();
    if backend_gpu {
        let ctx = gpu()?;
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, method, settings).unwrap();
        g.set_h(h).unwrap();
        for _ in 0..100 {
            g.probe().run_steps(1).unwrap();
            let p = g.read_state().unwrap().0[0];
            radii.push((p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt());
        }
    } else {
        let mut c = CpuSimulator::new(&model, method, settings).unwrap();
        c.set_h(h).unwrap();
        for _ in 0..100 {
            c.engine_mut().step();
            radii.push(c.engine().x[0].norm());
        }
    }
    Some(radii)
}

#[test]
fn slides_orbit_euler_spirals_out_rk4_stays_on_circle() {
    for gpu_backend in [false, true] {
        let Some(euler) = orbit_radii(Method::ExplicitEuler, gpu_backend) else {
            continue;
        };
        let rk4 = orbit_radii(Method::Rk4, gpu_backend).unwrap();
        // Euler: the radius grows at every step (|1 + iωh| > 1) and ends well outside the circle.
        assert!(euler.windows(2).all(|w| w[1] > w[0]), "Euler radius did not grow monotonically");
        let last = *euler.last().unwrap();
        assert!(last > 1.15, "Euler ended at r = {last}");
        let dev = rk4.iter().map(|r| (r - 1.0).abs()).fold(0.0, f64::max);
        let mid = orbit_radii(Method::Midpoint, gpu_backend).unwrap().iter().map(|r| (r - 1.0).abs()).fold(0.0, f64::max);
        eprintln!("gpu={gpu_backend}: Euler r after one orbit = {last:.4}; RK4 max |r - 1| = {dev:.2e}; midpoint {mid:.2e}");
        // RK4's radius error over one orbit at 100 steps: measured 4.3e-8 (CPU) and 1.5e-7 (GPU, f32);
        // midpoint's is 1.95e-4 on both: the bound tells fourth order from second
        let tol = if gpu_backend { 5e-7 } else { 1e-7 };
        assert!(dev < tol, "RK4 left the circle by {dev:e} (bound {tol:e})");
        assert!(mid > 100.0 * tol, "midpoint stayed within {mid:e} of the circle: the RK4 bound would not tell them apart");
    }
}

/// The massive spring at rest, free, no gravity: pushed (sim B) and not pushed (sim A).
fn slinky_pair(rayleigh: bool) -> (CpuSimulator, CpuSimulator) {
    let mut m = springsim::model::slinky(24, 20.0, 0.2, 0.5).unwrap();
    m.forces = Forces::none();
    m.pinned.iter_mut().for_each(|p| *p = false);
    let settings = StepSettings { rayleigh, ..Default::default() };
    let a = CpuSimulator::new(&m, Method::ExplicitEuler, settings.clone()).unwrap();
    let mut pushed = m.clone();
    pushed.velocities[0] = [0.0, 1.0, 0.0];
    let b = CpuSimulator::new(&pushed, Method::ExplicitEuler, settings).unwrap();
    (a, b)
}

#[test]
fn slinky_wave_travels_at_most_one_particle_per_explicit_step() {
    for rayleigh in [false, true] {
        let (mut a, mut b) = slinky_pair(rayleigh);
        let n = a.engine().x.len();
        let mut first_reached = vec![usize::MAX; n];
        for step in 1..=2 * n {
            a.engine_mut().step();
            b.engine_mut().step();
            for (i, reached) in first_reached.iter_mut().enumerate() {
                if (a.engine().x[i] != b.engine().x[i] || a.engine().v[i] != b.engine().v[i]) && *reached == usize::MAX {
                    *reached = step;
                }
            }
        }
        for (i, &s) in first_reached.iter().enumerate() {
            assert!(s >= i, "rayleigh={rayleigh}: particle {i} felt the push after {s} steps");
        }
        // and the push did travel the whole spring
        assert!(first_reached.iter().all(|&s| s != usize::MAX), "rayleigh={rayleigh}: {first_reached:?}");
        eprintln!("rayleigh={rayleigh}: first step at which particle i moves: {first_reached:?}");
    }
}

fn free_jelly() -> Model {
    let mut m = springsim::model::jelly(4, None).unwrap();
    m.forces = Forces::none();
    for i in 0..m.n_particles() {
        m.velocities[i] = [hash01(3 * i as u64), hash01(3 * i as u64 + 1), hash01(3 * i as u64 + 2)];
        m.masses[i] *= 1.0 + 0.5 * hash01(1000 + i as u64).abs();
    }
    m.springs.iter_mut().enumerate().for_each(|(s, sp)| sp.kd = 0.01 * (1.0 + hash01(5000 + s as u64)));
    m
}

fn momentum(model: &Model, v: &[[f64; 3]]) -> [f64; 3] {
    let mut p = [0.0; 3];
    for (vi, m) in v.iter().zip(&model.masses) {
        for c in 0..3 {
            p[c] += m * vi[c];
        }
    }
    p
}

#[test]
fn momentum_is_conserved_by_every_method() {
    let model = free_jelly();
    let scale: f64 = model.velocities.iter().zip(&model.masses).map(|(v, m)| m * (v[0].abs() + v[1].abs() + v[2].abs())).sum();
    let p0 = momentum(&model, &model.velocities);
    let ctx = gpu();
    // implicit Euler conserves momentum to its solve's tolerance: tests/implicit.rs checks it with a tight one
    for method in Method::EXPLICIT {
        let mut c = CpuSimulator::new(&model, method, StepSettings::default()).unwrap();
        for _ in 0..5 {
            c.step_frame().unwrap();
        }
        let p = momentum(&model, &c.read_state().unwrap().1);
        let err = (0..3).map(|k| (p[k] - p0[k]).abs()).fold(0.0, f64::max) / scale;
        eprintln!("cpu {method}: momentum drift / sum m|v| = {err:.2e}");
        assert!(err < 1e-12, "cpu {method}: momentum drift {err:e}");
        if let Some(ctx) = &ctx {
            let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, method, StepSettings::default()).unwrap();
            for _ in 0..5 {
                g.step_frame().unwrap();
            }
            let p = momentum(&model, &g.read_state().unwrap().1);
            let err = (0..3).map(|k| (p[k] - p0[k]).abs()).fold(0.0, f64::max) / scale;
            eprintln!("gpu {method}: momentum drift / sum m|v| = {err:.2e}");
            // f32 rounding: each of the ~1e3 steps adds rounding of order 1e-7 of the forces.
            assert!(err < 1e-4, "gpu {method}: momentum drift {err:e}");
        }
    }
}

#[test]
fn leu_retries_on_divergence_and_recovers() {
    // A curtain with a tiny speed limit: every linearized step "diverges", is discarded and is taken
    // again with a fresh linearization, which is then an explicit Euler step.
    let model = springsim::model::curtain(11, None).unwrap();
    let settings = StepSettings { speed_limit: 1e-6, ..Default::default() };
    let mut leu = CpuSimulator::new(&model, Method::Leu, settings.clone()).unwrap();
    let mut eu = CpuSimulator::new(&model, Method::ExplicitEuler, settings).unwrap();
    let h = leu.plan().h;
    leu.set_h(h).unwrap();
    eu.set_h(h).unwrap();
    for _ in 0..20 {
        leu.engine_mut().step();
        eu.engine_mut().step();
    }
    assert!(leu.engine().leu_retries() >= 19, "retries {}", leu.engine().leu_retries());
    assert_eq!(leu.engine().x, eu.engine().x, "retried LEU steps must equal explicit Euler steps");
    if let Some(ctx) = gpu() {
        let settings = StepSettings { speed_limit: 1e-6, ..Default::default() };
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::Leu, settings.clone()).unwrap();
        let mut ge = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::ExplicitEuler, settings).unwrap();
        g.set_h(h).unwrap();
        ge.set_h(h).unwrap();
        g.probe().run_steps(20).unwrap();
        ge.probe().run_steps(20).unwrap();
        let r = g.probe().leu_retries_gpu().unwrap();
        assert!(r >= 19, "gpu retries {r}");
        let (a, b) = (g.read_state().unwrap().0, ge.read_state().unwrap().0);
        let e = common::rel_err(&a, &b);
        eprintln!("gpu LEU retries {r}, rel. difference to explicit Euler {e:.2e}");
        assert!(e < 1e-6);
    }
}

/// k₀ of the power iteration (the plan's default iterations) against the dense eigen-solve at the same
/// state: measured 4.4e-5 at the start state (CPU and GPU) and 5e-9 (CPU), 1.5e-7 (GPU) after the frame.
const K0_TOL: f64 = 2e-4;

#[test]
fn explicit_divergence_recomputes_k0() {
    // A stretched curtain released at rest: with a tiny speed limit the first frame "diverges", and the
    // step is re-planned from k₀ at the deformed state, which is larger than at rest (the transverse
    // term of K_c grows with the stretch).
    let mut model = springsim::model::curtain(11, None).unwrap();
    for p in &mut model.positions {
        p[0] *= 1.2;
        p[2] *= 1.2;
    }
    let settings = StepSettings { speed_limit: 1e-3, ..Default::default() };
    let mut c = CpuSimulator::new(&model, Method::SymplecticEuler, settings.clone()).unwrap();
    let k_before = c.plan().k0;
    let dense_before = dense_k0(&model, &c.engine().x);
    let r = c.step_frame().unwrap();
    let k_after = c.plan().k0;
    // k₀ after the frame is the largest eigenvalue at the frame's end state, by a dense eigen-solve
    let dense_after = dense_k0(&model, &c.engine().x);
    let (e_before, e_after) = ((k_before - dense_before).abs() / dense_before, (k_after - dense_after).abs() / dense_after);
    eprintln!(
        "cpu k0 before {k_before:.5e} (dense {dense_before:.5e}, rel {e_before:.1e}) after {k_after:.5e} (dense {dense_after:.5e}, rel {e_after:.1e}); {} substeps",
        r.substeps
    );
    assert!(e_before < K0_TOL && e_after < K0_TOL, "k0 is not the dense solve's at the state: {e_before:e}, {e_after:e}");
    // the state moved enough for the two to be told apart: k₀ rose by 3.4% (≫ K0_TOL)
    assert!(dense_after / dense_before - 1.0 > 10.0 * K0_TOL, "k0 did not change ({dense_before} -> {dense_after})");
    if let Some(ctx) = gpu() {
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, settings.clone()).unwrap();
        let kb = g.plan().k0;
        g.step_frame().unwrap();
        let ka = g.plan().k0;
        eprintln!(
            "gpu k0 before {kb:.5e} ({:.1e}) after {ka:.5e} ({:.1e})",
            (kb - dense_before).abs() / dense_before,
            (ka - dense_after).abs() / dense_after
        );
        // the GPU's (f32) power iteration at its end state against the CPU's dense solve at the CPU's
        assert!((kb - dense_before).abs() / dense_before < K0_TOL, "gpu k0 before {kb} vs dense {dense_before}");
        assert!((ka - dense_after).abs() / dense_after < K0_TOL, "gpu k0 after {ka} vs dense {dense_after}");
        // the pipelined frame re-estimates k₀ on the GPU after the alarm, a frame late, at the same state
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, settings.clone()).unwrap();
        let mut replans_in_a_frame = || -> Vec<f64> {
            let events = g.run_frames(1).unwrap();
            events
                .into_iter()
                .filter_map(|e| match e {
                    springsim::FrameEvent::Replanned { k0, .. } => Some(k0),
                    _ => None,
                })
                .collect()
        };
        // the alarm comes with the frame's report; the estimate with the next report
        let replans = replans_in_a_frame();
        assert!(replans.is_empty(), "k0 before the estimate came back: {replans:?}");
        let replans = replans_in_a_frame();
        assert!(!replans.is_empty(), "no re-plan after the speed alarm");
        assert_eq!(g.plan().k0, replans[replans.len() - 1]);
        // estimated at the end of the frame just run: the state now
        let (x, _) = g.read_state().unwrap();
        let x: Vec<V3> = x.into_iter().map(V3::from).collect();
        let dense = dense_k0(&model, &x);
        let cm = springsim::reference::model::CpuModel::new(&model).unwrap();
        let twin = springsim::cpu::power::power_k0(&cm, &x, settings.power_iterations);
        let rel = (replans[0] - twin).abs() / twin;
        eprintln!(
            "gpu pipelined k0 after the alarm {:.5e} (the CPU's power iteration at its state {twin:.5e}, rel {rel:.1e}; dense {dense:.5e})",
            replans[0]
        );
        assert!(rel < K0_TOL, "the pipelined k0 {} vs the CPU's power iteration {twin}", replans[0]);
        // with the default limit nothing is flagged
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, StepSettings::default()).unwrap();
        let events = g.run_frames(2).unwrap();
        assert!(!events.iter().any(|e| matches!(e, springsim::FrameEvent::Replanned { .. })), "{events:?}");
    }
}
