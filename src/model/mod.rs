//! The mass-spring model: particles, springs, pins and the external force fields,
//! plus validation and the CSR incidence lists that every gather kernel uses.

mod bending;
mod builders;
mod collider;
mod csr;
mod cursor;
mod edges;
mod fields;
mod motion;
pub mod scene_builders;
mod self_collision;
mod strain_limit;

pub use bending::add_bending;
pub use builders::*;
pub use collider::Collider;
pub use csr::Incidence;
pub use cursor::Cursor;
pub use fields::{gust_shape, AeroWind, Falloff, Field, FieldKind, TriIncidence, MAX_FIELDS};
pub use motion::{Motion, MotionTarget, Path};
pub use self_collision::SelfCollision;
pub use strain_limit::{
    StrainLimit, DEFAULT_STRAIN_ACCELERATION, DEFAULT_STRAIN_LIMIT, DEFAULT_STRAIN_PASSES, DEFAULT_STRAIN_RELAXATION,
    DEFAULT_STRAIN_TOLERANCE, STRAIN_ACCELERATION_AFTER,
};

use crate::error::{Bound, Error, Result};

/// A damped Hooke spring between particles `a` and `b`.
///
/// Force on `a` (the notes' eq. for a damped spring, Witkin/Baraff):
/// `f_a = -[k (|d| - L) + kd (v_a - v_b)·d̂] d̂`, `d = x_a - x_b`, and `f_b = -f_a`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    /// First endpoint.
    pub a: u32,
    /// Second endpoint.
    pub b: u32,
    /// Rest length L (m).
    pub rest: f64,
    /// Stiffness k (N/m); negative only for a zero-rest-length spring (a term of [`add_bending`]'s energy).
    pub k: f64,
    /// Damping along the spring kd (N·s/m).
    pub kd: f64,
}

/// External forces and damping that act on every free particle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Forces {
    /// Gravity g (m/s²), applied as m·g.
    pub gravity: [f64; 3],
    /// Air drag d₀ (1/s): the force −d₀·m·(v − wind); Shinya app. C, the d₀ of eq. 28.
    pub drag: f64,
    /// Wind (air) velocity that the drag acts against (m/s).
    pub wind: [f64; 3],
    /// A central (harmonic) field: acceleration −s·(x − c), `(c, s)`. The slides' "force field that pulls
    /// particles to the origin with magnitude proportional to distance".
    pub central: Option<([f64; 3], f64)>,
}

impl Default for Forces {
    fn default() -> Self {
        Forces { gravity: [0.0, -9.81, 0.0], drag: 0.0, wind: [0.0; 3], central: None }
    }
}

impl Forces {
    /// No external force at all (no gravity, no drag, no field).
    pub fn none() -> Self {
        Forces { gravity: [0.0; 3], drag: 0.0, wind: [0.0; 3], central: None }
    }
}

/// A mass-spring model: the initial state, the springs and the force fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Initial positions (m).
    pub positions: Vec<[f64; 3]>,
    /// Initial velocities (m/s).
    pub velocities: Vec<[f64; 3]>,
    /// Masses (kg), all > 0. A pinned particle keeps its mass (for energy and momentum) but does not move.
    pub masses: Vec<f64>,
    /// Pinned particles are held where they start.
    pub pinned: Vec<bool>,
    /// The springs.
    pub springs: Vec<Spring>,
    /// External forces.
    pub forces: Forces,
    /// Triangles for drawing (cloth and meshes); empty for strands and lattices.
    pub triangles: Vec<[u32; 3]>,
    /// Obstacles (none by default: a model without them steps exactly as before).
    pub colliders: Vec<Collider>,
    /// Scripted motion of colliders and pinned particles along keyframed paths (none by default).
    pub motions: Vec<Motion>,
    /// Self-collision (`None` by default: a model without it steps exactly as before).
    pub self_collision: Option<SelfCollision>,
    /// Provot's strain limiting after every step (none by default: the steps are exactly as before).
    pub strain_limit: Option<StrainLimit>,
    /// Point force fields (attractors, repellers, vortices; at most [`MAX_FIELDS`]), none by default.
    pub fields: Vec<Field>,
    /// Gusting aerodynamic wind on the triangles (`None` by default).
    pub aero_wind: Option<AeroWind>,
}

