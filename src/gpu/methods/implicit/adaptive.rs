//! Implicit Euler's adaptive step on the device (`shaders/adaptive.wgsl`; Kauppila §3.2.3): the frame
//! the pipelined path records for `adaptive: true`. The frame is recorded once, as a fixed number of
//! trial slots (the plan's steps and room for [`crate::StepSettings::max_frame_halvings`] halvings);
//! before each slot a one-thread kernel picks the trial's step and writes the indirect dispatch
//! arguments of the trial's kernels (zero workgroups once the frame is full), after it a one-thread
//! kernel judges the trial as [`crate::stepping::adaptive::AdaptiveStep::judge`] does and gates the
//! copy of the accepted state. Nothing is read back inside the frame: the steps taken come back in the
//! frame's report.

use crate::error::{Error, Result};
use crate::gpu::base::alloc::{Allocator, STORAGE_RW};
use crate::gpu::base::layout::{grid, GpuParams, CG_STATE_WORDS, WORKGROUP_SIZE};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build_specialized, params, storage, Bindings, Kernel};
use crate::gpu::base::state::GpuState;
use crate::gpu::profiling::cost::{CountedPass, Gate, GpuCounters, Phase};
use crate::gpu::reports::signals::StepEnergyKernels;
use crate::method::{StepSettings, ADAPTIVE_MIN_FRACTION, STEP_ENERGY_SLACK};
use crate::reference::model::CpuModel;
use crate::reference::signals::{step_power_constant, step_power_fields};

/// The most the room for halvings of implicit Euler's adaptive frame grows, as a multiple of
/// `max_frame_halvings`: 16 halvings by default, which the `folds` scene needs (at 4 its frames forced
/// steps at the planned h, 21 in 30 frames, and the energy check's guard reported a divergence).
pub const ADAPTIVE_ROOM_GROWTH: usize = 4;

/// Steps logged per frame in the report (a frame tries more only with many halvings; they are counted).
pub const ADAPTIVE_LOG: usize = 64;
/// Indirect argument slots of a trial step: one per distinct dispatch size it records.
pub const GATE_SLOTS: usize = 48;
/// The words of the adaptive state (`ad` in `adaptive.wgsl`): 12, then the log.
const STATE_WORDS: usize = 12 + ADAPTIVE_LOG;
/// The first word of the frame's report in the state (`AD_ACCEPTED`).
const REPORT_WORD: usize = 8;
/// Bytes of the report copied from the state: accepted, tried, forced, logged, then the log.
pub const ADAPTIVE_REPORT_BYTES: u64 = (4 * (STATE_WORDS - REPORT_WORD)) as u64;

/// `AdaptiveConfig` (the WGSL twin in `shaders/adaptive.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct AdaptiveConfig {
    /// The planned step (s).
    pub planned: f32,
    /// The frame's length (s).
    pub frame: f32,
    /// The smallest step still halved (s).
    pub floor: f32,
    /// The relative residual above which a solve is retaken with h/2.
    pub retry_residual: f32,
    /// Trial slots recorded per frame.
    pub slots: u32,
    /// Indirect argument slots of a trial.
    pub gate_slots: u32,
    /// Particles.
    pub n: u32,
    /// 1: a trial that gained energy is retaken (0 where something does work no bound covers).
    pub energy_check: u32,
    /// Σ m|g| (N).
    pub mass_g: f32,
    /// The drag against the wind's power bound (W).
    pub power0: f32,
    /// The force fields' power bound per unit of Σ m|v| (m/s²).
    pub fields: f32,
    /// Padding.
    pub _pad: u32,
}

/// A frame's adaptive steps, from its report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdaptiveReport {
    /// Steps accepted.
    pub accepted: usize,
    /// Steps tried.
    pub trials: usize,
    /// Steps accepted although strained or short, because the frame's trial slots ran out.
    pub forced: usize,
    /// The first [`ADAPTIVE_LOG`] steps tried: (h, accepted).
    pub log: Vec<(f64, bool)>,
}

impl AdaptiveReport {
    /// Decodes the bytes copied by [`DeviceAdaptive::encode_report`].
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() < ADAPTIVE_REPORT_BYTES as usize {
            return None;
        }
        let w: &[u32] = bytemuck::cast_slice(&bytes[..ADAPTIVE_REPORT_BYTES as usize]);
        let logged = (w[3] as usize).min(ADAPTIVE_LOG);
        let log = w[4..4 + logged].iter().map(|&e| (f32::from_bits(e & 0x7fff_ffff) as f64, e & 0x8000_0000 == 0)).collect();
        Some(AdaptiveReport { accepted: w[0] as usize, trials: w[1] as usize, forced: w[2] as usize, log })
    }
}

