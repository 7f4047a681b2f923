//! Shinya's linearized explicit Euler (§4) with an interval h_nl > h, and its divergence rollback in the
//! middle of an interval, on both backends:
//! - with h_nl = N·h the engine follows Shinya's procedure written out here over the reference kernels
//!   (linearize every N steps, eq. 34 in between); N = 1 is explicit Euler (the fresh linearization's
//!   force is the exact one), and the gap to explicit Euler grows with N (the held K and D are stale);
//! - with a speed limit that the swing crosses, the divergence check fires, the step is discarded, K and D
//!   are re-evaluated at the step's start and the step is retaken: the engine's trajectory is that of the
//!   procedure, and the retaken steps are explicit Euler steps from the state before them; the GPU takes
//!   as many retries as the procedure with its own policy and stays within f32 rounding of it.
//!
//! A twin difference this file found (reported with issue #18, not changed here): after a retaken step
//! the CPU engine restarts the interval h_nl from it, while the GPU (`gpu::methods::leu::encode_step`, recorded
//! without reading the divergence flag back) keeps linearizing every N steps counted from the first; on
//! the run below that retakes 50 steps on the CPU and 49 on the GPU.
//!
//! Model: an 8-particle rope (pinned at one end, 1 m, k = 350 N/m) released horizontally, h from Shinya's
//! plan (4.9 ms), 150 steps (0.73 s: the tip swings down and through the bottom). Tolerances stated at
//! each assertion with what was measured.

mod common;

use common::{gpu, rel_err_motion};
use springsim::cpu::V3;
use springsim::reference::forces::StepParams;
use springsim::reference::leu::{leu_fixup, leu_linearize, leu_step, LeuBlock};
use springsim::stepping::{CpuSimulator, GpuSimulator};
use springsim::{Method, Model, Simulator, StepSettings};

const STEPS: usize = 150;

fn rope() -> Model {
    springsim::model::rope(8, None).unwrap()
}

/// The planned h of the rope (from k₀), so that every run below takes the same step.
fn planned_h(model: &Model) -> f64 {
    CpuSimulator::new(model, Method::Leu, StepSettings::default()).unwrap().plan().h
}

fn settings(h: f64, every: usize, speed_limit: f64) -> StepSettings {
    // the interval a hair under N·h, so that the plan's rounding of h_nl/h gives N
    StepSettings { leu_interval: every as f64 * h * (1.0 - 1e-6), speed_limit, ..Default::default() }
}

/// Shinya §4 over the reference kernels: linearize at the start and every `every` steps; take eq. 34's
/// step; when any speed exceeds the limit, discard the step, linearize at its start and retake it.
/// `restart`: the interval restarts at a retaken step (the CPU engine); otherwise the linearizations keep
/// their schedule of every `every` steps (the GPU, whose host records the steps without reading the
/// divergence flag back). Returns the positions after each step, the steps that were retaken and each
/// step's fastest speed of eq. 34's step (the one the check judges).
fn procedure(
    model: &Model,
    p: StepParams,
    every: usize,
    speed_limit: f64,
    steps: usize,
    restart: bool,
) -> (Vec<Vec<V3>>, Vec<usize>, Vec<f64>) {
    let cm = springsim::cpu::CpuModel::new(model).unwrap();
    let off = cm.incidence.offsets.clone();
    let mut x: Vec<V3> = model.positions.iter().map(|q| V3::from(*q)).collect();
    let mut v: Vec<V3> = model.velocities.iter().map(|q| V3::from(*q)).collect();
    let (mut x0, mut v0, mut a0) = (x.clone(), v.clone(), x.clone());
    let mut blocks: Vec<LeuBlock> = vec![([0.0; 6], [0.0; 6]); cm.incidence.entries.len()];
    let (mut since, mut out, mut retaken, mut speeds) = (every, Vec::new(), Vec::new(), Vec::new());
    for step in 0..steps {
        if since >= every {
            for i in 0..cm.n {
                a0[i] = leu_linearize(i, &cm, &p, &x, &v, &mut blocks[off[i] as usize..off[i + 1] as usize]);
            }
            (x0, v0, since) = (x.clone(), v.clone(), 0);
        }
        let mut next: Vec<(V3, V3, bool)> = (0..cm.n).map(|i| leu_step(i, &cm, p.h, speed_limit, &x, &v, &x0, &v0, &a0, &blocks)).collect();
        speeds.push(next.iter().map(|r| r.1.norm()).fold(0.0, f64::max));
        if next.iter().any(|r| r.2) {
            let mut fresh = blocks.clone();
            for (i, r) in next.iter_mut().enumerate() {
                let (xn, vn, a) = leu_fixup(i, &cm, &p, &x, &v, &mut fresh[off[i] as usize..off[i + 1] as usize]);
                *r = (xn, vn, false);
                a0[i] = a;
            }
            (blocks, x0, v0) = (fresh, x.clone(), v.clone());
            if restart {
                since = 0;
            }
            retaken.push(step);
        }
        since += 1;
        x = next.iter().map(|r| r.0).collect();
        v = next.iter().map(|r| r.1).collect();
        out.push(x.clone());
    }
    (out, retaken, speeds)
}

