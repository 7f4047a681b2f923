//! `springsim run`: runs a scene (a built-in name or a .ron file) on the GPU or the CPU and writes one
//! mesh per frame (`frame_0001.obj` …: OBJ, or binary little-endian PLY with area-weighted vertex
//! normals), `frames.csv` (frame, time, energy, max_strain, residual, and the roughness: the median, 90th
//! and 99th percentile of the angle between adjacent triangles, in degrees) and, with `--plot`, energy.svg and
//! strain.svg.

use crate::bench::{make_simulator, Backend};
use anyhow::{Context, Result};
use springsim::cpu::CpuModel;
use springsim::gpu::GpuContext;
use springsim::method::DivergencePolicy;
use springsim::reference::stats::state_stats;
use springsim::scene::{self, SceneOptions};
use springsim::stepping::FrameReport;
use springsim::{Method, Simulator};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// The mesh format of `springsim run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MeshFormat {
    /// Wavefront OBJ: `v` lines and, for surfaces, `f` lines.
    Obj,
    /// Binary little-endian PLY: float x, y, z and, for surfaces, float nx, ny, nz and the faces.
    Ply,
}

impl MeshFormat {
    fn ext(self) -> &'static str {
        match self {
            MeshFormat::Obj => "obj",
            MeshFormat::Ply => "ply",
        }
    }
}

/// `springsim run`'s options.
#[derive(clap::Args)]
pub struct RunCli {
    /// The scene: a built-in name (see `springsim scene list`) or a scene file (.ron).
    scene: String,
    /// Frames to run and write (default: the scene's `frames`).
    #[arg(long, allow_negative_numbers = true)]
    frames: Option<i64>,
    /// The folder the frames go to (created when missing).
    #[arg(long)]
    out: PathBuf,
    /// The mesh format.
    #[arg(long, value_enum, default_value_t = MeshFormat::Obj)]
    format: MeshFormat,
    /// Where it runs: gpu (no adapter is an error, never a silent fallback), cpu or cpu-reference.
    #[arg(long, default_value = "gpu")]
    backend: String,
    /// Overwrite files that exist (without it, an existing file is an error naming it).
    #[arg(long)]
    force: bool,
    /// A folder for energy.svg and strain.svg (against time).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Particles per side (or per strand), instead of the scene's.
    #[arg(long, allow_negative_numbers = true)]
    size: Option<i64>,
    /// Spring stiffness k (N/m), instead of the scene's.
    #[arg(long, allow_negative_numbers = true)]
    stiffness: Option<f64>,
    /// OBJ file for the mesh builder.
    #[arg(long)]
    mesh: Option<PathBuf>,
    /// The method, instead of the scene's.
    #[arg(long)]
    method: Option<String>,
    /// A fixed step h (s), instead of the scene's.
    #[arg(long, allow_negative_numbers = true)]
    h: Option<f64>,
    /// h = S · h_max, instead of the scene's.
    #[arg(long, allow_negative_numbers = true)]
    substep_scale: Option<f64>,
    /// The frame step (s), instead of the scene's.
    #[arg(long, allow_negative_numbers = true)]
    frame_dt: Option<f64>,
    /// The divergence guard: recover (the default unless the scene says otherwise), report or ignore.
    #[arg(long)]
    divergence: Option<String>,
    /// Provot's strain limiting after every step at τ (> 0, e.g. 0.1), instead of the scene's.
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
}

/// One frame's row of frames.csv.
#[derive(Clone, Copy, Debug)]
struct Row {
    frame: usize,
    time: f64,
    energy: f64,
    max_strain: f64,
    residual: f64,
    /// The angle between adjacent triangles' normals (°): median, 90th and 99th percentiles (`None`
    /// without triangles).
    roughness: Option<springsim::reference::roughness::Roughness>,
}

