//! Force fields (issue #17 item 4; the mass-spring lecture's "Forces: Spatial Fields": wind,
//! attractors, repellers, vortices, "can depend on time (e.g., wind gusts)"): point attractors and
//! repellers and vortices, each with a falloff and an optional box outside which it is off, and a
//! gusting aerodynamic wind that acts on triangles through their normals.
//!
//! The point fields are accelerations (m/s², independent of the mass, like gravity) evaluated inside
//! every force gather (`external_accel` in `shaders/shared/forces.wgsl`, its twin
//! [`crate::reference::fields::field_accel`]). The aerodynamic wind is a per-step pass before the step
//! (`shaders/wind.wgsl`, twin [`crate::reference::fields::wind_kick`]).

use super::{bad, check_vec};
use crate::error::{Bound, Error, Result};

/// The most point fields a model may have (they live in the GPU's `Params` block).
pub const MAX_FIELDS: usize = 4;

/// How a point field's strength falls off with the distance d from its centre (from its axis, for a
/// vortex): the factor φ(d) ∈ [0, 1] that multiplies the strength.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Falloff {
    /// φ = 1 everywhere.
    Constant,
    /// Softened inverse square: φ = r²/(d² + r²) with the softening radius r > 0: 1 at the centre,
    /// r²/d² far away (so no singularity at d = 0).
    InverseSquare {
        /// The softening radius r > 0 (m).
        radius: f64,
    },
    /// Linear to zero at the radius R > 0: φ = max(0, 1 − d/R).
    Linear {
        /// The radius R > 0 (m) where the field ends.
        radius: f64,
    },
    /// Smooth to zero at the radius R > 0: φ = 1 − (3t² − 2t³), t = min(d/R, 1) (zero slope at both ends).
    Smooth {
        /// The radius R > 0 (m) where the field ends.
        radius: f64,
    },
}

impl Falloff {
    /// The falloff's code in the GPU record (0 constant, 1 inverse square, 2 linear, 3 smooth) and its radius.
    pub fn code(&self) -> (u32, f64) {
        match *self {
            Falloff::Constant => (0, 0.0),
            Falloff::InverseSquare { radius } => (1, radius),
            Falloff::Linear { radius } => (2, radius),
            Falloff::Smooth { radius } => (3, radius),
        }
    }
}

/// What a point field does.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FieldKind {
    /// An attractor (strength > 0) or repeller (strength < 0): a = −s·φ(d)·(x − c)/d, d = |x − c|.
    Point,
    /// A vortex around the line through the centre along `axis`: a = s·φ(ρ)·â × r⊥/ρ, with r⊥ the
    /// part of x − c across the axis and ρ = |r⊥| (counter-clockwise about â for s > 0).
    Vortex {
        /// The axis (m; need not be unit, must be non-zero).
        axis: [f64; 3],
    },
}

/// A point field: an acceleration that depends on the position only (zero within 1e-9 m of the centre or
/// axis, where it has no direction).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// Attractor/repeller or vortex.
    pub kind: FieldKind,
    /// Its centre (m).
    pub center: [f64; 3],
    /// The signed strength s (m/s²): the acceleration where φ = 1.
    pub strength: f64,
    /// How it falls off with the distance.
    pub falloff: Falloff,
    /// Axis-aligned box `(min, max)` outside which the field is off (`None`: everywhere).
    #[serde(default)]
    pub bounds: Option<([f64; 3], [f64; 3])>,
}

impl Field {
    /// An attractor (s > 0) or repeller (s < 0) at `center`.
    pub fn point(center: [f64; 3], strength: f64, falloff: Falloff) -> Self {
        Field { kind: FieldKind::Point, center, strength, falloff, bounds: None }
    }

    /// A vortex about the line through `center` along `axis`.
    pub fn vortex(center: [f64; 3], axis: [f64; 3], strength: f64, falloff: Falloff) -> Self {
        Field { kind: FieldKind::Vortex { axis }, center, strength, falloff, bounds: None }
    }