/// The adaptive step's kernels, buffers and bind group (made with the first adaptive frame).
pub struct DeviceAdaptive {
    begin: Kernel,
    trial: Kernel,
    judge: Kernel,
    accept: Kernel,
    end: Kernel,
    group: Bindings,
    /// The copy's: the config and the state.
    copy_group: Bindings,
    config: wgpu::Buffer,
    state: wgpu::Buffer,
    /// The indirect arguments: [`GATE_SLOTS`] for the trial, then the accept gate.
    gate: wgpu::Buffer,
    /// The trial's energy check.
    pub energy: StepEnergyKernels,
    /// The config and the gate's sizes last written (written again only when they change).
    written: Option<(AdaptiveConfig, Vec<[u32; 2]>)>,
    /// Bytes of the buffers.
    pub bytes: u64,
}

impl DeviceAdaptive {
    /// Compiles the kernels and allocates the state for `st`, with the PCG's status words `cg_status`.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState, cg_status: &wgpu::Buffer) -> Result<Self> {
        let copy = [params(0), storage(1, false), storage(2, true)];
        let entries =
            [copy.as_slice(), &[storage(3, false), storage(4, false), storage(5, false), storage(6, false), storage(7, true)]].concat();
        let names = ["adaptive_begin", "adaptive_trial", "adaptive_judge", "adaptive_end"];
        let constants = [
            ("ADAPTIVE_LOG", ADAPTIVE_LOG as f64),
            ("PARAMS_H_WORD", (std::mem::offset_of!(GpuParams, h) / 4) as f64),
            ("STEP_ENERGY_SLACK", STEP_ENERGY_SLACK),
        ];
        let k = build_specialized(device, options, "adaptive.wgsl", &[&entries], &names, &constants)?;
        let layout = k.layout(0)?;
        // the copy's pipeline binds the config and the state only: its dispatch reads the gate as its
        // indirect arguments
        let a = build_specialized(device, options, "adaptive.wgsl", &[&copy], &["adaptive_accept"], &constants)?;
        let mut alloc = Allocator::new(device);
        let config = alloc.params("springsim.adaptive_config", std::mem::size_of::<AdaptiveConfig>() as u64)?;
        let state = alloc.buffer("springsim.adaptive_state", (4 * STATE_WORDS) as u64, STORAGE_RW)?;
        let usage = STORAGE_RW | wgpu::BufferUsages::INDIRECT;
        let gate = alloc.buffer("springsim.adaptive_gate", (12 * (GATE_SLOTS + 1)) as u64, usage)?;
        let energy = StepEnergyKernels::new(device, options, st)?;
        let buffers = [&config, &st.state[0], &st.state[1], &st.params, cg_status, &state, &gate, &energy.out];
        let group = bind(device, &layout, "springsim.adaptive", &buffers);
        let copy_group = bind(device, &a.layout(0)?, "springsim.adaptive_accept", &[&config, &st.state[0], &st.state[1]]);
        Ok(DeviceAdaptive {
            begin: k.pipeline("adaptive_begin")?,
            trial: k.pipeline("adaptive_trial")?,
            judge: k.pipeline("adaptive_judge")?,
            accept: a.pipeline("adaptive_accept")?,
            end: k.pipeline("adaptive_end")?,
            group,
            copy_group,
            config,
            state,
            gate,
            written: None,
            bytes: alloc.bytes() + energy.bytes,
            energy,
        })
    }

    /// Trial slots a frame of `substeps` planned steps records: three for each of the `halvings` it has
    /// room for (the discarded step, and the climb back: two steps at each halved h before h doubles),
    /// so that a frame halving k ≤ `halvings` times in a row still ends as the blocking driver's does.
    pub fn slots(substeps: usize, halvings: usize) -> usize {
        substeps + 3 * halvings
    }

    /// The config for the planned step `planned` and `slots` trial slots of a frame of `frame` seconds of
    /// model `m` (the energy check's constants; off where something does work no bound covers:
    /// [`CpuModel::unbounded_work`], as on the CPU).
    pub fn config(m: &CpuModel, planned: f64, frame: f64, slots: usize, settings: &StepSettings) -> AdaptiveConfig {
        let n = m.n;
        AdaptiveConfig {
            planned: planned as f32,
            frame: frame as f32,
            floor: (planned * ADAPTIVE_MIN_FRACTION) as f32,
            retry_residual: settings.retry_residual as f32,
            slots: slots as u32,
            gate_slots: GATE_SLOTS as u32,
            n: n as u32,
            energy_check: u32::from(!m.unbounded_work()),
            mass_g: (m.mass.iter().sum::<f64>() * m.gravity.norm()) as f32,
            power0: step_power_constant(m) as f32,
            fields: step_power_fields(m) as f32,
            _pad: 0,
        }
    }

    /// Starts again from the planned step (a new plan, method or state): clears the step in use.
    pub fn reset(&self, queue: &wgpu::Queue, counters: &GpuCounters) {
        counters.write_buffer(queue, &self.state, 0, bytemuck::cast_slice(&[0u32, 0u32]));
    }

    /// Records a one-thread kernel.
    fn one(&self, pass: &mut CountedPass, k: &Kernel) {
        pass.phase(Phase::Integrate);
        pass.set_pipeline(k);
        pass.set_bind_group(0, &self.group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// Records the frame's start (`adaptive_begin`): its time and report at zero.
    pub fn encode_begin(&self, pass: &mut CountedPass) {
        self.one(pass, &self.begin);
    }

    /// Records the choice of a trial slot's step (`adaptive_trial`), and returns the gate that the
    /// trial's dispatches are recorded through ([`CountedPass::set_gate`]).
    pub fn encode_trial<'g>(&'g self, pass: &mut CountedPass) -> Gate<'g> {
        self.one(pass, &self.trial);
        Gate::new(&self.gate, GATE_SLOTS)
    }

    /// Records the trial's energy check (two dispatches, through the trial's gate), after its strain check.
    pub fn encode_energy(&self, pass: &mut CountedPass, n: usize) {
        self.energy.encode(pass, n);
    }

    /// Records the trial's judgement (`adaptive_judge`) and the gated copy of an accepted state
    /// (`adaptive_accept`), after the trial recorded through `gate`; returns the gate's sizes when
    /// `sizes` (every trial records the same ones: the first slot's are kept). An error where the trial
    /// recorded more distinct dispatch sizes than [`GATE_SLOTS`].
    pub fn encode_judge(&self, pass: &mut CountedPass, gate: Option<Gate>, n: usize, sizes: bool) -> Result<Option<Vec<[u32; 2]>>> {
        let sizes = match gate {
            Some(g) if g.overflowed() => {
                return Err(Error::internal_gpu(format!("the adaptive step's trial records more than {GATE_SLOTS} dispatch sizes")));
            }
            Some(g) => sizes.then(|| g.sizes().to_vec()),
            None => None,
        };
        self.one(pass, &self.judge);
        let (x, y) = accept_grid(n);
        pass.set_pipeline(&self.accept);
        pass.set_bind_group(0, &self.copy_group, &[]);
        pass.dispatch_indirect(&self.gate, (12 * GATE_SLOTS) as u64, x as u64 * y as u64);
        Ok(sizes)
    }

    /// Records the frame's end (`adaptive_end`: Params.h back to the planned step).
    pub fn encode_end(&self, pass: &mut CountedPass) {
        self.one(pass, &self.end);
    }

    /// Writes the config and the gate's dispatch sizes (the trial's `sizes`, then the accept copy's)
    /// where they changed since the last write: queue writes, landing before the frame's submit.
    pub fn write_tables(&mut self, queue: &wgpu::Queue, counters: &GpuCounters, config: AdaptiveConfig, sizes: Vec<[u32; 2]>) {
        if self.written.as_ref().is_some_and(|(c, s)| *c == config && *s == sizes) {
            return;
        }
        counters.write_buffer(queue, &self.config, 0, bytemuck::bytes_of(&config));
        let mut words = vec![0u32; 3 * (GATE_SLOTS + 1)];
        for (s, [x, y]) in sizes.iter().enumerate() {
            words[3 * s..3 * s + 2].copy_from_slice(&[*x, *y]);
        }
        let (x, y) = accept_grid(config.n as usize);
        words[3 * GATE_SLOTS..3 * GATE_SLOTS + 2].copy_from_slice(&[x, y]);
        counters.write_buffer(queue, &self.gate, 0, bytemuck::cast_slice(&words));
        self.written = Some((config, sizes));
    }

    /// Records the copy of the frame's report words into `dst` from byte `at`; returns their bytes.
    pub fn encode_report(&self, encoder: &mut wgpu::CommandEncoder, dst: &wgpu::Buffer, at: u64) -> u64 {
        encoder.copy_buffer_to_buffer(&self.state, (4 * REPORT_WORD) as u64, dst, at, ADAPTIVE_REPORT_BYTES);
        ADAPTIVE_REPORT_BYTES
    }
}

/// The PCG's status words come first in implicit Euler's report; the adaptive report follows them.
pub const ADAPTIVE_REPORT_AT: u64 = (CG_STATE_WORDS * 4) as u64;

/// The workgroups of `adaptive_accept` over the 2n vec4 of the state.
fn accept_grid(n: usize) -> (u32, u32) {
    grid((2 * n as u32).div_ceil(WORKGROUP_SIZE))
}
