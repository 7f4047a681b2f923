//! Self-collision: particle–particle repulsion within a thickness, its settings and their validation.

use crate::error::{Bound, Error, Result};

/// Self-collision of a model's particles (issue #17): after every step, before the colliders, every
/// pair of particles that no spring joins and that are closer than `thickness` is pushed apart to
/// `thickness` (shared by inverse mass; pinned particles never move) and their approach along the
/// pair's normal is removed (inelastic). The pairs are found through a uniform spatial hash of cell
/// size `cell` rebuilt each pass on both backends (`shaders/self_collision.wgsl`, its twin
/// [`crate::reference::self_collision`]): the approximate, real-time scheme Liu et al. 2013 use
/// (after Müller et al. 2007).
///
/// In a scene file: `self_collision: (thickness: 0.02)`, optionally with `cell` and `passes`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfCollision {
    /// The thickness t > 0 (m): unjoined particles are kept at least t apart.
    pub thickness: f64,
    /// The hash cell's edge (m), ≥ t (a pair closer than t then lies in one of the 27 cells around a
    /// particle); `None`: the thickness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<f64>,
    /// Passes per step (each rebuilds the hash and runs one Jacobi repulsion), ≥ 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub passes: u32,
}

fn one() -> u32 {
    1
}

fn is_one(p: &u32) -> bool {
    *p == 1
}

impl SelfCollision {
    /// Self-collision of thickness t, the cell t, one pass per step.
    pub fn new(thickness: f64) -> Self {
        SelfCollision { thickness, cell: None, passes: 1 }
    }

    /// The hash cell's edge (m): `cell`, or the thickness.
    pub fn cell_size(&self) -> f64 {
        self.cell.unwrap_or(self.thickness)
    }

    /// Checks the settings: t finite and > 0, the cell finite, > 0 and ≥ t, passes in 1..=64.
    pub fn validate(&self) -> Result<()> {
        let t = self.thickness;
        if !t.is_finite() || t <= 0.0 {
            return Err(Error::invalid("self_collision.thickness", t, Bound::Positive));
        }
        if let Some(c) = self.cell {
            if !c.is_finite() || c <= 0.0 {
                return Err(Error::invalid("self_collision.cell", c, Bound::Positive));
            }
            if c < t {
                return Err(Error::invalid("self_collision.cell", c, Bound::AtLeast { min: t, rule: "must be >= the thickness {}" }));
            }
        }
        if !(1..=64).contains(&self.passes) {
            return Err(Error::invalid("self_collision.passes", self.passes, Bound::int_range(1, 64)));
        }
        Ok(())
    }
}
