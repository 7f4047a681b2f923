//! Shared test helpers.
#![allow(dead_code)]

use springsim::gpu::GpuContext;

/// A headless GPU context, or `None` (the test then skips) when no adapter is found. With
/// `SPRINGSIM_REQUIRE_GPU=1` (as `.ci/run` sets) a missing adapter fails the test instead.
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
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
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
