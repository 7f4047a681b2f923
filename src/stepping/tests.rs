//! The stepping policy against a scripted engine: which calls it makes, and when.

use super::guard::{Action, Cause};
use super::*;
use crate::engine::{Checkpoint, Signals};
use crate::method::{DivergencePolicy, GuardSettings, StepSettings};

/// An engine that records the policy's calls: k₀ is fixed, a step strains when h exceeds
/// `strain_above`, and `run_steps` reports the speeds and retries it is told to. Its "state" is an
/// energy: each step longer than `gain_above` adds `gain` J (an unstable step), and its signals report
/// it with `nan` and `strain` as told; checkpoints save the energy.
#[derive(Default)]
struct Scripted {
    energy: f64,
    gain: f64,
    gain_above: f64,
    nan: bool,
    strain: f64,
    residual: f64,
    read_back: bool,
    signal_calls: usize,
    checkpoints: usize,
    rollbacks: usize,
    method: Option<Method>,
    settings: StepSettings,
    k0_calls: usize,
    plans: Vec<StepPlan>,
    steps: usize,
    trials: Vec<f64>,
    accepted: usize,
    strain_above: f64,
    /// A trial longer than this reports `residual` (a solve that stopped short); shorter ones converge.
    short_above: f64,
    /// Trials longer than this report an energy gain of 1e-3 of the scale, shorter ones none (`None`:
    /// the engine does not measure it).
    trial_gain_above: Option<f64>,
    speed_exceeded: bool,
    leu_retries: usize,
    /// LEU: steps gain `gain` J while the plan re-linearizes less often than every this many steps
    /// (a linearization held too long; `None`: never).
    stale_above: Option<usize>,
    /// A small model for the calls that need one (built when first asked for).
    model: std::sync::OnceLock<crate::reference::model::CpuModel>,
    pinned: Vec<usize>,
    cursor: Option<crate::model::Cursor>,
}

impl Engine for Scripted {
    fn backend_name(&self) -> String {
        "scripted".into()
    }
    fn method(&self) -> Method {
        self.method.unwrap_or(Method::SymplecticEuler)
    }
    fn settings(&self) -> &StepSettings {
        &self.settings
    }
    fn set_settings(&mut self, settings: StepSettings) -> Result<()> {
        self.settings = settings;
        Ok(())
    }
    fn drag(&self) -> f64 {
        0.0
    }
    fn spring_damping(&self) -> f64 {
        0.0
    }
    fn set_method(&mut self, method: Method) -> Result<()> {
        self.method = Some(method);
        Ok(())
    }
    fn stiffness_k0(&mut self) -> Result<f64> {
        self.k0_calls += 1;
        Ok(1.0e6)
    }
    fn set_plan(&mut self, plan: &StepPlan) -> Result<()> {
        self.plans.push(*plan);
        Ok(())
    }
    fn take_steps(&mut self, steps: usize) -> Result<StepsReport> {
        self.steps += steps;
        let stale = |p: &StepPlan| self.stale_above.is_some_and(|k| self.method() == Method::Leu && p.relinearize_every > k);
        if self.plans.last().is_some_and(|p| p.h > self.gain_above || stale(p)) {
            self.energy += self.gain;
        }
        Ok(StepsReport {
            speed_exceeded: self.speed_exceeded,
            leu_retries: self.leu_retries,
            iterations: steps,
            residual: self.residual,
            ..Default::default()
        })
    }
    fn try_step(&mut self, h: f64) -> Result<StepsReport> {
        self.trials.push(h);
        let residual = if h > self.short_above { self.residual } else { 0.0 };
        let energy_gain = self.trial_gain_above.map(|above| if h > above { 1e-3 } else { 0.0 });
        Ok(StepsReport { strained: h > self.strain_above, residual, iterations: 1, energy_gain, ..Default::default() })
    }
    fn accept_trial(&mut self) -> Result<()> {
        self.accepted += 1;
        Ok(())
    }
    fn read_state(&mut self) -> Result<(Vec<[f64; 3]>, Vec<[f64; 3]>)> {
        Ok((Vec::new(), Vec::new()))
    }
    fn write_state(&mut self, _x: &[[f64; 3]], _v: &[[f64; 3]]) -> Result<()> {
        Ok(())
    }
    fn signals(&mut self) -> Result<Signals> {
        self.signal_calls += 1;
        Ok(Signals {
            finite: !self.nan,
            energy: self.energy,
            max_strain: self.strain,
            energy_scale: 100.0,
            external_power: 0.0,
            scripted: false,
        })
    }
    fn signals_read_back(&self) -> bool {
        self.read_back
    }
    fn time(&self) -> f64 {
        0.0
    }
    fn model(&self) -> &crate::reference::model::CpuModel {
        self.model.get_or_init(|| {
            let m = crate::model::curtain(3, None).expect("a 3x3 curtain");
            crate::reference::model::CpuModel::new(&m).expect("laid out")
        })
    }
    fn set_particle(&mut self, i: usize, _x: [f64; 3], _v: [f64; 3], pinned: bool) -> Result<()> {
        self.pinned.retain(|&p| p != i);
        if pinned {
            self.pinned.push(i);
        }
        Ok(())
    }
    fn is_pinned(&self, i: usize) -> bool {
        self.pinned.contains(&i)
    }
    fn set_cursor(&mut self, cursor: Option<crate::model::Cursor>) -> Result<()> {
        self.cursor = cursor;
        Ok(())
    }
    fn cursor(&self) -> Option<crate::model::Cursor> {
        self.cursor
    }
    fn checkpoint(&mut self) -> Result<Checkpoint> {
        self.checkpoints += 1;
        Ok(Checkpoint::Host((vec![[self.energy, 0.0, 0.0]], Vec::new())))
    }
    fn rollback(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        self.rollbacks += 1;
        let Checkpoint::Host((x, _)) = checkpoint else { panic!("a host checkpoint") };
        self.energy = x[0][0];
        Ok(())
    }
}

