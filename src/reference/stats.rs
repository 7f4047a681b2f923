//! Statistics of a state that the bench, the window and the tests report: finiteness, the largest
//! strain |l − L|/L, the total energy and the lowest point; the colliders' penetration;
//! the per-spring strain statistics (mean, 99th percentile, the fraction over a strain limit).

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

/// Every coordinate of positions `x` and velocities `v` finite.
pub fn all_finite(x: &[[f64; 3]], v: &[[f64; 3]]) -> bool {
    x.iter().chain(v.iter()).all(|p| p.iter().all(|c| c.is_finite()))
}

/// Statistics of a state of `model`.
pub fn state_stats(model: &CpuModel, x: &[[f64; 3]], v: &[[f64; 3]]) -> StateStats {
    let finite = all_finite(x, v);
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

/// Per-spring strain statistics of a state ([`strain_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StrainStats {
    /// Springs measured (those with a rest length > 0).
    pub springs: usize,
    /// Mean of |l − L|/L over the springs.
    pub mean: f64,
    /// The 99th percentile of |l − L|/L (nearest rank: the ⌈0.99·s⌉-th smallest of s).
    pub p99: f64,
    /// The largest |l − L|/L (as [`StateStats::max_strain`]).
    pub max: f64,
    /// The largest stretch (l − L)/L (negative when every spring is compressed); what Provot's strain
    /// limiting ([`crate::model::StrainLimit`]) bounds by τ.
    pub max_stretch: f64,
    /// The fraction of springs stretched beyond the limit τ given, (l − L)/L > τ (0 without one).
    pub over_limit: f64,
}

/// The strain of every spring of `model` at the positions `x`, summarised ([`StrainStats`]); `limit` is
/// the τ that `over_limit` counts against (`None`: it is 0).
pub fn strain_stats(model: &CpuModel, x: &[[f64; 3]], limit: Option<f64>) -> StrainStats {
    let mut strains = Vec::with_capacity(model.end_a.len());
    let mut max_stretch = f64::NEG_INFINITY;
    let mut over = 0usize;
    for s in 0..model.end_a.len() {
        let rest = model.rest[s];
        if rest <= 0.0 {
            continue;
        }
        let l = (V3::from(x[model.end_a[s] as usize]) - V3::from(x[model.end_b[s] as usize])).norm();
        let stretch = (l - rest) / rest;
        max_stretch = max_stretch.max(stretch);
        if limit.is_some_and(|t| stretch > t) {
            over += 1;
        }
        strains.push(stretch.abs());
    }
    let count = strains.len();
    if count == 0 {
        return StrainStats::default();
    }
    let mean = strains.iter().sum::<f64>() / count as f64;
    let max = strains.iter().cloned().fold(0.0, f64::max);
    let rank = ((0.99 * count as f64).ceil() as usize).clamp(1, count) - 1;
    let (_, p99, _) = strains.select_nth_unstable_by(rank, |a, b| a.total_cmp(b));
    StrainStats { springs: count, mean, p99: *p99, max, max_stretch, over_limit: over as f64 / count as f64 }
}
