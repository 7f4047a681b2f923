//! The convergence study of Liu et al. 2013 §5 (their Figure 2): for one frame of a scene, the relative
//! error of eq. 15, (g(xᵢ) − g(x*))/(g(x₀) − g(x*)), against iteration count and wall time, for
//! local/global with each global solver and for Newton's method, with x* from Newton's method. `springsim
//! converge` writes it as CSV and as an SVG plot. Everything runs on the CPU in f64 (the `cg` and
//! `chebyshev` series are the CPU twins of the GPU global steps).

use anyhow::Context;
use springsim::cpu::local_global::{local_global_energy, relative_error, LocalGlobal};
use springsim::cpu::newton::Newton;
use springsim::cpu::{CpuModel, V3};
use springsim::error::{Bound, Error, Result};
use springsim::method::{GlobalSolve, Method, Preconditioner, StepSettings};
use springsim::model::Model;
use springsim::stepping::CpuSimulator;
use springsim::Simulator;
use std::time::Instant;

/// What to study.
#[derive(Clone, Debug)]
pub struct ConvergeConfig {
    /// The frame studied: the scene is run this many frames first (local/global, Cholesky, 10 iterations
    /// per frame, as Liu's animations), and the next frame's step is the one solved.
    pub frame: usize,
    /// Local/global iterations per series.
    pub iterations: usize,
    /// The global solvers to run local/global with, each with its preconditioner (used by `cg` and
    /// `chebyshev`).
    pub globals: Vec<(GlobalSolve, Preconditioner)>,
    /// The budget of each `cg` or `chebyshev` global step.
    pub global_iterations: usize,
    /// Newton iterations for its own series, and at most for x*.
    pub newton_iterations: usize,
    /// Step settings (the step h is `frame_dt`).
    pub settings: StepSettings,
}

impl Default for ConvergeConfig {
    fn default() -> Self {
        ConvergeConfig {
            frame: 2,
            iterations: 1000,
            globals: vec![
                (GlobalSolve::Cholesky, Preconditioner::Jacobi),
                (GlobalSolve::Cg, Preconditioner::Jacobi),
                (GlobalSolve::Chebyshev, Preconditioner::Jacobi),
                (GlobalSolve::Cg, Preconditioner::Multigrid),
                (GlobalSolve::Chebyshev, Preconditioner::Multigrid),
            ],
            global_iterations: 20,
            newton_iterations: 200,
            settings: StepSettings::default(),
        }
    }
}

/// One point of a series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Iterations done.
    pub iteration: usize,
    /// Wall time of the solver since the step began (s), without the error evaluations.
    pub seconds: f64,
    /// Liu eq. 15.
    pub error: f64,
}

/// One solver's curve.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// `local-global/cholesky`, `local-global/cg`, `local-global/chebyshev` (`+multigrid` when so
    /// preconditioned) or `newton`.
    pub name: String,
    /// Set-up time (prefactorisation, spectral radius; the symbolic analysis of Newton's Hessian) (s).
    pub setup_seconds: f64,
    /// The points, one per iteration.
    pub points: Vec<Point>,
}

/// The study's result.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvergeResult {
    /// The scene's particles and springs.
    pub particles: usize,
    /// Springs.
    pub springs: usize,
    /// The frame studied.
    pub frame: usize,
    /// The step.
    pub h: f64,
    /// g(x₀) with x₀ = y.
    pub g0: f64,
    /// g(x*).
    pub g_star: f64,
    /// ‖∇g(x*)‖/‖∇g(y)‖: how exact x* is.
    pub star_residual: f64,
    /// Newton iterations spent on x*.
    pub star_iterations: usize,
    /// The curves.
    pub series: Vec<Series>,
}

fn v3(a: &[[f64; 3]]) -> Vec<V3> {
    a.iter().map(|p| V3::from(*p)).collect()
}

/// A local/global series' name: `local-global/<global>`, with `+multigrid` when so preconditioned.
pub fn series_name(global: GlobalSolve, precond: Preconditioner) -> String {
    match precond {
        Preconditioner::Jacobi | Preconditioner::Auto => format!("local-global/{}", global.name()),
        Preconditioner::Multigrid => format!("local-global/{}+multigrid", global.name()),
    }
}

