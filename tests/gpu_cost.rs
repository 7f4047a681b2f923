//! The cost model's counts are what the engine records (issue #15 item 1). Every dispatch, pass and
//! submit of the GPU engine goes through its counting layer (`springsim::gpu::profiling::cost`; the source check
//! below fails on a raw `dispatch_workgroups`, `begin_compute_pass` or `submit` anywhere else in
//! `src/gpu`), and the counts of one recorded frame must equal an expectation derived here from the
//! plan alone (substeps × kernels per step, CG iterations × kernels per iteration, local/global
//! iterations × phases), independent of the library's cost model, which must agree with both. The
//! blocking path's submits and read-backs are checked the same way, and the timestamps take whichever
//! path the adapter offers (lavapipe's included).

mod common;

use springsim::gpu::base::layout::PCG_PER_LANE;
use springsim::gpu::{GpuContext, GpuOptions, Phase, TimestampSupport};
use springsim::method::DivergencePolicy;
use springsim::stepping::GpuSimulator;
use springsim::{GlobalSolve, Method, Preconditioner, Simulator, StepSettings};

/// Workgroups of a per-item dispatch (64 threads each, as `WORKGROUP_SIZE`).
fn wg(items: usize) -> u64 {
    items.div_ceil(64) as u64
}

/// The curtain at 21 × 21 with the settings the checks need: fixed budgets, no adaptive step, no guard.
fn setup(global: GlobalSolve, precond: Preconditioner) -> (springsim::Model, StepSettings) {
    setup_scene("curtain", global, precond)
}

/// [`setup`] on another scene.
fn setup_scene(scene: &str, global: GlobalSolve, precond: Preconditioner) -> (springsim::Model, StepSettings) {
    let src = springsim::scene::load(scene).unwrap();
    let model = src.build(&springsim::scene::SceneOptions { size: Some(21), ..Default::default() }).unwrap();
    let mut s =
        StepSettings { adaptive: false, cg_max_iterations: 7, local_global_iterations: 3, global_iterations: 5, ..Default::default() };
    s.global = global;
    s.preconditioner = precond;
    s.guard.policy = DivergencePolicy::Ignore;
    (model, s)
}

/// The configurations: every GPU method, local/global with each GPU global solve.
fn configs() -> Vec<(Method, GlobalSolve, Preconditioner)> {
    use GlobalSolve::*;
    use Method::*;
    use Preconditioner::{Jacobi, Multigrid};
    vec![
        (ExplicitEuler, Auto, Jacobi),
        (SymplecticEuler, Auto, Jacobi),
        (Midpoint, Auto, Jacobi),
        (Rk4, Auto, Jacobi),
        (Leu, Auto, Jacobi),
        (ImplicitEuler, Cg, Jacobi),
        (ImplicitEuler, Cg, Multigrid),
        (LocalGlobal, Cg, Jacobi),
        (LocalGlobal, Chebyshev, Jacobi),
        (LocalGlobal, Cg, Multigrid),
        (LocalGlobal, Chebyshev, Multigrid),
    ]
}

