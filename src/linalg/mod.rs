//! Sparse linear algebra in f64 under both engines: the faer sparse Cholesky with a fixed pattern
//! ([`sparse`]), its fill-reducing orderings ([`ordering`]), the smoothed-aggregation multigrid hierarchy
//! and its V-cycle ([`multigrid`], each level built by [`aggregation`] from its matrix read a row at a
//! time; the GPU's without its finest matrix stored, [`global_mg`]), implicit Euler's aggregation
//! multigrid ([`spring_mg`], its structure in [`spring_levels`]), conjugate gradients ([`cg`]) and the
//! factored global matrix of Liu's local/global step ([`global`]). Imports the reference (model layout,
//! kernel parameters), never the engines.

pub mod aggregation;
pub mod cg;
pub mod chebyshev;
pub mod csr;
pub mod global;
pub mod global_mg;
pub mod multigrid;
pub mod ordering;
pub mod sparse;
pub mod spring_levels;
pub mod spring_mg;
mod supernodal;

use rayon::prelude::*;

/// Per-particle passes run on the rayon pool from this many entries up.
pub const PAR_N: usize = 4096;

/// `out[i] = f(i)` for every i, on the rayon pool for large n. Each entry is computed alone, so the
/// result does not depend on the split.
pub fn for_each_particle<T: Send>(out: &mut [T], f: impl Fn(usize) -> T + Sync) {
    if out.len() < PAR_N {
        out.iter_mut().enumerate().for_each(|(i, o)| *o = f(i));
    } else {
        out.par_iter_mut().with_min_len(PAR_N / 4).enumerate().for_each(|(i, o)| *o = f(i));
    }
}

/// The hierarchy tests' irregular cloth: the `side`² cloth pinned at one particle elsewhere, with a second
/// spring beside spring 3 (k × 1.7: summed entries) and, when `reversed`, spring 10 given again end
/// first.
#[cfg(test)]
pub(crate) fn irregular_cloth(side: usize, reversed: bool) -> crate::model::Model {
    let mut model = crate::model::cloth(side, None).expect("a cloth");
    model.pinned.iter_mut().for_each(|p| *p = false);
    model.pinned[7] = true;
    let mut twin = model.springs[3];
    twin.k *= 1.7;
    model.springs.push(twin);
    if reversed {
        let mut back = model.springs[10];
        std::mem::swap(&mut back.a, &mut back.b);
        model.springs.push(back);
    }
    model
}
