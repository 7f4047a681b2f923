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

/// What `signals_step_partial` gives for one particle over a trial step from (`x0`, `v0`) to (`x1`,
/// `v1`), and what `signals_reduce` folds them into (the same four `vec4` a row as [`SignalSums`]):
/// the energy's change, the start's positive energy, momentum and extent (for the energy scale and the
/// external forces' power bound), and whether the trial's coordinates are finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepEnergy {
    /// The change of the kinetic, gravity, central-field and spring energy over the step (J), each
    /// particle's own terms differenced before they are summed.
    pub change: f64,
    /// The start's kinetic, central-field and spring energy (J).
    pub positive: f64,
    /// The start's Σ m|v| over the free particles (kg m/s).
    pub momentum_norm: f64,
    /// A coordinate of the trial's x or v is not finite.
    pub non_finite: bool,
    /// The start's largest coordinates.
    pub hi: V3,
    /// The start's smallest coordinates.
    pub lo: V3,
}

impl StepEnergy {
    /// The fold's neutral element.
    pub fn empty() -> Self {
        StepEnergy {
            change: 0.0,
            positive: 0.0,
            momentum_norm: 0.0,
            non_finite: false,
            hi: V3::repeat(f64::NEG_INFINITY),
            lo: V3::repeat(f64::INFINITY),
        }
    }

    /// `self` and `other` folded.
    pub fn fold(self, o: StepEnergy) -> StepEnergy {
        StepEnergy {
            change: self.change + o.change,
            positive: self.positive + o.positive,
            momentum_norm: self.momentum_norm + o.momentum_norm,
            non_finite: self.non_finite || o.non_finite,
            hi: self.hi.sup(&o.hi),
            lo: self.lo.inf(&o.lo),
        }
    }

    /// The step's energy gain beyond the external forces' most work over `h`, as a fraction of the
    /// start's energy scale (Σm|g| times the extent's diagonal, plus the positive energy): what the
    /// adaptive step compares with [`crate::method::STEP_ENERGY_SLACK`] (`adaptive_judge` in
    /// `shaders/adaptive.wgsl` in f32). NaN where the trial is not finite. The external power is
    /// [`crate::engine::Signals::from_sums`]'s bound: the drag against the wind and Σ|a| Σm|v| for the
    /// force fields.
    pub fn gain(&self, m: &CpuModel, h: f64) -> f64 {
        if self.non_finite || !self.change.is_finite() {
            return f64::NAN;
        }
        let mass: f64 = m.mass.iter().sum();
        let extent = if self.hi.x >= self.lo.x { (self.hi - self.lo).norm() } else { 0.0 };
        let scale = mass * m.gravity.norm() * extent + self.positive;
        let power = step_power_constant(m) + step_power_fields(m) * self.momentum_norm;
        (self.change - power * h) / scale.max(f64::MIN_POSITIVE)
    }
}

/// The part of the external forces' power bound that does not depend on the state: the drag against
/// the wind, d₀ m|w|²/4 per particle (W).
pub fn step_power_constant(m: &CpuModel) -> f64 {
    0.25 * m.drag * m.mass.iter().sum::<f64>() * m.wind.norm_squared()
}

/// The force fields' power bound per unit of Σm|v|: Σ|a| (m/s²).
pub fn step_power_fields(m: &CpuModel) -> f64 {
    m.fields.iter().map(|f| f.strength.abs()).sum()
}

/// `signals_step_partial`: particle `i`'s row over the trial step from (`x0`, `v0`) to (`x1`, `v1`):
/// the change of its kinetic, gravity and central-field energy when it is free (w = 1/m ≠ 0), and of a
/// quarter of ½k(l − L)² of each spring of its incidence list (as ¼k(d₁ − d₀)(d₁ + d₀)); the start's
/// positive energy and m|v|, whether the trial's coordinates are finite, and the start's position for
/// the extent.
pub fn signals_step_partial(i: usize, m: &CpuModel, x0: &[V3], v0: &[V3], x1: &[V3], v1: &[V3]) -> StepEnergy {
    let mut row = StepEnergy::empty();
    row.non_finite = !(x1[i].iter().chain(v1[i].iter()).all(|c| c.is_finite()));
    row.hi = x0[i];
    row.lo = x0[i];
    if m.inv_mass[i] != 0.0 {
        let mass = 1.0 / m.inv_mass[i];
        let kinetic0 = 0.5 * mass * v0[i].norm_squared();
        row.change += 0.5 * mass * (v1[i] - v0[i]).dot(&(v1[i] + v0[i])) - mass * m.gravity.dot(&(x1[i] - x0[i]));
        row.positive += kinetic0;
        if m.central_strength != 0.0 {
            let (c0, c1) = (x0[i] - m.central_center, x1[i] - m.central_center);
            row.change += 0.5 * mass * m.central_strength * (c1 - c0).dot(&(c1 + c0));
            row.positive += 0.5 * mass * m.central_strength * c0.norm_squared();
        }
        row.momentum_norm = mass * v0[i].norm();
    }
    for &e in m.incidence.of(i) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let d0 = (x0[i] - x0[j]).norm() - m.rest[s];
        let d1 = (x1[i] - x1[j]).norm() - m.rest[s];
        row.change += 0.25 * m.k[s] * (d1 - d0) * (d1 + d0);
        row.positive += 0.25 * m.k[s] * d0 * d0;
    }
    row
}

/// `signals_step_partial` over every particle of `m`, folded as `signals_reduce` folds it.
pub fn step_energy(m: &CpuModel, x0: &[V3], v0: &[V3], x1: &[V3], v1: &[V3]) -> StepEnergy {
    (0..m.n).map(|i| signals_step_partial(i, m, x0, v0, x1, v1)).fold(StepEnergy::empty(), StepEnergy::fold)
}
