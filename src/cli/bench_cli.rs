//! `springsim bench`'s options and the loop over its axes: scenes (or a preset), sizes, methods and
//! backends, each combination one run ([`crate::bench::run`]), its record printed as JSON lines, CSV, a
//! markdown table or the plain table, with a progress bar on a terminal's stderr.

use crate::bench::{self, Backend, BenchConfig, BenchResult};
use crate::logging::Progress;
use crate::machine::Machine;
use crate::presets::Preset;
use crate::report;
use crate::{count, count_opt, given_in, split, Diverged};
use anyhow::{Context, Result};
use clap::{ArgMatches, ValueEnum};
use springsim::error::Bound;
use springsim::gpu::{GpuContext, LimitsRequest};
use springsim::method::DivergencePolicy;
use springsim::scene::{self, SceneOptions};
use springsim::{FactorPrecision, GlobalSolve, Method, Preconditioner, StepSettings};
use std::path::PathBuf;

/// The output formats.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per run and line.
    #[value(alias = "jsonl")]
    Json,
    /// A header line, then one line per run.
    Csv,
    /// A markdown table and a line naming the machine.
    #[value(alias = "md")]
    Markdown,
    /// The plain aligned table.
    Table,
}

/// `springsim bench`'s options.
#[derive(clap::Args)]
pub struct BenchCli {
    /// Scene(s), comma-separated: curtain, cloth, rope, hair, slinky, jelly, orbit, mesh, or scene files
    /// (.ron). A scene's method settings apply where no option is given explicitly.
    #[arg(long, default_value = "curtain")]
    scene: String,
    /// A scene file (RON; see `springsim scene print curtain`): its model and method settings; options
    /// given explicitly override its settings. With --scene given too, both run.
    #[arg(long)]
    scene_file: Option<PathBuf>,
    /// Method(s), comma-separated, or `all`: explicit-euler, symplectic-euler, midpoint, rk4, leu, implicit-euler,
    /// local-global, newton. `all` is every simulation method the backend runs; Newton (a CPU reference,
    /// seconds per frame) only when named.
    #[arg(long, default_value = "symplectic-euler")]
    method: String,
    /// Backend(s), comma-separated: gpu, cpu, cpu-reference (the CPU engine with the explicit methods on
    /// the plain reference passes instead of its fused force kernel, for side-by-side figures).
    #[arg(long, default_value = "gpu")]
    backend: String,
    /// Frames timed per run (a scene file's `frames` when not given; 60 for the built-in scenes).
    #[arg(long, default_value_t = 60, allow_negative_numbers = true)]
    frames: i64,
    /// Frames run before the timed ones, untimed (the driver's lazy work done, caches warm); they count
    /// for the quality figures (energy drift, peak strain) and the divergence guard.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    warmup: i64,
    /// Output: json (one JSON object per run and line; `jsonl` too), csv (a header, one line per run),
    /// markdown (a table and a line naming the machine; `md` too) or table (plain, aligned).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// A preset benchmark: warp-cloth (NVIDIA Warp's cloth benchmark: the cloth at 32, 64 and 128 per
    /// side, k = 1000 N/m, k_d = 10 N·s/m, 0.1 kg per particle, symplectic Euler with 16 substeps per
    /// frame at 60 frames per second, 60 frames; gravity scaled with the grid's spacing so that the run is
    /// Warp's to scale). Options given explicitly override it (--size, --stiffness, --method, --backend,
    /// --frames, --h, --frame-dt, --warmup).
    #[arg(long, conflicts_with_all = ["scene", "scene_file", "mesh"])]
    preset: Option<String>,
    /// Particles per side (or per strand), comma-separated for several (`64,128,256`).
    #[arg(long, allow_negative_numbers = true)]
    size: Option<String>,
    /// Spring stiffness k (N/m), instead of the scene's resolution-aware default.
    #[arg(long, allow_negative_numbers = true)]
    stiffness: Option<f64>,
    /// h = S · h_max (default 1/sqrt(1.5), Shinya's safety factor).
    #[arg(long, allow_negative_numbers = true)]
    substep_scale: Option<f64>,
    /// A fixed step h (s) instead of the stable one.
    #[arg(long, allow_negative_numbers = true)]
    h: Option<f64>,
    /// The frame step (s).
    #[arg(long, default_value_t = 1.0 / 30.0, allow_negative_numbers = true)]
    frame_dt: f64,
    /// Air drag d0 (1/s).
    #[arg(long, allow_negative_numbers = true)]
    drag: Option<f64>,
    /// Turn Rayleigh damping (alpha K) off.
    #[arg(long)]
    no_rayleigh: bool,
    /// OBJ file for the mesh scene.
    #[arg(long)]
    mesh: Option<PathBuf>,
    /// LEU: the interval h_nl (s) at which K and D are re-evaluated.
    #[arg(long, allow_negative_numbers = true)]
    leu_interval: Option<f64>,
    /// The speed (m/s) above which a step counts as diverging (LEU retries it; k0 is recomputed).
    #[arg(long, allow_negative_numbers = true)]
    speed_limit: Option<f64>,
    /// The linear solver: implicit Euler cg (CPU and GPU) or tridiagonal (CPU, chains only); local-global
    /// cholesky (f64 on the CPU; with --backend gpu one read-back of r and one upload of the correction per
    /// iteration), cg or chebyshev (CPU and GPU); auto: cg, or cholesky for local-global.
    #[arg(long, default_value = "auto")]
    global: String,
    /// Local/global: local/global iterations per step.
    #[arg(long, alias = "lg-iterations", allow_negative_numbers = true)]
    local_global_iterations: Option<i64>,
    /// Local/global with cg or chebyshev: the iteration budget of each global step.
    #[arg(long, allow_negative_numbers = true)]
    global_iterations: Option<i64>,
    /// The preconditioner of the CG solves, auto, jacobi or multigrid: local/global's cg or chebyshev
    /// global step (a smoothed-aggregation V-cycle, built once per step size) and implicit Euler (an
    /// aggregation V-cycle re-summed each step, CPU and GPU). auto: multigrid for implicit Euler,
    /// jacobi otherwise.
    #[arg(long, default_value = "auto")]
    preconditioner: String,
    /// Local/global with cholesky: the precision of the triangular solves, f32 (an f32 copy of the
    /// factor in correction form; the default) or f64 (the reference).
    #[arg(long, default_value = "f32")]
    factor_precision: String,
    /// Local/global on the GPU: after the timed frames, run this many with every phase its own submit
    /// and report the split (local step, right-hand side, global step, transfers).
    #[arg(long, alias = "lg-split", default_value_t = 0, allow_negative_numbers = true)]
    local_global_split: i64,
    /// GPU timestamps per phase (forces, integrate, local, rhs, global, collide) where the adapter has
    /// TIMESTAMP_QUERY (inside passes for the split; at pass boundaries alone the frame's total): the
    /// record's `gpu_ms_per_frame` and `phases`; `timestamps` says what the adapter offered (a field, not
    /// a failure, when it has none).
    #[arg(long)]
    timestamps: bool,
    /// GPU time per kernel: `--timestamps` with a timestamp before every dispatch, where the adapter
    /// times inside passes (the record's `kernels`: each entry point's dispatches, workgroups and GPU
    /// milliseconds per frame, by phase). Each timestamp waits for the work before it.
    #[arg(long)]
    kernel_times: bool,
    /// The device limits to ask for: `adapter` (the adapter's own, the default) or `webgpu` (exactly
    /// WebGPU's defaults, what a browser grants a page: a run under them shows that a scene and a
    /// method fit a browser; the record's adapter then ends in `[WebGPU default limits]`). Also
    /// `SPRINGSIM_LIMITS`.
    #[arg(long)]
    limits: Option<String>,
    /// After the timed frames, step them again on a simulator built afresh (its warm-up untimed), this
    /// many back to back with no read-back or statistics between them (as many as start within 5 s where
    /// the frames are not pipelined), and report their median (`sustained_ms_per_frame`): the same frames
    /// as the timed ones, as a real-time loop steps them (0: none).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    sustained: i64,
    /// After the sustained frames, 3 s of frames paced at this refresh rate (Hz), as a window that
    /// presents with vsync drives them: one frame recorded at each refresh unless two are still on the
    /// GPU (a missed refresh); reports the frames, the missed refreshes and the time between frames
    /// (`paced_*`).
    #[arg(long)]
    paced: Option<f64>,
    /// Newton: the iteration limit per step.
    #[arg(long, allow_negative_numbers = true)]
    newton_iterations: Option<i64>,
    /// Implicit Euler: the CG iteration budget per step.
    #[arg(long, allow_negative_numbers = true)]
    cg_iterations: Option<i64>,
    /// Implicit Euler: the CG relative tolerance (0: always run the whole budget).
    #[arg(long, allow_negative_numbers = true)]
    cg_tolerance: Option<f64>,
    /// Implicit Euler: start CG from the last step's Δv (off by default: it diverged on the curtain at h = 1/30).
    #[arg(long)]
    cg_warm_start: bool,
    /// Implicit Euler: the exact spring Jacobian (indefinite for compressed springs) instead of the clamped one.
    #[arg(long)]
    exact_jacobian: bool,
    /// Implicit Euler: adaptive steps (the default; halve h when a step leaves a spring strained beyond
    /// --strain-limit or changes its length by more than --step-strain-limit).
    #[arg(long, conflicts_with = "no_adaptive")]
    adaptive: bool,
    /// Implicit Euler: no adaptive step (every frame takes its planned steps as they come).
    #[arg(long)]
    no_adaptive: bool,
    /// Implicit Euler: the strain |l - L|/L above which the adaptive step discards a step (default 1).
    #[arg(long, allow_negative_numbers = true)]
    strain_limit: Option<f64>,
    /// Implicit Euler: the length change within one step, |l' - l|/L, above which the adaptive step
    /// discards it (default 0.1, Bridson et al.'s rule).
    #[arg(long, allow_negative_numbers = true)]
    step_strain_limit: Option<f64>,
    /// Implicit Euler: the CG relative residual above which the adaptive step retakes a step with h/2.
    #[arg(long, allow_negative_numbers = true)]
    retry_residual: Option<f64>,
    /// Implicit Euler on the GPU: the adaptive step's halvings a pipelined frame has room for (default
    /// 4; beyond them the frame's last steps are taken at the planned h, counted as forced).
    #[arg(long)]
    max_frame_halvings: Option<usize>,
    /// What the divergence guard does: report (the record's `diverged`, exit status 3), recover (roll
    /// back, halve h, list it in `recoveries`) or ignore.
    #[arg(long, default_value = "report")]
    divergence: String,
    /// Check every this many frames (0: every frame on the CPU, every 8 on the GPU, whose check reads
    /// the state back).
    #[arg(long, allow_negative_numbers = true)]
    guard_every: Option<i64>,
    /// Run an explicit method with a step above Shinya's h_max (refused otherwise); the guard reports
    /// what happens.
    #[arg(long)]
    allow_unstable: bool,
    /// Provot's strain limiting after every step: springs stretched beyond (1 + τ)L are pulled back to
    /// it (τ > 0, e.g. 0.1), instead of the scene's `strain_limiting` (distinct from --strain-limit, the
    /// adaptive step's guard).
    #[arg(long, allow_negative_numbers = true)]
    strain_limiting: Option<f64>,
    /// Strain limiting's cap on Jacobi passes per step (default 128; alone, it turns strain limiting on
    /// at τ = 0.1).
    #[arg(long, allow_negative_numbers = true)]
    strain_limiting_passes: Option<i64>,
    /// Strain limiting's passes stop once no spring is stretched beyond τ(1 + this) (default 0.001;
    /// alone, it turns strain limiting on at τ = 0.1).
    #[arg(long, allow_negative_numbers = true)]
    strain_limiting_tolerance: Option<f64>,
    /// Strain limiting's acceleration ω_c in [1, 2): from the fifth pass of a step on, a particle a pass moves is
    /// extrapolated from its state two passes back (default 1.85; 1: plain Jacobi passes; alone, it
    /// turns strain limiting on at τ = 0.1).
    #[arg(long, allow_negative_numbers = true)]
    strain_limiting_acceleration: Option<f64>,
    /// Write the run's model (particles, masses, pins, springs, forces) and step plan (h, substeps, α)
    /// to this file as JSON, for a peer implementation to step the same model (benches/peers/); one
    /// run only.
    #[arg(long)]
    export_model: Option<PathBuf>,
}

