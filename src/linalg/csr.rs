//! The compressed-row matrix of the multigrid hierarchies ([`Csr`]): built row by row, read a row at a
//! time (the aggregation, the Galerkin product) and applied by the V-cycle.

use crate::reference::model::V3;
use crate::reference::multigrid::CsrRows;

/// A sparse matrix in compressed rows (columns sorted within each row).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Csr {
    /// Columns.
    pub cols: usize,
    /// `rows + 1` offsets into `col` and `val`.
    pub ptr: Vec<u32>,
    /// Column of each entry.
    pub col: Vec<u32>,
    /// Value of each entry.
    pub val: Vec<f64>,
}

impl Csr {
    /// Rows.
    pub fn rows(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.col.len()
    }

    /// The entries of row i.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let r = self.ptr[i] as usize..self.ptr[i + 1] as usize;
        self.col[r.clone()].iter().zip(&self.val[r]).map(|(&c, &v)| (c as usize, v))
    }

    /// Σ_j a_ij x_j ([`CsrRows::row_dot`]).
    #[inline]
    pub fn row_dot(&self, i: usize, x: &[V3]) -> V3 {
        self.rows_view().row_dot(i, x)
    }

    /// The matrix as the reference kernels read it.
    pub fn rows_view(&self) -> CsrRows<'_> {
        CsrRows { ptr: &self.ptr, col: &self.col, val: &self.val }
    }

    /// The diagonal (0 where a row has no diagonal entry).
    pub fn diag(&self) -> Vec<f64> {
        (0..self.rows()).map(|i| self.row(i).find(|&(j, _)| j == i).map_or(0.0, |(_, v)| v)).collect()
    }

    /// Builds a matrix from rows of (column, value) pairs: sorted, duplicates summed.
    pub fn from_rows(cols: usize, rows: impl IntoIterator<Item = Vec<(u32, f64)>>) -> Csr {
        let mut m = Csr { cols, ptr: vec![0], ..Default::default() };
        for mut r in rows {
            merge_row(&mut r);
            m.col.extend(r.iter().map(|e| e.0));
            m.val.extend(r.iter().map(|e| e.1));
            m.ptr.push(m.col.len() as u32);
        }
        // the rows come one at a time (no host copy of them all): the arrays grew by doubling
        m.col.shrink_to_fit();
        m.val.shrink_to_fit();
        m
    }

    /// The transpose.
    pub fn transpose(&self) -> Csr {
        let mut count = vec![0u32; self.cols + 1];
        for &c in &self.col {
            count[c as usize + 1] += 1;
        }
        for c in 0..self.cols {
            count[c + 1] += count[c];
        }
        let mut next = count.clone();
        let mut col = vec![0u32; self.nnz()];
        let mut val = vec![0.0; self.nnz()];
        for i in 0..self.rows() {
            for (j, v) in self.row(i) {
                let k = next[j] as usize;
                col[k] = i as u32;
                val[k] = v;
                next[j] += 1;
            }
        }
        Csr { cols: self.rows(), ptr: count, col, val }
    }

    /// The product self · b (Gustavson's row-by-row algorithm; columns sorted).
    pub fn matmul(&self, b: &Csr) -> Csr {
        let mut acc = vec![0.0; b.cols];
        let mut seen = vec![u32::MAX; b.cols];
        let mut cols: Vec<u32> = Vec::new();
        let rows = (0..self.rows()).map(|i| {
            cols.clear();
            for (k, a) in self.row(i) {
                for (j, v) in b.row(k) {
                    if seen[j] != i as u32 {
                        seen[j] = i as u32;
                        acc[j] = 0.0;
                        cols.push(j as u32);
                    }
                    acc[j] += a * v;
                }
            }
            cols.iter().map(|&j| (j, acc[j as usize])).collect::<Vec<_>>()
        });
        // row by row: one row's entries at a time besides the product
        Csr::from_rows(b.cols, rows)
    }
}

/// Sorts a row's entries by column (stable) and sums those of one column in their order: the row as
/// [`Csr::from_rows`] stores it.
pub fn merge_row(row: &mut Vec<(u32, f64)>) {
    row.sort_by_key(|e| e.0);
    let mut kept = 0usize;
    for k in 0..row.len() {
        let (c, v) = row[k];
        if kept > 0 && row[kept - 1].0 == c {
            row[kept - 1].1 += v;
        } else {
            row[kept] = (c, v);
            kept += 1;
        }
    }
    row.truncate(kept);
}
