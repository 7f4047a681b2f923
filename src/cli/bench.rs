//! The headless benchmark: runs a scene with a method on a backend and reports one record: the
//! start-up (model, engine, k₀, factorisation) timed apart from the frames, warm-up frames untimed, the
//! median and spread of the timed frames, the run's quality (energy drift, peak strain, final residual)
//! and the machine it ran on.

use crate::bench_cost::{self, CostRecord};
use crate::machine::{self, Machine};
use crate::spread::Spread;
use serde::Serialize;
use springsim::cpu::{CpuEngine, CpuModel};
use springsim::error::{Bound, Error, Result};
use springsim::gpu::methods::local_global::LocalGlobalSplit;
use springsim::gpu::{GpuContext, GpuEngine};
use springsim::method::{DivergencePolicy, Method, StepSettings};
use springsim::reference::stats::state_stats;
use springsim::scene::SceneOptions;
use springsim::scene_file::Scene;
use springsim::stepping::guard::{Action, Divergence};
use springsim::stepping::{CpuSimulator, GpuSimulator, Stepper};
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
            _ => Err(Error::invalid("backend", s, Bound::Other("must be cpu, cpu-reference or gpu".into()))),
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
    /// Scene name, as the record gives it.
    pub scene: String,
    /// The scene's file, parsed (a built-in one's, a file's, or a preset's).
    pub source: Scene,
    /// The preset that set the run up (`warp-cloth`), if any.
    pub preset: Option<String>,
    /// Scene options.
    pub options: SceneOptions,
    /// Method.
    pub method: Method,
    /// Backend.
    pub backend: Backend,
    /// Frames to time.
    pub frames: usize,
    /// Frames run before the timed ones, untimed (their steps still count for the quality figures).
    pub warmup: usize,
    /// Step settings.
    pub settings: StepSettings,
    /// Air drag d₀ (1/s) instead of the scene's.
    pub drag: Option<f64>,
    /// Provot's strain limiting instead of the scene's (`--strain-limiting`).
    pub strain_limit: Option<springsim::model::StrainLimit>,
    /// Local/global on the GPU: frames to run after the timed ones with every phase its own submit, for
    /// the split between local step, right-hand side, global step and transfers (0: none).
    pub local_global_split_frames: usize,
    /// GPU timestamps per phase where the adapter has them (`--timestamps`).
    pub timestamps: bool,
    /// Also a timestamp before every dispatch, for the time per kernel (`--kernel-times`).
    pub kernel_times: bool,
    /// Frames run back to back after the timed ones, with no read-back between them (`--sustained`; 0:
    /// none): [`crate::sustained::Sustained`].
    pub sustained_frames: usize,
    /// Frames paced at this refresh rate (Hz) after the sustained ones (`--paced`; none without it):
    /// [`crate::paced::Paced`].
    pub paced_hz: Option<f64>,
    /// Write the model and its step plan here as JSON (`--export-model`, for a peer implementation).
    pub export_model: Option<std::path::PathBuf>,
}