/// The strain limiting that `--strain-limiting τ`, `--strain-limiting-passes n`,
/// `--strain-limiting-tolerance t` and `--strain-limiting-acceleration ω_c` ask for (`None` when none
/// is given), validated: a one-line error names the option and value.
pub(crate) fn strain_limiting(
    limit: Option<f64>,
    passes: Option<i64>,
    tolerance: Option<f64>,
    acceleration: Option<f64>,
) -> springsim::Result<Option<springsim::model::StrainLimit>> {
    use springsim::model::StrainLimit;
    if limit.is_none() && passes.is_none() && tolerance.is_none() && acceleration.is_none() {
        return Ok(None);
    }
    let mut sl = StrainLimit::new(limit.unwrap_or(springsim::model::DEFAULT_STRAIN_LIMIT));
    if let Some(p) = passes {
        sl.passes = u32::try_from(p)
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| springsim::Error::invalid("strain-limiting-passes", p, Bound::at_least(1.0)))?;
    }
    if let Some(t) = tolerance {
        if !(t.is_finite() && t >= 0.0) {
            return Err(springsim::Error::invalid("strain-limiting-tolerance", t, Bound::NonNegative));
        }
        sl.tolerance = t;
    }
    if let Some(a) = acceleration {
        if !(a.is_finite() && (1.0..2.0).contains(&a)) {
            return Err(springsim::Error::invalid(
                "strain-limiting-acceleration",
                a,
                Bound::Interval { min: 1.0, max: 2.0, min_open: false, max_open: true },
            ));
        }
        sl.acceleration = a;
    }
    if !(sl.limit.is_finite() && sl.limit > 0.0) {
        return Err(springsim::Error::invalid("strain-limiting", sl.limit, Bound::Positive));
    }
    sl.validate()?;
    Ok(Some(sl))
}

