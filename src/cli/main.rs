//! The `springsim` command line: `demo` (the window; the default), `bench` (headless benchmark),
//! `run` (a scene's frames as meshes), `scene` (scene files), `converge` (Liu et al. 2013's convergence
//! study), `info` (adapters).

use anyhow::{Context, Result};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

/// `println!` that returns the write's error instead of panicking when stdout is closed early
/// (`springsim scene list | head -3`); `main` then ends quietly.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)
    }};
}

/// `print!` likewise.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($t)*)
    }};
}

mod bench;
mod converge;
mod run;
mod scenes;

use bench::{Backend, BenchConfig, BenchResult};
use springsim::gpu::context::{adapter_name, instance_from_env};
use springsim::gpu::GpuContext;
use springsim::method::DivergencePolicy;
use springsim::scene::{self, SceneOptions};
use springsim::{FactorPrecision, GlobalSolve, Method, Preconditioner, StepSettings};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "springsim", version, about = "GPU-compute mass-spring simulator (wgpu) with f64 CPU twins")]
struct Cli {
    /// With none, `demo` runs.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Json,
    Table,
}

// --- the demo (feature `viewer`) ---

#[derive(clap::Args, Clone, Default)]
struct DemoCli {
    /// Scene: curtain, flag, cloth, rope, hair, slinky, jelly, mesh, or a scene file (.ron).
    #[arg(long, default_value = "curtain")]
    scene: String,
    /// A scene file (RON; see `springsim scene print curtain`): its model, method settings and camera.
    /// Options given explicitly override its settings.
    #[arg(long)]
    scene_file: Option<PathBuf>,
    /// Method: explicit-euler, symplectic-euler, midpoint, rk4, leu.
    #[arg(long, default_value = "symplectic-euler")]
    method: String,
    /// Particles per side (or per strand).
    #[arg(long, allow_negative_numbers = true)]
    size: Option<i64>,
    /// Spring stiffness k (N/m).
    #[arg(long, allow_negative_numbers = true)]
    stiffness: Option<f64>,
    /// An OBJ file to hang (selects the mesh scene).
    #[arg(long)]
    mesh: Option<PathBuf>,
    /// Run this many frames, then exit.
    #[arg(long, allow_negative_numbers = true)]
    frames: Option<i64>,
    /// Write the last frame as a PNG (with --frames; offscreen when there is no display).
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Window / image width.
    #[arg(long, default_value_t = 960, allow_negative_numbers = true)]
    width: i64,
    /// Window / image height.
    #[arg(long, default_value_t = 720, allow_negative_numbers = true)]
    height: i64,
    /// Never open a window: render offscreen (for --screenshot / --frames).
    #[arg(long)]
    headless: bool,
    /// What the divergence guard does: recover (roll back and halve h, with a banner), report (a banner
    /// only) or ignore.
    #[arg(long, default_value = "recover")]
    divergence: String,
    /// Run an explicit method with a step above Shinya's h_max.
    #[arg(long)]
    allow_unstable: bool,
}

#[cfg(feature = "viewer")]
fn run_demo(d: DemoCli, given: &dyn Fn(&str) -> bool) -> Result<()> {
    let name = scenes::scene_arg(&d.scene, d.scene_file.as_deref())?;
    // a registry name only picks the mesh scene with --mesh; a file is what it says
    let sc = scene::load(&name)?;
    let file = &sc.file;
    let mut settings = StepSettings { frame_dt: file.frame_dt, ..Default::default() };
    file.method.apply(&mut settings, given);
    let args = springsim::viewer::DemoArgs {
        scene: name,
        method: if given("method") { Method::parse(&d.method)? } else { file.method.name },
        size: count_opt("size", d.size)?,
        stiffness: d.stiffness,
        mesh: d.mesh,
        frames: count_opt("frames", d.frames)?,
        screenshot: d.screenshot,
        width: pixels("width", d.width)?.max(16),
        height: pixels("height", d.height)?.max(16),
        headless: d.headless,
        divergence: match file.method.divergence {
            Some(p) if !given("divergence") => p,
            _ => DivergencePolicy::parse(&d.divergence)?,
        },
        allow_unstable: d.allow_unstable || settings.allow_unstable,
        camera: file.camera.map(|c| (c.eye, c.target)),
        settings: Some(settings),
    };
    springsim::viewer::run(args)
}

