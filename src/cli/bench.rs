//! The headless benchmark: runs a scene with a method on a backend and reports one record.

use serde::Serialize;
use springsim::cpu::CpuModel;
use springsim::error::{Error, Result};
use springsim::gpu::local_global::LgSplit;
use springsim::gpu::GpuContext;
use springsim::method::{DivergencePolicy, Method, StepSettings};
use springsim::reference::stats::state_stats;
use springsim::scene::{self, SceneOptions};
use springsim::stepping::guard::{Action, Divergence};
use springsim::stepping::CpuSimulator;
use springsim::stepping::GpuSimulator;
use springsim::Simulator;
use std::time::Instant;

/// Where a simulation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The f64 CPU engine.
    Cpu,
    /// The f64 CPU engine with the explicit methods on the plain reference passes instead of the fused
    /// force kernel (`cpu::fast`): for measuring that kernel side by side (`--backend cpu,cpu-reference`).
    CpuReference,
    /// wgpu compute.
    Gpu,
}

impl Backend {
    /// Parses `cpu`, `cpu-reference` or `gpu`.
    pub fn parse(s: &str) -> Result<Backend> {
        match s {
            "cpu" => Ok(Backend::Cpu),
            "cpu-reference" => Ok(Backend::CpuReference),
            "gpu" => Ok(Backend::Gpu),
            _ => Err(Error::param("backend", s, "must be cpu, cpu-reference or gpu")),
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::CpuReference => "cpu-reference",
            Backend::Gpu => "gpu",
        }
    }
}

/// One benchmark run.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Scene name.
    pub scene: String,
    /// Scene options.
    pub options: SceneOptions,
    /// Method.
    pub method: Method,
    /// Backend.
    pub backend: Backend,
    /// Frames to run.
    pub frames: usize,
    /// Step settings.
    pub settings: StepSettings,
    /// Air drag d₀ (1/s) instead of the scene's.
    pub drag: Option<f64>,
    /// Local/global on the GPU: frames to run after the timed ones with every phase its own submit, for
    /// the split between local step, right-hand side, global step and transfers (0: none).
    pub lg_split_frames: usize,
}

/// The record `springsim bench` prints.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// Scene.
    pub scene: String,
    /// Particles.
    pub particles: usize,
    /// Springs.
    pub springs: usize,
    /// Method.
    pub method: String,
    /// Backend.
    pub backend: String,
    /// Adapter (or the CPU).
    pub adapter: String,
    /// Frame step (s).
    pub frame_dt: f64,
    /// Step (s).
    pub h: f64,
    /// Stability limit (s).
    pub h_max: f64,
    /// k₀ (1/s²).
    pub k0: f64,
    /// Rayleigh α (s).
    pub alpha: f64,
    /// Steps per frame.
    pub substeps: usize,
    /// Implicit Euler: CG iterations per frame, the mean over the frames run, rounded (0 for the explicit
    /// methods and the tridiagonal solve, which iterate nothing).
    pub iterations: usize,
    /// Implicit Euler: the final relative residual ‖b − AΔv‖/‖b‖ of the last frame's last solve.
    pub residual: f64,
    /// LEU divergence retries over the run.
    pub leu_retries: usize,
    /// Frames run.
    pub frames: usize,
    /// Median wall time of a frame (ms).
    pub ms_per_frame: f64,
    /// `ms_per_frame / substeps`.
    pub ms_per_substep: f64,
    /// Every coordinate finite at the end.
    pub finite: bool,
    /// The frame at which a non-finite value first appeared.
    pub failed_frame: Option<usize>,
    /// Largest strain at the end.
    pub max_strain: f64,
    /// The deepest any free particle sits inside a collider's skin at the end, as a fraction of that
    /// skin's thickness (0: none inside; absent without a collider that has a skin).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub penetration: Option<f64>,
    /// Total energy at the end (J).
    pub energy: f64,
    /// Lowest y at the end (m).
    pub min_y: f64,
    /// Local/global on the GPU: ms per frame of each phase, timed as separate submits after the timed
    /// frames (`lg_split_frames` of them); the `cholesky` path's read-back, solve and upload included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lg_split: Option<LgSplit>,
    /// Local/global with `cholesky` on the GPU: the host side of the timed frames (read-back of r, f64
    /// solve, upload of δ; GPU waits under `global_ms`), ms per frame, from the last timed frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lg_transfers: Option<LgSplit>,
    /// GPU: bytes of every buffer the simulation holds at the end (the particle state and the chosen
    /// method's integrator; absent on the CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_bytes: Option<u64>,
    /// GPU: `gpu_bytes` per particle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_bytes_per_particle: Option<f64>,
    /// The divergence guard's policy: `report`, `recover` or `ignore`.
    pub divergence: String,
    /// Policy `report`: the first divergence the guard found (the run goes on to its last frame or its
    /// first non-finite one); null when none was found.
    pub diverged: Option<DivergedRecord>,
    /// Policy `recover`: the rollbacks (each halved h; the record's `h` is the last step).
    pub recoveries: Vec<DivergedRecord>,
    /// Wall time of the guard's checks and checkpoints (ms per frame, the mean; not in `ms_per_frame`).
    pub guard_ms_per_frame: f64,
}

