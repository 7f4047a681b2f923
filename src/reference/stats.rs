//! Statistics of a state that the bench, the window and the tests report: finiteness, the largest
//! strain |l − L|/L, the total energy and the lowest point.

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
