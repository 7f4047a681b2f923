//! Provot's strain limiting on the GPU (`shaders/strain_limit.wgsl`, twin
//! [`crate::reference::strain_limit`]), applied after every step of every method, before the colliders:
//! the kernels, compiled only for a model with strain limiting, a scratch state the Jacobi passes
//! ping-pong with, and the pass's uniform. Nothing is added to the shared `Params`.

use super::alloc::{Allocator, STORAGE_RW};
use super::cost::{CountedPass, GpuCounters, Phase};
use super::layout::{groups, StrainLimitInfo};
use super::options::GpuOptions;
use super::pipelines::{bind, build, storage, uniform};
use super::state::GpuState;
use crate::error::Result;
use crate::model::StrainLimit;
use crate::reference::strain_limit::VelocityRule;

/// The strain-limiting kernels, buffers and bind groups of one model.
pub struct StrainLimiter {
    /// `strain_limit_pass`.
    pass: wgpu::ComputePipeline,
    /// `strain_limit_copy`.
    copy: wgpu::ComputePipeline,
    /// Per state buffer q: (state\[q\] → scratch, scratch → state\[q\]).
    groups: [[wgpu::BindGroup; 2]; 2],
    /// Jacobi passes per step.
    passes: u32,
    /// The uniform `StrainLimitInfo`, rewritten when the method (and so the velocity rule) changes.
    info: wgpu::Buffer,
    /// The constants in `info`.
    consts: StrainLimitInfo,
    /// Bytes of the buffers.
    pub bytes: u64,
}

impl StrainLimiter {
    /// Compiles the kernels, allocates the scratch state (checked against the device's limits) and the
    /// uniform, and builds the bind groups; `None` without strain limiting (then nothing is compiled or
    /// recorded and the steps are exactly those of a model without it). `rule`: the method's velocity rule.
    pub fn new(
        device: &wgpu::Device,
        options: &GpuOptions,
        st: &GpuState,
        sl: Option<StrainLimit>,
        rule: VelocityRule,
    ) -> Result<Option<Self>> {
        let Some(sl) = sl else { return Ok(None) };
        sl.validate()?;
        let entries = [uniform(0), storage(1, true), storage(2, true), storage(3, true), storage(4, false), uniform(5), storage(6, true)];
        let k = build(device, options, "strain_limit.wgsl", &[&entries], &["strain_limit_pass", "strain_limit_copy"])?;
        let layout = k.layout(0)?;
        let mut alloc = Allocator::new(device);
        let scratch = alloc.buffer("springsim.strain_scratch", st.state_bytes(), STORAGE_RW)?;
        let consts = StrainLimitInfo { limit: sl.limit as f32, relaxation: sl.relaxation as f32, rod: rule.rod_flag(), _pad: 0 };
        let usage = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
        let info = alloc.buffer_init("springsim.strain_info", bytemuck::bytes_of(&consts), usage)?;
        let group = |src: &wgpu::Buffer, dst: &wgpu::Buffer| {
            bind(device, &layout, "springsim.strain_limit", &[&st.params, &st.csr, &st.nbr, src, dst, &info, &st.nbr_1])
        };
        let groups = [0, 1].map(|q| [group(&st.state[q], &scratch), group(&scratch, &st.state[q])]);
        Ok(Some(StrainLimiter {
            pass: k.pipeline("strain_limit_pass")?,
            copy: k.pipeline("strain_limit_copy")?,
            groups,
            passes: sl.passes,
            info,
            consts,
            bytes: alloc.bytes(),
        }))
    }

    /// Sets the velocity rule (when the method changes), by a queue write before the next submit.
    pub fn set_rule(&mut self, counters: &GpuCounters, queue: &wgpu::Queue, rule: VelocityRule) {
        if self.consts.rod != rule.rod_flag() {
            self.consts.rod = rule.rod_flag();
            counters.write_buffer(queue, &self.info, 0, bytemuck::bytes_of(&self.consts));
        }
    }

    /// Jacobi passes per step.
    pub fn passes(&self) -> u32 {
        self.passes
    }

    /// Records the passes on `state[q]` (n particles): pass k reads state\[q\] (k even) or the scratch
    /// and writes the other; an odd count ends with a copy back into state\[q\].
    pub fn encode(&self, pass: &mut CountedPass, q: usize, n: usize) {
        let g = groups(n);
        pass.phase(Phase::Collide);
        pass.set_pipeline(&self.pass);
        for k in 0..self.passes as usize {
            pass.set_bind_group(0, &self.groups[q][k % 2], &[]);
            pass.dispatch_workgroups(g, 1, 1);
        }
        if self.passes % 2 == 1 {
            pass.set_pipeline(&self.copy);
            pass.set_bind_group(0, &self.groups[q][1], &[]);
            pass.dispatch_workgroups(g, 1, 1);
        }
    }
}
