//! `GpuSimulator`: a model on a caller's device. `encode_frame` records a whole frame into the caller's
//! encoder without submitting (the embedding path); `step_frame` submits and waits (CLI, tests, window).

use super::collide::{CollidePipelines, Colliders};
use super::explicit::{ExplicitGroups, ExplicitPipelines};
use super::implicit::ImplicitPipelines;
use super::layout::{groups, CgPass, GpuParams, ImplicitParams, CURSOR_NONE};
use super::leu::LeuPipelines;
use super::power::PowerPipelines;
use super::state::{pack_state, GpuState};
use crate::cpu::CpuModel;
use crate::error::{Error, Result};
use crate::method::{plan, GlobalSolve, Method, StepPlan, StepSettings};
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
    /// Implicit Euler and its PCG.
    pub implicit: ImplicitPipelines,
    /// The colliders.
    pub collide: CollidePipelines,
}

impl GpuPipelines {
    /// Compiles every kernel on `device`.
    pub fn new(device: &wgpu::Device) -> Self {
        GpuPipelines {
            explicit: ExplicitPipelines::new(device),
            leu: LeuPipelines::new(device),
            power: PowerPipelines::new(device),
            implicit: ImplicitPipelines::new(device),
            collide: CollidePipelines::new(device),
        }
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
    implicit_groups: [wgpu::BindGroup; 2],
    pcg_groups: [wgpu::BindGroup; 2],
    model: CpuModel,
    method: Method,
    settings: StepSettings,
    plan: StepPlan,
    adapter: String,
    steps_since_lin: usize,
    leu_retries: usize,
    /// Implicit adaptive step: the step in use, good steps since the last change, and the log.
    h_adaptive: f64,
    good_steps: usize,
    step_log: Vec<(f64, bool)>,
    /// The cursor spring (written into `Params` for the explicit methods only).
    cursor: Option<crate::sim::Cursor>,
    /// The model's colliders, `None` without any.
    colliders: Option<Colliders>,
}

/// The PCG's status words as the GPU left them (`cg_state` in `shaders/pcg.wgsl`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuCgState {
    /// The last solve: 0 ran out of its budget, 1 converged, 2 broke down.
    pub status: u32,
    /// Iterations of the last solve.
    pub iterations: usize,
    /// Final relative residual of the last solve (−1 after a breakdown).
    pub residual: f64,
    /// Iterations summed over the solves since the frame began.
    pub total_iterations: usize,
    /// Breakdowns since the frame began.
    pub breakdowns: usize,
    /// Adaptive step: the last step strained a spring beyond the limit.
    pub strained: bool,
}

