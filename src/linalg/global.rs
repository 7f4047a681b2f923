//! The global matrix of Liu et al. 2013's local/global step (eq. 14), factored once by the sparse
//! Cholesky ([`super::sparse::SpdFactor`]): shared by the CPU engine and the GPU's `cholesky` global solve.

use super::sparse::SpdFactor;
use crate::error::Result;
use crate::reference::local_global::{entry_spring, LocalGlobalParams};
use crate::reference::model::{CpuModel, V3};

/// The global matrix A = M(1 + h d₀ + h² s) + h² L of the free particles (Liu eq. 14; pinned particles
/// eliminated), factored once by faer's sparse Cholesky in f64: m×m, solved for x, y and z as three
/// right-hand-side columns ((m×m) ⊗ I₃ needs no 3m×3m factor).
#[derive(Debug)]
pub struct GlobalCholesky {
    /// The row of each particle, `u32::MAX` when pinned.
    row: Vec<u32>,
    /// The particle of each row.
    free: Vec<u32>,
    /// The springs whose ends are both free (their entry follows the diagonal ones).
    coupled: Vec<u32>,
    factor: SpdFactor,
    values: Vec<f64>,
    /// The step h the factor is for.
    h: f64,
}

/// The elimination of pinned particles: the row of each particle in the free system (`u32::MAX` when
/// pinned) and the particle of each row.
#[allow(clippy::needless_range_loop)] // i indexes the particles and their rows
pub fn free_rows(m: &CpuModel) -> (Vec<u32>, Vec<u32>) {
    let mut row = vec![u32::MAX; m.n];
    let mut free = Vec::new();
    for i in 0..m.n {
        if m.inv_mass[i] != 0.0 {
            row[i] = free.len() as u32;
            free.push(i as u32);
        }
    }
    (row, free)
}

impl GlobalCholesky {
    /// The symbolic analysis of the pattern and the numeric factorisation at `p.h`.
    pub fn new(m: &CpuModel, p: &LocalGlobalParams) -> Result<Self> {
        let (row, free) = free_rows(m);
        let mut pairs: Vec<(usize, usize)> = (0..free.len()).map(|r| (r, r)).collect();
        let mut coupled = Vec::new();
        for s in 0..m.end_a.len() {
            let (ra, rb) = (row[m.end_a[s] as usize], row[m.end_b[s] as usize]);
            if ra != u32::MAX && rb != u32::MAX && ra != rb {
                coupled.push(s as u32);
                pairs.push((ra.max(rb) as usize, ra.min(rb) as usize));
            }
        }
        let factor = SpdFactor::new(free.len(), &pairs, 3, "the global matrix M + h²L")?;
        let mut c = GlobalCholesky { row, free, coupled, factor, values: vec![0.0; pairs.len()], h: f64::NAN };
        c.refactor(m, p)?;
        Ok(c)
    }

    /// The numeric factorisation for new values (h, masses or stiffnesses) on the same pattern.
    pub fn refactor(&mut self, m: &CpuModel, p: &LocalGlobalParams) -> Result<()> {
        let h2 = p.h * p.h;
        let nf = self.free.len();
        for (r, &i) in self.free.iter().enumerate() {
            let i = i as usize;
            let ksum: f64 = m.incidence.of(i).iter().map(|&e| m.k[entry_spring(e).0]).sum();
            self.values[r] = m.mass[i] * p.mass_diag + h2 * ksum;
        }
        for (c, &s) in self.coupled.iter().enumerate() {
            self.values[nf + c] = -h2 * m.k[s as usize];
        }
        self.h = f64::NAN;
        self.factor.factor(&self.values, "the global matrix M + h²L")?;
        self.h = p.h;
        Ok(())
    }

    /// The step the factor is for (NaN when the last factorisation failed).
    pub fn h(&self) -> f64 {
        self.h
    }

    /// Free particles (the matrix's dimension m).
    pub fn dim(&self) -> usize {
        self.free.len()
    }

    /// Whether the factor is supernodal (see [`SpdFactor::is_supernodal`]).
    pub fn is_supernodal(&self) -> bool {
        self.factor.is_supernodal()
    }

    /// Nonzeros of the Cholesky factor.
    pub fn factor_nnz(&self) -> usize {
        self.factor.factor_nnz()
    }

    /// Whether the solve runs on a single-precision copy of the factor ([`SpdFactor::set_single_precision`]).
    pub fn set_single_precision(&mut self, on: bool) {
        self.factor.set_single_precision(on);
    }

    /// Whether the solves run in single precision ([`SpdFactor::single_precision`]).
    pub fn single_precision(&self) -> bool {
        self.factor.single_precision()
    }

    /// The global step on corrections: δ = A⁻¹ r over the free particles (three columns), 0 on pinned ones.
    pub fn solve(&mut self, r: &[V3], delta: &mut [V3]) -> Result<()> {
        for (d, &k) in delta.iter_mut().zip(&self.row) {
            if k == u32::MAX {
                *d = V3::zeros();
            }
        }
        let free = &self.free;
        self.factor.solve3_with(
            |k| {
                let ri = r[free[k] as usize];
                [ri.x, ri.y, ri.z]
            },
            |k, x| delta[free[k] as usize] = V3::from(x),
        )
    }
}