/// Parses a `--global` item of `springsim converge`: a solver name, or `cg+multigrid` /
/// `chebyshev+multigrid`.
pub fn parse_series(s: &str) -> Result<(GlobalSolve, Preconditioner)> {
    let (g, p) = match s.split_once('+') {
        Some((g, p)) => (g, Preconditioner::parse(p)?),
        None => (s, Preconditioner::Jacobi),
    };
    let global = GlobalSolve::parse(g)?.resolve(Method::LocalGlobal)?;
    p.check(Method::LocalGlobal, global)?;
    Ok((global, p))
}

/// Runs the study on `model`. `tick` is told what is under way after each frame of the run-up and each
/// iteration of a series (for a progress bar).
pub fn run(model: &Model, cfg: &ConvergeConfig, tick: &dyn Fn(String)) -> anyhow::Result<ConvergeResult> {
    if cfg.iterations == 0 {
        return Err(Error::invalid("iterations", 0usize, Bound::at_least(1.0)).into());
    }
    let settings = StepSettings { global: GlobalSolve::Cholesky, local_global_iterations: 10, ..cfg.settings.clone() };
    settings.validate()?;
    let h = settings.frame_dt;
    let mut sim = CpuSimulator::new(model, Method::LocalGlobal, settings.clone())?;
    for f in 0..cfg.frame {
        // the library's error stays the source (its variant decides the exit status); the line reads
        // `linear solve failed: running up to frame N: failed at frame f: <the error>`
        sim.step_frame().with_context(|| format!("linear solve failed: running up to frame {}: failed at frame {f}", cfg.frame))?;
        tick(format!("frame {}", f + 1));
    }
    let (x, v) = sim.read_state()?;
    let (q, v) = (v3(&x), v3(&v));
    let cm = CpuModel::new(model)?;
    let n = cm.n;

    // x*: Newton from y
    let mut nt = Newton::new(&cm, h)?;
    let mut xs = vec![V3::zeros(); n];
    nt.begin(&cm, &q, &v, &mut xs);
    let y = nt.y().to_vec();
    let p = nt.params;
    let g0 = local_global_energy(&cm, &p, &y, &y);
    let g_ref = nt.gradient(&cm, &xs);
    let star = nt.polish(&cm, &mut xs, cfg.newton_iterations, 1e-10, g_ref)?;
    let g_star = local_global_energy(&cm, &p, &y, &xs);

    let mut series = Vec::new();
    for &(global, precond) in &cfg.globals {
        let t = Instant::now();
        let mut lg = LocalGlobal::new(&cm, h, global, 0.0, cfg.global_iterations)?;
        lg.set_preconditioner(&cm, precond)?;
        let setup = t.elapsed().as_secs_f64();
        let mut x = vec![V3::zeros(); n];
        let mut points = Vec::with_capacity(cfg.iterations);
        let mut secs = 0.0;
        let t = Instant::now();
        lg.begin(&cm, &q, &v, &mut x);
        secs += t.elapsed().as_secs_f64();
        for k in 1..=cfg.iterations {
            let t = Instant::now();
            lg.local(&cm, &x);
            lg.global_step(&cm, &mut x)?;
            secs += t.elapsed().as_secs_f64();
            points.push(Point { iteration: k, seconds: secs, error: relative_error(local_global_energy(&cm, &p, &y, &x), g_star, g0) });
            tick(series_name(global, precond));
        }
        series.push(Series { name: series_name(global, precond), setup_seconds: setup, points });
    }
    // Newton's own curve, from y
    let t = Instant::now();
    let mut nt = Newton::new(&cm, h)?;
    let setup = t.elapsed().as_secs_f64();
    let mut x = vec![V3::zeros(); n];
    nt.begin(&cm, &q, &v, &mut x);
    let mut points = Vec::new();
    let mut secs = 0.0;
    for k in 1..=cfg.newton_iterations.min(cfg.iterations) {
        let t = Instant::now();
        let gn = nt.gradient(&cm, &x);
        if gn <= 1e-10 * g_ref {
            break;
        }
        nt.iterate(&cm, &mut x)?;
        secs += t.elapsed().as_secs_f64();
        points.push(Point { iteration: k, seconds: secs, error: relative_error(local_global_energy(&cm, &p, &y, &x), g_star, g0) });
        tick("newton".into());
    }
    series.push(Series { name: "newton".into(), setup_seconds: setup, points });
    Ok(ConvergeResult {
        particles: n,
        springs: cm.end_a.len(),
        frame: cfg.frame,
        h,
        g0,
        g_star,
        star_residual: star.residual,
        star_iterations: star.iterations,
        series,
    })
}

