//! Storage buffers split into bindings under the device's `max_storage_buffer_binding_size`
//! (`GpuOptions::with_max_binding_bytes` lowers the split size so that the split path runs at a small
//! size): the split engine steps bit for bit like the unsplit one for every method the split touches
//! (the neighbour table: every method; implicit Euler's blocks; local/global's tables and multigrid
//! matrices), and a buffer that needs more bindings than its kernels declare is refused with
//! one error naming it, its bytes and the limit.

mod common;

use springsim::gpu::GpuOptions;
use springsim::method::{GlobalSolve, Preconditioner};
use springsim::stepping::GpuSimulator;
use springsim::{Error, Method, Simulator, StepSettings};

/// The cloth's side: 24 × 24 = 576 particles, 3218 springs, 6436 incidence entries.
const SIDE: usize = 24;

/// The split size of the split runs: every buffer the split touches is larger at 24² (checked in
/// `split_sizes_exceed_the_cap`), and each fits the bindings its kernels declare.
const CAP: u64 = 64 << 10;

/// Positions and velocities after `frames` frames of `method` on the 24² cloth, with `options`.
fn run(ctx: &springsim::gpu::GpuContext, method: Method, settings: &StepSettings, options: GpuOptions, frames: usize) -> Vec<[f64; 3]> {
    let model = springsim::model::cloth(SIDE, None).unwrap();
    let mut sim = GpuSimulator::new_with_options(&ctx.device, &ctx.queue, &model, method, settings.clone(), options).unwrap();
    for _ in 0..frames {
        sim.step_frame().unwrap();
    }
    let (x, v) = sim.read_state().unwrap();
    x.into_iter().chain(v).collect()
}

/// The largest |a − b| over every coordinate, and whether every coordinate is finite.
fn max_diff(a: &[[f64; 3]], b: &[[f64; 3]]) -> (f64, bool) {
    let mut worst: f64 = 0.0;
    let mut finite = true;
    for (p, q) in a.iter().zip(b) {
        for c in 0..3 {
            finite &= p[c].is_finite() && q[c].is_finite();
            worst = worst.max((p[c] - q[c]).abs());
        }
    }
    (worst, finite)
}

fn compare(method: Method, settings: StepSettings, frames: usize) {
    let Some(ctx) = common::gpu() else { return };
    let whole = run(&ctx, method, &settings, GpuOptions::default(), frames);
    let split = run(&ctx, method, &settings, GpuOptions::default().with_max_binding_bytes(CAP), frames);
    let (diff, finite) = max_diff(&split, &whole);
    let moved = max_diff(&whole, &run(&ctx, method, &settings, GpuOptions::default(), 0)).0;
    println!(
        "{} ({:?}, {:?}): {frames} frames, split at {CAP} B vs whole: max |Δ| = {diff:e} (motion {moved:e})",
        method.name(),
        settings.global,
        settings.preconditioner
    );
    assert!(finite, "not finite");
    assert!(moved > 1e-3, "the cloth did not move ({moved})");
    assert_eq!(diff, 0.0, "the split path differs from the unsplit one by {diff}");
}

/// The sizes at 24²: the neighbour table (16 B per entry), the implicit blocks (32 B per entry) and
/// local/global's tables (offsets, entries, four words per spring) all pass the split size, so each is
/// split (and fits its bindings: 2, 4, 2).
#[test]
fn split_sizes_exceed_the_cap() {
    let model = springsim::model::cloth(SIDE, None).unwrap();
    let (n, s) = (model.n_particles() as u64, model.springs.len() as u64);
    let e = 2 * s;
    let sizes = [("nbr", 16 * e, 2), ("implicit_blocks", 32 * e, 4), ("local_global_tables", 4 * (n + 1 + e + 4 * s), 2)];
    for (name, bytes, slots) in sizes {
        println!("{name}: {bytes} B, split at {CAP} B into {} parts of at most {slots}", bytes.div_ceil(CAP));
        assert!(bytes > CAP, "{name} ({bytes} B) is not split at {CAP} B");
        assert!(bytes <= slots * CAP, "{name} ({bytes} B) does not fit {slots} bindings of {CAP} B");
    }
}

#[test]
fn symplectic_euler_split_matches_whole() {
    compare(Method::SymplecticEuler, StepSettings::default(), 2);
}

#[test]
fn implicit_euler_split_matches_whole() {
    compare(Method::ImplicitEuler, StepSettings::default(), 2);
}

#[test]
fn local_global_cg_jacobi_split_matches_whole() {
    let settings = StepSettings { global: GlobalSolve::Cg, preconditioner: Preconditioner::Jacobi, ..StepSettings::default() };
    compare(Method::LocalGlobal, settings, 2);
}

#[test]
fn local_global_cg_multigrid_split_matches_whole() {
    let settings = StepSettings { global: GlobalSolve::Cg, preconditioner: Preconditioner::Multigrid, ..StepSettings::default() };
    compare(Method::LocalGlobal, settings, 2);
}

/// A split size so small that the neighbour table needs more than its two bindings: one error naming
/// the buffer, its bytes and the limit (2 × the split size), no panic.
#[test]
fn a_table_past_its_bindings_is_refused_by_name() {
    let Some(ctx) = common::gpu() else { return };
    let model = springsim::model::cloth(SIDE, None).unwrap();
    let cap = 16 << 10;
    let options = GpuOptions::default().with_max_binding_bytes(cap);
    let err =
        match GpuSimulator::new_with_options(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, StepSettings::default(), options) {
            Err(e) => e,
            Ok(_) => panic!("a 103 KB neighbour table fit two bindings of 16 KiB"),
        };
    let msg = err.to_string();
    println!("{msg}");
    let bytes = 16 * 2 * model.springs.len() as u64;
    assert!(matches!(err, Error::BufferTooLarge { .. }), "{msg}");
    assert!(msg.contains("springsim.nbr") && msg.contains(&format!("{bytes} B")) && msg.contains(&format!("{} B", 2 * cap)), "{msg}");
}

/// `springsim bench --scene cloth --size 3000 --backend gpu` is refused from the cloth's counts before
/// the model is built: with the host memory capped at 100 MB (`SPRINGSIM_HOST_MEMORY`), building the
/// 3000² model first would be refused for host memory instead; the one line names the GPU buffer, and
/// the exit status is 1 (no signal). On a device whose binding limit holds the 288 MB state the check
/// passes and the host-memory refusal is the expected line instead.
#[test]
fn the_3000_cloth_is_refused_before_its_model_is_built() {
    let Some(ctx) = common::gpu() else { return };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_springsim"))
        .args(["bench", "--scene", "cloth", "--size", "3000", "--backend", "gpu"])
        .env("SPRINGSIM_HOST_MEMORY", "100000000")
        .output()
        .expect("run springsim");
    let err = String::from_utf8_lossy(&out.stderr);
    println!("exit {:?}: {err}", out.status.code());
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    let limit = ctx.device.limits().max_storage_buffer_binding_size;
    if limit < 288_000_000 {
        assert!(err.contains("GPU buffer springsim.state needs 288000000 B") && err.contains(&format!("of {limit} B")), "{err}");
    } else {
        assert!(err.contains("not enough host memory"), "{err}");
    }
}
