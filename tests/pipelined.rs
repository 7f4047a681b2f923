//! The pipelined frame path (`GpuSimulator::encode_frame` + `poll_reports`): frames recorded into the
//! host's encoder, one host submit a frame, reports a frame late, and the divergence guard judging them
//! without the engine ever waiting on the device or submitting work of its own.
//!
//! - the guard's signals reduced on the GPU (`shaders/signals.wgsl`) against their f64 twin
//!   (`reference::signals`) on the same state, and the twin's energy against `forces::energy`;
//! - explicit Euler above its stable step, 30 frames: under `recover` the guard sees the divergence,
//!   rolls back to a checkpoint kept on the GPU with h halved, and the run ends finite; under `report`
//!   it sees it once; neither path waits (the engine's wait and submit counters stay at zero until the
//!   final flush).

mod common;

use common::gpu;
use springsim::engine::Signals;
use springsim::method::{DivergencePolicy, GuardSettings};
use springsim::reference::model::{CpuModel, V3};
use springsim::reference::signals::signal_sums;
use springsim::stepping::guard::Action;
use springsim::{CpuSimulator, FrameEvent, GpuSimulator, Method, Simulator, StepSettings};

fn moving_cloth(n: usize) -> springsim::Model {
    let mut m = springsim::model::curtain(n, None).unwrap();
    for (i, v) in m.velocities.iter_mut().enumerate() {
        *v = [0.3 * common::hash01(3 * i as u64), 0.3 * common::hash01(3 * i as u64 + 1), 0.3 * common::hash01(3 * i as u64 + 2)];
    }
    m
}

#[test]
fn twin_signals_are_the_guards_signals_up_to_the_pinned_constants() {
    // no pinned particle: the twin's energy is forces::energy's, and its strain max_strain's
    let mut model = moving_cloth(9);
    model.pinned.iter_mut().for_each(|p| *p = false);
    let cm = CpuModel::new(&model).unwrap();
    let x: Vec<V3> = model.positions.iter().map(|p| V3::from(*p)).collect();
    let v: Vec<V3> = model.velocities.iter().map(|p| V3::from(*p)).collect();
    let full = Signals::of(&cm, &x, &v);
    let sums = Signals::from_sums(&cm, &signal_sums(&cm, &x, &v));
    assert!((sums.energy - full.energy).abs() <= 1e-12 * full.energy_scale, "{} vs {}", sums.energy, full.energy);
    assert!((sums.max_strain - full.max_strain).abs() <= 1e-12, "{} vs {}", sums.max_strain, full.max_strain);
    assert!((sums.energy_scale - full.energy_scale).abs() <= 1e-9 * full.energy_scale);
    assert!(sums.finite && full.finite);
    let mut bad = x.clone();
    bad[3].y = f64::NAN;
    assert!(!Signals::from_sums(&cm, &signal_sums(&cm, &bad, &v)).finite, "a NaN coordinate is not finite");
}

#[test]
fn gpu_signals_match_their_twin_on_the_same_state() {
    let Some(ctx) = gpu() else { return };
    let model = moving_cloth(21);
    let settings = StepSettings { guard: GuardSettings { policy: DivergencePolicy::Report, ..Default::default() }, ..Default::default() };
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, settings).unwrap();
    let events = sim.run_frames(3).unwrap();
    let last = events.iter().rev().find_map(|e| match e {
        FrameEvent::Report { frame, signals, .. } => Some((*frame, signals.expect("the guard checks every frame"))),
        _ => None,
    });
    let (frame, gpu_signals) = last.expect("three reports");
    assert_eq!(frame, 2);
    let (x, v) = springsim::Simulator::read_state(&mut sim).unwrap();
    let cm = CpuModel::new(&model).unwrap();
    let x: Vec<V3> = x.into_iter().map(V3::from).collect();
    let v: Vec<V3> = v.into_iter().map(V3::from).collect();
    let twin = Signals::from_sums(&cm, &signal_sums(&cm, &x, &v));
    eprintln!("gpu {gpu_signals:?}\ntwin {twin:?}");
    let rel = |a: f64, b: f64, scale: f64| (a - b).abs() / scale.max(1e-30);
    assert!(gpu_signals.finite);
    assert!(rel(gpu_signals.energy, twin.energy, twin.energy_scale) < 1e-5, "energy");
    assert!(rel(gpu_signals.energy_scale, twin.energy_scale, twin.energy_scale) < 1e-5, "energy scale");
    assert!(rel(gpu_signals.max_strain, twin.max_strain, twin.max_strain) < 1e-3, "strain");
    assert!(twin.max_strain > 1e-4, "the cloth is strained ({})", twin.max_strain);
}

