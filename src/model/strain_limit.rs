//! Provot's strain limiting (Provot 1995, "Deformation constraints in a mass-spring model to describe
//! rigid cloth behavior", the reading of the mass-spring lecture in `seeds/lecture-mass-spring-systems`):
//! after each step, every spring stretched beyond (1 + τ) times its rest length is pulled back to
//! (1 + τ)L by moving its free endpoints, and the velocities follow the positions.

use crate::error::{Error, Result};

/// The default limit τ: a spring may stretch by 10% of its rest length.
pub const DEFAULT_STRAIN_LIMIT: f64 = 0.1;
/// The default Jacobi passes per step. Measured (`tests/strain_limit.rs`, the curtain at half its
/// stiffness, τ = 0.1, the worst stretch after any step): 21×21, 10 frames, ω = 1.8: symplectic Euler
/// 0.09999 (32 passes); implicit Euler 0.132 (32), 0.112 (128), 0.1007 (512); with ω = 1.95 and 128
/// passes every method within 0.10025.
pub const DEFAULT_STRAIN_PASSES: u32 = 128;
/// The default relaxation ω of a pass (the average correction over-relaxed). Implicit Euler at 128
/// passes (21×21 soft curtain): ω = 1 0.122, 1.5 0.115, 1.8 0.112, 1.9 0.108, 1.95 0.10025, 1.97 0.10014.
pub const DEFAULT_STRAIN_RELAXATION: f64 = 1.95;

/// Strain limiting after every step of every method, on both backends (`shaders/strain_limit.wgsl`, its
/// twin [`crate::reference::strain_limit`]). Each of `passes` Jacobi passes moves every free particle i
/// by ω times the average, over its cᵢ springs s = (i, j) with length l > (1 + τ)L, of the correction
/// that brings s back to (1 + τ)L shared by inverse mass: Δxᵢ = −(ω/cᵢ) Σ wᵢ/(wᵢ + wⱼ) (l − (1 + τ)L) d̂,
/// d̂ = (xᵢ − xⱼ)/l; a pinned endpoint (w = 0) does not move. The velocities follow by the method's
/// rule (`reference::strain_limit::VelocityRule`): Δvᵢ = Δxᵢ/h (Provot 1995 §5, "the velocities are
/// adjusted accordingly"), or, for explicit Euler and LEU, the relative velocity along each spring at
/// its limit removed.
///
/// A model without one (`Model::strain_limit: None`, the default) steps exactly as before. In a scene
/// file (serde): `strain_limiting: (limit: 0.1, passes: 128)`; `passes` and `relaxation` may be left out.
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
}

fn default_passes() -> u32 {
    DEFAULT_STRAIN_PASSES
}

fn default_relaxation() -> f64 {
    DEFAULT_STRAIN_RELAXATION
}

impl Default for StrainLimit {
    fn default() -> Self {
        StrainLimit { limit: DEFAULT_STRAIN_LIMIT, passes: DEFAULT_STRAIN_PASSES, relaxation: DEFAULT_STRAIN_RELAXATION }
    }
}

impl StrainLimit {
    /// The limit τ with the default passes and relaxation.
    pub fn new(limit: f64) -> Self {
        StrainLimit { limit, ..Default::default() }
    }

    /// Checks τ finite and > 0, passes ≥ 1, ω finite and in (0, 2); the error names the field and value.
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
        Ok(())
    }
}
