//! Shinya's stable step (Shinya, "Stability of explicit methods", §3 and §5): the largest stable step of
//! each method from k₀ = λ_max(M⁻¹K) and the drag d₀, the Rayleigh α that keeps the damped system inside
//! the stability region, and the plan of a frame's substeps.

use crate::method::{Method, StepPlan, StepSettings};

/// Shinya's maximum step for `method`, given k₀ and the drag d₀.
///
/// Explicit Euler and midpoint (and LEU): h_max = 2/√k₀ (eq. 27; the RK2 polynomial has the same
/// real-axis interval and, on Shinya's Rayleigh line, |R| = |1 − Y/2| < 1 for Y < 4).
/// RK4: √8.75/√k₀ (eq. 33). Symplectic Euler: its region is 0 < X < 2, Y < 4 − 2X (Jury's test on
/// λ² − (2 − X − Y)λ + 1 − X), so with X = h d₀ the limit is the root of h²k₀ + 2d₀h − 4 = 0, which is
/// 2/√k₀ when d₀ = 0.
pub fn h_max(method: Method, k0: f64, d0: f64) -> f64 {
    if k0 <= 0.0 || method.is_implicit() {
        // implicit Euler is unconditionally stable for PSD K and D (Shinya app. B)
        return f64::INFINITY;
    }
    match method {
        Method::ImplicitEuler | Method::LocalGlobal | Method::Newton => f64::INFINITY,
        Method::ExplicitEuler | Method::Midpoint | Method::Leu => 2.0 / k0.sqrt(),
        Method::Rk4 => 8.75f64.sqrt() / k0.sqrt(),
        Method::SymplecticEuler => (-d0 + (d0 * d0 + 4.0 * k0).sqrt()) / k0,
    }
}

/// Shinya's Rayleigh α for step h and drag d₀: eq. 31 for the Euler family (α = h(4 − d₀h)/4), eq. 33
/// for RK4 (α = h(0.725 − d₀h)/8.75). Symplectic Euler gets none: damping shrinks its region (Y < 4 − 2X).
pub fn rayleigh_alpha(method: Method, h: f64, d0: f64) -> f64 {
    match method {
        Method::ExplicitEuler | Method::Midpoint | Method::Leu => (h * (4.0 - d0 * h) / 4.0).max(0.0),
        Method::Rk4 => (h * (0.725 - d0 * h) / 8.75).max(0.0),
        Method::SymplecticEuler | Method::ImplicitEuler | Method::LocalGlobal | Method::Newton => 0.0,
    }
}

/// Plans the steps of a frame from k₀ (Shinya §3): h = scale·h_max, rounded down so that a whole
/// number of steps fills the frame, and α for that h.
pub fn plan(method: Method, k0: f64, d0: f64, s: &StepSettings) -> StepPlan {
    let hm = h_max(method, k0, d0);
    // implicit Euler: the frame step itself unless a fixed h is asked for
    let target =
        (if method.is_implicit() { s.fixed_h.unwrap_or(s.frame_dt) } else { s.fixed_h.unwrap_or(s.substep_scale * hm) }).min(s.frame_dt);
    let substeps = ((s.frame_dt / target) - 1e-9).ceil().max(1.0) as usize;
    let h = s.frame_dt / substeps as f64;
    let alpha = if s.rayleigh { rayleigh_alpha(method, h, d0) } else { 0.0 };
    let relinearize_every = ((s.leu_interval / h).round() as usize).max(1);
    StepPlan { k0, h_max: hm, h, substeps, alpha, relinearize_every }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Method::has_rayleigh` (what the GPU's kernel specialization reads) names exactly the methods
    /// whose α is positive.
    #[test]
    fn has_rayleigh_is_a_positive_alpha() {
        for m in Method::ALL {
            assert_eq!(m.has_rayleigh(), rayleigh_alpha(m, 1e-3, 0.0) > 0.0, "{m}");
        }
    }
}
