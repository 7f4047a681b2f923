//! Shinya's stable step (Shinya, "Stability of explicit methods", §3 and §5): the largest stable step of
//! each method from k₀ = λ_max(M⁻¹K), the drag d₀ and the springs' own damping β = max k_d/k, the
//! Rayleigh α that keeps the damped system inside the stability region, and the plan of a frame's
//! substeps.
//!
//! The springs' damping k_d along each spring is, about the rest state, the damping matrix βK when every
//! spring has k_d = βk (its largest ratio bounds it otherwise): with it a mode of M⁻¹K of eigenvalue λ
//! sees ẍ + (d₀ + (α + β)λ)ẋ + λx = 0, and the damping grows with λ. Too much of it at too long a step
//! leaves the explicit methods' stability regions along the real axis, so the stable step shrinks with β
//! ([`h_max`]).

use crate::method::{Method, StepPlan, StepSettings};

/// Shinya's maximum step for `method`, given k₀, the drag d₀ and the springs' damping β = max k_d/k (s).
///
/// Without spring damping (β = 0): explicit Euler and midpoint (and LEU): h_max = 2/√k₀ (eq. 27; the
/// RK2 polynomial has the same real-axis interval and, on Shinya's Rayleigh line, |R| = |1 − Y/2| < 1
/// for Y < 4). RK4: √8.75/√k₀ (eq. 33). Symplectic Euler: its region is 0 < X < 2, Y < 4 − 2X (Jury's
/// test on λ² − (2 − X − Y)λ + 1 − X), so with X = h d₀ the limit is the root of h²k₀ + 2d₀h − 4 = 0,
/// which is 2/√k₀ when d₀ = 0.
///
/// With β > 0 a mode λ has X = h(d₀ + (α + β)λ), Y = h²λ, worst at λ = k₀. Symplectic Euler: the root
/// of h²k₀ + 2(d₀ + βk₀)h − 4 = 0. Explicit Euler (and LEU) with Shinya's α = h(4 − d₀h)/4: Jury's
/// test on λ² − (2 − X)λ + 1 − X + Y gives Y < X (met: α ≥ h − d₀h²/4) and Y > 2X − 4, i.e.
/// 2hβk₀ < (4 − h²k₀)(1 − hd₀/2), solved for h by bisection. Midpoint takes Euler's limit (its region
/// holds Euler's disc |1 + z| ≤ 1, so the limit is safe, if not the largest). RK4 with its α (eq. 33):
/// the largest h, up to √8.75/√k₀, at which |R₄(hμ)| ≤ 1 for both roots μ of every mode λ ≤ k₀ (checked
/// on 256 modes), by bisection.
pub fn h_max(method: Method, k0: f64, d0: f64, beta: f64) -> f64 {
    if k0 <= 0.0 || method.is_implicit() {
        // implicit Euler is unconditionally stable for PSD K and D (Shinya app. B)
        return f64::INFINITY;
    }
    let beta = if beta.is_finite() { beta.max(0.0) } else { 0.0 };
    match method {
        Method::ImplicitEuler | Method::LocalGlobal | Method::Newton => f64::INFINITY,
        Method::ExplicitEuler | Method::Midpoint | Method::Leu if beta == 0.0 => 2.0 / k0.sqrt(),
        Method::ExplicitEuler | Method::Midpoint | Method::Leu => {
            let g = |h: f64| (4.0 - h * h * k0) * (1.0 - h * d0 / 2.0) - 2.0 * h * beta * k0;
            bisect(2.0 / k0.sqrt(), |h| g(h) > 0.0)
        }
        Method::Rk4 if beta == 0.0 => 8.75f64.sqrt() / k0.sqrt(),
        Method::Rk4 => bisect(8.75f64.sqrt() / k0.sqrt(), |h| rk4_stable(h, k0, d0, beta)),
        Method::SymplecticEuler => {
            let b = d0 + beta * k0;
            (-b + (b * b + 4.0 * k0).sqrt()) / k0
        }
    }
}

