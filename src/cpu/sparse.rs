//! A symmetric positive definite sparse matrix with a fixed pattern and its Cholesky factor (faer):
//! the pattern's symbolic analysis (AMD ordering, elimination tree, supernodes) is done once, the numeric
//! factorisation whenever the values change, and every piece of working memory is allocated once.
//!
//! Used by Liu's global step (the m×m matrix M̃ + h²L), by Newton's method (the 3m×3m Hessian) and by the
//! direct check of the implicit Euler system.

use crate::error::{Error, Result};
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
    /// The factor L by supernodes, copied out of faer after each factorisation for the interleaved
    /// three-column solve: per supernode (first column, columns, pattern range in `l_row`, offset of its
    /// column-major (columns + pattern) × columns block in `l_val`).
    l_sn: Vec<[u32; 5]>,
    l_row: Vec<u32>,
    l_val: Vec<f64>,
    perm_fwd: Vec<u32>,
    work3: Vec<[f64; 3]>,
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
        let idx: Vec<Pair<usize, usize>> = pairs.iter().map(|&(r, c)| Pair { row: r.max(c), col: r.min(c) }).collect();
        let (sym, argsort) = SymbolicSparseColMat::try_new_from_indices(n, n, &idx)
            .map_err(|e| Error::Solver(format!("{what}: could not build the sparse pattern: {e:?}")))?;
        let symbolic = factorize_symbolic_cholesky(sym.as_ref(), Side::Lower, Default::default(), Default::default())
            .map_err(|e| Error::Solver(format!("{what}: symbolic Cholesky failed: {e:?}")))?;
        let zeros = vec![0.0; pairs.len()];
        let matrix = SparseColMat::new_from_argsort(sym.clone(), &argsort, &zeros)
            .map_err(|e| Error::Solver(format!("{what}: could not fill the sparse matrix: {e:?}")))?;
        // two threads pay off for the numeric factorisation of large matrices only
        let par = if n >= 20_000 { Par::rayon(0) } else { Par::Seq };
        let req = StackReq::any_of(&[
            symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(rhs_cols.max(1), Par::Seq),
        ]);
        let mem = MemBuffer::try_new(req).map_err(|_| Error::Solver(format!("{what}: out of memory for the Cholesky workspace")))?;
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
            l_sn: Vec::new(),
            l_row: Vec::new(),
            l_val: Vec::new(),
            perm_fwd: Vec::new(),
            work3: Vec::new(),
        })
    }

    /// The dimension n.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Whether faer chose a supernodal factor (the interleaved three-column solve runs on it; a
    /// simplicial factor falls back to faer's own solve).
    pub fn is_supernodal(&self) -> bool {
        !self.l_sn.is_empty()
    }

    /// Nonzeros of the factor L.
    pub fn factor_nnz(&self) -> usize {
        self.l_values.len()
    }

    /// The numeric factorisation for `values`, one per pair given to [`SpdFactor::new`] and in that
    /// order. A matrix that is not numerically positive definite (a zero mass, a negative stiffness) is
    /// an [`Error::Solver`] naming the pivot's row (in the matrix's own numbering) and `what`.
    pub fn factor(&mut self, values: &[f64], what: &str) -> Result<()> {
        self.factored = false;
        if values.len() != self.entries {
            return Err(Error::param("values.len()", values.len(), format!("must equal the pattern's {} entries", self.entries)));
        }
        self.matrix = SparseColMat::new_from_argsort(self.pattern.clone(), &self.argsort, values)
            .map_err(|e| Error::Solver(format!("{what}: {e:?}")))?;
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
                Err(Error::Solver(format!(
                    "{what} is not positive definite: the Cholesky factorisation (faer) met a non-positive pivot at row {row} \
                     (a zero or negative mass, or a negative stiffness, does this)"
                )))
            }
        }
    }

    /// Copies L out of faer's supernodal storage into plain CSC (once per factorisation, O(nnz)).
    fn copy_factor(&mut self) {
        use faer::sparse::linalg::cholesky::supernodal::SupernodalLltRef;
        use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
        self.l_sn.clear();
        self.l_row.clear();
        self.l_val.clear();
        let SymbolicCholeskyRaw::Supernodal(sym) = self.symbolic.raw() else {
            return;
        };
        let n = self.n;
        self.perm_fwd = match self.symbolic.perm() {
            Some(p) => p.arrays().0.iter().map(|&i| i as u32).collect(),
            None => (0..n as u32).collect(),
        };
        let l = SupernodalLltRef::new(sym, &self.l_values);
        for s in 0..sym.n_supernodes() {
            let sn = l.supernode(s);
            let val = sn.val();
            let (ncols, nrows) = (val.ncols(), val.nrows());
            let p0 = self.l_row.len() as u32;
            self.l_row.extend(sn.pattern().iter().map(|&r| r as u32));
            self.l_sn.push([sn.start() as u32, ncols as u32, p0, self.l_row.len() as u32, self.l_val.len() as u32]);
            for c in 0..ncols {
                for r in 0..nrows {
                    self.l_val.push(val[(r, c)]);
                }
            }
        }
        self.work3 = vec![[0.0; 3]; n];
    }

    /// Solves A X = B for three right-hand sides stored interleaved (one `[x, y, z]` per row): the forward
    /// and backward substitutions walk L once each and update the three columns together, which is much
    /// faster than the general solve for this shape (Liu's global step, (m×m) ⊗ I₃).
    pub fn solve3_in_place(&mut self, b: &mut [[f64; 3]]) -> Result<()> {
        if !self.factored {
            return Err(Error::Solver("the Cholesky factor is not available (the last factorisation failed)".into()));
        }
        if b.len() != self.n {
            return Err(Error::param("rhs.len()", b.len(), format!("must equal the matrix dimension {}", self.n)));
        }
        if self.l_sn.is_empty() {
            // a simplicial factor (small matrices): faer's own solve
            let mut m = faer::Mat::<f64>::from_fn(self.n, 3, |i, c| b[i][c]);
            self.solve_in_place(m.as_mut())?;
            for (i, r) in b.iter_mut().enumerate() {
                *r = [m[(i, 0)], m[(i, 1)], m[(i, 2)]];
            }
            return Ok(());
        }
        let x = &mut self.work3;
        for (i, &f) in self.perm_fwd.iter().enumerate() {
            x[i] = b[f as usize];
        }
        let (row, val) = (&self.l_row, &self.l_val);
        // L y = b, supernode by supernode: the diagonal block, then the pattern rows below it
        for &[start, nc, p0, p1, off] in &self.l_sn {
            let (start, nc, off) = (start as usize, nc as usize, off as usize);
            let pat = &row[p0 as usize..p1 as usize];
            let nr = nc + pat.len();
            for c in 0..nc {
                let col = &val[off + c * nr..off + (c + 1) * nr];
                let j = start + c;
                let d = 1.0 / col[c];
                let xj = [x[j][0] * d, x[j][1] * d, x[j][2] * d];
                x[j] = xj;
                for r in c + 1..nc {
                    let (l, xi) = (col[r], &mut x[start + r]);
                    xi[0] -= l * xj[0];
                    xi[1] -= l * xj[1];
                    xi[2] -= l * xj[2];
                }
                for (&i, &l) in pat.iter().zip(&col[nc..]) {
                    let xi = &mut x[i as usize];
                    xi[0] -= l * xj[0];
                    xi[1] -= l * xj[1];
                    xi[2] -= l * xj[2];
                }
            }
        }
        // Lᵀ x = y, in reverse
        for &[start, nc, p0, p1, off] in self.l_sn.iter().rev() {
            let (start, nc, off) = (start as usize, nc as usize, off as usize);
            let pat = &row[p0 as usize..p1 as usize];
            let nr = nc + pat.len();
            for c in (0..nc).rev() {
                let col = &val[off + c * nr..off + (c + 1) * nr];
                let j = start + c;
                let mut s = x[j];
                for r in c + 1..nc {
                    let (l, xi) = (col[r], x[start + r]);
                    s[0] -= l * xi[0];
                    s[1] -= l * xi[1];
                    s[2] -= l * xi[2];
                }
                for (&i, &l) in pat.iter().zip(&col[nc..]) {
                    let xi = x[i as usize];
                    s[0] -= l * xi[0];
                    s[1] -= l * xi[1];
                    s[2] -= l * xi[2];
                }
                let d = 1.0 / col[c];
                x[j] = [s[0] * d, s[1] * d, s[2] * d];
            }
        }
        for (i, &f) in self.perm_fwd.iter().enumerate() {
            b[f as usize] = x[i];
        }
        Ok(())
    }

    /// Solves A X = B in place for the n×k matrix `rhs` (after a successful [`SpdFactor::factor`]).
    pub fn solve_in_place(&mut self, rhs: MatMut<'_, f64>) -> Result<()> {
        if !self.factored {
            return Err(Error::Solver("the Cholesky factor is not available (the last factorisation failed)".into()));
        }
        let stack = MemStack::new(&mut self.mem);
        LltRef::new(&self.symbolic, &self.l_values).solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack);
        Ok(())
    }
}
