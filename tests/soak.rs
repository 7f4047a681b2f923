//! A soak: every method for many substeps on a small model, on the CPU and on the GPU, with no NaN and
//! the energy bounded. The model is an 8-particle rope pinned at one end, released horizontally (it
//! swings and, damped, settles hanging); each run samples the total energy (kinetic + springs + gravity)
//! after every frame of many substeps, and checks that the rope moved (> 0.3 m from its start).
//!
//! Bound, with E₀ the energy at release and ΔE = E₀ − E_hanging (what the swing can release): the damped
//! methods stay below E₀ + 0.01 ΔE (measured: at most E₀ − 0.19 ΔE on the CPU, E₀ − 0.003 ΔE on the
//! GPU's shorter runs); symplectic Euler, undamped, keeps a modified energy about which the true one
//! oscillates by O(h) near its stability limit: bound E₀ + ΔE (measured +0.41 ΔE on the CPU, +0.03 on
//! the GPU). An unstable run grows without bound and leaves either.
//!
//! The steps: the explicit methods and LEU at Shinya's planned h (0.57 ms on this rope), implicit Euler,
//! local/global and Newton at h = 1/600 s (stable at any h). The CPU runs 10⁵ substeps of every method
//! (8.6 s in all, in the test profile). The GPU runs 2000 (local/global 1000) under `cargo test`:
//! on lavapipe a substep costs 1 ms (explicit Euler) to 16 ms (local/global), so 10⁵ of every method
//! would take 50 minutes, past CI's budget; `SPRINGSIM_SOAK_SUBSTEPS=100000` runs the full soak on a
//! real GPU. The GPU's implicit solvers run GPU-native (PCG with a 20-iteration budget, local/global
//! with CG on the global step).

mod common;

use common::gpu;
use springsim::cpu::{CpuModel, V3};
use springsim::engine::Engine;
use springsim::reference::forces::energy;
use springsim::stepping::{CpuSimulator, GpuSimulator};
use springsim::{GlobalSolve, Method, Model, Simulator, StepSettings};

const SUBSTEPS: usize = 100_000;
/// The GPU's substeps per method under `cargo test` (see the module notes); `SPRINGSIM_SOAK_SUBSTEPS`
/// overrides it (100000 for the full soak).
const GPU_SUBSTEPS: usize = 2_000;

fn gpu_substeps(method: Method) -> usize {
    match std::env::var("SPRINGSIM_SOAK_SUBSTEPS") {
        Ok(s) => s.parse().expect("SPRINGSIM_SOAK_SUBSTEPS: a number of substeps"),
        // local/global: 10 iterations of a 20-iteration CG per step, 16 ms a step on lavapipe
        Err(_) if method == Method::LocalGlobal => GPU_SUBSTEPS / 2,
        Err(_) => GPU_SUBSTEPS,
    }
}
/// The implicit methods' step.
const H_IMPLICIT: f64 = 1.0 / 600.0;

fn rope() -> Model {
    springsim::model::rope(8, None).unwrap()
}

fn settings(method: Method) -> StepSettings {
    let s = StepSettings { cg_max_iterations: 20, cg_tolerance: 1e-5, ..Default::default() };
    if method == Method::LocalGlobal {
        // GPU-native (the default Cholesky global step is solved on the host with transfers per iteration)
        return StepSettings { global: GlobalSolve::Cg, ..s };
    }
    s
}

/// Energy of a state given as arrays.
fn total_energy(cm: &CpuModel, x: &[[f64; 3]], v: &[[f64; 3]]) -> f64 {
    let x: Vec<V3> = x.iter().map(|p| V3::from(*p)).collect();
    let v: Vec<V3> = v.iter().map(|p| V3::from(*p)).collect();
    energy(cm, &x, &v)
}