/// (dispatches, workgroups) of one planned frame, from the plan alone: `substeps` steps of `method`,
/// `c` collide dispatches per step (local/global: per iteration), n particles, ns springs; `mg` the
/// V-cycle's (dispatches, workgroups); `reduce`: the PCG sums its dot products in a one-workgroup
/// `pcg_reduce` before each `pcg_matvec` and `pcg_update`.
#[allow(clippy::too_many_arguments)]
fn expected(
    method: Method,
    global: GlobalSolve,
    s: &StepSettings,
    substeps: u64,
    every: u64,
    c: u64,
    n: usize,
    ns: usize,
    mg: Option<(u64, u64)>,
    update: Option<(u64, u64)>,
    reduce: bool,
) -> (u64, u64) {
    let r = reduce as u64;
    let g = wg(n);
    let (it, li, b) = (s.cg_max_iterations as u64, s.local_global_iterations as u64, s.global_iterations as u64);
    // per step: (per-particle dispatches, per-spring dispatches, one-workgroup dispatches)
    let (pp, ps, one, extra) = match (method, global) {
        (Method::ExplicitEuler | Method::SymplecticEuler, _) => (1, 0, 0, (0, 0)),
        (Method::Midpoint, _) => (2, 0, 0, (0, 0)),
        (Method::Rk4, _) => (4, 0, 0, (0, 0)),
        // step and fix-up per step; the linearisations are added per frame below
        (Method::Leu, _) => (2, 0, 0, (0, 0)),
        // prepare, pcg_begin, it × (matvec, update), pcg_finish (one workgroup), integrate; with the
        // multigrid the step's block sums and a V-cycle after begin and each update (a Jacobi solve's
        // fewer PCG workgroups are taken off below)
        (Method::ImplicitEuler, _) => {
            let v = mg.map_or((0, 0), |(d, w)| ((it + 1) * d, (it + 1) * w));
            let u = update.unwrap_or((0, 0));
            (3 + 2 * it, 0, 1 + r * 2 * it, (v.0 + u.0, v.1 + u.1))
        }
        (Method::LocalGlobal, GlobalSolve::Chebyshev) => {
            // inertia; li × (local step with the residual, budget iterations, advance); local step with the
            // residual, velocity, report. With Jacobi the residual takes the first iteration and, from a
            // budget of 2, the last one advances x
            let (cheb, advance, v) = match mg {
                Some((d, w)) => (2 * b, 1, (li * b * d, li * b * w)),
                None => (b.saturating_sub(1), (b < 2) as u64, (0, 0)),
            };
            (1 + li * (1 + cheb + advance) + 1 + 1, 0, 1, v)
        }
        (Method::LocalGlobal, _) => {
            // the PCG: begin, budget × (matvec, update), finish (one workgroup), a V-cycle after begin and each update
            let v = mg.map_or((0, 0), |(d, w)| (li * (b + 1) * d, li * (b + 1) * w));
            (1 + li * (1 + 1 + 2 * b + 1) + 1 + 1, 0, 1 + li + r * li * 2 * b, v)
        }
        _ => unreachable!(),
    };
    // with colliders local/global also projects its iterate after every iteration but the last
    let c = if method == Method::LocalGlobal { c * li } else { c };
    let mut d = substeps * (pp + ps + one + c) + substeps * extra.0;
    let mut w = substeps * ((pp + c) * g + ps * wg(ns) + one) + substeps * extra.1;
    if method == Method::ImplicitEuler && mg.is_none() {
        // a Jacobi solve's begin, matvec and update take PCG_PER_LANE particles a thread
        w -= substeps * (1 + 2 * it) * (g - (n as u64).div_ceil(64 * PCG_PER_LANE as u64));
    }
    if method == Method::Leu {
        d += substeps.div_ceil(every);
        w += substeps.div_ceil(every) * g;
    }
    (d, w)
}

