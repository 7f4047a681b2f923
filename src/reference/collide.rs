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
//!
//! A moving collider (a [`crate::model::Motion`] along a path) is placed where it is at the end of the
//! step, and the response acts on the particle's velocity relative to the collider's, u:
//! v ← u + response(v − u): a particle resting on a moving box is carried along by friction, one swept
//! by a sphere leaves with the sphere's normal speed. For a static collider u = 0 and nothing changes.
//!
//! The shapes with a skin (sphere, capsule, box) use their signed distance φ to the shape's surface
//! and its outward unit normal n̂ ([`distance`]); a particle with φ < t (inside the skin of thickness t)
//! is moved out along n̂ to φ = t: x ← x + (t − φ) n̂, then the same velocity response. For the box,
//! inside it n̂ is the normal of the nearest face, outside it the direction from the nearest point.

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

/// The unit quaternion q = (x, y, z, w) applied to v: v + 2w (u × v) + 2 u × (u × v), u = (x, y, z).
#[inline]
pub fn rotate(q: [f64; 4], v: V3) -> V3 {
    let u = V3::new(q[0], q[1], q[2]);
    let t = u.cross(&v) * 2.0;
    v + t * q[3] + u.cross(&t)
}

/// The signed distance φ from x to the surface of a sphere, capsule or box (negative inside) and the
/// outward unit normal there; `None` for the half-space (handled on its own, without a skin). A point
/// at a sphere's or capsule axis' centre takes the normal +y.
#[inline]
pub fn distance(c: &Collider, x: V3) -> Option<(f64, V3)> {
    let round = |p: V3, r: f64| {
        let d = x - p;
        let l = d.norm();
        if l > 0.0 {
            (l - r, d / l)
        } else {
            (-r, V3::new(0.0, 1.0, 0.0))
        }
    };
    match *c {
        Collider::HalfSpace { .. } => None,
        Collider::Sphere { center, radius, .. } => Some(round(V3::from(center), radius)),
        Collider::Capsule { a, b, radius, .. } => {
            let (a, ab) = (V3::from(a), V3::from(b) - V3::from(a));
            let den = ab.dot(&ab);
            let t = if den > 0.0 { ((x - a).dot(&ab) / den).clamp(0.0, 1.0) } else { 0.0 };
            Some(round(a + ab * t, radius))
        }
        Collider::Box { center, half_extents, rotation, .. } => {
            let inv = [-rotation[0], -rotation[1], -rotation[2], rotation[3]];
            let p = rotate(inv, x - V3::from(center));
            let sign = |c: f64| if c >= 0.0 { 1.0 } else { -1.0 };
            let q = V3::new(p.x.abs() - half_extents[0], p.y.abs() - half_extents[1], p.z.abs() - half_extents[2]);
            let qmax = q.x.max(q.y).max(q.z);
            let (phi, nl) = if qmax > 0.0 {
                let o = V3::new(q.x.max(0.0), q.y.max(0.0), q.z.max(0.0));
                let l = o.norm();
                (l, V3::new(sign(p.x) * o.x, sign(p.y) * o.y, sign(p.z) * o.z) / l)
            } else if q.x >= q.y && q.x >= q.z {
                (q.x, V3::new(sign(p.x), 0.0, 0.0))
            } else if q.y >= q.z {
                (q.y, V3::new(0.0, sign(p.y), 0.0))
            } else {
                (q.z, V3::new(0.0, 0.0, sign(p.z)))
            };
            Some((phi, rotate(rotation, nl)))
        }
    }
}

/// `collide`: particle `i` of the state (x, v) against every collider; returns its new (x, v).
pub fn collide(i: usize, m: &CpuModel, x: &[V3], v: &[V3]) -> (V3, V3) {
    collide_particle(m, i, x[i], v[i])
}

/// The body of [`collide`] for particle `i` at (xᵢ, vᵢ): every collider (unit normals and quaternions,
/// as [`CpuModel::new`] lays them out) in order. A pinned particle is returned unchanged.
#[inline]
pub fn collide_particle(m: &CpuModel, i: usize, mut xi: V3, mut vi: V3) -> (V3, V3) {
    if m.inv_mass[i] == 0.0 {
        return (xi, vi);
    }
    for (c, u) in m.colliders.iter().zip(&m.collider_velocity) {
        if let Some((n, push)) = contact(c, xi) {
            xi += n * push;
            vi = u + contact_velocity(vi - u, n, c.friction());
        }
    }
    (xi, vi)
}

/// Whether xᵢ is inside collider `c` (or its skin): the outward unit normal and how far to move along
/// it to reach the surface (half-space: φ = 0; the others: φ = t).
#[inline]
pub fn contact(c: &Collider, xi: V3) -> Option<(V3, f64)> {
    if let Collider::HalfSpace { normal, offset, .. } = *c {
        let n = V3::from(normal);
        let phi = n.dot(&xi) - offset;
        (phi < 0.0).then_some((n, -phi))
    } else {
        let (phi, n) = distance(c, xi)?;
        let t = c.thickness();
        (phi < t).then_some((n, t - phi))
    }
}

/// `move_pins`: entry `k` of the model's moving pins at the placement `motion` (each motion's offset
/// and velocity at the step's end time, [`CpuModel::motion_at`]) on the state (x, v): the particle and
/// its new (x, v), x = its model position + the offset, v = the path's velocity; a pin the host has
/// freed since (1/m ≠ 0) keeps its state.
pub fn move_pins(k: usize, m: &CpuModel, motion: &[(V3, V3)], x: &[V3], v: &[V3]) -> (usize, V3, V3) {
    let (i, path) = m.moving_pins[k];
    let i = i as usize;
    if m.inv_mass[i] != 0.0 {
        return (i, x[i], v[i]);
    }
    let (off, vel) = motion[path as usize];
    (i, m.moving_pins_rest[k] + off, vel)
}

/// How deep particle xᵢ sits inside the skin of collider `c`, as a fraction of its thickness:
/// max(0, t − φ)/t; 0 for a half-space or a collider of zero thickness (no skin to measure against).
pub fn penetration_of(c: &Collider, x: V3) -> f64 {
    let t = c.thickness();
    match distance(c, x) {
        Some((phi, _)) if t > 0.0 && phi < t => (t - phi) / t,
        _ => 0.0,
    }
}
