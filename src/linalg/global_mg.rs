//! The multigrid hierarchy of Liu's global matrix as the GPU uploads it: the hierarchy of
//! [`Multigrid::for_global`], bit for bit, without its finest matrix stored. That matrix (some 13
//! entries a particle on a cloth, 160 B a particle in f64) is the largest part of the hierarchy, and its
//! rows are cheap to form again from the model ([`GlobalRows`]); the build reads them row by row
//! ([`super::aggregation`]) and the upload writes them row by row in f32, so the host holds the finest
//! level's ω D⁻¹, P and R and the small coarse levels, and never the f64 matrix.

use super::aggregation::{coarsen, smoothing, Rows};
use super::multigrid::{Csr, GlobalRows, Multigrid, COARSE_ROWS, MAX_LEVELS};
use crate::error::Result;
use crate::reference::local_global::LgParams;
use crate::reference::model::CpuModel;

/// The finest level of a [`GlobalMg`] whose matrix is formed, not stored.
pub struct FineLevel<'a> {
    /// The matrix's rows.
    pub a: GlobalRows<'a>,
    /// Its stored entries.
    pub nnz: usize,
    /// ω/a_ii per row (as [`super::multigrid::Level::wdinv`]).
    pub wdinv: Vec<f64>,
    /// The prolongator from level 1.
    pub p: Csr,
    /// The restriction Pᵀ.
    pub r: Csr,
}

/// A hierarchy for the GPU: the finest level formed from the model, or none of it (a model too small to
/// coarsen, or whose coarsening stalls, and the hierarchy a caller already built: all levels stored).
pub struct GlobalMg<'a> {
    /// Level 0, when its matrix is formed from the model.
    pub fine: Option<FineLevel<'a>>,
    /// The stored levels below it (every level when `fine` is `None`) and the last level's solve.
    pub rest: Multigrid,
}

/// A level's matrix as an upload reads it.
#[derive(Clone, Copy)]
pub enum LevelMatrix<'a> {
    /// Stored.
    Stored(&'a Csr),
    /// Formed row by row, with its number of entries.
    Formed(&'a GlobalRows<'a>, usize),
}

impl LevelMatrix<'_> {
    /// Rows.
    pub fn rows(&self) -> usize {
        match self {
            LevelMatrix::Stored(a) => a.rows(),
            LevelMatrix::Formed(a, _) => a.rows(),
        }
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        match self {
            LevelMatrix::Stored(a) => a.nnz(),
            LevelMatrix::Formed(_, nnz) => *nnz,
        }
    }
}

/// One level of a [`GlobalMg`], finest first: its matrix, ω D⁻¹, and P and R (empty on the last level).
pub struct LevelRef<'a> {
    /// The level's matrix.
    pub a: LevelMatrix<'a>,
    /// ω/a_ii per row.
    pub wdinv: &'a [f64],
    /// The prolongator from the next level.
    pub p: &'a Csr,
    /// The restriction to it.
    pub r: &'a Csr,
}

impl<'a> GlobalMg<'a> {
    /// The hierarchy of `m`'s global matrix at `p.h`: [`Multigrid::for_global`]'s, its finest matrix
    /// formed from `m` when read.
    pub fn for_global(m: &'a CpuModel, p: &LgParams) -> Result<Self> {
        let a = GlobalRows::new(m, p);
        if a.rows() > COARSE_ROWS && MAX_LEVELS > 1 {
            let (wdinv, live) = smoothing(&a);
            if let Some((p, r, coarse)) = coarsen(&a, &wdinv, live) {
                let rest = Multigrid::build(coarse, MAX_LEVELS - 1)?;
                return Ok(GlobalMg { fine: Some(FineLevel { nnz: a.nnz(), a, wdinv, p, r }), rest });
            }
        }
        // one level: the last level's solve needs the matrix stored
        Ok(GlobalMg { fine: None, rest: Multigrid::for_global(m, p)? })
    }

    /// A hierarchy built and stored already.
    pub fn stored(mg: Multigrid) -> Self {
        GlobalMg { fine: None, rest: mg }
    }

    /// The levels, finest first.
    pub fn levels(&self) -> Vec<LevelRef<'_>> {
        let fine = self.fine.iter().map(|f| LevelRef { a: LevelMatrix::Formed(&f.a, f.nnz), wdinv: &f.wdinv, p: &f.p, r: &f.r });
        fine.chain(self.rest.levels.iter().map(|l| LevelRef { a: LevelMatrix::Stored(&l.a), wdinv: &l.wdinv, p: &l.p, r: &l.r })).collect()
    }

    /// The last level's solve (as [`Multigrid::coarse_inv`]).
    pub fn coarse_inv(&self) -> &Csr {
        &self.rest.coarse_inv
    }

    /// Rows per level.
    pub fn sizes(&self) -> Vec<usize> {
        self.levels().iter().map(|l| l.a.rows()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The levels as the upload reads them, every matrix stored: (rows, ptr, col, val bits) per matrix.
    fn dump(mg: &GlobalMg) -> Vec<(Vec<u32>, Vec<u32>, Vec<u64>)> {
        let csr = |a: &Csr| (a.ptr.clone(), a.col.clone(), a.val.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let mut out = Vec::new();
        for l in mg.levels() {
            out.push(match l.a {
                LevelMatrix::Stored(a) => csr(a),
                LevelMatrix::Formed(a, nnz) => {
                    let stored = Csr::from_rows(
                        a.rows(),
                        (0..a.rows()).map(|i| {
                            let mut r = Vec::new();
                            a.row_into(i, &mut r);
                            r
                        }),
                    );
                    assert_eq!(stored.nnz(), nnz, "the formed matrix's count of entries");
                    csr(&stored)
                }
            });
            out.push((Vec::new(), Vec::new(), l.wdinv.iter().map(|v| v.to_bits()).collect()));
            out.push(csr(l.p));
            out.push(csr(l.r));
        }
        out.push(csr(mg.coarse_inv()));
        out
    }

    #[test]
    fn the_formed_hierarchy_is_the_stored_one_bit_for_bit() {
        for side in [12, 40, 64] {
            let mut model = crate::model::cloth(side, None).expect("a cloth");
            if side == 40 {
                // pins elsewhere, and two parallel springs (summed entries)
                model.pinned.iter_mut().for_each(|p| *p = false);
                model.pinned[7] = true;
                let mut twin = model.springs[3];
                twin.k *= 1.7;
                model.springs.push(twin);
            }
            let cm = CpuModel::new(&model).expect("laid out");
            let p = LgParams::new(&cm, 1.0 / 60.0);
            let lean = GlobalMg::for_global(&cm, &p).expect("a hierarchy");
            assert_eq!(lean.fine.is_some(), side > 12, "the finest level formed at {side}²");
            let stored = GlobalMg::stored(Multigrid::for_global(&cm, &p).expect("a hierarchy"));
            assert_eq!(lean.sizes(), stored.sizes());
            assert!(dump(&lean) == dump(&stored), "the hierarchies of the {side}² cloth differ");
        }
    }
}