/// The energy at release and hanging straight down at rest (springs at rest length: an upper bound on
/// the lowest energy is not needed, the scale only sets the bound's size).
fn energy_scale(model: &Model, cm: &CpuModel) -> (f64, f64) {
    let e0 = total_energy(cm, &model.positions, &model.velocities);
    let anchor = model.positions[0];
    let hanging: Vec<[f64; 3]> = model.positions.iter().map(|p| [anchor[0], anchor[1] - (p[0] - anchor[0]).abs(), anchor[2]]).collect();
    let e_hang = total_energy(cm, &hanging, &vec![[0.0; 3]; model.n_particles()]);
    (e0, e0 - e_hang)
}

/// Runs `frames` frames through `step`, sampling the energy after each; returns the largest excess over
/// E₀ in units of ΔE and the final positions. Panics at the first non-finite coordinate.
fn soak<S: Simulator>(what: &str, sim: &mut S, frames: usize, mut step: impl FnMut(&mut S)) -> (f64, Vec<[f64; 3]>) {
    let model = rope();
    let cm = CpuModel::new(&model).unwrap();
    let (e0, de) = energy_scale(&model, &cm);
    let mut worst = f64::NEG_INFINITY;
    let mut x = model.positions.clone();
    for frame in 0..frames {
        step(sim);
        let (xs, vs) = sim.read_state().unwrap();
        assert!(xs.iter().chain(&vs).all(|p| p.iter().all(|c| c.is_finite())), "{what}: not finite after frame {frame}");
        worst = worst.max((total_energy(&cm, &xs, &vs) - e0) / de);
        x = xs;
    }
    (worst, x)
}

fn check(what: &str, method: Method, substeps: usize, excess: f64, x: &[[f64; 3]], seconds: f64) {
    let model = rope();
    let moved = x.iter().zip(&model.positions).map(|(a, b)| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()).fold(0.0, f64::max);
    eprintln!("{what} {method}: {substeps} substeps in {seconds:.2} s; largest E − E₀ = {excess:.2e} ΔE; moved {moved:.2} m");
    // the bounds of the module notes
    let bound = if method == Method::SymplecticEuler { 1.0 } else { 0.01 };
    assert!(excess < bound, "{what} {method}: the energy rose to E₀ + {excess:.3} ΔE (bound {bound})");
    assert!(moved > 0.3, "{what} {method}: the rope did not move ({moved} m)");
}

/// The step of `method`.
fn step_of(method: Method, planned_h: f64) -> f64 {
    if method.is_implicit() {
        H_IMPLICIT
    } else {
        planned_h
    }
}

#[test]
fn every_method_soaks_on_the_cpu() {
    let model = rope();
    let planned = CpuSimulator::new(&model, Method::ExplicitEuler, StepSettings::default()).unwrap().plan().h;
    for method in Method::ALL {
        let t = std::time::Instant::now();
        let per_frame = 1000;
        let mut sim = CpuSimulator::new(&model, method, settings(method)).unwrap();
        sim.set_h(step_of(method, planned)).unwrap();
        // the engine's own steps (no re-plan), with a failed solve reported
        let (excess, x) = soak("cpu", &mut sim, SUBSTEPS / per_frame, |s| {
            s.engine_mut().take_steps(per_frame).unwrap();
        });
        check("cpu", method, SUBSTEPS, excess, &x, t.elapsed().as_secs_f64());
    }
}

#[test]
fn every_method_soaks_on_the_gpu() {
    let Some(ctx) = gpu() else { return };
    let model = rope();
    let planned = CpuSimulator::new(&model, Method::ExplicitEuler, StepSettings::default()).unwrap().plan().h;
    for method in Method::ALL.into_iter().filter(|m| m.on_gpu()) {
        let substeps = gpu_substeps(method);
        let per_frame = (substeps / 10).clamp(1, 5000);
        let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, method, settings(method)).unwrap();
        sim.set_h(step_of(method, planned)).unwrap();
        let t = std::time::Instant::now();
        let (excess, x) = soak("gpu", &mut sim, substeps / per_frame, |s| s.probe().run_steps(per_frame).unwrap());
        check("gpu", method, substeps / per_frame * per_frame, excess, &x, t.elapsed().as_secs_f64());
    }
}
