//! The kernels of Liu et al. 2013's local/global step (`shaders/local_global.wgsl`) in f64: the
//! constants of a step and the incidence entries' signs shared by the twins.

use super::forces::EPS_LEN;
use super::model::{CpuModel, V3};

/// The constants of one step of size h.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalGlobalParams {
    /// The step h (s).
    pub h: f64,
    /// Liu §4.1's drag factor α = 1/(1 + h d₀): y = q + h α v.
    pub alpha: f64,
    /// The inertia weight 1 + h d₀ (M̃ = (1 + h d₀) M).
    pub inertia: f64,
    /// The mass part of A's diagonal per unit mass: 1 + h d₀ + h² s.
    pub mass_diag: f64,
}

impl LocalGlobalParams {
    /// The constants of `m` at step `h`.
    pub fn new(m: &CpuModel, h: f64) -> Self {
        let inertia = 1.0 + h * m.drag;
        LocalGlobalParams { h, alpha: 1.0 / inertia, inertia, mass_diag: inertia + h * h * m.central_strength }
    }
}

/// The spring of incidence entry `e` (`2·spring + side`) and the sign of its term in J d: +1 when the
/// particle is the spring's `a`, −1 when it is `b`.
#[inline]
pub fn entry_spring(e: u32) -> (usize, f64) {
    ((e >> 1) as usize, if e & 1 == 0 { 1.0 } else { -1.0 })
}

/// `local_global_inertia`: the damped inertia yᵢ = qᵢ + h α vᵢ (Liu §4.1), plus the point fields' external force
/// h²α a_fields(qᵢ) (Liu eq. 9's h² f_ext, divided by the inertia weight 1 + h d₀); a pinned particle: yᵢ = qᵢ.
pub fn local_global_inertia(i: usize, m: &CpuModel, p: &LocalGlobalParams, q: &[V3], v: &[V3]) -> V3 {
    if m.inv_mass[i] == 0.0 {
        q[i]
    } else {
        q[i] + v[i] * (p.h * p.alpha) + super::fields::fields_inertia(m, p.h, p.alpha, q[i])
    }
}

/// `local_global_local`: the local step of spring `s` (Liu eq. 10 and the lemma of §4): dₛ = rₛ (x_a − x_b)/‖x_a − x_b‖.
/// Coincident endpoints (‖x_a − x_b‖ ≤ [`EPS_LEN`]) leave every direction equally good; the guard takes
/// dₛ = rₛ·(1, 0, 0), so nothing divides by zero and the result stays deterministic.
pub fn local_global_local(s: usize, m: &CpuModel, x: &[V3]) -> V3 {
    let p = x[m.end_a[s] as usize] - x[m.end_b[s] as usize];
    let l = p.norm();
    if l > EPS_LEN {
        p * (m.rest[s] / l)
    } else {
        V3::new(m.rest[s], 0.0, 0.0)
    }
}

/// `local_global_residual`: the global step's residual at xₖ (Liu eq. 14, ∂g/∂x = 0) of particle `i`:
/// rᵢ = M̃ᵢyᵢ + h² [(J d)ᵢ + mᵢ(g + d₀ w + s c)] − mᵢ(1 + h d₀ + h² s) xᵢ − h² Σₑ kₑ (xᵢ − xⱼ) for a free
/// particle, the sum over all its springs (pinned neighbours at their pinned positions: their columns
/// moved to the right-hand side); 0 for a pinned particle. One gather over its CSR incidence list.
pub fn local_global_residual(i: usize, m: &CpuModel, p: &LocalGlobalParams, y: &[V3], d: &[V3], x: &[V3]) -> V3 {
    residual_with(i, m, p, y, x, |s, sign, _| d[s] * sign)
}

/// rᵢ of [`local_global_residual`] with the direction of incidence entry (s, sign) seen from i, dₛ·sign, given by
/// `dir(s, sign, xᵢ − xⱼ)`: one gather over i's CSR incidence list.
fn residual_with(i: usize, m: &CpuModel, p: &LocalGlobalParams, y: &[V3], x: &[V3], dir: impl Fn(usize, f64, V3) -> V3) -> V3 {
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
        let j = if sign > 0.0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let e = xi - x[j];
        acc += (dir(s, sign, e) - e) * m.k[s];
    }
    y[i] * (mi * p.inertia) + (acc + fext * mi) * h2 - xi * (mi * p.mass_diag)
}