/// Explicit Euler on the 21² curtain at 4× its stable step, under `policy`: 30 frames through
/// `encode_frame`, one host submit each, and `poll_reports` after it. Returns the events, the engine's
/// waits and submits over the 30 frames, the frames stepped (a rollback takes the count back) and the
/// state after the final flush.
fn unstable_run(policy: DivergencePolicy) -> (Vec<FrameEvent>, (u64, u64), usize, Vec<[f64; 3]>) {
    let ctx = gpu().expect("checked by the caller");
    let model = springsim::model::curtain(21, None).unwrap();
    let settings = StepSettings {
        substep_scale: 4.0,
        allow_unstable: true,
        guard: GuardSettings { policy, ..Default::default() },
        ..Default::default()
    };
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::ExplicitEuler, settings).unwrap();
    let before = sim.probe().cost();
    let mut events = Vec::new();
    for _ in 0..30 {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        sim.encode_frame(&mut encoder).unwrap();
        ctx.queue.submit([encoder.finish()]);
        events.extend(sim.poll_reports().unwrap());
    }
    let during = sim.probe().cost().since(&before);
    events.extend(sim.flush_reports().unwrap());
    let (x, _) = springsim::Simulator::read_state(&mut sim).unwrap();
    (events, (during.waits, during.submits), sim.frames(), x)
}

#[test]
fn explicit_euler_above_its_stable_step_is_rolled_back_on_the_gpu_without_a_wait() {
    if gpu().is_none() {
        return;
    }
    let (events, (waits, submits), frames, x) = unstable_run(DivergencePolicy::Recover);
    let rollbacks: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            FrameEvent::Diverged(d) => Some(*d),
            _ => None,
        })
        .collect();
    for d in &rollbacks {
        eprintln!("{d}");
    }
    assert_eq!((waits, submits), (0, 0), "the engine waited or submitted on the frame path");
    assert!(!rollbacks.is_empty(), "no divergence seen");
    assert!(rollbacks.iter().all(|d| matches!(d.action, Action::RolledBack { .. })), "{rollbacks:?}");
    assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())), "the run did not end finite");
    // the frames recorded after a diverged one are forgotten: the reports after the last rollback run
    // on to the last frame stepped
    let last = events.iter().rev().find_map(|e| match e {
        FrameEvent::Report { frame, .. } => Some(*frame),
        _ => None,
    });
    assert_eq!(last, Some(frames - 1), "the last report is not the last frame's ({frames} frames)");
    assert!(frames < 30, "a rollback takes the frame count back");
}

#[test]
fn explicit_euler_above_its_stable_step_is_reported_once_without_a_wait() {
    if gpu().is_none() {
        return;
    }
    let (events, (waits, submits), frames, _) = unstable_run(DivergencePolicy::Report);
    assert_eq!(frames, 30);
    let diverged: Vec<_> = events.iter().filter(|e| matches!(e, FrameEvent::Diverged(_))).collect();
    assert_eq!((waits, submits), (0, 0), "the engine waited or submitted on the frame path");
    assert_eq!(diverged.len(), 1, "{diverged:?}");
    assert!(matches!(diverged[0], FrameEvent::Diverged(d) if d.action == Action::Reported));
}

