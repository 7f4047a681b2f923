//! Implicit Euler of Baraff & Witkin, linearized once per step, in f64: the CPU twin of
//! `shaders/implicit.wgsl` (the system) and `shaders/pcg.wgsl` (the solver).
//!
//! Kauppila §2.1 (eq. 6): (M − h ∂f/∂v − h² ∂f/∂x) Δv = h (f₀ + h ∂f/∂x v₀), then
//! v' = v₀ + Δv and x' = x₀ + h v'.
//!
//! Per spring s between a and b (d = x_a − x_b, l = |d|, n̂ = d/l) the Jacobians of Kauppila §2.2 are
//! ∂f_a/∂x_a = −K_s with K_s = k[n̂n̂ᵀ + c(I − n̂n̂ᵀ)], c = 1 − L/l, and ∂f_a/∂v_a = −k_d n̂n̂ᵀ (the
//! position derivative of the damping force is dropped, as Kauppila does). The spring's block of
//! −h J_v − h² J_x is B_s = h k_d n̂n̂ᵀ + h² K_s (Kauppila §4.1 stores it once, six values), so
//!
//!   A_ii = m_i (1 + h d₀ + h² s) I + Σ_s B_s,  A_ij = −B_s,
//!
//! with the drag d₀ (∂f/∂v = −d₀ m I) and the central field s (∂f/∂x = −s m I) on the diagonal.
//!
//! **Compressed springs.** For l < L the transverse term c is negative and, once h²k|c| outgrows the
//! masses, A is indefinite (Kauppila §2.2; Shinya §5.2 on the negative eigenvalues of K). By default c is
//! clamped at zero (Choi & Ko), which keeps A symmetric positive definite; `exact_jacobian` keeps the
//! exact block, and CG then reports a breakdown (pᵀAp ≤ 0) as [`Error::CgBreakdown`] instead of stepping.
//!
//! **Pins** are held by Baraff & Witkin's constraint filter: a pinned particle's rows and columns are
//! projected out (its residual, search direction and A·p are zero, its Δv stays 0), not by a huge mass.
//!
//! **Guards.** A spring shorter than [`EPS_LEN`] (coincident endpoints) has no direction: its force and
//! its block are zero, as in the explicit kernels. A zero rest length is fine (c = 1, K_s = kI). Masses
//! are > 0 (validated) and h > 0, so with the clamped Jacobian A ⪰ M is never singular; with the exact one
//! a singular or indefinite system is an error, never a NaN.

use super::forces::{external_accel, EPS_LEN};
use super::sweep::Rows;
pub use super::sweep::SpringSweep;
use super::{CpuModel, V3};
use crate::error::{Bound, Error, Result};
use crate::linalg::spring_mg::{FineSystem, SpringMg};
use crate::reference::implicit::{sym_apply, Sym3};

use crate::linalg::cg::{by_block_rows, dot, BLOCK};
pub use crate::linalg::cg::{pcg_solve, pcg_solve_with, CgReport, CgWork};
pub(crate) use crate::linalg::for_each_particle;

/// The widest index distance between the ends of a spring that the block-tridiagonal solve accepts:
/// particles are grouped in runs of that many, so blocks are at most 3·4 = 12 wide.
pub const MAX_CHAIN_BAND: usize = 4;

/// What one spring contributes to the system of a step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpringTerms {
    /// B_s = h k_d n̂n̂ᵀ + h² K_s: the six values of the spring's block of −h J_v − h² J_x.
    pub bb: Sym3,
    /// q_s = h f_s − h² K_s (v_a − v_b): the spring's part of the right-hand side h (f₀ + h J_x v₀) at
    /// its end a; −q_s at b. f_s is its force on a (Hooke and damping along the spring).
    pub q: V3,
}