/// A divergence in the record.
#[derive(Clone, Debug, Serialize)]
pub struct DivergedRecord {
    /// The frame (0-based) whose check found it.
    pub frame: usize,
    /// `non-finite`, `strain`, `solver` or `energy`.
    pub kind: String,
    /// The cause in words, with its figures.
    pub cause: String,
    /// Policy `recover`: the step after the rollback (s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h: Option<f64>,
}

impl DivergedRecord {
    fn of(d: &Divergence) -> Self {
        let h = match d.action {
            Action::RolledBack { h, .. } => Some(h),
            Action::Reported => None,
        };
        DivergedRecord { frame: d.frame, kind: d.cause.kind().to_string(), cause: d.cause.to_string(), h }
    }
}

/// Builds the simulator for a backend.
pub fn make_simulator(
    model: &springsim::Model,
    method: Method,
    backend: Backend,
    settings: StepSettings,
    gpu: Option<&GpuContext>,
) -> Result<Box<dyn Simulator>> {
    Ok(match backend {
        Backend::Cpu => Box::new(CpuSimulator::new(model, method, settings)?),
        Backend::CpuReference => {
            let mut sim = CpuSimulator::new(model, method, settings)?;
            sim.set_fast_kernel(false);
            Box::new(sim)
        }
        Backend::Gpu => {
            let ctx = gpu.ok_or_else(|| Error::NoAdapter("the gpu backend needs a device".into()))?;
            Box::new(GpuSimulator::new(&ctx.device, &ctx.queue, model, method, settings)?.with_adapter_name(ctx.adapter_name()))
        }
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// Runs one benchmark. Each frame is timed alone, less the divergence guard's checks (reported as
/// `guard_ms_per_frame`); the state is checked for finiteness between frames, outside the timing, and a
/// run stops at the first non-finite frame.
pub fn run(cfg: &BenchConfig, gpu: Option<&GpuContext>) -> Result<BenchResult> {
    let mut model = scene::build(&cfg.scene, &cfg.options)?;
    if let Some(d) = cfg.drag {
        model.forces.drag = d;
    }
    let cm = CpuModel::new(&model)?;
    // on the GPU the concrete simulator: its memory, and local/global's phase split
    let mut gpu_sim = None;
    let mut boxed = None;
    if cfg.backend == Backend::Gpu {
        let ctx = gpu.ok_or_else(|| Error::NoAdapter("the gpu backend needs a device".into()))?;
        gpu_sim = Some(
            GpuSimulator::new(&ctx.device, &ctx.queue, &model, cfg.method, cfg.settings.clone())?.with_adapter_name(ctx.adapter_name()),
        );
    } else {
        boxed = Some(make_simulator(&model, cfg.method, cfg.backend, cfg.settings.clone(), gpu)?);
    }
    let sim: &mut dyn Simulator = match (gpu_sim.as_mut(), boxed.as_mut()) {
        (Some(g), _) => g,
        (None, Some(b)) => b.as_mut(),
        (None, None) => return Err(Error::Solver("no simulator".into())),
    };
    let mut times = Vec::with_capacity(cfg.frames);
    let mut failed_frame = None;
    let mut report: springsim::stepping::FrameReport = Default::default();
    let mut iterations = 0usize;
    for f in 0..cfg.frames {
        let (t, guard) = (Instant::now(), sim.guard_seconds());
        report = sim.step_frame()?;
        times.push((t.elapsed().as_secs_f64() - (sim.guard_seconds() - guard)) * 1e3);
        iterations += report.iterations;
        let (x, v) = sim.read_state()?;
        if !x.iter().chain(v.iter()).all(|p| p.iter().all(|c| c.is_finite())) {
            failed_frame = Some(f);
            break;
        }
    }
    let (x, v) = sim.read_state()?;
    let stats = state_stats(&cm, &x, &v);
    let policy = cfg.settings.guard.policy;
    let log: Vec<DivergedRecord> = sim.divergences().iter().map(DivergedRecord::of).collect();
    let (diverged, recoveries) = if policy == DivergencePolicy::Report { (log.into_iter().next(), Vec::new()) } else { (None, log) };
    let guard_ms_per_frame = if times.is_empty() { 0.0 } else { sim.guard_seconds() * 1e3 / times.len() as f64 };
    let plan = sim.plan();
    let ms = median(times.clone());
    let mut lg_split = None;
    let mut lg_transfers = None;
    let gpu_bytes = gpu_sim.as_ref().map(|g| g.gpu_bytes());
    if let Some(g) = gpu_sim.as_mut().filter(|_| cfg.method == Method::LocalGlobal) {
        if cfg.settings.global.resolve(Method::LocalGlobal)? == springsim::method::GlobalSolve::Cholesky {
            lg_transfers = Some(g.lg_last_split().per_frame());
        }
        if cfg.lg_split_frames > 0 {
            lg_split = Some(g.lg_profile_frames(cfg.lg_split_frames)?.per_frame());
        }
    }
    Ok(BenchResult {
        scene: cfg.scene.clone(),
        particles: model.n_particles(),
        springs: model.springs.len(),
        method: cfg.method.name().to_string(),
        backend: cfg.backend.name().to_string(),
        adapter: match cfg.backend {
            Backend::Cpu => "cpu (f64)".to_string(),
            Backend::CpuReference => "cpu (f64, reference kernels)".to_string(),
            Backend::Gpu => gpu.map(|g| g.adapter_name()).unwrap_or_default(),
        },
        frame_dt: cfg.settings.frame_dt,
        h: plan.h,
        h_max: plan.h_max,
        k0: plan.k0,
        alpha: plan.alpha,
        substeps: plan.substeps,
        iterations: if times.is_empty() { 0 } else { (iterations as f64 / times.len() as f64).round() as usize },
        residual: report.residual,
        leu_retries: report.leu_retries,
        frames: times.len(),
        ms_per_frame: ms,
        ms_per_substep: ms / plan.substeps as f64,
        finite: stats.finite && failed_frame.is_none(),
        failed_frame,
        max_strain: stats.max_strain,
        penetration: cm.colliders.iter().any(|c| c.thickness() > 0.0).then(|| springsim::reference::stats::penetration(&cm, &x)),
        energy: stats.energy,
        min_y: stats.min_y,
        lg_split,
        gpu_bytes,
        gpu_bytes_per_particle: gpu_bytes.map(|b| b as f64 / model.n_particles().max(1) as f64),
        lg_transfers,
        divergence: policy.name().to_string(),
        diverged,
        recoveries,
        guard_ms_per_frame,
    })
}