#[cfg(not(feature = "viewer"))]
fn run_demo(_: DemoCli, _: &dyn Fn(&str) -> bool) -> Result<()> {
    anyhow::bail!("this springsim was built without the `viewer` feature: rebuild with default features for `springsim demo`, or use `springsim bench`")
}

fn default_demo() -> Command {
    Command::Demo(DemoCli {
        scene: "curtain".into(),
        method: "symplectic-euler".into(),
        width: 960,
        height: 720,
        divergence: "recover".into(),
        ..Default::default()
    })
}

// --- end of the demo ---

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per run; `Bench` holds every option by value
enum Command {
    /// Opens the window: the simulation drawn from its own GPU buffer, with camera, dragging, live
    /// method switching and an overlay (`?` lists the keys). `--frames N --screenshot out.png` writes
    /// the last frame and exits.
    Demo(DemoCli),
    /// Runs scenes headless and prints one record per run (JSON lines or a table).
    Bench {
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
        /// Frames per run.
        #[arg(long, default_value_t = 60, allow_negative_numbers = true)]
        frames: i64,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
        /// Particles per side (or per strand).
        #[arg(long, allow_negative_numbers = true)]
        size: Option<i64>,
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
        #[arg(long, allow_negative_numbers = true)]
        lg_iterations: Option<i64>,
        /// Local/global with cg or chebyshev: the iteration budget of each global step.
        #[arg(long, allow_negative_numbers = true)]
        global_iterations: Option<i64>,
        /// The preconditioner of the CG solves, auto, jacobi or multigrid: local/global's cg or chebyshev
        /// global step (a smoothed-aggregation V-cycle, built once per step size) and implicit Euler on
        /// the CPU (an aggregation V-cycle re-summed each step). auto: multigrid for implicit Euler on
        /// the CPU, jacobi otherwise.
        #[arg(long, default_value = "auto")]
        preconditioner: String,
        /// Local/global with cholesky: the precision of the triangular solves, f32 (an f32 copy of the
        /// factor in correction form; the default) or f64 (the reference).
        #[arg(long, default_value = "f32")]
        factor_precision: String,
        /// Local/global on the GPU: after the timed frames, run this many with every phase its own submit
        /// and report the split (local step, right-hand side, global step, transfers).
        #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
        lg_split: i64,
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
    },
    /// Liu et al. 2013's convergence study (their Figure 2): for one frame, the relative error of eq. 15
    /// against iterations and wall time for local/global with each global solver and for Newton's
    /// method (x* by Newton). Writes a CSV and an SVG plot and prints the 1/10/100/1000-iteration table.
    Converge {
        /// Scene.
        #[arg(long, default_value = "curtain")]
        scene: String,
        /// Particles per side (or per strand).
        #[arg(long, allow_negative_numbers = true)]
        size: Option<i64>,
        /// Spring stiffness k (N/m).
        #[arg(long, allow_negative_numbers = true)]
        stiffness: Option<f64>,
        /// OBJ file for the mesh scene.
        #[arg(long)]
        mesh: Option<PathBuf>,
        /// The frame studied (the scene runs this many frames of local/global first).
        #[arg(long, default_value_t = 2, allow_negative_numbers = true)]
        frame: i64,
        /// Local/global iterations per series.
        #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
        iterations: i64,
        /// Global solvers, comma-separated: cholesky, cg, chebyshev, and cg+multigrid, chebyshev+multigrid
        /// (preconditioned by the multigrid V-cycle).
        #[arg(long, default_value = "cholesky,cg,chebyshev,cg+multigrid,chebyshev+multigrid")]
        global: String,
        /// The budget of each cg or chebyshev global step.
        #[arg(long, default_value_t = 20, allow_negative_numbers = true)]
        global_iterations: i64,
        /// Newton iterations (its series, and at most for x*).
        #[arg(long, default_value_t = 200, allow_negative_numbers = true)]
        newton_iterations: i64,
        /// The step h = frame step (s).
        #[arg(long, default_value_t = 1.0 / 30.0, allow_negative_numbers = true)]
        frame_dt: f64,
        /// CSV output.
        #[arg(long, default_value = "converge.csv")]
        csv: PathBuf,
        /// SVG output.
        #[arg(long, default_value = "converge.svg")]
        svg: PathBuf,
    },
    /// Scene files: `print NAME|FILE.ron` writes a scene's RON to stdout, `list` the built-in scenes.
    Scene {
        #[command(subcommand)]
        action: scenes::SceneAction,
    },
    /// Runs a scene (a name or a .ron file) and writes one mesh per frame (OBJ or binary PLY) and
    /// frames.csv (frame, time, energy, max_strain, residual); `--plot DIR` adds energy.svg and strain.svg.
    Run(run::RunCli),
    /// Lists the adapters wgpu sees, with their limits.
    Info,
}