/// Runs `springsim run`.
pub fn run(cli: RunCli) -> Result<()> {
    let sc = scene::load(&cli.scene)?;
    let size = crate::count_opt("size", cli.size)?;
    let mut model = sc.build(&SceneOptions { size, stiffness: cli.stiffness, mesh: cli.mesh.clone() })?;
    if let Some(sl) = crate::bench_cli::strain_limiting(
        cli.strain_limiting,
        cli.strain_limiting_passes,
        cli.strain_limiting_tolerance,
        cli.strain_limiting_acceleration,
    )? {
        model.strain_limit = Some(sl);
    }
    let frames = match cli.frames {
        Some(f) => crate::count("frames", f)?,
        None => sc.file.frames,
    };
    let method = match &cli.method {
        Some(m) => Method::parse(m)?,
        None => sc.file.method.name,
    };
    let mut settings = sc.settings();
    if let Some(h) = cli.h {
        settings.fixed_h = Some(h);
    }
    if let Some(s) = cli.substep_scale {
        settings.substep_scale = s;
    }
    if let Some(dt) = cli.frame_dt {
        settings.frame_dt = dt;
    }
    if let Some(d) = &cli.divergence {
        settings.guard.policy = DivergencePolicy::parse(d)?;
    }
    settings.validate()?;
    let backend = Backend::parse(&cli.backend)?;
    if backend == Backend::Gpu && !method.on_gpu() {
        anyhow::bail!("{method} runs on the CPU only (use --backend cpu)");
    }

    // every file this run writes; none is overwritten without --force
    let frame_path = |k: usize| cli.out.join(format!("frame_{k:04}.{}", cli.format.ext()));
    let csv_path = cli.out.join("frames.csv");
    let plots = cli.plot.as_ref().map(|d| (d.join("energy.svg"), d.join("strain.svg")));
    if !cli.force {
        let mut all = (1..=frames).map(frame_path).chain([csv_path.clone()]);
        let existing = all.find(|p| p.exists()).or_else(|| plots.iter().flat_map(|(e, s)| [e.clone(), s.clone()]).find(|p| p.exists()));
        if let Some(p) = existing {
            anyhow::bail!("{} exists (pass --force to overwrite)", p.display());
        }
    }
    std::fs::create_dir_all(&cli.out).with_context(|| format!("creating {}", cli.out.display()))?;
    if let Some(d) = &cli.plot {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }

    let gpu = if backend == Backend::Gpu {
        Some(GpuContext::headless().context("the gpu backend needs an adapter (try --backend cpu)")?)
    } else {
        None
    };
    let policy = settings.guard.policy;
    let frame_dt = settings.frame_dt;
    // the GPU's frames through the pipelined path (its reports judged by the guard a frame later; here
    // each frame is flushed, since its state is read back for the mesh anyway), except where a frame
    // needs the host between its steps
    let mut sim = match gpu.as_ref().filter(|_| backend == Backend::Gpu) {
        Some(ctx) => {
            let g = springsim::GpuSimulator::new(&ctx.device, &ctx.queue, &model, method, settings)?;
            if g.needs_blocking_frame() {
                Driver::Blocking(Box::new(g))
            } else {
                Driver::Pipelined(Box::new(g))
            }
        }
        None => Driver::Blocking(make_simulator(&model, method, backend, settings, gpu.as_ref())?),
    };
    let cm = CpuModel::new(&model)?;
    let normals = cli.format == MeshFormat::Ply && !model.triangles.is_empty();
    let pairs = springsim::reference::roughness::adjacent_pairs(&model.triangles);
    let mut rows = Vec::with_capacity(frames);
    let (mut sim_s, mut write_s) = (0.0, 0.0);
    let mut failed = None;
    let bar = crate::logging::Progress::new(frames as u64, "run");
    for k in 1..=frames {
        let t = Instant::now();
        let report = sim.frame()?;
        let (x, v) = sim.as_dyn().read_state()?;
        sim_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let stats = state_stats(&cm, &x, &v);
        rows.push(Row {
            frame: k,
            time: k as f64 * frame_dt,
            energy: stats.energy,
            max_strain: stats.max_strain,
            residual: report.residual,
            roughness: springsim::reference::roughness::roughness_of_pairs(&model.triangles, &pairs, &x),
        });
        let header = format!("springsim {}, {} on {}, frame {k}, t = {} s", sc.name(), method, backend.name(), k as f64 * frame_dt);
        let path = frame_path(k);
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?);
        match cli.format {
            MeshFormat::Obj => write_obj(&mut w, &x, &model.triangles, &header),
            MeshFormat::Ply => write_ply(&mut w, &x, &model.triangles, normals, &header),
        }
        .and_then(|_| w.flush())
        .with_context(|| format!("writing {}", path.display()))?;
        write_s += t.elapsed().as_secs_f64();
        bar.inc(1);
        if !stats.finite {
            failed = Some(k);
            break;
        }
    }
    drop(bar);
    std::fs::write(&csv_path, to_csv(&rows)).with_context(|| format!("writing {}", csv_path.display()))?;
    if let Some((energy, strain)) = &plots {
        let title = |what: &str| format!("{}: {what}, {method} on {}", sc.name(), backend.name());
        std::fs::write(energy, plot(&rows, |r| r.energy, &title("total energy"), "energy (J)")?)
            .with_context(|| format!("writing {}", energy.display()))?;
        std::fs::write(strain, plot(&rows, |r| r.max_strain, &title("largest strain"), "max strain |l - L|/L")?)
            .with_context(|| format!("writing {}", strain.display()))?;
    }
    let n = rows.len().max(1) as f64;
    outln!(
        "wrote {} frames ({}) and frames.csv to {}: {} vertices, {} triangles; {:.2} ms/frame simulating (with the read-back), {:.2} ms/frame writing",
        rows.len(),
        cli.format.ext(),
        cli.out.display(),
        model.n_particles(),
        model.triangles.len(),
        sim_s * 1e3 / n,
        write_s * 1e3 / n
    )?;
    if let Some(k) = failed {
        return Err(
            springsim::Error::Diverged { frame: k, what: "a coordinate is not finite (the frames up to it are written)".into() }.into()
        );
    }
    let log = sim.as_dyn().divergences();
    if policy == DivergencePolicy::Report {
        if let Some(d) = log.first() {
            return Err(crate::Diverged(format!("{} {method}: diverged at frame {}: {}", sc.name(), d.frame, d.cause)).into());
        }
    } else if !log.is_empty() {
        let what = if method == Method::Leu { "each halved LEU's re-linearization interval, or h" } else { "each halved h" };
        log::warn!("run: {} recoveries ({what})", log.len());
    }
    Ok(())
}

