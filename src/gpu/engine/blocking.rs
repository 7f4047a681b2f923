//! The blocking side of [`GpuEngine`]: calls that submit and wait. The steps the stepping policy asks
//! for ([`GpuEngine::take_steps_blocking`], one submit and the report's read-back), local/global with the
//! host's Cholesky global step ([`GpuEngine::run_host_global_frame`]) and its phase profile, implicit
//! Euler's trial step for the adaptive step (Kauppila §3.2.3), k₀ by power iteration, and the
//! read-backs for reports and checks.

use super::{GpuCgState, GpuEngine, LgEval};
use crate::engine::StepsReport;
use crate::error::{Bound, Error, Result};
use crate::gpu::base::specialize::Splits;
use crate::gpu::base::state::read_words;
use crate::gpu::methods::integrator::Integrator;
use crate::gpu::methods::local_global::integrator::LocalGlobalIntegrator;
use crate::gpu::methods::local_global::LgSplit;
use crate::gpu::methods::power::PowerKernels;
use crate::gpu::profiling::cost::CountedPass;
use crate::gpu::step_end::StepEnd;
use crate::method::{GlobalSolve, Method};

impl GpuEngine {
    /// [`GpuEngine::prepare_lg`]; `stream`: the uploads may submit and wait (not while recording a frame).
    pub(super) fn prepare_lg_uploading(&mut self, stream: bool) -> Result<()> {
        if let Integrator::LocalGlobal(lg) = &mut self.integrator {
            lg.prepare(&self.device, &self.options, &self.model, &self.settings, self.plan.h, stream)?;
        }
        Ok(())
    }

    /// `steps` steps, submitted and waited for, with what the stepping policy needs to know: one submit of
    /// [`GpuEngine::encode_steps`] followed by the copies of [`Integrator::encode_report`] (the PCG's
    /// status, local/global's residual, LEU's retries or the explicit methods' speed flag, which it
    /// clears), then their one small read-back. Local/global with `--global cholesky` runs the
    /// multi-submit driver, then the report's copies in a submit of their own.
    pub fn take_steps_blocking(&mut self, steps: usize) -> Result<StepsReport> {
        let report = self.submit_steps(steps, true)?;
        self.steps_report(steps, &report)
    }

    /// What the stepping policy needs to know of `steps` steps, from the bytes of
    /// [`Integrator::encode_report`].
    pub(super) fn steps_report(&self, steps: usize, report: &[u8]) -> Result<StepsReport> {
        if let Integrator::LocalGlobal(lg) = &self.integrator {
            let (stats, cg) = LocalGlobalIntegrator::decode_report(report);
            let (iters, budget) = (self.settings.lg_iterations, self.settings.global_iterations);
            let global = lg.global().unwrap_or(GlobalSolve::Cg);
            let iterations = match global {
                GlobalSolve::Cholesky => steps * iters,
                GlobalSolve::Chebyshev => steps * iters * budget,
                _ => {
                    if cg.breakdowns > 0 {
                        return Err(Error::GpuCgBreakdown { steps: Some(cg.breakdowns), local_global: true });
                    }
                    cg.total_iterations
                }
            };
            if !stats.iter().all(|v| v.is_finite()) {
                return Err(Error::NonFinite { what: format!("local/global ({}) on the GPU", global.name()), quantity: "residual" });
            }
            return Ok(StepsReport { iterations, residual: stats[2], ..Default::default() });
        }
        let words: &[u32] = bytemuck::cast_slice(report);
        let mut report = StepsReport::default();
        match &self.integrator {
            Integrator::Leu(_) => report.leu_retries = words[2] as usize,
            Integrator::Explicit(_) => report.speed_exceeded = words[3] != 0,
            Integrator::Implicit(implicit) => {
                let cg = GpuCgState::from_words(words);
                if cg.breakdowns > 0 {
                    // no warm start from a failed solve
                    implicit.clear_solution(&self.device, &self.queue, &self.state.counters);
                    return Err(Error::GpuCgBreakdown { steps: Some(cg.breakdowns), local_global: false });
                }
                report.iterations = cg.total_iterations;
                report.residual = cg.residual;
            }
            Integrator::LocalGlobal(_) => {}
        }
        Ok(report)
    }

