//! The pipelined frame: the one path by which a host drives the GPU simulator without ever waiting on
//! the device. [`GpuSimulator::encode_frame`] records a frame into the host's encoder together with
//! what the stepping policy needs of it: the guard's signals reduced on the device, the integrator's
//! report, a checkpoint of the state kept on the device every few frames, k₀ re-estimated when a step
//! went too fast; all copied into a report slot that is mapped when the host submits
//! ([`crate::gpu::reports`]). After its submit the host calls [`GpuSimulator::poll_reports`], which
//! polls without waiting and judges the reports that have come back, a frame or more late, by the same
//! rules as the blocking guard ([`super::guard`]):
//!
//! - policy `report`: the first divergence is a [`FrameEvent::Diverged`] and checks stop;
//! - policy `recover`: the next frame recorded starts from the last checkpoint whose own frame was
//!   judged good, with h halved (LEU: its re-linearization interval), and the frames recorded after the
//!   diverged one are forgotten (their reports, when they come, are dropped);
//! - policy `ignore`: nothing is judged; the reports still come.
//!
//! Recorded, submitted, polled: nothing here blocks, except re-preparing local/global's global solver
//! for a halved step after a rollback (its uploads may wait; counted in
//! [`crate::gpu::GpuCost::waits`]). Implicit Euler's adaptive step is decided on the device
//! ([`crate::gpu::methods::implicit::adaptive`]): the frame records its trial slots once, a kernel
//! judges each trial and gates the next one's dispatches, and the steps tried come back in the report
//! (into [`super::Stepper::step_log`], the accepted steps in [`FrameReport::substeps`]). A model that
//! depends on time (the gusting wind, moving colliders) keeps the blocking adaptive frame
//! ([`GpuSimulator::needs_blocking_frame`]); `encode_frame` records the planned steps for it.

use super::guard::{Action, Cause, Divergence, DivergencePolicy};
use super::guarded::{solver_tolerance, DEVICE_CHECK_EVERY};
use super::{needs_k0, FrameReport, GpuSimulator};
use crate::engine::{Engine, Signals};
use crate::error::{Error, Result};
use crate::gpu::engine::{FrameParts, FRAME_CHECKPOINTS};
use crate::gpu::reports::signals::decode_signals;
use crate::gpu::reports::{Arrived, ReportRing, SlotContent};
use crate::method::Method;
use crate::reference::signals::SignalSums;

/// What [`GpuSimulator::poll_reports`] tells the host, a frame or more after the frame ran.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum FrameEvent {
    /// Frame `frame`'s report came back (frames in the order they were recorded).
    Report {
        /// The frame (0-based, counted as [`GpuSimulator::frames`] counts them).
        frame: usize,
        /// The solver's iterations and residual, LEU's retries, the steps.
        report: FrameReport,
        /// The guard's signals of the state at the frame's end, when the frame reduced them (the guard
        /// checks, or [`GpuSimulator::set_frame_signals`]).
        signals: Option<Signals>,
        /// The sums they were made from (the largest stretch among them), with the signals.
        sums: Option<SignalSums>,
    },
    /// The guard found a divergence in a frame's report and did what [`Divergence::action`] says.
    Diverged(Divergence),
    /// Frame `frame` was recorded without a report: every report slot was busy (a host that records
    /// frames without submitting them, or never polls). It ran, but the guard did not judge it.
    Unreported {
        /// The frame recorded without a report.
        frame: usize,
    },
    /// A step of the explicit family went faster than the speed limit (or LEU retried a step), so k₀
    /// was re-estimated on the device at the state after `frame` and the step re-planned (Shinya §5.3).
    Replanned {
        /// The frame after which k₀ was estimated.
        frame: usize,
        /// The new k₀ (1/s²).
        k0: f64,
        /// The new step (s).
        h: f64,
    },
}

