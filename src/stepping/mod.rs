//! The stepping policy, once for both engines: Shinya's plan of the step from k₀ ([`plan`]), the
//! substeps of a frame, Kauppila's adaptive step for implicit Euler ([`adaptive`]), and the re-plan
//! after a divergence (Shinya §5.3), and the divergence guard with its rollback ([`guard`]).
//! [`Stepper`] drives any [`Engine`] through that contract alone; the window, the bench and the tests
//! drive a `Stepper` through [`Simulator`].

pub mod adaptive;
mod engines;
pub mod guard;
mod guarded;
pub mod pipelined;
pub mod plan;

use crate::engine::{Engine, PassTally, StateVectors, StepsReport};
use crate::error::{Error, Result};
use crate::method::{Method, StepPlan, StepSettings};
use adaptive::{AdaptiveStep, Verdict};
use guard::{Divergence, DivergencePolicy};
use guarded::Watch;

pub use engines::{CpuSimulator, GpuSimulator};
pub use pipelined::FrameEvent;

/// What a frame did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameReport {
    /// Steps taken.
    pub substeps: usize,
    /// LEU: divergence retries so far (Shinya §4, step 2.3).
    pub leu_retries: usize,
    /// Implicit Euler, local/global and Newton: solver iterations over the frame's steps (0 for the
    /// explicit methods).
    pub iterations: usize,
    /// Implicit Euler: the final relative residual ‖b − AΔv‖/‖b‖ of the frame's last solve; local/global
    /// and Newton: ‖∇g(x)‖/‖∇g(y)‖ of the last step.
    pub residual: f64,
    /// The divergence the guard found at this frame's check, and what it did (`None`: none found, or
    /// no check this frame).
    pub divergence: Option<Divergence>,
    /// Implicit Euler's adaptive step on the GPU's pipelined frame: steps accepted although they strained
    /// a spring or their solve stopped short, because the frame's recorded trial slots ran out
    /// ([`crate::StepSettings::max_frame_halvings`]); 0 elsewhere.
    pub forced_steps: usize,
}

/// A simulator of one model on one backend. The window, the bench and the tests drive this.
pub trait Simulator {
    /// Advances one frame (`frame_dt`, in `plan().substeps` steps).
    fn step_frame(&mut self) -> Result<FrameReport>;
    /// The step plan.
    fn plan(&self) -> StepPlan;
    /// The current method.
    fn method(&self) -> Method;
    /// Switches the method, keeping positions and velocities.
    fn set_method(&mut self, method: Method) -> Result<()>;
    /// Reads positions and velocities (the GPU copies them back).
    fn read_state(&mut self) -> Result<StateVectors>;
    /// Overwrites positions and velocities.
    fn write_state(&mut self, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()>;
    /// The backend, with the adapter for the GPU.
    fn backend_name(&self) -> String;
    /// Every divergence the guard found so far (policy `report`: at most one, the first; `recover`:
    /// each rollback).
    fn divergences(&self) -> &[Divergence];
    /// Wall time spent in the guard's checks and checkpoints so far (s).
    fn guard_seconds(&self) -> f64;
    /// Strain limiting's passes run so far (`None` without strain limiting); on the GPU a read-back, for
    /// the end of a run.
    fn strain_passes(&mut self) -> Result<Option<PassTally>>;
}

/// The energy a trial step of the adaptive implicit Euler may gain beyond the external forces' work, as a
/// fraction of the model's energy scale ([`StepsReport::energy_gain`]), before it is retaken with h/2:
/// rounding only (the energy of a 512² cloth sums 1.5 million springs).
pub const STEP_ENERGY_SLACK: f64 = 1e-6;

/// Whether `method`'s plan needs k₀: the explicit family and LEU take their step from it (Shinya
/// eq. 27, eq. 33) and their Rayleigh α from that step; the implicit methods step by the frame.
pub fn needs_k0(method: Method) -> bool {
    !method.is_implicit()
}

/// The stepping policy around one engine: the plan, implicit Euler's adaptive step, the divergence
/// guard and the GPU's pipelined reports. The GPU engine is reached only through the calls it
/// forwards, and [`GpuSimulator::probe`] for what benchmarks and tests inspect; the CPU engine also
/// through `engine()` and `engine_mut()` (its state is on the host: reading it waits on nothing).
pub struct Stepper<E> {
    engine: E,
    plan: StepPlan,
    adaptive: AdaptiveStep,
    /// LEU retries as of the last frame (a rise re-plans).
    leu_retries: usize,
    /// The divergence guard's state: frame count, checkpoint, baseline, the step's scale, the log.
    watch: Watch,
    /// The pipelined path's report ring, device checkpoints and epoch (the GPU's
    /// [`GpuSimulator::encode_frame`]; unused on the CPU).
    pipe: pipelined::Pipe,
}

impl<E: Engine> Stepper<E> {
    /// Plans the step for `engine`'s method (k₀ by power iteration only where the plan needs it) and
    /// hands the plan to the engine.
    pub fn drive(engine: E) -> Result<Self> {
        let mut s = Stepper {
            engine,
            plan: StepPlan::default(),
            adaptive: AdaptiveStep::default(),
            leu_retries: 0,
            watch: Watch::default(),
            pipe: pipelined::Pipe::default(),
        };
        let k0 = if needs_k0(s.engine.method()) { s.engine.stiffness_k0()? } else { 0.0 };
        s.apply_plan(k0)?;
        s.check_stable()?;
        Ok(s)
    }