#[test]
fn a_method_switch_with_frames_in_flight_forgets_their_reports() {
    let Some(ctx) = gpu() else { return };
    let model = moving_cloth(21);
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, StepSettings::default()).unwrap();
    for _ in 0..3 {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        sim.encode_frame(&mut encoder).unwrap();
        ctx.queue.submit([encoder.finish()]);
    }
    // the explicit frames' report words (the speed flags) would read as the PCG's status words
    springsim::Simulator::set_method(&mut sim, Method::ImplicitEuler).unwrap();
    let events = sim.flush_reports().unwrap();
    assert!(events.is_empty(), "the old integrator's reports were judged: {events:?}");
    let events = sim.run_frames(2).unwrap();
    let reports = events.iter().filter(|e| matches!(e, FrameEvent::Report { .. })).count();
    assert_eq!(reports, 2, "{events:?}");
    assert!(!events.iter().any(|e| matches!(e, FrameEvent::Diverged(_))), "{events:?}");
}

#[test]
fn frames_of_set_steps_run_those_steps_as_the_cpu_twin_does() {
    // the window's single step: frames of one step through encode_frame, reported and timed as such
    let Some(ctx) = gpu() else { return };
    let model = moving_cloth(21);
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, StepSettings::default()).unwrap();
    let mut cpu = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default()).unwrap();
    let (x0, _) = sim.read_state().unwrap();
    let h = sim.plan().h;
    assert!(sim.plan().substeps > 1, "a frame of one step would not tell them apart");
    sim.set_frame_steps(Some(1));
    cpu.set_frame_steps(Some(1));
    let events = sim.run_frames(3).unwrap();
    let steps: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            FrameEvent::Report { report, .. } => Some(report.substeps),
            _ => None,
        })
        .collect();
    assert_eq!(steps, vec![1, 1, 1], "{events:?}");
    assert!((sim.time() - 3.0 * h).abs() < 1e-12 * h.max(1.0), "t = {} after three steps of {h}", sim.time());
    assert_eq!(sim.frames(), 3);
    for _ in 0..3 {
        assert_eq!(cpu.step_frame().unwrap().substeps, 1);
    }
    let (xg, _) = sim.read_state().unwrap();
    let (xc, _) = cpu.read_state().unwrap();
    let e = common::rel_err_motion(&xg, &xc, &x0);
    eprintln!("three single steps: ‖x_gpu − x_cpu‖/‖x_cpu − x0‖ = {e:.2e}");
    assert!(e < 1e-3, "{e:.3e} of the motion");
    // whole frames again
    sim.set_frame_steps(None);
    let events = sim.run_frames(1).unwrap();
    let substeps = events.iter().find_map(|e| match e {
        FrameEvent::Report { report, .. } => Some(report.substeps),
        _ => None,
    });
    assert_eq!(substeps, Some(sim.plan().substeps));
}

#[test]
fn frames_recorded_past_the_report_ring_are_told_as_unreported() {
    // a host that records frames without submitting them: past the ring's slots a frame records no
    // report, and the next poll says which
    let Some(ctx) = gpu() else { return };
    let model = moving_cloth(9);
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, StepSettings::default()).unwrap();
    let slots = springsim::gpu::reports::MAX_SLOTS;
    let mut commands = Vec::new();
    for _ in 0..slots + 2 {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        sim.encode_frame(&mut encoder).unwrap();
        commands.push(encoder.finish());
    }
    assert_eq!(sim.reports_in_flight(), slots);
    ctx.queue.submit(commands);
    let events = sim.flush_reports().unwrap();
    let unreported: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            FrameEvent::Unreported { frame } => Some(*frame),
            _ => None,
        })
        .collect();
    assert_eq!(unreported, vec![slots, slots + 1], "{events:?}");
    let reports = events.iter().filter(|e| matches!(e, FrameEvent::Report { .. })).count();
    assert_eq!(reports, slots, "{events:?}");
    assert_eq!(sim.reports_in_flight(), 0);
}

