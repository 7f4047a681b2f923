//! Provot's strain limiting (Provot 1995, "Deformation constraints in a mass-spring model to describe
//! rigid cloth behavior", the reading of the mass-spring lecture in `seeds/lecture-mass-spring-systems`):
//! after each step, every spring stretched beyond (1 + τ) times its rest length is pulled back to
//! (1 + τ)L by moving its free endpoints, and the velocities follow the positions.

use crate::error::{Bound, Error, Result};

/// The default limit τ: a spring may stretch by 10% of its rest length.
pub const DEFAULT_STRAIN_LIMIT: f64 = 0.1;
/// The default cap on Jacobi passes per step; the passes stop earlier once every spring is within
/// [`DEFAULT_STRAIN_TOLERANCE`] (see [`StrainLimit::tolerance`]). Measured with the defaults
/// (`tests/strain_limit.rs`, `measure_passes`: the curtain at half its stiffness, τ = 0.1, 10 frames;
/// the worst stretch after any step and the passes run a step, mean and most), every method within
/// 1.005 τ:
///
/// | soft curtain | sympl. Euler | midpoint | RK4 | explicit Euler, LEU | implicit Euler | Newton | local/global |
/// |---|---|---|---|---|---|---|---|
/// | 41², ω = 1.95, plain (before) | 0.10002, 3.4 (9) | 0.10008, 3.7 (7) | 0.10010, 4.3 (25) | 0.10010, 13.4 (103) | 0.10071, 54.2 (128) | 0.10066, 39.0 (128) | 0.10272, 65.3 (128) |
/// | 41², defaults | 0.10010, 6.4 (17) | 0.10010, 7.3 (17) | 0.10008, 7.7 (17) | 0.10009, 8.3 (19) | 0.10000, 16.8 (41) | 0.10000, 12.8 (29) | 0.10000, 14.6 (25) |
/// | 81², ω = 1.95, plain (before) | 0.10008, 3.5 (7) | 0.10010, 3.6 (7) | 0.10008, 4.1 (19) | 0.10189, 17.1 (128); 0.10029, 20.7 (128) | 0.10270, 70.1 (128) | 0.10087, 41.0 (128) | 0.12031, 77.8 (128) |
/// | 81², defaults | 0.10010, 7.1 (17) | 0.10010, 8.0 (19) | 0.10009, 8.4 (17) | 0.10010, 9.9 (25); 0.10010, 10.0 (29) | 0.10000, 21.4 (47) | 0.10006, 13.6 (27) | 0.10009, 27.4 (59) |
///
/// A cap of 32 is too few (41² implicit Euler 0.144; 81² implicit Euler 0.142, local/global 0.108).
pub const DEFAULT_STRAIN_PASSES: u32 = 128;
/// The default relaxation ω of a pass (the average correction scaled). Plain passes did best at ω = 1.95
/// (implicit Euler at 128 passes, 21×21 soft curtain: ω = 1 0.122, 1.5 0.115, 1.9 0.108, 1.95
/// 0.10025), but over-relaxed passes and the acceleration do not mix (likely because an over-relaxed
/// pass leaves error that changes sign from pass to pass, which the extrapolation amplifies). An early
/// variant that accelerated every particle from the second pass diverged with ω = 1.95 and ω_c = 1.6
/// (41² implicit Euler 16.7). With the plain passes at ω = 1.95 and the accelerated ones at 1, explicit
/// Euler went from 8.3 passes a step to 28.9. With the plain average the small-step methods run about
/// twice the passes they ran at ω = 1.95 without the acceleration (symplectic Euler 6.4 against 3.4 at
/// 41²), and the large-step ones a third to a half.
pub const DEFAULT_STRAIN_RELAXATION: f64 = 1.0;
/// The passes of a step that run plain before the acceleration starts ([`StrainLimit::acceleration`]):
/// passes 0 to 3 are not accelerated, pass 4 on are (as Wang 2015 waits some iterations before
/// starting). Accelerated from the second pass on, the first passes' large corrections are extrapolated
/// too and overshoot: on the 21×21 curtain at k = 125 N/m (symplectic Euler, τ = 0.1, ω_c = 1.85) the
/// energy rose by 1.65 J in 7 frames and the divergence guard stopped the run; with 4 plain passes it
/// lost 0.0096 J in 10 frames. After 2 or 8 plain passes the large-step methods ran as many passes
/// (81² local/global 24.8 and 33.0 a step against 27.4).
pub const STRAIN_ACCELERATION_AFTER: u32 = 4;
/// The default acceleration ω_c of the passes ([`StrainLimit::acceleration`]). Measured on the soft
/// curtain (ω = 1, 10 frames, cap 128, the worst stretch after any step, τ = 0.1): ω_c = 1.8 left
/// 81² local/global at 0.10071 (56.7 passes a step, steps at the cap), 1.85 within the limit (27.4),
/// and 1.9 (ω = 0.9, accelerated from the second pass) diverged at 81² (implicit Euler 0.199).
pub const DEFAULT_STRAIN_ACCELERATION: f64 = 1.85;
/// The default stopping tolerance: the passes stop once no spring is stretched beyond τ(1 + 0.001), a
/// fifth of the 0.5% of τ that issue #17's must-show allows.
pub const DEFAULT_STRAIN_TOLERANCE: f64 = 1e-3;