/// How `run` steps a frame: the GPU's pipelined path, or the blocking `step_frame` (the CPU, and the GPU
/// methods whose frames need the host between steps).
enum Driver {
    Pipelined(Box<springsim::GpuSimulator>),
    Blocking(Box<dyn Simulator>),
}

impl Driver {
    /// One frame: its report (with the guard's find, if any).
    fn frame(&mut self) -> springsim::Result<springsim::FrameReport> {
        match self {
            Driver::Blocking(s) => s.step_frame(),
            Driver::Pipelined(g) => {
                let mut report = springsim::FrameReport::default();
                for e in g.run_frames(1)? {
                    match e {
                        springsim::FrameEvent::Report { report: r, .. } => report = FrameReport { divergence: report.divergence, ..r },
                        springsim::FrameEvent::Diverged(d) => report.divergence = Some(d),
                        _ => {}
                    }
                }
                Ok(report)
            }
        }
    }

    fn as_dyn(&mut self) -> &mut dyn Simulator {
        match self {
            Driver::Pipelined(g) => g.as_mut(),
            Driver::Blocking(s) => s.as_mut(),
        }
    }
}

/// frames.csv.
fn to_csv(rows: &[Row]) -> String {
    let mut s = String::from("frame,time,energy,max_strain,residual,roughness_deg_median,roughness_deg_p90,roughness_deg_p99\n");
    for r in rows {
        // the roughness's cells are empty for a model without triangles
        let rough = r.roughness.map(|g| format!("{},{},{}", g.median_deg, g.p90_deg, g.p99_deg)).unwrap_or_else(|| ",,".into());
        s.push_str(&format!("{},{},{},{},{},{rough}\n", r.frame, r.time, r.energy, r.max_strain, r.residual));
    }
    s
}

/// An OBJ: the positions (as f32) and, for surfaces, the faces (1-based).
fn write_obj(w: &mut impl Write, x: &[[f64; 3]], triangles: &[[u32; 3]], header: &str) -> std::io::Result<()> {
    writeln!(w, "# {header}")?;
    for p in x {
        writeln!(w, "v {} {} {}", p[0] as f32, p[1] as f32, p[2] as f32)?;
    }
    for t in triangles {
        writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
    }
    Ok(())
}

/// Area-weighted vertex normals: the sum of the adjacent triangles' (b − a) × (c − a), whose length is
/// twice their area, normalised (zero for a vertex on no triangle or only on degenerate ones).
fn vertex_normals(x: &[[f64; 3]], triangles: &[[u32; 3]]) -> Vec<[f64; 3]> {
    let mut n = vec![[0.0f64; 3]; x.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| x[i as usize]);
        let (u, v) = ([b[0] - a[0], b[1] - a[1], b[2] - a[2]], [c[0] - a[0], c[1] - a[1], c[2] - a[2]]);
        let cr = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
        for &i in t {
            for k in 0..3 {
                n[i as usize][k] += cr[k];
            }
        }
    }
    for v in &mut n {
        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        if l > 0.0 && l.is_finite() {
            *v = v.map(|c| c / l);
        } else {
            *v = [0.0; 3];
        }
    }
    n
}