    /// The settings the engine steps with.
    pub fn settings(&self) -> &StepSettings {
        self.engine.settings()
    }

    /// Plans with `k0` for the engine's method and settings (h scaled down by the guard's halvings), and
    /// hands the plan to the engine.
    fn apply_plan(&mut self, k0: f64) -> Result<()> {
        let method = self.engine.method();
        let s = guarded::scaled_settings(self.engine.settings(), method, self.watch.h_scale, self.watch.interval_scale);
        self.plan = plan::plan(method, k0, self.engine.drag(), self.engine.spring_damping(), &s);
        self.adaptive.reset();
        self.engine.set_plan(&self.plan)
    }

    /// Plans that say what they do: an explicit method whose step is above Shinya's h_max is an
    /// [`Error::Unstable`] unless `allow_unstable` is set. Checked when the settings choose the step (at
    /// construction and `set_method`), not by `set_h` (an outright step) nor when a re-plan after a
    /// divergence lowers h_max.
    fn check_stable(&self) -> Result<()> {
        let (method, p) = (self.engine.method(), self.plan);
        if method.is_implicit() || self.engine.settings().allow_unstable || p.h <= p.h_max * (1.0 + 1e-9) {
            return Ok(());
        }
        // the step asked for (a fixed h), else the one planned
        let h = self.engine.settings().fixed_h.map_or(p.h, |h| h * self.watch.h_scale);
        Err(Error::Unstable { method: method.name(), h, h_max: p.h_max, k0: p.k0 })
    }

    /// Recomputes k₀ at the current state and re-plans the step (Shinya §5.3). A k₀ that is not finite
    /// and positive (a state already ruined) keeps the old plan.
    pub fn replan(&mut self) -> Result<()> {
        let k0 = self.engine.stiffness_k0()?;
        if k0.is_finite() && k0 > 0.0 {
            self.apply_plan(k0)?;
        }
        Ok(())
    }

    /// Sets the step h outright (one step per frame of length h, α for it), keeping k₀. Not refused above
    /// h_max: this is the call that studies the stability boundary (the guard still watches the frames).
    pub fn set_h(&mut self, h: f64) -> Result<()> {
        let mut s = self.engine.settings().clone();
        s.fixed_h = Some(h);
        s.frame_dt = h;
        s.validate()?;
        self.engine.set_settings(s)?;
        self.apply_plan(self.plan.k0)
    }

    /// Implicit Euler's adaptive step: every step tried so far, (h, accepted).
    pub fn step_log(&self) -> &[(f64, bool)] {
        self.adaptive.log()
    }

