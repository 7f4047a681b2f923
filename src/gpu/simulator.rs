//! `GpuSimulator`: a model on a caller's device. `encode_frame` records a whole frame into the caller's
//! encoder without submitting (the embedding path); `step_frame` submits and waits (CLI, tests, window).

use super::explicit::{ExplicitGroups, ExplicitPipelines};
use super::layout::{groups, GpuParams};
use super::leu::LeuPipelines;
use super::power::PowerPipelines;
use super::state::{pack_state, GpuState};
use crate::cpu::CpuModel;
use crate::error::{Error, Result};
use crate::method::{plan, Method, StepPlan, StepSettings};
use crate::model::Model;
use crate::sim::{check_state_len, FrameReport, Simulator};

/// Every kernel springsim has, compiled once per device.
pub struct GpuPipelines {
    /// Explicit integrators.
    pub explicit: ExplicitPipelines,
    /// Linearized explicit Euler.
    pub leu: LeuPipelines,
    /// Power iteration.
    pub power: PowerPipelines,
}

impl GpuPipelines {
    /// Compiles every kernel on `device`.
    pub fn new(device: &wgpu::Device) -> Self {
        GpuPipelines { explicit: ExplicitPipelines::new(device), leu: LeuPipelines::new(device), power: PowerPipelines::new(device) }
    }
}

/// A simulation on the GPU.
pub struct GpuSimulator {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipes: GpuPipelines,
    state: GpuState,
    explicit_groups: ExplicitGroups,
    leu_groups: [wgpu::BindGroup; 2],
    power_groups: [wgpu::BindGroup; 2],
    model: CpuModel,
    method: Method,
    settings: StepSettings,
    plan: StepPlan,
    adapter: String,
    steps_since_lin: usize,
    leu_retries: usize,
}

/// Maps `buffer[..bytes]` and copies it out.
pub(crate) fn read_buffer(device: &wgpu::Device, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
    let slice = buffer.slice(..bytes);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| Error::Gpu(e.to_string()))?;
    rx.recv().map_err(|e| Error::Gpu(e.to_string()))?.map_err(|e| Error::Gpu(e.to_string()))?;
    let data = slice.get_mapped_range().map_err(|e| Error::Gpu(e.to_string()))?.to_vec();
    buffer.unmap();
    Ok(data)
}

