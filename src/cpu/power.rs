//! The largest eigenvalue k₀ of M⁻¹K by power iteration (Shinya §5.3), matrix-free, in f64:
//! the engine's whole-array form of `shaders/power.wgsl` (per-particle twins: [`crate::reference::power`]).
//!
//! We iterate on the symmetric S = M^{-1/2} K_c M^{-1/2} (+ s·I for a central field), which has the
//! eigenvalues of M⁻¹K; pinned particles (infinite mass) drop out. K_c is the spring stiffness matrix
//! with the transverse term clamped at zero, so S is positive semi-definite.

use super::forces::{kc_apply, EPS_LEN};
use super::implicit::for_each_particle;
use super::sweep::SpringSweep;
use super::{CpuModel, V3};

pub use crate::reference::power::power_start;

/// y = S x at positions `pos`: the reference's `power_matvec` for every particle (the GPU's gather).
pub fn power_matvec(m: &CpuModel, pos: &[V3], x: &[V3], y: &mut [V3]) {
    for_each_particle(y, |i| crate::reference::power::power_matvec(i, m, pos, x, 1.0).y);
}

/// S at fixed positions as one pass over the springs ([`SpringSweep`]): per sorted spring n̂, the
/// clamped c and k (0 for a spring shorter than [`EPS_LEN`], which [`power_matvec`] skips), and per
/// particle √(1/mᵢ) (0 when pinned).
struct SweptS {
    sweep: SpringSweep,
    /// Per sorted spring: n̂, c, k.
    dirs: Vec<(V3, f64, f64)>,
    root_w: Vec<f64>,
}

impl SweptS {
    fn new(m: &CpuModel, pos: &[V3]) -> Self {
        let sweep = SpringSweep::for_model(m);
        let dirs = (0..sweep.ends.len())
            .map(|k| {
                let s = sweep.spring(k);
                let d = pos[m.end_a[s] as usize] - pos[m.end_b[s] as usize];
                let l = d.norm();
                if l > EPS_LEN {
                    (d / l, (1.0 - m.rest[s] / l).max(0.0), m.k[s])
                } else {
                    (V3::zeros(), 0.0, 0.0)
                }
            })
            .collect();
        let root_w = m.inv_mass.iter().map(|w| w.sqrt()).collect();
        SweptS { sweep, dirs, root_w }
    }

    /// y = S x: each spring's K_c (√w_lo x_lo − √w_hi x_hi) scaled by √w at lo and subtracted at hi
    /// (K_c is the same from either end: it depends on n̂n̂ᵀ only).
    fn apply(&self, m: &CpuModel, x: &[V3], y: &mut [V3]) {
        assert!(x.len() == m.n && y.len() == m.n && self.sweep.fits(m), "power: vectors of another model");
        let (sw, rw) = (&self.sweep, &self.root_w);
        let term = |k: usize, lo: usize, hi: usize| {
            let (n, c, ks) = self.dirs[k];
            kc_apply(ks, c, n, x[lo] * rw[lo] - x[hi] * rw[hi])
        };
        // a chunk writes the rows of its own particles only
        let jobs = sw.particle_rows(y);
        sw.run(jobs, |&[p0, p1, _, _, c0, c1], mut out| {
            let (p0, p1) = (p0 as usize, p1 as usize);
            for i in p0..p1 {
                out[i] = V3::zeros();
            }
            for &k in &sw.cross[c0 as usize..c1 as usize] {
                let [lo, hi] = sw.ends[k as usize].map(|i| i as usize);
                out[hi] -= term(k as usize, lo, hi) * rw[hi];
            }
            for i in p0..p1 {
                let mut yi = out[i];
                for k in sw.lo_first[i] as usize..sw.lo_first[i + 1] as usize {
                    let hi = sw.ends[k][1] as usize;
                    let t = term(k, i, hi);
                    yi += t * rw[i];
                    if hi < p1 {
                        out[hi] -= t * rw[hi];
                    }
                }
                out[i] = if rw[i] == 0.0 { V3::zeros() } else { yi + x[i] * m.central_strength };
            }
        });
    }
}

/// k₀ after `iters` power iterations from [`power_start`], the Rayleigh quotient of the last iterate.
/// S is applied by a sweep over the springs (each evaluated once; the per-particle gather of
/// [`power_matvec`], the GPU's layout, evaluates each twice).
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
    let s = SweptS::new(m, pos);
    let mut lambda = 0.0;
    for _ in 0..iters {
        s.apply(m, &x, &mut y);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The swept S of `power_k0` against the gather twin, on a pinned cloth with one spring collapsed
    /// (skipped by both) and a central field.
    #[test]
    fn swept_s_matches_the_gather() {
        let mut model = crate::model::cloth(70, None).unwrap();
        model.positions[5] = model.positions[6];
        let mut cm = CpuModel::new(&model).unwrap();
        cm.central_strength = 0.7;
        assert!(cm.inv_mass.contains(&0.0), "the cloth has pins");
        let pos: Vec<V3> = model.positions.iter().map(|p| V3::new(p[0], p[1], p[2])).collect();
        let x: Vec<V3> = (0..cm.n).map(|i| V3::new(power_start(i, 0), power_start(i, 1), power_start(i, 2))).collect();
        let (mut a, mut b) = (vec![V3::zeros(); cm.n], vec![V3::zeros(); cm.n]);
        power_matvec(&cm, &pos, &x, &mut a);
        SweptS::new(&cm, &pos).apply(&cm, &x, &mut b);
        let scale = a.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let worst = a.iter().zip(&b).map(|(p, q)| (p - q).norm()).fold(0.0, f64::max) / scale;
        assert!(scale > 0.0 && worst < 1e-13, "sweep against gather: {worst:e} of {scale:e}");
    }
}