/// An explicit engine (symplectic Euler, planned h ≈ 1.59 ms) whose steps above `gain_above` add 15 J
/// a frame (the guard's tolerance: 10% of 100 J), under `policy`.
fn unstable_above(gain_above: f64, policy: DivergencePolicy) -> Stepper<Scripted> {
    let settings = StepSettings { guard: GuardSettings { policy, ..Default::default() }, ..Default::default() };
    Stepper::drive(Scripted { settings, gain: 15.0, gain_above, ..Default::default() }).unwrap()
}

#[test]
fn explicit_methods_plan_from_k0_and_take_the_planned_substeps() {
    let mut s = Stepper::drive(Scripted::default()).unwrap();
    assert_eq!(s.engine.k0_calls, 1);
    let p = s.plan();
    // symplectic Euler without drag: h_max = 2/√k₀ = 2 ms; h = h_max/√1.5 rounded down to fill 1/30 s
    assert!((p.h_max - 2.0e-3).abs() < 1e-15, "{p:?}");
    assert_eq!(p.substeps, 21);
    assert_eq!(s.engine.plans.last(), Some(&p), "the engine runs the policy's plan");
    let r = s.step_frame().unwrap();
    assert_eq!((r.substeps, s.engine.steps, s.engine.k0_calls), (21, 21, 1));
}

#[test]
fn a_speed_over_the_limit_replans_and_a_leu_retry_does_too() {
    let mut s = Stepper::drive(Scripted { speed_exceeded: true, ..Default::default() }).unwrap();
    s.step_frame().unwrap();
    assert_eq!(s.engine.k0_calls, 2, "Shinya §5.3: k₀ again after a divergence");
    s.engine.speed_exceeded = false;
    s.step_frame().unwrap();
    assert_eq!(s.engine.k0_calls, 2, "no divergence, no new k₀");

    let mut s = Stepper::drive(Scripted { method: Some(Method::Leu), ..Default::default() }).unwrap();
    s.engine.speed_exceeded = true;
    s.step_frame().unwrap();
    assert_eq!(s.engine.k0_calls, 1, "LEU answers speed with its own rollback, not a re-plan");
    s.engine.leu_retries = 3;
    let r = s.step_frame().unwrap();
    assert_eq!((s.engine.k0_calls, r.leu_retries), (2, 3));
    s.step_frame().unwrap();
    assert_eq!(s.engine.k0_calls, 2, "the same retry count does not re-plan twice");
}

