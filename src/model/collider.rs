//! Static colliders: the ground half-space, spheres, capsules and oriented boxes, each with a
//! thickness (a skin the particles are kept out of) and Coulomb friction, and their validation.

use super::{bad, check_vec};
use crate::error::{Bound, Error, Result};

/// A rigid, fixed obstacle the particles cannot enter: applied after every step of every method, on
/// both backends (`shaders/collide.wgsl`, its twin
/// [`crate::reference::collide`]), as a projection with an inelastic, Coulomb-friction velocity
/// response. One kernel handles every kind (the GPU record has a kind tag and three `vec4` of shape
/// data).
///
/// The shapes other than the half-space have a `thickness` t ≥ 0: a particle is kept at a distance of
/// at least t from the shape's surface (the shape inflated by t), so a cloth rests on a skin of
/// thickness t; [`crate::reference::stats::penetration`] measures how deep particles sit inside that
/// skin, as a fraction of t.
///
/// In a scene file (serde, [`crate::scene_file`]) each is written by its variant's name and fields,
/// e.g. `Sphere(center: (0.0, 0.0, 0.0), radius: 0.35, thickness: 0.01, friction: 0.5)`; a box's
/// `rotation` may be left out (axis-aligned).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Collider {
    /// The half-space n·x ≥ d: particles stay on the side the normal points to. The normal need not
    /// be unit (it is normalized when the model is laid out), but must be finite and non-zero.
    HalfSpace {
        /// The outward normal n.
        normal: [f64; 3],
        /// The offset d (m): the boundary is n̂·x = d/|n|.
        offset: f64,
        /// The Coulomb friction coefficient μ ≥ 0.
        friction: f64,
    },
    /// A solid sphere.
    Sphere {
        /// Its centre (m).
        center: [f64; 3],
        /// Its radius r ≥ 0 (m).
        radius: f64,
        /// The skin t ≥ 0 (m): particles are kept at |x − c| ≥ r + t.
        thickness: f64,
        /// The Coulomb friction coefficient μ ≥ 0.
        friction: f64,
    },
    /// A capsule: the points within `radius` of the segment from `a` to `b`.
    Capsule {
        /// One end of its axis (m).
        a: [f64; 3],
        /// The other end of its axis (m); may equal `a` (a sphere).
        b: [f64; 3],
        /// Its radius r ≥ 0 (m).
        radius: f64,
        /// The skin t ≥ 0 (m).
        thickness: f64,
        /// The Coulomb friction coefficient μ ≥ 0.
        friction: f64,
    },
    /// An oriented box: centre c, half-extents e along its own axes, turned by the unit quaternion q
    /// (world = c + q·local).
    Box {
        /// Its centre (m).
        center: [f64; 3],
        /// Its half-extents along its local x, y, z, each > 0 (m).
        half_extents: [f64; 3],
        /// Its orientation, a quaternion (x, y, z, w) (normalized when the model is laid out; must be
        /// finite and non-zero); `[0, 0, 0, 1]` is axis-aligned.
        #[serde(default = "identity")]
        rotation: [f64; 4],
        /// The skin t ≥ 0 (m).
        thickness: f64,
        /// The Coulomb friction coefficient μ ≥ 0.
        friction: f64,
    },
}

fn identity() -> [f64; 4] {
    [0.0, 0.0, 0.0, 1.0]
}

impl Collider {
    /// The ground plane: the half-space y ≥ `y0`, with friction μ.
    pub fn ground(y0: f64, friction: f64) -> Self {
        Collider::HalfSpace { normal: [0.0, 1.0, 0.0], offset: y0, friction }
    }

    /// A sphere of radius `radius` at `center` with skin `thickness` and friction μ.
    pub fn sphere(center: [f64; 3], radius: f64, thickness: f64, friction: f64) -> Self {
        Collider::Sphere { center, radius, thickness, friction }
    }

    /// An axis-aligned box (identity rotation).
    pub fn aabb(center: [f64; 3], half_extents: [f64; 3], thickness: f64, friction: f64) -> Self {
        Collider::Box { center, half_extents, rotation: [0.0, 0.0, 0.0, 1.0], thickness, friction }
    }

    /// The skin thickness t (0 for the half-space).
    pub fn thickness(&self) -> f64 {
        match *self {
            Collider::HalfSpace { .. } => 0.0,
            Collider::Sphere { thickness, .. } | Collider::Capsule { thickness, .. } | Collider::Box { thickness, .. } => thickness,
        }
    }

