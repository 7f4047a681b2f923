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
use crate::model::Cursor;
use crate::reference::model::CpuModel;
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
    /// Advances one frame (`frame_dt`, in `plan().substeps` steps; see [`Stepper::set_frame_steps`]),
    /// under the divergence guard; blocking (on the GPU it submits and waits: the host's loop uses
    /// [`GpuSimulator::encode_frame`]).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::ImplicitEuler, StepSettings::default())?;
    /// let report = sim.step_frame()?;
    /// assert!(report.substeps >= 1 && report.iterations > 0 && report.divergence.is_none());
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn step_frame(&mut self) -> Result<FrameReport>;
    /// The step plan: h, the steps a frame, k₀, the stable bound h_max, Rayleigh α.
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// let p = sim.plan();
    /// assert!(p.h <= p.h_max && p.k0 > 0.0);
    /// assert!((p.h * p.substeps as f64 - 1.0 / 30.0).abs() < 1e-12); // the steps fill a frame
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn plan(&self) -> StepPlan;
    /// The current method.
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let sim = CpuSimulator::new(&model, Method::Rk4, StepSettings::default())?;
    /// assert_eq!(sim.method(), Method::Rk4);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn method(&self) -> Method;
    /// Switches the method, keeping positions and velocities, and plans its step (an explicit method
    /// whose step would be above its stable bound is refused, and the old method stays).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// sim.step_frame()?;
    /// let before = sim.read_state()?;
    /// sim.set_method(Method::LocalGlobal)?;
    /// assert_eq!(sim.read_state()?, before);
    /// assert_eq!(sim.plan().substeps, 1); // local/global: one step a frame
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn set_method(&mut self, method: Method) -> Result<()>;
    /// Reads positions and velocities, f64 (the GPU copies them back: a wait, not for a frame path).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// let (x, v) = sim.read_state()?;
    /// assert_eq!((x.len(), v.len()), (81, 81));
    /// assert_eq!(x, model.positions);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn read_state(&mut self) -> Result<StateVectors>;
    /// Overwrites positions and velocities (pinned particles keep zero velocity); told to the guard.
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// let (x, mut v) = sim.read_state()?;
    /// v[40] = [0.0, 0.0, 1.0]; // a push
    /// sim.write_state(&x, &v)?;
    /// assert_eq!(sim.read_state()?.1[40], [0.0, 0.0, 1.0]);
    /// assert!(sim.write_state(&x[..3], &v[..3]).is_err()); // one line naming the lengths
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn write_state(&mut self, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()>;
    /// The backend, with the adapter for the GPU (`"cpu (f64)"`, `"gpu: llvmpipe (…) (Vulkan, Cpu)"`).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// assert_eq!(sim.backend_name(), "cpu (f64)");
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn backend_name(&self) -> String;
    /// Every divergence the guard found so far (policy `report`: at most one, the first; `recover`:
    /// each rollback).
    /// ```
    /// use springsim::method::{DivergencePolicy, GuardSettings};
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let guard = GuardSettings { policy: DivergencePolicy::Report, ..Default::default() };
    /// let mut sim = CpuSimulator::new(&model, Method::ExplicitEuler, StepSettings { guard, ..Default::default() })?;
    /// sim.set_h(10.0 * sim.plan().h_max)?; // far above the stable step
    /// while sim.divergences().is_empty() && sim.frames() < 30 {
    ///     sim.step_frame()?;
    /// }
    /// println!("{}", sim.divergences()[0]); // "diverged at frame …: …; reported"
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn divergences(&self) -> &[Divergence];
    /// Wall time spent in the guard's checks and checkpoints so far (s).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// sim.step_frame()?;
    /// println!("the guard took {:.3} ms", sim.guard_seconds() * 1e3);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn guard_seconds(&self) -> f64;
    /// Strain limiting's passes run so far (`None` without strain limiting); on the GPU a read-back, for
    /// the end of a run.
    /// ```
    /// use springsim::{model::StrainLimit, CpuSimulator, Method, Simulator, StepSettings};
    /// let mut model = springsim::model::curtain(9, None)?;
    /// model.strain_limit = Some(StrainLimit::new(0.1));
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// sim.step_frame()?;
    /// let tally = sim.strain_passes()?.expect("strain limiting is on");
    /// println!("{} passes over {} limited steps", tally.passes, tally.steps);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn strain_passes(&mut self) -> Result<Option<PassTally>>;
    /// Simulated time (s) at the end of the last frame or step taken (on the GPU: recorded).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// sim.step_frame()?;
    /// assert!((sim.time() - 1.0 / 30.0).abs() < 1e-12); // one frame of 1/30 s
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn time(&self) -> f64;
    /// The laid-out model (structure of arrays, f64): masses, springs, pins, colliders.
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// assert_eq!(sim.model().n, 81);
    /// println!("{} springs", sim.model().end_a.len());
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn model(&self) -> &CpuModel;
    /// Moves particle `i` to `x` with velocity `v` and pins (1/m = 0) or frees it, the rest of the state
    /// untouched: the window's mouse drag (a kinematic position constraint) and pin toggle. Told to the
    /// divergence guard (the user's work is not judged: the next check looks at finiteness only). On
    /// the GPU a queue write: it takes effect with the next recorded frame.
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// // pin particle 40 where it is, at rest (the window's pin tool)
    /// sim.set_particle(40, model.positions[40], [0.0; 3], true)?;
    /// assert!(sim.is_pinned(40));
    /// sim.step_frame()?;
    /// assert_eq!(sim.read_state()?.0[40], model.positions[40]); // held
    /// assert!(sim.set_particle(81, [0.0; 3], [0.0; 3], true).is_err()); // no particle 81
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()>;
    /// Whether particle `i` is pinned now (false past the last particle).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// let pinned = (0..sim.model().n).filter(|&i| sim.is_pinned(i)).count();
    /// assert!(pinned > 0); // the curtain hangs from its top row
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn is_pinned(&self, i: usize) -> bool;
    /// Sets or clears the cursor spring that drags one particle towards a point (the explicit methods'
    /// and LEU's mouse drag; the implicit methods keep it but drag by [`Simulator::set_particle`]).
    /// Told to the divergence guard: while the cursor spring acts, only finiteness is judged.
    /// ```
    /// use springsim::{model::Cursor, CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// // a spring from particle 40 to a point, as stiff as the planned step allows
    /// let cursor = Cursor::stable(40, [0.0, -0.3, 0.2], &sim.plan(), sim.model().drag);
    /// sim.set_cursor(Some(cursor))?;
    /// assert_eq!(sim.cursor().map(|c| c.particle), Some(40));
    /// sim.set_cursor(None)?; // let go
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn set_cursor(&mut self, cursor: Option<Cursor>) -> Result<()>;
    /// The cursor spring set by [`Simulator::set_cursor`].
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// assert!(sim.cursor().is_none()); // nothing dragged
    /// # Ok::<(), springsim::Error>(())
    /// ```
    fn cursor(&self) -> Option<Cursor>;
}

