//! The largest eigenvalue k₀ of M⁻¹K by power iteration (Shinya §5.3), matrix-free, in f64:
//! the CPU twin of `shaders/power.wgsl`.
//!
//! We iterate on the symmetric S = M^{-1/2} K_c M^{-1/2} (+ s·I for a central field), which has the
//! eigenvalues of M⁻¹K; pinned particles (infinite mass) drop out. K_c is the spring stiffness matrix
//! with the transverse term clamped at zero, so S is positive semi-definite.

use super::forces::{kc_apply, EPS_LEN};
use super::implicit::for_each_particle;
use super::{CpuModel, V3};

/// The deterministic start vector shared with the GPU: a hash of the index, in [−0.5, 0.5).
pub fn power_start(i: usize, c: usize) -> f64 {
    let h = ((3 * i + c) as u32).wrapping_add(1).wrapping_mul(2_654_435_761u32);
    let h = (h ^ (h >> 16)).wrapping_mul(2_246_822_519u32);
    (h >> 8) as f64 / (1u32 << 24) as f64 - 0.5
}

/// y = S x at positions `pos`.
pub fn power_matvec(m: &CpuModel, pos: &[V3], x: &[V3], y: &mut [V3]) {
    let dirs = spring_dirs(m, pos);
    matvec_with(m, &dirs, x, y);
}

/// Per spring, n̂ and the clamped transverse factor c at `pos` (None when shorter than [`EPS_LEN`]):
/// all that S needs of the positions, which power iteration keeps fixed.
fn spring_dirs(m: &CpuModel, pos: &[V3]) -> Vec<Option<(V3, f64)>> {
    let mut dirs = vec![None; m.sa.len()];
    for_each_particle(&mut dirs, |s| {
        let d = pos[m.sa[s] as usize] - pos[m.sb[s] as usize];
        let l = d.norm();
        (l > EPS_LEN).then(|| (d / l, (1.0 - m.rest[s] / l).max(0.0)))
    });
    dirs
}

/// y = S x with the springs' directions precomputed (the same numbers as forming them per entry:
/// n̂ from particle b's side is −n̂ exactly, and K_c depends on n̂n̂ᵀ only).
fn matvec_with(m: &CpuModel, dirs: &[Option<(V3, f64)>], x: &[V3], y: &mut [V3]) {
    for_each_particle(y, |i| {
        let wi = m.inv_mass[i];
        if wi == 0.0 {
            return V3::zeros();
        }
        let si = wi.sqrt();
        let mut acc = V3::zeros();
        for &e in m.incidence.of(i) {
            let s = (e >> 1) as usize;
            let j = if e & 1 == 0 { m.sb[s] } else { m.sa[s] } as usize;
            let Some((n, c)) = dirs[s] else { continue };
            let u = x[i] * si - x[j] * m.inv_mass[j].sqrt();
            acc += kc_apply(m.k[s], c, n, u);
        }
        acc * si + x[i] * m.central_strength
    });
}

/// k₀ after `iters` power iterations from [`power_start`], the Rayleigh quotient of the last iterate.
pub fn power_k0(m: &CpuModel, pos: &[V3], iters: usize) -> f64 {
    let mut x: Vec<V3> = (0..m.n)
        .map(|i| if m.inv_mass[i] == 0.0 { V3::zeros() } else { V3::new(power_start(i, 0), power_start(i, 1), power_start(i, 2)) })
        .collect();
    let mut y = vec![V3::zeros(); m.n];
    let norm = |v: &[V3]| v.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt();
    let n0 = norm(&x);
    if n0 == 0.0 {
        return m.central_strength;
    }
    x.iter_mut().for_each(|a| *a /= n0);
    let dirs = spring_dirs(m, pos);
    let mut lambda = 0.0;
    for _ in 0..iters {
        matvec_with(m, &dirs, &x, &mut y);
        lambda = x.iter().zip(&y).map(|(a, b)| a.dot(b)).sum::<f64>();
        let ny = norm(&y);
        if ny == 0.0 {
            return 0.0;
        }
        for (a, b) in x.iter_mut().zip(&y) {
            *a = *b / ny;
        }
    }
    lambda
}