#[test]
fn implicit_methods_start_without_k0_and_get_it_when_switched_to_an_explicit_one() {
    let mut s = Stepper::drive(Scripted { method: Some(Method::ImplicitEuler), ..Default::default() }).unwrap();
    assert_eq!(s.engine.k0_calls, 0);
    assert_eq!(s.plan().substeps, 1);
    s.set_method(Method::Rk4).unwrap();
    assert_eq!(s.engine.k0_calls, 1);
    assert!(s.plan().substeps > 1);
    s.set_method(Method::Midpoint).unwrap();
    assert_eq!(s.engine.k0_calls, 1, "k₀ is kept across switches");
}

#[test]
fn the_adaptive_frame_halves_until_unstrained_and_fills_the_frame() {
    let mut settings = StepSettings { adaptive: true, ..Default::default() };
    settings.frame_dt = 0.04;
    let engine = Scripted { method: Some(Method::ImplicitEuler), settings, strain_above: 0.015, ..Default::default() };
    let mut s = Stepper::drive(engine).unwrap();
    let r = s.step_frame().unwrap();
    // 0.04 and 0.02 strain; then 0.01 twice, doubling to 0.02 (strains), 0.01 twice more
    assert_eq!(s.engine.trials, vec![0.04, 0.02, 0.01, 0.01, 0.02, 0.01, 0.01]);
    assert_eq!((r.substeps, s.engine.accepted, r.iterations), (4, 4, 7));
    assert_eq!(s.step_log().iter().filter(|(_, ok)| !ok).count(), 3);
}

#[test]
fn the_adaptive_frame_retakes_a_solve_that_stopped_short() {
    // on by default: trials above 0.015 s end their CG at a relative residual of 0.5, above the default
    // retry_residual (0.1); none strains
    let settings = StepSettings { frame_dt: 0.04, ..Default::default() };
    assert!(settings.adaptive);
    let engine = Scripted {
        method: Some(Method::ImplicitEuler),
        settings,
        strain_above: f64::INFINITY,
        short_above: 0.015,
        residual: 0.5,
        ..Default::default()
    };
    let mut s = Stepper::drive(engine).unwrap();
    let r = s.step_frame().unwrap();
    assert_eq!(s.engine.trials, vec![0.04, 0.02, 0.01, 0.01, 0.02, 0.01, 0.01]);
    assert_eq!((r.substeps, r.residual), (4, 0.0), "every accepted step converged");
    // a residual at the limit is accepted
    let settings = StepSettings { frame_dt: 0.04, retry_residual: 0.5, ..Default::default() };
    let engine =
        Scripted { method: Some(Method::ImplicitEuler), settings, strain_above: f64::INFINITY, residual: 0.5, ..Default::default() };
    let mut s = Stepper::drive(engine).unwrap();
    s.step_frame().unwrap();
    assert_eq!(s.engine.trials, vec![0.04]);
}

