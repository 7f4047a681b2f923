//! A symmetric positive definite sparse matrix with a fixed pattern and its Cholesky factor (faer):
//! the pattern's symbolic analysis (the better of AMD and nested dissection, elimination tree,
//! supernodes) is done once, the numeric
//! factorisation whenever the values change, and every piece of working memory is allocated once.
//!
//! Used by Liu's global step (the m×m matrix M̃ + h²L), by Newton's method (the 3m×3m Hessian) and by the
//! direct check of the implicit Euler system.

use super::supernodal::{Factor3, SolvePlan};
use crate::error::{Bound, Error, Result};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::{LltError, LltRegularization};
use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, LltRef, SymbolicCholesky};
use faer::sparse::{Argsort, Pair, SparseColMat, SymbolicSparseColMat};
use faer::{Conj, MatMut, Par, Side};

/// An n×n SPD matrix given by the lower-triangle entries of a fixed list of (row, col) pairs (duplicates
/// are summed), and its LLᵀ factor.
pub struct SpdFactor {
    n: usize,
    argsort: Argsort<usize>,
    pattern: SymbolicSparseColMat<usize>,
    matrix: SparseColMat<usize, f64>,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    mem: MemBuffer,
    par: Par,
    factored: bool,
    /// The number of (row, col) pairs of the pattern (values per factorisation).
    entries: usize,
    /// Whether the factor is laid out for the interleaved three-column solve (made with 3 right-hand
    /// side columns and supernodal): then after each factorisation `l_values` is rearranged in place,
    /// supernode by supernode, and faer's own solve no longer reads it (see [`SpdFactor::solve_in_place`]).
    three: bool,
    /// The supernodes of L for that solve: per supernode (first column, columns, pattern range in
    /// `l_row`, offset of its block in `l_values`: the columns × columns diagonal block column-major, then
    /// the pattern × columns rectangle below it row-major). Built once, from the symbolic analysis.
    l_sn: Vec<[u32; 5]>,
    l_row: Vec<u32>,
    /// Scratch for the rearrangement: the largest supernode block.
    l_tmp: Vec<f64>,
    perm_fwd: Vec<u32>,
    work: Vec<[f64; 4]>,
    /// How the three-column solve splits over two threads (built with the supernodes).
    plan: SolvePlan<f64>,
    /// The single-precision copy of the rearranged factor, its work rows and plan, when the three-column
    /// solve runs in f32 ([`SpdFactor::set_single_precision`]); empty otherwise.
    l_values32: Vec<f32>,
    work32: Vec<[f32; 4]>,
    plan32: SolvePlan<f32>,
    single: bool,
}

impl std::fmt::Debug for SpdFactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpdFactor").field("n", &self.n).field("l_nnz", &self.l_values.len()).finish()
    }
}

impl SpdFactor {
    /// The symbolic analysis of the pattern `pairs` (row ≥ col: the lower triangle) for `rhs_cols`
    /// right-hand-side columns. `what` names the matrix in errors.
    pub fn new(n: usize, pairs: &[(usize, usize)], rhs_cols: usize, what: &str) -> Result<Self> {
        Self::with_ordering(n, pairs, rhs_cols, what, FillOrdering::Best)
    }

