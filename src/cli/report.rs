//! What `springsim bench` writes: the output formats (JSON lines, CSV, a markdown table and the plain
//! table) and the note under them when the GPU rows ran on a software rasterizer.

use crate::bench::BenchResult;

/// The line under the table and the markdown when a GPU row ran on a software rasterizer: its GPU
/// figures are the host CPU's, not a GPU's (docs/PERFORMANCE.md has the same runs on an NVIDIA H200).
pub fn software_note(rows: &[BenchResult]) -> Option<String> {
    let r = rows.iter().find(|r| r.software_adapter)?;
    let name = r.adapter.split(" (").next().unwrap_or(&r.adapter);
    Some(format!(
        "note: the gpu rows ran on {name}, a software rasterizer (a Vulkan driver on this machine's CPU cores, not a GPU); \
         an NVIDIA H200 runs the same frames {SOFTWARE_SPEEDUP} faster: docs/PERFORMANCE.md\n"
    ))
}

/// How much faster a discrete GPU ran the same frames than lavapipe did (docs/PERFORMANCE.md, "lavapipe
/// is not a GPU": an NVIDIA H200 against lavapipe on a 2-core VM, the curtain to the 1024² cloth).
const SOFTWARE_SPEEDUP: &str = "24-840x";

/// A number for CSV and markdown: empty when not finite (JSON writes null).
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_default()
}

