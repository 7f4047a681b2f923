//! The GPU engine's side of the pipelined frame ([`crate::GpuSimulator::encode_frame`]): a frame
//! recorded with what the stepping policy needs around it (a restore from or a save into a checkpoint
//! kept on the device, the guard's signals reduced on the device, k₀ re-estimated, the integrator's
//! report copied into a report slot), all in the host's encoder: nothing submitted, nothing waited for.

use super::GpuEngine;
use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::specialize::Splits;
use crate::gpu::methods::integrator::Integrator;
use crate::gpu::methods::power::PowerKernels;
use crate::gpu::profiling::cost::{CountedPass, GpuCounters};
use crate::gpu::reports::signals::{SignalKernels, SIGNAL_BYTES};
use crate::gpu::reports::{INTEGRATOR_AT, POWER_AT, SIGNALS_AT};

/// The checkpoints the pipelined guard keeps on the device: one known good, one waiting for its frame's
/// report.
pub const FRAME_CHECKPOINTS: usize = 2;

/// What a pipelined frame records besides its steps.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameParts<'a> {
    /// Steps to record (`None`: the plan's frame, `plan().substeps`).
    pub steps: Option<usize>,
    /// Copy this checkpoint into the state before the steps (a rollback).
    pub restore: Option<usize>,
    /// Save the state into this checkpoint before the steps (the first frame's: the initial state).
    pub save_before: Option<usize>,
    /// Save the state into this checkpoint after the steps.
    pub save_after: Option<usize>,
    /// Reduce the guard's signals of the state after the steps.
    pub signals: bool,
    /// Re-estimate k₀ at the state after the steps by this many power iterations.
    pub power_iterations: Option<usize>,
    /// The report slot to copy into (signals, k₀, the integrator's report), `None`: no report.
    pub report: Option<&'a wgpu::Buffer>,
}

/// What the frame put into its report slot.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameRecorded {
    /// The signals were copied.
    pub signals: bool,
    /// k₀'s scalars were copied.
    pub power: bool,
    /// Bytes of the integrator's report.
    pub integrator_bytes: u64,
}

impl GpuEngine {
    /// The device the engine runs on.
    pub(crate) fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The engine's queue.
    pub(crate) fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The engine's counters.
    pub(crate) fn counters(&self) -> &GpuCounters {
        &self.state.counters
    }

    /// Sets the simulated time (a rollback to a checkpoint).
    pub(crate) fn set_time(&mut self, t: f64) {
        self.time = t;
        self.prepared = None;
    }

    /// Records one planned frame with `parts` into `encoder` (see [`FrameParts`]); the state ends in
    /// `state[0]`. Compiles the signal kernels and allocates the checkpoints on first use (queue writes
    /// and allocations only).
    pub(crate) fn encode_frame_parts(&mut self, encoder: &mut wgpu::CommandEncoder, parts: &FrameParts) -> Result<FrameRecorded> {
        let bytes = self.state.state_bytes();
        let wanted = [parts.restore, parts.save_before, parts.save_after].into_iter().flatten().max();
        if let Some(k) = wanted {
            let mut alloc = Allocator::new(&self.device);
            while self.frame_checkpoints.len() <= k {
                let usage = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
                self.frame_checkpoints.push(alloc.buffer("springsim.frame_checkpoint", bytes, usage)?);
            }
        }
        if let Some(k) = parts.restore {
            encoder.copy_buffer_to_buffer(&self.frame_checkpoints[k], 0, &self.state.state[0], 0, bytes);
            self.integrator.relinearize();
            if let Integrator::Implicit(implicit) = &self.integrator {
                implicit.encode_clear_solution(encoder);
            }
        }
        if let Some(k) = parts.save_before {
            encoder.copy_buffer_to_buffer(&self.state.state[0], 0, &self.frame_checkpoints[k], 0, bytes);
        }
        let adaptive = parts.steps.is_none() && self.adaptive_on_device();
        if adaptive {
            self.encode_adaptive_frame(encoder)?;
        } else {
            self.encode_steps(encoder, parts.steps.unwrap_or(self.plan.substeps))?;
        }
        let mut recorded = FrameRecorded::default();
        if parts.signals {
            if self.signals.is_none() {
                self.signals = Some(SignalKernels::new(&self.device, &self.options, &self.state)?);
            }
            if let Some(sk) = &self.signals {
                let mut raw = self.state.counters.begin_pass(encoder, "springsim.signals", None);
                let mut pass = CountedPass::new(&mut raw, &self.state.counters);
                sk.encode(&mut pass, self.state.n);
            }
        }
        let mut power = None;
        if let Some(iters) = parts.power_iterations {
            let kernels = match self.power.take() {
                Some(kernels) => kernels,
                None => PowerKernels::new(&self.device, &self.options, Splits::of(&self.state))?,
            };
            let kernels = self.power.insert(kernels);
            power = Some(kernels.record(&self.device, &self.queue, encoder, &self.state, &self.model, iters)?);
        }
        if let Some(k) = parts.save_after {
            encoder.copy_buffer_to_buffer(&self.state.state[0], 0, &self.frame_checkpoints[k], 0, bytes);
        }
        if let Some(dst) = parts.report {
            if let Some(sk) = self.signals.as_ref().filter(|_| parts.signals) {
                encoder.copy_buffer_to_buffer(&sk.out, 0, dst, SIGNALS_AT, SIGNAL_BYTES);
                recorded.signals = true;
            }
            if let Some(scalars) = &power {
                encoder.copy_buffer_to_buffer(scalars, 0, dst, POWER_AT, 16);
                recorded.power = true;
            }
            recorded.integrator_bytes = self.integrator.encode_report(encoder, &self.state, dst, INTEGRATOR_AT);
            if adaptive {
                recorded.integrator_bytes += self.encode_adaptive_report(encoder, dst, INTEGRATOR_AT);
            }
        }
        Ok(recorded)
    }

    /// The stepping policy's report of a frame's steps from the integrator's report bytes.
    pub(crate) fn decode_steps_report(&self, steps: usize, bytes: &[u8]) -> Result<crate::engine::StepsReport> {
        self.steps_report(steps, bytes)
    }

    /// Bytes of the pipelined path's device checkpoints and signal buffers.
    pub(super) fn frame_bytes(&self) -> u64 {
        self.frame_checkpoints.iter().map(|b| b.size()).sum::<u64>() + self.signals.as_ref().map_or(0, |s| s.bytes)
    }
}
