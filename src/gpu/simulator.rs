//! `GpuSimulator`: a model on a caller's device. `encode_frame` records a whole frame into the caller's
//! encoder without submitting (the embedding path); `step_frame` submits and waits (CLI, tests, window).
//!
//! Local/global (Liu et al. 2013, §3-4; `shaders/local_global.wgsl`): each step is y = q + hαv, then
//! `lg_iterations` × (local step, residual r = b − A x, global solve A δ = r, x += δ) on corrections, then
//! the local step and residual at the final x and v = (x − q)/h. With `cg` and `chebyshev` a frame is one
//! encoder with no read-back. With `cholesky` the global solve is the f64 factor on the host: one submit
//! per iteration, one read-back of r and one upload of δ (n `vec4` each), timed apart in
//! [`GpuSimulator::lg_last_split`]. `FrameReport::iterations` is the global solver's iterations over the
//! frame (the PCG's count read from the GPU; budget × iterations for Chebyshev; one per Cholesky solve),
//! and `FrameReport::residual` is ‖∇g(x)‖/‖∇g(y)‖ (eq. 7) of the frame's last step, as the CPU's
//! `LgReport::residual`, reduced on the GPU from the residual kernel's partial sums.

use super::collide::{CollidePipelines, Colliders};
use super::explicit::{ExplicitGroups, ExplicitPipelines};
use super::implicit::ImplicitPipelines;
use super::layout::{groups, CgPass, GpuParams, ImplicitParams, LgConsts, CURSOR_NONE};
use super::leu::LeuPipelines;
use super::local_global::{LgPassTable, LgPhase, LgSplit, LocalGlobalPipelines};
use super::multigrid::{MgUse, MultigridData};
use super::power::PowerPipelines;
use super::state::{pack_state, GpuState};
use crate::cpu::local_global::{
    chebyshev_rho, multigrid_rho, GlobalCholesky, LgParams, CHEBYSHEV_POWER_ITERATIONS, MULTIGRID_RHO_ITERATIONS,
};
use crate::cpu::multigrid::Multigrid;
use crate::cpu::{CpuModel, V3};
use crate::error::{Error, Result};
use crate::method::{plan, GlobalSolve, Method, Preconditioner, StepPlan, StepSettings};
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
    /// Liu's local/global steps and their PCG.
    pub local_global: LocalGlobalPipelines,
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
            local_global: LocalGlobalPipelines::new(device),
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
    lg_groups: [wgpu::BindGroup; 2],
    lg_pcg_groups: [wgpu::BindGroup; 2],
    /// Local/global: the prepared global solver (built by `prepare_lg`).
    lg: Option<LgRuntime>,
    /// Local/global: an error of a frame run from `encode_frame` (the `cholesky` path submits there),
    /// returned by the next `step_frame` or [`GpuSimulator::lg_take_error`].
    lg_error: Option<Error>,
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

/// Local/global: the global solver prepared for one step h and one set of pinned particles.
struct LgRuntime {
    /// cholesky, cg or chebyshev.
    global: GlobalSolve,
    /// The step the solver is for.
    h: f64,
    /// Chebyshev iterations per global step (the table's budget).
    budget: usize,
    /// The pinned set changed since: the factor and ρ are rebuilt before the next frame.
    stale: bool,
    /// Chebyshev: ρ of the Jacobi iteration matrix, by power iteration in f64 (Wang 2015 §4).
    rho: f64,
    /// The per-dispatch uniforms (Chebyshev weights, slots).
    table: LgPassTable,
    /// cholesky: the f64 factor of the free particles' M̃ + h²L.
    chol: Option<GlobalCholesky>,
    /// cg with the multigrid preconditioner: the hierarchy on the GPU.
    mg: Option<MultigridData>,
    /// The preconditioner the runtime was built for.
    precond: Preconditioner,
    /// The split of the last `lg_frame` (host side of the cholesky path).
    split: LgSplit,
}

/// One operation of a local/global step: a GPU phase, or the host's Cholesky solve (a read-back of r and
/// an upload of δ).
#[derive(Clone, Copy, Debug, PartialEq)]
enum LgOp {
    Gpu(LgPhase),
    HostSolve,
}

