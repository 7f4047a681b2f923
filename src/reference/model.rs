//! The model laid out for the f64 kernels (structure of arrays), as the kernels' `P`, `nbr` and `csr`
//! bindings give it to the GPU. Re-exported as `crate::cpu::CpuModel` and `crate::cpu::V3`.

use crate::error::Result;
use crate::model::{Incidence, Model};

/// The CPU's vector type.
pub type V3 = nalgebra::Vector3<f64>;

/// A model laid out for the CPU kernels (structure of arrays).
#[derive(Clone, Debug)]
pub struct CpuModel {
    /// Number of particles.
    pub n: usize,
    /// Masses.
    pub mass: Vec<f64>,
    /// 1/m, 0 for pinned particles.
    pub inv_mass: Vec<f64>,
    /// Each spring's first end (a; the force of `spring_force` acts on it).
    pub end_a: Vec<u32>,
    /// Each spring's second end (b).
    pub end_b: Vec<u32>,
    /// Rest lengths.
    pub rest: Vec<f64>,
    /// Stiffnesses.
    pub k: Vec<f64>,
    /// Spring damping.
    pub kd: Vec<f64>,
    /// CSR incidence lists.
    pub incidence: Incidence,
    /// Gravity.
    pub gravity: V3,
    /// Drag d₀.
    pub drag: f64,
    /// Wind.
    pub wind: V3,
    /// Central field centre.
    pub central_center: V3,
    /// Central field strength s (1/s²), 0 for none.
    pub central_strength: f64,
    /// The cursor spring the explicit methods and LEU add to the gather (see [`crate::model::Cursor`]);
    /// `None` leaves every result bit for bit as without it. Set through
    /// [`crate::cpu::CpuEngine::set_cursor`], which keeps it `None` for the implicit methods.
    pub cursor: Option<crate::model::Cursor>,
    /// The model's colliders with unit normals (the `collide` kernel applies them after every step).
    pub colliders: Vec<crate::model::Collider>,
    /// The point fields (see [`crate::model::Field`]), in order.
    pub fields: Vec<super::fields::CpuField>,
    /// The aerodynamic wind on the triangles (see [`crate::model::AeroWind`]).
    pub aero: Option<crate::model::AeroWind>,
    /// The triangles around each particle (empty without `aero`).
    pub tri: crate::model::TriIncidence,
    /// The simulation time (s) the gusts are evaluated at: the start of the engine's current batch of
    /// steps (as the GPU's `Params.time`).
    pub time: f64,
}

impl CpuModel {
    /// Lays out a validated model.
    pub fn new(model: &Model) -> Result<Self> {
        model.validate()?;
        let f = &model.forces;
        let (cc, cs) = f.central.unwrap_or(([0.0; 3], 0.0));
        Ok(CpuModel {
            n: model.n_particles(),
            mass: model.masses.clone(),
            inv_mass: model.masses.iter().zip(&model.pinned).map(|(m, &p)| if p { 0.0 } else { 1.0 / m }).collect(),
            end_a: model.springs.iter().map(|s| s.a).collect(),
            end_b: model.springs.iter().map(|s| s.b).collect(),
            rest: model.springs.iter().map(|s| s.rest).collect(),
            k: model.springs.iter().map(|s| s.k).collect(),
            kd: model.springs.iter().map(|s| s.kd).collect(),
            incidence: model.incidence(),
            gravity: V3::from(f.gravity),
            drag: f.drag,
            wind: V3::from(f.wind),
            central_center: V3::from(cc),
            central_strength: cs,
            cursor: None,
            colliders: model.colliders.iter().map(|c| c.normalized()).collect(),
            fields: model.fields.iter().map(super::fields::CpuField::new).collect(),
            aero: model.aero_wind,
            tri: if model.aero_wind.is_some() { model.tri_incidence() } else { Default::default() },
            time: 0.0,
        })
    }
}