    /// Checks the field; the error names `fields[index]` and the bad value.
    pub fn validate(&self, index: usize) -> Result<()> {
        let field = |name: &str| format!("fields[{index}].{name}");
        check_vec(&field("center"), &self.center)?;
        if !self.strength.is_finite() {
            return Err(bad(field("strength"), self.strength, Bound::Finite));
        }
        if let FieldKind::Vortex { axis } = self.kind {
            check_vec(&field("axis"), &axis)?;
            if axis.iter().all(|&c| c == 0.0) {
                return Err(Error::model(field("axis"), axis, Bound::NonZero));
            }
        }
        let (code, r) = self.falloff.code();
        if code != 0 && !(r.is_finite() && r > 0.0) {
            return Err(bad(field("falloff.radius"), r, Bound::Positive));
        }
        if let Some((lo, hi)) = self.bounds {
            check_vec(&field("bounds.min"), &lo)?;
            check_vec(&field("bounds.max"), &hi)?;
            for c in 0..3 {
                if lo[c] >= hi[c] {
                    return Err(Error::model(
                        field("bounds"),
                        format!("({lo:?}, {hi:?})"),
                        Bound::Other("empty or inverted box (min must be < max on every axis)".into()),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The unit axis (vortex) or zero (point).
    pub fn unit_axis(&self) -> [f64; 3] {
        match self.kind {
            FieldKind::Point => [0.0; 3],
            FieldKind::Vortex { axis } => {
                let l = super::dist(&axis, &[0.0; 3]);
                [axis[0] / l, axis[1] / l, axis[2] / l]
            }
        }
    }
}

/// Gusting aerodynamic wind on the model's triangles: each triangle of area A and unit normal n̂
/// (right-handed from its vertex order) feels f = c·A·(u·n̂)|u·n̂|·n̂ with u = w(t) − v̄ the air's velocity
/// relative to the triangle's mean velocity and c = ½ρC_d (kg/m³), split equally over its three
/// vertices. Only the normal part pushes (a flat plate); the force is quadratic in the relative speed,
/// so a flag flutters where the linear drag only leans it.
///
/// The air's velocity w(t) = base + gust·g(t), g(t) = 0.6 sin(2πft) + 0.4 sin(2π·2.17·ft + 1.1), a
/// deterministic sum of sines (the lecture's "wind gusts"). t is the simulation time at the start of
/// the engine's current batch of steps (a frame) on both backends: the `Params` block is written once
/// per frame, so the gust is held over a frame's substeps.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AeroWind {
    /// The mean wind (m/s).
    pub base: [f64; 3],
    /// The gust's amplitude (m/s): added to `base` times g(t) ∈ [−1, 1].
    #[serde(default)]
    pub gust: [f64; 3],
    /// The gust's frequency f (Hz, ≥ 0).
    #[serde(default)]
    pub frequency: f64,
    /// c = ½ρC_d (kg/m³, ≥ 0): air at 1.2 kg/m³ on a flat plate (C_d ≈ 1.2) gives about 0.7.
    pub coefficient: f64,
}

impl AeroWind {
    /// The air's velocity at time t (m/s): base + gust·g(t).
    pub fn at(&self, t: f64) -> [f64; 3] {
        let g = gust_shape(self.frequency, t);
        [self.base[0] + self.gust[0] * g, self.base[1] + self.gust[1] * g, self.base[2] + self.gust[2] * g]
    }

    /// Checks it; the error names `aero_wind.FIELD` and the bad value.
    pub fn validate(&self) -> Result<()> {
        check_vec("aero_wind.base", &self.base)?;
        check_vec("aero_wind.gust", &self.gust)?;
        if !(self.frequency.is_finite() && self.frequency >= 0.0) {
            return Err(bad("aero_wind.frequency".into(), self.frequency, Bound::NonNegative));
        }
        if !(self.coefficient.is_finite() && self.coefficient >= 0.0) {
            return Err(bad("aero_wind.coefficient".into(), self.coefficient, Bound::NonNegative));
        }
        Ok(())
    }
}

/// g(t) = 0.6 sin(2πft) + 0.4 sin(2π·2.17·ft + 1.1) (the WGSL `gust_shape` in `shaders/shared/common.wgsl`).
pub fn gust_shape(f: f64, t: f64) -> f64 {
    let p = std::f64::consts::TAU * f * t;
    0.6 * p.sin() + 0.4 * (2.17 * p + 1.1).sin()
}

/// The triangles around each particle (CSR), for the per-particle wind gather: for particle i,
/// `others[offsets[i]..offsets[i+1]]` are the other two vertices (j, k) of each triangle that has i, in
/// the triangle's cyclic order, so (x_j − x_i) × (x_k − x_i) is the triangle's normal seen from any vertex.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TriIncidence {
    /// `n + 1` offsets into `others`.
    pub offsets: Vec<u32>,
    /// (j, k) per incident triangle, triangles in increasing order within a particle.
    pub others: Vec<[u32; 2]>,
}

impl TriIncidence {
    /// Builds the lists of `n` particles (triangles with out-of-range vertices are skipped).
    pub fn build(n: usize, triangles: &[[u32; 3]]) -> Self {
        let ok = |t: &[u32; 3]| t.iter().all(|&v| (v as usize) < n);
        let mut offsets = vec![0u32; n + 1];
        for t in triangles.iter().filter(|t| ok(t)) {
            for &v in t {
                offsets[v as usize + 1] += 1;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut others = vec![[0u32; 2]; offsets[n] as usize];
        for t in triangles.iter().filter(|t| ok(t)) {
            for c in 0..3 {
                let i = t[c] as usize;
                others[fill[i] as usize] = [t[(c + 1) % 3], t[(c + 2) % 3]];
                fill[i] += 1;
            }
        }
        TriIncidence { offsets, others }
    }

    /// The (j, k) pairs of particle `i`.
    pub fn of(&self, i: usize) -> &[[u32; 2]] {
        &self.others[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// Checks the model's fields: at most [`MAX_FIELDS`] point fields, each valid, and the wind valid
/// (the wind needs triangles).
pub fn validate(fields: &[Field], aero: Option<&AeroWind>, n_triangles: usize) -> Result<()> {
    if fields.len() > MAX_FIELDS {
        return Err(Error::model(
            "fields.len()",
            fields.len(),
            Bound::at_most(MAX_FIELDS as u64).worded("too many point fields (at most {}: they live in the GPU's Params block)"),
        ));
    }
    for (i, f) in fields.iter().enumerate() {
        f.validate(i)?;
    }
    if let Some(a) = aero {
        a.validate()?;
        if n_triangles == 0 && a.coefficient != 0.0 {
            return Err(Error::model(
                "aero_wind",
                "0 triangles",
                Bound::Unsupported("the aerodynamic wind acts on triangles and the model has none".into()),
            ));
        }
    }
    Ok(())
}
