//! Smoothed-aggregation algebraic multigrid (Vaněk, Mandel & Brezina 1996, "Algebraic multigrid by
//! smoothed aggregation for second and fourth order elliptic problems") as the preconditioner of the
//! `cg` global step of Liu's local/global method, in f64: the CPU twin of `shaders/multigrid.wgsl`.
//!
//! # Why
//! Liu's global matrix A = M(1 + h d₀ + h² s) + h² L is constant, and on a 256×256 curtain its condition
//! number is near 3e5. Jacobi-PCG with a small budget leaves the global step far from solved (300
//! iterations per global step on the f64 twin still sag 3.4% off the Cholesky path after 60 frames).
//! A multigrid V-cycle treats the smooth, low-frequency error that Jacobi cannot, and it is built from
//! sparse matrix-vector products, which is what a GPU does well. A is constant, so the hierarchy is
//! built once (again when h changes).
//!
//! # The hierarchy
//! Level 0 is A itself, assembled in particle order (⊗ I₃: one scalar matrix for x, y and z). Pinned
//! particles are eliminated: their rows are empty and they belong to no aggregate, so every vector the
//! V-cycle returns is 0 on them. Each level:
//! - strength of connection: j is a strong neighbour of i when |a_ij| ≥ θ √(a_ii a_jj), θ = [`THETA`];
//! - greedy aggregation (Vaněk et al. §3.1: root aggregates of whole strong neighbourhoods, then
//!   attaching the rest to a neighbouring aggregate, then new aggregates for what is left);
//! - the tentative prolongator P̂ (the constant on each aggregate, normalised) and the smoothed one
//!   P = (I − ω D⁻¹A) P̂ with ω = 4/(3ρ), ρ ≈ ρ(D⁻¹A) by power iteration;
//! - the Galerkin coarse matrix A_c = Pᵀ A P and R = Pᵀ.
//!
//! Coarsening stops at [`COARSE_ROWS`] rows or fewer (or when it stalls); that level is solved by the
//! dense inverse of its live rows (1/a_ii beyond [`DENSE_ROWS`] of them, where coarsening stalled).
//!
//! # The V(1,1)-cycle, `z = B r` (symmetric, so it preconditions CG)
//! On level l with right-hand side b (b₀ = r), smoothing weight ω_l = 4/(3ρ_l):
//! - down: x = ω D⁻¹ b (one Jacobi sweep from 0) and t = b − A x;
//! - restrict: b_{l+1} = R t; the coarser level returns its result z_{l+1};
//! - up: x += P z_{l+1};
//! - post: z_l = x + ω D⁻¹ (b − A x) (one Jacobi sweep).
//!
//! On the last level z = A⁻¹ b by the inverse. The GPU runs the same four kernels per level; their
//! per-row twins (`mg_down`, `mg_restrict`, `mg_coarse`, `mg_up`, `mg_post`) are in
//! [`crate::reference::multigrid`], and [`Multigrid::apply`] calls them.

pub use super::aggregation::{aggregate, THETA};
use super::aggregation::{coarsen, merge_row, smoothing, Rows};
pub use super::csr::Csr;
use super::for_each_particle;
use crate::error::{Error, Result};
use crate::reference::local_global::{entry_spring, LocalGlobalParams};
use crate::reference::model::{CpuModel, V3};
use crate::reference::multigrid as kernel;
pub use crate::reference::multigrid::CsrRows;

/// Coarsening stops once a level has at most this many rows (solved by a dense inverse).
pub const COARSE_ROWS: usize = 256;
/// The most levels of a hierarchy.
pub const MAX_LEVELS: usize = 10;

/// The global matrix A = M(1 + h d₀ + h² s) + h² L of `m` at `p.h` in particle order (Liu eq. 14, the
/// operator of `local_global_apply` in `crate::cpu::local_global`): for a free i, a_ii = mᵢ(1 + h d₀ + h² s) + h² Σₑ kₑ
/// and a_ij = −h² Σ k over the springs joining i to a free j; pinned rows and columns are empty.
pub fn global_matrix(m: &CpuModel, p: &LocalGlobalParams) -> Csr {
    let rows = GlobalRows::new(m, p);
    // row by row: one row's entries at a time besides the matrix
    Csr::from_rows(
        m.n,
        (0..m.n).map(|i| {
            let mut r = Vec::new();
            rows.row_into(i, &mut r);
            r
        }),
    )
}

/// The rows of [`global_matrix`], each formed from the model when it is read: the matrix without its
/// storage (12 B an entry in f64, some 13 entries a particle on a cloth).
#[derive(Clone, Copy)]
pub struct GlobalRows<'a> {
    m: &'a CpuModel,
    /// h².
    h2: f64,
    /// 1 + h d₀ + h² s.
    mass_diag: f64,
}