#[test]
fn counted_dispatches_equal_the_plan_and_the_model() {
    let Some(ctx) = common::gpu() else { return };
    // the curtain has no colliders; drape-sphere's sphere adds a collide dispatch per step
    let mut runs: Vec<_> = configs().into_iter().map(|c| ("curtain", c)).collect();
    runs.push(("drape-sphere", (Method::SymplecticEuler, GlobalSolve::Auto, Preconditioner::Jacobi)));
    runs.push(("drape-sphere", (Method::LocalGlobal, GlobalSolve::Cg, Preconditioner::Jacobi)));
    let mut runs: Vec<_> = runs.into_iter().map(|r| (r, false)).collect();
    // the PCG's reduced dot products (at 21², far below the default threshold, forced)
    for c in [
        (Method::ImplicitEuler, GlobalSolve::Cg, Preconditioner::Jacobi),
        (Method::ImplicitEuler, GlobalSolve::Cg, Preconditioner::Multigrid),
        (Method::LocalGlobal, GlobalSolve::Cg, Preconditioner::Multigrid),
    ] {
        runs.push((("curtain", c), true));
    }
    for ((scene, (method, global, precond)), reduce) in runs {
        let (model, settings) = setup_scene(scene, global, precond);
        let label = format!("{scene} {method} {} {}{}", global.name(), precond.name(), if reduce { " reduced" } else { "" });
        let options = if reduce { GpuOptions::default().with_pcg_reduce_from(1) } else { GpuOptions::default() };
        let mut sim = GpuSimulator::new_with_options(&ctx.device, &ctx.queue, &model, method, settings.clone(), options).unwrap();
        let plan = sim.plan();
        let before = sim.probe().cost();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        sim.encode_frame(&mut enc).unwrap();
        let got = sim.probe().cost().since(&before);
        ctx.queue.submit([enc.finish()]);
        ctx.device.poll(springsim::wgpu::PollType::wait_indefinitely()).unwrap();

        let shape = sim.probe().frame_shape();
        let c = u64::from(!model.colliders.is_empty());
        let mg = shape.multigrid.map(|(d, w, _, _)| (d, w));
        let update = shape.multigrid_update.map(|(d, w, _, _)| (d, w));
        assert_eq!(mg.is_some(), precond == Preconditioner::Multigrid, "{label}: the V-cycle");
        assert_eq!(update.is_some(), precond == Preconditioner::Multigrid && method == Method::ImplicitEuler, "{label}: the block sums");
        let (d, w) = expected(
            method,
            global,
            &settings,
            plan.substeps as u64,
            plan.relinearize_every as u64,
            c,
            model.n_particles(),
            model.springs.len(),
            mg,
            update,
            reduce,
        );
        assert_eq!(shape.pcg_reduce, reduce, "{label}: the shape's pcg_reduce");
        println!("{label}: {} steps, {} dispatches, {} workgroups (expected {d}, {w})", got.steps, got.dispatches, got.workgroups);
        assert_eq!(got.steps, plan.substeps as u64, "{label}: steps");
        assert_eq!((got.dispatches, got.workgroups), (d, w), "{label}: counted (dispatches, workgroups) against the plan");
        assert_eq!((got.passes, got.submits, got.readbacks, got.uploads), (1, 0, 0, 0), "{label}: encode_frame records only");
        let m = sim.probe().cost_model();
        assert_eq!((m.dispatches(), m.workgroups(), m.passes), (d, w, 1), "{label}: the cost model against the plan");
        for p in Phase::ALL {
            assert_eq!(got.dispatches_in(p), m.dispatches_in(p), "{label}: {} dispatches", p.name());
        }
        assert!(
            m.kernel_bytes() >= m.floor_bytes && m.floor_bytes > 0,
            "{label}: kernel bytes {} below the floor {}",
            m.kernel_bytes(),
            m.floor_bytes
        );
    }
}

/// The pipelined frame (`GpuSimulator::encode_frame`) is the engine's frame and its report: under the
/// guard (policy `recover`, the default) one pass more with the two signal dispatches over the
/// particles; under `ignore` nothing more (the report's copies are not dispatches). Neither submits,
/// reads back (the report comes back mapped, a frame later) nor waits.
#[test]
fn the_pipelined_frame_is_the_engines_frame_and_its_report() {
    use springsim::method::GuardSettings;
    let Some(ctx) = common::gpu() else { return };
    let (model, settings) = setup_scene("curtain", GlobalSolve::Auto, Preconditioner::Jacobi);
    for policy in [DivergencePolicy::Recover, DivergencePolicy::Ignore] {
        let settings = StepSettings { guard: GuardSettings { policy, ..settings.guard.clone() }, ..settings.clone() };
        let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, settings).unwrap();
        let before = sim.probe().cost();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        sim.probe().encode_bare_frame(&mut enc).unwrap();
        let engine = sim.probe().cost().since(&before);
        let before = sim.probe().cost();
        sim.encode_frame(&mut enc).unwrap();
        let pipelined = sim.probe().cost().since(&before);
        ctx.queue.submit([enc.finish()]);
        let events = sim.flush_reports().unwrap();
        assert_eq!(events.len(), 1, "{policy:?}: one report: {events:?}");
        let groups = (model.n_particles() as u64).div_ceil(64);
        let extra = if policy == DivergencePolicy::Recover { (1, 2, groups + 1) } else { (0, 0, 0) };
        assert_eq!(
            (pipelined.passes - engine.passes, pipelined.dispatches - engine.dispatches, pipelined.workgroups - engine.workgroups),
            extra,
            "{policy:?}: the report's passes, dispatches and workgroups"
        );
        assert_eq!((pipelined.submits, pipelined.readbacks, pipelined.waits), (0, 0, 0), "{policy:?}");
    }
}