/// The operations of one step of `iters` local/global iterations (Liu §4), ending with the local step
/// and residual at the final x (for the report's ‖∇g(x)‖) and the velocities.
fn lg_ops(global: GlobalSolve, iters: usize, budget: usize) -> Vec<LgOp> {
    let solve = match global {
        GlobalSolve::Cholesky => LgOp::HostSolve,
        GlobalSolve::Chebyshev => LgOp::Gpu(LgPhase::Chebyshev),
        _ => LgOp::Gpu(LgPhase::Cg(budget)),
    };
    let mut ops = vec![LgOp::Gpu(LgPhase::Inertia)];
    for k in 0..iters {
        let slot = if k == 0 { 0 } else { 2 };
        ops.extend([LgOp::Gpu(LgPhase::Local), LgOp::Gpu(LgPhase::Residual(slot)), solve, LgOp::Gpu(LgPhase::Advance)]);
    }
    ops.extend([LgOp::Gpu(LgPhase::Local), LgOp::Gpu(LgPhase::Residual(1)), LgOp::Gpu(LgPhase::Finish)]);
    ops
}

/// What the GPU kernels of a local/global evaluation produced ([`GpuSimulator::lg_eval`]).
#[derive(Clone, Debug, Default)]
pub struct LgEval {
    /// y = q + hαv (`lg_inertia`).
    pub y: Vec<[f64; 3]>,
    /// d per spring (`lg_local`).
    pub d: Vec<[f64; 3]>,
    /// r = b − A x per particle (`lg_residual`).
    pub r: Vec<[f64; 3]>,
    /// The Jacobi inverse diagonal 1/A_ii (`lg_residual`).
    pub inv_diag: Vec<[f64; 3]>,
}