/// A CSV column: its name and its cell.
type Column = (&'static str, fn(&BenchResult) -> String);

/// The CSV columns: the record's flat fields (the nested local/global splits stay in the JSON).
fn columns() -> Vec<Column> {
    vec![
        ("scene", |r| r.scene.clone()),
        ("preset", |r| opt(&r.preset)),
        ("size", |r| opt(&r.size)),
        ("particles", |r| r.particles.to_string()),
        ("springs", |r| r.springs.to_string()),
        ("method", |r| r.method.clone()),
        ("global_solve", |r| opt(&r.global_solve)),
        ("backend", |r| r.backend.clone()),
        ("adapter", |r| r.adapter.clone()),
        ("driver", |r| opt(&r.driver)),
        ("wgpu_backend", |r| opt(&r.wgpu_backend)),
        ("cpu", |r| r.cpu.clone()),
        ("threads", |r| r.threads.to_string()),
        ("os", |r| r.os.clone()),
        ("version", |r| r.version.clone()),
        ("date", |r| r.date.clone()),
        ("frame_dt", |r| num(r.frame_dt)),
        ("h", |r| num(r.h)),
        ("h_max", |r| num(r.h_max)),
        ("k0", |r| num(r.k0)),
        ("alpha", |r| num(r.alpha)),
        ("substeps", |r| r.substeps.to_string()),
        ("warmup", |r| r.warmup.to_string()),
        ("frames", |r| r.frames.to_string()),
        ("ms_per_frame", |r| num(r.ms_per_frame)),
        ("ms_mean", |r| num(r.ms_mean)),
        ("ms_min", |r| num(r.ms_min)),
        ("ms_q1", |r| num(r.ms_q1)),
        ("ms_q3", |r| num(r.ms_q3)),
        ("ms_max", |r| num(r.ms_max)),
        ("ms_iqr", |r| num(r.ms_iqr)),
        ("ms_per_substep", |r| num(r.ms_per_substep)),
        ("startup_ms", |r| num(r.startup_ms)),
        ("model_ms", |r| num(r.model_ms)),
        ("engine_ms", |r| num(r.engine_ms)),
        ("k0_ms", |r| num(r.k0_ms)),
        ("factor_ms", |r| num(r.factor_ms)),
        ("iterations", |r| r.iterations.to_string()),
        ("residual", |r| num(r.residual)),
        ("leu_retries", |r| r.leu_retries.to_string()),
        ("forced_steps", |r| r.forced_steps.to_string()),
        ("finite", |r| r.finite.to_string()),
        ("failed_frame", |r| opt(&r.failed_frame)),
        ("max_strain", |r| num(r.max_strain)),
        ("max_strain_peak", |r| num(r.max_strain_peak)),
        ("energy_start", |r| num(r.energy_start)),
        ("energy", |r| num(r.energy)),
        ("energy_drift", |r| num(r.energy_drift)),
        ("min_y", |r| num(r.min_y)),
        ("penetration", |r| r.penetration.map(num).unwrap_or_default()),
        ("self_gap", |r| r.self_gap.map(num).unwrap_or_default()),
        ("roughness_deg_median", |r| r.roughness_deg_median.map(num).unwrap_or_default()),
        ("roughness_deg_p90", |r| r.roughness_deg_p90.map(num).unwrap_or_default()),
        ("roughness_deg_p99", |r| r.roughness_deg_p99.map(num).unwrap_or_default()),
        ("strain_mean", |r| num(r.strain_mean)),
        ("strain_p99", |r| num(r.strain_p99)),
        ("strain_limit", |r| r.strain_limit.map(num).unwrap_or_default()),
        ("strain_over_limit", |r| r.strain_over_limit.map(num).unwrap_or_default()),
        ("max_stretch_peak", |r| r.max_stretch_peak.map(num).unwrap_or_default()),
        ("strain_passes_per_step", |r| r.strain_passes_per_step.map(num).unwrap_or_default()),
        ("strain_passes_most", |r| r.strain_passes_most.map(|m| m.to_string()).unwrap_or_default()),
        ("gpu_bytes", |r| opt(&r.gpu_bytes)),
        ("host_bytes_per_particle", |r| r.host_bytes_per_particle.map(num).unwrap_or_default()),
        ("divergence", |r| r.divergence.clone()),
        ("diverged", |r| r.diverged.as_ref().map(|d| format!("{} at frame {}", d.kind, d.frame)).unwrap_or_default()),
        ("recoveries", |r| r.recoveries.len().to_string()),
        ("guard_ms_per_frame", |r| num(r.guard_ms_per_frame)),
        ("sustained_frames", |r| r.sustained.sustained_frames.to_string()),
        ("sustained_ms_per_frame", |r| onum(r.sustained.sustained_ms_per_frame)),
        ("sustained_ms_iqr", |r| onum(r.sustained.sustained_ms_iqr)),
        ("sustained_iterations", |r| opt(&r.sustained.sustained_iterations)),
        ("sustained_finite", |r| opt(&r.sustained.sustained_finite)),
        ("sustained_divergences", |r| opt(&r.sustained.sustained_divergences)),
        ("paced_hz", |r| onum(r.paced.paced_hz)),
        ("paced_frames", |r| r.paced.paced_frames.to_string()),
        ("paced_missed", |r| opt(&r.paced.paced_missed)),
        ("paced_ms_per_frame", |r| onum(r.paced.paced_ms_per_frame)),
        ("paced_latency_ms", |r| onum(r.paced.paced_latency_ms)),
        ("paced_finite", |r| opt(&r.paced.paced_finite)),
        ("passes_per_frame", |r| onum(r.cost.passes_per_frame)),
        ("dispatches_per_frame", |r| onum(r.cost.dispatches_per_frame)),
        ("workgroups_per_frame", |r| onum(r.cost.workgroups_per_frame)),
        ("submits_per_frame", |r| onum(r.cost.submits_per_frame)),
        ("readbacks_per_frame", |r| onum(r.cost.readbacks_per_frame)),
        ("host_waits_per_frame", |r| onum(r.cost.host_waits_per_frame)),
        ("readback_bytes_per_frame", |r| onum(r.cost.readback_bytes_per_frame)),
        ("upload_bytes_per_frame", |r| onum(r.cost.upload_bytes_per_frame)),
        ("steps_per_frame", |r| onum(r.cost.steps_per_frame)),
        ("kernel_bytes_per_frame", |r| onum(r.cost.kernel_bytes_per_frame)),
        ("floor_bytes_per_frame", |r| onum(r.cost.floor_bytes_per_frame)),
        ("phase_dispatches_per_frame", |r| phase_list(r, |p| Some(p.dispatches_per_frame))),
        ("phase_kernel_bytes_per_frame", |r| phase_list(r, |p| Some(p.kernel_bytes_per_frame))),
        ("timestamps", |r| opt(&r.cost.timestamps)),
        ("gpu_ms_per_frame", |r| onum(r.cost.gpu_ms_per_frame)),
        ("phase_gpu_ms_per_frame", |r| phase_list(r, |p| p.gpu_ms_per_frame)),
    ]
}

/// An optional number: empty when absent or not finite.
fn onum(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

/// A per-phase figure as `forces=1.5;global=3` (empty on the CPU, or when no phase has it).
fn phase_list(r: &BenchResult, f: fn(&crate::bench_cost::PhaseRecord) -> Option<f64>) -> String {
    let Some(phases) = &r.cost.phases else { return String::new() };
    phases.iter().filter_map(|(name, p)| f(p).map(|v| format!("{name}={}", num(v)))).collect::<Vec<_>>().join(";")
}

/// A CSV cell, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV header line (no line break).
pub fn csv_header() -> String {
    columns().iter().map(|(n, _)| *n).collect::<Vec<_>>().join(",")
}

/// One record as a CSV line (no line break).
pub fn csv_row(r: &BenchResult) -> String {
    columns().iter().map(|(_, f)| csv_cell(&f(r))).collect::<Vec<_>>().join(",")
}

/// A markdown cell: `|` escaped.
fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Milliseconds to three significant digits or so, for the markdown table.
fn msf(v: f64) -> String {
    if !v.is_finite() {
        "–".to_string()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The records as a markdown table (one row per run; times in ms, frame times over the timed frames),
/// with `--kernel-times` a table per run of its GPU time per kernel, then one line naming the machine (CPU, threads, OS, springsim's version), the GPU drivers and the
/// dates.
pub fn markdown(rows: &[BenchResult]) -> String {
    let mut s = String::from(
        "| scene | size | particles | springs | method | backend | substeps | frames (+warm-up) | median ms/frame | IQR ms | min–max ms | sustained ms/frame | start-up ms | peak strain | energy drift J | residual | finite | adapter | passes/frame | dispatches/frame | submits/frame | read-back KB/frame | kernel MB/frame | floor MB/frame | kernel/floor | GPU ms/frame | GPU ms by phase |\n",
    );
    s.push_str(
        "|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        let scene = match &r.preset {
            Some(p) => format!("{} ({p})", r.scene),
            None => r.scene.clone(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} (+{}) | {} | {} | {}–{} | {} | {} | {:.4} | {:.3e} | {:.2e} | {} | {} | {} |\n",
            md(&scene),
            r.size.map(|n| n.to_string()).unwrap_or_else(|| "–".into()),
            r.particles,
            r.springs,
            method_label(r),
            r.backend,
            r.substeps,
            r.frames,
            r.warmup,
            msf(r.ms_per_frame),
            msf(r.ms_iqr),
            msf(r.ms_min),
            msf(r.ms_max),
            sustained_md(&r.sustained),
            msf(r.startup_ms),
            r.max_strain_peak,
            r.energy_drift,
            r.residual,
            if r.finite { "yes" } else { "**no**" },
            md(&r.adapter),
            md_cost(r),
        ));
    }
    for r in rows {
        s.push_str(&md_kernels(r));
    }
    if let Some(first) = rows.first() {
        let mut drivers: Vec<&str> = rows.iter().filter_map(|r| r.driver.as_deref()).collect();
        drivers.dedup();
        let last = rows.last().map_or(&first.date, |r| &r.date);
        let dates = if last == &first.date { first.date.clone() } else { format!("{} to {last}", first.date) };
        s.push_str(&format!(
            "\nCPU: {} ({} threads), {}; springsim {}; GPU driver: {}; date: {dates}\n",
            md(&first.cpu),
            first.threads,
            first.os,
            first.version,
            if drivers.is_empty() { "none (CPU runs)".to_string() } else { md(&drivers.join(", ")) },
        ));
    }
    if let Some(note) = software_note(rows) {
        s.push('\n');
        s.push_str(&note);
    }
    s
}

/// The sustained frames' median, marked when they diverged or ended non-finite; "–" without them.
fn sustained_md(s: &crate::sustained::Sustained) -> String {
    match (s.sustained_ms_per_frame, s.sustained_finite, s.sustained_divergences) {
        (Some(ms), Some(true), Some(0)) => msf(ms),
        (Some(ms), finite, d) => format!(
            "{} (**{}**)",
            msf(ms),
            if finite == Some(false) { "non-finite".to_string() } else { format!("{} divergences", d.unwrap_or(0)) }
        ),
        _ => "–".to_string(),
    }
}

/// The method with its linear solve where it has one: `local-global (chebyshev+multigrid)`.
fn method_label(r: &BenchResult) -> String {
    match &r.global_solve {
        Some(g) => format!("{} ({g})", r.method),
        None => r.method.clone(),
    }
}

/// `--kernel-times`: the run's GPU time per kernel as a markdown table of its own, the longest first
/// (empty without them).
fn md_kernels(r: &BenchResult) -> String {
    let Some(kernels) = r.cost.kernels.as_ref() else { return String::new() };
    let size = r.size.map(|n| format!(" {n}")).unwrap_or_default();
    let mut s = format!(
        "\nGPU time per kernel, {}{size} {} on {}:\n\n| kernel | phase | dispatches/frame | workgroups/dispatch | µs/dispatch | GPU ms/frame | MB/dispatch (model) | GB/s |\n|---|---|---:|---:|---:|---:|---:|---:|\n",
        md(&r.scene),
        r.method,
        md(&r.adapter)
    );
    for k in kernels {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} | {} | {} | {} |\n",
            k.kernel,
            k.phase,
            msf(k.dispatches_per_frame),
            msf(k.workgroups_per_dispatch),
            k.us_per_dispatch,
            msf(k.gpu_ms_per_frame),
            k.mb_per_dispatch.map_or("–".to_string(), msf),
            k.gb_per_s.map_or("–".to_string(), msf)
        ));
    }
    s
}