impl Model {
    /// An empty model with the given forces.
    pub fn new(forces: Forces) -> Self {
        Model {
            positions: Vec::new(),
            velocities: Vec::new(),
            masses: Vec::new(),
            pinned: Vec::new(),
            springs: Vec::new(),
            forces,
            triangles: Vec::new(),
            colliders: Vec::new(),
            motions: Vec::new(),
            self_collision: None,
            strain_limit: None,
            fields: Vec::new(),
            aero_wind: None,
        }
    }

    /// Number of particles.
    pub fn n_particles(&self) -> usize {
        self.positions.len()
    }

    /// Adds a particle and returns its index.
    pub fn add_particle(&mut self, x: [f64; 3], mass: f64) -> u32 {
        self.positions.push(x);
        self.velocities.push([0.0; 3]);
        self.masses.push(mass);
        self.pinned.push(false);
        (self.positions.len() - 1) as u32
    }

    /// Adds a spring whose rest length is the current distance between its endpoints.
    /// Indices are checked by [`Model::validate`], not here.
    pub fn add_spring(&mut self, a: u32, b: u32, k: f64, kd: f64) {
        let rest = match (self.positions.get(a as usize), self.positions.get(b as usize)) {
            (Some(pa), Some(pb)) => dist(pa, pb),
            _ => 0.0,
        };
        self.springs.push(Spring { a, b, rest, k, kd });
    }

    /// Pins particle `i`: it stays where it is, with zero velocity.
    pub fn pin(&mut self, i: usize) {
        if i < self.pinned.len() {
            self.pinned[i] = true;
            self.velocities[i] = [0.0; 3];
        }
    }

    /// Sets every spring's stiffness.
    pub fn set_stiffness(&mut self, k: f64) {
        for s in &mut self.springs {
            s.k = k;
        }
    }

    /// Scales every spring's stiffness.
    pub fn scale_stiffness(&mut self, f: f64) {
        for s in &mut self.springs {
            s.k *= f;
        }
    }

    /// Total mass.
    pub fn total_mass(&self) -> f64 {
        self.masses.iter().sum()
    }