    /// Local/global with the host's global step (`--global cholesky`, Liu et al. 2013 §4 with the f64
    /// factor on the CPU): runs one frame by several submits (per iteration one read-back of r and one
    /// upload of δ, n `vec4` each) and waits for it. This is the blocking call to use where
    /// [`GpuEngine::encode_frame`] refuses; it also runs the GPU solvers (`cg`, `chebyshev`) the same
    /// way. The split of the frame is kept for [`GpuEngine::lg_last_split`].
    pub fn run_host_global_frame(&mut self) -> Result<LgSplit> {
        self.run_host_global_steps(self.plan.substeps, false)
    }

    /// `steps` local/global steps by the multi-submit driver, phase by phase and timed when `profile`.
    pub(super) fn run_host_global_steps(&mut self, steps: usize, profile: bool) -> Result<LgSplit> {
        self.prepare_lg()?;
        self.prepare_steps(steps, self.plan.h)?;
        let Integrator::LocalGlobal(lg) = &mut self.integrator else {
            return Err(Error::invalid(
                "method",
                self.method.name(),
                Bound::Unsupported("the host-driven frame is for local-global".into()),
            ));
        };
        let end = StepEnd { strain: self.strain.as_ref(), self_collider: self.self_collider.as_ref(), colliders: self.colliders.as_ref() };
        let split = lg.host_frame(&self.device, &self.queue, &self.state, (end, self.wind.as_ref()), &self.settings, steps, profile)?;
        self.time += steps as f64 * self.plan.h;
        self.prepared = None;
        Ok(split)
    }

    /// Local/global: runs `frames` frames with every phase its own submit, timed on the host (submit and
    /// wait; lavapipe has no cheaper clock), and returns the split summed over them (see [`LgSplit`]).
    /// The frames advance the simulation like `step_frame`.
    pub fn lg_profile_frames(&mut self, frames: usize) -> Result<LgSplit> {
        if self.method != Method::LocalGlobal {
            return Err(Error::invalid("method", self.method.name(), Bound::Unsupported("the phase split is for local-global".into())));
        }
        let mut total = LgSplit::default();
        for _ in 0..frames {
            let s = self.run_host_global_steps(self.plan.substeps, true)?;
            total.frames += 1;
            total.other_ms += s.other_ms;
            total.local_ms += s.local_ms;
            total.global_ms += s.global_ms;
            total.advance_ms += s.advance_ms;
            total.readback_ms += s.readback_ms;
            total.solve_ms += s.solve_ms;
            total.upload_ms += s.upload_ms;
            total.total_ms += s.total_ms;
        }
        Ok(total)
    }

    /// Local/global: the split of the last frame run by the multi-submit driver (the `cholesky` path, or
    /// [`GpuEngine::lg_profile_frames`]).
    pub fn lg_last_split(&self) -> LgSplit {
        match &self.integrator {
            Integrator::LocalGlobal(lg) => lg.last_split(),
            _ => LgSplit::default(),
        }
    }

    /// Local/global with `chebyshev`: the spectral radius estimate in use (0 for the other solvers).
    pub fn lg_rho(&self) -> f64 {
        match &self.integrator {
            Integrator::LocalGlobal(lg) => lg.rho(),
            _ => 0.0,
        }
    }

    /// Local/global, for checks against the CPU twins: runs `lg_inertia` on the current state (q, v), then
    /// `lg_local_residual` at the positions `x` (pinned particles: give their q), and reads back y, r and
    /// the inverse diagonal. The current state is left as it was.
    pub fn lg_eval(&mut self, x: &[[f64; 3]]) -> Result<LgEval> {
        if self.method != Method::LocalGlobal {
            return Err(Error::invalid("method", self.method.name(), Bound::Unsupported("lg_eval needs local-global".into())));
        }
        if x.len() != self.model.n {
            return Err(Error::invalid("x", x.len(), Bound::length(self.model.n, "must have {} positions")));
        }
        self.prepare_lg()?;
        let Integrator::LocalGlobal(lg) = &self.integrator else {
            return Err(Error::invalid("method", self.method.name(), Bound::Unsupported("lg_eval needs local-global".into())));
        };
        lg.eval(&self.device, &self.queue, &self.state, &self.model, x)
    }

    /// Implicit Euler and local/global: the PCG's status words (one read-back); zeros for the methods
    /// without a PCG.
    pub fn cg_state_gpu(&self) -> Result<GpuCgState> {
        match &self.integrator {
            Integrator::Implicit(i) => i.cg_state(&self.device, &self.queue, &self.state),
            Integrator::LocalGlobal(lg) => lg.cg_state(&self.device, &self.queue, &self.state),
            _ => Ok(GpuCgState::default()),
        }
    }

