//! Power iteration for k₀ = λ_max(M⁻¹K) (Shinya §3, §5.3) in f64: one function per kernel of
//! `shaders/power.wgsl` (`power_matvec` per particle, `power_reduce`) and the deterministic start vector
//! that the CPU engine and the GPU share, so both iterate from the same vector.
//!
//! The iteration runs on the symmetric S = M^{-1/2} K_c M^{-1/2} + s·I, which has the eigenvalues of
//! M⁻¹K (Shinya's k₀ bounds the stable explicit step, §3); pinned particles (infinite mass) drop out.
//! K_c is the spring stiffness matrix of Kauppila §2.2 with its transverse term clamped at zero (Choi &
//! Ko), so S is positive semi-definite. Each pass takes y = S x with x = y_prev/|y_prev| and the dot
//! products |y|² and x·y (the Rayleigh quotient).

use super::forces::{kc_apply, EPS_LEN};
use super::model::{CpuModel, V3};

/// The deterministic start vector shared with the GPU: a hash of the index, in [−0.5, 0.5).
pub fn power_start(i: usize, c: usize) -> f64 {
    let h = ((3 * i + c) as u32).wrapping_add(1).wrapping_mul(2_654_435_761u32);
    let h = (h ^ (h >> 16)).wrapping_mul(2_246_822_519u32);
    (h >> 8) as f64 / (1u32 << 24) as f64 - 0.5
}

/// What `power_matvec` computes for one particle: its row of y = S x and its terms of the two dot
/// products that `power_reduce` sums.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PowerRow {
    /// (S x)ᵢ.
    pub y: V3,
    /// |yᵢ|².
    pub y_dot_y: f64,
    /// xᵢ·yᵢ.
    pub x_dot_y: f64,
}

/// `power_matvec`: row `i` of y = S x at positions `pos`, with x = `y_in`/√`y_norm_sq` (the previous
/// iterate normalised; `y_norm_sq` is floored at 1e-30 as on the GPU, and 1 leaves `y_in` as it is):
/// yᵢ = √wᵢ Σ_s K_c,s (√wᵢ xᵢ − √wⱼ xⱼ) + s xᵢ over the particle's springs longer than [`EPS_LEN`],
/// w = 1/m; 0 for a pinned particle.
pub fn power_matvec(i: usize, m: &CpuModel, pos: &[V3], y_in: &[V3], y_norm_sq: f64) -> PowerRow {
    let inv_norm = 1.0 / y_norm_sq.max(1e-30).sqrt();
    let x_of = |j: usize| y_in[j] * inv_norm;
    let xi = x_of(i);
    let wi = m.inv_mass[i];
    if wi == 0.0 {
        return PowerRow { y: V3::zeros(), y_dot_y: 0.0, x_dot_y: 0.0 };
    }
    let si = wi.sqrt();
    let mut acc = V3::zeros();
    for &e in m.incidence.of(i) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let d = pos[i] - pos[j];
        let l = d.norm();
        if l > EPS_LEN {
            let c = (1.0 - m.rest[s] / l).max(0.0);
            let u = xi * si - x_of(j) * m.inv_mass[j].sqrt();
            acc += kc_apply(m.k[s], c, d / l, u);
        }
    }
    let y = acc * si + xi * m.central_strength;
    PowerRow { y, y_dot_y: y.dot(&y), x_dot_y: xi.dot(&y) }
}

/// `power_reduce`: (|y|², x·y) = the sums of the rows' terms. The GPU sums per workgroup and then the
/// workgroups' partials; this is the plain sequential sum, equal to the GPU's up to rounding.
pub fn power_reduce(rows: &[PowerRow]) -> (f64, f64) {
    rows.iter().fold((0.0, 0.0), |(yy, xy), r| (yy + r.y_dot_y, xy + r.x_dot_y))
}
