//! Statistics of a state that the bench, the window and the tests report: finiteness, the largest
//! strain |l − L|/L, the total energy and the lowest point; the colliders' penetration.

use super::forces;
use super::model::{CpuModel, V3};

/// Statistics of a state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StateStats {
    /// Every coordinate finite.
    pub finite: bool,
    /// Largest |l − L|/L.
    pub max_strain: f64,
    /// Total energy (kinetic, spring, gravity, field).
    pub energy: f64,
    /// Lowest y (the sag of a hanging cloth).
    pub min_y: f64,
}

/// Statistics of a state of `model`.
pub fn state_stats(model: &CpuModel, x: &[[f64; 3]], v: &[[f64; 3]]) -> StateStats {
    let finite = x.iter().chain(v.iter()).all(|p| p.iter().all(|c| c.is_finite()));
    let xs: Vec<V3> = x.iter().map(|p| V3::from(*p)).collect();
    let vs: Vec<V3> = v.iter().map(|p| V3::from(*p)).collect();
    StateStats {
        finite,
        max_strain: forces::max_strain(model, &xs),
        energy: forces::energy(model, &xs, &vs),
        min_y: x.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min),
    }
}

/// The penetration of a state: the deepest any free particle sits inside any collider's skin, as a
/// fraction of that collider's thickness, max over particles and colliders of max(0, t − φ)/t (φ the
/// signed distance to the shape, t its thickness; see [`crate::model::Collider`]). 0 is on or outside
/// every skin, 1 on a shape's surface, above 1 inside the shape. Half-spaces and colliders of zero
/// thickness have no skin and are not counted; pinned particles are not counted (the colliders never
/// move them).
pub fn penetration(model: &CpuModel, x: &[[f64; 3]]) -> f64 {
    let mut worst: f64 = 0.0;
    for (i, p) in x.iter().enumerate().take(model.n) {
        if model.inv_mass[i] == 0.0 {
            continue;
        }
        for c in &model.colliders {
            worst = worst.max(super::collide::penetration_of(c, V3::from(*p)));
        }
    }
    worst
}
