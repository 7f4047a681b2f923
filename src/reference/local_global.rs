//! The kernels of Liu et al. 2013's local/global step (`shaders/local_global.wgsl`) in f64: the
//! constants of a step and the incidence entries' signs shared by the twins.

use super::forces::EPS_LEN;
use super::model::{CpuModel, V3};

/// The constants of one step of size h.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LgParams {
    /// The step h (s).
    pub h: f64,
    /// Liu §4.1's drag factor α = 1/(1 + h d₀): y = q + h α v.
    pub alpha: f64,
    /// The inertia weight 1 + h d₀ (M̃ = (1 + h d₀) M).
    pub inertia: f64,
    /// The mass part of A's diagonal per unit mass: 1 + h d₀ + h² s.
    pub mass_diag: f64,
}

impl LgParams {
    /// The constants of `m` at step `h`.
    pub fn new(m: &CpuModel, h: f64) -> Self {
        let inertia = 1.0 + h * m.drag;
        LgParams { h, alpha: 1.0 / inertia, inertia, mass_diag: inertia + h * h * m.central_strength }
    }
}

/// The spring of incidence entry `e` (`2·spring + side`) and the sign of its term in J d: +1 when the
/// particle is the spring's `a`, −1 when it is `b`.
#[inline]
pub fn entry_spring(e: u32) -> (usize, f64) {
    ((e >> 1) as usize, if e & 1 == 0 { 1.0 } else { -1.0 })
}

/// `lg_inertia`: the damped inertia yᵢ = qᵢ + h α vᵢ (Liu §4.1); a pinned particle: yᵢ = qᵢ.
pub fn lg_inertia(i: usize, m: &CpuModel, p: &LgParams, q: &[V3], v: &[V3]) -> V3 {
    if m.inv_mass[i] == 0.0 {
        q[i]
    } else {
        q[i] + v[i] * (p.h * p.alpha)
    }
}

/// `lg_local`: the local step of spring `s` (Liu eq. 10 and the lemma of §4): dₛ = rₛ (x_a − x_b)/‖x_a − x_b‖.
/// Coincident endpoints (‖x_a − x_b‖ ≤ [`EPS_LEN`]) leave every direction equally good; the guard takes
/// dₛ = rₛ·(1, 0, 0), so nothing divides by zero and the result stays deterministic.
pub fn lg_local(s: usize, m: &CpuModel, x: &[V3]) -> V3 {
    let p = x[m.sa[s] as usize] - x[m.sb[s] as usize];
    let l = p.norm();
    if l > EPS_LEN {
        p * (m.rest[s] / l)
    } else {
        V3::new(m.rest[s], 0.0, 0.0)
    }
}

/// `lg_residual`: the global step's residual at xₖ (Liu eq. 14, ∂g/∂x = 0) of particle `i`:
/// rᵢ = M̃ᵢyᵢ + h² [(J d)ᵢ + mᵢ(g + d₀ w + s c)] − mᵢ(1 + h d₀ + h² s) xᵢ − h² Σₑ kₑ (xᵢ − xⱼ) for a free
/// particle, the sum over all its springs (pinned neighbours at their pinned positions: their columns
/// moved to the right-hand side); 0 for a pinned particle. One gather over its CSR incidence list.
pub fn lg_residual(i: usize, m: &CpuModel, p: &LgParams, y: &[V3], d: &[V3], x: &[V3]) -> V3 {
    let h2 = p.h * p.h;
    let fext = m.gravity + m.wind * m.drag + m.central_center * m.central_strength;
    if m.inv_mass[i] == 0.0 {
        return V3::zeros();
    }
    let mi = m.mass[i];
    let xi = x[i];
    let mut acc = V3::zeros();
    for &e in m.incidence.of(i) {
        let (s, sign) = entry_spring(e);
        let j = if sign > 0.0 { m.sb[s] } else { m.sa[s] } as usize;
        acc += (d[s] * sign - (xi - x[j])) * m.k[s];
    }
    y[i] * (mi * p.inertia) + (acc + fext * mi) * h2 - xi * (mi * p.mass_diag)
}
