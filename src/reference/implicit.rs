//! Implicit Euler of Baraff & Witkin, linearized once per step, in f64: one function per kernel of
//! `shaders/implicit.wgsl`, per particle, gathering over its CSR incidence list as the GPU does.
//!
//! Kauppila §2.1 (eq. 6): (M − h ∂f/∂v − h² ∂f/∂x) Δv = h (f₀ + h ∂f/∂x v₀), then v' = v₀ + Δv and
//! x' = x₀ + h v'. Per spring s between i and j (d = xᵢ − xⱼ, l = |d|, n̂ = d/l) Kauppila §2.2 gives
//! ∂fᵢ/∂xᵢ = −K_s, K_s = k[n̂n̂ᵀ + c(I − n̂n̂ᵀ)], c = 1 − L/l (clamped at 0 unless `exact`, Choi & Ko), and
//! ∂fᵢ/∂vᵢ = −k_d n̂n̂ᵀ; the spring's block of −h J_v − h² J_x is B_s = h k_d n̂n̂ᵀ + h² K_s (Kauppila §4.1),
//! so A_ii = mᵢ(1 + h d₀ + h² s) I + Σ_s B_s and A_ij = −B_s. Pinned particles are filtered out (Baraff &
//! Witkin's constraint filter): their rows are zero and their Δv is 0. The CPU engine
//! ([`crate::cpu::implicit`]) evaluates each spring once instead and sums in another order: its system
//! agrees with these to rounding.

use super::forces::{external_accel, EPS_LEN};
use super::model::{CpuModel, V3};

/// A symmetric 3×3 block stored as (xx, yy, zz, xy, xz, yz).
pub type Sym3 = [f64; 6];

/// Applies a symmetric block to u.
#[inline(always)]
pub fn sym_apply(b: &Sym3, u: V3) -> V3 {
    V3::new(b[0] * u.x + b[3] * u.y + b[4] * u.z, b[3] * u.x + b[1] * u.y + b[5] * u.z, b[4] * u.x + b[5] * u.y + b[2] * u.z)
}

/// mᵢ(1 + h d₀ + h² s): the mass part of A's diagonal.
#[inline]
pub fn mass_diag(m: &CpuModel, h: f64, i: usize) -> f64 {
    m.mass[i] * (1.0 + h * m.drag + h * h * m.central_strength)
}

/// What `implicit_prepare` writes for one particle: its right-hand side h (f₀ + h J_x v₀)ᵢ and the
/// inverse of A's diagonal (the Jacobi preconditioner, Kauppila §4.2), both 0 when pinned.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PreparedRow {
    /// bᵢ = h (f₀ + h J_x v₀)ᵢ.
    pub rhs: V3,
    /// 1 / A_ii (per component).
    pub inv_diag: V3,
}

