//! `springsim bench` as a benchmark people cite (issue #16 item 4) and the command line's progress
//! and logging (item 3): lists on every axis, warm-up, the median and spread of the frame times, the
//! start-up apart, the quality figures, the machine and the date in every record, the CSV and markdown
//! formats, Warp's cloth preset (on lavapipe with `SPRINGSIM_REQUIRE_GPU=1`, and on the CPU), the
//! progress bar only on a terminal, and `RUST_LOG`.

use serde_json::Value;
use std::process::{Command, Output};
use std::time::Instant;

fn springsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_springsim")).args(args).output().expect("run springsim")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8 output")
}

fn gpu_required() -> bool {
    std::env::var("SPRINGSIM_REQUIRE_GPU").as_deref() == Ok("1")
}

/// The JSON records of a successful run.
fn records(args: &[&str]) -> Vec<Value> {
    let out = springsim(args);
    assert!(out.status.success(), "{args:?}: status {:?}; stderr: {}", out.status, text(&out.stderr));
    text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

/// Splits one CSV line (RFC 4180 quoting, no line breaks inside cells).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// CSV text as rows of (column, cell) maps, checking every row has the header's width.
fn csv_rows(s: &str) -> (Vec<String>, Vec<std::collections::HashMap<String, String>>) {
    let mut lines = s.lines();
    let header = csv_fields(lines.next().expect("a header line"));
    let rows = lines
        .map(|l| {
            let cells = csv_fields(l);
            assert_eq!(cells.len(), header.len(), "row width: {l}");
            header.iter().cloned().zip(cells).collect()
        })
        .collect();
    (header, rows)
}

/// `2026-11-25T15:02:37Z`.
fn is_iso8601_utc(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && s.ends_with('Z')
        && [4, 7].iter().all(|&i| b[i] == b'-')
        && b[10] == b'T'
        && [13, 16].iter().all(|&i| b[i] == b':')
        && s[..4].parse::<u32>().is_ok_and(|y| y >= 2024)
        && s[5..7].parse::<u32>().is_ok_and(|m| (1..=12).contains(&m))
        && s[8..10].parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
}

/// The host's CPU model as /proc/cpuinfo has it, where it has one.
fn cpuinfo_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

/// `--scene a,b --size m,n --method x,y --backend p,q`: every combination once, in the order scene,
/// size, method, backend, each with the size it asked for.
#[test]
fn lists_on_every_axis() {
    let rs = records(&[
        "bench",
        "--scene",
        "rope,cloth",
        "--size",
        "6,8",
        "--method",
        "symplectic-euler,rk4",
        "--backend",
        "cpu,cpu-reference",
        "--frames",
        "2",
    ]);
    assert_eq!(rs.len(), 16, "{rs:?}");
    let mut k = 0;
    for scene in ["rope", "cloth"] {
        for size in [6u64, 8] {
            for method in ["symplectic-euler", "rk4"] {
                for backend in ["cpu", "cpu-reference"] {
                    let r = &rs[k];
                    k += 1;
                    assert_eq!((r["scene"].as_str(), r["size"].as_u64()), (Some(scene), Some(size)), "{r}");
                    assert_eq!((r["method"].as_str(), r["backend"].as_str()), (Some(method), Some(backend)), "{r}");
                    let particles = if scene == "rope" { size } else { size * size };
                    assert_eq!(r["particles"].as_u64(), Some(particles), "{r}");
                    assert_eq!(r["frames"].as_u64(), Some(2));
                }
            }
        }
    }
    // `all` on the method axis, with two sizes: every CPU method but Newton at each size
    let rs = records(&["bench", "--scene", "rope", "--size", "5,7", "--method", "all", "--backend", "cpu", "--frames", "1"]);
    assert_eq!(rs.len(), 14, "7 methods x 2 sizes: {rs:?}");
    assert!(rs.iter().all(|r| r["method"] != "newton"));
    assert_eq!(rs.iter().filter(|r| r["size"] == 7).count(), 7);
}

/// The timed frames' median and spread, the warm-up untimed, the start-up in parts, the quality.
#[test]
fn median_spread_startup_and_quality() {
    let rs = records(&["bench", "--scene", "cloth", "--size", "12", "--backend", "cpu", "--frames", "7", "--warmup", "2"]);
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    assert_eq!((r["frames"].as_u64(), r["warmup"].as_u64()), (Some(7), Some(2)), "{r}");
    let (min, q1, med, q3, max) = (f(r, "ms_min"), f(r, "ms_q1"), f(r, "ms_per_frame"), f(r, "ms_q3"), f(r, "ms_max"));
    assert!(0.0 < min && min <= q1 && q1 <= med && med <= q3 && q3 <= max, "{r}");
    assert!((f(r, "ms_iqr") - (q3 - q1)).abs() < 1e-9, "{r}");
    assert!((min..=max).contains(&f(r, "ms_mean")), "{r}");
    assert!((f(r, "ms_per_substep") - med / f(r, "substeps")).abs() < 1e-9 * med.max(1.0), "{r}");
    let parts = ["model_ms", "engine_ms", "k0_ms", "factor_ms"].iter().map(|k| f(r, k)).collect::<Vec<_>>();
    assert!(parts.iter().all(|&p| p >= 0.0), "{r}");
    assert!((f(r, "startup_ms") - parts.iter().sum::<f64>()).abs() < 1e-6, "{r}");
    // symplectic Euler needs k0 (power iteration) and no factor
    assert!(f(r, "k0_ms") > 0.0 && f(r, "factor_ms") < f(r, "k0_ms"), "{r}");
    assert!((f(r, "energy_drift") - (f(r, "energy") - f(r, "energy_start"))).abs() < 1e-12, "{r}");
    assert!(f(r, "max_strain_peak") >= f(r, "max_strain") && f(r, "max_strain_peak") > 0.0, "{r}");
    assert!(f(r, "residual").is_finite());
    // local/global: the Cholesky factor is built before the first frame, and timed as factor_ms
    let rs = records(&["bench", "--scene", "cloth", "--size", "16", "--method", "local-global", "--backend", "cpu", "--frames", "2"]);
    let r = &rs[0];
    assert!(f(r, "factor_ms") > 0.0, "{r}");
    assert!(f(r, "k0_ms") < f(r, "factor_ms"), "implicit methods plan without k0: {r}");
    // the frames after the warm-up: the same run with more warm-up times as many frames
    let rs = records(&["bench", "--scene", "rope", "--backend", "cpu", "--frames", "3", "--warmup", "5"]);
    assert_eq!((rs[0]["frames"].as_u64(), rs[0]["warmup"].as_u64()), (Some(3), Some(5)));
}

/// `--sustained N`: the timed frames stepped again back to back on a fresh simulator, their median and spread, and
/// whether they stayed finite; none (and nulls) without it; on the CPU and the GPU alike, in every format.
#[test]
fn sustained_frames_after_the_timed_ones() {
    let r = &records(&["bench", "--scene", "rope", "--backend", "cpu", "--frames", "2", "--sustained", "5"])[0];
    assert_eq!((r["frames"].as_u64(), r["sustained_frames"].as_u64()), (Some(2), Some(5)), "{r}");
    assert!(f(r, "sustained_ms_per_frame") > 0.0 && f(r, "sustained_ms_iqr") >= 0.0, "{r}");
    assert_eq!((r["sustained_finite"].as_bool(), r["sustained_divergences"].as_u64()), (Some(true), Some(0)), "{r}");
    let r = &records(&["bench", "--scene", "rope", "--backend", "cpu", "--frames", "2"])[0];
    assert_eq!(r["sustained_frames"].as_u64(), Some(0), "{r}");
    for k in ["sustained_ms_per_frame", "sustained_ms_iqr", "sustained_iterations", "sustained_finite", "sustained_divergences"] {
        assert!(r[k].is_null(), "{k} without --sustained: {r}");
    }
    // the markdown column and the CSV fields
    let md = springsim(&["bench", "--scene", "rope", "--backend", "cpu", "--frames", "1", "--sustained", "2", "--format", "md"]);
    let row: Vec<String> = text(&md.stdout).lines().nth(2).unwrap_or("").split('|').map(|c| c.trim().to_string()).collect();
    assert!(row.get(12).and_then(|c| c.parse::<f64>().ok()).is_some_and(|ms| ms > 0.0), "{row:?}");
    let csv = springsim(&["bench", "--scene", "rope", "--backend", "cpu", "--frames", "1", "--sustained", "2", "--format", "csv"]);
    let (_, rows) = csv_rows(&text(&csv.stdout));
    assert_eq!((rows[0]["sustained_frames"].as_str(), rows[0]["sustained_finite"].as_str()), ("2", "true"), "{:?}", rows[0]);
    // the GPU: local/global's frames back to back
    let args =
        ["bench", "--scene", "cloth", "--size", "16", "--method", "local-global", "--backend", "gpu", "--frames", "1", "--sustained", "3"];
    let out = springsim(&args);
    if !out.status.success() && !gpu_required() {
        eprintln!("test gpu: skipped (no GPU: {})", text(&out.stderr).trim());
        return;
    }
    let r = &records(&args)[0];
    assert_eq!((r["sustained_frames"].as_u64(), r["sustained_finite"].as_bool()), (Some(3), Some(true)), "{r}");
    assert!(f(r, "sustained_ms_per_frame") > 0.0, "{r}");
}

/// The sustained frames are the timed frames again (a fresh simulator, its warm-up untimed): implicit
/// Euler's CG takes as many iterations a frame in both, on the CPU and the GPU, where the frames after
/// a longer warm-up take a different number (so the count tells the frames apart).
#[test]
fn sustained_frames_are_the_timed_frames() {
    for backend in ["cpu", "gpu"] {
        let run = |warmup: &str| {
            let args = [
                "bench",
                "--scene",
                "curtain",
                "--size",
                "21",
                "--method",
                "implicit-euler",
                "--backend",
                backend,
                "--warmup",
                warmup,
                "--frames",
                "4",
                "--sustained",
                "4",
            ];
            let out = springsim(&args);
            if !out.status.success() && backend == "gpu" && !gpu_required() {
                eprintln!("test gpu: skipped (no GPU: {})", text(&out.stderr).trim());
                return None;
            }
            let r = records(&args)[0].clone();
            Some((r["iterations"].as_u64(), r["sustained_iterations"].as_u64()))
        };
        let (Some(early), Some(late)) = (run("1"), run("6")) else { return };
        eprintln!("{backend}: CG iterations a frame, timed / sustained: frames 2–5 {early:?}, frames 7–10 {late:?}");
        assert!(early.0.is_some() && early.0 == early.1, "{backend}: {early:?}");
        assert!(late.0 == late.1, "{backend}: {late:?}");
        assert_ne!(early.0, late.0, "{backend}: the counts tell the frames apart");
    }
}

/// `--paced HZ`: 3 s of frames at an HZ clock's ticks, each tick either a frame recorded or a missed
/// refresh; on the CPU (blocking frames) and on the GPU (pipelined, two frames in flight); nulls without
/// it; a rate that is not positive is refused with one line naming it.
#[test]
fn paced_frames_at_a_refresh_rate() {
    let ticks = |r: &Value| r["paced_frames"].as_u64().unwrap_or(0) + r["paced_missed"].as_u64().unwrap_or(0);
    let r = &records(&["bench", "--scene", "rope", "--backend", "cpu", "--frames", "1", "--paced", "30"])[0];
    assert_eq!(r["paced_hz"].as_f64(), Some(30.0), "{r}");
    assert!((89..=91).contains(&ticks(r)) && r["paced_frames"].as_u64() > Some(0), "{r}");
    assert!(f(r, "paced_ms_per_frame") > 0.0 && f(r, "paced_latency_ms") > 0.0, "{r}");
    assert_eq!(r["paced_finite"].as_bool(), Some(true), "{r}");
    let r = &records(&["bench", "--scene", "rope", "--backend", "cpu", "--frames", "1"])[0];
    assert_eq!(r["paced_frames"].as_u64(), Some(0), "{r}");
    for k in ["paced_hz", "paced_missed", "paced_ms_per_frame", "paced_latency_ms", "paced_finite"] {
        assert!(r[k].is_null(), "{k} without --paced: {r}");
    }
    let out = springsim(&["bench", "--scene", "rope", "--frames", "1", "--paced", "0"]);
    assert!(!out.status.success() && text(&out.stderr).contains("paced = 0"), "{}", text(&out.stderr));
    let args =
        ["bench", "--scene", "cloth", "--size", "8", "--method", "symplectic-euler", "--backend", "gpu", "--frames", "1", "--paced", "60"];
    let out = springsim(&args);
    if !out.status.success() && !gpu_required() {
        eprintln!("test gpu: skipped (no GPU: {})", text(&out.stderr).trim());
        return;
    }
    let r = &records(&args)[0];
    assert!((179..=181).contains(&ticks(r)) && r["paced_frames"].as_u64() > Some(0), "{r}");
    assert!(f(r, "paced_ms_per_frame") > 0.0 && f(r, "paced_latency_ms") > 0.0, "{r}");
    assert_eq!((r["paced_finite"].as_bool(), r["host_waits_per_frame"].as_f64()), (Some(true), Some(0.0)), "{r}");
}

/// `host_bytes_per_particle`: the run's peak resident memory above the process's before it, over
/// particles (Linux). The CPU engine of a 128² cloth holds at least its f64 state twice (x, v and their
/// next copies: 96 B a particle) and the model's six springs a particle, so a figure under 150 B would be
/// a broken measurement, one over 20 KB a leak; every record has its own figure.
#[test]
#[cfg(target_os = "linux")]
fn host_memory_per_particle() {
    let rs = records(&["bench", "--scene", "cloth", "--size", "16,128", "--method", "implicit-euler", "--backend", "cpu", "--frames", "1"]);
    let big = f(&rs[1], "host_bytes_per_particle");
    assert!((150.0..20_000.0).contains(&big), "{}", rs[1]);
    assert!(f(&rs[0], "host_bytes_per_particle") >= 0.0, "{}", rs[0]);
}

/// Every record names the adapter, driver, backends, CPU model, threads, OS, version and date.
#[test]
fn every_record_names_the_machine_and_the_date() {
    let rs = records(&["bench", "--scene", "rope", "--method", "symplectic-euler,rk4", "--backend", "cpu,cpu-reference", "--frames", "1"]);
    assert_eq!(rs.len(), 4);
    for r in &rs {
        for key in ["adapter", "driver", "wgpu_backend", "backend", "cpu", "threads", "os", "version", "date"] {
            assert!(r.get(key).is_some(), "no {key} in {r}");
        }
        assert!(r["adapter"].as_str().is_some_and(|a| a.starts_with("cpu (f64")), "{r}");
        // a CPU run has no GPU driver
        assert!(r["driver"].is_null() && r["wgpu_backend"].is_null(), "{r}");
        let cpu = r["cpu"].as_str().expect("cpu");
        assert!(!cpu.is_empty(), "{r}");
        if let Some(model) = cpuinfo_model() {
            assert_eq!(cpu, model);
        }
        assert!(r["threads"].as_u64() >= Some(1));
        assert!(r["os"].as_str().is_some_and(|o| o.contains(std::env::consts::OS)), "{r}");
        assert_eq!(r["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
        let date = r["date"].as_str().expect("date");
        assert!(is_iso8601_utc(date), "date {date}");
    }
    let out = springsim(&["bench", "--scene", "rope", "--backend", "gpu", "--frames", "1"]);
    if !out.status.success() && !gpu_required() {
        eprintln!("test gpu: skipped (no GPU: {})", text(&out.stderr).trim());
        return;
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: Value = serde_json::from_str(text(&out.stdout).trim()).expect("one record");
    for key in ["adapter", "driver", "wgpu_backend"] {
        assert!(r[key].as_str().is_some_and(|s| !s.is_empty()), "{key} in {r}");
    }
    assert!(["vulkan", "metal", "dx12", "gl"].contains(&r["wgpu_backend"].as_str().unwrap_or("")), "{r}");
    assert!(is_iso8601_utc(r["date"].as_str().unwrap_or("")), "{r}");
}

/// `--format csv`: a header naming the columns, one line per run, quoted cells where needed.
#[test]
fn csv_has_the_columns_and_one_line_per_run() {
    let out = springsim(&["bench", "--scene", "rope,slinky", "--backend", "cpu", "--frames", "2", "--warmup", "1", "--format", "csv"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (header, rows) = csv_rows(&text(&out.stdout));
    for col in [
        "scene",
        "size",
        "particles",
        "method",
        "backend",
        "adapter",
        "driver",
        "wgpu_backend",
        "cpu",
        "date",
        "warmup",
        "frames",
        "ms_per_frame",
        "ms_min",
        "ms_q1",
        "ms_q3",
        "ms_max",
        "ms_iqr",
        "startup_ms",
        "k0_ms",
        "factor_ms",
        "energy_drift",
        "max_strain_peak",
        "residual",
        "finite",
    ] {
        assert!(header.iter().any(|h| h == col), "no column {col}: {header:?}");
    }
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0]["scene"].as_str(), rows[1]["scene"].as_str()), ("rope", "slinky"));
    for r in &rows {
        assert_eq!((r["warmup"].as_str(), r["frames"].as_str(), r["finite"].as_str()), ("1", "2", "true"));
        let q: Vec<f64> = ["ms_min", "ms_q1", "ms_per_frame", "ms_q3", "ms_max"].iter().map(|k| r[*k].parse().expect(k)).collect();
        assert!(q.windows(2).all(|w| w[0] <= w[1]), "{q:?}");
        assert!(is_iso8601_utc(&r["date"]), "{r:?}");
        assert_eq!(r["driver"], "", "CPU runs have no driver");
    }
}

/// `--format markdown` (and `md`): a table with one row per run, then the machine's line.
#[test]
fn markdown_table() {
    let out = springsim(&[
        "bench",
        "--scene",
        "rope",
        "--size",
        "6,9",
        "--backend",
        "cpu",
        "--frames",
        "3",
        "--warmup",
        "1",
        "--format",
        "markdown",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[0].starts_with("| scene | size | particles |") && lines[0].contains("median ms/frame"), "{s}");
    assert!(lines[0].contains("IQR ms") && lines[0].contains("start-up ms") && lines[0].contains("energy drift"), "{s}");
    assert!(lines[0].contains("| min–max ms | sustained ms/frame | start-up ms |"), "{s}");
    assert!(lines[1].starts_with("|---|"), "{s}");
    let width = lines[0].matches('|').count();
    let rows: Vec<Vec<&str>> = lines[2..4].iter().map(|l| l.split('|').map(str::trim).collect()).collect();
    for (row, n) in rows.iter().zip(["6", "9"]) {
        assert_eq!(row.len(), width + 1, "{row:?}");
        assert_eq!((row[1], row[2], row[3], row[5], row[6]), ("rope", n, n, "symplectic-euler", "cpu"), "{row:?}");
        assert_eq!(row[8], "3 (+1)", "{row:?}");
        assert_eq!(row[12], "–", "no sustained frames asked: {row:?}");
        assert_eq!(row[17], "yes", "{row:?}");
    }
    assert_eq!(lines[4], "", "a blank line after the table: {s}");
    let machine = lines[5];
    assert!(machine.starts_with("CPU: ") && machine.contains("springsim ") && machine.contains("date: "), "{machine}");
    let date = machine.rsplit("date: ").next().unwrap_or("");
    assert!(is_iso8601_utc(&date[..20.min(date.len())]), "{machine}");
    assert_eq!(lines.len(), 6, "{s}");
    let md = springsim(&["bench", "--scene", "rope", "--backend", "cpu", "--frames", "1", "--format", "md"]);
    assert!(text(&md.stdout).starts_with("| scene | size |"), "{}", text(&md.stdout));
}

fn check_warp_rows(csv: &str, sizes: &[u64], backend: &str) {
    let (header, rows) = csv_rows(csv);
    for col in [
        "adapter",
        "driver",
        "wgpu_backend",
        "cpu",
        "date",
        "ms_per_frame",
        "ms_iqr",
        "ms_min",
        "ms_max",
        "startup_ms",
        "energy_drift",
        "max_strain_peak",
        "residual",
    ] {
        assert!(header.iter().any(|h| h == col), "no column {col}: {header:?}");
    }
    assert_eq!(rows.len(), sizes.len(), "{csv}");
    for (r, &n) in rows.iter().zip(sizes) {
        let num = |k: &str| r[k].parse::<f64>().unwrap_or_else(|_| panic!("{k} = {:?}", r[k]));
        assert_eq!((r["scene"].as_str(), r["preset"].as_str(), r["method"].as_str()), ("cloth", "warp-cloth", "symplectic-euler"));
        assert_eq!(r["backend"], backend);
        assert_eq!(num("size") as u64, n);
        assert_eq!(num("particles") as u64, n * n);
        assert_eq!(num("springs") as u64, 6 * n * n - 10 * n + 2, "Warp's spring count");
        assert_eq!(num("substeps"), 16.0);
        assert!((num("h") - 1.0 / 960.0).abs() < 1e-15 && (num("frame_dt") - 1.0 / 60.0).abs() < 1e-15, "{r:?}");
        assert!(num("h") <= num("h_max"), "Warp's step is stable here too: {r:?}");
        assert_eq!((r["frames"].as_str(), r["finite"].as_str(), r["divergence"].as_str()), ("2", "true", "ignore"));
        assert!(num("ms_per_frame") > 0.0 && num("startup_ms") > 0.0);
        assert!(is_iso8601_utc(&r["date"]) && !r["cpu"].is_empty() && !r["adapter"].is_empty(), "{r:?}");
    }
}

/// `--preset warp-cloth --format csv` on the GPU: Warp's three grids, 16 substeps at 60 fps, k = 1000;
/// two frames each, as CI runs it on lavapipe (the 128x128 run must stay well under a minute).
#[test]
fn warp_cloth_preset_csv_on_the_gpu() {
    let t = Instant::now();
    let out = springsim(&["bench", "--preset", "warp-cloth", "--format", "csv", "--frames", "2"]);
    let secs = t.elapsed().as_secs_f64();
    if !out.status.success() && !gpu_required() {
        eprintln!("test gpu: skipped (no GPU: {})", text(&out.stderr).trim());
        return;
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).is_empty(), "stderr: {}", text(&out.stderr));
    let csv = text(&out.stdout);
    check_warp_rows(&csv, &[32, 64, 128], "gpu");
    let (_, rows) = csv_rows(&csv);
    for r in &rows {
        assert!(!r["driver"].is_empty() && !r["wgpu_backend"].is_empty(), "{r:?}");
    }
    assert!(secs < 60.0, "the preset took {secs:.1} s");
}

/// The preset on the CPU (no GPU needed), with explicit options over it: --size and --frames.
#[test]
fn warp_cloth_preset_on_the_cpu_and_options_over_it() {
    let out = springsim(&["bench", "--preset", "warp-cloth", "--backend", "cpu", "--size", "32,48", "--frames", "2", "--format", "csv"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_warp_rows(&text(&out.stdout), &[32, 48], "cpu");
    // --stiffness overrides the preset's k (a stiffer cloth: a larger k0)
    let k0 = |k: &str| {
        let rs = records(&["bench", "--preset", "warp-cloth", "--backend", "cpu", "--size", "32", "--frames", "1", "--stiffness", k]);
        f(&rs[0], "k0")
    };
    assert!(k0("2000") > 1.9 * k0("1000"));
    // and it runs Warp's 60 frames by default
    let rs = records(&["bench", "--preset", "warp-cloth", "--backend", "cpu", "--size", "16"]);
    assert_eq!(rs[0]["frames"].as_u64(), Some(60));
}

/// Bad lists and presets are one-line errors naming the field; a preset with a scene is refused.
#[test]
fn bad_sizes_and_presets_are_one_line_errors() {
    for (args, needle) in [
        (&["--size", "8,abc"][..], "size = abc"),
        (&["--size", "8,-3"][..], "size = -3"),
        (&["--preset", "warp"][..], "warp-cloth"),
        (&["--warmup", "-2"][..], "warmup = -2"),
    ] {
        let out = springsim(&[&["bench", "--backend", "cpu", "--frames", "1"][..], args].concat());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle) && !stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    let out = springsim(&["bench", "--preset", "warp-cloth", "--scene", "rope", "--backend", "cpu"]);
    assert!(!out.status.success() && text(&out.stderr).contains("--preset"), "{}", text(&out.stderr));
}

/// The progress bar: drawn when stderr is a terminal (under `script`, a pseudo-terminal), absent when
/// it is a pipe (stderr stays empty).
#[test]
fn progress_bar_only_on_a_terminal() {
    let bin = env!("CARGO_BIN_EXE_springsim");
    let args = "bench --scene cloth --size 24 --frames 30 --backend cpu --format json";
    let piped = Command::new(bin).args(args.split(' ')).output().expect("run");
    assert!(piped.status.success());
    assert!(piped.stderr.is_empty(), "a bar on a pipe: {}", text(&piped.stderr));
    assert_eq!(text(&piped.stdout).lines().count(), 1);
    // util-linux `script` gives the command a terminal; stdout goes to /dev/null, so what comes back is stderr
    let Ok(out) = Command::new("script").args(["-qec", &format!("{bin} {args} > /dev/null"), "/dev/null"]).output() else {
        eprintln!("skipped: no `script` to give springsim a terminal");
        return;
    };
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(tty.contains("bench [") && tty.contains("/30"), "no bar on a terminal: {tty:?}");
    assert!(tty.contains("cloth 24 symplectic-euler cpu"), "the run under way: {tty:?}");
}

/// Diagnostics go through `log`: a warning shows by default as `springsim: warning: ...`, and
/// `RUST_LOG` hides it (`springsim=error`, `off`).
#[test]
fn warnings_show_by_default_and_rust_log_filters_them() {
    let dir = std::env::temp_dir().join(format!("springsim-bench-cli-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // symplectic Euler at 1.3 h_max on the rope: the guard rolls back and halves h, and `run` warns
    let scene = dir.join("unstable-rope.ron");
    let rope = "(\n    model: (builder: \"rope\", size: 32),\n    method: (name: \"symplectic-euler\", substep_scale: 1.3, allow_unstable: true, divergence: \"recover\"),\n    frame_dt: 0.03333333333333333,\n    frames: 60,\n)\n";
    std::fs::write(&scene, rope).expect("write scene");
    let run = |rust_log: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_springsim"));
        c.args(["run", &scene.display().to_string(), "--backend", "cpu", "--force", "--out", &dir.join("frames").display().to_string()]);
        match rust_log {
            Some(v) => c.env("RUST_LOG", v),
            None => c.env_remove("RUST_LOG"),
        };
        c.output().expect("run springsim")
    };
    let out = run(None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("springsim: warning: run: ") && stderr.contains("recoveries (each halved h)"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for quiet in ["springsim=error", "off"] {
        let out = run(Some(quiet));
        assert!(out.status.success());
        assert!(out.stderr.is_empty(), "RUST_LOG={quiet}: {}", text(&out.stderr));
    }
    // and an error still shows under RUST_LOG naming another crate only
    let out = Command::new(env!("CARGO_BIN_EXE_springsim"))
        .env("RUST_LOG", "wgpu_core=info")
        .args(["bench", "--scene", "nope", "--backend", "cpu"])
        .output()
        .expect("run");
    assert!(text(&out.stderr).starts_with("springsim: ") && text(&out.stderr).contains("nope"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--export-model` (the Taichi peer's input, benches/peers/) writes the run's model and plan: as many
/// particles and springs as the record counts, its h and substeps, the pins; several runs are refused.
#[test]
fn export_model_writes_the_runs_model_and_plan() {
    let path = std::env::temp_dir().join(format!("springsim-export-{}.json", std::process::id()));
    let p = path.to_str().expect("utf-8 temp path");
    let r = records(&["bench", "--scene", "curtain", "--size", "9", "--backend", "cpu", "--frames", "1", "--export-model", p]);
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("the export")).expect("JSON");
    let _ = std::fs::remove_file(&path);
    let n = f(&r[0], "particles") as usize;
    assert_eq!(m["particles"].as_u64(), Some(n as u64));
    assert_eq!(m["positions"].as_array().map(|a| a.len()), Some(3 * n));
    assert_eq!(m["masses"].as_array().map(|a| a.len()), Some(n));
    let springs = f(&r[0], "springs") as usize;
    for key in ["spring_a", "spring_b", "spring_rest", "spring_k", "spring_kd"] {
        assert_eq!(m[key].as_array().map(|a| a.len()), Some(springs), "{key}");
    }
    assert_eq!(f(&m, "h"), f(&r[0], "h"));
    assert_eq!(f(&m, "substeps"), f(&r[0], "substeps"));
    // the curtain hangs from its two top corners
    assert_eq!(m["pinned"].as_array().map(|a| a.len()), Some(2));
    assert_eq!(m["unsupported"].as_array().map(|a| a.len()), Some(0));
    let out = springsim(&["bench", "--scene", "curtain,rope", "--backend", "cpu", "--frames", "1", "--export-model", p]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--export-model writes one run's model"), "{}", text(&out.stderr));
}

/// A GPU run's host memory does not grow with its frames (issue #15 item 4). lavapipe compiled a new
/// shader variant on every dispatch of a kernel whose branches read uniform-buffer words, and kept
/// each: at 16², peak resident memory after 3 and 20 frames was 18 → 72 MB for explicit Euler and
/// 56 → 323 MB for the vortex scene (symplectic Euler with its point fields) before the kernels' parameter
/// blocks became read-only storage (`gpu::base::pipelines::params`); now 9 → 9 MB for both. The bound is
/// 8 MB over the 17 frames (the record's `host_bytes_per_particle` × particles: peak RSS above the
/// process's before the run).
#[test]
fn a_gpu_runs_host_memory_does_not_grow_with_its_frames() {
    let vortex = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/vortex.ron");
    for (name, args) in
        [("explicit Euler", &["--scene", "cloth", "--method", "explicit-euler"][..]), ("the vortex scene", &["--scene-file", vortex][..])]
    {
        let peak = |frames: &str| {
            let out =
                springsim(&[&["bench", "--backend", "gpu", "--size", "16", "--format", "json", "--frames", frames][..], args].concat());
            if !out.status.success() && !gpu_required() {
                return None;
            }
            assert!(out.status.success(), "{name}: {}", text(&out.stderr));
            let r: Value = serde_json::from_str(text(&out.stdout).lines().next().expect("a record")).expect("JSON");
            Some(f(&r, "host_bytes_per_particle") * f(&r, "particles"))
        };
        let (Some(short), Some(long)) = (peak("3"), peak("20")) else {
            eprintln!("test gpu: skipped (no GPU)");
            return;
        };
        println!("{name}: peak {:.1} MB after 3 frames, {:.1} MB after 20", short / 1e6, long / 1e6);
        assert!(long - short < 8e6, "{name}: host memory grew by {:.1} MB from 3 to 20 frames", (long - short) / 1e6);
    }
}

/// The first command a reader runs prints lavapipe's rows beside the CPU's: when a GPU row ran on a
/// software rasterizer (wgpu's device type `Cpu`: lavapipe, SwiftShader), the table and the markdown
/// say so in one line under them, and point to the figures of a real GPU. Not on a real GPU, nor for
/// CPU rows alone; the JSON record carries no such field.
#[test]
fn a_software_adapter_is_named_under_the_table() {
    let run = |backend: &str, format: &str| {
        springsim(&["bench", "--scene", "cloth", "--size", "8", "--backend", backend, "--frames", "1", "--warmup", "0", "--format", format])
    };
    let json = run("gpu", "json");
    if !json.status.success() && !gpu_required() {
        eprintln!("test gpu: skipped (no GPU: {})", text(&json.stderr).trim());
        return;
    }
    assert!(json.status.success(), "{}", text(&json.stderr));
    let record: Value = serde_json::from_str(text(&json.stdout).lines().next().expect("a record")).expect("JSON");
    let adapter = record["adapter"].as_str().expect("adapter").to_string();
    let software =
        ["llvmpipe", "lavapipe", "swiftshader"].iter().any(|s| adapter.to_lowercase().contains(s)) || adapter.ends_with(", Cpu)");
    assert!(record.get("software_adapter").is_none(), "the record keeps its shape: {record}");
    let note = |s: &str| s.lines().filter(|l| l.starts_with("note: ")).map(str::to_string).collect::<Vec<_>>();
    for format in ["table", "markdown"] {
        let out = run("gpu,cpu", format);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let s = text(&out.stdout);
        let notes = note(&s);
        if software {
            assert_eq!(notes.len(), 1, "{format} on {adapter}: one note: {s}");
            let name = adapter.split(" (").next().unwrap_or(&adapter);
            assert!(notes[0].contains(name) && notes[0].contains("software rasterizer"), "{}", notes[0]);
            assert!(notes[0].contains("docs/PERFORMANCE.md"), "{}", notes[0]);
            assert!(s.trim_end().ends_with(notes[0].as_str()), "{format}: the note is the last line: {s}");
        } else {
            assert!(notes.is_empty(), "{format} on {adapter}: no note on a real GPU: {s}");
        }
        let cpu = text(&run("cpu", format).stdout);
        assert!(note(&cpu).is_empty(), "{format}: no note for CPU rows alone: {cpu}");
    }
    if software {
        println!("note on {adapter}: ok");
    }
}