/// The linearized system of one step. It belongs to one model: its spring order is planned on first
/// use and rebuilt only when the particle or spring count changes.
#[derive(Clone, Debug, Default)]
pub struct ImplicitSystem {
    /// The step it was built for.
    pub h: f64,
    /// B_s (Kauppila §4.1) per spring, in the order of [`SpringSweep`] (`bb[k]` is the block of spring
    /// `sweep.spring(k)`): read by A·p, the preconditioner and the direct solves.
    pub bb: Vec<Sym3>,
    /// m_i (1 + h d₀ + h² s); 0 for pinned particles (their rows are filtered out).
    pub mass_diag: Vec<f64>,
    /// The right-hand side h (f₀ + h J_x v₀), zero on pinned particles.
    pub rhs: Vec<V3>,
    /// The inverse of A's diagonal (the Jacobi preconditioner, Kauppila §4.2); 0 on pinned particles.
    pub inv_diag: Vec<V3>,
    /// The order and the chunks of the per-spring passes (built once per model).
    pub sweep: SpringSweep,
}

/// The terms of spring `s` at (x, v) for step h: B_s from K_s (Kauppila §2.2 and §4.1) and q_s from
/// its force −[k(l − L) + k_d n̂·(v_a − v_b)] n̂ on a (the twin of `spring_force` without Rayleigh
/// damping) and −K_s (v_a − v_b), its part of J_x v₀ at a.
pub fn implicit_spring_terms(m: &CpuModel, h: f64, exact: bool, s: usize, x: &[V3], v: &[V3]) -> SpringTerms {
    let (a, b) = (m.end_a[s] as usize, m.end_b[s] as usize);
    spring_terms(h, exact, [m.k[s], m.rest[s], m.kd[s]], x[a] - x[b], v[a] - v[b])
}

/// [`implicit_spring_terms`] of a spring (k, L, k_d) with d = x_a − x_b and u = v_a − v_b.
#[inline(always)]
fn spring_terms(h: f64, exact: bool, par: [f64; 3], d: V3, vab: V3) -> SpringTerms {
    let l = d.norm_squared().sqrt();
    spring_terms_at(h, exact, par, d, vab, l, 1.0 / l)
}

/// [`spring_terms`] with l = |d| and 1/l given (one division: n̂ = d/l and L/l from 1/l), so that a
/// batch of springs can take its square roots and divisions together.
#[inline(always)]
fn spring_terms_at(h: f64, exact: bool, [k, rest, kd]: [f64; 3], d: V3, vab: V3, l: f64, inv_l: f64) -> SpringTerms {
    if l <= EPS_LEN {
        return SpringTerms::default();
    }
    let n = d * inv_l;
    let mut c = 1.0 - rest * inv_l;
    if !exact {
        c = c.max(0.0);
    }
    let nv = n.dot(&vab);
    let f = n * (-(k * (l - rest) + kd * nv));
    // K_s (v_a − v_b) = k[(1 − c)(n̂·v) n̂ + c v]
    let kv = n * (k * (1.0 - c) * nv) + vab * (k * c);
    // B_s = α n̂n̂ᵀ + β I with α = h k_d + h² k (1 − c), β = h² k c
    let (alpha, beta) = (h * kd + h * h * k * (1.0 - c), h * h * k * c);
    let an = n * alpha;
    let bb = [an.x * n.x + beta, an.y * n.y + beta, an.z * n.z + beta, an.x * n.y, an.x * n.z, an.y * n.z];
    SpringTerms { bb, q: (f - kv * h) * h }
}

/// Builds the system of one step at (x, v): the blocks, the right-hand side h(f₀ + h J_x v₀) and the
/// Jacobi preconditioner (twin of `implicit_prepare` in `shaders/implicit.wgsl`). One sweep over the
/// springs ([`SpringSweep`]) computes each spring's terms once and adds them to its ends' right-hand
/// side and diagonal.
pub fn implicit_prepare(m: &CpuModel, h: f64, exact: bool, x: &[V3], v: &[V3], sys: &mut ImplicitSystem) {
    sys.h = h;
    if !sys.sweep.fits(m) {
        sys.sweep = SpringSweep::for_model(m);
    }
    sys.bb.resize(m.end_a.len(), [0.0; 6]);
    sys.mass_diag.resize(m.n, 0.0);
    sys.inv_diag.resize(m.n, V3::zeros());
    sys.rhs.resize(m.n, V3::zeros());
    let sw = &sys.sweep;
    let jobs: Vec<_> = sw
        .spring_rows(&mut sys.bb)
        .into_iter()
        .zip(sw.particle_rows(&mut sys.mass_diag))
        .zip(sw.particle_rows(&mut sys.rhs))
        .zip(sw.particle_rows(&mut sys.inv_diag))
        .map(|(((bb, md_out), rhs), diag)| PrepareRows { bb, md_out, rhs, diag })
        .collect();
    let ctx = PrepareCtx { m, h, exact, x, v, sw };
    sw.run(jobs, |c, rows| prepare_chunk(&ctx, c, rows));
}