    /// [`SpdFactor::new`] with the fill-reducing ordering `ordering`.
    pub fn with_ordering(n: usize, pairs: &[(usize, usize)], rhs_cols: usize, what: &str, ordering: FillOrdering) -> Result<Self> {
        let idx: Vec<Pair<usize, usize>> = pairs.iter().map(|&(r, c)| Pair { row: r.max(c), col: r.min(c) }).collect();
        let (sym, argsort) = SymbolicSparseColMat::try_new_from_indices(n, n, &idx)
            .map_err(|e| Error::Factorization { what: what.to_string(), detail: format!("could not build the sparse pattern: {e:?}") })?;
        let symbolic = symbolic_ordered(n, sym.as_ref(), &idx, what, ordering)?;
        // the factor (f64, and the f32 copy of the single-precision solve) is known only now: checked
        // before it is allocated
        crate::memory::check(&format!("{what}'s Cholesky factor ({} nonzeros)", symbolic.len_val()), symbolic.len_val() as u64 * 12)?;
        let zeros = vec![0.0; pairs.len()];
        let matrix = SparseColMat::new_from_argsort(sym.clone(), &argsort, &zeros)
            .map_err(|e| Error::Factorization { what: what.to_string(), detail: format!("could not fill the sparse matrix: {e:?}") })?;
        // two threads pay off for the numeric factorisation of large matrices only (none in a browser)
        #[cfg(not(target_arch = "wasm32"))]
        let par = if n >= 20_000 { Par::rayon(0) } else { Par::Seq };
        #[cfg(target_arch = "wasm32")]
        let par = Par::Seq;
        let req = StackReq::any_of(&[
            symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(rhs_cols.max(1), Par::Seq),
        ]);
        let mem = MemBuffer::try_new(req)
            .map_err(|_| Error::Factorization { what: what.to_string(), detail: "out of memory for the Cholesky workspace".into() })?;
        let l_values = vec![0.0; symbolic.len_val()];
        Ok(SpdFactor {
            n,
            argsort,
            pattern: sym,
            matrix,
            symbolic,
            l_values,
            mem,
            par,
            factored: false,
            entries: pairs.len(),
            three: rhs_cols == 3,
            l_sn: Vec::new(),
            l_row: Vec::new(),
            l_tmp: Vec::new(),
            perm_fwd: Vec::new(),
            work: Vec::new(),
            plan: SolvePlan::default(),
            l_values32: Vec::new(),
            work32: Vec::new(),
            plan32: SolvePlan::default(),
            single: false,
        })
    }

    /// The dimension n.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Whether the interleaved three-column solve runs on this factor: made for three right-hand-side
    /// columns, and faer chose a supernodal factor (a simplicial one falls back to faer's own solve).
    pub fn is_supernodal(&self) -> bool {
        !self.l_sn.is_empty()
    }

    /// Nonzeros of the factor L.
    pub fn factor_nnz(&self) -> usize {
        self.l_values.len()
    }

    /// The numeric factorisation for `values`, one per pair given to [`SpdFactor::new`] and in that
    /// order. A matrix that is not numerically positive definite (a zero mass, a negative stiffness) is
    /// an [`Error::NotPositiveDefinite`] naming the pivot's row (in the matrix's own numbering) and `what`.
    pub fn factor(&mut self, values: &[f64], what: &str) -> Result<()> {
        self.factored = false;
        if values.len() != self.entries {
            return Err(Error::invalid("values.len()", values.len(), Bound::length(self.entries, "must equal the pattern's {} entries")));
        }
        self.matrix = SparseColMat::new_from_argsort(self.pattern.clone(), &self.argsort, values)
            .map_err(|e| Error::Factorization { what: what.to_string(), detail: format!("{e:?}") })?;
        let stack = MemStack::new(&mut self.mem);
        let r = self.symbolic.factorize_numeric_llt::<f64>(
            &mut self.l_values,
            self.matrix.as_ref(),
            Side::Lower,
            LltRegularization::default(),
            self.par,
            stack,
            Default::default(),
        );
        match r {
            Ok(_) => {
                self.factored = true;
                self.copy_factor();
                Ok(())
            }
            Err(LltError::NonPositivePivot { index }) => {
                let row = self.symbolic.perm().and_then(|p| p.arrays().0.get(index).copied()).unwrap_or(index);
                Err(Error::NotPositiveDefinite {
                    what: what.to_string(),
                    pivot_row: Some(row),
                    hint: "a zero or negative mass, or a negative stiffness, does this",
                })
            }
        }
    }

