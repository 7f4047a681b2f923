//! Provot's strain limiting (Provot 1995, "Deformation constraints in a mass-spring model to describe
//! rigid cloth behavior", the reading of the mass-spring lecture in `seeds/lecture-mass-spring-systems`):
//! after each step, every spring stretched beyond (1 + τ) times its rest length is pulled back to
//! (1 + τ)L by moving its free endpoints, and the velocities follow the positions.

use crate::error::{Error, Result};

/// The default limit τ: a spring may stretch by 10% of its rest length.
pub const DEFAULT_STRAIN_LIMIT: f64 = 0.1;
/// The default cap on Jacobi passes per step; the passes stop earlier once every spring is within
/// [`DEFAULT_STRAIN_TOLERANCE`] (see [`StrainLimit::tolerance`]). Measured (`tests/strain_limit.rs`,
/// `measure_passes`: the curtain at half its stiffness, τ = 0.1, 10 frames, the worst stretch after any
/// step and the passes run a step): the small-step methods stop after a few (symplectic Euler, midpoint,
/// RK4 3.3–4.3 a step on average, at most 7–25) and never reach the cap; explicit Euler and LEU run
/// 9–13 on average, implicit Euler 41–54, Newton 27–39 and local/global 7–65, with single steps
/// reaching 128 (a hanging cloth's correction travels one spring a pass). With ω = 1.95 and this cap
/// every method stays within 1.005 τ on the 21×21 curtain (implicit Euler 0.10025).
pub const DEFAULT_STRAIN_PASSES: u32 = 128;
/// The default relaxation ω of a pass (the average correction over-relaxed). Implicit Euler at 128
/// passes (21×21 soft curtain): ω = 1 0.122, 1.5 0.115, 1.8 0.112, 1.9 0.108, 1.95 0.10025, 1.97 0.10014.
pub const DEFAULT_STRAIN_RELAXATION: f64 = 1.95;
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
/// A model without one (`Model::strain_limit: None`, the default) steps exactly as before. In a scene
/// file (serde): `strain_limiting: (limit: 0.1, passes: 128)`; `passes`, `relaxation` and `tolerance`
/// may be left out.
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

impl Default for StrainLimit {
    fn default() -> Self {
        StrainLimit {
            limit: DEFAULT_STRAIN_LIMIT,
            passes: DEFAULT_STRAIN_PASSES,
            relaxation: DEFAULT_STRAIN_RELAXATION,
            tolerance: DEFAULT_STRAIN_TOLERANCE,
        }
    }
}

impl StrainLimit {
    /// The limit τ with the default passes and relaxation.
    pub fn new(limit: f64) -> Self {
        StrainLimit { limit, ..Default::default() }
    }

    /// The stretch (l − L)/L beyond which a spring keeps the passes going: τ(1 + tolerance).
    pub fn stop_stretch(&self) -> f64 {
        self.limit * (1.0 + self.tolerance)
    }

    /// Checks τ finite and > 0, passes ≥ 1, ω finite and in (0, 2), the tolerance finite and ≥ 0; the
    /// error names the field and value.
    pub fn validate(&self) -> Result<()> {
        if !self.limit.is_finite() || self.limit <= 0.0 {
            return Err(Error::param("strain_limiting.limit", self.limit, "must be finite and > 0"));
        }
        if self.passes == 0 {
            return Err(Error::param("strain_limiting.passes", self.passes, "must be >= 1"));
        }
        if !self.relaxation.is_finite() || self.relaxation <= 0.0 || self.relaxation >= 2.0 {
            return Err(Error::param("strain_limiting.relaxation", self.relaxation, "must be in (0, 2)"));
        }
        if !self.tolerance.is_finite() || self.tolerance < 0.0 {
            return Err(Error::param("strain_limiting.tolerance", self.tolerance, "must be finite and >= 0"));
        }
        Ok(())
    }
}