impl<'a> GlobalRows<'a> {
    /// The rows of `m`'s global matrix at `p.h`.
    pub fn new(m: &'a CpuModel, p: &LocalGlobalParams) -> Self {
        GlobalRows { m, h2: p.h * p.h, mass_diag: p.mass_diag }
    }

    /// Stored entries (one pass over the rows).
    pub fn nnz(&self) -> usize {
        let mut row = Vec::new();
        (0..self.m.n)
            .map(|i| {
                self.row_into(i, &mut row);
                row.len()
            })
            .sum()
    }
}

impl Rows for GlobalRows<'_> {
    fn rows(&self) -> usize {
        self.m.n
    }

    fn row_into(&self, i: usize, r: &mut Vec<(u32, f64)>) {
        let (m, h2) = (self.m, self.h2);
        r.clear();
        if m.inv_mass[i] == 0.0 {
            return;
        }
        let mut diag = m.mass[i] * self.mass_diag;
        for &e in m.incidence.of(i) {
            let (s, sign) = entry_spring(e);
            let j = if sign > 0.0 { m.end_b[s] } else { m.end_a[s] };
            diag += h2 * m.k[s];
            if m.inv_mass[j as usize] != 0.0 && j as usize != i {
                r.push((j, -h2 * m.k[s]));
            }
        }
        r.push((i as u32, diag));
        merge_row(r);
    }
}

/// One level of the hierarchy.
#[derive(Clone, Debug, Default)]
pub struct Level {
    /// The level's matrix (level 0: the global matrix in particle order).
    pub a: Csr,
    /// ω/a_ii per row (0 on empty rows): the Jacobi sweep's weight, ω = 4/(3ρ(D⁻¹A)).
    pub wdinv: Vec<f64>,
    /// The prolongator to this level from the next (rows: this level; empty on the last level).
    pub p: Csr,
    /// The restriction Pᵀ (rows: the next level).
    pub r: Csr,
}

/// The hierarchy and the V-cycle's working vectors.
#[derive(Clone, Debug, Default)]
pub struct Multigrid {
    /// Levels, finest first; the last is solved by `coarse_inv`.
    pub levels: Vec<Level>,
    /// The last level's solve as a matrix: the inverse of its live rows (dense), or 1/a_ii when it has
    /// more than [`DENSE_ROWS`] of them.
    pub coarse_inv: Csr,
    /// Per level: (b, x, t), the right-hand side, the iterate and the result/residual (allocated by the
    /// first [`Multigrid::apply`]).
    work: Vec<[Vec<V3>; 3]>,
}

/// The most live rows of a last level solved by its dense inverse; a larger one (a model whose
/// coarsening stalls, e.g. many particles without springs) gets 1/a_ii instead.
pub const DENSE_ROWS: usize = 1024;

/// The last level's solve as a matrix: the dense inverse of the live rows (Cholesky in f64), 0 on empty
/// rows; 1/a_ii beyond [`DENSE_ROWS`] live rows.
fn coarse_inverse(a: &Csr) -> Result<Csr> {
    let d = a.diag();
    let live: Vec<usize> = (0..a.rows()).filter(|&i| d[i] > 0.0).collect();
    if live.len() > DENSE_ROWS {
        return Ok(Csr::from_rows(a.cols, (0..a.rows()).map(|i| if d[i] > 0.0 { vec![(i as u32, 1.0 / d[i])] } else { Vec::new() })));
    }
    let mut at = vec![u32::MAX; a.rows()];
    for (k, &i) in live.iter().enumerate() {
        at[i] = k as u32;
    }
    let nc = live.len();
    let mut dense = nalgebra::DMatrix::<f64>::zeros(nc, nc);
    for (k, &i) in live.iter().enumerate() {
        for (j, v) in a.row(i) {
            if at[j] != u32::MAX {
                dense[(k, at[j] as usize)] = v;
            }
        }
    }
    let inv = dense
        .cholesky()
        .ok_or_else(|| Error::NotPositiveDefinite {
            what: format!("multigrid: the coarsest matrix ({nc}×{nc})"),
            pivot_row: None,
            hint: "is every mass > 0?",
        })?
        .inverse();
    Ok(Csr::from_rows(
        a.cols,
        (0..a.rows()).map(|i| match at[i] {
            u32::MAX => Vec::new(),
            k => live.iter().enumerate().map(|(l, &j)| (j as u32, inv[(k as usize, l)])).collect(),
        }),
    ))
}

impl Multigrid {
    /// The hierarchy of Liu's global matrix of `m` at `p.h` (see the module doc).
    pub fn for_global(m: &CpuModel, p: &LocalGlobalParams) -> Result<Self> {
        Multigrid::new(global_matrix(m, p))
    }

    /// The hierarchy of a symmetric positive definite matrix `a0` (rows with no diagonal entry are
    /// eliminated rows: the V-cycle returns 0 there).
    pub fn new(a0: Csr) -> Result<Self> {
        Multigrid::build(a0, MAX_LEVELS)
    }