/// The record `springsim bench` prints.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// Scene.
    pub scene: String,
    /// The preset that set the run up (`warp-cloth`), or null.
    pub preset: Option<String>,
    /// Particles per side or per strand (the option's, else the scene file's; null where the scene has
    /// no size, as `orbit` and `mesh`).
    pub size: Option<usize>,
    /// Particles.
    pub particles: usize,
    /// Springs.
    pub springs: usize,
    /// Method.
    pub method: String,
    /// Implicit Euler and local/global: the linear solve the run used (`cg`, `tridiagonal`, `cholesky`,
    /// `chebyshev`), with `+multigrid` where a multigrid V-cycle preconditions it; null for the other
    /// methods.
    pub global_solve: Option<String>,
    /// Backend.
    pub backend: String,
    /// Adapter (or the CPU).
    pub adapter: String,
    /// GPU: the adapter is a software rasterizer on the host's CPU (lavapipe, SwiftShader): not in the
    /// record, only the note under the table and markdown output ([`crate::report::software_note`]).
    #[serde(skip)]
    pub software_adapter: bool,
    /// GPU: the driver and its version (wgpu's `AdapterInfo` driver and driver_info); null on the CPU.
    pub driver: Option<String>,
    /// GPU: the graphics API wgpu ran on (`vulkan`, `metal`, `dx12`, `gl`); null on the CPU.
    pub wgpu_backend: Option<String>,
    /// The host's CPU model (/proc/cpuinfo's `model name`, else the architecture).
    pub cpu: String,
    /// The threads the CPU engine's parallel passes use (rayon's pool).
    pub threads: usize,
    /// The operating system and architecture.
    pub os: String,
    /// springsim's version.
    pub version: String,
    /// When the run started (UTC, ISO 8601).
    pub date: String,
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
    /// Implicit Euler's adaptive step on the GPU's pipelined frame: steps accepted although strained or
    /// short because the frame's room for halvings (`--max-frame-halvings`) ran out, over the timed
    /// frames (0 elsewhere).
    pub forced_steps: usize,
    /// Warm-up frames run before the timed ones (not timed).
    pub warmup: usize,
    /// Frames timed (fewer than asked when a coordinate went non-finite).
    pub frames: usize,
    /// Median wall time of a timed frame (ms).
    pub ms_per_frame: f64,
    /// Mean wall time of a timed frame (ms; Warp's benchmark reports the mean).
    pub ms_mean: f64,
    /// Fastest timed frame (ms).
    pub ms_min: f64,
    /// First quartile of the timed frames (ms; linear interpolation between order statistics).
    pub ms_q1: f64,
    /// Third quartile (ms).
    pub ms_q3: f64,
    /// Slowest timed frame (ms).
    pub ms_max: f64,
    /// Interquartile range, `ms_q3 - ms_q1` (ms).
    pub ms_iqr: f64,
    /// `ms_per_frame / substeps`.
    pub ms_per_substep: f64,
    /// The run's peak resident host memory above the process's before it (model, engine, read-backs),
    /// per particle (B; Linux: `VmHWM` after resetting it, null elsewhere).
    pub host_bytes_per_particle: Option<f64>,
    /// Start-up before the first frame (ms): `model_ms + engine_ms + k0_ms + factor_ms`.
    pub startup_ms: f64,
    /// Building the model from the scene (ms).
    pub model_ms: f64,
    /// Creating the engine (ms): buffers, uploads and pipelines on the GPU, arrays on the CPU.
    pub engine_ms: f64,
    /// Planning the step (ms): k₀ by power iteration for the explicit methods and LEU.
    pub k0_ms: f64,
    /// Local/global's global solver (the Cholesky factor, ρ, the multigrid hierarchy) and Newton's
    /// symbolic analysis, built before the first frame (ms; 0 for the other methods).
    pub factor_ms: f64,
    /// Every coordinate finite at the end.
    pub finite: bool,
    /// The frame (0-based, warm-up frames counted) at which a non-finite value first appeared.
    pub failed_frame: Option<usize>,
    /// Largest strain at the end.
    pub max_strain: f64,
    /// Largest strain at the end of any frame, warm-up included.
    pub max_strain_peak: f64,
    /// The deepest any free particle sits inside a collider's skin at the end, as a fraction of that
    /// skin's thickness (0: none inside; absent without a collider that has a skin).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub penetration: Option<f64>,
    /// With self-collision on: the smallest distance between two particles that no spring joins at the
    /// end, as a fraction of the thickness (by the reference hash; capped at cell/thickness).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_gap: Option<f64>,
    /// The angle between adjacent triangles' normals at the end (°): the median over every pair of
    /// triangles that share an edge (null for a model without triangles).
    pub roughness_deg_median: Option<f64>,
    /// That angle's 90th percentile (°; null without triangles).
    pub roughness_deg_p90: Option<f64>,
    /// That angle's 99th percentile (°; null without triangles).
    pub roughness_deg_p99: Option<f64>,
    /// Per-spring strain |l − L|/L at the end: the mean over the springs.
    pub strain_mean: f64,
    /// Per-spring strain at the end: the 99th percentile.
    pub strain_p99: f64,
    /// Provot's strain limiting: its τ (absent without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strain_limit: Option<f64>,
    /// With strain limiting: the fraction of springs stretched beyond τ at the end, (l − L)/L > τ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strain_over_limit: Option<f64>,
    /// With strain limiting: the largest stretch (l − L)/L at the end of any frame, warm-up included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_stretch_peak: Option<f64>,
    /// With strain limiting: the Jacobi passes run per step, the mean over every step of the run
    /// (warm-up included; the passes stop once every spring is within τ(1 + tolerance)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strain_passes_per_step: Option<f64>,
    /// With strain limiting: the most passes any one step ran (the cap is `passes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strain_passes_most: Option<u32>,
    /// Total energy at the end (J).
    pub energy: f64,
    /// Total energy at the start, before the first frame (J).
    pub energy_start: f64,
    /// `energy - energy_start` (J): what the run gained (positive) or lost; damping and the implicit
    /// methods lose energy by design, a gain is drift.
    pub energy_drift: f64,
    /// Lowest y at the end (m).
    pub min_y: f64,
    /// Local/global on the GPU: ms per frame of each phase, timed as separate submits after the timed
    /// frames (`local_global_split_frames` of them); the `cholesky` path's read-back, solve and upload included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_global_split: Option<LocalGlobalSplit>,
    /// Local/global with `cholesky` on the GPU: the host side of the timed frames (read-back of r, f64
    /// solve, upload of δ; GPU waits under `global_ms`), ms per frame, from the last timed frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_global_transfers: Option<LocalGlobalSplit>,
    /// GPU: bytes of every buffer the simulation holds at the end (the particle state and the chosen
    /// method's integrator; absent on the CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_bytes: Option<u64>,
    /// GPU: `gpu_bytes` per particle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_bytes_per_particle: Option<f64>,
    /// GPU on an adapter in host memory (device type `Cpu`: lavapipe): `host_bytes_per_particle` less
    /// `gpu_bytes_per_particle`, the program's own share and the driver's beyond the buffers (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_less_gpu_bytes_per_particle: Option<f64>,
    /// The divergence guard's policy: `report`, `recover` or `ignore`.
    pub divergence: String,
    /// Policy `report`: the first divergence the guard found (the run goes on to its last frame or its
    /// first non-finite one); null when none was found.
    pub diverged: Option<DivergedRecord>,
    /// Policy `recover`: the rollbacks (each halved h, or LEU's re-linearization interval; the record's `h`
    /// is the last step).
    pub recoveries: Vec<DivergedRecord>,
    /// Wall time of the guard's checks and checkpoints (ms per frame, the mean; not in `ms_per_frame`).
    pub guard_ms_per_frame: f64,
    /// `--sustained N`: the frames run back to back after the timed ones (null without it).
    #[serde(flatten)]
    pub sustained: crate::sustained::Sustained,
    /// `--paced HZ`: frames paced like a presenting window's after the sustained ones (null without it).
    #[serde(flatten)]
    pub paced: crate::paced::Paced,
    /// The GPU cost per timed frame: passes, dispatches, submits, read-backs, the kernels' bytes beside
    /// the floor, the phases, the timestamps (null on the CPU; [`CostRecord`]).
    #[serde(flatten)]
    pub cost: CostRecord,
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
    /// Policy `recover`, LEU: the halved re-linearization interval (s), when the rollback halved that
    /// instead of h.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leu_interval: Option<f64>,
}

