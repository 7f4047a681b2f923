//! `springsim bench --export-model PATH`: the model a run simulates and its step plan, written as JSON
//! for a peer implementation (benches/peers/taichi_cloth.py) to read, so that the peer steps exactly the
//! same particles, masses, pins, springs, forces, step and substep count as springsim.

use serde::Serialize;
use springsim::error::Bound;
use springsim::method::StepPlan;
use springsim::{Error, Method, Model, Result};
use std::path::Path;

/// The exported model: flat arrays, one entry per particle or per spring.
#[derive(Serialize)]
struct Export<'a> {
    /// Format version of this file.
    version: u32,
    scene: &'a str,
    method: String,
    particles: usize,
    /// x, y, z per particle (m).
    positions: Vec<f64>,
    /// vx, vy, vz per particle (m/s).
    velocities: Vec<f64>,
    /// kg per particle.
    masses: &'a [f64],
    /// The indices of the pinned particles.
    pinned: Vec<u32>,
    /// Per spring: endpoints, rest length (m), stiffness (N/m), damping along the spring (N·s/m).
    spring_a: Vec<u32>,
    spring_b: Vec<u32>,
    spring_rest: Vec<f64>,
    spring_k: Vec<f64>,
    spring_kd: Vec<f64>,
    gravity: [f64; 3],
    drag: f64,
    wind: [f64; 3],
    /// The step h (s), the steps per frame and the Rayleigh α (s) of the run's plan.
    h: f64,
    substeps: usize,
    alpha: f64,
    frame_dt: f64,
    /// What the peer does not implement; it refuses a model where any of these is non-zero.
    unsupported: Vec<&'static str>,
}

/// Writes `model` and `plan` to `path` as JSON.
pub fn write(path: &Path, scene: &str, method: Method, model: &Model, plan: &StepPlan, frame_dt: f64) -> Result<()> {
    let mut unsupported = Vec::new();
    if model.forces.central.is_some() {
        unsupported.push("central field");
    }
    if !model.colliders.is_empty() {
        unsupported.push("colliders");
    }
    if !model.motions.is_empty() {
        unsupported.push("scripted motions");
    }
    if !model.fields.is_empty() {
        unsupported.push("point fields");
    }
    if model.aero_wind.is_some() {
        unsupported.push("aerodynamic wind");
    }
    if model.self_collision.is_some() {
        unsupported.push("self-collision");
    }
    if model.strain_limit.is_some() {
        unsupported.push("strain limiting");
    }
    let e = Export {
        version: 1,
        scene,
        method: method.name().to_string(),
        particles: model.n_particles(),
        positions: model.positions.iter().flatten().copied().collect(),
        velocities: model.velocities.iter().flatten().copied().collect(),
        masses: &model.masses,
        pinned: model.pinned.iter().enumerate().filter(|(_, &p)| p).map(|(i, _)| i as u32).collect(),
        spring_a: model.springs.iter().map(|s| s.a).collect(),
        spring_b: model.springs.iter().map(|s| s.b).collect(),
        spring_rest: model.springs.iter().map(|s| s.rest).collect(),
        spring_k: model.springs.iter().map(|s| s.k).collect(),
        spring_kd: model.springs.iter().map(|s| s.kd).collect(),
        gravity: model.forces.gravity,
        drag: model.forces.drag,
        wind: model.forces.wind,
        h: plan.h,
        substeps: plan.substeps,
        alpha: plan.alpha,
        frame_dt,
        unsupported,
    };
    let fail = |reason: String| Error::invalid("export-model", path.display().to_string(), Bound::Other(reason));
    let f = std::fs::File::create(path).map_err(|err| fail(format!("cannot create it: {err}")))?;
    serde_json::to_writer(std::io::BufWriter::new(f), &e).map_err(|err| fail(format!("cannot write it: {err}")))
}
