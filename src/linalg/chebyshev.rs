//! Chebyshev semi-iteration weights (Wang 2015, "A Chebyshev semi-iterative approach for accelerating
//! projective and position-based dynamics", §4): the weights ω_k and the safety margin on the spectral
//! radius estimate, shared by the CPU engine's and the GPU's Chebyshev global steps.

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