/// What a chunk of [`implicit_prepare`] reads and writes.
struct PrepareCtx<'a> {
    m: &'a CpuModel,
    h: f64,
    exact: bool,
    x: &'a [V3],
    v: &'a [V3],
    sw: &'a SpringSweep,
}

/// What a chunk of [`implicit_prepare`] writes: the blocks of its own springs [k0, k1) and the rows of
/// its own particles [p0, p1).
struct PrepareRows<'a> {
    bb: Rows<'a, Sym3>,
    md_out: Rows<'a, f64>,
    rhs: Rows<'a, V3>,
    diag: Rows<'a, V3>,
}

/// One chunk of [`implicit_prepare`].
#[inline(always)]
fn prepare_chunk(ctx: &PrepareCtx<'_>, &[p0, p1, k0, k1, c0, c1]: &[u32; 6], rows: PrepareRows<'_>) {
    let PrepareCtx { m, h, exact, x, v, sw } = *ctx;
    let PrepareRows { mut bb, mut md_out, mut rhs, mut diag } = rows;
    for i in p0 as usize..p1 as usize {
        let mi = m.mass[i];
        let md = mi * (1.0 + h * m.drag + h * h * m.central_strength);
        md_out[i] = md;
        // h f₀ + h² J_x v₀ at i, before the springs: the external force and the field's −s m_i v_i
        rhs[i] = (external_accel(m, x[i], v[i]) * mi - v[i] * (m.central_strength * mi * h)) * h;
        diag[i] = V3::new(md, md, md);
    }
    // the terms with a = lo, b = hi: +q_s at lo, −q_s at hi (each end inside the chunk), B_s's
    // diagonal at both
    #[inline(always)]
    fn terms(sw: &SpringSweep, h: f64, exact: bool, x: &[V3], v: &[V3], k: usize) -> (usize, usize, SpringTerms) {
        let [lo, hi] = sw.ends[k].map(|i| i as usize);
        (lo, hi, spring_terms(h, exact, sw.par[k], x[lo] - x[hi], v[lo] - v[hi]))
    }
    let terms = |k: usize| terms(sw, h, exact, x, v, k);
    let mut add = |i: usize, q: V3, t: &SpringTerms| {
        rhs[i] += q;
        diag[i] += V3::new(t.bb[0], t.bb[1], t.bb[2]);
    };
    for &k in &sw.cross[c0 as usize..c1 as usize] {
        let (_, hi, t) = terms(k as usize);
        add(hi, -t.q, &t);
    }
    // own springs in batches whose lengths and inverse lengths are taken together (the square roots
    // and divisions pipeline instead of waiting on each other; same values as `spring_terms`)
    const BATCH: usize = 16;
    let mut k = k0 as usize;
    while k < k1 as usize {
        let nb = (k1 as usize - k).min(BATCH);
        let mut d = [V3::zeros(); BATCH];
        let mut l = [0.0; BATCH];
        let mut inv_l = [0.0; BATCH];
        for j in 0..nb {
            let [lo, hi] = sw.ends[k + j];
            d[j] = x[lo as usize] - x[hi as usize];
            l[j] = d[j].norm_squared();
        }
        for j in 0..BATCH {
            l[j] = l[j].sqrt();
            inv_l[j] = 1.0 / l[j];
        }
        for j in 0..nb {
            let [lo, hi] = sw.ends[k + j].map(|i| i as usize);
            let t = spring_terms_at(h, exact, sw.par[k + j], d[j], v[lo] - v[hi], l[j], inv_l[j]);
            bb[k + j] = t.bb;
            add(lo, t.q, &t);
            if hi < p1 as usize {
                add(hi, -t.q, &t);
            }
        }
        k += nb;
    }
    for i in p0 as usize..p1 as usize {
        if m.inv_mass[i] == 0.0 {
            md_out[i] = 0.0;
            rhs[i] = V3::zeros();
            diag[i] = V3::zeros();
        } else {
            let d = diag[i];
            diag[i] = V3::new(1.0 / d.x, 1.0 / d.y, 1.0 / d.z);
        }
    }
}

