//! Shared test helpers.
#![allow(dead_code)]

use springsim::cpu::V3;
use springsim::gpu::GpuContext;
use springsim::model::Model;

/// The line a GPU test prints when it skips for want of an adapter; `.ci/run` counts these in its test
/// log and reports them as `N skipped`.
pub const SKIPPED: &str = "test gpu: skipped";

/// A headless GPU context, or `None` (the test then skips) when no adapter is found. With
/// `SPRINGSIM_REQUIRE_GPU=1` (as `.ci/run` sets) a missing adapter fails the test instead.
///
/// A skip writes `test gpu: skipped (no adapter: …)` to the process's stderr directly, not through
/// `eprintln!`, which the test harness captures and drops for a passing test: the line reaches the
/// test log whether the test passes or not, so that a run without a GPU does not read as all `ok`.
pub fn gpu() -> Option<GpuContext> {
    match GpuContext::headless() {
        Ok(c) => {
            eprintln!("adapter: {}", c.adapter_name());
            Some(c)
        }
        Err(e) => {
            if std::env::var("SPRINGSIM_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("SPRINGSIM_REQUIRE_GPU=1 but no GPU: {e}");
            }
            skipped(&format!("no adapter: {e}"));
            None
        }
    }
}

/// Reports a GPU test that skips (`why`: no adapter, no display, no binary) on the process's stderr as
/// `test gpu: skipped (why) in <test name>`.
pub fn skipped(why: &str) {
    use std::io::Write;
    let name = std::thread::current().name().unwrap_or("?").to_string();
    let _ = writeln!(std::io::stderr().lock(), "\n{SKIPPED} ({why}) in {name}");
}

/// ‖a − b‖₂ / ‖b‖₂ over every coordinate.
pub fn rel_err(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for (p, q) in a.iter().zip(b) {
        for c in 0..3 {
            num += (p[c] - q[c]).powi(2);
            den += q[c].powi(2);
        }
    }
    (num / den.max(1e-300)).sqrt()
}

/// ‖a − b‖₂ / ‖b − x0‖₂: the error relative to the motion since x0.
pub fn rel_err_motion(a: &[[f64; 3]], b: &[[f64; 3]], x0: &[[f64; 3]]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for ((p, q), o) in a.iter().zip(b).zip(x0) {
        for c in 0..3 {
            num += (p[c] - q[c]).powi(2);
            den += (q[c] - o[c]).powi(2);
        }
    }
    (num / den.max(1e-300)).sqrt()
}

/// A deterministic pseudo-random number in [−1, 1).
pub fn hash01(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The central field (c, s) of a model, (0, 0) when it has none.
pub fn central(model: &Model) -> (V3, f64) {
    model.forces.central.map(|(c, s)| (V3::from(c), s)).unwrap_or((V3::zeros(), 0.0))
}

/// ∇ of Liu eq. 8, g(x) = ½(x − y)ᵀM̃(x − y) + h²E(x), written out from the physics apart from the crate's
/// local/global code (tests/fd.rs checks it against differences of g): M̃(x − y) + h²[Σ k(l − L)n̂ (±) + m s(x − c) − m(g + d₀w)], 0 on pinned rows.
pub fn liu8_gradient(model: &Model, h: f64, y: &[V3], x: &[V3]) -> Vec<V3> {
    let (c, s) = central(model);
    let (g, w, d0) = (V3::from(model.forces.gravity), V3::from(model.forces.wind), model.forces.drag);
    let mut r: Vec<V3> = (0..x.len())
        .map(|i| (x[i] - y[i]) * (model.masses[i] * (1.0 + h * d0)) + ((x[i] - c) * s - g - w * d0) * (h * h * model.masses[i]))
        .collect();
    for sp in &model.springs {
        let (a, b) = (sp.a as usize, sp.b as usize);
        let dd = x[a] - x[b];
        let t = dd * (sp.k * (dd.norm() - sp.rest) / dd.norm() * h * h);
        r[a] += t;
        r[b] -= t;
    }
    (0..x.len()).map(|i| if model.pinned[i] { V3::zeros() } else { r[i] }).collect()
}

/// How close the cloth comes to passing through itself: the smallest distance between two particles
/// that no spring joins, over `spacing` (a cloth's grid spacing; [`springsim::reference::self_collision::self_gap`],
/// 1 when no such pair is within it), for a model without self-collision of its own.
pub fn cloth_gap(m: &springsim::reference::model::CpuModel, x: &[[f64; 3]], spacing: f64) -> f64 {
    let x: Vec<V3> = x.iter().map(|p| V3::new(p[0], p[1], p[2])).collect();
    springsim::reference::self_collision::self_gap(m, &springsim::model::SelfCollision::new(spacing), &x)
}
