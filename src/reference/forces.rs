//! The force model in f64, read beside the papers: the twin of `shaders/shared/forces.wgsl`.
//!
//! Shinya §2 / Kauppila §2.2: a spring between particles a and b with rest length L, stiffness k and
//! damping k_d pulls a with f = −[k(l − L) + k_d (n̂·u)] n̂, n̂ = (x_a − x_b)/l, u = v_a − v_b; the Rayleigh
//! term of D = d₀M + αK (Shinya eq. 28) adds −α K_c u. [`accel`] is the per-particle gather of the WGSL
//! `accel(i)`: the forces of the particle's springs summed over its CSR incidence list in list order,
//! times 1/m, plus the external fields and the cursor spring.

pub use super::model::EPS_LEN;
use super::model::{CpuModel, V3};

/// Per-step parameters shared by every kernel: the step and Rayleigh α.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepParams {
    /// The step h (s).
    pub h: f64,
    /// Rayleigh α of D = d₀M + αK (Shinya eq. 28).
    pub alpha: f64,
}

/// The damping stiffness K_c·u of one spring: k[c·u + (1 − c)(n̂·u) n̂] with c = max(0, 1 − L/l),
/// the spring's stiffness block (Kauppila §2.2) with its transverse term clamped at zero so that the
/// Rayleigh term αK (Shinya eq. 28) never injects energy (Choi & Ko).
#[inline(always)]
pub fn kc_apply(k: f64, c: f64, n: V3, u: V3) -> V3 {
    let un = n.dot(&u);
    (u * c + n * ((1.0 - c) * un)) * k
}

/// The force of spring `s` on its endpoint `a` (the force on `b` is its negation):
/// Hooke's law, damping along the spring and the Rayleigh term −α K_c (v_a − v_b).
#[inline(always)]
pub fn spring_force(m: &CpuModel, alpha: f64, s: usize, x: &[V3], v: &[V3]) -> V3 {
    let (a, b) = (m.end_a[s] as usize, m.end_b[s] as usize);
    let d = x[a] - x[b];
    let l = d.norm();
    if l <= EPS_LEN {
        return V3::zeros();
    }
    let n = d / l;
    let u = v[a] - v[b];
    let un = n.dot(&u);
    let k = m.k[s];
    let mut f = n * (-(k * (l - m.rest[s]) + m.kd[s] * un));
    if alpha != 0.0 {
        let c = (1.0 - m.rest[s] / l).max(0.0);
        f -= kc_apply(k, c, n, u) * alpha;
    }
    f
}

/// Acceleration of a free particle from the external fields: g − d₀(v − wind) − s(x − c), plus the
/// point fields ([`super::fields::field_accel`]: attractors, repellers, vortices).
#[inline(always)]
pub fn external_accel(m: &CpuModel, x: V3, v: V3) -> V3 {
    let mut a = m.gravity - (v - m.wind) * m.drag;
    if m.central_strength != 0.0 {
        a -= (x - m.central_center) * m.central_strength;
    }
    if !m.fields.is_empty() {
        a += super::fields::field_accel(m, x);
    }
    a
}

/// The cursor spring's acceleration on particle `i` (zero unless `i` is the cursor's particle):
/// −c (x − target) − d v (see [`crate::model::Cursor`]). The gather adds it to a free particle's
/// acceleration after the external fields, as `accel` in `shaders/shared/forces.wgsl` does.
#[inline(always)]
pub fn cursor_accel(m: &CpuModel, i: usize, x: V3, v: V3) -> Option<V3> {
    match &m.cursor {
        Some(c) if c.particle == i => Some((x - V3::from(c.target)) * c.stiffness + v * c.damping),
        _ => None,
    }
}

/// a = M⁻¹ f(x, v) of particle `i` (the WGSL `accel(i)`): the forces of its springs, summed over its
/// incidence list in list order (+f on the spring's `a` end, −f on its `b` end), times 1/m, plus the
/// external fields and the cursor spring. Pinned particles (1/m = 0) get zero.
#[inline]
pub fn accel(m: &CpuModel, alpha: f64, i: usize, x: &[V3], v: &[V3]) -> V3 {
    let w = m.inv_mass[i];
    if w == 0.0 {
        return V3::zeros();
    }
    let mut f = V3::zeros();
    for &e in m.incidence.of(i) {
        let fs = spring_force(m, alpha, (e >> 1) as usize, x, v);
        if e & 1 == 0 {
            f += fs;
        } else {
            f -= fs;
        }
    }
    let a = f * w + external_accel(m, x[i], v[i]);
    match cursor_accel(m, i, x[i], v[i]) {
        Some(c) => a - c,
        None => a,
    }
}

/// Total energy: kinetic + spring potential + gravity + central field potential.
pub fn energy(m: &CpuModel, x: &[V3], v: &[V3]) -> f64 {
    let mut e = 0.0;
    for i in 0..m.n {
        let mass = m.mass[i];
        e += 0.5 * mass * v[i].norm_squared() - mass * m.gravity.dot(&x[i]);
        if m.central_strength != 0.0 {
            e += 0.5 * mass * m.central_strength * (x[i] - m.central_center).norm_squared();
        }
    }
    for s in 0..m.end_a.len() {
        let l = (x[m.end_a[s] as usize] - x[m.end_b[s] as usize]).norm();
        e += 0.5 * m.k[s] * (l - m.rest[s]).powi(2);
    }
    e
}

/// Largest relative change of length |l − L|/L over the springs with L > 0.
pub fn max_strain(m: &CpuModel, x: &[V3]) -> f64 {
    let mut worst: f64 = 0.0;
    for s in 0..m.end_a.len() {
        if m.rest[s] > 0.0 {
            let l = (x[m.end_a[s] as usize] - x[m.end_b[s] as usize]).norm();
            worst = worst.max((l - m.rest[s]).abs() / m.rest[s]);
        }
    }
    worst
}

/// Total momentum Σ mᵢvᵢ.
pub fn momentum(m: &CpuModel, v: &[V3]) -> V3 {
    (0..m.n).fold(V3::zeros(), |acc, i| acc + v[i] * m.mass[i])
}