#[test]
fn blocking_steps_count_their_submits_and_read_backs() {
    let Some(ctx) = common::gpu() else { return };
    let cases = [
        (Method::SymplecticEuler, GlobalSolve::Auto),
        (Method::Leu, GlobalSolve::Auto),
        (Method::ImplicitEuler, GlobalSolve::Cg),
        (Method::LocalGlobal, GlobalSolve::Cg),
        (Method::LocalGlobal, GlobalSolve::Cholesky),
    ];
    for (method, global) in cases {
        let (model, settings) = setup(global, Preconditioner::Jacobi);
        let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, method, settings.clone()).unwrap();
        let (steps, n) = (sim.plan().substeps, model.n_particles() as u64);
        let before = sim.probe().cost();
        sim.probe().take_steps_blocking(steps).unwrap();
        let got = sim.probe().cost().since(&before);
        let label = format!("{method} {}", global.name());
        println!("{label}: {got:?}");
        // one submit of the steps with the report's copy recorded after them, read back once (16 B flags,
        // the PCG's 8 status words, local/global's statistics and status words); `cholesky`'s driver
        // submits per iteration, then the report's copy in a submit of its own
        let (submits, readbacks, bytes) = match (method, global) {
            (Method::SymplecticEuler, _) | (Method::Leu, _) => (1, 1, 16),
            (Method::ImplicitEuler, _) => (1, 1, 32),
            (Method::LocalGlobal, GlobalSolve::Cholesky) => {
                // per iteration: r read back (n vec4) and δ uploaded; one closing submit; the report
                let k = (steps * settings.local_global_iterations) as u64;
                assert_eq!(got.uploads, k, "{label}: δ uploads");
                assert_eq!(got.upload_bytes, k * 16 * n, "{label}: δ bytes");
                (k + 2, k + 1, k * 16 * n + 48)
            }
            _ => (1, 1, 48),
        };
        assert_eq!((got.submits, got.readbacks, got.readback_bytes), (submits, readbacks, bytes), "{label}: submits, read-backs, bytes");
        if global == GlobalSolve::Cholesky {
            assert_eq!(got.submits, sim.probe().cost_model().submits + 1, "{label}: the model's submits (plus the report)");
            assert_eq!(got.passes, sim.probe().cost_model().passes, "{label}: the model's passes");
        }
    }
}

#[test]
fn timestamps_take_the_path_the_adapter_offers() {
    let Some(ctx) = common::gpu() else { return };
    drop(ctx);
    let ctx = GpuContext::headless_with_timestamps().unwrap();
    let features = ctx.device.features();
    println!("adapter {}: device features {features:?}", ctx.adapter_name());
    let (model, settings) = setup(GlobalSolve::Cg, Preconditioner::Jacobi);
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::ImplicitEuler, settings).unwrap();
    assert!(sim.probe().gpu_times().is_none(), "nothing timed before asked");
    let support = sim.probe().enable_timestamps();
    println!("timestamps: {}", support.describe());
    assert_eq!(support, TimestampSupport::of(features));
    let before = sim.probe().cost();
    let steps = sim.plan().substeps;
    sim.probe().take_steps_blocking(steps).unwrap();
    let got = sim.probe().cost().since(&before);
    // the timestamps' own read-back is not the method's cost
    assert_eq!((got.submits, got.readbacks), (1, 1));
    match support {
        TimestampSupport::Unsupported(why) => {
            assert!(why.contains("TIMESTAMP_QUERY"), "{why}");
            assert!(sim.probe().gpu_times().is_none());
        }
        TimestampSupport::PerPhase | TimestampSupport::PassOnly => {
            let t = sim.probe().gpu_times().unwrap();
            println!("{t:?}");
            assert_eq!(t.frames, 1);
            assert!(t.total_ms.is_finite() && t.total_ms >= 0.0);
            let phases: f64 = t.phase_ms.iter().sum();
            if support == TimestampSupport::PerPhase {
                assert!((phases - t.total_ms).abs() <= 1e-9 * t.total_ms.max(1.0), "phases {phases} vs total {}", t.total_ms);
            }
        }
    }
}

