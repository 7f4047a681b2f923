//! Preconditioned conjugate gradients in f64 (Shewchuk's PCG; Kauppila §3.2.2 with §4.2's Jacobi
//! preconditioner), the CPU twin of `shaders/pcg.wgsl` (`pcg_begin`, `pcg_matvec`, `pcg_update`,
//! `pcg_finish`) step for step, for any operator: the implicit Euler system and Liu's global step.
//! The dot products are summed in fixed blocks in block order, so they do not depend on the threads.
//! The per-row kernels are in [`crate::reference::pcg`]; this whole-array form fuses them (and shares
//! their scalar steps: β, the convergence test and the final residual).

use super::PAR_N;
use crate::error::{Bound, Error, Result};
use crate::reference::model::V3;
use crate::reference::pcg as kernel;
use rayon::prelude::*;

/// What a solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CgReport {
    /// Iterations used.
    pub iterations: usize,
    /// Final relative residual ‖b − AΔv‖ / ‖b‖ (0 when b = 0).
    pub residual: f64,
}

pub(crate) fn dot(a: &[V3], b: &[V3]) -> f64 {
    by_blocks(a.len(), |rg| [rg.fold(0.0, |s, i| s + a[i].dot(&b[i])), 0.0])[0]
}

/// x += αp, r −= αAp, z = P⁻¹r; returns (r·z, r·r), summed in fixed blocks.
fn cg_update(x: &mut [V3], w: &mut CgWork, inv_diag: &[V3], alpha: f64) -> [f64; 2] {
    let (p, ap) = (&w.p, &w.ap);
    let rows = x.chunks_mut(BLOCK).zip(w.r.chunks_mut(BLOCK)).zip(w.z.chunks_mut(BLOCK));
    by_block_rows(rows.collect(), |b, ((x, r), z)| {
        let (mut rz, mut rr) = (0.0, 0.0);
        for (k, ((x, r), z)) in x.iter_mut().zip(r.iter_mut()).zip(z.iter_mut()).enumerate() {
            let i = b * BLOCK + k;
            *x += p[i] * alpha;
            *r -= ap[i] * alpha;
            *z = r.component_mul(&inv_diag[i]);
            rz += r.dot(z);
            rr += r.dot(r);
        }
        [rz, rr]
    })
}

/// Entries per block of a [`by_blocks`] pass.
pub(crate) const BLOCK: usize = 1024;

/// Runs `f` on the fixed blocks of BLOCK indices of 0..n (on the rayon pool when n ≥ PAR_N) and sums
/// the blocks' pairs in block order: the sums do not depend on how many threads ran them.
fn by_blocks<const N: usize>(n: usize, f: impl Fn(std::ops::Range<usize>) -> [f64; N] + Sync) -> [f64; N] {
    let blocks: Vec<usize> = (0..n.div_ceil(BLOCK)).collect();
    by_block_rows(blocks, |b, _| f(b * BLOCK..((b + 1) * BLOCK).min(n)))
}

/// Runs `f(b, rows)` on every block b with its rows (what it may write), on the rayon pool when there
/// are at least PAR_N / BLOCK blocks, and sums the blocks' results in block order.
pub(crate) fn by_block_rows<R: Send, const N: usize>(rows: Vec<R>, f: impl Fn(usize, R) -> [f64; N] + Sync) -> [f64; N] {
    let part: Vec<[f64; N]> = if rows.len() * BLOCK < PAR_N {
        rows.into_iter().enumerate().map(|(b, r)| f(b, r)).collect()
    } else {
        rows.into_par_iter().enumerate().map(|(b, r)| f(b, r)).collect()
    };
    let mut sum = [0.0; N];
    for v in part {
        for (s, v) in sum.iter_mut().zip(v) {
            *s += v;
        }
    }
    sum
}

/// Working vectors of [`pcg_solve`].
#[derive(Clone, Debug, Default)]
pub struct CgWork {
    r: Vec<V3>,
    z: Vec<V3>,
    p: Vec<V3>,
    ap: Vec<V3>,
}

impl CgWork {
    /// Sizes the vectors for n entries, with p = 0 (β = 0 at the first iteration reads it).
    fn reset(&mut self, n: usize) {
        self.r.resize(n, V3::zeros());
        self.z.resize(n, V3::zeros());
        self.p.clear();
        self.p.resize(n, V3::zeros());
        self.ap.resize(n, V3::zeros());
    }
}

/// The breakdown test of CG: pᵀAp ≤ 0 or not finite at iteration k is an error saying `why`.
fn check_curvature(k: usize, pap: f64, why: &'static str) -> Result<()> {
    if pap > 0.0 && pap.is_finite() {
        Ok(())
    } else {
        Err(Error::CgBreakdown { iteration: k, pap, why })
    }
}