/// The implicit method's settings that the GPU cannot honour are errors, not silent changes.
fn check_gpu_settings(method: Method, s: &StepSettings) -> Result<()> {
    if !method.on_gpu() {
        return Err(Error::param("method", method.name(), "runs on the CPU only (use --backend cpu)"));
    }
    s.global.resolve(method)?;
    s.preconditioner.check(method, s.global)?;
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
        let lg_groups = pipes.local_global.groups(device, &state);
        let lg_pcg_groups = pipes.local_global.pcg_groups(device, &state);
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
            lg_groups,
            lg_pcg_groups,
            lg: None,
            lg_error: None,
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
        sim.prepare_lg()?;
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
                // local/global solves for corrections from δ = 0 (the warm start is the iterate xₖ itself)
                warm: (self.settings.cg_warm_start && self.method == Method::ImplicitEuler) as u32,
                _pad: [0; 3],
            };
            self.queue.write_buffer(&self.state.cg_pass[q], 0, bytemuck::bytes_of(&cp));
        }
        let lp = LgParams::new(m, h);
        let fext = m.gravity + m.wind * m.drag + m.central_center * m.central_strength;
        let (n, ns) = (m.n, m.sa.len());
        let lc = LgConsts {
            fext: [fext.x as f32, fext.y as f32, fext.z as f32, 0.0],
            h: h as f32,
            alpha: lp.alpha as f32,
            inertia: lp.inertia as f32,
            mass_diag: lp.mass_diag as f32,
            n: n as u32,
            n_springs: ns as u32,
            groups: groups(n),
            entries_base: (n + 1) as u32,
            springs_base: (n + 1 + m.incidence.entries.len()) as u32,
            d_base: (3 * n) as u32,
            partials_base: (3 * n + ns) as u32,
            stats_base: (3 * n + ns + 2 * groups(n) as usize) as u32,
        };
        self.queue.write_buffer(&self.state.lg_consts, 0, bytemuck::bytes_of(&lc));
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

    /// Local/global: builds or refreshes the global solver for the current step h and pinned set (Liu et al.
    /// 2013 §4): the numeric Cholesky factorisation in f64 (`cholesky`; a new symbolic analysis when the
    /// pinned set changed), ρ by power iteration in f64 (`chebyshev`, Wang 2015 §4), the per-dispatch
    /// uniforms. Nothing to do for the other methods or when nothing changed.
    pub fn prepare_lg(&mut self) -> Result<()> {
        if self.method != Method::LocalGlobal {
            return Ok(());
        }
        let global = self.settings.global.resolve(Method::LocalGlobal)?;
        let precond = self.settings.preconditioner;
        precond.check(Method::LocalGlobal, global)?;
        let h = self.plan.h;
        let budget = if global == GlobalSolve::Chebyshev { self.settings.global_iterations } else { 0 };
        let fresh = match &self.lg {
            Some(rt) => rt.global != global || rt.h != h || rt.stale || rt.budget != budget || rt.precond != precond,
            None => true,
        };
        if !fresh {
            return Ok(());
        }
        let params = LgParams::new(&self.model, h);
        let old = self.lg.take();
        let (mut chol, mut rho) = (None, 0.0);
        match global {
            GlobalSolve::Cholesky => {
                chol = Some(match old {
                    // same free set: the numeric factorisation only
                    Some(LgRuntime { chol: Some(mut c), stale: false, .. }) => {
                        c.refactor(&self.model, &params)?;
                        c
                    }
                    _ => GlobalCholesky::new(&self.model, &params)?,
                });
            }
            GlobalSolve::Chebyshev if precond == Preconditioner::Jacobi => {
                rho = chebyshev_rho(&self.model, &params, CHEBYSHEV_POWER_ITERATIONS)
            }
            _ => {}
        }
        let mg = match precond {
            Preconditioner::Multigrid => {
                let mut cpu = Multigrid::for_global(&self.model, &params)?;
                let use_ = if global == GlobalSolve::Chebyshev {
                    // ρ of I − BA, in f64 with the CPU twin of the V-cycle
                    rho = multigrid_rho(&self.model, &params, &mut cpu, MULTIGRID_RHO_ITERATIONS);
                    MgUse::Chebyshev
                } else {
                    MgUse::Pcg
                };
                Some(MultigridData::new(&self.device, &self.queue, &self.pipes.local_global.multigrid, &self.state, &cpu, use_))
            }
            Preconditioner::Jacobi => None,
        };
        let table = LgPassTable::new(&self.device, &self.queue, &self.pipes.local_global, budget, rho, global == GlobalSolve::Chebyshev);
        self.lg = Some(LgRuntime { global, h, budget, stale: false, rho, table, chol, mg, precond, split: LgSplit::default() });
        Ok(())
    }

    /// Local/global with `chebyshev`: the spectral radius estimate in use (0 for the other solvers).
    pub fn lg_rho(&self) -> f64 {
        self.lg.as_ref().map_or(0.0, |rt| rt.rho)
    }

    /// Local/global: the error of a frame that `encode_frame` ran (the `cholesky` path), if any.
    pub fn lg_take_error(&mut self) -> Option<Error> {
        self.lg_error.take()
    }

    /// Local/global: the split of the last frame run by the multi-submit driver (the `cholesky` path, or
    /// [`GpuSimulator::lg_profile_frames`]).
    pub fn lg_last_split(&self) -> LgSplit {
        self.lg.as_ref().map_or_else(LgSplit::default, |rt| rt.split)
    }

    /// Records one local/global phase of a step from state[p] into its own compute pass.
    fn lg_record(&self, enc: &mut wgpu::CommandEncoder, rt: &LgRuntime, phase: LgPhase, p: usize) {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("springsim.lg"), timestamp_writes: None });
        self.pipes.local_global.encode(
            &mut pass,
            phase,
            &self.lg_groups[p],
            &self.lg_pcg_groups,
            &rt.table,
            self.state.n,
            self.state.n_springs,
            rt.mg.as_ref(),
        );
    }

    fn new_encoder(&self, label: &str) -> wgpu::CommandEncoder {
        self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }

    fn wait(&self) -> Result<()> {
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| Error::Gpu(e.to_string()))?;
        Ok(())
    }

    /// Local/global, `steps` steps by several submits: the `cholesky` path (Liu et al. 2013 §4 with the
    /// global step on the host: per iteration one read-back of r, n `vec4`, and one upload of δ, n `vec4`,
    /// into the PCG's solution vector, which `lg_advance` adds), or any solver phase by phase when
    /// `profile` (each phase its own submit, timed). Returns the split; the state ends in state[0].
    fn lg_frame(&mut self, steps: usize, profile: bool) -> Result<LgSplit> {
        self.prepare_lg()?;
        let mut rt = self.lg.take().ok_or_else(|| Error::Solver("local/global solver missing".into()))?;
        let res = self.lg_frame_with(&mut rt, steps, profile);
        if let Ok(split) = &res {
            rt.split = *split;
        }
        self.lg = Some(rt);
        res
    }

    fn lg_frame_with(&self, rt: &mut LgRuntime, steps: usize, profile: bool) -> Result<LgSplit> {
        let t_frame = std::time::Instant::now();
        let n = self.state.n;
        let vbytes = (n * 16) as u64;
        let mut split = LgSplit { frames: 1, ..Default::default() };
        let ops = lg_ops(rt.global, self.settings.lg_iterations, self.settings.global_iterations);
        let mut enc = self.new_encoder("springsim.lg_frame");
        enc.clear_buffer(&self.state.cg_state, 0, None);
        let mut p = 0usize;
        let mut r = vec![V3::zeros(); n];
        let mut delta = vec![V3::zeros(); n];
        let mut upload = vec![[0f32; 4]; n];
        for _ in 0..steps {
            for op in &ops {
                match *op {
                    LgOp::Gpu(phase) => {
                        self.lg_record(&mut enc, rt, phase, p);
                        if profile {
                            let t = std::time::Instant::now();
                            self.queue.submit([std::mem::replace(&mut enc, self.new_encoder("springsim.lg_frame")).finish()]);
                            self.wait()?;
                            *split.bucket(phase) += t.elapsed().as_secs_f64() * 1e3;
                        }
                    }
                    LgOp::HostSolve => {
                        let t = std::time::Instant::now();
                        if n > 0 {
                            // r is the first vector of cgv (r, z, p0, p1, Ap, x, P⁻¹)
                            enc.copy_buffer_to_buffer(&self.state.cgv, 0, &self.state.readback, 0, vbytes);
                        }
                        self.queue.submit([std::mem::replace(&mut enc, self.new_encoder("springsim.lg_frame")).finish()]);
                        self.wait()?;
                        split.global_ms += t.elapsed().as_secs_f64() * 1e3;
                        if n == 0 {
                            continue;
                        }
                        let t = std::time::Instant::now();
                        let bytes = read_buffer(&self.device, &self.state.readback, vbytes)?;
                        split.readback_ms += t.elapsed().as_secs_f64() * 1e3;
                        let t = std::time::Instant::now();
                        let v4: &[[f32; 4]] = bytemuck::cast_slice(&bytes);
                        for (ri, a) in r.iter_mut().zip(v4) {
                            *ri = V3::new(a[0] as f64, a[1] as f64, a[2] as f64);
                        }
                        let chol = rt.chol.as_mut().ok_or_else(|| Error::Solver("no Cholesky factor".into()))?;
                        chol.solve(&r, &mut delta)?;
                        for (u, d) in upload.iter_mut().zip(&delta) {
                            *u = [d.x as f32, d.y as f32, d.z as f32, 0.0];
                        }
                        split.solve_ms += t.elapsed().as_secs_f64() * 1e3;
                        let t = std::time::Instant::now();
                        // the PCG's solution x is the sixth vector of cgv; lg_advance reads it
                        self.queue.write_buffer(&self.state.cgv, 5 * vbytes, bytemuck::cast_slice(&upload));
                        split.upload_ms += t.elapsed().as_secs_f64() * 1e3;
                    }
                }
            }
            if self.colliders.is_some() {
                let mut pass =
                    enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("springsim.collide"), timestamp_writes: None });
                self.encode_collide(&mut pass, 1 - p);
            }
            p ^= 1;
        }
        if p == 1 {
            enc.copy_buffer_to_buffer(&self.state.state[1], 0, &self.state.state[0], 0, self.state.state_bytes());
        }
        let t = std::time::Instant::now();
        self.queue.submit([enc.finish()]);
        self.wait()?;
        if !profile {
            split.global_ms += t.elapsed().as_secs_f64() * 1e3;
        }
        split.total_ms = t_frame.elapsed().as_secs_f64() * 1e3;
        Ok(split)
    }

    /// Local/global: runs `frames` frames with every phase its own submit, timed on the host (submit and
    /// wait; lavapipe has no cheaper clock), and returns the split summed over them (see [`LgSplit`]).
    /// The frames advance the simulation like `step_frame`.
    pub fn lg_profile_frames(&mut self, frames: usize) -> Result<LgSplit> {
        if self.method != Method::LocalGlobal {
            return Err(Error::param("method", self.method.name(), "the phase split is for local-global"));
        }
        let mut total = LgSplit::default();
        for _ in 0..frames {
            let s = self.lg_frame(self.plan.substeps, true)?;
            total.frames += 1;
            total.other_ms += s.other_ms;
            total.local_ms += s.local_ms;
            total.rhs_ms += s.rhs_ms;
            total.global_ms += s.global_ms;
            total.advance_ms += s.advance_ms;
            total.readback_ms += s.readback_ms;
            total.solve_ms += s.solve_ms;
            total.upload_ms += s.upload_ms;
            total.total_ms += s.total_ms;
        }
        Ok(total)
    }

    /// Local/global: (‖∇g(y)‖, ‖∇g(x)‖, their ratio) of the last step (eq. 7; `lg_report`), and the PCG's
    /// status words: one read-back of both.
    fn lg_read_report(&self) -> Result<([f64; 3], GpuCgState)> {
        let m = &self.model;
        let stats = (3 * m.n + m.sa.len() + 2 * groups(m.n) as usize) as u64 * 16;
        let mut enc = self.new_encoder("springsim.lg_report");
        enc.copy_buffer_to_buffer(&self.state.lgv, stats, &self.state.readback, 0, 16);
        enc.copy_buffer_to_buffer(&self.state.cg_state, 0, &self.state.readback, 16, 32);
        self.queue.submit([enc.finish()]);
        let bytes = read_buffer(&self.device, &self.state.readback, 48)?;
        let f: &[f32] = bytemuck::cast_slice(&bytes[..16]);
        let w: &[u32] = bytemuck::cast_slice(&bytes[16..48]);
        let cg = GpuCgState {
            status: w[0],
            iterations: w[1] as usize,
            residual: f32::from_bits(w[2]) as f64,
            total_iterations: w[3] as usize,
            breakdowns: w[4] as usize,
            strained: w[5] != 0,
        };
        Ok(([f[0] as f64, f[1] as f64, f[2] as f64], cg))
    }

    /// Reads `count` `vec4`s of `buffer` from `vec4` index `at` (xyz as f64), through a staging buffer of
    /// its own.
    fn read_vec3s(&self, buffer: &wgpu::Buffer, at: usize, count: usize) -> Result<Vec<[f64; 3]>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let bytes = (count * 16) as u64;
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("springsim.lg_staging"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.new_encoder("springsim.lg_read");
        enc.copy_buffer_to_buffer(buffer, (at * 16) as u64, &staging, 0, bytes);
        self.queue.submit([enc.finish()]);
        let data = read_buffer(&self.device, &staging, bytes)?;
        let v4: &[[f32; 4]] = bytemuck::cast_slice(&data);
        Ok(v4.iter().map(|a| [a[0] as f64, a[1] as f64, a[2] as f64]).collect())
    }

    /// Local/global, for checks against the CPU twins: runs `lg_inertia` on the current state (q, v), then
    /// `lg_local` and `lg_residual` at the positions `x` (pinned particles: give their q), and reads back
    /// y, d, r and the inverse diagonal. The current state is left as it was.
    pub fn lg_eval(&mut self, x: &[[f64; 3]]) -> Result<LgEval> {
        if self.method != Method::LocalGlobal {
            return Err(Error::param("method", self.method.name(), "lg_eval needs local-global"));
        }
        if x.len() != self.model.n {
            return Err(Error::param("x", x.len(), format!("must have {} positions", self.model.n)));
        }
        self.prepare_lg()?;
        let m = &self.model;
        let rt = self.lg.as_ref().ok_or_else(|| Error::Solver("local/global solver missing".into()))?;
        let mut enc = self.new_encoder("springsim.lg_eval");
        self.lg_record(&mut enc, rt, LgPhase::Inertia, 0);
        self.queue.submit([enc.finish()]);
        let n = m.n;
        let y = self.read_vec3s(&self.state.state[1], n, n)?;
        let packed: Vec<[f32; 4]> = (0..n).map(|i| [x[i][0] as f32, x[i][1] as f32, x[i][2] as f32, m.inv_mass[i] as f32]).collect();
        if n > 0 {
            self.queue.write_buffer(&self.state.state[1], 0, bytemuck::cast_slice(&packed));
        }
        let mut enc = self.new_encoder("springsim.lg_eval");
        self.lg_record(&mut enc, rt, LgPhase::Local, 0);
        self.lg_record(&mut enc, rt, LgPhase::Residual(0), 0);
        self.queue.submit([enc.finish()]);
        let d = self.read_vec3s(&self.state.lgv, 3 * n, m.sa.len())?;
        let r = self.read_vec3s(&self.state.cgv, 0, n)?;
        let inv_diag = self.read_vec3s(&self.state.cgv, 6 * n, n)?;
        Ok(LgEval { y, d, r, inv_diag })
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
        self.prepare_lg()
    }

    /// Records one frame (all its steps) into `encoder`, without submitting. The state ends in
    /// `state[0]`. On the LEU path the divergence retries are counted on the GPU; `leu_retries_gpu`
    /// reads them.
    ///
    /// Local/global with `--global cholesky` cannot be one submit: its global step reads r back and
    /// uploads δ once per iteration. That frame is run here (submitted and waited for) before the
    /// caller's encoder, which gets nothing; an error is kept for [`GpuSimulator::lg_take_error`] and the
    /// next `step_frame`.
    pub fn encode_frame(&mut self, encoder: &mut wgpu::CommandEncoder) {
        self.encode_steps(encoder, self.plan.substeps);
    }

    /// Records `steps` steps (a frame is `plan().substeps` of them).
    pub fn encode_steps(&mut self, encoder: &mut wgpu::CommandEncoder, steps: usize) {
        let g = groups(self.state.n);
        if self.method == Method::LocalGlobal {
            let prepared = self.prepare_lg();
            let cholesky = self.lg.as_ref().is_some_and(|rt| rt.global == GlobalSolve::Cholesky);
            if let Err(e) = prepared {
                self.lg_error = Some(e);
                return;
            }
            if cholesky {
                if let Err(e) = self.lg_frame(steps, false) {
                    self.lg_error = Some(e);
                }
                return;
            }
        }
        if self.method == Method::Leu {
            encoder.clear_buffer(&self.state.flags, 0, Some(8));
        }
        if matches!(self.method, Method::ImplicitEuler | Method::LocalGlobal) {
            encoder.clear_buffer(&self.state.cg_state, 0, None);
        }
        let lg_ops = match &self.lg {
            Some(rt) if self.method == Method::LocalGlobal => {
                lg_ops(rt.global, self.settings.lg_iterations, self.settings.global_iterations)
            }
            _ => Vec::new(),
        };
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
                    Method::LocalGlobal => {
                        // cg and chebyshev (cholesky ran above): every phase in this one pass
                        if let Some(rt) = &self.lg {
                            let lp = &self.pipes.local_global;
                            for op in &lg_ops {
                                if let LgOp::Gpu(phase) = *op {
                                    lp.encode(
                                        &mut pass,
                                        phase,
                                        &self.lg_groups[p],
                                        &self.lg_pcg_groups,
                                        &rt.table,
                                        self.state.n,
                                        self.state.n_springs,
                                        rt.mg.as_ref(),
                                    );
                                }
                            }
                        }
                    }
                    // refused by check_gpu_settings
                    Method::Newton => {}
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
        match self.lg_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
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
        let pin_was = self.model.inv_mass[i] == 0.0;
        self.model.inv_mass[i] = w;
        let v = if pinned { [0.0; 3] } else { v };
        let xr = [x[0] as f32, x[1] as f32, x[2] as f32, w as f32];
        let vr = [v[0] as f32, v[1] as f32, v[2] as f32, 0.0f32];
        self.queue.write_buffer(&self.state.state[0], (i * 16) as u64, bytemuck::bytes_of(&xr));
        self.queue.write_buffer(&self.state.state[0], ((n + i) * 16) as u64, bytemuck::bytes_of(&vr));
        self.steps_since_lin = usize::MAX;
        if (w == 0.0) != pin_was {
            // local/global: the free set changed, and the global matrix with it (a new symbolic
            // factorisation, or ρ again, before the next frame); moving a pinned particle only moves the
            // right-hand side, which the GPU reads from the state
            if let Some(rt) = &mut self.lg {
                rt.stale = true;
            }
        }
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
        if let Some(e) = self.lg_error.take() {
            return Err(e);
        }
        let substeps = self.plan.substeps;
        self.run_steps(substeps)?;
        if self.method == Method::LocalGlobal {
            let (stats, cg) = self.lg_read_report()?;
            let (iters, budget) = (self.settings.lg_iterations, self.settings.global_iterations);
            let global = self.lg.as_ref().map_or(GlobalSolve::Cg, |rt| rt.global);
            let iterations = match global {
                GlobalSolve::Cholesky => substeps * iters,
                GlobalSolve::Chebyshev => substeps * iters * budget,
                _ => {
                    if cg.breakdowns > 0 {
                        return Err(Error::Solver(format!(
                            "GPU CG broke down in {} global step(s) of this frame (pᵀAp <= 0: the global matrix is not positive definite)",
                            cg.breakdowns
                        )));
                    }
                    cg.total_iterations
                }
            };
            if !stats.iter().all(|v| v.is_finite()) {
                return Err(Error::Solver(format!("local/global ({}) on the GPU produced a non-finite residual", global.name())));
            }
            return Ok(FrameReport { substeps, leu_retries: 0, iterations, residual: stats[2] });
        }
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
        self.prepare_lg()
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