/// What a frame's report slot carries about the frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FrameTag {
    frame: usize,
    epoch: u64,
    /// Simulated time at the frame's end.
    time: f64,
    steps: usize,
    /// The user's edits recorded before the frame.
    edits: u64,
    cursor: bool,
    /// The checkpoint saved after the frame.
    saved: Option<usize>,
}

/// A checkpoint on the device: its slot, the frame that starts from it, the policy's and the engine's
/// time there.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Saved {
    slot: usize,
    frame: usize,
    time: f64,
    engine_time: f64,
}

/// The pipelined path's state inside a [`super::Stepper`].
#[derive(Default)]
pub(crate) struct Pipe {
    ring: ReportRing<FrameTag>,
    /// Bumped by each rollback: reports of earlier epochs are dropped.
    epoch: u64,
    /// The user's edits so far, and as of the last judged report.
    pub(super) edits: u64,
    judged_edits: u64,
    /// The last checkpoint judged good, and the one waiting for its frame's report.
    good: Option<Saved>,
    pending: Option<Saved>,
    /// Restore this checkpoint at the start of the next frame.
    restore: Option<usize>,
    /// Re-estimate k₀ in the next frame; one estimate in flight.
    power_wanted: bool,
    power_in_flight: bool,
    /// Frames since the last checkpoint.
    since_save: usize,
    started: bool,
    /// LEU retries as of the last report.
    leu_retries: usize,
    /// Reduce the signals every frame even when the guard does not judge them.
    force_signals: bool,
    /// Frames recorded without a report slot, not yet told to the host.
    unreported: Vec<usize>,
}

impl Pipe {
    /// After a method switch: the reports in flight (recorded by the old integrator, whose report words
    /// the new one would misread) are dropped when they come, and k₀'s estimate and LEU's retry count
    /// start again. The checkpoints stay: the state is the same.
    pub(super) fn forget_in_flight(&mut self) {
        self.epoch += 1;
        self.pending = None;
        self.power_wanted = false;
        self.power_in_flight = false;
        self.leu_retries = 0;
    }
}

impl GpuSimulator {
    /// Records one frame into the host's `encoder`, with what the stepping policy needs of it (see
    /// [`crate::stepping::pipelined`]): no submit, no poll, no wait. The host submits, then calls
    /// [`GpuSimulator::poll_reports`]. A model that depends on time needs [`GpuSimulator::prepare_frame`]
    /// first, as for the engine's own `encode_frame`. Local/global with `--global cholesky` is refused
    /// (its global step reads back every iteration): an error naming the blocking call.
    ///
    /// ```no_run
    /// # fn frame(sim: &mut springsim::GpuSimulator, device: &wgpu::Device, queue: &wgpu::Queue) -> springsim::Result<()> {
    /// sim.prepare_frame()?;
    /// let mut encoder = device.create_command_encoder(&Default::default());
    /// sim.encode_frame(&mut encoder)?;
    /// // … the host's own passes, e.g. a draw from sim.positions() …
    /// queue.submit([encoder.finish()]);
    /// for event in sim.poll_reports()? {
    ///     if let springsim::FrameEvent::Diverged(d) = event {
    ///         eprintln!("{d}");
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn encode_frame(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        self.encode_pipelined(encoder, self.frame_steps)
    }