fn print_table(rows: &[BenchResult]) -> std::io::Result<()> {
    outln!(
        "{:<10} {:>8} {:>8} {:<17} {:<4} {:>10} {:>10} {:>6} {:>10} {:>10} {:>6} {:>9} {:>6} {:>10} {:>12}  adapter",
        "scene",
        "particles",
        "springs",
        "method",
        "back",
        "h",
        "h_max",
        "subst",
        "ms/frame",
        "ms/subst",
        "iters",
        "residual",
        "finite",
        "max_strain",
        "energy"
    )?;
    for r in rows {
        outln!(
            "{:<10} {:>8} {:>8} {:<17} {:<4} {:>10.3e} {:>10.3e} {:>6} {:>10.3} {:>10.4} {:>6} {:>9.2e} {:>6} {:>10.4} {:>12.5e}  {}",
            r.scene,
            r.particles,
            r.springs,
            r.method,
            r.backend,
            r.h,
            r.h_max,
            r.substeps,
            r.ms_per_frame,
            r.ms_per_substep,
            r.iterations,
            r.residual,
            r.finite,
            r.max_strain,
            r.energy,
            r.adapter
        )?;
    }
    Ok(())
}

fn split(s: &str) -> Vec<String> {
    s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect()
}

/// Whether option `id` of the subcommand in `matches` was given on the command line (not defaulted).
fn given_in(matches: Option<&ArgMatches>, id: &str) -> bool {
    matches.is_some_and(|m| m.try_contains_id(id).is_ok() && m.value_source(id) == Some(ValueSource::CommandLine))
}

/// Mesa's Vulkan drivers print `error: XDG_RUNTIME_DIR is invalid or not set in the environment.` on
/// every instance they create when the variable is missing (a headless shell, a container, CI), which a
/// user can do nothing about (issue #16 item 3). Before any thread or adapter exists, point it at a
/// private directory of this user's (mode 0700 under the temporary directory) when it is unset or not a
/// directory; a valid one is left as it is.
fn quiet_runtime_dir() {
    let valid = std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| std::path::Path::new(&d).is_dir());
    if valid {
        return;
    }
    let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
    let dir = std::env::temp_dir().join(format!("springsim-runtime-{user}"));
    if std::fs::create_dir_all(&dir).is_ok() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        }
        // edition 2021: set_var is safe; nothing else runs yet
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
    }
}