/// `enable_kernel_timestamps`: where the adapter times inside passes, every dispatch of a frame is timed
/// and named by its entry point. For local/global with Chebyshev (3 iterations of 5, the first taken by
/// the residual and the last fused with the advance), per kernel:
/// the dispatches the counters saw, phase by phase; their milliseconds sum to the frame's GPU time and,
/// by phase, to the phase times; no dispatch is left unnamed (`?`). Without timestamps inside passes
/// there are no kernel times.
#[test]
fn kernel_timestamps_name_and_time_every_dispatch() {
    let Some(ctx) = common::gpu() else { return };
    drop(ctx);
    let ctx = GpuContext::headless_with_timestamps().unwrap();
    let (model, settings) = setup(GlobalSolve::Chebyshev, Preconditioner::Jacobi);
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::LocalGlobal, settings).unwrap();
    let support = sim.probe().enable_kernel_timestamps();
    let before = sim.probe().cost();
    let steps = sim.plan().substeps;
    sim.probe().take_steps_blocking(steps).unwrap();
    let got = sim.probe().cost().since(&before);
    let kernels = sim.probe().kernel_times();
    if support != TimestampSupport::PerPhase {
        assert!(kernels.is_empty(), "{kernels:?}");
        return;
    }
    for k in &kernels {
        println!("{k:?}");
    }
    assert!(kernels.iter().all(|k| k.kernel != "?"), "an unnamed dispatch: {kernels:?}");
    let dispatches = |name: &str| kernels.iter().filter(|k| k.kernel == name).map(|k| k.dispatches).sum::<u64>();
    // per global step: the first of the 5 iterations in local_global_local_residual, 3 sweeps, the last with the advance
    assert_eq!(dispatches("local_global_chebyshev"), steps as u64 * 3 * 3);
    assert_eq!(dispatches("local_global_chebyshev_advance"), steps as u64 * 3);
    assert_eq!(dispatches("local_global_advance"), 0);
    let t = sim.probe().gpu_times().unwrap();
    let total: f64 = kernels.iter().map(|k| k.ms).sum();
    assert!((total - t.total_ms).abs() <= 1e-9 * t.total_ms.max(1.0), "kernels {total} ms, frame {} ms", t.total_ms);
    for p in Phase::ALL {
        let (n, ms) = kernels.iter().filter(|k| k.phase == p.name()).fold((0, 0.0), |(n, ms), k| (n + k.dispatches, ms + k.ms));
        assert_eq!(n, got.dispatches_in(p), "{}: dispatches timed", p.name());
        let want = t.phase_ms[p as usize];
        assert!((ms - want).abs() <= 1e-9 * want.max(1.0), "{}: {ms} ms by kernel, {want} by phase", p.name());
    }
}

#[test]
fn every_dispatch_pass_and_submit_of_the_engine_goes_through_the_counters() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu");
    let mut stack = vec![dir];
    let mut raw = Vec::new();
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.file_name().is_some_and(|f| f == "cost.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (k, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if code.contains(".dispatch_workgroups(") && !code.contains("pass.dispatch_workgroups(") {
                    raw.push(format!("{}:{}: {line}", path.display(), k + 1));
                }
                if code.contains("begin_compute_pass(")
                    || code.contains("queue.submit(")
                    || code.contains(".write_buffer(") && !code.contains("counters.write_buffer(")
                {
                    raw.push(format!("{}:{}: {line}", path.display(), k + 1));
                }
            }
        }
    }
    assert!(raw.is_empty(), "recording that bypasses the counting layer:\n{}", raw.join("\n"));
}