    fn encode_pipelined(&mut self, encoder: &mut wgpu::CommandEncoder, steps: Option<usize>) -> Result<()> {
        let policy = self.engine.settings().guard.policy;
        let checking = policy != DivergencePolicy::Ignore && !self.watch.reported;
        let recover = checking && policy == DivergencePolicy::Recover;
        let signals = checking || self.pipe.force_signals;
        let mut parts = FrameParts { steps, restore: self.pipe.restore, signals, ..FrameParts::default() };
        if recover && self.pipe.good.is_none() {
            // the state before the first frame (or after a rollback's restore) is the first good one
            let time = self.watch.time;
            self.pipe.good = Some(Saved { slot: 0, frame: self.watch.frame, time, engine_time: self.engine.time() });
            parts.save_before = Some(0);
        }
        let every = match self.engine.settings().guard.every {
            0 => DEVICE_CHECK_EVERY,
            n => n,
        };
        let mut saved = None;
        if recover && self.pipe.since_save + 1 >= every {
            let good = self.pipe.good.map_or(0, |g| g.slot);
            saved = Some((good + 1) % FRAME_CHECKPOINTS);
        }
        if self.pipe.power_wanted && !self.pipe.power_in_flight {
            parts.power_iterations = Some(self.engine.settings().power_iterations);
        }
        let slot = self.pipe.ring.acquire(self.engine.device())?;
        // a checkpoint is kept only where its frame's report can confirm it
        let saved = saved.filter(|_| slot.is_some());
        parts.save_after = saved;
        parts.report = slot.map(|k| self.pipe.ring.buffer(k));
        let recorded = self.engine.encode_frame_parts(encoder, &parts)?;
        let frame = self.watch.frame;
        let dt = steps.map_or(self.engine.settings().frame_dt, |k| k as f64 * self.plan.h);
        let steps = steps.unwrap_or(self.plan.substeps);
        self.watch.advance(dt);
        self.pipe.restore = None;
        self.pipe.started = true;
        if parts.power_iterations.is_some() && recorded.power {
            self.pipe.power_wanted = false;
            self.pipe.power_in_flight = true;
        }
        match saved {
            Some(s) => {
                self.pipe.since_save = 0;
                self.pipe.pending = Some(Saved { slot: s, frame: frame + 1, time: self.watch.time, engine_time: self.engine.time() });
            }
            None => self.pipe.since_save += 1,
        }
        if slot.is_none() {
            self.pipe.unreported.push(frame);
        }
        if let Some(k) = slot {
            let tag = FrameTag {
                frame,
                epoch: self.pipe.epoch,
                time: self.watch.time,
                steps,
                edits: self.pipe.edits,
                cursor: self.watch.cursor,
                saved,
            };
            let content =
                SlotContent { tag, signals: recorded.signals, power: recorded.power, integrator_bytes: recorded.integrator_bytes };
            self.pipe.ring.record(encoder, k, content);
        }
        Ok(())
    }

