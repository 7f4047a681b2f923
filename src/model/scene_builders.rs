//! The builders a scene file names ([`BUILDERS`]): the model builders of [`crate::model`] and the
//! scenes' own (the flag, the rail, the gusting flag, the vortex, the drape), with the options they take.
//! Below the scene files ([`crate::scene_file`]), which name them, and the registry ([`crate::scene`]).

use crate::error::{Bound, Error, Result};
use crate::model::{self, Collider, Forces, Model};
use std::path::{Path, PathBuf};

/// Options a scene takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneOptions {
    /// Resolution (particles per side or per strand); each scene has its default.
    pub size: Option<usize>,
    /// Spring stiffness k (N/m) outright, instead of the scene's resolution-aware default.
    pub stiffness: Option<f64>,
    /// An OBJ file, for the `mesh` scene.
    pub mesh: Option<PathBuf>,
}

impl SceneOptions {
    /// Checks the options that need no model built; the error names the field.
    pub fn validate(&self) -> Result<()> {
        if let Some(k) = self.stiffness.filter(|k| !(k.is_finite() && *k > 0.0)) {
            return Err(Error::invalid("stiffness", k, Bound::Positive));
        }
        Ok(())
    }
}

/// The builders a scene file can name (Rust code, in this module).
pub const BUILDERS: &[&str] = &[
    "curtain",
    "cloth",
    "rope",
    "hair",
    "slinky",
    "jelly",
    "orbit",
    "flag",
    "drape",
    "drape-sphere",
    "mesh",
    "rail",
    "folds",
    "flag-gusts",
    "vortex",
];

/// A builder's default size: its built-in scene's (`scenes/NAME.ron`; a test holds the two together); 0
/// for `mesh`, which takes its size from its OBJ file.
pub fn default_size(builder: &str) -> usize {
    match builder {
        "curtain" | "cloth" => 81,
        "rope" => 32,
        "hair" | "folds" | "vortex" => 24,
        "slinky" => 64,
        "jelly" => 8,
        "orbit" => 1,
        "flag" | "flag-gusts" | "drape" | "drape-sphere" | "rail" => 41,
        _ => 0,
    }
}

/// Runs builder `name` ([`BUILDERS`]) with `n` particles per side or strand, stiffness `k` (the
/// builder's default when `None`) and, for `mesh`, the OBJ file `mesh`. Not validated.
pub fn builder(name: &str, n: usize, k: Option<f64>, mesh: Option<&Path>) -> Result<Model> {
    match name {
        "curtain" => model::curtain(n, k),
        "cloth" => model::cloth(n, k),
        "rope" => model::rope(n, k),
        "hair" => model::hair(n, k),
        "slinky" => model::slinky(n, k.unwrap_or(20.0), 0.2, 0.5),
        "jelly" => model::jelly(n, k),
        "orbit" => {
            // Start (1, 0, 0), velocity (0, 5, 0), pulled to the origin with magnitude proportional to the
            // distance: a = −25 x, so the orbit is the unit circle with period 2π/5.
            let mut m = Model::new(Forces { central: Some(([0.0; 3], k.unwrap_or(25.0))), ..Forces::none() });
            m.add_particle([1.0, 0.0, 0.0], 1.0);
            m.velocities[0] = [0.0, 5.0, 0.0];
            Ok(m)
        }
        "flag" => flag(n, k),
        "flag-gusts" => flag_gusts(n, k),
        "vortex" => vortex(n, k),
        "drape" => drape(n, k),
        "drape-sphere" => model::drape_sphere(n, k),
        "rail" => rail(n, k),
        "folds" => model::folds(n, k),
        "mesh" => {
            let path = mesh.ok_or_else(|| Error::invalid("mesh", "(none)", Bound::Other("the mesh scene needs --mesh path.obj".into())))?;
            let k = k.unwrap_or(500.0);
            let mut m = model::load_obj(path, 1.0, k, k / 10.0)?;
            // hang it from its two highest vertices
            let mut idx: Vec<usize> = (0..m.n_particles()).collect();
            idx.sort_by(|&a, &b| m.positions[b][1].total_cmp(&m.positions[a][1]));
            for &i in idx.iter().take(2) {
                m.pin(i);
            }
            Ok(m)
        }
        _ => Err(Error::invalid("builder", name, Bound::OneOf(BUILDERS.iter().map(|b| b.to_string()).collect()))),
    }
}

/// The flag: Liu et al.'s cloth (structural, one diagonal, bend springs; k as [`model::curtain`]) stood
/// up in the x-y plane, 1 m × 1 m, pinned along its left edge (the pole, x = 0), with air drag
/// d₀ = 1/s against a wind of (10, 0, 1) m/s: the drag pulls the cloth out along +x about as hard as
/// gravity pulls it down.
pub fn flag(n: usize, k: Option<f64>) -> Result<Model> {
    let mut m = model::curtain(n, k)?;
    for p in m.positions.iter_mut() {
        // curtain: (c·s − 0.5, 0, r·s) → flag: (c·s, 1 − r·s, 0)
        *p = [p[0] + 0.5, 1.0 - p[2], 0.0];
    }
    for pin in m.pinned.iter_mut() {
        *pin = false;
    }
    for r in 0..n {
        m.pin(r * n);
    }
    m.forces.drag = 1.0;
    m.forces.wind = [10.0, 0.0, 1.0];
    Ok(m)
}

