//! Colliders on the CPU engine: the reference kernel [`crate::reference::collide::collide`] (the twin of
//! `shaders/collide.wgsl`, with the contact model in its docs) run over the particles in parallel.

use super::forces::MIN_PAR_LEN;
use super::{CpuModel, V3};
use crate::reference::collide::move_pins;
pub use crate::reference::collide::{collide_particle, contact_velocity};
use crate::reference::contact::{project_contact, Contact};
use rayon::prelude::*;

/// The `collide` kernel on every particle of the state (x, v), in place.
pub fn collide(m: &CpuModel, x: &mut [V3], v: &mut [V3]) {
    if m.colliders.is_empty() {
        return;
    }
    let (x, v) = (&mut x[..m.n], &mut v[..m.n]);
    x.par_iter_mut().zip(v.par_iter_mut()).with_min_len(MIN_PAR_LEN).enumerate().for_each(|(i, (xi, vi))| {
        (*xi, *vi) = collide_particle(m, i, *xi, *vi);
    });
}

/// The `collide_positions` kernel on every particle of `x` (local/global's iterate), in place, with
/// the contacts it holds ([`crate::reference::contact`]).
pub fn project(m: &CpuModel, x: &mut [V3], contacts: &mut [Contact]) {
    x[..m.n].par_iter_mut().zip(contacts.par_iter_mut()).with_min_len(MIN_PAR_LEN).enumerate().for_each(|(i, (xi, c))| {
        (*xi, *c) = project_contact(m, i, *xi, *c);
    });
}

/// The end of every step of size `h` at time `t_end` (s) on the state (x, v): the moving pins placed on
/// their paths (`move_pins`), Provot's strain limiting ([`super::strain_limit::strain_limit`]),
/// self-collision ([`super::self_collision::self_collide`]), then the colliders (`collide`) where they
/// are at `t_end` (obstacles win). With none of them it does nothing. The GPU's twin is
/// `gpu::step_end::StepEnd`.
pub fn finish_step(
    m: &mut CpuModel,
    t_end: f64,
    h: f64,
    x: &mut Vec<V3>,
    v: &mut Vec<V3>,
    strain: &mut super::strain_limit::StrainScratch,
) {
    if m.has_motion() {
        m.place(t_end);
        let motion = m.motion_at(t_end);
        for k in 0..m.moving_pins.len() {
            let (i, xi, vi) = move_pins(k, m, &motion, x, v);
            (x[i], v[i]) = (xi, vi);
        }
    }
    super::strain_limit::strain_limit(m, h, x, v, strain);
    super::self_collision::self_collide(m, x, v);
    collide(m, x, v);
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
