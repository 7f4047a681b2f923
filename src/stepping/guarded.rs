//! The guarded frame: [`Stepper`]'s checkpoint, check and rollback around a frame, and the halving of h
//! that a rollback brings (the rules of the check are in [`super::guard`]).

use super::guard::{Action, Cause, Divergence, DivergencePolicy, Guard};
use super::{FrameReport, Stepper};
use crate::engine::{Checkpoint, Engine};
use crate::error::{Error, Result};
use crate::method::{GlobalSolve, Method, StepSettings};
use web_time::Instant;

/// The frames between checks when the engine's signals read back from a device and
/// [`crate::method::GuardSettings::every`] is 0.
pub const DEVICE_CHECK_EVERY: usize = 8;

/// The guard's state inside a [`Stepper`].
#[derive(Debug)]
pub(super) struct Watch {
    /// The energy baseline.
    pub(super) guard: Guard,
    /// Frames stepped (a rollback takes it back).
    pub(super) frame: usize,
    /// Simulated time (s) (a rollback takes it back).
    pub(super) time: f64,
    /// Frames since the last check.
    since_check: usize,
    /// The recover policy's checkpoint, with its frame and time.
    checkpoint: Option<(Checkpoint, usize, f64)>,
    /// The factor on the planned h: halved by each rollback (for LEU, by those after its interval reached
    /// one step).
    pub(super) h_scale: f64,
    /// LEU: the factor on the re-linearization interval h_nl, halved by each rollback while LEU
    /// re-linearizes less often than every step.
    pub(super) interval_scale: f64,
    /// Rollbacks so far.
    pub(super) halvings: u32,
    /// The state was edited (a dragged particle, `write_state`) since the last check.
    pub(super) edited: bool,
    /// The cursor spring acts.
    pub(super) cursor: bool,
    /// Policy `report`: the divergence was reported; no more checks.
    pub(super) reported: bool,
    /// Every divergence found.
    pub(super) log: Vec<Divergence>,
    /// Wall time in checks and checkpoints (s).
    pub(super) seconds: f64,
}

impl Default for Watch {
    fn default() -> Self {
        Watch {
            guard: Guard::default(),
            frame: 0,
            time: 0.0,
            since_check: 0,
            checkpoint: None,
            h_scale: 1.0,
            interval_scale: 1.0,
            halvings: 0,
            edited: false,
            cursor: false,
            reported: false,
            log: Vec::new(),
            seconds: 0.0,
        }
    }
}

impl Watch {
    /// Counts a frame of `dt` seconds.
    pub(super) fn advance(&mut self, dt: f64) {
        self.frame += 1;
        self.time += dt;
    }
}

/// `s` with h scaled by `h_scale` (< 1 after rollbacks): the explicit family's `substep_scale` (or
/// fixed h), the implicit methods' frame step (or fixed h); and LEU's re-linearization interval by
/// `interval_scale`.
pub(super) fn scaled_settings(s: &StepSettings, method: Method, h_scale: f64, interval_scale: f64) -> StepSettings {
    let mut s = s.clone();
    s.leu_interval *= interval_scale;
    if h_scale < 1.0 {
        match (s.fixed_h, method.is_implicit()) {
            (Some(h), _) => s.fixed_h = Some(h * h_scale),
            (None, true) => s.fixed_h = Some(s.frame_dt * h_scale),
            (None, false) => s.substep_scale *= h_scale,
        }
    }
    s
}

/// The tolerance the method's solver works to, where it has one: implicit Euler's CG, Newton.
pub(super) fn solver_tolerance(method: Method, s: &StepSettings) -> Option<f64> {
    match method {
        Method::ImplicitEuler if s.global.resolve(method).ok() == Some(GlobalSolve::Cg) => Some(s.cg_tolerance),
        Method::Newton => Some(s.newton_tolerance),
        _ => None,
    }
}