    /// Checks every rule a simulator relies on. The error names the field, its index and the value.
    ///
    /// Rules: finite positions, velocities and force parameters; mass > 0; k ≥ 0; kd ≥ 0; rest length ≥ 0;
    /// spring endpoints in range and distinct; the per-particle arrays of equal length; colliders with
    /// finite, non-zero normals, finite offsets and friction ≥ 0; point fields and the aerodynamic wind
    /// as [`Field::validate`] and [`AeroWind::validate`] say.
    pub fn validate(&self) -> Result<()> {
        let n = self.positions.len();
        for (name, len) in [("velocities", self.velocities.len()), ("masses", self.masses.len()), ("pinned", self.pinned.len())] {
            if len != n {
                return Err(Error::model(
                    format!("{name}.len()"),
                    len,
                    Bound::length(n, "must equal the number of particles (positions.len())"),
                ));
            }
        }
        for i in 0..n {
            check_vec(&format!("particles[{i}].position"), &self.positions[i])?;
            check_vec(&format!("particles[{i}].velocity"), &self.velocities[i])?;
            let m = self.masses[i];
            if !m.is_finite() {
                return Err(bad(format!("particles[{i}].mass"), m, Bound::Finite));
            }
            if m <= 0.0 {
                return Err(bad(format!("particles[{i}].mass"), m, Bound::above(0.0)));
            }
        }
        for (s, sp) in self.springs.iter().enumerate() {
            for (end, idx) in [("a", sp.a), ("b", sp.b)] {
                if idx as usize >= n {
                    return Err(Error::model(
                        format!("springs[{s}].{end}"),
                        idx,
                        Bound::Index {
                            len: n as u64,
                            rule: if n == 0 {
                                "endpoint out of range (the model has no particles)"
                            } else {
                                "endpoint out of range (must be < the number of particles)"
                            },
                        },
                    ));
                }
            }
            if sp.a == sp.b {
                return Err(Error::model(format!("springs[{s}].b"), sp.b, Bound::Other("a spring from a particle to itself".into())));
            }
            for (name, v) in [("rest", sp.rest), ("k", sp.k), ("kd", sp.kd)] {
                if !v.is_finite() {
                    return Err(bad(format!("springs[{s}].{name}"), v, Bound::Finite));
                }
            }
            if sp.rest < 0.0 {
                return Err(bad(format!("springs[{s}].rest"), sp.rest, Bound::at_least(0.0).worded("rest length must be >= {}")));
            }
            // a zero-rest-length spring may pull apart: a term of a quadratic energy such as
            // [`add_bending`]'s, whose springs sum to a positive semi-definite stiffness
            if sp.k < 0.0 && sp.rest > 0.0 {
                return Err(bad(
                    format!("springs[{s}].k"),
                    sp.k,
                    Bound::at_least(0.0).worded("stiffness must be >= {} (only a zero-rest-length spring may be negative)"),
                ));
            }
            if sp.kd < 0.0 {
                return Err(bad(format!("springs[{s}].kd"), sp.kd, Bound::at_least(0.0).worded("damping must be >= {}")));
            }
        }
        let f = &self.forces;
        check_vec("forces.gravity", &f.gravity)?;
        check_vec("forces.wind", &f.wind)?;
        if !f.drag.is_finite() || f.drag < 0.0 {
            return Err(bad("forces.drag".into(), f.drag, Bound::NonNegative));
        }
        if let Some((c, s)) = f.central {
            check_vec("forces.central.center", &c)?;
            if !s.is_finite() || s < 0.0 {
                return Err(bad("forces.central.strength".into(), s, Bound::NonNegative));
            }
        }
        for (c, col) in self.colliders.iter().enumerate() {
            col.validate(c)?;
        }
        for (k, mo) in self.motions.iter().enumerate() {
            mo.validate(k, self.colliders.len(), &self.pinned)?;
        }
        if let Some(sc) = &self.self_collision {
            sc.validate()?;
        }
        if let Some(sl) = &self.strain_limit {
            sl.validate()?;
        }
        fields::validate(&self.fields, self.aero_wind.as_ref(), self.triangles.len())?;
        for (t, tri) in self.triangles.iter().enumerate() {
            for &v in tri {
                if v as usize >= n {
                    return Err(Error::model(format!("triangles[{t}]"), v, Bound::Index { len: n as u64, rule: "vertex out of range" }));
                }
            }
        }
        Ok(())
    }

    /// The CSR incidence lists of the springs (see [`Incidence`]).
    pub fn incidence(&self) -> Incidence {
        Incidence::build(self.n_particles(), &self.springs)
    }

    /// The triangles around each particle (see [`TriIncidence`]), for the aerodynamic wind.
    pub fn tri_incidence(&self) -> TriIncidence {
        TriIncidence::build(self.n_particles(), &self.triangles)
    }

    /// Axis-aligned bounds of the initial positions (min, max).
    pub fn bounds(&self) -> ([f64; 3], [f64; 3]) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in &self.positions {
            for c in 0..3 {
                lo[c] = lo[c].min(p[c]);
                hi[c] = hi[c].max(p[c]);
            }
        }
        (lo, hi)
    }
}

pub(crate) fn bad(field: String, v: f64, bound: Bound) -> Error {
    Error::model(field, v, bound)
}

pub(crate) fn check_vec(field: &str, v: &[f64; 3]) -> Result<()> {
    if v.iter().all(|c| c.is_finite()) {
        Ok(())
    } else {
        Err(Error::model(field, *v, Bound::Finite))
    }
}

pub(crate) fn dist(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}