#[test]
fn the_adaptive_frame_retakes_a_step_that_gained_energy() {
    // trials above 0.015 s gain 1e-3 of the energy scale (a poor linearization); none strains or stops short
    let settings = StepSettings { frame_dt: 0.04, ..Default::default() };
    let engine = Scripted {
        method: Some(Method::ImplicitEuler),
        settings,
        strain_above: f64::INFINITY,
        trial_gain_above: Some(0.015),
        ..Default::default()
    };
    let mut s = Stepper::drive(engine).unwrap();
    let r = s.step_frame().unwrap();
    assert_eq!(s.engine.trials, vec![0.04, 0.02, 0.01, 0.01, 0.02, 0.01, 0.01]);
    assert_eq!(r.substeps, 4);
    // an engine that does not measure the energy (the GPU) is not judged on it
    let settings = StepSettings { frame_dt: 0.04, ..Default::default() };
    let engine = Scripted { method: Some(Method::ImplicitEuler), settings, strain_above: f64::INFINITY, ..Default::default() };
    let mut s = Stepper::drive(engine).unwrap();
    s.step_frame().unwrap();
    assert_eq!(s.engine.trials, vec![0.04]);
}

#[test]
fn set_h_keeps_k0_and_steps_once_per_frame() {
    let mut s = Stepper::drive(Scripted::default()).unwrap();
    s.set_h(1e-4).unwrap();
    assert_eq!((s.plan().h, s.plan().substeps, s.engine.k0_calls), (1e-4, 1, 1));
    assert!(s.set_h(-1.0).is_err());
}

#[test]
fn report_records_the_first_divergence_with_frame_and_cause_and_leaves_the_state() {
    // stable at first: the gain is switched on at frame 3
    let mut s = unstable_above(1.0, DivergencePolicy::Report);
    for f in 0..3 {
        assert_eq!(s.step_frame().unwrap().divergence, None, "frame {f}");
    }
    s.engine.gain_above = 0.0;
    let r = s.step_frame().unwrap();
    let d = r.divergence.expect("a divergence at frame 3");
    assert_eq!(d.frame, 3);
    assert!(matches!(d.cause, Cause::Energy { gained, .. } if gained == 15.0), "{d:?}");
    assert_eq!(d.action, Action::Reported);
    assert_eq!((s.engine.rollbacks, s.engine.checkpoints, s.watch.h_scale), (0, 0, 1.0), "report does not intervene");
    let calls = s.engine.signal_calls;
    for _ in 0..3 {
        assert_eq!(s.step_frame().unwrap().divergence, None);
    }
    assert_eq!(s.engine.signal_calls, calls, "after the report no more checks");
    assert_eq!(s.divergences(), &[d]);
    assert_eq!(s.engine.energy, 60.0, "the state went on diverging");
}

#[test]
fn recover_rolls_back_and_halves_h_until_the_step_is_stable() {
    // planned h = (1/30)/21 ≈ 1.59 ms; steps above 0.5 ms gain energy: two halvings (0.81 ms, then 0.41 ms)
    let mut s = unstable_above(0.5e-3, DivergencePolicy::Recover);
    let (h0, target) = (s.plan().h, s.plan().h_max / crate::method::F_SAFE.sqrt());
    let r = s.step_frame().unwrap();
    let d = r.divergence.expect("frame 0 diverges");
    assert_eq!((d.frame, d.cause.kind()), (0, "energy"));
    let Action::RolledBack { to_frame, h, leu_interval: None } = d.action else { panic!("{d:?}") };
    assert_eq!(to_frame, 0);
    // the target step halves; the frame is then filled by whole steps no longer than it
    assert!(h <= 0.5 * target && h > 0.45 * h0, "h {h} after halving {h0} (target {target})");
    assert_eq!((s.engine.energy, s.frames()), (0.0, 0), "rolled back to the checkpoint");
    let d2 = s.step_frame().unwrap().divergence.expect("0.81 ms still gains");
    assert!(matches!(d2.action, Action::RolledBack { h, .. } if h < 0.5e-3));
    for f in 0..5 {
        assert_eq!(s.step_frame().unwrap().divergence, None, "frame {f} at the halved step");
    }
    assert_eq!((s.engine.rollbacks, s.watch.h_scale, s.frames(), s.engine.energy), (2, 0.25, 5, 0.0));
    assert!(s.plan().h < 0.5e-3 && s.plan().substeps >= 4 * 21 - 2, "{:?}", s.plan());
    assert_eq!(s.divergences().len(), 2);
}

