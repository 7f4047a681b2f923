//! The smoothed-aggregation multigrid V(1,1)-cycle (Vaněk, Mandel & Brezina 1996) that preconditions the
//! `cg` global step of Liu's method, in f64: one function per kernel of `shaders/multigrid.wgsl`
//! (`mg_down`, `mg_restrict`, `mg_coarse`, `mg_up`, `mg_post`), per row of a level.
//!
//! On level l with right-hand side b (b₀ = r) and smoothing weights ωD⁻¹ (`wdinv`, ω = 4/(3ρ(D⁻¹A))):
//! down x = ωD⁻¹b (a Jacobi sweep from 0) and t = b − A x; restrict b_{l+1} = R t; on the last level
//! x = A⁻¹b; up t = x + P z_{l+1}; post z_l = t + ωD⁻¹(b − A t). The hierarchy (A, P = (I − ωD⁻¹A)P̂,
//! R = Pᵀ, the coarsest inverse) is built in [`crate::linalg::multigrid`]; the kernels read its
//! matrices in compressed rows, as the GPU does, through [`CsrRows`].

use super::model::V3;

/// A sparse matrix in compressed rows as the kernels read it: `ptr` (rows + 1 offsets), the column and
/// the value of each entry (columns sorted within a row).
#[derive(Clone, Copy, Debug)]
pub struct CsrRows<'a> {
    /// `rows + 1` offsets into `col` and `val`.
    pub ptr: &'a [u32],
    /// Column of each entry.
    pub col: &'a [u32],
    /// Value of each entry.
    pub val: &'a [f64],
}

impl CsrRows<'_> {
    /// Σⱼ a_ij xⱼ over row `i`'s entries, in column order (the WGSL `row_dot`).
    pub fn row_dot(&self, i: usize, x: &[V3]) -> V3 {
        entries_dot(self.entries(i), x)
    }

    /// Row `i`'s entries (column, value) in column order.
    #[inline]
    pub fn entries(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        (self.ptr[i] as usize..self.ptr[i + 1] as usize).map(|e| (self.col[e] as usize, self.val[e]))
    }
}

/// Σⱼ a_ij xⱼ over a row's `entries` (column, value), in their order: [`CsrRows::row_dot`] of a row
/// stored or formed when read.
#[inline]
pub fn entries_dot(entries: impl IntoIterator<Item = (usize, f64)>, x: &[V3]) -> V3 {
    let mut s = V3::zeros();
    for (j, v) in entries {
        s += x[j] * v;
    }
    s
}

/// `mg_down`: the downward smoothing of row `i`: returns (xᵢ, tᵢ) with x = ωD⁻¹b and t = b − A x, the
/// neighbours' xⱼ = ωD⁻¹ⱼ bⱼ formed on the fly.
pub fn mg_down(i: usize, a: CsrRows<'_>, wdinv: &[f64], b: &[V3]) -> (V3, V3) {
    mg_down_row(i, a.entries(i), wdinv, b)
}

/// [`mg_down`] with row `i`'s entries (column, value) given in column order.
#[inline]
pub fn mg_down_row(i: usize, entries: impl IntoIterator<Item = (usize, f64)>, wdinv: &[f64], b: &[V3]) -> (V3, V3) {
    let mut t = b[i];
    for (j, v) in entries {
        t -= b[j] * (v * wdinv[j]);
    }
    (b[i] * wdinv[i], t)
}

/// `mg_restrict`: row `c` of the next level's right-hand side, b_{l+1} = R t.
pub fn mg_restrict(c: usize, r: CsrRows<'_>, t: &[V3]) -> V3 {
    r.row_dot(c, t)
}

/// `mg_coarse`: the last level's row `i`, x = A⁻¹b by the stored inverse (dense over the live rows).
/// Returns (xᵢ, bᵢ·xᵢ), the second the row's term of r·z when the hierarchy has one level.
pub fn mg_coarse(i: usize, inverse: CsrRows<'_>, b: &[V3]) -> (V3, f64) {
    let x = inverse.row_dot(i, b);
    (x, b[i].dot(&x))
}

/// `mg_up`: the coarse correction of row `i`, t = x + P z_{l+1}.
pub fn mg_up(i: usize, p: CsrRows<'_>, x: &[V3], z_coarse: &[V3]) -> V3 {
    x[i] + p.row_dot(i, z_coarse)
}

/// `mg_post`: the upward smoothing of row `i`, z = t + ωD⁻¹(b − A t). Returns (zᵢ, bᵢ·zᵢ), the second the
/// row's term of r·z on level 0 (the GPU sums it into the PCG's partials).
pub fn mg_post(i: usize, a: CsrRows<'_>, wdinv: &[f64], b: &[V3], t: &[V3]) -> (V3, f64) {
    mg_post_row(i, a.entries(i), wdinv[i], b[i], t)
}

/// [`mg_post`] with row `i`'s entries (column, value) given in column order, its ωD⁻¹ᵢ and bᵢ.
#[inline]
pub fn mg_post_row(i: usize, entries: impl IntoIterator<Item = (usize, f64)>, wdinv_i: f64, b_i: V3, t: &[V3]) -> (V3, f64) {
    let z = t[i] + (b_i - entries_dot(entries, t)) * wdinv_i;
    (z, b_i.dot(&z))
}