impl ConvergeResult {
    /// CSV: `series,iteration,seconds,relative_error`.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("series,iteration,seconds,relative_error\n");
        for se in &self.series {
            for p in &se.points {
                s.push_str(&format!("{},{},{:.9e},{:.9e}\n", se.name, p.iteration, p.seconds, p.error));
            }
        }
        s
    }

    /// The Figure 2 inset: the error (and time) after 1, 10, 100 and 1000 iterations of each series.
    pub fn table(&self) -> String {
        let ks = [1usize, 10, 100, 1000];
        let mut s = format!(
            "frame {} ({} particles, {} springs, h = {:.4} s); x* by Newton in {} iterations, |grad g(x*)|/|grad g(y)| = {:.1e}\n",
            self.frame, self.particles, self.springs, self.h, self.star_iterations, self.star_residual
        );
        let w = self.series.iter().map(|se| se.name.chars().count()).max().unwrap_or(0).max(6);
        s.push_str(&format!("| {:<w$} | {:>9} |", "series", "setup ms"));
        for k in ks {
            s.push_str(&format!(" {:>20} |", format!("{k} it: error (ms)")));
        }
        s.push('\n');
        s.push_str(&format!("|{:-<width$}|{:-<11}|", "", "", width = w + 2));
        for _ in ks {
            s.push_str(&format!("{:-<22}|", ""));
        }
        s.push('\n');
        for se in &self.series {
            s.push_str(&format!("| {:<w$} | {:>9.2} |", se.name, se.setup_seconds * 1e3));
            for k in ks {
                match se.points.iter().find(|p| p.iteration == k) {
                    Some(p) => s.push_str(&format!(" {:>20} |", format!("{:.3e} ({:.1})", p.error, p.seconds * 1e3))),
                    None => s.push_str(&format!(" {:>20} |", "-")),
                }
            }
            s.push('\n');
        }
        s
    }

    /// The plot, like Liu's Figure 2: the relative error against iterations and against time, log-log.
    pub fn to_svg(&self, title: &str) -> Result<String> {
        use plotters::prelude::*;
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (1200, 520)).into_drawing_area();
            let err = |e: DrawingAreaErrorKind<_>| Error::invalid("svg", "plot", Bound::Other(format!("{e:?}")));
            root.fill(&WHITE).map_err(err)?;
            let root = root.titled(title, ("sans-serif", 20)).map_err(err)?;
            let (left, right) = root.split_horizontally(600);
            let floor = 1e-12;
            let all = || self.series.iter().flat_map(|s| s.points.iter());
            let e_min = all().map(|p| p.error.max(floor)).fold(1.0f64, f64::min).max(floor);
            let e_max = all().map(|p| p.error).fold(1.0f64, f64::max);
            let it_max = all().map(|p| p.iteration).max().unwrap_or(1).max(2) as f64;
            let t_min = all().map(|p| p.seconds).filter(|&t| t > 0.0).fold(f64::INFINITY, f64::min).min(1e-4);
            let t_max = all().map(|p| p.seconds).fold(1e-3f64, f64::max);
            let colors = [RED, BLUE, GREEN, BLACK, MAGENTA, CYAN];
            for (panel, by_time) in [(left, false), (right, true)] {
                let (x0, x1, label) = if by_time { (t_min, t_max * 1.2, "wall time (s)") } else { (1.0, it_max * 1.2, "iterations") };
                let mut chart = ChartBuilder::on(&panel)
                    .margin(12)
                    .x_label_area_size(40)
                    .y_label_area_size(70)
                    .build_cartesian_2d((x0..x1).log_scale(), (e_min..e_max * 1.5).log_scale())
                    .map_err(err)?;
                chart
                    .configure_mesh()
                    .x_desc(label)
                    .y_desc("relative error (Liu eq. 15)")
                    .y_label_formatter(&|v| format!("{v:.0e}"))
                    .x_label_formatter(&|v| format!("{v:.0e}"))
                    .draw()
                    .map_err(err)?;
                for (c, se) in self.series.iter().enumerate() {
                    let color = colors[c % colors.len()];
                    let pts: Vec<(f64, f64)> = se
                        .points
                        .iter()
                        .filter(|p| p.error > 0.0 && (!by_time || p.seconds > 0.0))
                        .map(|p| (if by_time { p.seconds } else { p.iteration as f64 }, p.error.max(floor)))
                        .collect();
                    chart
                        .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                        .map_err(err)?
                        .label(se.name.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
                }
                chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(err)?;
            }
            root.present().map_err(err)?;
        }
        Ok(out)
    }
}