impl GpuSimulator {
    /// Builds the simulation on the caller's device and queue: uploads the model, compiles the kernels
    /// and computes k₀ by power iteration on the GPU (one submit and one read-back, at construction).
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, model: &Model, method: Method, settings: StepSettings) -> Result<Self> {
        settings.validate()?;
        let cm = CpuModel::new(model)?;
        let state = GpuState::new(device, &cm, &model.positions, &model.velocities);
        let pipes = GpuPipelines::new(device);
        let explicit_groups = ExplicitGroups::new(device, &pipes.explicit, &state);
        let leu_groups = pipes.leu.groups(device, &state);
        let power_groups = pipes.power.groups(device, &state);
        let mut sim = GpuSimulator {
            device: device.clone(),
            queue: queue.clone(),
            pipes,
            state,
            explicit_groups,
            leu_groups,
            power_groups,
            plan: plan(method, 0.0, cm.drag, &settings),
            model: cm,
            method,
            settings,
            adapter: String::from("caller's device"),
            steps_since_lin: usize::MAX,
            leu_retries: 0,
        };
        sim.write_params();
        sim.replan()?;
        Ok(sim)
    }

    /// Names the adapter in reports.
    pub fn with_adapter_name(mut self, name: impl Into<String>) -> Self {
        self.adapter = name.into();
        self
    }

    /// The buffers (positions for drawing: `state().state[0]`, range `state().positions_range()`).
    pub fn state(&self) -> &GpuState {
        &self.state
    }

    /// The buffer whose first n `vec4<f32>` are the current positions (`STORAGE | VERTEX | COPY_SRC`).
    pub fn positions_buffer(&self) -> &wgpu::Buffer {
        &self.state.state[0]
    }

    /// The laid-out model.
    pub fn model(&self) -> &CpuModel {
        &self.model
    }

    fn write_params(&self) {
        let m = &self.model;
        let p = GpuParams {
            gravity: [m.gravity.x as f32, m.gravity.y as f32, m.gravity.z as f32, m.drag as f32],
            wind: [m.wind.x as f32, m.wind.y as f32, m.wind.z as f32, m.central_strength as f32],
            center: [
                m.central_center.x as f32,
                m.central_center.y as f32,
                m.central_center.z as f32,
                self.settings.leu_speed_limit as f32,
            ],
            n_particles: m.n as u32,
            n_springs: m.sa.len() as u32,
            h: self.plan.h as f32,
            alpha: self.plan.alpha as f32,
        };
        self.queue.write_buffer(&self.state.params, 0, bytemuck::bytes_of(&p));
    }

    /// k₀ by `iters` power iterations on the GPU at the current positions (submits and reads back).
    pub fn power_k0(&mut self, iters: usize) -> Result<f64> {
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.power") });
        self.pipes.power.encode(&self.queue, &mut enc, &self.state, &self.power_groups, &self.model, iters);
        enc.copy_buffer_to_buffer(&self.state.scalars, 0, &self.state.readback, 0, 16);
        self.queue.submit([enc.finish()]);
        let bytes = read_buffer(&self.device, &self.state.readback, 16)?;
        let s: &[f32] = bytemuck::cast_slice(&bytes);
        Ok(s[1] as f64)
    }

    /// Recomputes k₀ at the current state and re-plans the step (Shinya §5.3).
    pub fn replan(&mut self) -> Result<()> {
        let k0 = self.power_k0(self.settings.power_iterations)?;
        self.plan = plan(self.method, k0, self.model.drag, &self.settings);
        self.steps_since_lin = usize::MAX;
        self.write_params();
        Ok(())
    }

    /// Sets the step h outright (and α for it), keeping k₀.
    pub fn set_h(&mut self, h: f64) -> Result<()> {
        self.settings.fixed_h = Some(h);
        self.settings.frame_dt = h;
        self.settings.validate()?;
        self.plan = plan(self.method, self.plan.k0, self.model.drag, &self.settings);
        self.steps_since_lin = usize::MAX;
        self.write_params();
        Ok(())
    }

    /// Records one frame (all its steps) into `encoder`, without submitting. The state ends in
    /// `state[0]`. On the LEU path the divergence retries are counted on the GPU; `leu_retries_gpu`
    /// reads them.
    pub fn encode_frame(&mut self, encoder: &mut wgpu::CommandEncoder) {
        self.encode_steps(encoder, self.plan.substeps);
    }

    /// Records `steps` steps (a frame is `plan().substeps` of them).
    pub fn encode_steps(&mut self, encoder: &mut wgpu::CommandEncoder, steps: usize) {
        let g = groups(self.state.n);
        if self.method == Method::Leu {
            encoder.clear_buffer(&self.state.flags, 0, Some(8));
        }
        let mut p = 0usize;
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("springsim.frame"), timestamp_writes: None });
            let ex = &self.pipes.explicit;
            let eg = &self.explicit_groups;
            for _ in 0..steps {
                let mut run = |pipe: &wgpu::ComputePipeline, bg: &wgpu::BindGroup| {
                    pass.set_pipeline(pipe);
                    pass.set_bind_group(0, bg, &[]);
                    pass.dispatch_workgroups(g, 1, 1);
                };
                match self.method {
                    Method::ExplicitEuler => run(&ex.euler, &eg.direct[p]),
                    Method::SymplecticEuler => run(&ex.symplectic, &eg.direct[p]),
                    Method::Midpoint => {
                        run(&ex.midpoint[0], &eg.to_t0[p]);
                        run(&ex.midpoint[1], &eg.t0_to_out[p]);
                    }
                    Method::Rk4 => {
                        run(&ex.rk4[0], &eg.to_t0[p]);
                        run(&ex.rk4[1], &eg.t0_to_t1[p]);
                        run(&ex.rk4[2], &eg.t1_to_t0[p]);
                        run(&ex.rk4[3], &eg.t0_to_out[p]);
                    }
                    Method::Leu => {
                        let lp = &self.pipes.leu;
                        if self.steps_since_lin >= self.plan.relinearize_every {
                            run(&lp.linearize, &self.leu_groups[p]);
                            self.steps_since_lin = 0;
                        }
                        run(&lp.step, &self.leu_groups[p]);
                        run(&lp.fixup, &self.leu_groups[p]);
                        self.steps_since_lin += 1;
                    }
                }
                p ^= 1;
            }
        }
        if p == 1 {
            encoder.copy_buffer_to_buffer(&self.state.state[1], 0, &self.state.state[0], 0, self.state.state_bytes());
        }
    }

    /// Submits one encoder of `steps` steps and waits for it.
    pub fn run_steps(&mut self, steps: usize) -> Result<()> {
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.steps") });
        self.encode_steps(&mut enc, steps);
        self.queue.submit([enc.finish()]);
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| Error::Gpu(e.to_string()))?;
        Ok(())
    }

    // --- viewer additions (interaction): keep this block together ---

    /// Overwrites one particle's position and velocity and pins or frees it (w = 1/m or 0), without
    /// touching the rest of the state: the window's mouse drag (a kinematic position constraint) and
    /// pin toggle. The CPU twin is [`crate::cpu::CpuSimulator::set_particle`]. Queued before the next
    /// submit, so it takes effect at the start of the next frame.
    pub fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        let n = self.model.n;
        if i >= n {
            return Err(Error::param("particle", i, format!("must be < {n}")));
        }
        let w = if pinned { 0.0 } else { 1.0 / self.model.mass[i] };
        self.model.inv_mass[i] = w;
        let v = if pinned { [0.0; 3] } else { v };
        let xr = [x[0] as f32, x[1] as f32, x[2] as f32, w as f32];
        let vr = [v[0] as f32, v[1] as f32, v[2] as f32, 0.0f32];
        self.queue.write_buffer(&self.state.state[0], (i * 16) as u64, bytemuck::bytes_of(&xr));
        self.queue.write_buffer(&self.state.state[0], ((n + i) * 16) as u64, bytemuck::bytes_of(&vr));
        self.steps_since_lin = usize::MAX;
        Ok(())
    }

    /// Whether particle `i` is pinned now (w = 0).
    pub fn is_pinned(&self, i: usize) -> bool {
        self.model.inv_mass.get(i).is_some_and(|&w| w == 0.0)
    }

    // --- end of viewer additions ---

    /// LEU: the divergence retries counted on the GPU so far (one read-back).
    pub fn leu_retries_gpu(&self) -> Result<usize> {
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.flags") });
        enc.copy_buffer_to_buffer(&self.state.flags, 0, &self.state.readback, 0, 16);
        self.queue.submit([enc.finish()]);
        let bytes = read_buffer(&self.device, &self.state.readback, 16)?;
        Ok(bytemuck::cast_slice::<u8, u32>(&bytes)[2] as usize)
    }
}