/// LEU (planned h ≈ 1.59 ms) with a 10 ms re-linearization interval (every 6 steps), whose steps gain
/// energy while it re-linearizes less often than every 2 steps: the rollbacks halve the interval (5 ms:
/// every 3 steps; 2.5 ms: every 2), not h. Then, with the interval at one step, a step that is itself
/// unstable is halved as for the other methods.
#[test]
fn recover_halves_leus_relinearization_interval_before_h() {
    let mut settings =
        StepSettings { guard: GuardSettings { policy: DivergencePolicy::Recover, ..Default::default() }, ..Default::default() };
    settings.leu_interval = 10e-3;
    let engine =
        Scripted { settings, gain: 15.0, gain_above: f64::INFINITY, method: Some(Method::Leu), stale_above: Some(2), ..Default::default() };
    let mut s = Stepper::drive(engine).unwrap();
    let (h0, substeps) = (s.plan().h, s.plan().substeps);
    assert_eq!((substeps, s.plan().relinearize_every), (21, 6));
    for (every, interval) in [(3, 5e-3), (2, 2.5e-3)] {
        let d = s.step_frame().unwrap().divergence.expect("a stale linearization gains energy");
        let Action::RolledBack { to_frame: 0, h, leu_interval: Some(t) } = d.action else { panic!("{d:?}") };
        assert_eq!((h, t, s.plan().relinearize_every, s.plan().substeps), (h0, interval, every, substeps));
        assert!(d.to_string().ends_with(&format!("LEU's re-linearization interval halved to {interval:.4e} s")), "{d}");
    }
    for f in 0..3 {
        assert_eq!(s.step_frame().unwrap().divergence, None, "frame {f}");
    }
    assert_eq!((s.watch.h_scale, s.frames(), s.engine.energy, s.engine.rollbacks), (1.0, 3, 0.0, 2));

    // re-linearized every step already: h halves
    let settings = StepSettings { guard: GuardSettings { policy: DivergencePolicy::Recover, ..Default::default() }, ..Default::default() };
    let engine =
        Scripted { settings, gain: 15.0, gain_above: 1.0e-3, method: Some(Method::Leu), stale_above: Some(2), ..Default::default() };
    let mut s = Stepper::drive(engine).unwrap();
    assert_eq!(s.plan().relinearize_every, 1);
    let d = s.step_frame().unwrap().divergence.expect("the step gains energy");
    assert!(matches!(d.action, Action::RolledBack { h, leu_interval: None, .. } if h < 1.0e-3), "{d:?}");
    assert_eq!((s.watch.h_scale, s.step_frame().unwrap().divergence), (0.5, None));
}

#[test]
fn recover_gives_up_with_an_error_after_max_halvings() {
    let mut s = unstable_above(0.0, DivergencePolicy::Recover);
    let mut settings = s.engine.settings().clone();
    settings.guard.max_halvings = 3;
    s.engine.settings = settings;
    for _ in 0..3 {
        assert!(s.step_frame().unwrap().divergence.is_some());
    }
    let e = s.step_frame().unwrap_err();
    assert!(matches!(e, Error::Diverged { frame: 0, .. }), "{e}");
    assert!(e.to_string().contains("after 3 rollbacks"), "{e}");
}

#[test]
fn ignore_checks_nothing_and_costs_nothing() {
    let mut s = unstable_above(0.0, DivergencePolicy::Ignore);
    s.engine.nan = true;
    for _ in 0..4 {
        assert_eq!(s.step_frame().unwrap().divergence, None);
    }
    assert_eq!((s.engine.signal_calls, s.engine.checkpoints, s.engine.rollbacks), (0, 0, 0));
    assert!(s.divergences().is_empty());
}