fn run() -> Result<()> {
    quiet_runtime_dir();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches.subcommand().map(|(_, m)| m);
    let given = |id: &str| given_in(sub, id);
    match cli.command.unwrap_or_else(default_demo) {
        Command::Demo(d) => run_demo(d, &given),
        Command::Scene { action } => scenes::run(action),
        Command::Run(r) => run::run(r),
        Command::Info => {
            let instance = instance_from_env();
            let adapters = pollster::block_on(instance.enumerate_adapters(springsim::wgpu::Backends::all()));
            if adapters.is_empty() {
                outln!("no adapters found (WGPU_BACKEND={})", std::env::var("WGPU_BACKEND").unwrap_or_else(|_| "all".into()))?;
            }
            for a in adapters {
                let info = a.get_info();
                let l = a.limits();
                outln!("{}", adapter_name(&info))?;
                outln!("  driver: {} {}", info.driver, info.driver_info)?;
                outln!(
                    "  limits: max_storage_buffer_binding_size = {}, max_buffer_size = {}, max_storage_buffers_per_shader_stage = {}, max_compute_workgroup_size_x = {}, max_compute_invocations_per_workgroup = {}, max_compute_workgroups_per_dimension = {}",
                    l.max_storage_buffer_binding_size,
                    l.max_buffer_size,
                    l.max_storage_buffers_per_shader_stage,
                    l.max_compute_workgroup_size_x,
                    l.max_compute_invocations_per_workgroup,
                    l.max_compute_workgroups_per_dimension
                )?;
            }
            Ok(())
        }
        Command::Bench {
            scene,
            scene_file,
            method,
            backend,
            frames,
            format,
            size,
            stiffness,
            substep_scale,
            h,
            frame_dt,
            drag,
            no_rayleigh,
            mesh,
            leu_interval,
            speed_limit,
            global,
            lg_iterations,
            global_iterations,
            preconditioner,
            factor_precision,
            newton_iterations,
            lg_split,
            cg_iterations,
            cg_tolerance,
            cg_warm_start,
            exact_jacobian,
            adaptive,
            no_adaptive,
            strain_limit,
            step_strain_limit,
            retry_residual,
            divergence,
            guard_every,
            allow_unstable,
        } => {
            let frames = count("frames", frames)?;
            let size = count_opt("size", size)?;
            let lg_split = count("lg_split", lg_split)?;
            let mut scenes = split(&scene);
            if scene_file.is_some() {
                let f = scenes::scene_arg(&scene, scene_file.as_deref())?;
                if given("scene") {
                    scenes.push(f);
                } else {
                    scenes = vec![f];
                }
            }
            // each scene's file, parsed (a name's embedded one): its method settings fill in what no
            // option gives explicitly
            let files = scenes.iter().map(|s| scene::load(s)).collect::<Result<Vec<_>, _>>()?;
            let all = method == "all";
            let methods: Vec<Method> = if all {
                Method::ALL.into_iter().filter(|&m| m != Method::Newton).collect()
            } else {
                split(&method).iter().map(|m| Method::parse(m)).collect::<Result<_, _>>()?
            };
            let backends: Vec<Backend> = split(&backend).iter().map(|b| Backend::parse(b)).collect::<Result<_, _>>()?;
            let mut settings = StepSettings { frame_dt, fixed_h: h, rayleigh: !no_rayleigh, ..Default::default() };
            if let Some(s) = substep_scale {
                settings.substep_scale = s;
            }
            if let Some(v) = leu_interval {
                settings.leu_interval = v;
            }
            if let Some(v) = speed_limit {
                settings.speed_limit = v;
            }
            settings.global = GlobalSolve::parse(&global)?;
            if let Some(v) = count_opt("lg_iterations", lg_iterations)? {
                settings.lg_iterations = v;
            }
            if let Some(v) = count_opt("global_iterations", global_iterations)? {
                settings.global_iterations = v;
            }
            settings.preconditioner = Preconditioner::parse(&preconditioner)?;
            settings.factor_precision = FactorPrecision::parse(&factor_precision)?;
            if let Some(v) = count_opt("newton_iterations", newton_iterations)? {
                settings.newton_iterations = v;
            }
            if let Some(v) = count_opt("cg_iterations", cg_iterations)? {
                settings.cg_max_iterations = v;
            }
            if let Some(v) = cg_tolerance {
                settings.cg_tolerance = v;
            }
            if let Some(v) = strain_limit {
                settings.strain_limit = v;
            }
            if let Some(v) = step_strain_limit {
                settings.step_strain_limit = v;
            }
            if let Some(v) = retry_residual {
                settings.retry_residual = v;
            }
            settings.exact_jacobian = exact_jacobian;
            settings.cg_warm_start = cg_warm_start;
            settings.adaptive = adaptive || !no_adaptive;
            settings.allow_unstable = allow_unstable;
            settings.guard.policy = DivergencePolicy::parse(&divergence)?;
            if let Some(v) = count_opt("guard_every", guard_every)? {
                settings.guard.every = v;
            }
            settings.validate()?;
            let per_scene = files
                .iter()
                .map(|sc| {
                    let mut st = settings.clone();
                    sc.file.method.apply(&mut st, &given);
                    if !given("frame_dt") {
                        st.frame_dt = sc.file.frame_dt;
                    }
                    st.validate()?;
                    let ms = if given("method") { methods.clone() } else { vec![sc.file.method.name] };
                    let n = if given("frames") { frames } else { sc.file.frames };
                    Ok((st, ms, n))
                })
                .collect::<springsim::Result<Vec<_>>>()?;
            SceneOptions { size, stiffness, mesh: mesh.clone() }.validate()?;
            if let Some(d) = drag.filter(|d| !(d.is_finite() && *d >= 0.0)) {
                return Err(springsim::Error::param("drag", d, "must be finite and >= 0").into());
            }
            let gpu = if backends.contains(&Backend::Gpu) {
                Some(GpuContext::headless().context("the gpu backend needs an adapter (try --backend cpu)")?)
            } else {
                None
            };
            let mut rows = Vec::new();
            let mut diverged = Vec::new();
            for (s, (settings, methods, frames)) in scenes.iter().zip(per_scene) {
                for &m in &methods {
                    for &b in &backends {
                        if b == Backend::Gpu && !m.on_gpu() {
                            if all {
                                continue;
                            }
                            anyhow::bail!("{m} runs on the CPU only (use --backend cpu)");
                        }
                        let mut options = SceneOptions { size, stiffness, mesh: mesh.clone() };
                        if s == "orbit" {
                            options.size = None;
                        }
                        let cfg = BenchConfig {
                            scene: s.clone(),
                            options,
                            method: m,
                            backend: b,
                            frames,
                            settings: settings.clone(),
                            drag,
                            lg_split_frames: lg_split,
                        };
                        let r = bench::run(&cfg, gpu.as_ref())?;
                        if format == Format::Json {
                            outln!("{}", serde_json::to_string(&r)?)?;
                        }
                        if let Some(d) = &r.diverged {
                            diverged.push(format!("{s} {m} {}: diverged at frame {}: {}", b.name(), d.frame, d.cause));
                        }
                        rows.push(r);
                    }
                }
            }
            if format == Format::Table {
                print_table(&rows)?;
            }
            if !diverged.is_empty() {
                return Err(Diverged(diverged.join("; ")).into());
            }
            Ok(())
        }
        Command::Converge {
            scene: name,
            size,
            stiffness,
            mesh,
            frame,
            iterations,
            global,
            global_iterations,
            newton_iterations,
            frame_dt,
            csv,
            svg,
        } => {
            let (size, frame, iterations) = (count_opt("size", size)?, count("frame", frame)?, count("iterations", iterations)?);
            let (global_iterations, newton_iterations) =
                (count("global_iterations", global_iterations)?, count("newton_iterations", newton_iterations)?);
            let model = scene::build(&name, &SceneOptions { size, stiffness, mesh })?;
            let globals = split(&global).iter().map(|g| converge::parse_series(g)).collect::<Result<Vec<_>, _>>()?;
            let cfg = converge::ConvergeConfig {
                frame,
                iterations,
                globals,
                global_iterations,
                newton_iterations,
                settings: StepSettings { frame_dt, ..Default::default() },
            };
            let r = converge::run(&model, &cfg)?;
            std::fs::write(&csv, r.to_csv()).with_context(|| format!("writing {}", csv.display()))?;
            let title = format!("{name}, frame {frame}: relative error (Liu et al. 2013, eq. 15)");
            std::fs::write(&svg, r.to_svg(&title)?).with_context(|| format!("writing {}", svg.display()))?;
            out!("{}", r.table())?;
            if r.star_residual > 1e-8 {
                eprintln!(
                    "warning: Newton's x* is only converged to |grad g| = {:.1e} of |grad g(y)| (try an earlier --frame or more --newton-iterations)",
                    r.star_residual
                );
            }
            outln!("wrote {} and {}", csv.display(), svg.display())?;
            Ok(())
        }
    }
}

