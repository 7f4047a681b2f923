//! The divergence guard's signals of a state as `shaders/signals.wgsl` reduces them, in f64: one function
//! per kernel (`signals_partial` per particle, `signals_reduce` over the rows). The guard
//! ([`crate::stepping::guard`]) judges what [`crate::engine::Signals::from_sums`] makes of them.
//!
//! The energy here is [`super::forces::energy`] without the pinned particles' kinetic, gravity and
//! central-field terms (their kinetic energy is zero and the others are constant until the user edits
//! the state, when the guard takes its baseline again), so the guard's differences are the same.

use super::model::{CpuModel, V3};

/// What `signals_partial` gives for one particle, and what `signals_reduce` folds them into.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignalSums {
    /// ½ m|v|² over the free particles (J).
    pub kinetic: f64,
    /// −m g·x over the free particles (J).
    pub gravity: f64,
    /// ½ m s |x − c|² over the free particles (J).
    pub central: f64,
    /// ½ k (l − L)² over the springs (J), a quarter from each end's incidence list.
    pub spring: f64,
    /// Σ m|v| over the free particles (kg m/s): the force fields' power bound is this times Σ|a|.
    pub momentum_norm: f64,
    /// The largest |l − L|/L over the springs with L > 0.
    pub max_strain: f64,
    /// The largest stretch (l − L)/L over the springs with L > 0 (−∞ without any).
    pub max_stretch: f64,
    /// A coordinate of x or v is not finite.
    pub non_finite: bool,
    /// The largest coordinates over all particles.
    pub hi: V3,
    /// The smallest coordinates over all particles.
    pub lo: V3,
}

impl SignalSums {
    /// The fold's neutral element.
    pub fn empty() -> Self {
        SignalSums {
            kinetic: 0.0,
            gravity: 0.0,
            central: 0.0,
            spring: 0.0,
            momentum_norm: 0.0,
            max_strain: 0.0,
            max_stretch: f64::NEG_INFINITY,
            non_finite: false,
            hi: V3::repeat(f64::NEG_INFINITY),
            lo: V3::repeat(f64::INFINITY),
        }
    }

    /// `self` and `other` folded: sums summed, maxima and the extent taken.
    pub fn fold(self, o: SignalSums) -> SignalSums {
        SignalSums {
            kinetic: self.kinetic + o.kinetic,
            gravity: self.gravity + o.gravity,
            central: self.central + o.central,
            spring: self.spring + o.spring,
            momentum_norm: self.momentum_norm + o.momentum_norm,
            max_strain: self.max_strain.max(o.max_strain),
            max_stretch: self.max_stretch.max(o.max_stretch),
            non_finite: self.non_finite || o.non_finite,
            hi: self.hi.sup(&o.hi),
            lo: self.lo.inf(&o.lo),
        }
    }

    /// The total energy: kinetic, gravity, central field and springs (J).
    pub fn energy(&self) -> f64 {
        self.kinetic + self.gravity + self.central + self.spring
    }

    /// The diagonal of the positions' bounding box (m).
    pub fn extent(&self) -> f64 {
        if self.hi.x >= self.lo.x {
            (self.hi - self.lo).norm()
        } else {
            0.0
        }
    }
}

/// `signals_partial`: particle `i`'s row at state (`x`, `v`): its kinetic, gravity and central-field
/// energy when it is free (w = 1/m ≠ 0), a quarter of ½k(l − L)² of each spring of its incidence list,
/// their largest strain and stretch, whether its coordinates are finite, and its position for the extent.
pub fn signals_partial(i: usize, m: &CpuModel, x: &[V3], v: &[V3]) -> SignalSums {
    let mut row = SignalSums::empty();
    row.non_finite = !(x[i].iter().chain(v[i].iter()).all(|c| c.is_finite()));
    row.hi = x[i];
    row.lo = x[i];
    if m.inv_mass[i] != 0.0 {
        let mass = 1.0 / m.inv_mass[i];
        row.kinetic = 0.5 * mass * v[i].norm_squared();
        row.gravity = -mass * m.gravity.dot(&x[i]);
        if m.central_strength != 0.0 {
            row.central = 0.5 * mass * m.central_strength * (x[i] - m.central_center).norm_squared();
        }
        row.momentum_norm = mass * v[i].norm();
    }
    for &e in m.incidence.of(i) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let d = (x[i] - x[j]).norm() - m.rest[s];
        row.spring += 0.25 * m.k[s] * d * d;
        if m.rest[s] > 0.0 {
            row.max_strain = row.max_strain.max(d.abs() / m.rest[s]);
            row.max_stretch = row.max_stretch.max(d / m.rest[s]);
        }
    }
    row
}

/// `signals_reduce`: the rows folded (the GPU folds a workgroup's rows in a tree, then the workgroups';
/// the sums agree to rounding).
pub fn signals_reduce(rows: impl IntoIterator<Item = SignalSums>) -> SignalSums {
    rows.into_iter().fold(SignalSums::empty(), SignalSums::fold)
}

/// Both kernels over every particle of `m` at (`x`, `v`).
pub fn signal_sums(m: &CpuModel, x: &[V3], v: &[V3]) -> SignalSums {
    signals_reduce((0..m.n).map(|i| signals_partial(i, m, x, v)))
}