/// A list of sizes: `64,128,256`; each a count (a negative one gets the validator's one-line error).
fn sizes(s: &str) -> springsim::Result<Vec<usize>> {
    split(s)
        .iter()
        .map(|x| {
            let v: i64 = x.parse().map_err(|_| {
                springsim::Error::invalid("size", x, Bound::Other("must be a whole number (or a comma-separated list of them)".into()))
            })?;
            count("size", v)
        })
        .collect()
}

/// What one scene axis entry runs: a scene by name or file, or a preset (whose scene depends on the size).
enum Source {
    Scene(String, Box<springsim::scene_file::Scene>),
    Preset(Preset),
}

/// The step settings every run starts from: the options given, on [`StepSettings::default`].
fn base_settings(b: &BenchCli) -> Result<StepSettings> {
    let mut settings = StepSettings { frame_dt: b.frame_dt, fixed_h: b.h, rayleigh: !b.no_rayleigh, ..Default::default() };
    if let Some(s) = b.substep_scale {
        settings.substep_scale = s;
    }
    if let Some(v) = b.leu_interval {
        settings.leu_interval = v;
    }
    if let Some(v) = b.speed_limit {
        settings.speed_limit = v;
    }
    settings.global = GlobalSolve::parse(&b.global)?;
    if let Some(v) = count_opt("local_global_iterations", b.local_global_iterations)? {
        settings.local_global_iterations = v;
    }
    if let Some(v) = count_opt("global_iterations", b.global_iterations)? {
        settings.global_iterations = v;
    }
    settings.preconditioner = Preconditioner::parse(&b.preconditioner)?;
    settings.factor_precision = FactorPrecision::parse(&b.factor_precision)?;
    if let Some(v) = count_opt("newton_iterations", b.newton_iterations)? {
        settings.newton_iterations = v;
    }
    if let Some(v) = count_opt("cg_iterations", b.cg_iterations)? {
        settings.cg_max_iterations = v;
    }
    if let Some(v) = b.cg_tolerance {
        settings.cg_tolerance = v;
    }
    if let Some(v) = b.strain_limit {
        settings.strain_limit = v;
    }
    if let Some(v) = b.step_strain_limit {
        settings.step_strain_limit = v;
    }
    if let Some(v) = b.retry_residual {
        settings.retry_residual = v;
    }
    if let Some(v) = b.max_frame_halvings {
        settings.max_frame_halvings = v;
    }
    settings.exact_jacobian = b.exact_jacobian;
    settings.cg_warm_start = b.cg_warm_start;
    settings.adaptive = b.adaptive || !b.no_adaptive;
    settings.allow_unstable = b.allow_unstable;
    settings.guard.policy = DivergencePolicy::parse(&b.divergence)?;
    if let Some(v) = count_opt("guard_every", b.guard_every)? {
        settings.guard.every = v;
    }
    settings.validate()?;
    Ok(settings)
}

