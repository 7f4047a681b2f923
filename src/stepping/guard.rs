//! The divergence guard, once for every method on both engines: after a frame (every
//! [`crate::method::GuardSettings::every`] frames) it judges the engine's raw [`Signals`] and the frame's
//! solver report, and names the first cause it finds:
//!
//! 1. **non-finite**: a coordinate is NaN or infinite;
//! 2. **strain**: a spring's |l − L|/L is above `strain_limit`;
//! 3. **solver**: implicit Euler's CG (or Newton) ended with a relative residual above both its own
//!    tolerance and `solver_residual_limit`, or a non-finite one;
//! 4. **energy**: the total energy rose above its baseline (the energy before the first frame, or after
//!    the user's last edit) by more than the external forces can supply since then plus
//!    `energy_tolerance` × the model's energy scale. (Measured from the baseline, not from the lowest
//!    energy since: linearized implicit Euler at h = 1/30 loses several J in the curtain's first frame
//!    and gains 2.7 J of it back in the next, then settles; against the lowest energy that would count.) Gravity and the central field
//!    are in the energy, and damping (springs, drag, Rayleigh, collisions) only removes it, so for them "no
//!    gain" is the rule; a wind w can supply at most Σ d₀mᵢ|w|²/4 per second (the bound is
//!    [`Signals::external_power`]). The cursor spring and the user's edits of the state (a dragged or
//!    written particle) supply unbounded work: while the cursor acts and in a frame with an edit, only
//!    finiteness is judged, and the baseline starts again from the state after it.
//!
//! What happens then is the [`DivergencePolicy`], applied by [`crate::stepping::Stepper`].

use crate::engine::Signals;
use crate::method::GuardSettings;

pub use crate::method::DivergencePolicy;

/// Why a frame counts as diverged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cause {
    /// A coordinate is not finite.
    NonFinite,
    /// A spring's strain is above the limit.
    Strain {
        /// The largest |l − L|/L.
        strain: f64,
        /// The limit.
        limit: f64,
    },
    /// The solver stopped short of its tolerance.
    Solver {
        /// The final relative residual.
        residual: f64,
        /// The residual above which it counts (the larger of the solver's tolerance and the guard's
        /// limit).
        limit: f64,
    },
    /// The energy rose beyond what the external forces can supply.
    Energy {
        /// The rise above the baseline energy (J).
        gained: f64,
        /// The rise allowed: the external forces' work bound plus the tolerance (J).
        allowed: f64,
    },
}

impl Cause {
    /// A short name: `non-finite`, `strain`, `solver`, `energy`.
    pub fn kind(&self) -> &'static str {
        match self {
            Cause::NonFinite => "non-finite",
            Cause::Strain { .. } => "strain",
            Cause::Solver { .. } => "solver",
            Cause::Energy { .. } => "energy",
        }
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Cause::NonFinite => write!(f, "non-finite state"),
            Cause::Strain { strain, limit } => write!(f, "strain {strain:.3e} above the limit {limit}"),
            Cause::Solver { residual, limit } => write!(f, "solver stopped short: relative residual {residual:.3e} above {limit:.3e}"),
            Cause::Energy { gained, allowed } => {
                write!(f, "energy rose {gained:.4e} J, more than the external forces can supply ({allowed:.4e} J allowed)")
            }
        }
    }
}

/// What the guard did about a divergence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// Recorded (policy `report`); the state was left as it is.
    Reported,
    /// Rolled back to the checkpoint at `to_frame` (policy `recover`), and either the step halved to `h`
    /// or, for LEU while it re-linearizes less often than every step, its re-linearization interval
    /// halved to `leu_interval` (h kept).
    RolledBack {
        /// The frame the state went back to (the next frame stepped is this one again).
        to_frame: usize,
        /// The step from here on (s).
        h: f64,
        /// LEU: the halved interval h_nl (s) when that was what the rollback changed.
        leu_interval: Option<f64>,
    },
}

/// A divergence the guard found: the frame at which it was seen (0-based, counted in frames stepped
/// since the simulator was built, rolled-back ones not counted twice), its cause and what was done.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Divergence {
    /// The frame (0-based) whose check found it.
    pub frame: usize,
    /// Why.
    pub cause: Cause,
    /// What was done.
    pub action: Action,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "diverged at frame {}: {}", self.frame, self.cause)?;
        match self.action {
            Action::RolledBack { to_frame, leu_interval: Some(t), .. } => {
                write!(f, "; rolled back to frame {to_frame}, LEU's re-linearization interval halved to {t:.4e} s")?
            }
            Action::RolledBack { to_frame, h, .. } => write!(f, "; rolled back to frame {to_frame}, h halved to {h:.4e} s")?,
            Action::Reported => {}
        }
        Ok(())
    }
}

/// The guard's memory between checks: the energy baseline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Guard {
    /// The baseline energy, and the simulated time at which it was taken.
    base: Option<(f64, f64)>,
    /// The energy scale, taken at the baseline.
    scale: f64,
}

impl Guard {
    /// Starts the energy baseline again at the next check (after an edit of the state).
    pub fn rebaseline(&mut self) {
        self.base = None;
    }