impl DivergedRecord {
    fn of(d: &Divergence) -> Self {
        let (h, leu_interval) = match d.action {
            Action::RolledBack { h, leu_interval, .. } => (Some(h), leu_interval),
            Action::Reported => (None, None),
        };
        DivergedRecord { frame: d.frame, kind: d.cause.kind().to_string(), cause: d.cause.to_string(), h, leu_interval }
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
            sim.engine_mut().set_fast_kernel(false);
            Box::new(sim)
        }
        Backend::Gpu => {
            let ctx = gpu.ok_or_else(|| Error::NoAdapter("the gpu backend needs a device".into()))?;
            Box::new(GpuSimulator::new(&ctx.device, &ctx.queue, model, method, settings)?)
        }
    })
}

/// The linear solve of implicit Euler's or local/global's run as the record names it (`cg+multigrid`,
/// `cholesky`, …); `None` for the methods without one.
fn global_solve_name(method: Method, s: &springsim::StepSettings) -> Result<Option<String>> {
    if !matches!(method, Method::ImplicitEuler | Method::LocalGlobal) {
        return Ok(None);
    }
    let global = s.global.resolve(method)?;
    let iterative = matches!(global, springsim::GlobalSolve::Cg | springsim::GlobalSolve::Chebyshev);
    let multigrid = iterative && s.preconditioner.resolve(method) == springsim::Preconditioner::Multigrid;
    Ok(Some(if multigrid { format!("{}+multigrid", global.name()) } else { global.name().to_string() }))
}

