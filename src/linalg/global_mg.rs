//! The multigrid hierarchy of Liu's global matrix as the GPU uploads it: the hierarchy of
//! [`Multigrid::for_global`], bit for bit, without its finest matrix stored. That matrix (some 13
//! entries a particle on a cloth, 160 B a particle in f64) is the largest part of the hierarchy, and its
//! rows are cheap to form again from the model ([`GlobalRows`]); the build reads them row by row
//! ([`super::aggregation`]) and the upload writes them row by row in f32, so the host holds the finest
//! level's ω D⁻¹, P and R and the small coarse levels, and never the f64 matrix. Its V-cycle
//! ([`GlobalMg::apply_in_place`], for the power iteration of the Chebyshev radius, [`GlobalMg::rho`])
//! forms those rows again as it reads them, and returns [`Multigrid::apply`]'s result bit for bit.

use rayon::prelude::*;

use super::aggregation::{coarsen, smoothing, Rows};
#[cfg(doc)]
use super::chebyshev::multigrid_rho;
use super::chebyshev::multigrid_rho_with;
use super::multigrid::{Csr, GlobalRows, Multigrid, COARSE_ROWS, MAX_LEVELS};
use super::{for_each_particle, PAR_N};
use crate::error::Result;
use crate::reference::local_global::LocalGlobalParams;
use crate::reference::model::{CpuModel, V3};
use crate::reference::multigrid as kernel;

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
    /// The V-cycle's vectors of the formed level (t, and the next level's b, then z), allocated by the
    /// first [`GlobalMg::apply_in_place`]: an upload never needs them.
    work: [Vec<V3>; 2],
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
    pub fn for_global(m: &'a CpuModel, p: &LocalGlobalParams) -> Result<Self> {
        let a = GlobalRows::new(m, p);
        if a.rows() > COARSE_ROWS && MAX_LEVELS > 1 {
            let (wdinv, live) = smoothing(&a);
            if let Some((p, r, coarse)) = coarsen(&a, &wdinv, live) {
                let rest = Multigrid::build(coarse, MAX_LEVELS - 1)?;
                return Ok(GlobalMg { fine: Some(FineLevel { nnz: a.nnz(), a, wdinv, p, r }), rest, work: Default::default() });
            }
        }
        // one level: the last level's solve needs the matrix stored
        Ok(GlobalMg::stored(Multigrid::for_global(m, p)?))
    }

    /// A hierarchy built and stored already.
    pub fn stored(mg: Multigrid) -> Self {
        GlobalMg { fine: None, rest: mg, work: Default::default() }
    }

    /// z = B r in place (`rz` holds r, then z): the V(1,1)-cycle of [`Multigrid::apply`], with the same
    /// result bit for bit. The formed level's kernels read its rows as they are formed, in the stored
    /// matrix's order, and hold one vector of its size (t; x = ωD⁻¹b is formed again where it is read);
    /// its restriction reads P, not R (see [`GlobalMg::rho`]); the levels below it are the stored
    /// hierarchy's own V-cycle on the restricted residual.
    pub fn apply_in_place(&mut self, rz: &mut [V3]) {
        let GlobalMg { fine, rest, work } = self;
        let Some(f) = fine else { return rest.apply_in_place(rz) };
        let (n, nc) = (f.a.rows(), f.p.cols);
        if work[0].len() != n || work[1].len() != nc {
            *work = [n, nc].map(|k| vec![V3::zeros(); k]);
        }
        let [t, bc] = work;
        let (a, wdinv, p) = (&f.a, &f.wdinv[..], f.p.rows_view());
        let b = &*rz;
        // down: t = b − A x with x = ωD⁻¹b
        for_each_row(t, a, |i, row, ti| *ti = kernel::mg_down_row(i, row.iter().map(|&(j, v)| (j as usize, v)), wdinv, b).1);
        // restrict: b₁ = R t = Pᵀt, scattered over P's rows in order: each b₁ entry sums its terms from
        // 0 in increasing rows, as `mg_restrict` sums R's row (the transpose's columns are in that order)
        bc.fill(V3::zeros());
        for (i, ti) in t.iter().enumerate() {
            for (c, v) in f.p.row(i) {
                bc[c] += ti * v;
            }
        }
        // the levels below: z₁ = B₁ b₁, in place
        rest.apply_in_place(bc);
        // up: t = x + P z₁ (`mg_up`, x = ωD⁻¹b as `Multigrid::apply` forms it)
        let zc = &*bc;
        for_each_particle(t, |i| b[i] * wdinv[i] + p.row_dot(i, zc));
        // post: z = t + ωD⁻¹(b − A t), row i reading only its own bᵢ
        let t = &*t;
        for_each_row(rz, a, |i, row, zi| *zi = kernel::mg_post_row(i, row.iter().map(|&(j, v)| (j as usize, v)), wdinv[i], *zi, t).0);
    }

    /// Frees the V-cycle's vectors (those of every level).
    pub fn release_work(&mut self) {
        self.work = Default::default();
        self.rest.release_work();
    }

    /// ρ(I − BA) by `iters` power iterations with this hierarchy's V-cycle: [`multigrid_rho`] on the
    /// stored hierarchy, bit for bit. While they run, the finest level's R is not held (the V-cycle
    /// restricts by P's rows); it is formed again after (Pᵀ, as the build formed it: the same bits), and
    /// the V-cycle's vectors are freed.
    pub fn rho(&mut self, m: &CpuModel, p: &LocalGlobalParams, iters: usize) -> f64 {
        if let Some(f) = self.fine.as_mut() {
            f.r = Csr::default();
        }
        let rho = multigrid_rho_with(m, p, iters, |rz| self.apply_in_place(rz));
        self.release_work();
        if let Some(f) = self.fine.as_mut() {
            f.r = f.p.transpose();
        }
        rho
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

/// `f(i, row i of a, &mut out[i])` for every i, as [`for_each_particle`] (on the rayon pool for large n,
/// each entry alone), each row formed into a buffer of its thread.
fn for_each_row<T: Send>(out: &mut [T], a: &GlobalRows<'_>, f: impl Fn(usize, &[(u32, f64)], &mut T) + Sync) {
    if out.len() < PAR_N {
        let mut row = Vec::new();
        for (i, o) in out.iter_mut().enumerate() {
            a.row_into(i, &mut row);
            f(i, &row, o);
        }
    } else {
        out.par_iter_mut().with_min_len(PAR_N / 4).enumerate().for_each_init(Vec::new, |row, (i, o)| {
            a.row_into(i, row);
            f(i, row, o);
        });
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

    /// The `side`² cloth; at 40², pinned elsewhere and with two parallel springs (summed entries).
    fn cloth(side: usize) -> CpuModel {
        let model =
            if side == 40 { crate::linalg::irregular_cloth(side, false) } else { crate::model::cloth(side, None).expect("a cloth") };
        CpuModel::new(&model).expect("laid out")
    }

    #[test]
    fn the_formed_hierarchy_is_the_stored_one_bit_for_bit() {
        for side in [12, 40, 64] {
            let cm = cloth(side);
            let p = LocalGlobalParams::new(&cm, 1.0 / 60.0);
            let lean = GlobalMg::for_global(&cm, &p).expect("a hierarchy");
            assert_eq!(lean.fine.is_some(), side > 12, "the finest level formed at {side}²");
            let stored = GlobalMg::stored(Multigrid::for_global(&cm, &p).expect("a hierarchy"));
            assert_eq!(lean.sizes(), stored.sizes());
            assert!(dump(&lean) == dump(&stored), "the hierarchies of the {side}² cloth differ");
        }
    }

    #[test]
    fn the_formed_v_cycle_and_its_rho_are_the_stored_ones_bit_for_bit() {
        use crate::linalg::chebyshev::{multigrid_rho, MULTIGRID_RHO_ITERATIONS};
        let bits = |z: &[V3]| z.iter().flat_map(|v| v.iter().map(|c| c.to_bits())).collect::<Vec<_>>();
        // 80²: the formed level's products on the rayon pool
        for side in [12, 40, 80] {
            let cm = cloth(side);
            let p = LocalGlobalParams::new(&cm, 1.0 / 60.0);
            let mut lean = GlobalMg::for_global(&cm, &p).expect("a hierarchy");
            let mut stored = Multigrid::for_global(&cm, &p).expect("a hierarchy");
            let r: Vec<V3> = (0..cm.n).map(|i| V3::new((i % 7) as f64 - 3.0, (i % 11) as f64 * 0.1, 1.0 / (1 + i) as f64)).collect();
            let mut zs = vec![V3::zeros(); cm.n];
            for _ in 0..2 {
                let mut zl = r.clone();
                lean.apply_in_place(&mut zl);
                stored.apply(&r, &mut zs);
                assert!(bits(&zl) == bits(&zs), "the V-cycles of the {side}² cloth differ");
                assert!(zl.iter().any(|v| v.norm() > 0.0));
            }
            let rl = lean.rho(&cm, &p, MULTIGRID_RHO_ITERATIONS);
            let rs = multigrid_rho(&cm, &p, &mut stored, MULTIGRID_RHO_ITERATIONS);
            assert_eq!(rl.to_bits(), rs.to_bits(), "ρ of the {side}² cloth: {rl} formed, {rs} stored");
            // R formed again after ρ: the hierarchy uploaded is still the stored one
            assert!(dump(&lean) == dump(&GlobalMg::stored(stored)), "the {side}² cloth's hierarchy after ρ");
        }
    }
}