/// The rail curtain: Liu et al.'s cloth (as [`model::curtain`]) hanging in the x-y plane, 1 m × 1 m,
/// from rings along its top edge (every [`RAIL_RING_SPACING`]th particle of the top row and its last one
/// pinned), with air drag d₀ = 0.5/s. The scene file `rail` moves the rings along a path (the rail).
pub fn rail(n: usize, k: Option<f64>) -> Result<Model> {
    let mut m = model::curtain(n, k)?;
    for p in m.positions.iter_mut() {
        // curtain: (c·s − 0.5, 0, r·s) → (c·s − 0.5, 1 − r·s, 0)
        *p = [p[0], 1.0 - p[2], 0.0];
    }
    for pin in m.pinned.iter_mut() {
        *pin = false;
    }
    for c in (0..n).step_by(RAIL_RING_SPACING).chain([n.saturating_sub(1)]) {
        m.pin(c);
    }
    m.forces.drag = 0.5;
    Ok(m)
}

/// The rail curtain's rings: every this many particles along the top row.
pub const RAIL_RING_SPACING: usize = 8;
/// The flag in gusting wind (issue #17 item 4): [`flag`] without its linear drag's wind (d₀ = 0.1/s
/// against still air, a light damping), in a [`model::AeroWind`] that pushes on its triangles through
/// their normals: c = ½ρC_d = 0.7 kg/m³, the air at (8, 0, 1) + (2, 0, 4)·g(t) m/s with the gust
/// g(t) at 0.7 Hz ([`model::gust_shape`]), so the wind swings across the flag's plane and it flutters.
pub fn flag_gusts(n: usize, k: Option<f64>) -> Result<Model> {
    let mut m = flag(n, k)?;
    m.forces.drag = 0.1;
    m.forces.wind = [0.0; 3];
    m.aero_wind = Some(model::AeroWind { base: [8.0, 0.0, 1.0], gust: [2.0, 0.0, 4.0], frequency: 0.7, coefficient: 0.7 });
    Ok(m)
}

/// Strands in a vortex (issue #17 item 4): [`model::hair`]'s 16 strands, with air drag d₀ = 0.5/s, in a
/// vortex of 6 m/s² about the vertical axis through the roots' centre that falls smoothly to zero 0.6 m
/// from the axis and is off above y = 0.5, and a softened attractor (2 m/s², inverse square with a 0.2 m
/// softening) at the roots' centre pulling the tips back toward the axis.
pub fn vortex(n: usize, k: Option<f64>) -> Result<Model> {
    let mut m = model::hair(n, k)?;
    m.forces.drag = 0.5;
    let mut v = model::Field::vortex([0.0; 3], [0.0, 1.0, 0.0], 6.0, model::Falloff::Smooth { radius: 0.6 });
    v.bounds = Some(([-1.0, -1.0, -1.0], [1.0, 0.5, 1.0]));
    m.fields = vec![v, model::Field::point([0.0; 3], 2.0, model::Falloff::InverseSquare { radius: 0.2 })];
    Ok(m)
}

/// The drape: Liu et al.'s cloth (as [`model::curtain`], 1 m × 1 m, 1 kg) held flat at y = 0.5, centred
/// over the origin, pinned only at the top of a post (its centre particle and the four around it),
/// above the ground plane y ≥ 0 with Coulomb friction μ = 0.8; air drag d₀ = 1.5/s (the cloth has no
/// self-collision, so its folds can slip through each other; this much damping brings it to rest
/// within a few seconds). It falls, its skirt folds onto the ground and slides until friction holds
/// it, then it rests.
pub fn drape(n: usize, k: Option<f64>) -> Result<Model> {
    let mut m = model::curtain(n, k)?;
    for p in m.positions.iter_mut() {
        // curtain: (c·s − 0.5, 0, r·s) → (c·s − 0.5, 0.5, r·s − 0.5)
        *p = [p[0], DRAPE_HEIGHT, p[2] - 0.5];
    }
    for pin in m.pinned.iter_mut() {
        *pin = false;
    }
    let c = n / 2;
    for (r, col) in [(c, c), (c - 1, c), (c + 1, c), (c, c - 1), (c, c + 1)] {
        m.pin(r * n + col);
    }
    m.forces.drag = 1.5;
    m.colliders.push(Collider::ground(0.0, 0.8));
    Ok(m)
}

/// The drape's post height (m).
pub const DRAPE_HEIGHT: f64 = 0.5;
