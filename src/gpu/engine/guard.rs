//! The GPU engine's side of the divergence guard ([`crate::stepping::guard`]): its signals (one
//! read-back of the state, judged on the host in f64) and its checkpoint (a copy of the state buffer
//! on the device: a recorded copy, no read-back, no wait).

use super::GpuEngine;
use crate::engine::{Checkpoint, Engine, Signals};
use crate::error::{Error, Result};
use crate::reference::model::V3;

impl GpuEngine {
    /// The guard's signals: the state read back (2n `vec4<f32>`, one submit and wait) and judged by
    /// [`Signals::of`] on the host.
    pub(super) fn guard_signals(&mut self) -> Result<Signals> {
        let (x, v) = self.read_state()?;
        let x: Vec<V3> = x.into_iter().map(V3::from).collect();
        let v: Vec<V3> = v.into_iter().map(V3::from).collect();
        Ok(Signals::of(&self.model, &x, &v))
    }

    /// Copies `state[0]` into the checkpoint buffer (allocated, within the device's limits, on the first
    /// call) by one recorded copy; nothing is waited for.
    pub(super) fn save_checkpoint(&mut self) -> Result<Checkpoint> {
        let bytes = self.state.state_bytes();
        if self.checkpoint.is_none() {
            let usage = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
            let mut alloc = crate::gpu::base::alloc::Allocator::new(&self.device);
            self.checkpoint = Some(alloc.buffer("springsim.checkpoint", bytes, usage)?);
        }
        let Some(saved) = &self.checkpoint else { return Err(Error::internal_gpu("no checkpoint buffer")) };
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.checkpoint") });
        enc.copy_buffer_to_buffer(&self.state.state[0], 0, saved, 0, bytes);
        self.state.counters.submit(&self.queue, enc.finish());
        Ok(Checkpoint::Device)
    }

    /// Copies the checkpoint back into `state[0]`; LEU re-linearizes and implicit Euler's CG starts
    /// again from zero.
    pub(super) fn restore_checkpoint(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        match checkpoint {
            Checkpoint::Host((x, v)) => return self.write_state(x, v),
            Checkpoint::Device => {}
        }
        let Some(saved) = &self.checkpoint else {
            return Err(Error::internal_gpu("rollback without a checkpoint"));
        };
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.rollback") });
        enc.copy_buffer_to_buffer(saved, 0, &self.state.state[0], 0, self.state.state_bytes());
        self.state.counters.submit(&self.queue, enc.finish());
        self.integrator.relinearize();
        if let super::Integrator::Implicit(implicit) = &self.integrator {
            implicit.clear_solution(&self.device, &self.queue, &self.state.counters);
        }
        Ok(())
    }
}
