//! The blocking side of [`GpuEngine`]: calls that submit and wait. The steps the stepping policy asks
//! for ([`GpuEngine::take_steps_blocking`], one submit and the report's read-back), local/global with the
//! host's Cholesky global step ([`GpuProbe::run_host_global_frame`]) and its phase profile, implicit
//! Euler's trial step for the adaptive step (Kauppila §3.2.3), k₀ by power iteration, and the
//! read-backs for reports and checks.

use super::{GpuCgState, GpuEngine};
use crate::engine::StepsReport;
use crate::error::{Bound, Error, Result};
use crate::gpu::base::specialize::Splits;
use crate::gpu::base::state::read_words;
use crate::gpu::methods::integrator::Integrator;
use crate::gpu::methods::local_global::integrator::LocalGlobalIntegrator;
use crate::gpu::methods::local_global::LocalGlobalSplit;
use crate::gpu::methods::power::PowerKernels;
use crate::gpu::profiling::cost::CountedPass;
use crate::gpu::reports::signals::{decode_step_energy, SIGNAL_BYTES};
use crate::gpu::step_end::StepEnd;
use crate::method::GlobalSolve;

impl GpuEngine {
    /// [`GpuEngine::prepare_local_global`]; `stream`: the uploads may submit and wait (not while recording a frame).
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
    pub(super) fn take_steps_blocking(&mut self, steps: usize) -> Result<StepsReport> {
        let report = self.submit_steps(steps, true)?;
        self.steps_report(steps, &report)
    }

    /// What the stepping policy needs to know of `steps` steps, from the bytes of
    /// [`Integrator::encode_report`].
    pub(super) fn steps_report(&self, steps: usize, report: &[u8]) -> Result<StepsReport> {
        if let Integrator::LocalGlobal(lg) = &self.integrator {
            let (stats, cg) = LocalGlobalIntegrator::decode_report(report);
            let (iters, budget) = (self.settings.local_global_iterations, self.settings.global_iterations);
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

    /// `steps` local/global steps by the multi-submit driver, phase by phase and timed when `profile`.
    pub(super) fn run_host_global_steps(&mut self, steps: usize, profile: bool) -> Result<LocalGlobalSplit> {
        self.prepare_local_global()?;
        self.prepare_steps(steps, self.plan.h)?;
        let Integrator::LocalGlobal(lg) = &mut self.integrator else {
            return Err(Error::invalid(
                "method",
                self.method.name(),
                Bound::Unsupported("the host-driven frame is for local-global".into()),
            ));
        };
        let end = StepEnd { strain: self.strain.as_ref(), self_collider: self.self_collider.as_ref(), colliders: self.colliders.as_ref() };
        let split = lg.host_frame(
            &self.device,
            &self.queue,
            (&self.state, &self.model),
            (end, self.wind.as_ref()),
            &self.settings,
            steps,
            profile,
        )?;
        self.time += steps as f64 * self.plan.h;
        self.prepared = None;
        Ok(split)
    }

    /// Implicit Euler's trial step of size `h` for the adaptive step (Kauppila §3.2.3): one submit from
    /// state\[0\] into state\[1\] followed by the strain check and the energy check, whose flag and
    /// sums are read back after the step (never inside the CG; the energy's only where it is judged: not
    /// where something moves along a path or the aerodynamic wind blows). state\[0\] keeps the old state until
    /// [`crate::engine::Engine::accept_trial`] copies the new one over.
    pub(super) fn try_implicit_step(&mut self, h: f64) -> Result<StepsReport> {
        let n = self.state.n;
        self.write_params_h(h);
        self.prepare_steps(1, h)?;
        self.prepared = None;
        self.trial_h = h;
        if let Integrator::Implicit(implicit) = &mut self.integrator {
            implicit.device_adaptive(&self.device, &self.options, &self.state)?;
        }
        let Integrator::Implicit(implicit) = &self.integrator else {
            return Err(Error::invalid("method", self.method.name(), Bound::Unsupported("the adaptive step is for implicit-euler".into())));
        };
        let Some(energy) = implicit.adaptive().map(|a| &a.energy) else {
            return Err(Error::internal_gpu("the adaptive step's state".to_string()));
        };
        let judged = !self.model.unbounded_work();
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
            energy.encode(&mut pass, n);
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
        let energy_gain = match judged {
            true => {
                let words = read_words(&self.device, &self.queue, &self.state, &energy.out, 0, (SIGNAL_BYTES / 4) as usize)?;
                Some(decode_step_energy(bytemuck::cast_slice(&words)).gain(&self.model, h))
            }
            false => None,
        };
        self.read_timestamps()?;
        Ok(StepsReport { iterations: cg.total_iterations, residual: cg.residual, strained: cg.strained, energy_gain, ..Default::default() })
    }

    /// k₀ by `iters` power iterations on the GPU at the current positions (submits and reads back; the
    /// iteration's buffers exist only during the call, its kernels are compiled on the first call).
    pub(super) fn power_k0(&mut self, iters: usize) -> Result<f64> {
        let kernels = match self.power.take() {
            Some(kernels) => kernels,
            None => PowerKernels::new(&self.device, &self.options, Splits::of(&self.state))?,
        };
        let kernels = self.power.insert(kernels);
        kernels.k0(&self.device, &self.queue, &self.state, &self.model, iters)
    }
}
