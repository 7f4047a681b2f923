//! Colliders in f64: the twin of `shaders/collide.wgsl`, one particle at a time.
//!
//! After every step of every method each free particle is checked against the model's colliders in
//! order; one it has entered pushes it back out, with an inelastic response and Coulomb friction
//! (Bridson, Fedkiw & Anderson 2002, "Robust treatment of collisions, contact and friction for cloth
//! animation", §7.2):
//!
//! - **Position**: a particle at signed distance φ < 0 (inside) is projected along the collider's
//!   normal n̂ onto its surface: x ← x − φ n̂.
//! - **Normal velocity**: if it moves inwards (v_n = n̂·v < 0) that component is removed (no bounce):
//!   v ← v − v_n n̂, a normal velocity change Δv_n = −v_n > 0.
//! - **Friction**: the tangential velocity v_t = v − (n̂·v) n̂ loses μ·Δv_n of its length, clamped at
//!   zero (static friction when the normal impulse is large enough to stop it):
//!   v_t ← max(0, 1 − μ Δv_n / |v_t|) v_t. Resting on the ground, gravity brings Δv_n = g h each step,
//!   so a sliding particle decelerates at μg: Coulomb's law.
//!
//! A particle moving outwards while still inside is only projected. Pinned particles are never moved.

use super::model::{CpuModel, V3};
use crate::model::Collider;

/// The velocity after a contact with normal `n` (unit) and friction `mu`: the inward normal component
/// removed and the tangential one reduced by μ·Δv_n, clamped at zero (see the module docs).
#[inline]
pub fn contact_velocity(v: V3, n: V3, mu: f64) -> V3 {
    let vn = n.dot(&v);
    if vn >= 0.0 {
        return v;
    }
    let dvn = -vn;
    let vt = v - n * vn;
    let t = vt.norm();
    if t <= 0.0 {
        return vt;
    }
    vt * (1.0 - mu * dvn / t).max(0.0)
}

/// `collide`: particle `i` of the state (x, v) against every collider; returns its new (x, v).
pub fn collide(i: usize, m: &CpuModel, x: &[V3], v: &[V3]) -> (V3, V3) {
    collide_particle(m, i, x[i], v[i])
}

/// The body of [`collide`] for particle `i` at (xᵢ, vᵢ): every collider (unit normals, as
/// [`CpuModel::new`] lays them out) in order. A pinned particle is returned unchanged.
#[inline]
pub fn collide_particle(m: &CpuModel, i: usize, mut xi: V3, mut vi: V3) -> (V3, V3) {
    if m.inv_mass[i] == 0.0 {
        return (xi, vi);
    }
    for c in &m.colliders {
        match *c {
            Collider::HalfSpace { normal, offset, friction } => {
                let n = V3::from(normal);
                let phi = n.dot(&xi) - offset;
                if phi < 0.0 {
                    xi -= n * phi;
                    vi = contact_velocity(vi, n, friction);
                }
            }
        }
    }
    (xi, vi)
}