/// The largest h in (0, `hi`] at which `ok` holds, by bisection (60 halvings), assuming it holds below
/// some h and fails above; `hi` itself when `ok(hi)`.
fn bisect(hi: f64, ok: impl Fn(f64) -> bool) -> f64 {
    if ok(hi) {
        return hi;
    }
    let (mut lo, mut hi) = (0.0, hi);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Whether RK4 with its Rayleigh α (eq. 33) and the springs' damping β is stable at step h on every mode
/// λ = k₀·i/256, i = 1 … 256: |R₄(hμ)| ≤ 1 for both roots μ of μ² + cμ + λ = 0, c = d₀ + (α + β)λ.
fn rk4_stable(h: f64, k0: f64, d0: f64, beta: f64) -> bool {
    let alpha = rayleigh_alpha(Method::Rk4, h, d0);
    (1..=256).all(|i| {
        let lam = k0 * i as f64 / 256.0;
        let c = d0 + (alpha + beta) * lam;
        let disc = c * c - 4.0 * lam;
        let roots = if disc >= 0.0 {
            [((-c + disc.sqrt()) / 2.0, 0.0), ((-c - disc.sqrt()) / 2.0, 0.0)]
        } else {
            [(-c / 2.0, (-disc).sqrt() / 2.0), (-c / 2.0, -(-disc).sqrt() / 2.0)]
        };
        roots.iter().all(|&(re, im)| {
            // R₄(z) = 1 + z + z²/2 + z³/6 + z⁴/24 by Horner, in complex arithmetic
            let z = (h * re, h * im);
            let mut r = (1.0 / 24.0, 0.0);
            for c in [1.0 / 6.0, 0.5, 1.0, 1.0] {
                r = (r.0 * z.0 - r.1 * z.1 + c, r.0 * z.1 + r.1 * z.0);
            }
            r.0 * r.0 + r.1 * r.1 <= 1.0 + 1e-12
        })
    })
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

/// Plans the steps of a frame from k₀ (Shinya §3), the drag d₀ and the springs' damping β = max k_d/k:
/// h = scale·h_max, rounded down so that a whole number of steps fills the frame, and α for that h.
pub fn plan(method: Method, k0: f64, d0: f64, beta: f64, s: &StepSettings) -> StepPlan {
    let hm = h_max(method, k0, d0, beta);
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

    /// The growth of one mode ẍ + cẋ + λx = 0 (c = d₀ + (α + β)λ, α Shinya's for the method at h) over
    /// 4000 steps of `method`'s own update, from x = 1, v = 0: the largest |x| + |v|/√λ seen.
    fn mode_growth(method: Method, h: f64, lam: f64, d0: f64, beta: f64) -> f64 {
        let c = d0 + (rayleigh_alpha(method, h, d0) + beta) * lam;
        let f = |x: f64, v: f64| (v, -lam * x - c * v);
        let (mut x, mut v, mut worst) = (1.0f64, 0.0f64, 1.0f64);
        for _ in 0..4000 {
            (x, v) = match method {
                Method::SymplecticEuler => {
                    let v1 = v + h * f(x, v).1;
                    (x + h * v1, v1)
                }
                Method::ExplicitEuler => (x + h * v, v + h * f(x, v).1),
                Method::Midpoint => {
                    let (dx, dv) = f(x, v);
                    let (mx, mv) = f(x + 0.5 * h * dx, v + 0.5 * h * dv);
                    (x + h * mx, v + h * mv)
                }
                Method::Rk4 => {
                    let k1 = f(x, v);
                    let k2 = f(x + 0.5 * h * k1.0, v + 0.5 * h * k1.1);
                    let k3 = f(x + 0.5 * h * k2.0, v + 0.5 * h * k2.1);
                    let k4 = f(x + h * k3.0, v + h * k3.1);
                    (x + h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0), v + h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1))
                }
                _ => unreachable!("explicit methods only"),
            };
            worst = worst.max(x.abs() + v.abs() / lam.sqrt());
        }
        worst
    }

    /// With the springs' damping β the stable step shrinks, and it is the stable step: every mode λ ≤ k₀
    /// stays bounded under each explicit method's own update at 0.99 h_max; symplectic and explicit Euler,
    /// whose limits are exact, blow up at 1.02 h_max on the stiffest mode.
    #[test]
    fn spring_damping_shrinks_the_stable_step_to_the_true_limit() {
        let (k0, d0) = (1.0e6, 0.5);
        for beta in [0.0, 2.0e-4, 1.0e-3, 5.0e-3] {
            for method in [Method::SymplecticEuler, Method::ExplicitEuler, Method::Midpoint, Method::Rk4] {
                let hm = h_max(method, k0, d0, beta);
                if beta > 0.0 {
                    assert!(hm < h_max(method, k0, d0, 0.0), "{method}, β = {beta}: h_max {hm} not below the undamped one");
                }
                for i in 1..=64 {
                    let lam = k0 * i as f64 / 64.0;
                    let g = mode_growth(method, 0.99 * hm, lam, d0, beta);
                    assert!(g < 50.0, "{method}, β = {beta}, λ = {lam}: grew {g} at 0.99 h_max = {}", 0.99 * hm);
                }
                if matches!(method, Method::SymplecticEuler | Method::ExplicitEuler) {
                    let g = mode_growth(method, 1.02 * hm, k0, d0, beta);
                    assert!(g > 1e3, "{method}, β = {beta}: bounded ({g}) at 1.02 h_max = {}", 1.02 * hm);
                }
            }
        }
    }

    /// `Method::has_rayleigh` (what the GPU's kernel specialization reads) names exactly the methods
    /// whose α is positive.
    #[test]
    fn has_rayleigh_is_a_positive_alpha() {
        for m in Method::ALL {
            assert_eq!(m.has_rayleigh(), rayleigh_alpha(m, 1e-3, 0.0) > 0.0, "{m}");
        }
    }
}