#[test]
fn non_finite_strain_and_a_stalled_solver_are_reported_by_cause() {
    let mut s = unstable_above(1.0, DivergencePolicy::Report);
    s.engine.nan = true;
    assert_eq!(s.step_frame().unwrap().divergence.map(|d| d.cause), Some(Cause::NonFinite));
    let mut s = unstable_above(1.0, DivergencePolicy::Report);
    s.engine.strain = 3.0;
    assert_eq!(s.step_frame().unwrap().divergence.map(|d| d.cause), Some(Cause::Strain { strain: 3.0, limit: 2.0 }));
    // implicit Euler's CG at residual 0.9 (tolerance 1e-6, the guard's limit 0.5), planned steps as they
    // come (the adaptive step would retake them)
    let settings = StepSettings {
        adaptive: false,
        guard: GuardSettings { policy: DivergencePolicy::Report, ..Default::default() },
        ..Default::default()
    };
    let mut s = Stepper::drive(Scripted { method: Some(Method::ImplicitEuler), settings, residual: 0.9, ..Default::default() }).unwrap();
    assert_eq!(s.step_frame().unwrap().divergence.map(|d| d.cause), Some(Cause::Solver { residual: 0.9, limit: 0.5 }));
    // the explicit methods have no solver: a residual they report is not judged
    let mut s = unstable_above(1.0, DivergencePolicy::Report);
    s.engine.residual = 0.9;
    assert_eq!(s.step_frame().unwrap().divergence, None);
}

#[test]
fn a_device_engine_is_checked_every_few_frames_and_at_once_on_a_speed_flag() {
    let settings = StepSettings { guard: GuardSettings { policy: DivergencePolicy::Recover, ..Default::default() }, ..Default::default() };
    let mut s = Stepper::drive(Scripted { settings, read_back: true, ..Default::default() }).unwrap();
    assert_eq!(s.guard_every(), guarded::DEVICE_CHECK_EVERY);
    for _ in 0..2 * guarded::DEVICE_CHECK_EVERY {
        s.step_frame().unwrap();
    }
    // the baseline before the first frame, then one check and one checkpoint per window
    assert_eq!((s.engine.signal_calls, s.engine.checkpoints), (3, 2));
    s.engine.speed_exceeded = true;
    s.step_frame().unwrap();
    assert_eq!(s.engine.signal_calls, 4, "a kernel's flag brings the check forward");
}

#[test]
fn an_explicit_step_above_h_max_is_refused_unless_allowed() {
    // symplectic Euler, k0 = 1e6: h_max = 2 ms; h = 3 ms asked for (12 steps of 2.78 ms fill the frame)
    let settings = StepSettings { fixed_h: Some(3e-3), ..Default::default() };
    let e = Stepper::drive(Scripted { settings: settings.clone(), ..Default::default() }).err().expect("refused");
    let msg = e.to_string();
    assert!(matches!(e, Error::Unstable { .. }), "{msg}");
    for needle in ["h = 3.0000e-3", "h_max = 2.0000e-3", "--allow-unstable", "symplectic-euler"] {
        assert!(msg.contains(needle), "'{msg}' lacks {needle}");
    }
    let allowed = StepSettings { allow_unstable: true, ..settings };
    assert!(Stepper::drive(Scripted { settings: allowed, ..Default::default() }).is_ok());
    // a switch to a method whose plan is above its h_max is refused and keeps the method (RK4's bound is
    // √8.75/√k₀ = 2.96 ms, explicit Euler's 2 ms)
    let settings = StepSettings { fixed_h: Some(2.5e-3), ..Default::default() };
    let mut s = Stepper::drive(Scripted { settings, method: Some(Method::Rk4), ..Default::default() }).unwrap();
    let before = s.plan();
    assert!(matches!(s.set_method(Method::ExplicitEuler), Err(Error::Unstable { .. })));
    assert_eq!((s.method(), s.plan()), (Method::Rk4, before));
    // set_h is an outright step, not refused (the stability boundary is studied through it)
    let mut s = Stepper::drive(Scripted::default()).unwrap();
    s.set_h(5e-3).unwrap();
    assert_eq!(s.plan().h, 5e-3);
}