/// Every run the options ask for, in order: scene, size, method, backend. Everything is checked here,
/// before the first run starts.
fn plan_runs(b: &BenchCli, given: &dyn Fn(&str) -> bool) -> Result<Vec<BenchConfig>> {
    let frames = count("frames", b.frames)?;
    let warmup = count("warmup", b.warmup)?;
    let local_global_split = count("local_global_split", b.local_global_split)?;
    let sustained = count("sustained", b.sustained)?;
    if let Some(hz) = b.paced {
        if !(hz.is_finite() && hz > 0.0 && hz <= 1000.0) {
            return Err(springsim::Error::invalid(
                "paced",
                hz,
                springsim::error::Bound::above(0.0).worded("must be a refresh rate above {} Hz, at most 1000"),
            )
            .into());
        }
    }
    let size_list = match &b.size {
        Some(s) => Some(sizes(s)?),
        None => None,
    };
    let settings = base_settings(b)?;
    let strain = strain_limiting(b.strain_limiting, b.strain_limiting_passes, b.strain_limiting_tolerance, b.strain_limiting_acceleration)?;
    SceneOptions { size: None, stiffness: b.stiffness, mesh: b.mesh.clone() }.validate()?;
    if let Some(d) = b.drag.filter(|d| !(d.is_finite() && *d >= 0.0)) {
        return Err(springsim::Error::invalid("drag", d, Bound::NonNegative).into());
    }
    let preset = b.preset.as_deref().map(Preset::parse).transpose()?;
    let sources: Vec<Source> = match preset {
        Some(p) => vec![Source::Preset(p)],
        None => {
            let mut names = split(&b.scene);
            if b.scene_file.is_some() {
                let f = crate::scenes::scene_arg(&b.scene, b.scene_file.as_deref())?;
                if given("scene") {
                    names.push(f);
                } else {
                    names = vec![f];
                }
            }
            // each scene's file, parsed (a name's embedded one): its method settings fill in what no
            // option gives explicitly
            names.into_iter().map(|n| Ok(Source::Scene(n.clone(), Box::new(scene::load(&n)?)))).collect::<Result<_>>()?
        }
    };
    let all = b.method == "all";
    let methods: Vec<Method> = if all {
        Method::ALL.into_iter().filter(|&m| m != Method::Newton).collect()
    } else {
        split(&b.method).iter().map(|m| Method::parse(m)).collect::<Result<_, _>>()?
    };
    let backends: Vec<Backend> = split(&b.backend).iter().map(|x| Backend::parse(x)).collect::<Result<_, _>>()?;
    let mut runs = Vec::new();
    for src in &sources {
        let axis: Vec<Option<usize>> = match (&size_list, src) {
            (Some(l), _) => l.iter().copied().map(Some).collect(),
            (None, Source::Preset(p)) => p.sizes().into_iter().map(Some).collect(),
            (None, Source::Scene(..)) => vec![None],
        };
        for size in axis {
            let (name, sc, preset_name) = match src {
                Source::Scene(n, sc) => (n.clone(), sc.as_ref().clone(), None),
                Source::Preset(p) => {
                    let n = size.unwrap_or_default();
                    (p.scene_name().to_string(), p.scene(n)?, Some(p.name().to_string()))
                }
            };
            let mut st = settings.clone();
            sc.file.method.apply(&mut st, given);
            if !given("frame_dt") {
                st.frame_dt = sc.file.frame_dt;
            }
            st.validate()?;
            let ms = if given("method") { methods.clone() } else { vec![sc.file.method.name] };
            let n = if given("frames") { frames } else { sc.file.frames };
            for &m in &ms {
                for &backend in &backends {
                    if backend == Backend::Gpu && !m.on_gpu() {
                        if all {
                            continue;
                        }
                        anyhow::bail!("{m} runs on the CPU only (use --backend cpu)");
                    }
                    let mut options = SceneOptions { size, stiffness: b.stiffness, mesh: b.mesh.clone() };
                    if sc.file.model.builder == "orbit" {
                        options.size = None;
                    }
                    runs.push(BenchConfig {
                        scene: name.clone(),
                        source: sc.clone(),
                        preset: preset_name.clone(),
                        options,
                        method: m,
                        backend,
                        frames: n,
                        warmup,
                        settings: st.clone(),
                        drag: b.drag,
                        strain_limit: strain,
                        local_global_split_frames: local_global_split,
                        timestamps: b.timestamps || b.kernel_times,
                        kernel_times: b.kernel_times,
                        sustained_frames: sustained,
                        paced_hz: b.paced,
                        export_model: b.export_model.clone(),
                    });
                }
            }
        }
    }
    Ok(runs)
}