/// A binary little-endian PLY: `element vertex` with float x, y, z (and nx, ny, nz with `normals`), and
/// for surfaces `element face` with `list uchar int vertex_indices`.
fn write_ply(w: &mut impl Write, x: &[[f64; 3]], triangles: &[[u32; 3]], normals: bool, header: &str) -> std::io::Result<()> {
    let mut h = format!("ply\nformat binary_little_endian 1.0\ncomment {header}\nelement vertex {}\n", x.len());
    h.push_str("property float x\nproperty float y\nproperty float z\n");
    if normals {
        h.push_str("property float nx\nproperty float ny\nproperty float nz\n");
    }
    if !triangles.is_empty() {
        h.push_str(&format!("element face {}\nproperty list uchar int vertex_indices\n", triangles.len()));
    }
    h.push_str("end_header\n");
    w.write_all(h.as_bytes())?;
    let nrm = if normals { vertex_normals(x, triangles) } else { Vec::new() };
    for (i, p) in x.iter().enumerate() {
        for c in p {
            w.write_all(&(*c as f32).to_le_bytes())?;
        }
        if let Some(n) = nrm.get(i) {
            for c in n {
                w.write_all(&(*c as f32).to_le_bytes())?;
            }
        }
    }
    for t in triangles {
        w.write_all(&[3u8])?;
        for &i in t {
            w.write_all(&(i as i32).to_le_bytes())?;
        }
    }
    Ok(())
}

/// A line plot of one column against time, as SVG.
fn plot(rows: &[Row], y: impl Fn(&Row) -> f64, title: &str, y_label: &str) -> Result<String> {
    use plotters::prelude::*;
    let pts: Vec<(f64, f64)> = rows.iter().map(|r| (r.time, y(r))).filter(|(_, v)| v.is_finite()).collect();
    let (t0, t1) = (0.0, pts.iter().map(|p| p.0).fold(1e-6, f64::max));
    let (mut lo, mut hi) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.1), h.max(p.1)));
    if !(lo.is_finite() && hi.is_finite()) {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs().max(lo.abs()) * 1e-6).max(1e-12);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (800, 480)).into_drawing_area();
        let err = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("plotting {title}: {e:?}");
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(t0..t1, (lo - pad)..(hi + pad))
            .map_err(err)?;
        chart.configure_mesh().x_desc("time (s)").y_desc(y_label).draw().map_err(err)?;
        chart.draw_series(LineSeries::new(pts, BLUE.stroke_width(2))).map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// The mesh a frame file holds, for `model` (used by the tests of this module).
#[cfg(test)]
fn frame_bytes(format: MeshFormat, model: &springsim::Model) -> Vec<u8> {
    let mut v = Vec::new();
    match format {
        MeshFormat::Obj => write_obj(&mut v, &model.positions, &model.triangles, "test"),
        MeshFormat::Ply => write_ply(&mut v, &model.positions, &model.triangles, !model.triangles.is_empty(), "test"),
    }
    .map(|_| v)
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normals_of_a_flat_sheet_point_up() {
        let m = springsim::model::curtain(5, None).expect("curtain");
        for n in vertex_normals(&m.positions, &m.triangles) {
            assert!((n[1].abs() - 1.0).abs() < 1e-12 && n[0] == 0.0 && n[2] == 0.0, "{n:?}");
        }
    }

    #[test]
    fn ply_sizes() {
        let m = springsim::model::curtain(4, None).expect("curtain");
        let b = frame_bytes(MeshFormat::Ply, &m);
        let end = b.windows(11).position(|w| w == b"end_header\n").expect("header") + 11;
        assert_eq!(b.len() - end, 16 * 24 + m.triangles.len() * 13);
        let r = springsim::model::rope(6, None).expect("rope");
        let b = frame_bytes(MeshFormat::Ply, &r);
        let end = b.windows(11).position(|w| w == b"end_header\n").expect("header") + 11;
        assert_eq!(b.len() - end, 6 * 12);
        assert!(!String::from_utf8_lossy(&b[..end]).contains("face"));
    }

    #[test]
    fn obj_lines() {
        let m = springsim::model::curtain(3, None).expect("curtain");
        let s = String::from_utf8(frame_bytes(MeshFormat::Obj, &m)).expect("utf-8");
        assert_eq!(s.lines().filter(|l| l.starts_with("v ")).count(), 9);
        assert_eq!(s.lines().filter(|l| l.starts_with("f ")).count(), 8);
    }
}