fn max_diff(a: &[V3], b: &[V3]) -> f64 {
    a.iter().zip(b).map(|(p, q)| (p - q).norm()).fold(0.0, f64::max)
}

/// Runs the CPU engine `steps` steps, one at a time, returning the positions after each and its retries.
fn engine_run(model: &Model, method: Method, s: StepSettings, h: f64, steps: usize) -> (Vec<Vec<V3>>, Vec<usize>, StepParams) {
    let (x, _, r, p) = engine_run_xv(model, method, s, h, steps);
    (x, r, p)
}

type Run = (Vec<Vec<V3>>, Vec<Vec<V3>>, Vec<usize>, StepParams);

/// As [`engine_run`], with the velocities after each step.
fn engine_run_xv(model: &Model, method: Method, s: StepSettings, h: f64, steps: usize) -> Run {
    let mut sim = CpuSimulator::new(model, method, s).unwrap();
    sim.set_h(h).unwrap();
    let p = StepParams { h: sim.plan().h, alpha: sim.plan().alpha };
    let (mut out, mut vel, mut retries) = (Vec::new(), Vec::new(), Vec::new());
    for step in 0..steps {
        let before = sim.engine().leu_retries();
        sim.engine_mut().step();
        if sim.engine().leu_retries() > before {
            retries.push(step);
        }
        out.push(sim.engine().x.clone());
        vel.push(sim.engine().v.clone());
    }
    (out, vel, retries, p)
}

#[test]
fn leu_holds_its_linearization_for_the_interval() {
    let model = rope();
    let h = planned_h(&model);
    let (euler, _, _) = engine_run(&model, Method::ExplicitEuler, settings(h, 1, 1e9), h, STEPS);
    let mut gaps = Vec::new();
    for every in [1, 4, 8] {
        let s = settings(h, every, 1e9);
        let (leu, retries, p) = engine_run(&model, Method::Leu, s.clone(), h, STEPS);
        let mut sim = CpuSimulator::new(&model, Method::Leu, s).unwrap();
        sim.set_h(h).unwrap();
        assert_eq!(sim.plan().relinearize_every, every);
        assert!(retries.is_empty(), "no divergence expected without a speed limit");
        let (want, _, _) = procedure(&model, p, every, 1e9, STEPS, true);
        // engine against the procedure: the same kernels in the same order; measured 0 (bit for bit)
        let e = leu.iter().zip(&want).map(|(a, b)| max_diff(a, b)).fold(0.0, f64::max);
        let gap = max_diff(&leu[STEPS - 1], &euler[STEPS - 1]);
        eprintln!("h_nl = {every}h: engine vs procedure {e:.2e} m; |x_leu − x_euler| at the end {gap:.3e} m");
        assert!(e < 1e-12, "h_nl = {every}h: the engine left Shinya's procedure by {e:e} m");
        gaps.push(gap);
    }
    // N = 1: eq. 34 at its own linearization point is the exact force (measured 0 m); N = 4, 8: the held
    // K and D show (measured 0.107 m and 0.750 m at the end), more for the longer interval
    assert!(gaps[0] < 1e-12, "relinearizing every step is not explicit Euler: {:e}", gaps[0]);
    assert!(gaps[1] > 1e-2 && gaps[2] > 3.0 * gaps[1], "the interval did not act: {gaps:?}");
}