/// Jacobi-preconditioned conjugate gradients (Kauppila §3.2.2 with §4.2's preconditioner; Shewchuk's
/// PCG) from the x passed in (zero, or the last step's Δv as a warm start), the twin of `shaders/pcg.wgsl`
/// step for step:
///
/// r = b − Ax, z = P⁻¹r; for k < max_iter: stop if ‖r‖ ≤ ε‖b‖; β = (r·z)/(r·z)_prev (0 at k = 0);
/// p = z + βp; α = (r·z)/(p·Ap); x += αp; r −= αAp; z = P⁻¹r.
///
/// `apply` is the matrix-vector product (the implicit step's, or the Liu global step's); `inv_diag` the
/// inverse diagonal, 0 on filtered (pinned) entries. A breakdown (p·Ap ≤ 0 or not finite: A is not
/// positive definite) is an error.
pub fn pcg_solve(
    mut apply: impl FnMut(&[V3], &mut [V3]),
    inv_diag: &[V3],
    b: &[V3],
    x: &mut [V3],
    tol: f64,
    max_iter: usize,
    w: &mut CgWork,
) -> Result<CgReport> {
    let n = b.len();
    if x.len() != n || inv_diag.len() != n {
        return Err(Error::invalid(
            "x.len()",
            x.len(),
            Bound::length(n, "x and the preconditioner must have the right-hand side's length {}"),
        ));
    }
    w.reset(n);
    // r = b − A x₀ (x₀ = 0 unless warm-started)
    if x.iter().all(|a| *a == V3::zeros()) {
        w.ap.iter_mut().for_each(|a| *a = V3::zeros());
    } else {
        apply(x, &mut w.ap);
    }
    // r, z and the three dot products in one pass (each dot in its own blocks, as `dot` sums them)
    let [bb, mut rr, mut rz] = {
        let ap = &w.ap;
        let rows = w.r.chunks_mut(BLOCK).zip(w.z.chunks_mut(BLOCK));
        by_block_rows(rows.collect(), |blk, (rs, zs)| {
            let mut d = [0.0; 3];
            for (k, (ro, zo)) in rs.iter_mut().zip(zs.iter_mut()).enumerate() {
                let i = blk * BLOCK + k;
                let r = b[i] - ap[i];
                let z = r.component_mul(&inv_diag[i]);
                *ro = r;
                *zo = z;
                d[0] += b[i].dot(&b[i]);
                d[1] += r.dot(&r);
                d[2] += r.dot(&z);
            }
            d
        })
    };
    let mut rz_prev = 0.0;
    let resid = |rr: f64| kernel::pcg_finish(rr, bb);
    for k in 0..max_iter {
        if kernel::pcg_converged(rr, bb, tol) {
            return Ok(CgReport { iterations: k, residual: resid(rr) });
        }
        let beta = kernel::pcg_beta(rz, rz_prev);
        {
            let z = &w.z;
            by_block_rows(w.p.chunks_mut(BLOCK).collect(), |blk, ps| {
                for (k, p) in ps.iter_mut().enumerate() {
                    *p = z[blk * BLOCK + k] + *p * beta;
                }
                [0.0; 0]
            });
        }
        apply(&w.p, &mut w.ap);
        let pap = dot(&w.p, &w.ap);
        check_curvature(k, pap, "the system is not positive definite; the exact Jacobian of a compressed spring does this")?;
        let alpha = rz / pap;
        rz_prev = rz;
        [rz, rr] = cg_update(x, w, inv_diag, alpha);
    }
    Ok(CgReport { iterations: max_iter, residual: resid(rr) })
}

/// Preconditioned conjugate gradients with any symmetric positive definite preconditioner
/// `precondition(r, z)` (z = B r), the twin of `shaders/pcg.wgsl` run with an external preconditioner
/// (`shaders/multigrid.wgsl`), step for step: the same iteration as [`pcg_solve`], with z = B r in place
/// of the Jacobi product and r·z summed after it. Used by Liu's `cg` global step with the multigrid
/// V-cycle ([`super::multigrid::Multigrid::apply`]).
#[allow(clippy::too_many_arguments)]
pub fn pcg_solve_with(
    mut apply: impl FnMut(&[V3], &mut [V3]),
    mut precondition: impl FnMut(&[V3], &mut [V3]),
    b: &[V3],
    x: &mut [V3],
    tol: f64,
    max_iter: usize,
    w: &mut CgWork,
) -> Result<CgReport> {
    let n = b.len();
    if x.len() != n {
        return Err(Error::invalid("x.len()", x.len(), Bound::length(n, "x must have the right-hand side's length {}")));
    }
    w.reset(n);
    if x.iter().all(|a| *a == V3::zeros()) {
        w.r.copy_from_slice(b);
    } else {
        apply(x, &mut w.ap);
        for ((r, bi), ap) in w.r.iter_mut().zip(b).zip(&w.ap) {
            *r = bi - ap;
        }
    }
    precondition(&w.r, &mut w.z);
    let (bb, mut rr, mut rz) = (dot(b, b), dot(&w.r, &w.r), dot(&w.r, &w.z));
    let mut rz_prev = 0.0;
    let resid = |rr: f64| kernel::pcg_finish(rr, bb);
    for k in 0..max_iter {
        if kernel::pcg_converged(rr, bb, tol) {
            return Ok(CgReport { iterations: k, residual: resid(rr) });
        }
        let beta = kernel::pcg_beta(rz, rz_prev);
        for (p, z) in w.p.iter_mut().zip(&w.z) {
            *p = z + *p * beta;
        }
        apply(&w.p, &mut w.ap);
        let pap = dot(&w.p, &w.ap);
        check_curvature(k, pap, "the system or the preconditioner is not positive definite")?;
        let alpha = rz / pap;
        rz_prev = rz;
        for (((xi, ri), p), ap) in x.iter_mut().zip(w.r.iter_mut()).zip(&w.p).zip(&w.ap) {
            *xi += p * alpha;
            *ri -= ap * alpha;
        }
        precondition(&w.r, &mut w.z);
        rz = dot(&w.r, &w.z);
        rr = dot(&w.r, &w.r);
    }
    Ok(CgReport { iterations: max_iter, residual: resid(rr) })
}