/// A bench run the divergence guard found diverging (policy `report`): its records are printed, and
/// the exit status is 3.
#[derive(Debug)]
struct Diverged(String);

impl std::fmt::Display for Diverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Diverged {}

/// A count from the command line: negative numbers reach here (clap lets them through) and get the
/// validator's one-line error naming the field.
fn count(name: &str, v: i64) -> springsim::Result<usize> {
    usize::try_from(v).map_err(|_| springsim::Error::param(name, v, "must be >= 0"))
}

/// [`count`] of an optional value.
fn count_opt(name: &str, v: Option<i64>) -> springsim::Result<Option<usize>> {
    v.map(|v| count(name, v)).transpose()
}

/// A window or image size in pixels.
#[cfg_attr(not(feature = "viewer"), allow(dead_code))]
fn pixels(name: &str, v: i64) -> springsim::Result<u32> {
    u32::try_from(v).map_err(|_| springsim::Error::param(name, v, "must be in 0..=4294967295"))
}

/// Exit status 2 for an error, 3 for a divergence the guard found (policy `report`) or could not
/// recover from (policy `recover`).
fn main() {
    if let Err(e) = run() {
        // a reader that stopped reading (`| head`) is not a failure
        if e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)) {
            std::process::exit(0);
        }
        eprintln!("springsim: {e:#}");
        let diverged = e.downcast_ref::<Diverged>().is_some()
            || matches!(e.downcast_ref::<springsim::Error>(), Some(springsim::Error::Diverged { .. }));
        std::process::exit(if diverged { 3 } else { 2 });
    }
}
