//! The model laid out for the f64 kernels (structure of arrays), as the kernels' `P`, `nbr` and `csr`
//! bindings give it to the GPU. Re-exported as `crate::cpu::CpuModel` and `crate::cpu::V3`.

use crate::error::Result;
use crate::model::{Incidence, Model};

/// The CPU's vector type.
pub type V3 = nalgebra::Vector3<f64>;

/// Springs shorter than this have no direction: their force and Jacobian are taken as zero, and a
/// field's centre or axis within it exerts none (the GPU uses the same guard, `EPS_LEN` in WGSL).
pub const EPS_LEN: f64 = 1e-9;

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
    /// The model's colliders with unit normals (the `collide` kernel applies them after every step),
    /// placed where they are at the engine's current time ([`CpuModel::place`]).
    pub colliders: Vec<crate::model::Collider>,
    /// Each collider's velocity (m/s) at that time: zero for a static one; the contact response acts on
    /// the particle's velocity relative to it.
    pub collider_velocity: Vec<V3>,
    /// The colliders as the model places them (time-independent), from which [`CpuModel::place`] moves them.
    pub colliders_rest: Vec<crate::model::Collider>,
    /// The scripted motions ([`crate::model::Motion`]).
    pub motions: Vec<crate::model::Motion>,
    /// The pinned particles that move: (particle, index into `motions`), in particle order.
    pub moving_pins: Vec<(u32, u32)>,
    /// Their positions in the model (the rest placement their path's offset is added to).
    pub moving_pins_rest: Vec<V3>,
    /// Self-collision, when on (applied after every step, before the colliders; see
    /// [`crate::reference::self_collision`]).
    pub self_collision: Option<crate::model::SelfCollision>,
    /// Provot's strain limiting after every step ([`crate::model::StrainLimit`]), `None` for none.
    pub strain_limit: Option<crate::model::StrainLimit>,
    /// The point fields (see [`crate::model::Field`]), in order.
    pub fields: Vec<CpuField>,
    /// The aerodynamic wind on the triangles (see [`crate::model::AeroWind`]).
    pub aero: Option<crate::model::AeroWind>,
    /// The triangles around each particle (empty without `aero`).
    pub tri: crate::model::TriIncidence,
    /// The simulation time (s) the gusts are evaluated at: the start of the engine's current batch of
    /// steps (as the GPU's `Params.time`).
    pub time: f64,
}

impl CpuModel {
    /// Whether anything moves along a path (colliders or pins).
    pub fn has_motion(&self) -> bool {
        !self.motions.is_empty()
    }

    /// Whether something does work that the external forces' power bound does not cover: a collider or
    /// pin moving along a path, or the aerodynamic wind (its bound needs every particle's air speed).
    /// Then the energy is not judged: neither by the guard nor by the adaptive step's energy check.
    pub fn unbounded_work(&self) -> bool {
        self.has_motion() || self.aero.is_some()
    }

    /// Each motion's (offset, velocity) at time `t` (s): [`crate::model::Path::offset`] and
    /// [`crate::model::Path::velocity`].
    pub fn motion_at(&self, t: f64) -> Vec<(V3, V3)> {
        self.motions.iter().map(|m| (V3::from(m.path.offset(t)), V3::from(m.path.velocity(t)))).collect()
    }

    /// Places the moving colliders where they are at time `t` (translated by their path's offset, with
    /// its velocity); static ones stay. Nothing to do without motions.
    pub fn place(&mut self, t: f64) {
        for m in &self.motions {
            if let crate::model::MotionTarget::Collider(c) = m.target {
                let (off, vel) = (m.path.offset(t), m.path.velocity(t));
                self.colliders[c] = self.colliders_rest[c].translated(off);
                self.collider_velocity[c] = V3::from(vel);
            }
        }
    }

    /// The springs' damping as a time (s): β = max k_d/k over the springs with k > 0 (0 without spring
    /// damping). About the rest state the springs' damping matrix is then at most βK, which is what
    /// Shinya's plan ([`crate::stepping::plan::h_max`]) needs. A spring with k = 0 adds no stiffness and
    /// is not counted.
    pub fn spring_damping(&self) -> f64 {
        self.k.iter().zip(&self.kd).filter(|(&k, _)| k > 0.0).map(|(&k, &kd)| kd / k).fold(0.0, f64::max)
    }

    /// Lays out a validated model.
    pub fn new(model: &Model) -> Result<Self> {
        model.validate()?;
        let f = &model.forces;
        let (cc, cs) = f.central.unwrap_or(([0.0; 3], 0.0));
        let moving = moving_pins(model);
        let mut cm = CpuModel {
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
            collider_velocity: vec![V3::zeros(); model.colliders.len()],
            colliders_rest: model.colliders.iter().map(|c| c.normalized()).collect(),
            motions: model.motions.clone(),
            moving_pins: moving.iter().map(|&(i, k)| (i as u32, k as u32)).collect(),
            moving_pins_rest: moving.iter().map(|&(i, _)| V3::from(model.positions[i])).collect(),
            self_collision: model.self_collision,
            strain_limit: model.strain_limit,
            fields: model.fields.iter().map(CpuField::new).collect(),
            aero: model.aero_wind,
            tri: if model.aero_wind.is_some() { model.tri_incidence() } else { Default::default() },
            time: 0.0,
        };
        cm.place(0.0);
        Ok(cm)
    }
}

/// The pinned particles that motions move, (particle, motion), in particle order; a particle named by
/// several motions follows the last one.
fn moving_pins(model: &Model) -> Vec<(usize, usize)> {
    use crate::model::MotionTarget;
    let mut by = vec![usize::MAX; model.n_particles()];
    for (k, m) in model.motions.iter().enumerate() {
        match &m.target {
            MotionTarget::AllPins => model.pinned.iter().enumerate().filter(|(_, &p)| p).for_each(|(i, _)| by[i] = k),
            MotionTarget::Pins(ps) => ps.iter().for_each(|&i| by[i as usize] = k),
            MotionTarget::Collider(_) => {}
        }
    }
    by.iter().enumerate().filter(|(_, &k)| k != usize::MAX).map(|(i, &k)| (i, k)).collect()
}

/// One point field laid out for the kernels: the WGSL record's four `vec4` (see `gpu::base::layout`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuField {
    /// The centre c.
    pub center: V3,
    /// The signed strength s (m/s²).
    pub strength: f64,
    /// The unit axis â of a vortex; zero for a point field.
    pub axis: V3,
    /// The falloff code (0 constant, 1 inverse square, 2 linear, 3 smooth).
    pub falloff: u32,
    /// The falloff radius.
    pub radius: f64,
    /// The box (min, max) outside which the field is off.
    pub bounds: Option<(V3, V3)>,
}

impl CpuField {
    /// Lays out a validated field.
    pub fn new(f: &crate::model::Field) -> Self {
        let (falloff, radius) = f.falloff.code();
        CpuField {
            center: V3::from(f.center),
            strength: f.strength,
            axis: V3::from(f.unit_axis()),
            falloff,
            radius,
            bounds: f.bounds.map(|(a, b)| (V3::from(a), V3::from(b))),
        }
    }
}