#[test]
fn leu_rolls_back_a_diverging_step_inside_the_interval() {
    let model = rope();
    let h = planned_h(&model);
    let every = 4;
    // the fastest speed of the free run, and a limit at 70% of it: the swing crosses it
    let (free, _, _) = engine_run(&model, Method::Leu, settings(h, every, 1e9), h, STEPS);
    let speed = free.windows(2).map(|w| max_diff(&w[1], &w[0]) / h).fold(0.0, f64::max);
    let limit = 0.7 * speed;
    let (leu, leu_v, retries, p) = engine_run_xv(&model, Method::Leu, settings(h, every, limit), h, STEPS);
    let (want, retaken, _) = procedure(&model, p, every, limit, STEPS, true);
    eprintln!("fastest speed {speed:.3} m/s, limit {limit:.3}: {} steps retaken: {retries:?}", retries.len());
    assert_eq!(retries, retaken, "the engine retook other steps than the procedure");
    // some steps retaken, and at least one where the linearization was not fresh (mid-interval)
    assert!(!retries.is_empty() && retries.len() < STEPS / 2, "retries {retries:?}");
    assert!(retries.iter().any(|&s| s % every != 0 && !retries.contains(&(s - 1))), "no rollback inside an interval: {retries:?}");
    let e = leu.iter().zip(&want).map(|(a, b)| max_diff(a, b)).fold(0.0, f64::max);
    eprintln!("engine vs procedure {e:.2e} m");
    assert!(e < 1e-12, "the engine left Shinya's procedure by {e:e} m");
    // a retaken step is an explicit Euler step from the state before it (the rollback discarded the
    // linearized one): run explicit Euler one step from there
    let arr = |a: &[V3]| a.iter().map(|q| [q.x, q.y, q.z]).collect::<Vec<_>>();
    let mut worst: f64 = 0.0;
    for &s in retries.iter().filter(|&&s| s > 0) {
        let mut eu = CpuSimulator::new(&model, Method::ExplicitEuler, settings(h, every, 1e9)).unwrap();
        eu.set_h(h).unwrap();
        assert_eq!(eu.plan().alpha, p.alpha);
        eu.write_state(&arr(&leu[s - 1]), &arr(&leu_v[s - 1])).unwrap();
        eu.engine_mut().step();
        worst = worst.max(max_diff(&eu.engine().x, &leu[s]));
    }
    // measured 0 m (the same force, summed in the same order)
    eprintln!("retaken steps vs explicit Euler steps from the state before them: {worst:.2e} m");
    assert!(worst < 1e-12, "a retaken step is not an explicit Euler step: {worst:e} m");
    // and the rollback changed the run (measured 0.092 m from the free run at the end)
    let gap = max_diff(&leu[STEPS - 1], &free[STEPS - 1]);
    eprintln!("|x − x_free| at the end {gap:.3e} m");
    assert!(gap > 1e-2, "the retries changed nothing ({gap:e})");
    // The GPU keeps its schedule of linearizations after a retry where the CPU restarts the interval
    // (a twin difference, reported with issue #18: the decision at a later step can then differ; here the
    // fixed schedule retakes 49 steps, the CPU's 50). Each backend is held to the procedure of its policy.
    let (want_gpu, retaken_gpu, speeds) = procedure(&model, p, every, limit, STEPS, false);
    eprintln!("fixed schedule (the GPU's policy): {} steps retaken", retaken_gpu.len());
    if let Some(ctx) = gpu() {
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::Leu, settings(h, every, limit)).unwrap();
        g.set_h(h).unwrap();
        g.probe().run_steps(STEPS).unwrap();
        let r = g.probe().leu_retries_gpu().unwrap();
        // the check is a threshold: f32 may judge a step whose speed is within its rounding of the limit
        // the other way; count those steps (measured: none within 1e-4 here)
        let close = speeds.iter().filter(|s| (*s / limit - 1.0).abs() < 1e-4).count();
        let xg = g.read_state().unwrap().0;
        let xc: Vec<[f64; 3]> = want_gpu[STEPS - 1].iter().map(|q| [q.x, q.y, q.z]).collect();
        let em = rel_err_motion(&xg, &xc, &model.positions);
        eprintln!(
            "gpu: {r} retries (its policy's procedure {}, {close} close calls), position error relative to the motion {em:.2e}",
            retaken_gpu.len()
        );
        assert!(r.abs_diff(retaken_gpu.len()) <= close, "the GPU retook {r} steps, its procedure {}", retaken_gpu.len());
        // f32 against f64 over 150 steps: measured 4e-7 of the motion
        assert!(em < 1e-5, "gpu vs its procedure: {em:e} of the motion");
    }
}