impl<E: Engine> Stepper<E> {
    /// Frames between the guard's checks: `guard.every`, or when it is 0 every frame on the CPU and
    /// every 8 frames on the GPU (its signals come back from the device).
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// assert_eq!(sim.guard_every(), 1);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    pub fn guard_every(&self) -> usize {
        match self.engine.settings().guard.every {
            0 if self.engine.signals_read_back() => DEVICE_CHECK_EVERY,
            0 => 1,
            n => n,
        }
    }

    /// Frames stepped (on the GPU: recorded) so far; a rollback takes the count back to its checkpoint.
    /// ```
    /// use springsim::{CpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(9, None)?;
    /// let mut sim = CpuSimulator::new(&model, Method::SymplecticEuler, StepSettings::default())?;
    /// sim.step_frame()?;
    /// sim.step_frame()?;
    /// assert_eq!(sim.frames(), 2);
    /// # Ok::<(), springsim::Error>(())
    /// ```
    pub fn frames(&self) -> usize {
        self.watch.frame
    }

    /// Tells the guard that the state was edited outside the step (a particle moved by the user): the
    /// next check judges finiteness only and starts the energy baseline again.
    pub(super) fn mark_edited(&mut self) {
        self.watch.edited = true;
        self.pipe.edits += 1;
    }

    /// Tells the guard whether the cursor spring acts: while it does, its work is unbounded and only
    /// finiteness is judged.
    pub(super) fn mark_cursor(&mut self, acts: bool) {
        self.watch.cursor = acts;
        self.watch.edited = true;
        self.pipe.edits += 1;
    }

    /// A frame under the guard (`policy` is `report` or `recover`).
    pub(super) fn guarded_frame(&mut self, policy: DivergencePolicy) -> Result<FrameReport> {
        let every = self.guard_every();
        let dt = self.frame_time();
        let checking = !self.watch.reported;
        if checking && self.watch.frame == 0 && !self.watch.guard.has_baseline() && !self.watch.edited {
            // the energy baseline: the state before the first frame
            let t = Instant::now();
            let s = self.engine.signals()?;
            self.watch.guard.baseline(self.watch.time, &s);
            self.watch.seconds += t.elapsed().as_secs_f64();
        }
        if checking && policy == DivergencePolicy::Recover && self.watch.since_check == 0 {
            let t = Instant::now();
            let c = self.engine.checkpoint()?;
            self.watch.checkpoint = Some((c, self.watch.frame, self.watch.time));
            self.watch.seconds += t.elapsed().as_secs_f64();
        }
        let (mut report, flagged) = self.raw_frame()?;
        let frame = self.watch.frame;
        self.watch.advance(dt);
        self.watch.since_check += 1;
        if !checking || !(flagged || self.watch.since_check >= every) {
            return Ok(report);
        }
        self.watch.since_check = 0;
        let t = Instant::now();
        let signals = self.engine.signals()?;
        let method = self.engine.method();
        let solver = solver_tolerance(method, self.engine.settings()).map(|tol| (report.residual, tol));
        let edited = std::mem::take(&mut self.watch.edited) || self.watch.cursor;
        let settings = self.engine.settings().guard.clone();
        let cause = self.watch.guard.judge(&settings, self.watch.time, &signals, solver, edited);
        let result = match cause {
            None => Ok(()),
            Some(cause) if policy == DivergencePolicy::Report => {
                let d = Divergence { frame, cause, action: Action::Reported };
                self.watch.reported = true;
                self.watch.log.push(d);
                report.divergence = Some(d);
                Ok(())
            }
            Some(cause) => self.roll_back(frame, cause, settings.max_halvings).map(|d| report.divergence = Some(d)),
        };
        self.watch.seconds += t.elapsed().as_secs_f64();
        result.map(|()| report)
    }

    /// Policy `recover`: back to the checkpoint, h halved, re-planned. LEU halves its re-linearization
    /// interval instead while it re-linearizes less often than every step: what makes it diverge is
    /// first a linearization held too long (Shinya §4; the 512² cloth diverges at h/1.6 with the default
    /// interval, and not at the default h with a tenth of it).
    fn roll_back(&mut self, frame: usize, cause: Cause, max_halvings: u32) -> Result<Divergence> {
        if self.watch.halvings >= max_halvings {
            return Err(Error::Diverged { frame, what: format!("{cause}, after {} rollbacks halving h", self.watch.halvings) });
        }
        let Some((checkpoint, to_frame, time)) = self.watch.checkpoint.take() else {
            return Err(Error::Diverged { frame, what: format!("{cause} (no checkpoint to roll back to)") });
        };
        self.engine.rollback(&checkpoint)?;
        self.watch.checkpoint = Some((checkpoint, to_frame, time));
        self.watch.frame = to_frame;
        self.watch.time = time;
        self.halve_after_rollback(frame, cause, to_frame)
    }

    /// After a rollback to `to_frame` (the state and the frame count are back there): h halved, or LEU's
    /// re-linearization interval while it re-linearizes less often than every step, the step re-planned,
    /// the divergence logged.
    pub(super) fn halve_after_rollback(&mut self, frame: usize, cause: Cause, to_frame: usize) -> Result<Divergence> {
        let interval = self.engine.method() == Method::Leu && self.plan.relinearize_every > 1;
        if interval {
            self.watch.interval_scale *= 0.5;
        } else {
            self.watch.h_scale *= 0.5;
        }
        self.watch.halvings += 1;
        self.apply_plan(self.plan.k0)?;
        let leu_interval = interval.then(|| self.engine.settings().leu_interval * self.watch.interval_scale);
        let d = Divergence { frame, cause, action: Action::RolledBack { to_frame, h: self.plan.h, leu_interval } };
        self.watch.log.push(d);
        Ok(d)
    }
}
