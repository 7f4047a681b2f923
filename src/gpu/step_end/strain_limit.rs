//! Provot's strain limiting on the GPU (`shaders/strain_limit.wgsl`, twin
//! [`crate::reference::strain_limit`]), applied after every step of every method, before the colliders:
//! the kernels, compiled only for a model with strain limiting, a scratch state the Jacobi passes
//! ping-pong with, the pass's parameter block and the control words (the stop flag and the tally of passes
//! run). Nothing is added to the shared `Params`.
//!
//! Every step records the cap of passes (`passes`, in pairs, and the copy back of an odd count); once
//! a pair's first pass finds every spring within τ(1 + tolerance), the passes recorded after it return
//! at once on the GPU (the stop is decided there: no read-back, no host round trip). The cost model
//! counts the recorded dispatches with their full workgroups, an upper bound of the work done.

use crate::engine::PassTally;
use crate::error::Result;
use crate::gpu::base::alloc::{Allocator, PARAMS, STORAGE_RW};
use crate::gpu::base::layout::{groups, StrainLimitInfo};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build_specialized, params, storage, Bindings, Kernel};
use crate::gpu::base::specialize::Splits;
use crate::gpu::base::state::read_buffer;
use crate::gpu::base::state::GpuState;
use crate::gpu::profiling::cost::{CountedPass, GpuCounters, Phase};
use crate::model::{StrainLimit, STRAIN_ACCELERATION_AFTER};
use crate::reference::strain_limit::VelocityRule;

/// The words of the control buffer (twins of `CTL_*` in `shaders/strain_limit.wgsl`): passes run in
/// all, steps limited, the most passes of one step.
const CTL_TOTAL: usize = 3;
const CTL_STEPS: usize = 4;
const CTL_MOST: usize = 5;
/// Bytes of the control buffer (eight words).
const CTL_BYTES: u64 = 32;

/// The strain-limiting kernels, buffers and bind groups of one model.
pub struct StrainLimiter {
    /// `strain_limit_first`: a step's first pass (always runs).
    first: Kernel,
    /// `strain_limit_check`: the first pass of a later pair.
    check: Kernel,
    /// `strain_limit_pass`: the second pass of a pair.
    pass: Kernel,
    /// `strain_limit_copy`.
    copy: Kernel,
    /// Per parameter block (plain, accelerated) and state buffer q: (state\[q\] → scratch, scratch → state\[q\]).
    groups: [[[Bindings; 2]; 2]; 2],
    /// Jacobi passes per step.
    passes: u32,
    /// The parameter blocks `StrainLimitInfo` of the plain passes (ω_c = 1) and of the accelerated ones (from
    /// [`STRAIN_ACCELERATION_AFTER`] on), rewritten when the method (and so the velocity rule) changes.
    info: [wgpu::Buffer; 2],
    /// The constants in `info`.
    consts: [StrainLimitInfo; 2],
    /// The control words: the stop flag and the tally (`CTL_*`).
    ctl: wgpu::Buffer,
    /// Bytes of the buffers.
    pub bytes: u64,
}

/// The parameter block of passes with the settings `sl` ([`StrainLimit::for_pass`]) and the velocity rule `rule`.
fn info(sl: &StrainLimit, rule: VelocityRule) -> StrainLimitInfo {
    StrainLimitInfo {
        limit: sl.limit as f32,
        relaxation: sl.relaxation as f32,
        rod: rule.rod_flag(),
        stop: sl.stop_stretch() as f32,
        acceleration: sl.acceleration as f32,
        _pad: [0; 3],
    }
}