/// The cost columns of a markdown row (`–` where the record has none: the CPU, no timestamps).
fn md_cost(r: &BenchResult) -> String {
    let c = &r.cost;
    let f = |v: Option<f64>, scale: f64| v.map_or("–".to_string(), |v| msf(v / scale));
    let ratio = match (c.kernel_bytes_per_frame, c.floor_bytes_per_frame) {
        (Some(k), Some(fl)) if fl > 0.0 => format!("{:.2}", k / fl),
        _ => "–".into(),
    };
    let by_phase = match (&c.timestamps, &c.phases) {
        (Some(t), Some(phases)) if t == "per-phase" => {
            phases.iter().filter_map(|(name, p)| p.gpu_ms_per_frame.map(|ms| format!("{name} {}", msf(ms)))).collect::<Vec<_>>().join(", ")
        }
        (Some(t), _) => md(t),
        (None, _) => "–".into(),
    };
    [
        f(c.passes_per_frame, 1.0),
        f(c.dispatches_per_frame, 1.0),
        f(c.submits_per_frame, 1.0),
        f(c.readback_bytes_per_frame, 1e3),
        f(c.kernel_bytes_per_frame, 1e6),
        f(c.floor_bytes_per_frame, 1e6),
        ratio,
        f(c.gpu_ms_per_frame, 1.0),
        by_phase,
    ]
    .join(" | ")
}

/// The plain table (`--format table`): one line per run, aligned.
pub fn table(rows: &[BenchResult]) -> String {
    let mut s = format!(
        "{:<10} {:>8} {:>8} {:<17} {:<4} {:>10} {:>10} {:>6} {:>10} {:>10} {:>6} {:>9} {:>6} {:>10} {:>12}  adapter\n",
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
    );
    for r in rows {
        s.push_str(&format!(
            "{:<10} {:>8} {:>8} {:<17} {:<4} {:>10.3e} {:>10.3e} {:>6} {:>10.3} {:>10.4} {:>6} {:>9.2e} {:>6} {:>10.4} {:>12.5e}  {}\n",
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
        ));
    }
    if let Some(note) = software_note(rows) {
        s.push_str(&note);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(csv_cell("llvmpipe (LLVM 15, 256 bits)"), "\"llvmpipe (LLVM 15, 256 bits)\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(num(f64::INFINITY), "");
        assert_eq!(num(0.5), "0.5");
    }
}
