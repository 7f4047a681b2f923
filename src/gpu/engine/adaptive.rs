//! The GPU engine's side of implicit Euler's adaptive step on the device
//! ([`crate::gpu::methods::implicit::adaptive`]): the pipelined frame recorded once with its trial
//! slots, each trial's dispatches gated by the device, nothing read back.

use super::GpuEngine;
use crate::error::{Bound, Error, Result};
use crate::gpu::methods::implicit::adaptive::{AdaptiveReport, DeviceAdaptive, ADAPTIVE_REPORT_AT, ADAPTIVE_ROOM_GROWTH};
use crate::gpu::methods::integrator::Integrator;
use crate::gpu::profiling::cost::CountedPass;
use crate::gpu::step_end::StepEnd;
use crate::method::Method;

impl GpuEngine {
    /// Whether the pipelined frame runs implicit Euler's adaptive step on the device: `adaptive: true`,
    /// and a model that does not depend on time (the gusting wind's trial step and the placements of
    /// moving colliders are written by the host per step, so those frames take the planned steps, or the
    /// blocking `step_frame`).
    pub(crate) fn adaptive_on_device(&self) -> bool {
        self.method == Method::ImplicitEuler && self.settings.adaptive && !self.needs_prepare()
    }

    /// Records implicit Euler's adaptive frame into `encoder` (see [`DeviceAdaptive`]): the frame's
    /// trial slots, the state ending in `state[0]`, the simulated time advanced by the frame.
    pub(super) fn encode_adaptive_frame(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        let n = self.state.n;
        let frame = self.settings.frame_dt;
        let slots = DeviceAdaptive::slots(self.plan.substeps, self.adaptive_room);
        let config = DeviceAdaptive::config(&self.model, self.plan.h, frame, slots, &self.settings);
        let Integrator::Implicit(implicit) = &mut self.integrator else {
            return Err(Error::invalid("method", self.method.name(), Bound::Unsupported("the adaptive step is for implicit-euler".into())));
        };
        implicit.device_adaptive(&self.device, &self.options, &self.state)?;
        implicit.begin_frame(encoder);
        let implicit = &*implicit;
        let Some(ad) = implicit.adaptive() else {
            return Err(Error::internal_gpu("the adaptive step's state".to_string()));
        };
        let mut sizes = Vec::new();
        {
            let writes = self.timer.as_mut().and_then(|t| t.pass_writes());
            let mut raw = self.state.counters.begin_pass(encoder, "springsim.adaptive_frame", writes);
            let mut pass = CountedPass::new(&mut raw, &self.state.counters).with_timer(self.timer.as_mut());
            // the steps are counted when the frame's report tells how many ran (GpuSimulator::poll_reports)
            let end =
                StepEnd { strain: self.strain.as_ref(), self_collider: self.self_collider.as_ref(), colliders: self.colliders.as_ref() };
            ad.encode_begin(&mut pass);
            for k in 0..slots {
                let gate = ad.encode_trial(&mut pass);
                pass.set_gate(Some(gate));
                implicit.encode_step(&mut pass, 0, n, self.settings.cg_max_iterations);
                end.encode(&mut pass, 1, n, 0);
                implicit.encode_strain(&mut pass, 0, n);
                ad.encode_energy(&mut pass, n);
                let gate = pass.set_gate(None);
                if let Some(s) = ad.encode_judge(&mut pass, gate, n, k == 0)? {
                    sizes = s;
                }
            }
            ad.encode_end(&mut pass);
            pass.finish();
        }
        if let Some(t) = &self.timer {
            t.resolve(encoder);
        }
        if let Integrator::Implicit(implicit) = &mut self.integrator {
            implicit.device_adaptive(&self.device, &self.options, &self.state)?.write_tables(
                &self.queue,
                &self.state.counters,
                config,
                sizes,
            );
        }
        self.time += frame;
        self.prepared = None;
        Ok(())
    }

    /// After an adaptive frame's report: a frame that forced `forced` steps (its room for halvings ran
    /// out) doubles the room of the frames recorded from now on, up to [`ADAPTIVE_ROOM_GROWTH`] times
    /// `max_frame_halvings` (a contact-rich scene needs many steps at a small h; a frame it does not
    /// use costs its gated dispatches, zero workgroups each). The room goes back to the setting with new
    /// settings or a new method.
    pub(crate) fn note_forced_steps(&mut self, forced: usize) {
        let cap = ADAPTIVE_ROOM_GROWTH * self.settings.max_frame_halvings;
        if forced > 0 && self.adaptive_room < cap {
            self.adaptive_room = (2 * self.adaptive_room).min(cap);
        }
    }

    /// Records the copy of the adaptive frame's report after the PCG's words (the integrator's report at
    /// `at` in `dst`); returns its bytes (0 without the adaptive step).
    pub(super) fn encode_adaptive_report(&self, encoder: &mut wgpu::CommandEncoder, dst: &wgpu::Buffer, at: u64) -> u64 {
        match &self.integrator {
            Integrator::Implicit(i) => i.adaptive().map_or(0, |a| a.encode_report(encoder, dst, at + ADAPTIVE_REPORT_AT)),
            _ => 0,
        }
    }

    /// The adaptive frame's steps from the integrator's report bytes (`None`: not an adaptive frame).
    pub(crate) fn decode_adaptive_report(&self, bytes: &[u8]) -> Option<AdaptiveReport> {
        if self.method != Method::ImplicitEuler {
            return None;
        }
        bytes.get(ADAPTIVE_REPORT_AT as usize..).and_then(AdaptiveReport::decode)
    }
}