/// out = A p, with the pinned rows filtered out (twin of the gather in `implicit_matvec`):
/// (A p)_i = m_i (1 + h d₀ + h² s) p_i + Σ_s ±B_s (p_lo − p_hi), one sweep over the springs
/// ([`SpringSweep`]), each evaluated once.
pub fn implicit_matvec(m: &CpuModel, sys: &ImplicitSystem, p: &[V3], out: &mut [V3]) {
    assert!(
        p.len() == m.n && out.len() == m.n && sys.sweep.fits(m) && sys.bb.len() == m.end_a.len(),
        "implicit_matvec: a system of another model"
    );
    let jobs = sys.sweep.particle_rows(out);
    sys.sweep.run(jobs, |c, y| matvec_chunk(m, sys, p, y, c));
}

/// One chunk of [`implicit_matvec`]: writes the rows of its own particles only.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // k indexes the sweep's ends and the blocks together
fn matvec_chunk(m: &CpuModel, sys: &ImplicitSystem, p: &[V3], mut y: Rows<'_, V3>, &[p0, p1, _, _, c0, c1]: &[u32; 6]) {
    let (sw, bb) = (&sys.sweep, &sys.bb);
    for i in p0 as usize..p1 as usize {
        y[i] = p[i] * sys.mass_diag[i];
    }
    for &k in &sw.cross[c0 as usize..c1 as usize] {
        let [lo, hi] = sw.ends[k as usize];
        y[hi as usize] -= sym_apply(&bb[k as usize], p[lo as usize] - p[hi as usize]);
    }
    for i in p0 as usize..p1 as usize {
        // the springs with lower end i; (Ap)_i in a register, as no other spring adds to it now
        let mut yi = y[i];
        for k in sw.lo_first[i] as usize..sw.lo_first[i + 1] as usize {
            let hi = sw.ends[k][1];
            let t = sym_apply(&bb[k], p[i] - p[hi as usize]);
            yi += t;
            if hi < p1 {
                y[hi as usize] -= t;
            }
        }
        // Baraff & Witkin's filter: pinned rows are zero
        y[i] = if m.inv_mass[i] == 0.0 { V3::zeros() } else { yi };
    }
}

/// x' = x₀ + h(v₀ + Δv), v' = v₀ + Δv; pinned particles keep x and v = 0 (twin of `implicit_integrate`).
pub fn implicit_integrate(m: &CpuModel, h: f64, x: &[V3], v: &[V3], dv: &[V3], x_out: &mut [V3], v_out: &mut [V3]) {
    let n = m.n;
    assert!(
        x.len() == n && v.len() == n && dv.len() == n && x_out.len() == n && v_out.len() == n,
        "implicit_integrate: vectors of another model"
    );
    let rows = x_out.chunks_mut(BLOCK).zip(v_out.chunks_mut(BLOCK));
    by_block_rows(rows.collect(), |blk, (xo, vo)| {
        for (k, (xo, vo)) in xo.iter_mut().zip(vo.iter_mut()).enumerate() {
            let i = blk * BLOCK + k;
            (*xo, *vo) = crate::reference::implicit::implicit_integrate(i, m, h, x, v, dv);
        }
        [0.0; 0]
    });
}

/// The adaptive step's check of a trial step from `x` to `x_new` (the reference's `implicit_strain` per
/// particle, in parallel): whether a spring ended strained beyond `strain_limit` or changed its length by
/// more than `step_limit`·L within the step.
pub fn strained(m: &CpuModel, strain_limit: f64, step_limit: f64, x: &[V3], x_new: &[V3]) -> bool {
    use rayon::prelude::*;
    (0..m.n)
        .into_par_iter()
        .with_min_len(4096)
        .any(|i| crate::reference::implicit::implicit_strain(i, m, strain_limit, step_limit, x, x_new))
}