/// `implicit_prepare`: the system of one step at (x, v) for particle `i`. Writes B_s of each of its
/// springs into `blocks` (one per incidence entry, in list order, as the GPU's `blocks[2e..2e+2]`;
/// zero for a spring shorter than [`EPS_LEN`]) and returns its right-hand side and inverse diagonal.
pub fn implicit_prepare(i: usize, m: &CpuModel, h: f64, exact: bool, x: &[V3], v: &[V3], blocks: &mut [Sym3]) -> PreparedRow {
    let entries = m.incidence.of(i);
    blocks[..entries.len()].iter_mut().for_each(|b| *b = [0.0; 6]);
    if m.inv_mass[i] == 0.0 {
        return PreparedRow::default();
    }
    let (xi, vi, mi) = (x[i], v[i], m.mass[i]);
    // J_x v₀ at i: −Σ K_s (vᵢ − vⱼ) − s mᵢ vᵢ; f₀: the springs (Hooke, damping along the spring) and
    // the external fields
    let mut jxv = -vi * (m.central_strength * mi);
    let mut f = external_accel(m, xi, vi) * mi;
    let md = mass_diag(m, h, i);
    let mut diag = V3::new(md, md, md);
    for (b, &e) in blocks.iter_mut().zip(entries) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let d = xi - x[j];
        let l = d.norm();
        if l <= EPS_LEN {
            continue;
        }
        let n = d / l;
        let (k, kd) = (m.k[s], m.kd[s]);
        let mut c = 1.0 - m.rest[s] / l;
        if !exact {
            c = c.max(0.0);
        }
        let u = vi - v[j];
        let nu = n.dot(&u);
        f -= n * (k * (l - m.rest[s]) + kd * nu);
        // K_s u = k[(1 − c)(n̂·u) n̂ + c u]
        jxv -= n * (k * (1.0 - c) * nu) + u * (k * c);
        // B_s = α n̂n̂ᵀ + β I with α = h k_d + h² k (1 − c), β = h² k c
        let (alpha, beta) = (h * kd + h * h * k * (1.0 - c), h * h * k * c);
        let an = n * alpha;
        *b = [an.x * n.x + beta, an.y * n.y + beta, an.z * n.z + beta, an.x * n.y, an.x * n.z, an.y * n.z];
        diag += V3::new(b[0], b[1], b[2]);
    }
    PreparedRow { rhs: (f + jxv * h) * h, inv_diag: V3::new(1.0 / diag.x, 1.0 / diag.y, 1.0 / diag.z) }
}

/// (A p)ᵢ with the blocks of [`implicit_prepare`] (the operator of `pcg_matvec` for implicit Euler):
/// mᵢ(1 + h d₀ + h² s) pᵢ + Σ_s B_s (pᵢ − pⱼ); 0 on a pinned row, and pⱼ taken as 0 for a pinned j.
pub fn operator_apply(i: usize, m: &CpuModel, h: f64, blocks: &[Sym3], p: &[V3]) -> V3 {
    if m.inv_mass[i] == 0.0 {
        return V3::zeros();
    }
    let mut y = p[i] * mass_diag(m, h, i);
    for (b, &e) in blocks.iter().zip(m.incidence.of(i)) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let pj = if m.inv_mass[j] == 0.0 { V3::zeros() } else { p[j] };
        y += sym_apply(b, p[i] - pj);
    }
    y
}

/// `implicit_integrate`: v' = v₀ + Δv, x' = x₀ + h v' for particle `i`; a pinned particle keeps x and
/// gets v = 0.
pub fn implicit_integrate(i: usize, m: &CpuModel, h: f64, x: &[V3], v: &[V3], dv: &[V3]) -> (V3, V3) {
    if m.inv_mass[i] == 0.0 {
        (x[i], V3::zeros())
    } else {
        (x[i] + (v[i] + dv[i]) * h, v[i] + dv[i])
    }
}

/// `implicit_strain`: whether the step from `src` to `dst` strained a spring of particle `i` beyond the
/// adaptive step's limits (Kauppila §3.2.3, over its springs with L > 0; NaN counts):
/// - its strain |l' − L|/L at the new positions is above `strain_limit`, or
/// - its length changed within the step by more than `step_limit`·L, |l' − l|/L > `step_limit` (the rule
///   of computational mechanics that Kauppila quotes from Bridson et al. 2002: no spring may deform by
///   more than 10% in one step). This is the check that catches a linearized step gone wrong where the
///   cloth starts flat at rest length: there the clamped transverse term is zero, so the step lets the
///   particles next to a pin fall h²g, many spring lengths at h = 1/30 s on a fine grid.
#[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(strain ≤ limit)` also catches NaN
pub fn implicit_strain(i: usize, m: &CpuModel, strain_limit: f64, step_limit: f64, src: &[V3], dst: &[V3]) -> bool {
    m.incidence.of(i).iter().any(|&e| {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let rest = m.rest[s];
        if rest <= 0.0 {
            return false;
        }
        let (before, after) = ((src[i] - src[j]).norm(), (dst[i] - dst[j]).norm());
        // `!(strain <= limit)` also catches NaN
        !((after - rest).abs() / rest <= strain_limit) || !((after - before).abs() / rest <= step_limit)
    })
}