    /// Implicit Euler: Δv of the last solve, read back (for checks).
    pub fn read_dv(&self) -> Result<Vec<[f64; 3]>> {
        match &self.integrator {
            Integrator::Implicit(i) => i.read_dv(&self.device, &self.queue, &self.state),
            _ => Err(Error::invalid("method", self.method.name(), Bound::Unsupported("read_dv needs implicit-euler".into()))),
        }
    }

    /// Implicit Euler with the multigrid preconditioner: z = B r, one GPU V-cycle on the system of the
    /// current state for a step of size `h` (for checks against [`crate::linalg::spring_mg::SpringMg`]).
    pub fn implicit_mg_apply(&mut self, h: f64, r: &[[f64; 3]]) -> Result<Vec<[f64; 3]>> {
        self.write_params_h(h);
        let Integrator::Implicit(implicit) = &self.integrator else {
            return Err(Error::invalid("method", self.method.name(), Bound::Unsupported("implicit_mg_apply needs implicit-euler".into())));
        };
        let z = implicit.apply_multigrid(&self.device, &self.queue, &self.state, 0, r);
        self.write_params();
        z
    }

    /// Implicit Euler's trial step of size `h` for the adaptive step (Kauppila §3.2.3): one submit from
    /// state\[0\] into state\[1\] followed by the strain check, whose flag is read back after the step (never
    /// inside the CG). state\[0\] keeps the old state until [`crate::engine::Engine::accept_trial`] copies
    /// the new one over.
    pub fn try_implicit_step(&mut self, h: f64) -> Result<StepsReport> {
        let n = self.state.n;
        self.write_params_h(h);
        self.prepare_steps(1, h)?;
        self.prepared = None;
        self.trial_h = h;
        let Integrator::Implicit(implicit) = &self.integrator else {
            return Err(Error::invalid("method", self.method.name(), Bound::Unsupported("the adaptive step is for implicit-euler".into())));
        };
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.adaptive") });
        implicit.begin_frame(&mut enc);
        if let Some(w) = &self.wind {
            w.save(&mut enc, &self.state);
        }
        {
            let writes = self.timer.as_mut().and_then(|t| t.pass_writes());
            let mut raw = self.state.counters.begin_pass(&mut enc, "springsim.adaptive", writes);
            let mut pass = CountedPass::new(&mut raw, &self.state.counters).with_timer(self.timer.as_mut());
            self.state.counters.steps(1);
            if let Some(w) = &self.wind {
                w.encode_trial(&mut pass, n);
            }
            implicit.encode_step(&mut pass, 0, n, self.settings.cg_max_iterations);
            let end =
                StepEnd { strain: self.strain.as_ref(), self_collider: self.self_collider.as_ref(), colliders: self.colliders.as_ref() };
            end.encode(&mut pass, 1, n, 0);
            implicit.encode_strain(&mut pass, 0, n);
            pass.finish();
        }
        if let Some(w) = &self.wind {
            w.restore(&mut enc, &self.state);
        }
        if let Some(t) = &self.timer {
            t.resolve(&mut enc);
        }
        self.state.counters.submit(&self.queue, enc.finish());
        // the planned step's parameters again for whatever is recorded next (queue writes land before the
        // next submit, after this one)
        self.write_params();
        let cg = implicit.cg_state(&self.device, &self.queue, &self.state)?;
        if cg.breakdowns > 0 {
            implicit.clear_solution(&self.device, &self.queue, &self.state.counters);
            return Err(Error::GpuCgBreakdown { steps: None, local_global: false });
        }
        self.read_timestamps()?;
        Ok(StepsReport { iterations: cg.total_iterations, residual: cg.residual, strained: cg.strained, ..Default::default() })
    }

    /// k₀ by `iters` power iterations on the GPU at the current positions (submits and reads back; the
    /// iteration's buffers exist only during the call, its kernels are compiled on the first call).
    pub fn power_k0(&mut self, iters: usize) -> Result<f64> {
        let kernels = match self.power.take() {
            Some(kernels) => kernels,
            None => PowerKernels::new(&self.device, &self.options, Splits::of(&self.state))?,
        };
        let kernels = self.power.insert(kernels);
        kernels.k0(&self.device, &self.queue, &self.state, &self.model, iters)
    }

    /// LEU: the divergence retries counted on the GPU so far (one read-back); 0 for the other methods.
    pub fn leu_retries_gpu(&self) -> Result<usize> {
        match &self.integrator {
            Integrator::Leu(leu) => Ok(read_words(&self.device, &self.queue, &self.state, leu.flags(), 0, 4)?[2] as usize),
            _ => Ok(0),
        }
    }
}