/// `local_global_local_residual`: the local step fused with the global step's residual, particle `i`: [`local_global_residual`]
/// with each incident spring's direction formed where it is gathered, dₛ·(±1) = rₛ (xᵢ − xⱼ)/‖xᵢ − xⱼ‖
/// (eq. 10 and the lemma of §4, seen from i; [`local_global_local`]'s guard direction rₛ·(1, 0, 0) from a to b when
/// the ends coincide), so that no d is stored: the sum of [`local_global_local`] then [`local_global_residual`] to rounding,
/// over the same incidence list in the same order. The GPU kernel reads the list as the rows of a sliced
/// ELL table (`gpu::methods::local_global::rows`), its padding slots adding zero.
pub fn local_global_local_residual(i: usize, m: &CpuModel, p: &LocalGlobalParams, y: &[V3], x: &[V3]) -> V3 {
    residual_with(i, m, p, y, x, |s, sign, e| {
        let l = e.norm();
        if l > EPS_LEN {
            e * (m.rest[s] / l)
        } else {
            V3::new(sign * m.rest[s], 0.0, 0.0)
        }
    })
}

/// The global matrix of Liu eq. 12 and 14 times u, row `i`: (A u)ᵢ = mᵢ(1 + h d₀ + h² s) uᵢ + h² Σₑ kₑ (uᵢ − uⱼ)
/// with uⱼ = 0 for a pinned j (its column is eliminated); 0 on a pinned row. The WGSL helper `local_global_apply`
/// (the operator of `pcg_matvec` and of the Chebyshev kernels).
pub fn local_global_apply(i: usize, m: &CpuModel, p: &LocalGlobalParams, u: &[V3]) -> V3 {
    if m.inv_mass[i] == 0.0 {
        return V3::zeros();
    }
    let ui = u[i];
    let mut acc = V3::zeros();
    for &e in m.incidence.of(i) {
        let (s, sign) = entry_spring(e);
        let j = if sign > 0.0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let uj = if m.inv_mass[j] == 0.0 { V3::zeros() } else { u[j] };
        acc += (ui - uj) * m.k[s];
    }
    ui * (m.mass[i] * p.mass_diag) + acc * (p.h * p.h)
}

/// `local_global_chebyshev`: one Chebyshev-accelerated Jacobi iteration on A δ = r (Wang 2015, eq. 12) for particle
/// `i`: δ̂ᵢ = δₖ,ᵢ + D⁻¹ᵢ(rᵢ − (A δₖ)ᵢ), formed as the Jacobi sweep δ̂ᵢ = D⁻¹ᵢ(rᵢ + h² Σₑ kₑ δₖ,ⱼ) (A's
/// diagonal cancelled; δₖ,ⱼ = 0 for a pinned j), then δₖ₊₁,ᵢ = ωₖ₊₁(δ̂ᵢ − δₖ₋₁,ᵢ) + δₖ₋₁,ᵢ (`inv_diag` = D⁻¹,
/// 0 when pinned).
#[allow(clippy::too_many_arguments)] // the kernel's bindings, in order
pub fn local_global_chebyshev(
    i: usize,
    m: &CpuModel,
    p: &LocalGlobalParams,
    omega: f64,
    r: &[V3],
    inv_diag: &[V3],
    delta: &[V3],
    delta_prev: &[V3],
) -> V3 {
    let mut acc = V3::zeros();
    for &e in m.incidence.of(i) {
        let (s, sign) = entry_spring(e);
        let j = if sign > 0.0 { m.end_b[s] } else { m.end_a[s] } as usize;
        if m.inv_mass[j] != 0.0 {
            acc += delta[j] * m.k[s];
        }
    }
    let hat = (r[i] + acc * (p.h * p.h)).component_mul(&inv_diag[i]);
    (hat - delta_prev[i]) * omega + delta_prev[i]
}

/// The first Chebyshev-Jacobi iteration of a global step, which `local_global_local_residual` takes when its pass
/// says `start` (the GPU) and [`crate::cpu::local_global::chebyshev_solve`] takes first: from δ₀ = δ₋₁ = 0
/// with ω₁ = 1, [`local_global_chebyshev`] gathers nothing and gives δ₁,ᵢ = D⁻¹ᵢ rᵢ (0 for a pinned particle, whose
/// inverse diagonal is 0).
pub fn local_global_chebyshev_start(i: usize, r: &[V3], inv_diag: &[V3]) -> V3 {
    r[i].component_mul(&inv_diag[i])
}

