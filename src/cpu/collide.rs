//! Colliders in f64: the CPU twin of `shaders/collide.wgsl`.
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

use super::{CpuModel, V3};
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

/// The `collide` kernel: every free particle against every collider (unit normals, as
/// [`CpuModel::new`] lays them out), in order.
pub fn collide(m: &CpuModel, x: &mut [V3], v: &mut [V3]) {
    if m.colliders.is_empty() {
        return;
    }
    for i in 0..m.n {
        if m.inv_mass[i] == 0.0 {
            continue;
        }
        for c in &m.colliders {
            match *c {
                Collider::HalfSpace { normal, offset, friction } => {
                    let n = V3::from(normal);
                    let phi = n.dot(&x[i]) - offset;
                    if phi < 0.0 {
                        x[i] -= n * phi;
                        v[i] = contact_velocity(v[i], n, friction);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contact_removes_inward_speed_and_applies_coulomb_friction() {
        let n = V3::new(0.0, 1.0, 0.0);
        // sliding fast: loses μ·Δv_n of its tangential speed
        let v = contact_velocity(V3::new(3.0, -2.0, 0.0), n, 0.5);
        assert!((v - V3::new(2.0, 0.0, 0.0)).norm() < 1e-15, "{v:?}");
        // sliding slowly: stops (static friction)
        let v = contact_velocity(V3::new(0.5, -2.0, 0.0), n, 0.5);
        assert_eq!(v, V3::zeros());
        // leaving: untouched
        let v = contact_velocity(V3::new(0.5, 1.0, 0.0), n, 0.5);
        assert_eq!(v, V3::new(0.5, 1.0, 0.0));
        // frictionless: the tangential part stays
        let v = contact_velocity(V3::new(0.5, -1.0, 0.25), n, 0.0);
        assert_eq!(v, V3::new(0.5, 0.0, 0.25));
    }
}