/// Runs `springsim bench`.
pub fn run(b: BenchCli, matches: Option<&ArgMatches>) -> Result<()> {
    let given = |id: &str| given_in(matches, id);
    let runs = plan_runs(&b, &given)?;
    if b.export_model.is_some() && runs.len() != 1 {
        anyhow::bail!("--export-model writes one run's model, but the options ask for {} runs", runs.len());
    }
    let gpu = if runs.iter().any(|r| r.backend == Backend::Gpu) {
        let limits = match &b.limits {
            Some(name) => LimitsRequest::parse(name)?,
            None => LimitsRequest::from_env()?,
        };
        let features = if b.timestamps || b.kernel_times {
            wgpu::Features::TIMESTAMP_QUERY
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
        } else {
            wgpu::Features::empty()
        };
        let ctx = GpuContext::headless_with_limits(features, limits).context("the gpu backend needs an adapter (try --backend cpu)")?;
        Some(ctx)
    } else {
        None
    };
    let machine = Machine::here();
    let total: usize = runs.iter().map(|r| r.warmup + r.frames).sum();
    let bar = Progress::new(total as u64, "bench");
    let mut rows: Vec<BenchResult> = Vec::new();
    let mut diverged = Vec::new();
    if b.format == Format::Csv {
        bar.suspend(|| outln!("{}", report::csv_header()))?;
    }
    for (i, cfg) in runs.iter().enumerate() {
        bar.set_message(format!(
            "run {}/{}: {} {} {} {}",
            i + 1,
            runs.len(),
            cfg.scene,
            cfg.options.size.map(|n| n.to_string()).unwrap_or_default(),
            cfg.method,
            cfg.backend.name()
        ));
        let r = bench::run(cfg, gpu.as_ref(), &machine, &|| bar.inc(1))?;
        match b.format {
            Format::Json => bar.suspend(|| outln!("{}", serde_json::to_string(&r)?).map_err(anyhow::Error::from))?,
            Format::Csv => bar.suspend(|| outln!("{}", report::csv_row(&r)))?,
            Format::Markdown | Format::Table => {}
        }
        if let Some(d) = &r.diverged {
            diverged.push(format!("{} {} {}: diverged at frame {}: {}", cfg.scene, cfg.method, cfg.backend.name(), d.frame, d.cause));
        }
        rows.push(r);
    }
    drop(bar);
    match b.format {
        Format::Markdown => out!("{}", report::markdown(&rows))?,
        Format::Table => out!("{}", report::table(&rows))?,
        Format::Json | Format::Csv => {}
    }
    if !diverged.is_empty() {
        return Err(Diverged(diverged.join("; ")).into());
    }
    Ok(())
}