/// The largest index distance |a − b| over the springs (the band of the system, in particles).
pub fn chain_band(m: &CpuModel) -> usize {
    m.end_a.iter().zip(&m.end_b).map(|(&a, &b)| (a as i64 - b as i64).unsigned_abs() as usize).max().unwrap_or(1).max(1)
}

/// Accumulates A's 3×3 block (i, j) into `f(i, j, block)`: the mass diagonal and the spring blocks,
/// with pinned rows and columns replaced by the identity row (their Δv is 0).
fn for_each_block(m: &CpuModel, sys: &ImplicitSystem, mut f: impl FnMut(usize, usize, &nalgebra::Matrix3<f64>)) {
    let full = |b: &Sym3| nalgebra::Matrix3::new(b[0], b[3], b[4], b[3], b[1], b[5], b[4], b[5], b[2]);
    for i in 0..m.n {
        if m.inv_mass[i] == 0.0 {
            f(i, i, &nalgebra::Matrix3::identity());
        } else {
            f(i, i, &(nalgebra::Matrix3::identity() * sys.mass_diag[i]));
        }
    }
    for (k, bk) in sys.bb.iter().enumerate() {
        let s = sys.sweep.spring(k);
        let (a, b) = (m.end_a[s] as usize, m.end_b[s] as usize);
        let blk = full(bk);
        let (fa, fb) = (m.inv_mass[a] != 0.0, m.inv_mass[b] != 0.0);
        if fa {
            f(a, a, &blk);
        }
        if fb {
            f(b, b, &blk);
        }
        if fa && fb {
            f(a, b, &(-blk));
            f(b, a, &(-blk));
        }
    }
}

/// The exact solve of the filtered system by faer's sparse Cholesky (the direct check of the PCG, any
/// size). The clamped Jacobian keeps A symmetric positive definite; with the exact Jacobian of compressed
/// springs A may be indefinite, and that is an [`Error::NotPositiveDefinite`] from the factorisation.
pub fn sparse_solve(m: &CpuModel, sys: &ImplicitSystem) -> Result<Vec<V3>> {
    let mut pairs = Vec::new();
    let mut vals = Vec::new();
    for_each_block(m, sys, |i, j, b| {
        for r in 0..3 {
            for c in 0..3 {
                let (gr, gc) = (3 * i + r, 3 * j + c);
                if gr >= gc {
                    pairs.push((gr, gc));
                    vals.push(b[(r, c)]);
                }
            }
        }
    });
    let mut f = super::sparse::SpdFactor::new(3 * m.n, &pairs, 1, "the implicit Euler matrix")?;
    f.factor(&vals, "the implicit Euler matrix")?;
    let mut rhs = faer::Mat::<f64>::from_fn(3 * m.n, 1, |k, _| sys.rhs[k / 3][k % 3]);
    f.solve_in_place(rhs.as_mut())?;
    Ok((0..m.n).map(|i| V3::new(rhs[(3 * i, 0)], rhs[(3 * i + 1, 0)], rhs[(3 * i + 2, 0)])).collect())
}

/// The exact solve of the filtered system by a dense LU (for checking, small models only).
pub fn dense_solve(m: &CpuModel, sys: &ImplicitSystem) -> Result<Vec<V3>> {
    let n3 = 3 * m.n;
    if m.n > 3000 {
        return Err(Error::invalid("particles", m.n, Bound::at_most(3000).worded("the dense reference solve takes at most {} particles")));
    }
    let mut a = nalgebra::DMatrix::<f64>::zeros(n3, n3);
    for_each_block(m, sys, |i, j, b| {
        let mut v = a.fixed_view_mut::<3, 3>(3 * i, 3 * j);
        v += b;
    });
    let rhs = nalgebra::DVector::from_iterator(n3, sys.rhs.iter().flat_map(|r| [r.x, r.y, r.z]));
    let x = a.lu().solve(&rhs).ok_or(Error::Singular { what: "the dense system", block: None })?;
    Ok((0..m.n).map(|i| V3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2])).collect())
}