    /// A frame of adaptive implicit Euler steps (Kauppila §3.2.3).
    fn adaptive_frame(&mut self) -> Result<FrameReport> {
        let frame = self.engine.settings().frame_dt;
        let planned = self.plan.h;
        let (mut t, mut steps, mut iterations, mut residual) = (0.0, 0usize, 0usize, 0.0);
        while t < frame * (1.0 - 1e-9) {
            let h = self.adaptive.next_h(planned, frame - t);
            let r = self.engine.try_step(h)?;
            iterations += r.iterations;
            residual = r.residual;
            // a solve that stopped short of `retry_residual` is retaken with h/2 too: the system's
            // condition number falls as h² (κ ≈ 1 + h²k₀), so the same budget then reaches further
            let short = r.residual.is_nan() || r.residual > self.engine.settings().retry_residual;
            // a step that gained energy (where the engine measures it) is retaken with h/2 too: its
            // linearization error shrinks as h²
            let gained = r.energy_gain.is_some_and(|g| g.is_nan() || g > STEP_ENERGY_SLACK);
            if self.adaptive.judge(h, r.strained || short || gained, planned) == Verdict::Retry {
                continue;
            }
            self.engine.accept_trial()?;
            t += h;
            steps += 1;
        }
        Ok(FrameReport { substeps: steps, leu_retries: 0, iterations, residual, divergence: None, forced_steps: 0 })
    }

    /// One frame without the guard; whether a kernel flagged a speed over the limit (the guard then
    /// checks at once).
    fn raw_frame(&mut self) -> Result<(FrameReport, bool)> {
        let method = self.engine.method();
        if method == Method::ImplicitEuler && self.engine.settings().adaptive {
            return Ok((self.adaptive_frame()?, false));
        }
        let substeps = self.plan.substeps;
        let r: StepsReport = self.engine.take_steps(substeps)?;
        let mut replan = r.speed_exceeded && method != Method::Leu;
        if r.leu_retries > self.leu_retries {
            self.leu_retries = r.leu_retries;
            replan = true;
        }
        if replan {
            // Shinya §5.3: recompute k₀ when divergence is detected.
            self.replan()?;
        }
        let report = FrameReport {
            substeps,
            leu_retries: r.leu_retries,
            iterations: r.iterations,
            residual: r.residual,
            divergence: None,
            forced_steps: 0,
        };
        Ok((report, r.speed_exceeded))
    }
}

impl<E: Engine> Simulator for Stepper<E> {
    fn step_frame(&mut self) -> Result<FrameReport> {
        let policy = self.engine.settings().guard.policy;
        if policy == DivergencePolicy::Ignore {
            let (report, _) = self.raw_frame()?;
            self.watch.advance(self.engine.settings().frame_dt);
            return Ok(report);
        }
        self.guarded_frame(policy)
    }

    fn plan(&self) -> StepPlan {
        self.plan
    }

    fn method(&self) -> Method {
        self.engine.method()
    }

    fn set_method(&mut self, method: Method) -> Result<()> {
        let old = self.engine.method();
        self.engine.set_method(method)?;
        // the reports in flight are the old integrator's: forgotten
        self.pipe.forget_in_flight();
        // the new method's k₀ (its power iteration's kernels may be over the device's limits), its plan
        // and its stability: where any fails, the old method comes back
        let switched = (|| -> Result<()> {
            let k0 = if needs_k0(method) && self.plan.k0 <= 0.0 { self.engine.stiffness_k0()? } else { self.plan.k0 };
            self.apply_plan(k0)?;
            self.check_stable()
        })();
        if let Err(e) = switched {
            self.engine.set_method(old)?;
            self.apply_plan(self.plan.k0)?;
            return Err(e);
        }
        Ok(())
    }

    fn read_state(&mut self) -> Result<StateVectors> {
        self.engine.read_state()
    }

    fn write_state(&mut self, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()> {
        self.watch.edited = true;
        self.engine.write_state(x, v)
    }

    fn backend_name(&self) -> String {
        self.engine.backend_name()
    }

    fn divergences(&self) -> &[Divergence] {
        &self.watch.log
    }

    fn guard_seconds(&self) -> f64 {
        self.watch.seconds
    }

    fn strain_passes(&mut self) -> Result<Option<PassTally>> {
        self.engine.strain_passes()
    }
}

#[cfg(test)]
mod tests;