    /// [`Multigrid::new`] with at most `max_levels` levels.
    pub(crate) fn build(a0: Csr, max_levels: usize) -> Result<Self> {
        let mut levels = Vec::new();
        let mut a = a0;
        loop {
            let (wdinv, live) = smoothing(&a);
            let next = if a.rows() <= COARSE_ROWS || levels.len() + 1 >= max_levels { None } else { coarsen(&a, &wdinv, live) };
            match next {
                Some((p, r, coarse)) => {
                    levels.push(Level { a, wdinv, p, r });
                    a = coarse;
                }
                None => {
                    levels.push(Level { a, wdinv, ..Default::default() });
                    break;
                }
            }
        }
        let coarse_inv = coarse_inverse(&levels.last().expect("one level at least").a)?;
        // the V-cycle's vectors are allocated by the first [`Multigrid::apply`]: a hierarchy uploaded to
        // the GPU never needs them
        Ok(Multigrid { levels, coarse_inv, work: Vec::new() })
    }

    /// Rows per level.
    pub fn sizes(&self) -> Vec<usize> {
        self.levels.iter().map(|l| l.a.rows()).collect()
    }

    /// Operator complexity: stored entries of all levels' matrices over those of level 0.
    pub fn complexity(&self) -> f64 {
        let total: usize = self.levels.iter().map(|l| l.a.nnz()).sum();
        total as f64 / self.levels[0].a.nnz().max(1) as f64
    }

    /// Frees the V-cycle's vectors (the next [`Multigrid::apply`] allocates them again).
    pub fn release_work(&mut self) {
        self.work = Vec::new();
    }

    /// z = B r, one V(1,1)-cycle (see the module doc); z is 0 on eliminated rows. Each level's result is
    /// left in its x; t is the residual going down and x + P z_{l+1} coming up.
    pub fn apply(&mut self, r: &[V3], z: &mut [V3]) {
        self.begin()[0][0].copy_from_slice(r);
        self.cycle();
        z.copy_from_slice(&self.work[0][1]);
    }

    /// [`Multigrid::apply`] in place: `rz` holds r, then z = B r (the same bits).
    pub fn apply_in_place(&mut self, rz: &mut [V3]) {
        self.begin()[0][0].copy_from_slice(rz);
        self.cycle();
        rz.copy_from_slice(&self.work[0][1]);
    }

    /// The V-cycle's vectors, allocated once.
    fn begin(&mut self) -> &mut [[Vec<V3>; 3]] {
        if self.work.len() != self.levels.len() {
            self.work = self.levels.iter().map(|l| [0, 1, 2].map(|_| vec![V3::zeros(); l.a.rows()])).collect();
        }
        &mut self.work
    }

    /// The V-cycle from level 0's b (`work[0][0]`) to its z (`work[0][1]`).
    fn cycle(&mut self) {
        let nl = self.levels.len();
        for l in 0..nl - 1 {
            let lv = &self.levels[l];
            let (fine, coarse) = self.work.split_at_mut(l + 1);
            let [b, x, t] = &mut fine[l];
            // down: x = ωD⁻¹b, t = b − A x (the neighbours' x formed on the fly)
            let (a, wdinv, b) = (lv.a.rows_view(), &lv.wdinv[..], &b[..]);
            // mg_down's two outputs in two passes (x = ωD⁻¹b is its first, formed here without the gather)
            for_each_particle(x, |i| b[i] * wdinv[i]);
            for_each_particle(t, |i| kernel::mg_down(i, a, wdinv, b).1);
            // restrict: b_{l+1} = R t
            let (r, t) = (lv.r.rows_view(), &*t);
            for_each_particle(&mut coarse[0][0], |c| kernel::mg_restrict(c, r, t));
        }
        {
            // the last level: x = A⁻¹ b
            let inv = &self.coarse_inv;
            let [b, x, _] = &mut self.work[nl - 1];
            let b = &*b;
            let inv = inv.rows_view();
            for_each_particle(x, |i| kernel::mg_coarse(i, inv, b).0);
        }
        for l in (0..nl - 1).rev() {
            let lv = &self.levels[l];
            let (fine, coarse) = self.work.split_at_mut(l + 1);
            let zc = &coarse[0][1];
            let [b, x, t] = &mut fine[l];
            // up: t = x + P z_{l+1}
            let (p, x_now) = (lv.p.rows_view(), &*x);
            for_each_particle(t, |i| kernel::mg_up(i, p, x_now, zc));
            // post: x = t + ωD⁻¹(b − A t)
            let (a, wdinv, b, t) = (lv.a.rows_view(), &lv.wdinv[..], &*b, &*t);
            for_each_particle(x, |i| kernel::mg_post(i, a, wdinv, b, t).0);
        }
    }
}