/// The exact O(n) solve for chains (Witkin/Baraff/Kass §7.2): with springs at most w indices apart, the
/// particles grouped in runs of w give a block-tridiagonal matrix of 3w×3w blocks, solved by the block
/// Thomas algorithm (forward elimination, back substitution). A model with wider springs is not a chain:
/// that is an error naming its band.
pub fn tridiagonal_solve(m: &CpuModel, sys: &ImplicitSystem, dv: &mut [V3]) -> Result<()> {
    use nalgebra::{DMatrix, DVector};
    let w = chain_band(m);
    if w > MAX_CHAIN_BAND {
        return Err(Error::invalid(
            "global",
            "tridiagonal",
            Bound::Unsupported(format!(
                "the tridiagonal solve needs a chain (springs at most {MAX_CHAIN_BAND} indices apart); this model's springs span {w}"
            )),
        ));
    }
    let n = m.n;
    if n == 0 {
        return Ok(());
    }
    let nb = n.div_ceil(w);
    let bs = 3 * w;
    let mut diag = vec![DMatrix::<f64>::zeros(bs, bs); nb];
    let mut upper = vec![DMatrix::<f64>::zeros(bs, bs); nb];
    for_each_block(m, sys, |i, j, b| {
        let (bi, bj) = (i / w, j / w);
        let (oi, oj) = (3 * (i % w), 3 * (j % w));
        if bi == bj {
            let mut v = diag[bi].fixed_view_mut::<3, 3>(oi, oj);
            v += b;
        } else if bj == bi + 1 {
            let mut v = upper[bi].fixed_view_mut::<3, 3>(oi, oj);
            v += b;
        }
    });
    // padding rows of the last run (indices ≥ n) get the identity
    for i in n..nb * w {
        let o = 3 * (i % w);
        let mut v = diag[nb - 1].fixed_view_mut::<3, 3>(o, o);
        v += nalgebra::Matrix3::<f64>::identity();
    }
    let mut rhs: Vec<DVector<f64>> = (0..nb)
        .map(|b| {
            DVector::from_fn(bs, |r, _| {
                let i = b * w + r / 3;
                if i < n {
                    sys.rhs[i][r % 3]
                } else {
                    0.0
                }
            })
        })
        .collect();
    let singular = |b: usize| Error::Singular { what: "the block-tridiagonal system", block: Some(b) };
    // forward elimination: C_b = M_b⁻¹ U_b, d_b = M_b⁻¹(r_b − L_b d_{b−1}), M_b = D_b − L_b C_{b−1}, L_b = U_{b−1}ᵀ
    let mut cs: Vec<DMatrix<f64>> = Vec::with_capacity(nb);
    for b in 0..nb {
        let mut mb = diag[b].clone();
        if b > 0 {
            let lb = upper[b - 1].transpose();
            mb -= &lb * &cs[b - 1];
            let prev = rhs[b - 1].clone();
            rhs[b] -= &lb * prev;
        }
        let lu = mb.lu();
        let d = lu.solve(&rhs[b]).ok_or_else(|| singular(b))?;
        rhs[b] = d;
        let c = if b + 1 < nb { lu.solve(&upper[b]).ok_or_else(|| singular(b))? } else { DMatrix::zeros(bs, bs) };
        cs.push(c);
    }
    // back substitution: x_b = d_b − C_b x_{b+1}
    for b in (0..nb.saturating_sub(1)).rev() {
        let next = rhs[b + 1].clone();
        rhs[b] -= &cs[b] * next;
    }
    for i in 0..n {
        let r = &rhs[i / w];
        let o = 3 * (i % w);
        dv[i] = if m.inv_mass[i] == 0.0 { V3::zeros() } else { V3::new(r[o], r[o + 1], r[o + 2]) };
    }
    if dv.iter().any(|d| !d.iter().all(|c| c.is_finite())) {
        return Err(Error::NonFinite { what: "the block-tridiagonal solve".into(), quantity: "Δv" });
    }
    Ok(())
}

/// Working memory of the implicit step.
#[derive(Clone, Debug, Default)]
pub struct ImplicitScratch {
    /// The system of the last step.
    pub sys: ImplicitSystem,
    /// Δv of the last step.
    pub dv: Vec<V3>,
    /// CG vectors.
    pub cg: CgWork,
    /// The multigrid hierarchy (built on first use with the multigrid preconditioner).
    pub mg: Option<SpringMg>,
}

