//! Force fields in f64: the twin of `field_accel` in `shaders/shared/forces.wgsl` and of
//! `shaders/wind.wgsl` (see [`crate::model::Field`] and [`crate::model::AeroWind`]).
//!
//! The mass-spring lecture (seeds: "Forces: Spatial Fields") lists wind, attractors, repellers and
//! vortices, time-dependent (wind gusts), adding that they "will generally add energy to the system".
//! Here:
//!
//! - **Point fields** are accelerations of the position only, added to g − d₀(v − w) in
//!   [`super::forces::external_accel`], so they enter every method where gravity does: the explicit
//!   methods' stages, LEU's linearisation point a₀, implicit Euler's right-hand side (explicitly: no
//!   Jacobian term, the system matrix is unchanged), and Liu et al. 2013's local/global step through
//!   the external force of the global step's right-hand side (eq. 9/14: h² f_ext, evaluated at the step's
//!   start q), folded into the inertia y = q + hαv + h²α a_fields(q) ([`fields_inertia`]).
//! - **The aerodynamic wind** is a per-step pass before the step ([`wind_kick`]): v ← v + h a_wind(x, v)
//!   from the state at the step's start, into the other state buffer, then the method steps from there.
//!   For implicit Euler and local/global this is exactly the explicit external force in the right-hand
//!   side (v_{n+1} = v_n + h a_wind + h M⁻¹f(x_{n+1}, v_{n+1}); y = q + hα(v + h a_wind)); for the
//!   explicit methods and LEU it is a first-order operator split.

pub use super::model::CpuField;
use super::model::{CpuModel, EPS_LEN, V3};

/// The falloff factor φ(d) of code `falloff` at radius `r` (see [`crate::model::Falloff`]).
#[inline]
pub fn falloff(code: u32, r: f64, d: f64) -> f64 {
    match code {
        1 => r * r / (d * d + r * r),
        2 => (1.0 - d / r).max(0.0),
        3 => {
            let t = (d / r).min(1.0);
            1.0 - t * t * (3.0 - 2.0 * t)
        }
        _ => 1.0,
    }
}

/// The acceleration of one field at x: a point field −s φ(d) (x − c)/d, a vortex s φ(ρ) â × r⊥/ρ; zero
/// outside its box and within [`EPS_LEN`] of its centre or axis.
#[inline]
pub fn one_field(f: &CpuField, x: V3) -> V3 {
    if let Some((lo, hi)) = f.bounds {
        if (0..3).any(|c| x[c] < lo[c] || x[c] > hi[c]) {
            return V3::zeros();
        }
    }
    let r = x - f.center;
    // a vortex measures across its axis (for a point field the axis is zero and r⊥ = r)
    let rp = r - f.axis * f.axis.dot(&r);
    let d = rp.norm();
    if d <= EPS_LEN {
        return V3::zeros();
    }
    let s = f.strength * falloff(f.falloff, f.radius, d) / d;
    if f.axis == V3::zeros() {
        -rp * s
    } else {
        f.axis.cross(&rp) * s
    }
}

/// `field_accel`: the sum of the model's point fields at x, in order.
#[inline]
pub fn field_accel(m: &CpuModel, x: V3) -> V3 {
    m.fields.iter().fold(V3::zeros(), |a, f| a + one_field(f, x))
}

/// The local/global step's external field term folded into the inertia: h²α a_fields(q) (added to
/// y = q + hαv by `local_global_inertia`; zero without point fields).
#[inline]
pub fn fields_inertia(m: &CpuModel, h: f64, alpha: f64, q: V3) -> V3 {
    if m.fields.is_empty() {
        V3::zeros()
    } else {
        field_accel(m, q) * (h * h * alpha)
    }
}

/// The air's velocity at the model's time ([`crate::model::AeroWind::at`] at `m.time`); zero without wind.
pub fn air_velocity(m: &CpuModel) -> V3 {
    m.aero.map_or(V3::zeros(), |a| V3::from(a.at(m.time)))
}

/// The aerodynamic acceleration of free particle `i`: (1/m_i) Σ over its triangles (i, j, k) of
/// f/3, f = c A (u·n̂)|u·n̂| n̂, N = (x_j − x_i) × (x_k − x_i), A = |N|/2, n̂ = N/|N|, u = w − (v_i + v_j + v_k)/3.
pub fn aero_accel(i: usize, m: &CpuModel, w: V3, coefficient: f64, x: &[V3], v: &[V3]) -> V3 {
    let mut f = V3::zeros();
    for &[j, k] in m.tri.of(i) {
        let (j, k) = (j as usize, k as usize);
        let nrm = (x[j] - x[i]).cross(&(x[k] - x[i]));
        let l = nrm.norm();
        if l <= EPS_LEN * EPS_LEN {
            continue;
        }
        let nh = nrm / l;
        let u = w - (v[i] + v[j] + v[k]) / 3.0;
        let un = u.dot(&nh);
        // c · A · un|un| / 3 with A = l/2
        f += nh * (coefficient * l * un * un.abs() / 6.0);
    }
    f * m.inv_mass[i]
}

/// `wind_kick`: the state after the wind's impulse of one step, particle `i`: x unchanged,
/// v + h a_wind (pinned particles unchanged).
pub fn wind_kick(i: usize, m: &CpuModel, h: f64, x: &[V3], v: &[V3]) -> (V3, V3) {
    match m.aero {
        Some(a) if m.inv_mass[i] != 0.0 => (x[i], v[i] + aero_accel(i, m, air_velocity(m), a.coefficient, x, v) * h),
        _ => (x[i], v[i]),
    }
}

/// An estimate of the most power (W) the fields put in at state (x, v), for the divergence guard's
/// energy check: Σ mᵢ|vᵢ| (Σ_f |s_f| + |a_wind,i|), the point fields at their full strength (φ ≤ 1) and
/// the wind as it pushes now. The lecture: these forces "will generally add energy to the system".
pub fn power_bound(m: &CpuModel, x: &[V3], v: &[V3]) -> f64 {
    let a_fields: f64 = m.fields.iter().map(|f| f.strength.abs()).sum();
    let wind = m.aero.map(|a| (air_velocity(m), a.coefficient));
    if a_fields == 0.0 && wind.is_none() {
        return 0.0;
    }
    (0..m.n)
        .map(|i| {
            let aw = wind.map_or(0.0, |(w, c)| aero_accel(i, m, w, c, x, v).norm());
            m.mass[i] * v[i].norm() * (a_fields + aw)
        })
        .sum()
}