    /// Whether this method's frame needs the host between its steps, so that only the blocking
    /// [`crate::Simulator::step_frame`] runs it as planned: local/global with the host's Cholesky global
    /// step (`global: cholesky`, local/global's default; [`GpuSimulator::encode_frame`] refuses it: each
    /// iteration reads r back and uploads δ), and implicit Euler's adaptive step on a model that depends
    /// on time (the gusting wind or moving colliders, whose per-step inputs the host writes; there
    /// `encode_frame` records the planned steps instead, as with `adaptive: false`). Implicit Euler's
    /// adaptive step otherwise runs on the device, pipelined; so does every other method and setting.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// # let mut encoder = device.create_command_encoder(&Default::default());
    /// use springsim::Simulator;
    /// if sim.needs_blocking_frame() {
    ///     sim.step_frame()?; // waits: local/global's Cholesky step
    /// } else {
    ///     sim.encode_frame(&mut encoder)?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn needs_blocking_frame(&self) -> bool {
        let (method, s) = (self.engine.method(), self.engine.settings());
        (method == Method::LocalGlobal && s.global.resolve(method).ok() == Some(crate::method::GlobalSolve::Cholesky))
            || (method == Method::ImplicitEuler && s.adaptive && !self.engine.adaptive_on_device())
    }

    /// After the host's submit: polls the device without waiting and judges the frame reports that have
    /// come back, in order. Returns what happened: each frame's report, and any divergence or re-plan.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// use springsim::FrameEvent;
    /// for event in sim.poll_reports()? {
    ///     match event {
    ///         FrameEvent::Report { frame, report, signals, .. } => {
    ///             let strain = signals.map_or(f64::NAN, |s| s.max_strain);
    ///             println!("frame {frame}: {} iterations, strain {strain:.3}", report.iterations);
    ///         }
    ///         FrameEvent::Diverged(d) => eprintln!("{d}"),
    ///         _ => {}
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn poll_reports(&mut self) -> Result<Vec<FrameEvent>> {
        let arrived = self.pipe.ring.collect(self.engine.device(), self.engine.counters())?;
        self.judge_reports(arrived)
    }

    /// [`GpuSimulator::poll_reports`] after waiting for every submitted frame (one counted wait): for the
    /// end of a run, or a script that wants every report now.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// // at the end of a run: every submitted frame's report (one wait)
    /// let events = sim.flush_reports()?;
    /// assert_eq!(sim.reports_in_flight(), 0);
    /// # let _ = events; Ok(()) }
    /// ```
    pub fn flush_reports(&mut self) -> Result<Vec<FrameEvent>> {
        let arrived = self.pipe.ring.flush(self.engine.device(), self.engine.counters())?;
        self.judge_reports(arrived)
    }

    /// Whether every frame reduces the guard's signals and reports them (they are reduced anyway while the
    /// guard judges them: policy `report` before its first divergence, or `recover`): for a host that
    /// wants each frame's energy, strain and finiteness under policy `ignore`. Two dispatches a frame.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// sim.set_frame_signals(true); // every report carries the energy, the strain and finiteness
    /// # Ok(()) }
    /// ```
    pub fn set_frame_signals(&mut self, on: bool) {
        self.pipe.force_signals = on;
    }

    /// Frame reports recorded and not yet collected.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// # let mut encoder = device.create_command_encoder(&Default::default());
    /// // a host that keeps at most two frames on the GPU before recording the next
    /// if sim.reports_in_flight() < 2 {
    ///     sim.encode_frame(&mut encoder)?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn reports_in_flight(&self) -> usize {
        self.pipe.ring.in_flight()
    }

    /// `frames` pipelined frames, each in an encoder of its own, submitted and polled, then every report
    /// waited for: the blocking convenience over [`GpuSimulator::encode_frame`] for scripts and tests.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let events = sim.run_frames(30)?;
    /// let diverged = events.iter().any(|e| matches!(e, springsim::FrameEvent::Diverged(_)));
    /// println!("30 frames, diverged: {diverged}");
    /// # Ok(()) }
    /// ```
    pub fn run_frames(&mut self, frames: usize) -> Result<Vec<FrameEvent>> {
        let mut events = Vec::new();
        for _ in 0..frames {
            self.prepare_frame()?;
            let device = self.engine.device().clone();
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.frame") });
            self.encode_frame(&mut encoder)?;
            self.engine.counters().submit(self.engine.queue(), encoder.finish());
            events.extend(self.poll_reports()?);
        }
        events.extend(self.flush_reports()?);
        Ok(events)
    }

    fn judge_reports(&mut self, arrived: Vec<Arrived<FrameTag>>) -> Result<Vec<FrameEvent>> {
        let mut events: Vec<FrameEvent> = self.pipe.unreported.drain(..).map(|frame| FrameEvent::Unreported { frame }).collect();
        for a in arrived {
            let tag = a.content.tag;
            if tag.epoch != self.pipe.epoch {
                continue;
            }
            let method = self.engine.method();
            let (report, solver_failed) = match self.engine.decode_steps_report(tag.steps, a.integrator()) {
                Ok(r) => (r, None),
                Err(Error::GpuCgBreakdown { .. }) => (Default::default(), Some(Cause::Solver { residual: f64::NAN, limit: 0.0 })),
                Err(Error::NonFinite { .. }) => (Default::default(), Some(Cause::NonFinite)),
                Err(e) => return Err(e),
            };
            if let Some(k0) = a.k0() {
                self.pipe.power_in_flight = false;
                if k0.is_finite() && k0 > 0.0 && needs_k0(method) {
                    self.apply_plan(k0)?;
                    events.push(FrameEvent::Replanned { frame: tag.frame, k0, h: self.plan.h });
                }
            }
            let retried = report.leu_retries > self.pipe.leu_retries;
            self.pipe.leu_retries = self.pipe.leu_retries.max(report.leu_retries);
            if (report.speed_exceeded && method != Method::Leu) || retried {
                self.pipe.power_wanted = true;
            }
            let mut frame_report = FrameReport {
                substeps: tag.steps,
                leu_retries: report.leu_retries,
                iterations: report.iterations,
                residual: report.residual,
                divergence: None,
                forced_steps: 0,
            };
            if let Some(a) = self.engine.decode_adaptive_report(a.integrator()) {
                frame_report.substeps = a.accepted;
                frame_report.forced_steps = a.forced;
                // the frames recorded from now on get more room for halvings
                self.engine.note_forced_steps(a.forced);
                self.adaptive.record(&a.log);
                // the steps that ran, retries included (recorded as trial slots, counted now)
                self.engine.counters().steps(a.trials);
            }
            let sums = a.signals().map(decode_signals);
            let signals = sums.map(|s| Signals::from_sums(self.engine.model(), &s));
            let mut event = FrameEvent::Report { frame: tag.frame, report: frame_report, signals, sums };
            let policy = self.engine.settings().guard.policy;
            let cause = match signals {
                Some(s) if policy != DivergencePolicy::Ignore && !self.watch.reported => {
                    let edited = tag.edits != self.pipe.judged_edits || tag.cursor;
                    self.pipe.judged_edits = tag.edits;
                    let solver = solver_tolerance(method, self.engine.settings()).map(|tol| (report.residual, tol));
                    let settings = self.engine.settings().guard.clone();
                    solver_failed.or_else(|| self.watch.guard.judge(&settings, tag.time, &s, solver, edited))
                }
                _ => None,
            };
            let Some(cause) = cause else {
                if let Some(p) = self.pipe.pending.filter(|p| tag.saved == Some(p.slot) && p.frame == tag.frame + 1) {
                    self.pipe.good = Some(p);
                    self.pipe.pending = None;
                }
                events.push(event);
                continue;
            };
            let d = if policy == DivergencePolicy::Report {
                let d = Divergence { frame: tag.frame, cause, action: Action::Reported };
                self.watch.reported = true;
                self.watch.log.push(d);
                d
            } else {
                self.roll_back_pipelined(tag.frame, cause)?
            };
            if let FrameEvent::Report { report, .. } = &mut event {
                report.divergence = Some(d);
            }
            events.push(event);
            events.push(FrameEvent::Diverged(d));
        }
        Ok(events)
    }

    /// Policy `recover` on the pipelined path: the next frame restores the last good checkpoint, h (or
    /// LEU's interval) is halved and the step re-planned, and the frames recorded since are forgotten.
    fn roll_back_pipelined(&mut self, frame: usize, cause: Cause) -> Result<Divergence> {
        let max_halvings = self.engine.settings().guard.max_halvings;
        if self.watch.halvings >= max_halvings {
            return Err(Error::Diverged { frame, what: format!("{cause}, after {} rollbacks halving h", self.watch.halvings) });
        }
        let Some(good) = self.pipe.good else {
            return Err(Error::Diverged { frame, what: format!("{cause} (no checkpoint to roll back to)") });
        };
        self.pipe.restore = Some(good.slot);
        self.pipe.pending = None;
        self.pipe.since_save = 0;
        self.pipe.epoch += 1;
        self.pipe.power_wanted = false;
        self.pipe.power_in_flight = false;
        self.watch.frame = good.frame;
        self.watch.time = good.time;
        self.engine.set_time(good.engine_time);
        // the baseline stays: the state goes back to one judged against it
        self.halve_after_rollback(frame, cause, good.frame)
    }
}