/// Strain limiting after every step of every method, on both backends (`shaders/strain_limit.wgsl`, its
/// twin [`crate::reference::strain_limit`]). Each of `passes` Jacobi passes moves every free particle i
/// by ω times the average, over its cᵢ springs s = (i, j) with length l > (1 + τ)L, of the correction
/// that brings s back to (1 + τ)L shared by inverse mass: Δxᵢ = −(ω/cᵢ) Σ wᵢ/(wᵢ + wⱼ) (l − (1 + τ)L) d̂,
/// d̂ = (xᵢ − xⱼ)/l; a pinned endpoint (w = 0) does not move. The velocities follow by the method's
/// rule (`reference::strain_limit::VelocityRule`): Δvᵢ = Δxᵢ/h (Provot 1995 §5, "the velocities are
/// adjusted accordingly"), or, for explicit Euler and LEU, the relative velocity along each spring at
/// its limit removed.
///
/// The passes run in pairs and stop early: the first pass of each pair also checks the state it reads,
/// and when no spring of it is stretched beyond τ(1 + `tolerance`) that state is kept and the passes end
/// (the check's own output is dropped), so a step whose springs are already within the limit costs one
/// pass, and a step that stretched them costs what it needs, at most `passes`.
///
/// After a few plain passes, the particles a pass moves are extrapolated from their state two passes back
/// ([`StrainLimit::acceleration`]): a hanging cloth's correction then crosses it in tens of passes
/// instead of hundreds.
///
/// A model without one (`Model::strain_limit: None`, the default) steps exactly as before. In a scene
/// file (serde): `strain_limiting: (limit: 0.1, passes: 128)`; `passes`, `relaxation`, `tolerance` and
/// `acceleration` may be left out.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrainLimit {
    /// τ > 0: the largest strain (l − L)/L a spring keeps after a step.
    pub limit: f64,
    /// Jacobi passes per step, ≥ 1.
    #[serde(default = "default_passes")]
    pub passes: u32,
    /// The relaxation ω of a pass, in (0, 2).
    #[serde(default = "default_relaxation")]
    pub relaxation: f64,
    /// The passes stop once no spring is stretched beyond τ(1 + tolerance); ≥ 0 (0: only a state
    /// with no spring beyond τ at all stops them early).
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// The acceleration ω_c of the passes, in [1, 2): from pass [`STRAIN_ACCELERATION_AFTER`] on, a
    /// particle the pass moves goes to x′ + ω_c (x̂ − x′), x̂ the pass's result and x′ its state two
    /// passes back (Wang 2015's Chebyshev semi-iterative method at its limit weight, after a few plain
    /// passes as there; `reference::strain_limit::accelerate`). 1: plain Jacobi passes. A hanging
    /// cloth's correction then spreads in far fewer passes.
    #[serde(default = "default_acceleration")]
    pub acceleration: f64,
}

fn default_passes() -> u32 {
    DEFAULT_STRAIN_PASSES
}

fn default_relaxation() -> f64 {
    DEFAULT_STRAIN_RELAXATION
}

fn default_tolerance() -> f64 {
    DEFAULT_STRAIN_TOLERANCE
}

fn default_acceleration() -> f64 {
    DEFAULT_STRAIN_ACCELERATION
}

impl Default for StrainLimit {
    fn default() -> Self {
        StrainLimit {
            limit: DEFAULT_STRAIN_LIMIT,
            passes: DEFAULT_STRAIN_PASSES,
            relaxation: DEFAULT_STRAIN_RELAXATION,
            tolerance: DEFAULT_STRAIN_TOLERANCE,
            acceleration: DEFAULT_STRAIN_ACCELERATION,
        }
    }
}

impl StrainLimit {
    /// The limit τ with the default passes, relaxation, tolerance and acceleration.
    pub fn new(limit: f64) -> Self {
        StrainLimit { limit, ..Default::default() }
    }

    /// The settings of pass k (0-based) of a step: plain passes before [`STRAIN_ACCELERATION_AFTER`]
    /// (ω_c = 1), the acceleration from it on.
    pub fn for_pass(&self, k: u32) -> StrainLimit {
        if k < STRAIN_ACCELERATION_AFTER {
            StrainLimit { acceleration: 1.0, ..*self }
        } else {
            *self
        }
    }

    /// The stretch (l − L)/L beyond which a spring keeps the passes going: τ(1 + tolerance).
    pub fn stop_stretch(&self) -> f64 {
        self.limit * (1.0 + self.tolerance)
    }

    /// Checks τ finite and > 0, passes ≥ 1, ω finite and in (0, 2), the tolerance finite and ≥ 0, ω_c
    /// finite and in [1, 2); the error names the field and value.
    pub fn validate(&self) -> Result<()> {
        if !self.limit.is_finite() || self.limit <= 0.0 {
            return Err(Error::invalid("strain_limiting.limit", self.limit, Bound::Positive));
        }
        if self.passes == 0 {
            return Err(Error::invalid("strain_limiting.passes", self.passes, Bound::at_least(1.0)));
        }
        if !self.relaxation.is_finite() || self.relaxation <= 0.0 || self.relaxation >= 2.0 {
            return Err(Error::invalid(
                "strain_limiting.relaxation",
                self.relaxation,
                Bound::Interval { min: 0.0, max: 2.0, min_open: true, max_open: true },
            ));
        }
        if !self.tolerance.is_finite() || self.tolerance < 0.0 {
            return Err(Error::invalid("strain_limiting.tolerance", self.tolerance, Bound::NonNegative));
        }
        if !self.acceleration.is_finite() || !(1.0..2.0).contains(&self.acceleration) {
            return Err(Error::invalid(
                "strain_limiting.acceleration",
                self.acceleration,
                Bound::Interval { min: 1.0, max: 2.0, min_open: false, max_open: true },
            ));
        }
        Ok(())
    }
}
