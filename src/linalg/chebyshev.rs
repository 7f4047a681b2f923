//! Chebyshev semi-iteration weights (Wang 2015, "A Chebyshev semi-iterative approach for accelerating
//! projective and position-based dynamics", §4): the weights ω_k, the spectral radius estimates they are
//! built from (power iterations on the reference's `local_global_apply`, with the Jacobi or the multigrid
//! preconditioner) and the safety margin on them, shared by the CPU engine's and the GPU's Chebyshev
//! global steps.

use super::for_each_particle;
use super::multigrid::Multigrid;
use crate::reference::local_global::{self as kernel, entry_spring, LocalGlobalParams};
use crate::reference::model::{CpuModel, V3};
use crate::reference::power::power_start;

/// The margin on the power-iteration estimate of ρ: Chebyshev weights built for a radius below the
/// true one amplify the top of the spectrum, so the estimate is raised by this fraction of its gap to 1
/// (a margin on the gap, not on ρ: the curtain's ρ is 0.998 to 0.9996, where a 0.5% raise on ρ itself
/// would reach 1).
pub const CHEBYSHEV_MARGIN: f64 = 0.05;

/// The ρ that `crate::cpu::local_global::chebyshev_solve` uses for an estimate `rho`: 1 − (1 − ρ)(1 − margin).
pub fn chebyshev_rho_used(rho: f64) -> f64 {
    let rho = rho.clamp(0.0, 1.0);
    1.0 - (1.0 - rho) * (1.0 - CHEBYSHEV_MARGIN)
}

/// The Chebyshev weight ω_{k+1} of Wang 2015 (eq. 12): ω₁ = 1, ω₂ = 2/(2 − ρ²), ω_{k+1} = 4/(4 − ρ²ωₖ).
pub fn chebyshev_omega(k: usize, rho: f64, omega_prev: f64) -> f64 {
    match k {
        0 => 1.0,
        1 => 2.0 / (2.0 - rho * rho),
        _ => 4.0 / (4.0 - rho * rho * omega_prev),
    }
}

/// Power iterations for the Chebyshev radius.
pub const CHEBYSHEV_POWER_ITERATIONS: usize = 300;

/// The Jacobi preconditioner: 1/Aᵢᵢ on each axis, 0 for pinned particles (the constraint filter).
#[allow(clippy::needless_range_loop)] // i indexes the particles' arrays
pub fn local_global_inv_diag(m: &CpuModel, p: &LocalGlobalParams, out: &mut [V3]) {
    let h2 = p.h * p.h;
    for i in 0..m.n {
        out[i] = if m.inv_mass[i] == 0.0 {
            V3::zeros()
        } else {
            let ksum: f64 = m.incidence.of(i).iter().map(|&e| m.k[entry_spring(e).0]).sum();
            V3::repeat(1.0 / (m.mass[i] * p.mass_diag + h2 * ksum))
        };
    }
}

/// The spectral radius of an iteration matrix G over the free particles by `iters` power iterations from
/// a fixed start (0 on pinned particles): `apply_g(u, out)` forms out = G u. The estimate approaches the
/// radius from below.
fn power_radius(m: &CpuModel, iters: usize, mut apply_g: impl FnMut(&[V3], &mut [V3])) -> f64 {
    let n = m.n;
    let mut u: Vec<V3> = (0..n).map(|i| if m.inv_mass[i] == 0.0 { V3::zeros() } else { V3::repeat(power_start(i, 0) - 0.5) }).collect();
    let mut gu = vec![V3::zeros(); n];
    let mut rho = 0.0;
    for _ in 0..iters {
        let norm = u.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt();
        if norm == 0.0 {
            return 0.0;
        }
        u.iter_mut().for_each(|a| *a /= norm);
        apply_g(&u, &mut gu);
        rho = gu.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt();
        std::mem::swap(&mut u, &mut gu);
    }
    rho
}

/// The spectral radius of the Jacobi iteration matrix I − D⁻¹A of the global system, by `iters` power
/// iterations from a fixed start (Wang 2015 §4 estimates it once per system). The estimate approaches
/// the radius from below; `crate::cpu::local_global::chebyshev_solve` adds a margin.
pub fn chebyshev_rho(m: &CpuModel, p: &LocalGlobalParams, iters: usize) -> f64 {
    let mut inv_d = vec![V3::zeros(); m.n];
    local_global_inv_diag(m, p, &mut inv_d);
    power_radius(m, iters, |u, out| {
        for_each_particle(out, |i| kernel::local_global_apply(i, m, p, u));
        for ((o, ui), di) in out.iter_mut().zip(u).zip(&inv_d) {
            *o = ui - o.component_mul(di);
        }
    })
}

/// Power iterations for ρ(I − BA) with the multigrid V-cycle B (its radius is far from 1, so far fewer
/// than Jacobi's [`CHEBYSHEV_POWER_ITERATIONS`] settle it).
pub const MULTIGRID_RHO_ITERATIONS: usize = 50;

/// The spectral radius of I − BA, B the multigrid V-cycle of A (the iteration matrix of the
/// preconditioned iteration that `crate::cpu::local_global::chebyshev_solve_with` accelerates), by `iters` power iterations
/// from the same start as [`chebyshev_rho`].
pub fn multigrid_rho(m: &CpuModel, p: &LocalGlobalParams, mg: &mut Multigrid, iters: usize) -> f64 {
    multigrid_rho_with(m, p, iters, |rz| mg.apply_in_place(rz))
}

/// [`multigrid_rho`] with the V-cycle given as `apply_b(rz)`, which replaces r by z = B r in place (a
/// hierarchy whose finest matrix is formed from the model, [`super::global_mg::GlobalMg::apply_in_place`],
/// gives the same ρ bit for bit).
pub fn multigrid_rho_with(m: &CpuModel, p: &LocalGlobalParams, iters: usize, mut apply_b: impl FnMut(&mut [V3])) -> f64 {
    power_radius(m, iters, |u, out| {
        for_each_particle(out, |i| kernel::local_global_apply(i, m, p, u));
        apply_b(out);
        for (o, ui) in out.iter_mut().zip(u) {
            *o = ui - *o;
        }
    })
}
