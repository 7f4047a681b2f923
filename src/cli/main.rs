//! The `springsim` command line: `demo` (the window; the default), `bench` (headless benchmark),
//! `run` (a scene's frames as meshes), `scene` (scene files), `converge` (Liu et al. 2013's convergence
//! study), `info` (adapters).

use anyhow::{Context, Result};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

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
mod bench_cli;
mod bench_cost;
mod bench_frames;
mod blocking;
mod converge;
mod export;
mod logging;
mod machine;
mod paced;
mod presets;
mod report;
mod run;
mod scenes;
mod spread;
mod sustained;

#[cfg(feature = "viewer")]
use springsim::method::DivergencePolicy;
use springsim::scene::{self, SceneOptions};
#[cfg(feature = "viewer")]
use springsim::Method;
use springsim::StepSettings;
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "springsim", version, about = "GPU-compute mass-spring simulator (wgpu) with f64 CPU twins")]
struct Cli {
    /// With none, `demo` runs.
    #[command(subcommand)]
    command: Option<Command>,
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
    /// Write an animated GIF (offscreen, the window's pipelines): every --animation-every-th of the
    /// run's last --animation-frames x --animation-every frames (without --frames the run is that long).
    #[arg(long)]
    animation: Option<PathBuf>,
    /// GIF frames in the --animation.
    #[arg(long, default_value_t = 60, allow_negative_numbers = true, requires = "animation")]
    animation_frames: i64,
    /// Every K-th simulation frame becomes a GIF frame (the GIF's delays keep the simulated time).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, requires = "animation")]
    animation_every: i64,
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
        animation: d.animation,
        animation_frames: count("animation_frames", d.animation_frames)?,
        animation_every: count("animation_every", d.animation_every)?,
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
        animation_frames: 60,
        animation_every: 1,
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
    /// Runs scenes headless and prints one record per run (JSON lines, CSV, a markdown table or a plain
    /// table): every combination of the comma-separated scenes (or a --preset), sizes, methods and
    /// backends; --warmup frames untimed, then --frames timed ones; each record gives the median, mean,
    /// min, max and quartiles of the timed frames, the start-up apart (model, engine, k0, factorisation),
    /// the run's quality (energy drift, peak strain, final residual) and the machine (adapter, driver,
    /// wgpu backend, CPU model, threads, date). A progress bar shows on stderr when it is a terminal.
    Bench(bench_cli::BenchCli),
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
    logging::init();
    quiet_runtime_dir();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches.subcommand().map(|(_, m)| m);
    let given = |id: &str| given_in(sub, id);
    match cli.command.unwrap_or_else(default_demo) {
        Command::Demo(d) => run_demo(d, &given),
        Command::Scene { action } => scenes::run(action),
        Command::Run(r) => run::run(r),
        Command::Info => blocking::info(),
        Command::Bench(b) => bench_cli::run(b, sub),
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
            let steps = frame + cfg.globals.len() * iterations + newton_iterations.min(iterations);
            let bar = logging::Progress::new(steps as u64, "converge");
            let r = converge::run(&model, &cfg, &|what| {
                bar.set_message(what);
                bar.inc(1);
            })?;
            drop(bar);
            std::fs::write(&csv, r.to_csv()).with_context(|| format!("writing {}", csv.display()))?;
            let title = format!("{name}, frame {frame}: relative error (Liu et al. 2013, eq. 15)");
            std::fs::write(&svg, r.to_svg(&title)?).with_context(|| format!("writing {}", svg.display()))?;
            out!("{}", r.table())?;
            if r.star_residual > 1e-8 {
                log::warn!(
                    "Newton's x* is only converged to |grad g| = {:.1e} of |grad g(y)| (try an earlier --frame or more --newton-iterations)",
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
    usize::try_from(v).map_err(|_| springsim::Error::invalid(name, v, springsim::error::Bound::at_least(0.0)))
}

/// [`count`] of an optional value.
fn count_opt(name: &str, v: Option<i64>) -> springsim::Result<Option<usize>> {
    v.map(|v| count(name, v)).transpose()
}

/// A window or image size in pixels.
#[cfg_attr(not(feature = "viewer"), allow(dead_code))]
fn pixels(name: &str, v: i64) -> springsim::Result<u32> {
    u32::try_from(v).map_err(|_| springsim::Error::invalid(name, v, springsim::error::Bound::int_range(0, u32::MAX as i64)))
}

/// The exit status of a failed command: 3 for a divergence the guard found (policy `report`) or could
/// not recover from (policy `recover`); 1 where the input is fine but this machine cannot hold it (a GPU
/// buffer over the device's limits, kernels that bind more than the adapter allows, a model or engine
/// over the free host memory); 2 for any other error
/// (bad input: a value, a file, a name).
fn exit_status(e: &anyhow::Error) -> i32 {
    let lib = e.chain().find_map(|c| c.downcast_ref::<springsim::Error>());
    if e.downcast_ref::<Diverged>().is_some() || matches!(lib, Some(springsim::Error::Diverged { .. })) {
        3
    } else if matches!(
        lib,
        Some(springsim::Error::BufferTooLarge { .. } | springsim::Error::AdapterLimit { .. } | springsim::Error::HostMemory { .. })
    ) {
        1
    } else {
        2
    }
}

/// Runs the command; on an error, one line and [`exit_status`].
fn main() {
    if let Err(e) = run() {
        // a reader that stopped reading (`| head`) is not a failure
        if e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)) {
            std::process::exit(0);
        }
        log::error!("{e:#}");
        std::process::exit(exit_status(&e));
    }
}

#[cfg(test)]
mod tests {
    use super::exit_status;
    use springsim::Error;

    #[test]
    fn machine_limits_exit_1_bad_input_2() {
        let limit = Error::BufferTooLarge {
            buffer: "springsim.state".into(),
            bytes: 288_000_000,
            limit_name: "max_storage_buffer_binding_size",
            limit: 1 << 27,
        };
        assert_eq!(exit_status(&anyhow::Error::new(limit)), 1);
        let memory = Error::HostMemory { what: "the model".into(), bytes: 2, available: 1 };
        assert_eq!(exit_status(&anyhow::Error::new(memory).context("bench")), 1, "through a context too");
        assert_eq!(exit_status(&anyhow::Error::new(Error::invalid("stiffness", -5, springsim::error::Bound::above(0.0)))), 2);
        assert_eq!(exit_status(&anyhow::anyhow!("a file that does not parse")), 2);
    }
}
