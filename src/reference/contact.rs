//! Contact inside local/global's step, in f64: the twin of the contact part of `shaders/collide.wgsl`
//! (`collide_positions`) and `shaders/local_global.wgsl` (`local_global_local_residual`,
//! `local_global_advance`, the Chebyshev kernels, the PCG's operator and `local_global_velocity`).
//!
//! Liu et al. 2013 (§4.1) move the iterate to its collision-free position after every local/global
//! iteration. At one step a frame that alone does not hold: the next global solve, which knows nothing
//! of the collider, pulls the projected particles back in, the projection pushes them out again, and
//! the two feed energy into the cloth (a drape over a sphere diverges within a few frames). So a particle
//! that a projection moved is held on the surface through the step's later global solves, as Baraff
//! & Witkin 1998 ("Large Steps in Cloth Simulation") hold constrained particles in their modified CG:
//! with n̂ the direction it was moved in, the filter S = I − n̂n̂ᵀ removes the normal part of the
//! right-hand side, of the operator's input and output (the solve is of S A S δ = S r), of every
//! Chebyshev iterate and of the correction δ that the iterate advances by. The particle slides along
//! the surface but does not cross it.
//!
//! A contact is released where the surface would have to pull: after a global solve, when the
//! normal part of what the filtered solve left unbalanced, n̂·(r − A δ) (the constraint's force, times
//! h², with its sign flipped), points outward, the particle is free again for the step's later solves
//! (an active set, as Baraff & Witkin release a constraint whose force would pull). At the step's end
//! the constraint's normal impulse −n̂·r/h gives the Coulomb friction that the step-end collision
//! response gives the other methods: the tangential velocity relative to the collider loses
//! μ Δv_n = −μ (n̂·r)/(m h), clamped at zero, and an inward normal velocity is removed.
//!
//! Contacts live for one step: `local_global_inertia` clears them.

use super::collide::contact;
use super::local_global::{local_global_apply, LocalGlobalParams};
use super::model::{CpuModel, V3};

/// A particle's contact during a local/global step. On the GPU two `vec4`s per particle: (n̂, state)
/// at i, (u, μ) at n + i.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// The unit direction the projection moved the particle in (the contact normal n̂).
    pub normal: V3,
    /// < 0: no contact. ≥ 0: held; after the step's last residual, the friction's speed loss μ Δv_n.
    pub state: f64,
    /// The collider's velocity u (the last collider that moved the particle).
    pub velocity: V3,
    /// The Coulomb μ (the largest of the colliders that moved the particle).
    pub friction: f64,
    /// n̂·r of the current global step's residual (before the filter), for the release test.
    pub pull: f64,
}

impl Contact {
    /// No contact.
    pub const NONE: Contact =
        Contact { normal: V3::new(0.0, 0.0, 0.0), state: -1.0, velocity: V3::new(0.0, 0.0, 0.0), friction: 0.0, pull: 0.0 };

    /// Whether the particle is held on the surface.
    #[inline]
    pub fn held(&self) -> bool {
        self.state >= 0.0
    }
}

/// S v: v without its part along a held contact's normal, v − n̂(n̂·v); v unchanged otherwise (or
/// without contacts, an empty slice).
#[inline]
pub fn contact_filter(contacts: &[Contact], i: usize, v: V3) -> V3 {
    match contacts.get(i) {
        Some(c) if c.held() => v - c.normal * c.normal.dot(&v),
        _ => v,
    }
}

/// `collide_positions`: particle `i` of local/global's iterate `x` moved out of every collider (in
/// order, as the step-end response does) and its contact: held, along the whole move's direction, when
/// a collider moved it; the contact it had otherwise. A pinned particle is not moved.
pub fn collide_positions(i: usize, m: &CpuModel, x: &[V3], contacts: &[Contact]) -> (V3, Contact) {
    project_contact(m, i, x[i], contacts.get(i).copied().unwrap_or(Contact::NONE))
}

/// The body of [`collide_positions`] for particle `i` at xᵢ with its contact `before`.
#[inline]
pub fn project_contact(m: &CpuModel, i: usize, x0: V3, before: Contact) -> (V3, Contact) {
    if m.inv_mass[i] == 0.0 {
        return (x0, before);
    }
    let mut xi = x0;
    let mut hit = Contact { state: 0.0, ..Contact::NONE };
    for (c, u) in m.colliders.iter().zip(&m.collider_velocity) {
        if let Some((nn, push)) = contact(c, xi) {
            xi += nn * push;
            hit.velocity = *u;
            hit.friction = hit.friction.max(c.friction());
        }
    }
    let d = xi - x0;
    let l = d.norm();
    if l <= 0.0 {
        return (xi, before);
    }
    hit.normal = d / l;
    (xi, hit)
}

