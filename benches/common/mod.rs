//! What the benches share: the scenes, and the small mode for CI.
//!
//! With the environment variable `CI` set the benches are small: the curtain only (no 256×256 cloth),
//! and short warm-up and measurement times. `cargo test --all-targets` builds every bench and runs each
//! benchmark once in criterion's test mode, so in CI the set-up (building the 256² models, their
//! factorisations and GPU pipelines) is what costs; the small mode leaves it out.

#![allow(dead_code)] // each bench uses part of it

use criterion::{measurement::WallTime, BenchmarkGroup};
use springsim::{model, Model};
use std::time::Duration;

/// Whether `CI` is set (and not empty or `0`/`false`).
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The scenes: Liu et al.'s 81×81 curtain, and (not in CI) the 256×256 cloth.
pub fn scenes() -> Vec<(&'static str, Model)> {
    let mut s = vec![("curtain81", model::curtain(81, None).expect("curtain"))];
    if !ci() {
        s.push(("cloth256", model::cloth(256, None).expect("cloth")));
    }
    s
}

/// Sample count and times for a group: criterion's least (10 samples) and short times in CI.
pub fn configure(g: &mut BenchmarkGroup<'_, WallTime>, secs: f64) {
    g.sample_size(10);
    if ci() {
        g.warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_millis(300));
    } else {
        g.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs_f64(secs));
    }
}