    /// The Coulomb friction coefficient μ.
    pub fn friction(&self) -> f64 {
        match *self {
            Collider::HalfSpace { friction, .. }
            | Collider::Sphere { friction, .. }
            | Collider::Capsule { friction, .. }
            | Collider::Box { friction, .. } => friction,
        }
    }

    /// The same collider with a unit normal and a unit quaternion (the form the kernels use).
    pub fn normalized(&self) -> Self {
        match *self {
            Collider::HalfSpace { normal, offset, friction } => {
                let l = (normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]).sqrt();
                Collider::HalfSpace { normal: normal.map(|c| c / l), offset: offset / l, friction }
            }
            Collider::Box { center, half_extents, rotation, thickness, friction } => {
                let l = rotation.iter().map(|c| c * c).sum::<f64>().sqrt();
                Collider::Box { center, half_extents, rotation: rotation.map(|c| c / l), thickness, friction }
            }
            other => other,
        }
    }

    /// The same collider moved by `d` (m): a half-space's offset grows by n̂·d (for a unit normal; pass
    /// a [`Collider::normalized`] one), every other shape's points move by d. Rotation is kept.
    pub fn translated(&self, d: [f64; 3]) -> Self {
        let add = |p: [f64; 3]| [p[0] + d[0], p[1] + d[1], p[2] + d[2]];
        match *self {
            Collider::HalfSpace { normal, offset, friction } => {
                let nd = normal[0] * d[0] + normal[1] * d[1] + normal[2] * d[2];
                Collider::HalfSpace { normal, offset: offset + nd, friction }
            }
            Collider::Sphere { center, radius, thickness, friction } => {
                Collider::Sphere { center: add(center), radius, thickness, friction }
            }
            Collider::Capsule { a, b, radius, thickness, friction } => {
                Collider::Capsule { a: add(a), b: add(b), radius, thickness, friction }
            }
            Collider::Box { center, half_extents, rotation, thickness, friction } => {
                Collider::Box { center: add(center), half_extents, rotation, thickness, friction }
            }
        }
    }

    /// Checks collider `c`: finite data, radius and thickness ≥ 0, half-extents > 0, μ finite and ≥ 0.
    pub(crate) fn validate(&self, c: usize) -> Result<()> {
        let field = |name: &str| format!("colliders[{c}].{name}");
        let nonneg = |name: &str, v: f64| -> Result<()> {
            if !v.is_finite() || v < 0.0 {
                return Err(Error::invalid(&field(name), v, Bound::NonNegative));
            }
            Ok(())
        };
        let point = |name: &str, p: &[f64; 3]| -> Result<()> {
            if p.iter().all(|x| x.is_finite()) {
                Ok(())
            } else {
                Err(Error::invalid(&field(name), *p, Bound::Finite))
            }
        };
        match *self {
            Collider::HalfSpace { normal, offset, friction } => {
                check_vec(&field("normal"), &normal)?;
                if normal.iter().all(|&x| x == 0.0) {
                    return Err(Error::model(field("normal"), normal, Bound::NonZero));
                }
                if !offset.is_finite() {
                    return Err(bad(field("offset"), offset, Bound::Finite));
                }
                if !friction.is_finite() || friction < 0.0 {
                    return Err(bad(field("friction"), friction, Bound::NonNegative));
                }
            }
            Collider::Sphere { center, radius, thickness, friction } => {
                point("center", &center)?;
                nonneg("radius", radius)?;
                nonneg("thickness", thickness)?;
                nonneg("friction", friction)?;
            }
            Collider::Capsule { a, b, radius, thickness, friction } => {
                point("a", &a)?;
                point("b", &b)?;
                nonneg("radius", radius)?;
                nonneg("thickness", thickness)?;
                nonneg("friction", friction)?;
            }
            Collider::Box { center, half_extents, rotation, thickness, friction } => {
                point("center", &center)?;
                for (k, &e) in half_extents.iter().enumerate() {
                    if !e.is_finite() || e <= 0.0 {
                        return Err(Error::invalid(&field(&format!("half_extents[{k}]")), e, Bound::Positive));
                    }
                }
                if !rotation.iter().all(|x| x.is_finite()) || rotation.iter().all(|&x| x == 0.0) {
                    return Err(Error::invalid(
                        &field("rotation"),
                        format!("{rotation:?}"),
                        Bound::Other("must be a finite, non-zero quaternion".into()),
                    ));
                }
                nonneg("thickness", thickness)?;
                nonneg("friction", friction)?;
            }
        }
        Ok(())
    }
}