/// The contact part of `local_global_local_residual` for particle `i` with residual rᵢ at a held
/// contact: rᵢ filtered, its normal part n̂·rᵢ kept for [`local_global_release`]; at the step's `last`
/// residual (the report's) the contact is released if n̂·rᵢ > 0 and otherwise its state becomes the
/// friction's speed loss μ Δv_n with Δv_n = −(n̂·rᵢ)/(mᵢ h). Returns the residual and the contact.
pub fn local_global_contact(i: usize, m: &CpuModel, h: f64, r: V3, c: Contact, last: bool) -> (V3, Contact) {
    if !c.held() || m.inv_mass[i] == 0.0 {
        return (r, c);
    }
    let rn = c.normal.dot(&r);
    let mut c = c;
    if last {
        if rn > 0.0 {
            return (r, Contact::NONE);
        }
        c.state = c.friction * (-rn) * m.inv_mass[i] / h;
    }
    c.pull = rn;
    (r - c.normal * rn, c)
}

/// The contact part of `local_global_advance` for particle `i` after a global solve gave the filtered
/// correction δ: a held contact whose n̂·(rᵢ − (A δ)ᵢ) > 0 is released (the surface would pull).
pub fn local_global_release(i: usize, m: &CpuModel, p: &LocalGlobalParams, c: Contact, delta: &[V3]) -> Contact {
    if !c.held() {
        return c;
    }
    if c.pull - c.normal.dot(&local_global_apply(i, m, p, delta)) > 0.0 {
        Contact::NONE
    } else {
        c
    }
}

/// The contact part of `local_global_velocity`: at a held contact, v relative to the collider loses
/// its inward normal part and μ Δv_n (the contact's state after the last residual) of its tangential
/// part, clamped at zero.
#[inline]
pub fn contact_friction(c: &Contact, v: V3) -> V3 {
    if !c.held() {
        return v;
    }
    let rel = v - c.velocity;
    let vn = c.normal.dot(&rel).max(0.0);
    let vt = rel - c.normal * c.normal.dot(&rel);
    let t = vt.norm();
    let vt = if t > 0.0 { vt * (1.0 - c.state / t).max(0.0) } else { vt };
    c.velocity + c.normal * vn + vt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Collider, Forces, Model};

    /// One free particle of mass 2 kg above the ground plane y ≥ 0 (friction 0.5).
    fn particle() -> CpuModel {
        let mut m = Model::new(Forces::default());
        m.add_particle([0.0, 1.0, 0.0], 2.0);
        m.colliders.push(Collider::ground(0.0, 0.5));
        CpuModel::new(&m).unwrap()
    }

    #[test]
    fn a_projection_holds_the_particle_along_its_move() {
        let m = particle();
        let (x, c) = collide_positions(0, &m, &[V3::new(0.3, -0.2, 0.0)], &[Contact::NONE]);
        assert_eq!(x, V3::new(0.3, 0.0, 0.0));
        assert!(c.held() && c.normal == V3::new(0.0, 1.0, 0.0) && c.friction == 0.5, "{c:?}");
        // outside: the contact it had is kept
        let held = Contact { state: 0.0, normal: V3::new(1.0, 0.0, 0.0), ..Contact::NONE };
        assert_eq!(collide_positions(0, &m, &[V3::new(0.0, 0.5, 0.0)], &[held]), (V3::new(0.0, 0.5, 0.0), held));
    }

    #[test]
    fn held_contacts_filter_release_and_give_friction() {
        let m = particle();
        let held = Contact { state: 0.0, normal: V3::new(0.0, 1.0, 0.0), friction: 0.5, ..Contact::NONE };
        let v = V3::new(1.0, -2.0, 3.0);
        assert_eq!(contact_filter(&[held], 0, v), V3::new(1.0, 0.0, 3.0));
        assert_eq!(contact_filter(&[Contact::NONE], 0, v), v);
        assert_eq!(contact_filter(&[], 0, v), v);
        // pushed in (n·r < 0): filtered, n·r kept
        let (r, c) = local_global_contact(0, &m, 0.1, v, held, false);
        assert_eq!((r, c.pull, c.state), (V3::new(1.0, 0.0, 3.0), -2.0, 0.0));
        // the last residual: friction's speed loss μ (−n·r)/(m h) = 0.5 · 2 / (2 · 0.1)
        let (_, c) = local_global_contact(0, &m, 0.1, v, held, true);
        assert!((c.state - 5.0).abs() < 1e-12, "{c:?}");
        // pulled out at the last residual: released, r kept
        assert_eq!(local_global_contact(0, &m, 0.1, -v, held, true), (-v, Contact::NONE));
        // after a solve: released when n·(r − Aδ) > 0
        let p = LocalGlobalParams::new(&m, 0.1);
        let pulled = Contact { pull: 1.0, ..held };
        assert_eq!(local_global_release(0, &m, &p, pulled, &[V3::zeros()]), Contact::NONE);
        let pushed = Contact { pull: -1.0, ..held };
        assert_eq!(local_global_release(0, &m, &p, pushed, &[V3::zeros()]), pushed);
        // friction: the inward normal velocity removed, the tangential one less 5 m/s, clamped at zero
        let c = Contact { state: 5.0, ..held };
        assert_eq!(contact_friction(&c, V3::new(8.0, -1.0, 0.0)), V3::new(3.0, 0.0, 0.0));
        assert_eq!(contact_friction(&c, V3::new(4.0, 1.0, 0.0)), V3::new(0.0, 1.0, 0.0));
        assert_eq!(contact_friction(&Contact::NONE, v), v);
    }
}