/// `springsim bench`: the cost fields in every GPU record (with `--timestamps`, the GPU times or the
/// reason there are none), null on the CPU; CSV has them as columns.
#[test]
fn bench_records_carry_the_cost_fields() {
    let Some(ctx) = common::gpu() else { return };
    drop(ctx);
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_springsim")).args(args).output().expect("run springsim");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let json = run(&[
        "bench",
        "--scene",
        "rope",
        "--size",
        "16",
        "--method",
        "symplectic-euler,implicit-euler",
        "--backend",
        "gpu,cpu",
        "--frames",
        "2",
        "--timestamps",
    ]);
    let fields = [
        "passes_per_frame",
        "dispatches_per_frame",
        "workgroups_per_frame",
        "submits_per_frame",
        "readbacks_per_frame",
        "host_waits_per_frame",
        "readback_bytes_per_frame",
        "upload_bytes_per_frame",
        "steps_per_frame",
        "kernel_bytes_per_frame",
        "floor_bytes_per_frame",
    ];
    for line in json.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["backend"] == "cpu" {
            for f in fields.iter().chain(&["phases", "timestamps", "gpu_ms_per_frame"]) {
                assert!(r[f].is_null(), "{f} on the CPU: {r}");
            }
            continue;
        }
        for f in fields {
            assert!(r[f].as_f64().is_some_and(|v| v.is_finite() && v >= 0.0), "{f}: {r}");
        }
        let num = |f: &str| r[f].as_f64().unwrap();
        assert!(num("dispatches_per_frame") >= num("steps_per_frame") && num("passes_per_frame") >= 1.0, "{r}");
        assert!(num("kernel_bytes_per_frame") >= num("floor_bytes_per_frame") && num("floor_bytes_per_frame") > 0.0, "{r}");
        let ts = r["timestamps"].as_str().expect("timestamps asked for");
        if ts == "per-phase" || ts == "pass-only" {
            assert!(r["gpu_ms_per_frame"].as_f64().is_some_and(|v| v > 0.0), "{r}");
        } else {
            assert!(ts.starts_with("unsupported: ") && r["gpu_ms_per_frame"].is_null(), "{r}");
        }
        let phases = r["phases"].as_object().expect("phases");
        let sum: f64 = phases.values().map(|p| p["dispatches_per_frame"].as_f64().unwrap()).sum();
        assert_eq!(sum, num("dispatches_per_frame"), "{r}");
    }
    // without --kernel-times no record has kernels; with it, each kernel's dispatches add up to the
    // record's (per-phase timestamps), or there are none
    assert!(json.lines().all(|l| !l.contains("\"kernels\"")), "kernels without --kernel-times");
    let json = run(&["bench", "--scene", "rope", "--size", "16", "--backend", "gpu", "--frames", "2", "--kernel-times"]);
    let r: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    if r["timestamps"] == "per-phase" {
        let kernels = r["kernels"].as_array().expect("kernels");
        assert_eq!(kernels[0]["kernel"], "symplectic_step", "{r}");
        // the cost model's bytes for it, and the rate they were moved at
        let (mb, gbs, us) =
            (kernels[0]["mb_per_dispatch"].as_f64(), kernels[0]["gb_per_s"].as_f64(), kernels[0]["us_per_dispatch"].as_f64());
        let (mb, gbs, us) = (mb.expect("modelled bytes"), gbs.expect("a rate"), us.unwrap());
        assert!(mb > 0.0 && (gbs - mb * 1e6 / us / 1e3).abs() <= 1e-9 * gbs, "{r}");
        let sum: f64 = kernels.iter().map(|k| k["dispatches_per_frame"].as_f64().unwrap()).sum();
        assert_eq!(sum, r["dispatches_per_frame"].as_f64().unwrap(), "{r}");
        let ms: f64 = kernels.iter().map(|k| k["gpu_ms_per_frame"].as_f64().unwrap()).sum();
        let total = r["gpu_ms_per_frame"].as_f64().unwrap();
        assert!((ms - total).abs() <= 1e-9 * total.max(1.0), "{ms} vs {total}: {r}");
        // the markdown format adds the run's table per kernel before the machine line (which a line
        // naming a software rasterizer follows on lavapipe)
        let md = run(&[
            "bench",
            "--scene",
            "rope",
            "--size",
            "16",
            "--backend",
            "gpu",
            "--frames",
            "1",
            "--kernel-times",
            "--format",
            "markdown",
        ]);
        let at = md.find("GPU time per kernel, rope 16 symplectic-euler").expect(&md);
        let machine = md.find("\nCPU: ").expect(&md);
        assert!(md[at..machine].contains("| symplectic_step | forces |"), "{md}");
        assert!(md[at..].contains("| MB/dispatch (model) | GB/s |"), "{md}");
    } else {
        assert!(r["kernels"].is_null(), "{r}");
    }
    let csv = run(&["bench", "--scene", "rope", "--size", "16", "--backend", "gpu", "--frames", "1", "--format", "csv"]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for f in fields.iter().chain(&["timestamps", "gpu_ms_per_frame", "phase_dispatches_per_frame"]) {
        assert!(header.contains(f), "no column {f}: {header:?}");
    }
}