#[test]
fn twin_step_energy_is_the_energys_change() {
    // the adaptive step's energy check: the rows' differenced terms sum to forces::energy's change (the
    // pinned particles do not move, so their terms cancel), the positive energy and m|v| are the start's
    let model = moving_cloth(9);
    let cm = CpuModel::new(&model).unwrap();
    let x0: Vec<V3> = model.positions.iter().map(|p| V3::from(*p)).collect();
    // pinned particles at rest, as the engines keep them
    let v0: Vec<V3> =
        model.velocities.iter().enumerate().map(|(i, p)| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { V3::from(*p) }).collect();
    let moves = |i: usize, k: u64| if cm.inv_mass[i] == 0.0 { 0.0 } else { 0.01 * (common::hash01(7 * i as u64 + k) - 0.5) };
    let x1: Vec<V3> = x0.iter().enumerate().map(|(i, p)| p + V3::new(moves(i, 1), moves(i, 2), moves(i, 3))).collect();
    let v1: Vec<V3> = v0.iter().enumerate().map(|(i, p)| if cm.inv_mass[i] == 0.0 { *p } else { p * 0.9 }).collect();
    let e = springsim::reference::signals::step_energy(&cm, &x0, &v0, &x1, &v1);
    let change = springsim::reference::forces::energy(&cm, &x1, &v1) - springsim::reference::forces::energy(&cm, &x0, &v0);
    let start = Signals::of(&cm, &x0, &v0);
    assert!((e.change - change).abs() <= 1e-12 * start.energy_scale, "{} vs {change}", e.change);
    assert!(!e.non_finite);
    let h = 1e-3;
    let gain = e.gain(&cm, h);
    let plain = (change - start.external_power * h) / start.energy_scale;
    assert!((gain - plain).abs() <= 1e-12, "{gain} vs {plain}");
    let mut bad = v1.clone();
    bad[5].x = f64::NAN;
    assert!(springsim::reference::signals::step_energy(&cm, &x0, &v0, &x1, &bad).gain(&cm, h).is_nan(), "a NaN trial gained");
}

#[test]
fn gpu_step_energy_matches_its_twin_on_the_same_trial() {
    use springsim::engine::Engine;
    let Some(ctx) = gpu() else { return };
    let model = moving_cloth(15);
    let settings = StepSettings { adaptive: true, ..StepSettings::default() };
    let plan = CpuSimulator::new(&model, Method::ImplicitEuler, settings.clone()).unwrap().plan();
    let mut e = springsim::gpu::GpuEngine::new(&ctx.device, &ctx.queue, &model, Method::ImplicitEuler, settings).unwrap();
    e.set_plan(&plan).unwrap();
    let (x0, v0) = e.read_state().unwrap();
    let r = e.try_step(plan.h).unwrap();
    let gpu = e.probe().step_energy().unwrap().expect("a trial ran");
    e.accept_trial().unwrap();
    let (x1, v1) = e.read_state().unwrap();
    let cm = CpuModel::new(&model).unwrap();
    let v3 = |a: &[[f64; 3]]| a.iter().map(|p| V3::from(*p)).collect::<Vec<_>>();
    let twin = springsim::reference::signals::step_energy(&cm, &v3(&x0), &v3(&v0), &v3(&x1), &v3(&v1));
    let scale = Signals::of(&cm, &v3(&x0), &v3(&v0)).energy_scale;
    eprintln!("trial of {:.4} s: change {:.6e} J gpu, {:.6e} J twin (scale {scale:.3e} J)", plan.h, gpu.change, twin.change);
    assert!((gpu.change - twin.change).abs() <= 1e-6 * scale, "change {} vs {}", gpu.change, twin.change);
    assert!(
        (gpu.positive - twin.positive).abs() <= 1e-5 * twin.positive.abs().max(1e-12),
        "positive {} vs {}",
        gpu.positive,
        twin.positive
    );
    assert!((gpu.momentum_norm - twin.momentum_norm).abs() <= 1e-5 * twin.momentum_norm.max(1e-12));
    assert!((gpu.hi - twin.hi).norm() <= 1e-6 && (gpu.lo - twin.lo).norm() <= 1e-6);
    assert!(!gpu.non_finite);
    let (g, t) = (r.energy_gain.expect("judged: nothing moves along a path"), twin.gain(&cm, plan.h));
    assert!((g - t).abs() <= 1e-6, "gain {g:e} gpu, {t:e} twin");
}