    /// For three-column factors: rearranges each supernode's block of L in place, from faer's column-major
    /// layout to the diagonal block column-major and the rectangle below it row-major (O(nnz), once per
    /// factorisation; no second copy of L, whose first touch alone cost 3.5 ms of a 20 ms prefactor on the
    /// CI VM). The supernodes and the permutation are built the first time only.
    fn copy_factor(&mut self) {
        use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
        let SymbolicCholeskyRaw::Supernodal(sym) = self.symbolic.raw() else {
            return;
        };
        if !self.three {
            return;
        }
        let n = self.n;
        if self.l_sn.is_empty() {
            self.perm_fwd = match self.symbolic.perm() {
                Some(p) => p.arrays().0.iter().map(|&i| i as u32).collect(),
                None => (0..n as u32).collect(),
            };
            let mut off = 0usize;
            for s in 0..sym.n_supernodes() {
                let sn = sym.supernode(s);
                let ncols = sym.supernode_end()[s] - sym.supernode_begin()[s];
                let nrows = ncols + sn.pattern().len();
                debug_assert_eq!(off, sym.col_ptr_for_val()[s]);
                let p0 = self.l_row.len() as u32;
                self.l_row.extend(sn.pattern().iter().map(|&r| r as u32));
                self.l_sn.push([sn.start() as u32, ncols as u32, p0, self.l_row.len() as u32, off as u32]);
                off += nrows * ncols;
            }
            debug_assert_eq!(off, self.l_values.len());
            let largest = self.l_sn.iter().map(|s| (s[1] as usize) * (s[1] + s[3] - s[2]) as usize).max().unwrap_or(0);
            self.l_tmp = vec![0.0; largest];
            self.work = vec![[0.0; 4]; n];
            self.plan = SolvePlan::new(n, &self.l_sn, &self.l_row);
        }
        for sn in &self.l_sn {
            let ncols = sn[1] as usize;
            let nrows = ncols + (sn[3] - sn[2]) as usize;
            let block = &mut self.l_values[sn[4] as usize..][..nrows * ncols];
            let tmp = &mut self.l_tmp[..nrows * ncols];
            tmp.copy_from_slice(block);
            let (diag, rect) = block.split_at_mut(ncols * ncols);
            for c in 0..ncols {
                let col = &tmp[c * nrows..(c + 1) * nrows];
                diag[c * ncols..(c + 1) * ncols].copy_from_slice(&col[..ncols]);
                for (r, &x) in col[ncols..].iter().enumerate() {
                    rect[r * ncols + c] = x;
                }
            }
        }
        self.round_factor();
    }

    /// Solves A X = B for three right-hand sides stored interleaved (one `[x, y, z]` per row): the forward
    /// and backward substitutions walk L once each and update the three columns together (four lanes,
    /// one of them padding, which the compiler vectorises), which is much faster than the general solve
    /// for this shape (Liu's global step, (m×m) ⊗ I₃). Independent subtrees of the elimination tree run
    /// on two threads, with the same result bit for bit (see `linalg/supernodal.rs`).
    pub fn solve3_in_place(&mut self, b: &mut [[f64; 3]]) -> Result<()> {
        if b.len() != self.n {
            return Err(Error::invalid("rhs.len()", b.len(), Bound::length(self.n, "must equal the matrix dimension {}")));
        }
        // one copy of B (O(n), against the O(nnz(L)) solve); `solve3_with` needs none
        let src = b.to_vec();
        self.solve3_with(|i| src[i], |i, x| b[i] = x)
    }

    /// Whether the three-column solve ([`SpdFactor::solve3_with`]) runs in single precision: on an f32
    /// copy of the factor, rounded once per factorisation, with f32 work rows (half the bytes read per
    /// solve). Meant for the correction form A δ = r with the residual r formed in f64, where δ's
    /// relative error of about 1e-7 is far below the outer iteration's (issue #15). Factors that are not
    /// supernodal three-column ones keep faer's f64 solve.
    pub fn set_single_precision(&mut self, on: bool) {
        self.single = on;
        self.round_factor();
    }

    /// Whether the three-column solve runs in single precision: asked for, and the factor is a
    /// supernodal three-column one (a small, simplicial factor keeps faer's f64 solve).
    pub fn single_precision(&self) -> bool {
        self.single && !self.l_sn.is_empty() && self.l_values32.len() == self.l_values.len()
    }