pub use crate::method::STEP_ENERGY_SLACK;

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
    /// Frames of this many steps of the planned h instead of `frame_dt` ([`Stepper::set_frame_steps`]).
    frame_steps: Option<usize>,
}

impl<E: Engine> Stepper<E> {
    /// Plans the step for `engine`'s method (k₀ by power iteration only where the plan needs it) and
    /// hands the plan to the engine: what [`CpuSimulator::new`] and [`GpuSimulator::new`] do after
    /// building their engine, for a caller that builds the engine itself.
    /// ```
    /// use springsim::{cpu::CpuEngine, stepping::Stepper, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let engine = CpuEngine::new(&model, Method::Leu, StepSettings::default())?;
    /// let sim = Stepper::drive(engine)?;
    /// assert!(sim.plan().h > 0.0);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    pub fn drive(engine: E) -> Result<Self> {
        let mut s = Stepper {
            engine,
            plan: StepPlan::default(),
            adaptive: AdaptiveStep::default(),
            leu_retries: 0,
            watch: Watch::default(),
            pipe: pipelined::Pipe::default(),
            frame_steps: None,
        };
        let k0 = if needs_k0(s.engine.method()) { s.engine.stiffness_k0()? } else { 0.0 };
        s.apply_plan(k0)?;
        s.check_stable()?;
        Ok(s)
    }

    /// The settings the engine steps with.
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let sim = CpuSimulator::new(&model, Method::ImplicitEuler, StepSettings::default())?;
    /// assert!(sim.settings().adaptive); // implicit Euler's adaptive step is on by default
    /// # Ok::<(), springsim::Error>(())
    /// ```
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
    fn replan(&mut self) -> Result<()> {
        let k0 = self.engine.stiffness_k0()?;
        if k0.is_finite() && k0 > 0.0 {
            self.apply_plan(k0)?;
        }
        Ok(())
    }

    /// Sets the step h outright (one step per frame of length h, α for it), keeping k₀. Not refused above
    /// h_max: this is the call that studies the stability boundary (the guard still watches the frames).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::Rk4, StepSettings::default())?;
    /// sim.set_h(1e-4)?;
    /// assert_eq!((sim.plan().h, sim.plan().substeps), (1e-4, 1));
    /// sim.step_frame()?;
    /// assert!((sim.time() - 1e-4).abs() < 1e-15);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    pub fn set_h(&mut self, h: f64) -> Result<()> {
        let mut s = self.engine.settings().clone();
        s.fixed_h = Some(h);
        s.frame_dt = h;
        s.validate()?;
        self.engine.set_settings(s)?;
        self.apply_plan(self.plan.k0)
    }

    /// Frames of `steps` steps of the planned h from now on, instead of `frame_dt` (`None`: frames of
    /// `frame_dt` again): the window's single step while paused and its slowed-down view. Such a frame is
    /// guarded and reported as any other, its time `steps` · h; it takes fixed steps (implicit Euler's
    /// adaptive step decides a whole frame's steps, so it is off for them). On the GPU,
    /// [`GpuSimulator::prepare_frame`] and [`GpuSimulator::encode_frame`] follow it; on both engines,
    /// [`Simulator::step_frame`].
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// sim.set_frame_steps(Some(1)); // one step at a time
    /// let report = sim.step_frame()?;
    /// assert_eq!(report.substeps, 1);
    /// assert!((sim.time() - sim.plan().h).abs() < 1e-15);
    /// sim.set_frame_steps(None); // whole frames again
    /// assert_eq!(sim.step_frame()?.substeps, sim.plan().substeps);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    pub fn set_frame_steps(&mut self, steps: Option<usize>) {
        self.frame_steps = steps;
    }

    /// The simulated time a frame advances: `frame_dt`, or the steps of [`Stepper::set_frame_steps`].
    fn frame_time(&self) -> f64 {
        self.frame_steps.map_or(self.engine.settings().frame_dt, |k| k as f64 * self.plan.h)
    }

    /// Implicit Euler's adaptive step: every step tried so far, (h, accepted).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::ImplicitEuler, StepSettings::default())?;
    /// sim.step_frame()?;
    /// let accepted: f64 = sim.step_log().iter().filter(|(_, ok)| *ok).map(|(h, _)| h).sum();
    /// assert!((accepted - 1.0 / 30.0).abs() < 1e-12); // the accepted steps fill the frame
    /// # Ok::<(), springsim::Error>(())
    /// ```
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
        if method == Method::ImplicitEuler && self.engine.settings().adaptive && self.frame_steps.is_none() {
            return Ok((self.adaptive_frame()?, false));
        }
        let substeps = self.frame_steps.unwrap_or(self.plan.substeps);
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
            let dt = self.frame_time();
            let (report, _) = self.raw_frame()?;
            self.watch.advance(dt);
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

    fn time(&self) -> f64 {
        self.engine.time()
    }

    fn model(&self) -> &CpuModel {
        self.engine.model()
    }

    fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        self.engine.set_particle(i, x, v, pinned)?;
        self.mark_edited();
        Ok(())
    }

    fn is_pinned(&self, i: usize) -> bool {
        self.engine.is_pinned(i)
    }

    fn set_cursor(&mut self, cursor: Option<Cursor>) -> Result<()> {
        self.engine.set_cursor(cursor)?;
        self.mark_cursor(cursor.is_some());
        Ok(())
    }

    fn cursor(&self) -> Option<Cursor> {
        self.engine.cursor()
    }
}

#[cfg(test)]
mod tests;
