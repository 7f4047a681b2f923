//! The gusting aerodynamic wind on the GPU (`shaders/wind.wgsl`, twin
//! [`crate::reference::fields::wind_kick`]): a pass before every step of every method that copies the
//! state with the wind's impulse v ← v + h a_wind into the other state buffer (the step then runs from
//! there), compiled and allocated only for a model with [`crate::model::AeroWind`]. Its vertex→triangle
//! lists are bound to this one kernel only: the force gathers of the methods are unchanged (one extra
//! dispatch a step, reading the state once and writing it once, instead of a triangle gather in every
//! force evaluation).

use crate::error::Result;
use crate::gpu::base::alloc::{Allocator, STORAGE_RW};
use crate::gpu::base::layout::groups;
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build, params, storage, Bindings, Kernel};
use crate::gpu::base::state::GpuState;
use crate::gpu::profiling::cost::{CountedPass, Phase};
use crate::reference::model::CpuModel;

/// One model's wind: the kernel, the triangle lists and the bind groups.
pub struct Wind {
    pipeline: Kernel,
    /// n + 1 offsets, then (j, k) per incident triangle (see [`crate::model::TriIncidence`]).
    _tri: wgpu::Buffer,
    /// A copy of the step's start state for implicit Euler's trial step (which must leave `state[0]`).
    base: wgpu::Buffer,
    /// state\[0\] → state\[1\], state\[1\] → state\[0\], base → state\[0\].
    groups: [Bindings; 3],
    /// Bytes of the buffers.
    pub bytes: u64,
}

impl Wind {
    /// Compiles the kernel and uploads the triangle lists; `None` for a model without the wind (nothing
    /// compiled, recorded or allocated).
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState, m: &CpuModel) -> Result<Option<Self>> {
        if m.aero.is_none() {
            return Ok(None);
        }
        let entries = [params(0), storage(1, true), storage(2, true), storage(3, false)];
        let k = build(device, options, "wind.wgsl", &[&entries], &["wind_kick"])?;
        let layout = k.layout(0)?;
        let mut words = m.tri.offsets.clone();
        words.extend(m.tri.others.iter().flatten());
        let mut alloc = Allocator::new(device);
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let tri = alloc.buffer_init("springsim.wind_tri", bytemuck::cast_slice(&words), usage)?;
        let base = alloc.buffer("springsim.wind_base", st.state_bytes(), STORAGE_RW)?;
        let g = |src: &wgpu::Buffer, dst: &wgpu::Buffer| bind(device, &layout, "springsim.wind", &[&st.params, &tri, src, dst]);
        let groups = [g(&st.state[0], &st.state[1]), g(&st.state[1], &st.state[0]), g(&base, &st.state[0])];
        Ok(Some(Wind { pipeline: k.pipeline("wind_kick")?, _tri: tri, base, groups, bytes: alloc.bytes() }))
    }

    fn dispatch(&self, pass: &mut CountedPass, group: usize, n: usize) {
        pass.phase(Phase::Forces);
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.groups[group], &[]);
        pass.dispatch_workgroups(groups(n), 1, 1);
    }

    /// Records `wind_kick` from state\[p\] into state\[1 − p\] (n particles): the step then runs from 1 − p.
    pub fn encode(&self, pass: &mut CountedPass, p: usize, n: usize) {
        self.dispatch(pass, p, n);
    }

    /// Implicit Euler's trial step: copies state\[0\] aside (before the pass; [`Wind::encode_trial`] then
    /// kicks it back into state\[0\], and [`Wind::restore`] puts the start state back after the pass).
    pub fn save(&self, enc: &mut wgpu::CommandEncoder, st: &GpuState) {
        enc.copy_buffer_to_buffer(&st.state[0], 0, &self.base, 0, st.state_bytes());
    }

    /// Records `wind_kick` from the saved start state into state\[0\].
    pub fn encode_trial(&self, pass: &mut CountedPass, n: usize) {
        self.dispatch(pass, 2, n);
    }

    /// Copies the saved start state back into state\[0\] (after the trial's pass).
    pub fn restore(&self, enc: &mut wgpu::CommandEncoder, st: &GpuState) {
        enc.copy_buffer_to_buffer(&self.base, 0, &st.state[0], 0, st.state_bytes());
    }
}