    /// Whether the energy baseline is set (it is at the first check, and after an edit).
    pub fn has_baseline(&self) -> bool {
        self.base.is_some()
    }

    /// Sets the energy baseline at signals `s` seen at time `t` (the state before the first frame).
    pub fn baseline(&mut self, t: f64, s: &Signals) {
        self.base = Some((s.energy, t));
        self.scale = s.energy_scale;
    }

    /// Judges the signals `s` seen at simulated time `t` (s), with the frame's solver report
    /// (`(residual, tolerance)` for the methods that solve to a tolerance), `edited`: the user changed
    /// the state or the cursor acted since the last check. `None`: no divergence (the baseline moves on).
    pub fn judge(&mut self, settings: &GuardSettings, t: f64, s: &Signals, solver: Option<(f64, f64)>, edited: bool) -> Option<Cause> {
        if !s.finite || !s.energy.is_finite() {
            return Some(Cause::NonFinite);
        }
        if edited {
            self.baseline(t, s);
            return None;
        }
        if s.max_strain > settings.strain_limit {
            return Some(Cause::Strain { strain: s.max_strain, limit: settings.strain_limit });
        }
        if let Some((residual, tolerance)) = solver {
            let limit = tolerance.max(settings.solver_residual_limit);
            if residual.is_nan() || residual > limit {
                return Some(Cause::Solver { residual, limit });
            }
        }
        let Some((base, since)) = self.base.filter(|_| !s.scripted) else {
            self.baseline(t, s);
            return None;
        };
        let allowed = s.external_power * (t - since).max(0.0) + settings.energy_tolerance * self.scale;
        let gained = s.energy - base;
        if gained > allowed {
            return Some(Cause::Energy { gained, allowed });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(energy: f64) -> Signals {
        Signals { finite: true, energy, max_strain: 0.05, energy_scale: 100.0, external_power: 0.0, scripted: false }
    }

    #[test]
    fn energy_may_fall_but_not_rise_beyond_the_tolerance_above_its_baseline() {
        let st = GuardSettings { energy_tolerance: 0.02, ..Default::default() }; // 2% of the scale of 100 J: 2 J
        let mut g = Guard::default();
        assert_eq!(g.judge(&st, 0.0, &sig(-50.0), None, false), None);
        assert_eq!(g.judge(&st, 0.1, &sig(-60.0), None, false), None, "dissipation");
        assert_eq!(g.judge(&st, 0.2, &sig(-48.5), None, false), None, "within 2 J of the baseline");
        let c = g.judge(&st, 0.3, &sig(-47.0), None, false);
        assert!(
            matches!(c, Some(Cause::Energy { gained, allowed }) if (gained - 3.0).abs() < 1e-12 && (allowed - 2.0).abs() < 1e-12),
            "{c:?}"
        );
    }

    #[test]
    fn wind_may_supply_its_bounded_work_and_an_edit_rebaselines() {
        let st = GuardSettings { energy_tolerance: 0.0, ..Default::default() };
        let mut g = Guard::default();
        let windy = |e: f64| Signals { external_power: 10.0, ..sig(e) };
        assert_eq!(g.judge(&st, 0.0, &windy(0.0), None, false), None);
        assert_eq!(g.judge(&st, 1.0, &windy(9.9), None, false), None, "10 W for 1 s");
        assert!(matches!(g.judge(&st, 1.0, &windy(10.1), None, false), Some(Cause::Energy { .. })));
        assert_eq!(g.judge(&st, 1.0, &sig(500.0), None, true), None, "the user's work is not judged");
        assert_eq!(g.judge(&st, 2.0, &sig(500.0), None, false), None, "the baseline follows the edit");
        assert!(matches!(g.judge(&st, 3.0, &sig(500.5), None, false), Some(Cause::Energy { .. })));
    }

    #[test]
    fn non_finite_strain_and_a_stalled_solver_are_causes() {
        let st = GuardSettings::default();
        let mut g = Guard::default();
        let nan = Signals { finite: false, ..sig(0.0) };
        assert_eq!(g.judge(&st, 0.0, &nan, None, true), Some(Cause::NonFinite), "an edit does not excuse NaN");
        let strained = Signals { max_strain: 2.5, ..sig(0.0) };
        assert_eq!(g.judge(&st, 0.0, &strained, None, false), Some(Cause::Strain { strain: 2.5, limit: 2.0 }));
        assert_eq!(g.judge(&st, 0.0, &Signals { max_strain: 1.9, ..sig(0.0) }, None, false), None);
        assert_eq!(g.judge(&st, 0.0, &sig(0.0), Some((0.1, 1e-6)), false), None, "part way is not a divergence");
        assert_eq!(g.judge(&st, 0.0, &sig(0.0), Some((0.9, 1e-6)), false), Some(Cause::Solver { residual: 0.9, limit: 0.5 }));
        assert!(matches!(g.judge(&st, 0.0, &sig(0.0), Some((f64::NAN, 1e-6)), false), Some(Cause::Solver { .. })));
    }
}
