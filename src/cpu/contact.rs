//! Contacts held through local/global's global solves on the CPU ([`crate::reference::contact`]): the
//! filter S = I − n̂n̂ᵀ over the particles, the filtered operator S A S and the `cholesky` global step
//! with contacts held.

use super::forces::MIN_PAR_LEN;
use super::{CpuModel, V3};
use crate::error::Result;
use crate::linalg::cg::{pcg_solve_with, CgWork};
use crate::linalg::for_each_particle;
use crate::linalg::global::GlobalCholesky;
use crate::reference::contact::{contact_filter, Contact};
use crate::reference::local_global::{local_global_apply, LocalGlobalParams};
use rayon::prelude::*;

/// The filtered solve's tolerance and budget when the `cholesky` global step holds contacts.
pub const HELD_CHOLESKY_TOL: f64 = 1e-6;
/// See [`HELD_CHOLESKY_TOL`].
pub const HELD_CHOLESKY_ITERATIONS: usize = 20;

/// The `cholesky` global step A δ = r (r filtered) with the contacts held: the prefactored Cholesky
/// alone when none is held, else the filtered system S A S δ = S r by PCG with S C⁻¹ S as the
/// preconditioner ([`HELD_CHOLESKY_TOL`], at most [`HELD_CHOLESKY_ITERATIONS`]; the factor is of A, not
/// of S A S, so one application of it overshoots along the held normals). Returns the solves. The
/// GPU engine's host-driven frame calls it too.
pub fn cholesky_solve_held(
    m: &CpuModel,
    p: &LocalGlobalParams,
    chol: &mut GlobalCholesky,
    contacts: &[Contact],
    r: &[V3],
    delta: &mut [V3],
    cg: &mut CgWork,
) -> Result<usize> {
    if !contacts.iter().any(Contact::held) {
        chol.solve(r, delta)?;
        return Ok(1);
    }
    delta.iter_mut().for_each(|a| *a = V3::zeros());
    let (mut su, mut sr) = (Vec::new(), Vec::new());
    let rep = pcg_solve_with(
        |u, out| filtered_apply(m, p, contacts, u, out, &mut su),
        |res, z| {
            sr.clear();
            sr.extend_from_slice(res);
            filter(contacts, &mut sr);
            // a failed solve leaves z as it was; the PCG's breakdown check stops on it
            let _ = chol.solve(&sr, z);
            filter(contacts, z);
        },
        r,
        delta,
        HELD_CHOLESKY_TOL,
        HELD_CHOLESKY_ITERATIONS,
        cg,
    )?;
    Ok(rep.iterations.max(1))
}

/// S v in place at the held contacts (nothing without contacts).
pub fn filter(contacts: &[Contact], v: &mut [V3]) {
    if contacts.is_empty() {
        return;
    }
    v.par_iter_mut().with_min_len(MIN_PAR_LEN).enumerate().for_each(|(i, a)| *a = contact_filter(contacts, i, *a));
}

/// The global step's operator with the contacts held: S A S u (A alone without contacts), with `su` as
/// room for S u.
pub fn filtered_apply(m: &CpuModel, p: &LocalGlobalParams, contacts: &[Contact], u: &[V3], out: &mut [V3], su: &mut Vec<V3>) {
    if contacts.is_empty() {
        return for_each_particle(out, |i| local_global_apply(i, m, p, u));
    }
    su.clear();
    su.extend_from_slice(u);
    filter(contacts, su);
    let su: &[V3] = su;
    for_each_particle(out, |i| local_global_apply(i, m, p, su));
    filter(contacts, out);
}