    /// The f32 copy of the rearranged factor, when single precision is on (and its plan, the first time).
    fn round_factor(&mut self) {
        if !self.single || self.l_sn.is_empty() {
            self.l_values32 = Vec::new();
            return;
        }
        if self.work32.len() != self.n {
            self.work32 = vec![[0.0; 4]; self.n];
            self.plan32 = SolvePlan::new(self.n, &self.l_sn, &self.l_row);
        }
        self.l_values32.clear();
        self.l_values32.extend(self.l_values.iter().map(|&v| v as f32));
    }

    /// [`SpdFactor::solve3_in_place`] reading B's rows from `rhs(row)` and handing X's rows to
    /// `out(row, x)`, so that the caller's own layout (a subset of particles, say) needs no copies.
    pub fn solve3_with(&mut self, rhs: impl Fn(usize) -> [f64; 3], mut out: impl FnMut(usize, [f64; 3])) -> Result<()> {
        if !self.factored {
            return Err(Error::NoFactor);
        }
        if self.l_sn.is_empty() {
            // a simplicial factor (small matrices): faer's own solve
            let mut m = faer::Mat::<f64>::from_fn(self.n, 3, |i, c| rhs(i)[c]);
            self.solve_in_place(m.as_mut())?;
            (0..self.n).for_each(|i| out(i, [m[(i, 0)], m[(i, 1)], m[(i, 2)]]));
            return Ok(());
        }
        if self.single && self.l_values32.len() == self.l_values.len() {
            for (x, &f) in self.work32.iter_mut().zip(&self.perm_fwd) {
                let v = rhs(f as usize);
                *x = [v[0] as f32, v[1] as f32, v[2] as f32, 0.0];
            }
            let f = Factor3 { sn: &self.l_sn, row: &self.l_row, val: &self.l_values32 };
            self.plan32.solve(&f, &mut self.work32);
            for (x, &f) in self.work32.iter().zip(&self.perm_fwd) {
                out(f as usize, [f64::from(x[0]), f64::from(x[1]), f64::from(x[2])]);
            }
            return Ok(());
        }
        for (x, &f) in self.work.iter_mut().zip(&self.perm_fwd) {
            let v = rhs(f as usize);
            *x = [v[0], v[1], v[2], 0.0];
        }
        let f = Factor3 { sn: &self.l_sn, row: &self.l_row, val: &self.l_values };
        self.plan.solve(&f, &mut self.work);
        for (x, &f) in self.work.iter().zip(&self.perm_fwd) {
            out(f as usize, [x[0], x[1], x[2]]);
        }
        Ok(())
    }

    /// Solves A X = B in place for the n×k matrix `rhs` (after a successful [`SpdFactor::factor`]): by
    /// faer's solve, or, on a factor laid out for three columns, by the three-column solve, three of B's
    /// columns at a time.
    pub fn solve_in_place(&mut self, mut rhs: MatMut<'_, f64>) -> Result<()> {
        if !self.factored {
            return Err(Error::NoFactor);
        }
        if rhs.nrows() != self.n {
            return Err(Error::invalid("rhs.nrows()", rhs.nrows(), Bound::length(self.n, "must equal the matrix dimension {}")));
        }
        if self.is_supernodal() {
            for c0 in (0..rhs.ncols()).step_by(3) {
                let cols = (rhs.ncols() - c0).min(3);
                let mut b: Vec<[f64; 3]> =
                    (0..self.n).map(|i| std::array::from_fn(|c| if c < cols { rhs[(i, c0 + c)] } else { 0.0 })).collect();
                self.solve3_in_place(&mut b)?;
                for (i, x) in b.iter().enumerate() {
                    for c in 0..cols {
                        rhs[(i, c0 + c)] = x[c];
                    }
                }
            }
            return Ok(());
        }
        let stack = MemStack::new(&mut self.mem);
        LltRef::new(&self.symbolic, &self.l_values).solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack);
        Ok(())
    }
}

/// The fill-reducing ordering of a [`SpdFactor`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FillOrdering {
    /// Both below, keeping the one with the smaller factor (the default).
    #[default]
    Best,
    /// faer's approximate minimum degree.
    Amd,
    /// This crate's nested dissection ([`super::ordering::nested_dissection`]).
    NestedDissection,
}

