//! The cursor spring: how the window (or a host) pulls one particle toward a target with the explicit
//! methods and LEU.

use crate::error::{Bound, Error, Result};
use crate::method::StepPlan;

/// A stiff spring from one particle to the mouse cursor: how the explicit methods and LEU drag a
/// particle (issue #5; the implicit methods hold it by a position constraint instead, and ignore a
/// cursor). While set, the free particle `particle` gets the extra acceleration
/// `a_c = −c (x − target) − d v` (mass-independent, like gravity), in the force gather of every
/// explicit method (`accel` in `shaders/shared/forces.wgsl`, its twin `cpu::forces::cursor_accel`) and
/// linearized exactly in LEU. The target is held still within a frame: the damping acts on v itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cursor {
    /// The particle pulled (must be free: a pinned particle ignores forces).
    pub particle: usize,
    /// Where the cursor is (m).
    pub target: [f64; 3],
    /// c (1/s²): the spring's stiffness per unit mass.
    pub stiffness: f64,
    /// d (1/s): damping of the particle's velocity.
    pub damping: f64,
}

impl Cursor {
    /// The largest cursor stiffness as a fraction of k₀: c ≤ 0.25·k₀.
    pub const STIFFNESS_FRACTION: f64 = 0.25;
    /// The share of the method's stability limit Y_lim = h_max²k₀ that the cursor may fill: with it,
    /// h²(k₀ + c) ≤ 0.9·Y_lim.
    pub const STABILITY_SHARE: f64 = 0.9;

    /// A cursor spring on `particle` whose stiffness and damping keep the planned explicit step stable
    /// (Shinya 2004, §3).
    ///
    /// The cursor adds c·Pᵢ (Pᵢ the projector on particle i's coordinates) to M⁻¹K, so by Weyl's
    /// inequality the largest eigenvalue grows from k₀ to at most k₀ + c: the planned step keeps
    /// Y = h²(k₀ + c) inside the method's real-axis limit Y_lim = h_max²k₀ (4 for the Euler family and
    /// LEU, eq. 27; 8.75 for RK4, eq. 33) when c ≤ (0.9·Y_lim − h²k₀)/h². We take
    /// c = min(0.25·k₀, that): at the default step (h = h_max/√1.5) this is 0.25·k₀, with
    /// Y = 4·1.25/1.5 = 3.33 for the Euler family. At substep scales near 1 no headroom is left and c
    /// drops towards 0; [`Cursor::is_usable`] says when it is too weak to drag with.
    ///
    /// Damping: with Rayleigh damping on (α > 0; explicit Euler, midpoint, RK4, LEU) the cursor is
    /// damped like every spring, d = α·c, so D = d₀M + α(K + cPᵢ) stays on Shinya's line (eq. 31, 33)
    /// that lies inside the stable region for Y < Y_lim (explicit Euler needs it: undamped it is
    /// unstable at any h). Without α (symplectic Euler) the region is X < 2 − Y/2 with X = h(d₀ + d)
    /// (Jury's test, see [`crate::stepping::plan::h_max`]); we take half of that margin at the cursor's worst
    /// Y = h²(k₀ + c): d = max(0, (2 − Y/2)/(2h) − d₀), about 0.2·√c (10% of critical) at the default step.
    pub fn stable(particle: usize, target: [f64; 3], plan: &StepPlan, drag: f64) -> Cursor {
        let (k0, h) = (plan.k0, plan.h);
        let y_lim = if plan.h_max.is_finite() { plan.h_max * plan.h_max * k0 } else { 0.0 };
        let room = (Self::STABILITY_SHARE * y_lim - h * h * k0) / (h * h);
        let c = if k0 > 0.0 && h > 0.0 { (Self::STIFFNESS_FRACTION * k0).min(room).max(0.0) } else { 0.0 };
        let damping = if plan.alpha > 0.0 {
            plan.alpha * c
        } else {
            let y = h * h * (k0 + c);
            ((2.0 - 0.5 * y) / (2.0 * h) - drag).max(0.0)
        };
        Cursor { particle, target, stiffness: c, damping }
    }

    /// Whether the spring is stiff enough to drag with: c ≥ 0.05·k₀ (else the step leaves no room for
    /// it, and a viewer should hold the particle by a position constraint instead).
    pub fn is_usable(&self, plan: &StepPlan) -> bool {
        self.stiffness >= 0.05 * plan.k0 && self.stiffness > 0.0
    }

    /// Checks the cursor against a model of `n` particles: the error names the field and value.
    pub fn validate(&self, n: usize) -> Result<()> {
        if self.particle >= n {
            return Err(Error::invalid("cursor.particle", self.particle, Bound::index(n).worded("must be < the number of particles ({})")));
        }
        if !self.target.iter().all(|c| c.is_finite()) {
            return Err(Error::invalid("cursor.target", self.target, Bound::Finite));
        }
        if !(self.stiffness.is_finite() && self.stiffness >= 0.0) {
            return Err(Error::invalid("cursor.stiffness", self.stiffness, Bound::NonNegative));
        }
        if !(self.damping.is_finite() && self.damping >= 0.0) {
            return Err(Error::invalid("cursor.damping", self.damping, Bound::NonNegative));
        }
        Ok(())
    }
}
