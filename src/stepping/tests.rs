//! The stepping policy against a scripted engine: which calls it makes, and when.

use super::*;
use crate::method::StepSettings;

/// An engine that records the policy's calls: k₀ is fixed, a step strains when h exceeds
/// `strain_above`, and `run_steps` reports the speeds and retries it is told to.
#[derive(Default)]
struct Scripted {
    method: Option<Method>,
    settings: StepSettings,
    k0_calls: usize,
    plans: Vec<StepPlan>,
    steps: usize,
    trials: Vec<f64>,
    accepted: usize,
    strain_above: f64,
    speed_exceeded: bool,
    leu_retries: usize,
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
        Ok(StepsReport { speed_exceeded: self.speed_exceeded, leu_retries: self.leu_retries, iterations: steps, ..Default::default() })
    }
    fn try_step(&mut self, h: f64) -> Result<StepsReport> {
        self.trials.push(h);
        Ok(StepsReport { strained: h > self.strain_above, iterations: 1, ..Default::default() })
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
}

#[test]
fn explicit_methods_plan_from_k0_and_take_the_planned_substeps() {
    let mut s = Stepper::drive(Scripted::default()).unwrap();
    assert_eq!(s.engine().k0_calls, 1);
    let p = s.plan();
    // symplectic Euler without drag: h_max = 2/√k₀ = 2 ms; h = h_max/√1.5 rounded down to fill 1/30 s
    assert!((p.h_max - 2.0e-3).abs() < 1e-15, "{p:?}");
    assert_eq!(p.substeps, 21);
    assert_eq!(s.engine().plans.last(), Some(&p), "the engine runs the policy's plan");
    let r = s.step_frame().unwrap();
    assert_eq!((r.substeps, s.engine().steps, s.engine().k0_calls), (21, 21, 1));
}

#[test]
fn a_speed_over_the_limit_replans_and_a_leu_retry_does_too() {
    let mut s = Stepper::drive(Scripted { speed_exceeded: true, ..Default::default() }).unwrap();
    s.step_frame().unwrap();
    assert_eq!(s.engine().k0_calls, 2, "Shinya §5.3: k₀ again after a divergence");
    s.engine_mut().speed_exceeded = false;
    s.step_frame().unwrap();
    assert_eq!(s.engine().k0_calls, 2, "no divergence, no new k₀");

    let mut s = Stepper::drive(Scripted { method: Some(Method::Leu), ..Default::default() }).unwrap();
    s.engine_mut().speed_exceeded = true;
    s.step_frame().unwrap();
    assert_eq!(s.engine().k0_calls, 1, "LEU answers speed with its own rollback, not a re-plan");
    s.engine_mut().leu_retries = 3;
    let r = s.step_frame().unwrap();
    assert_eq!((s.engine().k0_calls, r.leu_retries), (2, 3));
    s.step_frame().unwrap();
    assert_eq!(s.engine().k0_calls, 2, "the same retry count does not re-plan twice");
}

#[test]
fn implicit_methods_start_without_k0_and_get_it_when_switched_to_an_explicit_one() {
    let mut s = Stepper::drive(Scripted { method: Some(Method::ImplicitEuler), ..Default::default() }).unwrap();
    assert_eq!(s.engine().k0_calls, 0);
    assert_eq!(s.plan().substeps, 1);
    s.set_method(Method::Rk4).unwrap();
    assert_eq!(s.engine().k0_calls, 1);
    assert!(s.plan().substeps > 1);
    s.set_method(Method::Midpoint).unwrap();
    assert_eq!(s.engine().k0_calls, 1, "k₀ is kept across switches");
}

#[test]
fn the_adaptive_frame_halves_until_unstrained_and_fills_the_frame() {
    let mut settings = StepSettings { adaptive: true, ..Default::default() };
    settings.frame_dt = 0.04;
    let engine = Scripted { method: Some(Method::ImplicitEuler), settings, strain_above: 0.015, ..Default::default() };
    let mut s = Stepper::drive(engine).unwrap();
    let r = s.step_frame().unwrap();
    // 0.04 and 0.02 strain; then 0.01 twice, doubling to 0.02 (strains), 0.01 twice more
    assert_eq!(s.engine().trials, vec![0.04, 0.02, 0.01, 0.01, 0.02, 0.01, 0.01]);
    assert_eq!((r.substeps, s.engine().accepted, r.iterations), (4, 4, 7));
    assert_eq!(s.step_log().iter().filter(|(_, ok)| !ok).count(), 3);
}

#[test]
fn set_h_keeps_k0_and_steps_once_per_frame() {
    let mut s = Stepper::drive(Scripted::default()).unwrap();
    s.set_h(1e-4).unwrap();
    assert_eq!((s.plan().h, s.plan().substeps, s.engine().k0_calls), (1e-4, 1, 1));
    assert!(s.set_h(-1.0).is_err());
}
