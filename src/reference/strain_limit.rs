//! Provot's strain limiting in f64: the twin of `shaders/strain_limit.wgsl`, one particle at a time.
//!
//! Provot 1995 ("Deformation constraints in a mass-spring model to describe rigid cloth behavior",
//! §5; the reading list of `seeds/lecture-mass-spring-systems`): soft springs let cloth stretch far
//! more than real cloth ("super-elastic" behaviour), and stiffer springs need smaller steps. Instead,
//! after each step, every spring whose deformation rate (l − L)/L exceeds a critical τ is shortened
//! back to (1 + τ)L by moving its endpoints: both by half when both are free, only the free one when
//! the other is pinned. The velocities are adjusted with the positions.
//!
//! As a gather (no float atomics on the GPU), one Jacobi pass moves every particle at once from the
//! same old positions: for particle i with inverse mass wᵢ, over its incident springs s = (i, j) with
//! d = xᵢ − xⱼ, l = |d| > (1 + τ)L,
//!
//! Δxᵢ = −(ω/cᵢ) Σₛ wᵢ/(wᵢ + wⱼ) · (l − (1 + τ)L) · d/l,   Δvᵢ = Δxᵢ/h,
//!
//! cᵢ the number of i's springs over the limit: the inverse-mass share generalises Provot's halves
//! (equal masses) and his pinned case (wⱼ = 0: the whole correction on i). The plain sum (no 1/cᵢ)
//! diverged on the curtain (a particle has up to 12 springs); the average with an over-relaxation ω
//! (default 1.95) converges, but a Jacobi pass only carries a correction one spring further, so a
//! hanging cloth needs many passes (`StrainLimit::passes`). A pinned particle (w = 0) never moves.

use super::model::{CpuModel, V3};
use crate::error::{Error, Result};
use crate::method::Method;
use crate::model::StrainLimit;

/// Strain limiting with `method`: explicit Euler and LEU are refused. With either, the soft curtain
/// diverged within its first frames with strain limiting on, with or without the velocity correction
/// (`tests/strain_limit.rs` shows the refusal; the cause is not known), so both engines say so at
/// construction and when the method changes instead of running into NaN.
pub fn check_method(method: Method, sl: Option<StrainLimit>) -> Result<()> {
    match sl {
        Some(sl) if matches!(method, Method::ExplicitEuler | Method::Leu) => Err(Error::param(
            "strain_limiting",
            sl.limit,
            format!(
                "{} diverges with strain limiting on; use symplectic-euler, midpoint, rk4, implicit-euler or local-global",
                method.name()
            ),
        )),
        _ => Ok(()),
    }
}

/// Springs shorter than this have no direction and are never corrected (as `EPS_LEN` in WGSL).
pub const EPS_LEN: f64 = 1e-9;

/// `strain_limit_pass`: one Jacobi pass for particle i, reading the state (x, v) and returning its new
/// (xᵢ, vᵢ) (see the module docs); `h` is the step the velocity correction divides by.
pub fn strain_limit_pass(i: usize, m: &CpuModel, h: f64, sl: &StrainLimit, x: &[V3], v: &[V3]) -> (V3, V3) {
    let wi = m.inv_mass[i];
    if wi == 0.0 {
        return (x[i], v[i]);
    }
    let xi = x[i];
    let mut dx = V3::zeros();
    let mut count = 0u32;
    for &e in m.incidence.of(i) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let d = xi - x[j];
        let l = d.norm();
        let target = (1.0 + sl.limit) * m.rest[s];
        if l > target && l > EPS_LEN {
            let wj = m.inv_mass[j];
            dx -= d * (wi / (wi + wj) * (l - target) / l);
            count += 1;
        }
    }
    if count == 0 {
        return (xi, v[i]);
    }
    dx *= sl.relaxation / count as f64;
    (xi + dx, v[i] + dx / h)
}

/// `strain_limit_copy`: particle i's state copied (the GPU's last step of an odd number of passes,
/// from its scratch buffer back into the state).
pub fn strain_limit_copy(i: usize, x: &[V3], v: &[V3]) -> (V3, V3) {
    (x[i], v[i])
}

/// Every pass of `sl` over the whole state in place, sequentially (the CPU engine runs the same kernel
/// in parallel: [`crate::cpu::strain_limit`]).
pub fn strain_limit_all(m: &CpuModel, h: f64, sl: &StrainLimit, x: &mut [V3], v: &mut [V3]) {
    for _ in 0..sl.passes {
        let next: Vec<(V3, V3)> = (0..m.n).map(|i| strain_limit_pass(i, m, h, sl, x, v)).collect();
        for (i, (xi, vi)) in next.into_iter().enumerate() {
            x[i] = xi;
            v[i] = vi;
        }
    }
}