/// The simulator under test: the concrete one, for the GPU's memory and local/global's phase split
/// and the CPU's solver set-up.
enum Sim {
    Cpu(Box<CpuSimulator>),
    Gpu(Box<GpuSimulator>),
}

impl Sim {
    /// Builds the linear solver's set-up before the first frame, untimed: local/global's global step
    /// (the factor or the GPU's tables), Newton's symbolic factorization.
    fn prepare_solver(&mut self, method: Method) -> Result<()> {
        match self {
            Sim::Gpu(g) => g.probe().prepare_local_global(),
            Sim::Cpu(c) => {
                let h = c.plan().h;
                match method {
                    Method::LocalGlobal => c.engine_mut().local_global(h).map(|_| ()),
                    Method::Newton => c.engine_mut().newton(h).map(|_| ()),
                    _ => Ok(()),
                }
            }
        }
    }

    /// The engine's laid-out model (for the quality figures: the bench keeps no copy of its own).
    fn model(&self) -> &CpuModel {
        match self {
            Sim::Cpu(s) => s.engine().model(),
            Sim::Gpu(s) => s.model(),
        }
    }

    fn as_dyn(&mut self) -> &mut dyn Simulator {
        match self {
            Sim::Cpu(s) => s.as_mut(),
            Sim::Gpu(s) => s.as_mut(),
        }
    }