impl Simulator for GpuSimulator {
    fn step_frame(&mut self) -> Result<FrameReport> {
        let substeps = self.plan.substeps;
        self.run_steps(substeps)?;
        if self.method == Method::Leu {
            let r = self.leu_retries_gpu()?;
            if r > self.leu_retries {
                self.leu_retries = r;
                // Shinya §5.3: recompute k₀ when divergence is detected.
                self.replan()?;
            }
        }
        Ok(FrameReport { substeps, leu_retries: self.leu_retries })
    }

    fn plan(&self) -> StepPlan {
        self.plan
    }

    fn method(&self) -> Method {
        self.method
    }

    fn set_method(&mut self, method: Method) -> Result<()> {
        self.method = method;
        self.plan = plan(method, self.plan.k0, self.model.drag, &self.settings);
        self.steps_since_lin = usize::MAX;
        self.write_params();
        Ok(())
    }

    fn read_state(&mut self) -> Result<(Vec<[f64; 3]>, Vec<[f64; 3]>)> {
        let bytes = self.state.state_bytes();
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.read") });
        enc.copy_buffer_to_buffer(&self.state.state[0], 0, &self.state.readback, 0, bytes);
        self.queue.submit([enc.finish()]);
        let data = read_buffer(&self.device, &self.state.readback, bytes)?;
        let v4: &[[f32; 4]] = bytemuck::cast_slice(&data);
        let n = self.state.n;
        let conv = |a: &[f32; 4]| [a[0] as f64, a[1] as f64, a[2] as f64];
        Ok((v4[..n].iter().map(conv).collect(), v4[n..2 * n].iter().map(conv).collect()))
    }

    fn write_state(&mut self, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()> {
        check_state_len(self.model.n, x, v)?;
        let packed = pack_state(&self.model, x, v);
        if !packed.is_empty() {
            self.queue.write_buffer(&self.state.state[0], 0, bytemuck::cast_slice(&packed));
        }
        self.steps_since_lin = usize::MAX;
        Ok(())
    }

    fn backend_name(&self) -> String {
        format!("gpu: {}", self.adapter)
    }
}