/// Below this dimension `Best` is AMD alone: on the 81×81 curtain (6,559 free particles) AMD has the
/// smaller factor (481,183 nonzeros against 522,295) and the second analysis would cost 8 ms of the
/// prefactorisation for nothing.
const ND_MIN: usize = 16_384;

/// The symbolic analysis with `ordering`. `Best` tries faer's AMD and this crate's nested dissection
/// and keeps the smaller factor (from [`ND_MIN`] unknowns up): on the 256×256 curtain nested dissection
/// has 7.06 M nonzeros against AMD's 7.85 M, and its numeric factorisation takes 255 ms against 332.
fn symbolic_ordered(
    n: usize,
    pattern: faer::sparse::SymbolicSparseColMatRef<'_, usize>,
    pairs: &[Pair<usize, usize>],
    what: &str,
    ordering: FillOrdering,
) -> Result<SymbolicCholesky<usize>> {
    use faer::sparse::linalg::cholesky::SymmetricOrdering;
    let err = |e| Error::Factorization { what: what.to_string(), detail: format!("symbolic Cholesky failed: {e:?}") };
    let amd = || factorize_symbolic_cholesky(pattern, Side::Lower, SymmetricOrdering::Amd, Default::default()).map_err(err);
    let nd = || {
        let edges: Vec<(usize, usize)> = pairs.iter().map(|p| (p.row, p.col)).collect();
        let fwd: Vec<usize> = super::ordering::nested_dissection(n, &edges).into_iter().map(|v| v as usize).collect();
        let mut inv = vec![0usize; n];
        for (k, &v) in fwd.iter().enumerate() {
            inv[v] = k;
        }
        let perm = faer::perm::PermRef::new_checked(&fwd, &inv, n);
        factorize_symbolic_cholesky(pattern, Side::Lower, SymmetricOrdering::Custom(perm), Default::default()).map_err(err)
    };
    match ordering {
        FillOrdering::Amd => amd(),
        FillOrdering::NestedDissection => nd(),
        FillOrdering::Best if n < ND_MIN => amd(),
        FillOrdering::Best => {
            let (a, d) = (amd()?, nd()?);
            Ok(if d.len_val() < a.len_val() { d } else { a })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::supernodal::PARALLEL_SOLVE_MIN;
    use super::*;

    /// A w×w grid with 4- and 8-neighbour couplings (a cloth's structural and shear springs) and a heavy
    /// diagonal: SPD.
    fn grid(w: usize) -> (usize, Vec<(usize, usize)>, Vec<f64>) {
        let n = w * w;
        let mut pairs: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
        let mut vals = vec![9.0; n];
        for i in 0..w {
            for j in 0..w {
                let v = i * w + j;
                for (di, dj) in [(0, 1), (1, 0), (1, 1), (1, usize::MAX)] {
                    let (a, b) = (i + di, j.wrapping_add(dj));
                    if a < w && b < w {
                        pairs.push((a * w + b, v));
                        vals.push(-1.0 - 0.001 * (v % 7) as f64);
                    }
                }
            }
        }
        (n, pairs, vals)
    }

    /// The interleaved three-column solve (serial for small n, on two threads above
    /// `PARALLEL_SOLVE_MIN`) against faer's general solve, with either ordering: to 1e-12 relative.
    #[test]
    fn three_column_solve_matches_faer() {
        for w in [20, 70] {
            let (n, pairs, vals) = grid(w);
            for ordering in [FillOrdering::Amd, FillOrdering::NestedDissection, FillOrdering::Best] {
                let mut f = SpdFactor::with_ordering(n, &pairs, 3, "test grid", ordering).unwrap();
                f.factor(&vals, "test grid").unwrap();
                // the reference: faer's general solve on a factor left in faer's layout (one column)
                let mut reference = SpdFactor::with_ordering(n, &pairs, 1, "test grid", ordering).unwrap();
                reference.factor(&vals, "test grid").unwrap();
                assert!(!reference.is_supernodal(), "a one-column factor keeps faer's layout");
                let mut b: Vec<[f64; 3]> = (0..n).map(|i| [(i % 13) as f64 - 6.0, 1.0, (i as f64).sin()]).collect();
                let mut m = faer::Mat::<f64>::from_fn(n, 3, |i, c| b[i][c]);
                reference.solve_in_place(m.as_mut()).unwrap();
                // factored twice: the rearrangement must start from faer's fresh layout each time
                f.factor(&vals, "test grid").unwrap();
                f.solve3_in_place(&mut b).unwrap();
                // and the general entry point on the rearranged factor (four columns: a chunk of three, one of one)
                let mut m4 = faer::Mat::<f64>::from_fn(n, 4, |i, c| if c < 3 { m[(i, c)] } else { 0.0 });
                for i in 0..n {
                    for c in 0..3 {
                        m4[(i, c)] = [(i % 13) as f64 - 6.0, 1.0, (i as f64).sin()][c];
                    }
                    m4[(i, 3)] = 1.0;
                }
                f.solve_in_place(m4.as_mut()).unwrap();
                let (mut diff, mut norm) = (0.0f64, 0.0f64);
                for i in 0..n {
                    for c in 0..3 {
                        diff = diff.max((b[i][c] - m[(i, c)]).abs());
                        norm = norm.max(m[(i, c)].abs());
                    }
                }
                assert!(diff <= 1e-12 * norm, "{w}×{w}, {ordering:?}: max difference {diff:e} (max |x| {norm:e})");
                let general =
                    (0..n).flat_map(|i| (0..3).map(move |c| (i, c))).map(|(i, c)| (m4[(i, c)] - m[(i, c)]).abs()).fold(0.0, f64::max);
                assert!(general <= 1e-12 * norm, "{w}×{w}, {ordering:?}: solve_in_place differs by {general:e}");
                assert!((0..n).all(|i| (m4[(i, 3)] - m4[(i, 1)]).abs() <= 1e-12 * norm), "the fourth column (all ones) equals the second");
                // the two-thread solve equals the one-thread solve bit for bit
                let rhs: Vec<[f64; 3]> = (0..n).map(|i| [(i % 13) as f64 - 6.0, 1.0, (i as f64).sin()]).collect();
                let mut split = rhs.clone();
                f.solve3_in_place(&mut split).unwrap();
                let parallel = f.plan.is_parallel();
                if n >= PARALLEL_SOLVE_MIN && f.is_supernodal() && rayon::current_num_threads() > 1 {
                    assert!(parallel, "{w}×{w}, {ordering:?}: the solve did not split over two threads");
                }
                f.plan = SolvePlan::with_threads(n, &f.l_sn, &f.l_row, 1);
                assert!(!f.plan.is_parallel() || !f.is_supernodal());
                let mut serial = rhs.clone();
                f.solve3_in_place(&mut serial).unwrap();
                let same = split.iter().flatten().zip(serial.iter().flatten()).all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{w}×{w}, {ordering:?} (split: {parallel}): the two-thread solve differs from the one-thread one");
            }
        }
    }

    /// Nested dissection beats AMD on the 256×256 curtain's pattern (structural, shear and bend
    /// springs; fewer nonzeros in L), and `Best` keeps the smaller of the two.
    #[test]
    fn nested_dissection_fill() {
        let model = crate::model::curtain(256, None).unwrap();
        let n = model.positions.len();
        let mut pairs: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
        pairs.extend(model.springs.iter().map(|s| (s.a as usize, s.b as usize)));
        let nnz = |o| SpdFactor::with_ordering(n, &pairs, 3, "curtain", o).unwrap().factor_nnz();
        let (amd, nd, best) = (nnz(FillOrdering::Amd), nnz(FillOrdering::NestedDissection), nnz(FillOrdering::Best));
        assert_eq!(best, amd.min(nd));
        assert!(nd < amd, "nested dissection {nd} vs AMD {amd} nonzeros on the 256×256 curtain");
    }
}