    /// The GPU engine's counts so far (`None` on the CPU).
    fn cost(&mut self) -> Option<springsim::gpu::GpuCost> {
        match self {
            Sim::Cpu(_) => None,
            Sim::Gpu(g) => Some(g.probe().cost()),
        }
    }
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Runs one benchmark: the start-up timed in parts, `warmup` frames untimed, then `frames` frames each
/// timed alone, less the divergence guard's checks (reported as `guard_ms_per_frame`). Between frames,
/// outside the timing, the state is read back for the quality figures, and a run stops at the first
/// non-finite frame. `tick` is called after every frame.
pub fn run(cfg: &BenchConfig, gpu: Option<&GpuContext>, machine: &Machine, tick: &dyn Fn()) -> Result<BenchResult> {
    let date = machine::utc_now();
    // the run's own host memory: its peak resident memory above what the process held before it
    let rss_before = (springsim::memory::reset_peak_resident()).then(springsim::memory::resident).flatten();
    // a model whose GPU buffers would pass the device's limits is refused from its counts, before it
    // is built (the 3000² cloth's model alone is 8.7 GB of host memory)
    if let (Backend::Gpu, Some(ctx), Some((np, ns))) = (cfg.backend, gpu, cfg.source.counts(&cfg.options)) {
        let needs = springsim::gpu::base::budget::buffers(cfg.method, np, ns);
        springsim::gpu::base::budget::check(&ctx.device.limits(), &springsim::gpu::GpuOptions::default(), &needs)?;
    }
    let t = Instant::now();
    let mut model = cfg.source.build(&cfg.options)?;
    if let Some(d) = cfg.drag {
        model.forces.drag = d;
    }
    if cfg.strain_limit.is_some() {
        model.strain_limit = cfg.strain_limit;
    }
    let model_ms = ms(t);
    let (method, settings) = (cfg.method, cfg.settings.clone());
    let t = Instant::now();
    enum Built {
        Cpu(Box<CpuEngine>),
        Gpu(Box<GpuEngine>),
    }
    let built = match cfg.backend {
        Backend::Cpu | Backend::CpuReference => {
            let mut e = CpuEngine::new(&model, method, settings)?;
            e.set_fast_kernel(cfg.backend == Backend::Cpu);
            Built::Cpu(Box::new(e))
        }
        Backend::Gpu => {
            let ctx = gpu.ok_or_else(|| Error::NoAdapter("the gpu backend needs a device".into()))?;
            Built::Gpu(Box::new(GpuEngine::new(&ctx.device, &ctx.queue, &model, method, settings)?))
        }
    };
    let engine_ms = ms(t);
    let t = Instant::now();
    let mut sim = match built {
        Built::Cpu(e) => Sim::Cpu(Box::new(Stepper::drive(*e)?)),
        Built::Gpu(e) => Sim::Gpu(Box::new(Stepper::drive(*e)?)),
    };
    let k0_ms = ms(t);
    let t = Instant::now();
    sim.prepare_solver(method)?;
    let factor_ms = ms(t);
    let timestamps = match &mut sim {
        Sim::Gpu(g) if cfg.timestamps => {
            let support = if cfg.kernel_times { g.probe().enable_kernel_timestamps() } else { g.probe().enable_timestamps() }.describe();
            let host = method == Method::LocalGlobal && cfg.settings.global.resolve(method)? == springsim::method::GlobalSolve::Cholesky;
            // the host's Cholesky step submits phase by phase between read-backs: not timed on the GPU
            Some(if host { format!("not timed: the cholesky global step runs on the host between submits ({support})") } else { support })
        }
        _ => None,
    };
    let mut counted = springsim::gpu::GpuCost::default();

    let (x0, v0) = sim.as_dyn().read_state()?;
    let start = state_stats(sim.model(), &x0, &v0);
    drop(v0);
    let mut times = Vec::with_capacity(cfg.frames);
    let mut failed_frame = None;
    let mut report: springsim::stepping::FrameReport = Default::default();
    let mut iterations = 0usize;
    let mut forced_steps = 0usize;
    let mut peak = start.max_strain;
    let tau = sim.model().strain_limit.map(|sl| sl.limit);
    let stretch_of = |m: &CpuModel, x: &[[f64; 3]]| springsim::reference::stats::strain_stats(m, x, tau).max_stretch;
    let mut stretch_peak = tau.map(|_| stretch_of(sim.model(), &x0));
    drop(x0);
    // the GPU's frames run pipelined, as a user's loop runs them, where nothing needs a wait
    match (&mut sim, gpu) {
        (Sim::Gpu(g), Some(ctx)) if !(g.needs_blocking_frame() || cfg.timestamps) => {
            let t = crate::bench_frames::run(g, &ctx.device, &ctx.queue, (cfg.warmup, cfg.frames), tick)?;
            (times, iterations, report, failed_frame, counted) = (t.times, t.iterations, t.report, t.failed_frame, t.counted);
            forced_steps = t.forced_steps;
            peak = peak.max(t.peak_strain);
            stretch_peak = stretch_peak.map(|p| p.max(t.peak_stretch));
        }
        _ => {
            for f in 0..cfg.warmup + cfg.frames {
                if f == cfg.warmup {
                    if let Sim::Gpu(g) = &mut sim {
                        g.probe().reset_gpu_times();
                    }
                }
                let before = sim.cost();
                let s = sim.as_dyn();
                let (t, guard) = (Instant::now(), s.guard_seconds());
                report = s.step_frame()?;
                let dt = (t.elapsed().as_secs_f64() - (s.guard_seconds() - guard)) * 1e3;
                if f >= cfg.warmup {
                    if let (Some(a), Some(b)) = (before, sim.cost()) {
                        counted = bench_cost::add(&counted, &b.since(&a));
                    }
                    times.push(dt);
                    iterations += report.iterations;
                }
                let (x, v) = sim.as_dyn().read_state()?;
                let st = state_stats(sim.model(), &x, &v);
                tick();
                if !st.finite {
                    failed_frame = Some(f);
                    break;
                }
                peak = peak.max(st.max_strain);
                stretch_peak = stretch_peak.map(|p| p.max(stretch_of(sim.model(), &x)));
            }
        }
    }
    let (x, v) = sim.as_dyn().read_state()?;
    let stats = state_stats(sim.model(), &x, &v);
    let strains = springsim::reference::stats::strain_stats(sim.model(), &x, tau);
    let rough = springsim::reference::roughness::roughness(&model.triangles, &x);
    let s = sim.as_dyn();
    let strain_passes = s.strain_passes()?;
    let policy = cfg.settings.guard.policy;
    let log: Vec<DivergedRecord> = s.divergences().iter().map(DivergedRecord::of).collect();
    let (diverged, recoveries) = if policy == DivergencePolicy::Report { (log.into_iter().next(), Vec::new()) } else { (None, log) };
    let guard_ms_per_frame = if times.is_empty() { 0.0 } else { s.guard_seconds() * 1e3 / times.len() as f64 };
    let plan = s.plan();
    if let Some(path) = &cfg.export_model {
        crate::export::write(path, &cfg.scene, method, &model, &plan, cfg.settings.frame_dt)?;
    }
    let spread = Spread::of(&times);
    let mut local_global_split = None;
    let mut local_global_transfers = None;
    let mut gpu_bytes = None;
    let mut cost = CostRecord::default();
    if let Sim::Gpu(g) = &mut sim {
        gpu_bytes = Some(g.probe().gpu_bytes());
        let trial = method == Method::ImplicitEuler && cfg.settings.adaptive;
        let gpu_times = g.probe().gpu_times();
        cost = bench_cost::record(&g.probe(), &counted, times.len(), trial, timestamps, gpu_times);
        if method == Method::LocalGlobal {
            if cfg.settings.global.resolve(Method::LocalGlobal)? == springsim::method::GlobalSolve::Cholesky {
                local_global_transfers = Some(g.probe().local_global_last_split().per_frame());
            }
            if cfg.local_global_split_frames > 0 {
                local_global_split = Some(g.probe().local_global_profile_frames(cfg.local_global_split_frames)?.per_frame());
            }
        }
    }
    // the timed run's host memory (the sustained frames below run on a second simulator)
    let host_bytes = rss_before
        .zip(springsim::memory::peak_resident())
        .map(|(before, peak)| peak.saturating_sub(before) as f64 / model.n_particles().max(1) as f64);
    // the sustained frames are the timed frames again, on a simulator built afresh from the same model
    // and settings: its warm-up untimed, then the same frames back to back, so that both figures time
    // the same physics (implicit Euler's adaptive step halves in some frames and not in others)
    let sustained = if failed_frame.is_some() || cfg.sustained_frames == 0 {
        Default::default()
    } else {
        let mut fresh = match (cfg.backend, gpu) {
            (Backend::Gpu, Some(ctx)) => {
                Sim::Gpu(Box::new(GpuSimulator::new(&ctx.device, &ctx.queue, &model, method, cfg.settings.clone())?))
            }
            (Backend::Gpu, None) => return Err(Error::NoAdapter("the gpu backend needs a device".into())),
            (backend, _) => {
                let mut c = CpuSimulator::new(&model, method, cfg.settings.clone())?;
                c.engine_mut().set_fast_kernel(backend == Backend::Cpu);
                Sim::Cpu(Box::new(c))
            }
        };
        fresh.prepare_solver(method)?;
        match (&mut fresh, gpu) {
            (Sim::Gpu(g), Some(ctx)) if !(g.needs_blocking_frame() || cfg.timestamps) => {
                crate::sustained::Sustained::run_pipelined(g, &ctx.device, &ctx.queue, cfg.warmup, cfg.sustained_frames)?
            }
            _ => crate::sustained::Sustained::run(fresh.as_dyn(), cfg.warmup, cfg.sustained_frames)?,
        }
    };
    let paced = match (&mut sim, gpu, cfg.paced_hz) {
        (_, _, None) => Default::default(),
        _ if failed_frame.is_some() => Default::default(),
        (Sim::Gpu(g), Some(ctx), Some(hz)) if !(g.needs_blocking_frame() || cfg.timestamps) => {
            crate::paced::Paced::run_pipelined(g, &ctx.device, &ctx.queue, hz)?
        }
        (_, _, Some(hz)) => crate::paced::Paced::run(sim.as_dyn(), hz)?,
    };
    let gpu_info = gpu.filter(|_| cfg.backend == Backend::Gpu).map(|g| g.adapter.get_info());
    // the engine's own laid-out model (the bench builds no copy of its own)
    let cm = sim.model();
    Ok(BenchResult {
        scene: cfg.scene.clone(),
        preset: cfg.preset.clone(),
        size: cfg.options.size.or(cfg.source.file.model.size).filter(|_| cfg.source.file.model.builder != "orbit"),
        particles: model.n_particles(),
        springs: model.springs.len(),
        method: method.name().to_string(),
        global_solve: global_solve_name(method, &cfg.settings)?,
        backend: cfg.backend.name().to_string(),
        adapter: match cfg.backend {
            Backend::Cpu => "cpu (f64)".to_string(),
            Backend::CpuReference => "cpu (f64, reference kernels)".to_string(),
            Backend::Gpu => gpu.map(|g| g.adapter_name()).unwrap_or_default(),
        },
        software_adapter: gpu_info.as_ref().is_some_and(machine::is_software),
        driver: gpu_info.as_ref().map(machine::driver),
        wgpu_backend: gpu_info.as_ref().map(|i| i.backend.to_str().to_string()),
        cpu: machine.cpu.clone(),
        threads: machine.threads,
        os: machine.os.clone(),
        version: machine.version.clone(),
        date,
        frame_dt: cfg.settings.frame_dt,
        h: plan.h,
        h_max: plan.h_max,
        k0: plan.k0,
        alpha: plan.alpha,
        substeps: plan.substeps,
        iterations: if times.is_empty() { 0 } else { (iterations as f64 / times.len() as f64).round() as usize },
        residual: report.residual,
        leu_retries: report.leu_retries,
        forced_steps,
        warmup: cfg.warmup,
        frames: times.len(),
        ms_per_frame: spread.median,
        ms_mean: spread.mean,
        ms_min: spread.min,
        ms_q1: spread.q1,
        ms_q3: spread.q3,
        ms_max: spread.max,
        ms_iqr: spread.q3 - spread.q1,
        ms_per_substep: spread.median / plan.substeps as f64,
        startup_ms: model_ms + engine_ms + k0_ms + factor_ms,
        model_ms,
        engine_ms,
        k0_ms,
        factor_ms,
        finite: stats.finite && failed_frame.is_none(),
        failed_frame,
        max_strain: stats.max_strain,
        max_strain_peak: if stats.finite { peak.max(stats.max_strain) } else { peak },
        penetration: cm.colliders.iter().any(|c| c.thickness() > 0.0).then(|| springsim::reference::stats::penetration(cm, &x)),
        self_gap: cm.self_collision.map(|sc| {
            let xv: Vec<springsim::cpu::V3> = x.iter().map(|p| springsim::cpu::V3::from(*p)).collect();
            springsim::reference::self_collision::self_gap(cm, &sc, &xv)
        }),
        roughness_deg_median: rough.map(|r| r.median_deg),
        roughness_deg_p90: rough.map(|r| r.p90_deg),
        roughness_deg_p99: rough.map(|r| r.p99_deg),
        strain_mean: strains.mean,
        strain_p99: strains.p99,
        strain_limit: tau,
        strain_over_limit: tau.map(|_| strains.over_limit),
        max_stretch_peak: stretch_peak,
        strain_passes_per_step: strain_passes.filter(|t| t.steps > 0).map(|t| t.passes as f64 / t.steps as f64),
        strain_passes_most: strain_passes.map(|t| t.most),
        energy: stats.energy,
        energy_start: start.energy,
        energy_drift: stats.energy - start.energy,
        min_y: stats.min_y,
        local_global_split,
        gpu_bytes,
        gpu_bytes_per_particle: gpu_bytes.map(|b| b as f64 / model.n_particles().max(1) as f64),
        host_bytes_per_particle: host_bytes,
        host_less_gpu_bytes_per_particle: host_bytes
            .zip(gpu_bytes)
            .filter(|_| gpu_info.as_ref().is_some_and(|i| i.device_type == springsim::wgpu::DeviceType::Cpu))
            .map(|(host, gpu)| host - gpu as f64 / model.n_particles().max(1) as f64),
        local_global_transfers,
        divergence: policy.name().to_string(),
        diverged,
        recoveries,
        guard_ms_per_frame,
        sustained,
        paced,
        cost,
    })
}