/// How the implicit step solves its system.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImplicitOptions {
    /// Exact Jacobian (see the module notes) instead of the clamped one.
    pub exact_jacobian: bool,
    /// CG tolerance ε.
    pub tol: f64,
    /// CG iteration budget.
    pub max_iter: usize,
    /// The block-tridiagonal solve instead of CG.
    pub tridiagonal: bool,
    /// Start CG from the last step's Δv instead of zero.
    pub warm_start: bool,
    /// Precondition CG with the aggregation multigrid V-cycle ([`SpringMg`]) instead of Jacobi.
    pub multigrid: bool,
}

/// The fine level of [`SpringMg`]: this step's system of the model.
pub struct FineImplicit<'a> {
    /// The model.
    pub m: &'a CpuModel,
    /// The system of the step.
    pub sys: &'a ImplicitSystem,
}

impl FineSystem for FineImplicit<'_> {
    fn mass_diag(&self) -> &[f64] {
        &self.sys.mass_diag
    }
    fn blocks(&self) -> &[Sym3] {
        &self.sys.bb
    }
    fn apply(&self, x: &[V3], out: &mut [V3]) {
        implicit_matvec(self.m, self.sys, x, out)
    }
}

/// The multigrid hierarchy of the model's springs in the sweep's order (the order of the blocks).
pub fn spring_multigrid(m: &CpuModel, sweep: &SpringSweep) -> Result<SpringMg> {
    let k: Vec<f64> = sweep.par.iter().map(|p| p[0]).collect();
    SpringMg::new(m, &sweep.ends, &k)
}

/// One linearized implicit Euler step of size h from (x, v) into (x_out, v_out).
#[allow(clippy::too_many_arguments)] // the implicit kernels' inputs, in binding order
pub fn implicit_step(
    m: &CpuModel,
    h: f64,
    o: &ImplicitOptions,
    x: &[V3],
    v: &[V3],
    x_out: &mut [V3],
    v_out: &mut [V3],
    s: &mut ImplicitScratch,
) -> Result<CgReport> {
    implicit_prepare(m, h, o.exact_jacobian, x, v, &mut s.sys);
    s.dv.resize(m.n, V3::zeros());
    let rep = if o.tridiagonal {
        tridiagonal_solve(m, &s.sys, &mut s.dv)?;
        // no iterations; the residual is measured (rounding only)
        let mut ax = vec![V3::zeros(); m.n];
        implicit_matvec(m, &s.sys, &s.dv, &mut ax);
        let bb = dot(&s.sys.rhs, &s.sys.rhs);
        let rr: f64 = s.sys.rhs.iter().zip(&ax).map(|(b, a)| (b - a).norm_squared()).sum();
        CgReport { iterations: 0, residual: if bb > 0.0 { (rr / bb).sqrt() } else { 0.0 } }
    } else {
        let sys = &s.sys;
        if !o.warm_start {
            s.dv.iter_mut().for_each(|d| *d = V3::zeros());
        }
        let r = if o.multigrid {
            if !s.mg.as_ref().is_some_and(|g| g.fits(m.n, sys.bb.len())) {
                s.mg = Some(spring_multigrid(m, &sys.sweep)?);
            }
            let mg = s.mg.as_mut().expect("built above");
            let fine = FineImplicit { m, sys };
            mg.update(&fine)?;
            pcg_solve_with(
                |p, out| implicit_matvec(m, sys, p, out),
                |r, z| mg.apply(&fine, r, z),
                &sys.rhs,
                &mut s.dv,
                o.tol,
                o.max_iter,
                &mut s.cg,
            )
        } else {
            pcg_solve(|p, out| implicit_matvec(m, sys, p, out), &sys.inv_diag, &sys.rhs, &mut s.dv, o.tol, o.max_iter, &mut s.cg)
        };
        if r.is_err() {
            // no warm start from a failed solve
            s.dv.iter_mut().for_each(|d| *d = V3::zeros());
        }
        r?
    };
    implicit_integrate(m, h, x, v, &s.dv, x_out, v_out);
    Ok(rep)
}