/// The implicit method's settings that the GPU cannot honour are errors, not silent changes.
fn check_gpu_settings(method: Method, s: &StepSettings) -> Result<()> {
    if !method.on_gpu() {
        return Err(Error::param("method", method.name(), "runs on the CPU only (use --backend cpu)"));
    }
    s.global.resolve(method)?;
    if method == Method::LocalGlobal {
        return Err(Error::param("method", method.name(), "is not on the GPU yet (use --backend cpu)"));
    }
    if method == Method::ImplicitEuler && s.global == GlobalSolve::Tridiagonal {
        return Err(Error::param("global", "tridiagonal", "the tridiagonal solve runs on the CPU only (use --backend cpu or --global cg)"));
    }
    Ok(())
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
        check_gpu_settings(method, &settings)?;
        let cm = CpuModel::new(model)?;
        let state = GpuState::new(device, &cm, &model.positions, &model.velocities);
        let pipes = GpuPipelines::new(device);
        let explicit_groups = ExplicitGroups::new(device, &pipes.explicit, &state);
        let leu_groups = pipes.leu.groups(device, &state);
        let power_groups = pipes.power.groups(device, &state);
        let implicit_groups = pipes.implicit.groups(device, &state);
        let pcg_groups = pipes.implicit.pcg.groups(device, &state);
        let colliders = Colliders::new(device, &pipes.collide, &state, &cm.colliders);
        let mut sim = GpuSimulator {
            device: device.clone(),
            queue: queue.clone(),
            pipes,
            state,
            explicit_groups,
            leu_groups,
            power_groups,
            implicit_groups,
            pcg_groups,
            plan: plan(method, 0.0, cm.drag, &settings),
            model: cm,
            method,
            settings,
            adapter: String::from("caller's device"),
            steps_since_lin: usize::MAX,
            leu_retries: 0,
            h_adaptive: 0.0,
            good_steps: 0,
            step_log: Vec::new(),
            cursor: None,
            colliders,
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
        self.write_params_h(self.plan.h);
    }

    fn write_params_h(&self, h: f64) {
        let m = &self.model;
        let mut p = GpuParams {
            gravity: [m.gravity.x as f32, m.gravity.y as f32, m.gravity.z as f32, m.drag as f32],
            wind: [m.wind.x as f32, m.wind.y as f32, m.wind.z as f32, m.central_strength as f32],
            center: [m.central_center.x as f32, m.central_center.y as f32, m.central_center.z as f32, self.settings.speed_limit as f32],
            n_particles: m.n as u32,
            n_springs: m.sa.len() as u32,
            h: h as f32,
            alpha: self.plan.alpha as f32,
            cursor: [0.0; 4],
            cursor_particle: CURSOR_NONE,
            cursor_damping: 0.0,
            _pad: [0; 2],
        };
        if let Some(c) = self.cursor.filter(|_| !self.method.is_implicit()) {
            p.cursor = [c.target[0] as f32, c.target[1] as f32, c.target[2] as f32, c.stiffness as f32];
            p.cursor_particle = c.particle as u32;
            p.cursor_damping = c.damping as f32;
        }
        self.queue.write_buffer(&self.state.params, 0, bytemuck::bytes_of(&p));
        let ip =
            ImplicitParams { exact: self.settings.exact_jacobian as u32, strain_limit: self.settings.strain_limit as f32, _pad: [0; 2] };
        self.queue.write_buffer(&self.state.imp_params, 0, bytemuck::bytes_of(&ip));
        let tol = self.settings.cg_tolerance as f32;
        for q in 0..2 {
            let cp = CgPass {
                n: m.n as u32,
                groups: groups(m.n),
                parity: q as u32,
                tol2: tol * tol,
                warm: self.settings.cg_warm_start as u32,
                _pad: [0; 3],
            };
            self.queue.write_buffer(&self.state.cg_pass[q], 0, bytemuck::bytes_of(&cp));
        }
    }

    /// Implicit Euler: the PCG's status words (one read-back).
    pub fn cg_state_gpu(&self) -> Result<GpuCgState> {
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.cg_state") });
        enc.copy_buffer_to_buffer(&self.state.cg_state, 0, &self.state.readback, 0, 32);
        self.queue.submit([enc.finish()]);
        let bytes = read_buffer(&self.device, &self.state.readback, 32)?;
        let w: &[u32] = bytemuck::cast_slice(&bytes);
        Ok(GpuCgState {
            status: w[0],
            iterations: w[1] as usize,
            residual: f32::from_bits(w[2]) as f64,
            total_iterations: w[3] as usize,
            breakdowns: w[4] as usize,
            strained: w[5] != 0,
        })
    }

    fn clear_cg_solution(&self) {
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.cg_clear") });
        enc.clear_buffer(&self.state.cgv, 0, None);
        self.queue.submit([enc.finish()]);
    }

    /// Implicit Euler: every adaptive step tried so far, (h, accepted).
    pub fn step_log(&self) -> &[(f64, bool)] {
        &self.step_log
    }

    /// Implicit Euler with Kauppila §3.2.3's adaptive step, as the CPU twin does it: each step is one
    /// submit from state[0] into state[1] followed by the strain check; the flag is read back after the
    /// step (never inside the CG). A discarded step leaves state[0] as it was (the old state); an accepted
    /// one is copied over. Returns the steps taken and the iterations used.
    fn implicit_adaptive_frame(&mut self) -> Result<(usize, usize, f64)> {
        if self.h_adaptive <= 0.0 || self.h_adaptive > self.plan.h {
            self.h_adaptive = self.plan.h;
        }
        let frame = self.settings.frame_dt;
        let h_floor = self.plan.h / 1024.0;
        let n = self.state.n;
        let (mut t, mut steps, mut iterations, mut residual) = (0.0, 0usize, 0usize, 0.0);
        while t < frame * (1.0 - 1e-9) {
            let h = self.h_adaptive.min(frame - t);
            self.write_params_h(h);
            let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.adaptive") });
            enc.clear_buffer(&self.state.cg_state, 0, None);
            {
                let mut pass =
                    enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("springsim.adaptive"), timestamp_writes: None });
                let ip = &self.pipes.implicit;
                ip.encode_step(&mut pass, &self.implicit_groups[0], &self.pcg_groups, n, self.settings.cg_max_iterations);
                self.encode_collide(&mut pass, 1);
                ip.encode_strain(&mut pass, &self.implicit_groups[0], &self.pcg_groups, n);
            }
            self.queue.submit([enc.finish()]);
            let cg = self.cg_state_gpu()?;
            iterations += cg.total_iterations;
            residual = cg.residual;
            if cg.breakdowns > 0 {
                self.clear_cg_solution();
                self.write_params();
                return Err(Error::Solver("GPU CG broke down (pᵀAp <= 0: the system is not positive definite)".into()));
            }
            if cg.strained && h > h_floor {
                self.step_log.push((h, false));
                self.h_adaptive = h * 0.5;
                self.good_steps = 0;
                continue;
            }
            self.step_log.push((h, true));
            let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.accept") });
            enc.copy_buffer_to_buffer(&self.state.state[1], 0, &self.state.state[0], 0, self.state.state_bytes());
            self.queue.submit([enc.finish()]);
            t += h;
            steps += 1;
            self.good_steps += 1;
            if self.good_steps >= 2 && self.h_adaptive < self.plan.h {
                self.h_adaptive = (self.h_adaptive * 2.0).min(self.plan.h);
                self.good_steps = 0;
            }
        }
        self.write_params();
        Ok((steps, iterations, residual))
    }

    /// Records the colliders' pass on `state[q]` (nothing without colliders).
    fn encode_collide(&self, pass: &mut wgpu::ComputePass, q: usize) {
        if let Some(c) = &self.colliders {
            c.encode(&self.pipes.collide, pass, q, self.state.n);
        }
    }

    /// Implicit Euler: Δv of the last solve, read back (for checks).
    pub fn read_dv(&self) -> Result<Vec<[f64; 3]>> {
        let n = self.state.n;
        let bytes = (n * 16) as u64;
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.dv") });
        // x is the sixth vector of cgv (r, z, p0, p1, Ap, x, P⁻¹)
        enc.copy_buffer_to_buffer(&self.state.cgv, 5 * bytes, &self.state.readback, 0, bytes);
        self.queue.submit([enc.finish()]);
        let data = read_buffer(&self.device, &self.state.readback, bytes)?;
        let v4: &[[f32; 4]] = bytemuck::cast_slice(&data);
        Ok(v4.iter().map(|a| [a[0] as f64, a[1] as f64, a[2] as f64]).collect())
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
        if self.method == Method::ImplicitEuler {
            encoder.clear_buffer(&self.state.cg_state, 0, None);
        }
        let mut p = 0usize;
        {
            let mut pass =
                encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("springsim.frame"), timestamp_writes: None });
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
                    Method::ImplicitEuler => {
                        let n = self.state.n;
                        let iters = self.settings.cg_max_iterations;
                        self.pipes.implicit.encode_step(&mut pass, &self.implicit_groups[p], &self.pcg_groups, n, iters);
                    }
                    // refused by check_gpu_settings
                    Method::LocalGlobal | Method::Newton => {}
                }
                self.encode_collide(&mut pass, 1 - p);
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

    /// Sets or clears the cursor spring (the explicit methods' and LEU's mouse drag,
    /// [`crate::sim::Cursor`]; [`crate::sim::Cursor::stable`] picks a stiffness the planned step
    /// stays stable with). The implicit methods keep it but do not apply it (they drag by a position
    /// constraint, [`GpuSimulator::set_particle`]). Queued before the next submit. CPU twin:
    /// [`crate::cpu::CpuSimulator::set_cursor`].
    pub fn set_cursor(&mut self, cursor: Option<crate::sim::Cursor>) -> Result<()> {
        if let Some(c) = &cursor {
            c.validate(self.model.n)?;
        }
        self.cursor = cursor;
        self.steps_since_lin = usize::MAX;
        self.write_params();
        Ok(())
    }

    /// The cursor spring set by [`GpuSimulator::set_cursor`].
    pub fn cursor(&self) -> Option<crate::sim::Cursor> {
        self.cursor
    }

    // --- end of viewer additions ---

    /// Explicit methods: whether a step since the last check exceeded the speed limit
    /// (`StepSettings::speed_limit`); if so, and the state is finite, k₀ is recomputed at the
    /// current state and the step re-planned (Shinya §5.3). `step_frame` calls this after each frame;
    /// a host on the `encode_frame` path calls it when it wants to (one small read-back).
    pub fn check_divergence(&mut self) -> Result<bool> {
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.flags") });
        enc.copy_buffer_to_buffer(&self.state.flags, 0, &self.state.readback, 0, 16);
        enc.clear_buffer(&self.state.flags, 12, Some(4));
        self.queue.submit([enc.finish()]);
        let bytes = read_buffer(&self.device, &self.state.readback, 16)?;
        let diverged = bytemuck::cast_slice::<u8, u32>(&bytes)[3] != 0;
        if diverged {
            let k0 = self.power_k0(self.settings.power_iterations)?;
            if k0.is_finite() && k0 > 0.0 {
                self.plan = plan(self.method, k0, self.model.drag, &self.settings);
                self.steps_since_lin = usize::MAX;
                self.write_params();
            }
        }
        Ok(diverged)
    }

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
        if self.method == Method::ImplicitEuler && self.settings.adaptive {
            let (substeps, iterations, residual) = self.implicit_adaptive_frame()?;
            return Ok(FrameReport { substeps, leu_retries: 0, iterations, residual });
        }
        let substeps = self.plan.substeps;
        self.run_steps(substeps)?;
        if self.method == Method::Leu {
            let r = self.leu_retries_gpu()?;
            if r > self.leu_retries {
                self.leu_retries = r;
                // Shinya §5.3: recompute k₀ when divergence is detected.
                self.replan()?;
            }
        } else if self.method != Method::ImplicitEuler {
            self.check_divergence()?;
        }
        let mut report = FrameReport { substeps, leu_retries: self.leu_retries, ..Default::default() };
        if self.method == Method::ImplicitEuler {
            let cg = self.cg_state_gpu()?;
            if cg.breakdowns > 0 {
                // no warm start from a failed solve
                self.clear_cg_solution();
                return Err(Error::Solver(format!(
                    "GPU CG broke down in {} step(s) of this frame (pᵀAp <= 0: the system is not positive definite)",
                    cg.breakdowns
                )));
            }
            report.iterations = cg.total_iterations;
            report.residual = cg.residual;
        }
        Ok(report)
    }

    fn plan(&self) -> StepPlan {
        self.plan
    }

    fn method(&self) -> Method {
        self.method
    }

    fn set_method(&mut self, method: Method) -> Result<()> {
        check_gpu_settings(method, &self.settings)?;
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
