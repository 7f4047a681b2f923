//! Jacobi-preconditioned conjugate gradients (Shewchuk's PCG; Kauppila §3.2.2 with §4.2's Jacobi
//! preconditioner) in f64: one function per kernel of `shaders/pcg.wgsl` (`pcg_begin`, `pcg_matvec`,
//! `pcg_update`, `pcg_finish`), per row, for any operator.
//!
//! A solve of A x = b: r = b − A x₀, z = P⁻¹r, p₋₁ = 0; for k below the budget: stop when ‖r‖ ≤ ε‖b‖;
//! β = (r·z)/(r·z)_prev (0 at k = 0), p = z + βp₋₁, α = (r·z)/(p·Ap), x += αp, r −= αAp, z = P⁻¹r.
//!
//! The operator is the one the WGSL composes in front of `pcg.wgsl` (`operator_apply`): here a function
//! `operator(i, u)` returning (A u)ᵢ, e.g. [`super::implicit::operator_apply`] or
//! [`super::local_global::local_global_apply`]. The GPU forms pⱼ = zⱼ + βp₋₁,ⱼ inside `pcg_matvec` for every
//! neighbour it reads; here [`pcg_dir`] forms it per row first and `pcg_matvec` gathers over the result.
//! The dot products are sums over workgroups on the GPU and in fixed blocks in the CPU engine
//! ([`crate::linalg::cg`]); [`pcg_sum`] is the plain sequential sum, equal to either up to rounding.

use super::model::V3;

/// What `pcg_begin` writes for row `i`: the residual, the preconditioned residual and the row's terms of
/// (r·z, r·r, b·b).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PcgBegin {
    /// rᵢ = bᵢ − (A x₀)ᵢ.
    pub r: V3,
    /// zᵢ = P⁻¹ᵢ rᵢ.
    pub z: V3,
    /// (rᵢ·zᵢ, rᵢ·rᵢ, bᵢ·bᵢ).
    pub dots: [f64; 3],
}

/// `pcg_begin`: the start of a solve for row `i`, from x₀ = `warm` (the last solve's x) or from x₀ = 0
/// (`None`, then r = b): r = b − A x₀, z = P⁻¹r with `inv_diag` = P⁻¹ (0 on filtered, pinned, rows).
pub fn pcg_begin(i: usize, operator: impl Fn(usize, &[V3]) -> V3, b: &[V3], inv_diag: &[V3], warm: Option<&[V3]>) -> PcgBegin {
    let r = match warm {
        Some(x) => b[i] - operator(i, x),
        None => b[i],
    };
    let z = r.component_mul(&inv_diag[i]);
    PcgBegin { r, z, dots: [r.dot(&z), r.dot(&r), b[i].dot(&b[i])] }
}

/// The WGSL helper `pcg_dir`: the search direction pⱼ = zⱼ + βp₋₁,ⱼ of row `j`.
pub fn pcg_dir(j: usize, beta: f64, z: &[V3], p_old: &[V3]) -> V3 {
    z[j] + p_old[j] * beta
}

/// β of iteration k = (r·z)/(r·z)_prev, 0 at the first iteration (where (r·z)_prev is 0), as
/// `pcg_matvec` takes it from the summed partials.
pub fn pcg_beta(rz: f64, rz_prev: f64) -> f64 {
    if rz_prev > 0.0 {
        rz / rz_prev
    } else {
        0.0
    }
}

/// Whether the solve has converged, ‖r‖ ≤ ε‖b‖, tested as r·r ≤ ε² b·b (`pcg_matvec`'s first test).
pub fn pcg_converged(rr: f64, bb: f64, tol: f64) -> bool {
    rr <= tol * tol * bb
}

/// `pcg_matvec`: the first half of an iteration for row `i`: ((A p)ᵢ, pᵢ·(A p)ᵢ), the second the row's term
/// of p·Ap, with p the direction of [`pcg_dir`].
pub fn pcg_matvec(i: usize, operator: impl Fn(usize, &[V3]) -> V3, p: &[V3]) -> (V3, f64) {
    let ap = operator(i, p);
    (ap, p[i].dot(&ap))
}

/// What `pcg_update` writes for row `i`: the new x, r and z, and the row's terms of (r·z, r·r).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PcgUpdate {
    /// xᵢ + α pᵢ.
    pub x: V3,
    /// rᵢ − α (A p)ᵢ.
    pub r: V3,
    /// P⁻¹ᵢ rᵢ (the new r).
    pub z: V3,
    /// (rᵢ·zᵢ, rᵢ·rᵢ) of the new r and z.
    pub dots: [f64; 2],
}

/// `pcg_update`: the second half of an iteration for row `i`, α = (r·z)/(p·Ap) (the caller checks
/// p·Ap > 0, else the solve breaks down): x += αp, r −= αAp, z = P⁻¹r.
#[allow(clippy::too_many_arguments)] // the kernel's bindings, in order
pub fn pcg_update(i: usize, alpha: f64, x: &[V3], r: &[V3], p: &[V3], ap: &[V3], inv_diag: &[V3]) -> PcgUpdate {
    let r_new = r[i] - ap[i] * alpha;
    let z = r_new.component_mul(&inv_diag[i]);
    PcgUpdate { x: x[i] + p[i] * alpha, r: r_new, z, dots: [r_new.dot(&z), r_new.dot(&r_new)] }
}

/// `pcg_finish`: the relative residual ‖r‖/‖b‖ = √(r·r / b·b) of the last iterate (0 when b = 0).
pub fn pcg_finish(rr: f64, bb: f64) -> f64 {
    if bb > 0.0 {
        (rr / bb).sqrt()
    } else {
        0.0
    }
}

/// The dot products' sum over the rows' terms, in row order (the GPU sums per workgroup, then the
/// workgroups' partials).
pub fn pcg_sum<const N: usize>(terms: impl IntoIterator<Item = [f64; N]>) -> [f64; N] {
    terms.into_iter().fold([0.0; N], |mut acc, t| {
        acc.iter_mut().zip(t).for_each(|(a, t)| *a += t);
        acc
    })
}