impl StrainLimiter {
    /// Compiles the kernels, allocates the scratch state (checked against the device's limits) and the
    /// parameter block, and builds the bind groups; `None` without strain limiting (then nothing is compiled or
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
        let entries = [
            params(0),
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, false),
            params(5),
            storage(6, true),
            storage(7, false),
        ];
        let names = ["strain_limit_first", "strain_limit_check", "strain_limit_pass", "strain_limit_copy"];
        let k = build_specialized(device, options, "strain_limit.wgsl", &[&entries], &names, &Splits::of(st).constants())?;
        let layout = k.layout(0)?;
        let mut alloc = Allocator::new(device);
        let scratch = alloc.buffer("springsim.strain_scratch", st.state_bytes(), STORAGE_RW)?;
        let ctl = alloc.buffer("springsim.strain_ctl", CTL_BYTES, STORAGE_RW)?;
        let consts = [0, STRAIN_ACCELERATION_AFTER].map(|k| info(&sl.for_pass(k), rule));
        let usage = PARAMS;
        let info = [
            alloc.buffer_init("springsim.strain_info_plain", bytemuck::bytes_of(&consts[0]), usage)?,
            alloc.buffer_init("springsim.strain_info_accelerated", bytemuck::bytes_of(&consts[1]), usage)?,
        ];
        let group = |info: &wgpu::Buffer, src: &wgpu::Buffer, dst: &wgpu::Buffer| {
            bind(device, &layout, "springsim.strain_limit", &[&st.params, &st.csr, &st.nbr, src, dst, info, &st.nbr_1, &ctl])
        };
        let groups = [0, 1].map(|a| [0, 1].map(|q| [group(&info[a], &st.state[q], &scratch), group(&info[a], &scratch, &st.state[q])]));
        Ok(Some(StrainLimiter {
            first: k.pipeline("strain_limit_first")?,
            check: k.pipeline("strain_limit_check")?,
            pass: k.pipeline("strain_limit_pass")?,
            copy: k.pipeline("strain_limit_copy")?,
            groups,
            passes: sl.passes,
            info,
            consts,
            ctl,
            bytes: alloc.bytes(),
        }))
    }

    /// Sets the velocity rule (when the method changes), by a queue write before the next submit.
    pub fn set_rule(&mut self, counters: &GpuCounters, queue: &wgpu::Queue, rule: VelocityRule) {
        if self.consts[0].rod != rule.rod_flag() {
            for (c, info) in self.consts.iter_mut().zip(&self.info) {
                c.rod = rule.rod_flag();
                counters.write_buffer(queue, info, 0, bytemuck::bytes_of(c));
            }
        }
    }

    /// Jacobi passes per step.
    pub fn passes(&self) -> u32 {
        self.passes
    }

    /// Records the passes on `state[q]` (n particles): pass k reads state\[q\] (k even: the first of a
    /// pair, which checks) or the scratch and writes the other, with the plain parameter block before
    /// [`STRAIN_ACCELERATION_AFTER`] and the accelerated one from it on; an odd count ends with a copy
    /// back into state\[q\]. What runs after a check that found every spring within the tolerance returns at once.
    pub fn encode(&self, pass: &mut CountedPass, q: usize, n: usize) {
        let g = groups(n);
        pass.phase(Phase::Collide);
        for k in 0..self.passes as usize {
            let pipeline = match k {
                0 => &self.first,
                _ if k % 2 == 0 => &self.check,
                _ => &self.pass,
            };
            pass.set_pipeline(pipeline);
            let accelerated = usize::from(k as u32 >= STRAIN_ACCELERATION_AFTER);
            pass.set_bind_group(0, &self.groups[accelerated][q][k % 2], &[]);
            pass.dispatch_workgroups(g, 1, 1);
        }
        if self.passes % 2 == 1 {
            pass.set_pipeline(&self.copy);
            pass.set_bind_group(0, &self.groups[0][q][1], &[]);
            pass.dispatch_workgroups(g, 1, 1);
        }
    }

    /// The passes run since the limiter was built, read back (one copy, one submit, one read-back: a
    /// stall, for the end of a run).
    pub fn tally(&self, device: &wgpu::Device, queue: &wgpu::Queue, counters: &GpuCounters) -> Result<PassTally> {
        let mut alloc = Allocator::new(device);
        let staging =
            alloc.buffer("springsim.strain_ctl_staging", CTL_BYTES, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.strain_tally") });
        enc.copy_buffer_to_buffer(&self.ctl, 0, &staging, 0, CTL_BYTES);
        counters.submit(queue, enc.finish());
        let data = read_buffer(device, counters, &staging, CTL_BYTES)?;
        let w: &[u32] = bytemuck::cast_slice(&data);
        Ok(PassTally { passes: u64::from(w[CTL_TOTAL]), steps: u64::from(w[CTL_STEPS]), most: w[CTL_MOST] })
    }
}