/// `local_global_chebyshev_advance`: the last Chebyshev-Jacobi iteration of a global step with the advance fused,
/// xₖ₊₁,ᵢ = xₖ,ᵢ + δᵢ with δᵢ of [`local_global_chebyshev`] (Wang 2015, eq. 12; Liu §4), [`local_global_advance`] of it: a
/// pinned particle is not touched.
#[allow(clippy::too_many_arguments)] // local_global_chebyshev's arguments and x
pub fn local_global_chebyshev_advance(
    i: usize,
    m: &CpuModel,
    p: &LocalGlobalParams,
    omega: f64,
    r: &[V3],
    inv_diag: &[V3],
    delta: &[V3],
    delta_prev: &[V3],
    x: &[V3],
) -> V3 {
    if m.inv_mass[i] == 0.0 {
        x[i]
    } else {
        x[i] + local_global_chebyshev(i, m, p, omega, r, inv_diag, delta, delta_prev)
    }
}

/// `local_global_cheb_residual`: the first half of a Chebyshev iteration preconditioned by the multigrid V-cycle B
/// (Wang 2015, eq. 12 with B in place of D⁻¹) for particle `i`: sᵢ = rᵢ − (A δₖ)ᵢ, the V-cycle's right-hand side.
pub fn local_global_cheb_residual(i: usize, m: &CpuModel, p: &LocalGlobalParams, r: &[V3], delta: &[V3]) -> V3 {
    r[i] - local_global_apply(i, m, p, delta)
}

/// `local_global_cheb_combine`: the second half, after the V-cycle left z = B s: δ̂ᵢ = δₖ,ᵢ + zᵢ,
/// δₖ₊₁,ᵢ = ωₖ₊₁(δ̂ᵢ − δₖ₋₁,ᵢ) + δₖ₋₁,ᵢ (Wang 2015, eq. 12).
pub fn local_global_cheb_combine(i: usize, omega: f64, delta: &[V3], delta_prev: &[V3], z: &[V3]) -> V3 {
    let hat = delta[i] + z[i];
    (hat - delta_prev[i]) * omega + delta_prev[i]
}

/// `local_global_advance`: the end of a global step (Liu §4, on corrections): xₖ₊₁,ᵢ = xₖ,ᵢ + δᵢ; a pinned particle
/// is not touched.
pub fn local_global_advance(i: usize, m: &CpuModel, x: &[V3], delta: &[V3]) -> V3 {
    if m.inv_mass[i] == 0.0 {
        x[i]
    } else {
        x[i] + delta[i]
    }
}

/// `local_global_velocity`: the end of a step (Liu §4, implicit Euler) for particle `i`: returns (x', v') with
/// x' = xᵢ and v' = (xᵢ − qᵢ)/h, formed as (xᵢ − qᵢ)·(1/h) as the CPU engine does; a pinned particle:
/// x' = qᵢ bit for bit, v' = 0.
pub fn local_global_velocity(i: usize, m: &CpuModel, p: &LocalGlobalParams, q: &[V3], x: &[V3]) -> (V3, V3) {
    if m.inv_mass[i] == 0.0 {
        (q[i], V3::zeros())
    } else {
        (x[i], (x[i] - q[i]) * (1.0 / p.h))
    }
}

/// What `local_global_report` writes: ‖r₀‖ = ‖∇g(y)‖, the first residual of a step, ‖r‖ = ‖∇g(x)‖ at its end (the
/// local step refreshed at x) and their ratio (Liu eq. 7; 0 when ‖r₀‖ = 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalGlobalStats {
    /// ‖r₀‖.
    pub first: f64,
    /// ‖r‖ at the end of the step.
    pub last: f64,
    /// ‖r‖/‖r₀‖.
    pub ratio: f64,
}

/// `local_global_report`: the norms of the step's first and last residuals (per particle, from [`local_global_residual`]) and
/// their ratio. The GPU sums |rᵢ|² per workgroup and then the workgroups' partials; this is the plain
/// sequential sum, equal to the GPU's up to rounding.
pub fn local_global_report(r_first: &[V3], r_last: &[V3]) -> LocalGlobalStats {
    let first = r_first.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt();
    let last = r_last.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt();
    LocalGlobalStats { first, last, ratio: if first > 0.0 { last / first } else { 0.0 } }
}
