//! The scene file's format: the serde types a `scenes/*.ron` file reads into ([`SceneFile`] and its
//! parts), the names written by their command-line spelling ([`Named`]), and the settings a file gives.

use crate::error::{Bound, Error, Result};
use crate::method::{DivergencePolicy, FactorPrecision, GlobalSolve, Method, Preconditioner, StepSettings};
use crate::model::{Collider, SelfCollision, StrainLimit};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A scene file's content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// One line about the scene.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub about: String,
    /// The builder and its parameters.
    pub model: ModelSpec,
    /// Overrides of the builder's material.
    #[serde(default, skip_serializing_if = "Material::is_empty")]
    pub material: Material,
    /// Particles pinned besides the builder's own pins (indices into the model).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<usize>,
    /// Obstacles added to the builder's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub colliders: Vec<Collider>,
    /// Colliders and pinned particles moved along keyframed paths ([`crate::model::Motion`]); a
    /// `Collider(i)` target counts the builder's colliders first, then the file's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub motions: Vec<crate::model::Motion>,
    /// Self-collision, replacing the builder's (e.g. `self_collision: (thickness: 0.02)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_collision: Option<SelfCollision>,
    /// Force fields: each one given replaces the builder's.
    #[serde(default, skip_serializing_if = "ForcesSpec::is_empty")]
    pub forces: ForcesSpec,
    /// Provot's strain limiting after every step ([`StrainLimit`]), e.g. `strain_limiting: (limit: 0.1)`
    /// (`passes`, `relaxation`, `tolerance` and `acceleration` may be left out). Named apart from `method.strain_limit`, the adaptive
    /// step's strain guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strain_limiting: Option<StrainLimit>,
    /// The method and its settings.
    pub method: MethodSpec,
    /// The frame step (s).
    pub frame_dt: f64,
    /// Frames to run (`springsim run` and `bench` by default).
    pub frames: usize,
    /// Where the demo's camera starts (without one, it frames the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<CameraSpec>,
}

/// The model: a builder of [`crate::scene`] by name, and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// The builder: one of [`crate::model::scene_builders::BUILDERS`].
    #[serde(with = "builder_name")]
    pub builder: String,
    /// Particles per side or per strand (the builder's default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<usize>,
    /// The builder's spring stiffness k (N/m) (its resolution-aware default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<f64>,
    /// The `mesh` builder's OBJ file, relative to the scene file's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obj: Option<PathBuf>,
}

/// Material overrides.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// The total mass (kg): every particle's mass is scaled to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f64>,
    /// The damping along every spring k_d (N·s/m); local/global does not use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    /// The damping along every spring as a time β (s): k_d = β·k for each spring, the damping that a
    /// fabric's internal friction gives, proportional to its stiffness (so a finer grid, whose springs are
    /// stiffer, keeps the same β). Not with `damping`; 0 is the undamped model. Shinya's plan takes its
    /// stable step with it ([`crate::stepping::plan::h_max`]); local/global does not use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping_time: Option<f64>,
    /// The bending stiffness B (N·m) of Bergou et al.'s quadratic bending energy over the model's
    /// triangles ([`crate::model::add_bending`]): a cylindrical bend of curvature κ stores ½Bκ² per unit
    /// area. The model's rest shape must be flat. Springs' damping does not apply to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bending: Option<f64>,
}

impl Material {
    fn is_empty(&self) -> bool {
        self == &Material::default()
    }
}

/// Force fields; each one given replaces the builder's ([`crate::model::Forces`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForcesSpec {
    /// Gravity (m/s²).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gravity: Option<[f64; 3]>,
    /// Air drag d₀ (1/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drag: Option<f64>,
    /// The wind the drag acts against (m/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wind: Option<[f64; 3]>,
    /// A central field: acceleration −strength·(x − center).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub central: Option<Central>,
    /// Point fields (attractors, repellers, vortices; at most four), e.g.
    /// `fields: [(kind: Vortex(axis: (0.0, 1.0, 0.0)), center: (0.0, 0.0, 0.0), strength: 3.0, falloff: Smooth(radius: 1.0))]`
    /// (see [`crate::model::Field`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<crate::model::Field>,
    /// Gusting aerodynamic wind on the triangles (see [`crate::model::AeroWind`]), e.g.
    /// `aero_wind: (base: (8.0, 0.0, 1.0), gust: (2.0, 0.0, 4.0), frequency: 0.7, coefficient: 0.7)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aero_wind: Option<crate::model::AeroWind>,
}

impl ForcesSpec {
    fn is_empty(&self) -> bool {
        self == &ForcesSpec::default()
    }
}

/// A central (harmonic) field.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Central {
    /// Its centre (m).
    pub center: [f64; 3],
    /// Its strength s (1/s²).
    pub strength: f64,
}

/// Where the camera starts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraSpec {
    /// The eye (m).
    pub eye: [f64; 3],
    /// The point looked at (m).
    pub target: [f64; 3],
}

/// The method and its settings, named as `springsim bench`'s options (with `_` for `-`); a setting left
/// out keeps [`StepSettings::default`]. Names (the method, `global`, `preconditioner`,
/// `factor_precision`, `divergence`) are parsed by the project's own parsers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodSpec {
    /// The method (`explicit-euler`, …, `local-global`, `newton`).
    #[serde(with = "named")]
    pub name: Method,
    /// A fixed step h (s) instead of the stable one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h: Option<f64>,
    /// h = substep_scale · h_max.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub substep_scale: Option<f64>,
    /// Rayleigh damping αK (Shinya eq. 28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rayleigh: Option<bool>,
    /// LEU: the re-linearisation interval h_nl (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leu_interval: Option<f64>,
    /// The speed (m/s) above which a step counts as diverging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_limit: Option<f64>,
    /// The linear solver (`auto`, `cg`, `tridiagonal`, `cholesky`, `chebyshev`).
    #[serde(default, with = "opt_named", skip_serializing_if = "Option::is_none")]
    pub global: Option<GlobalSolve>,
    /// Local/global iterations per step (`lg_iterations`, its name before 0.1's release, is read too).
    #[serde(default, alias = "lg_iterations", skip_serializing_if = "Option::is_none")]
    pub local_global_iterations: Option<usize>,
    /// Local/global with `cg` or `chebyshev`: the budget of each global step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_iterations: Option<usize>,
    /// Local/global: `jacobi` or `multigrid`.
    #[serde(default, with = "opt_named", skip_serializing_if = "Option::is_none")]
    pub preconditioner: Option<Preconditioner>,
    /// Local/global with `cholesky`: `f32` or `f64`.
    #[serde(default, with = "opt_named", skip_serializing_if = "Option::is_none")]
    pub factor_precision: Option<FactorPrecision>,
    /// Newton: the iteration limit per step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newton_iterations: Option<usize>,
    /// Implicit Euler: the CG budget per step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cg_iterations: Option<usize>,
    /// Implicit Euler: the CG relative tolerance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cg_tolerance: Option<f64>,
    /// Implicit Euler: CG from the last step's Δv.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cg_warm_start: Option<bool>,
    /// Implicit Euler: the exact spring Jacobian.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_jacobian: Option<bool>,
    /// Implicit Euler: Kauppila's adaptive step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<bool>,
    /// Implicit Euler: the adaptive step's strain limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strain_limit: Option<f64>,
    /// Implicit Euler: the adaptive step's limit on a spring's length change within one step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_strain_limit: Option<f64>,
    /// Implicit Euler: the CG residual above which the adaptive step retakes a step with h/2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_residual: Option<f64>,
    /// Implicit Euler: the halvings a GPU pipelined frame has room for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frame_halvings: Option<usize>,
    /// The divergence guard: `report`, `recover` or `ignore`.
    #[serde(default, with = "opt_named", skip_serializing_if = "Option::is_none")]
    pub divergence: Option<DivergencePolicy>,
    /// The guard checks every this many frames (0: the engine's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard_every: Option<usize>,
    /// Run an explicit method above Shinya's h_max.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_unstable: Option<bool>,
}

impl MethodSpec {
    /// Only the method: every setting its default.
    pub fn new(name: Method) -> Self {
        MethodSpec {
            name,
            h: None,
            substep_scale: None,
            rayleigh: None,
            leu_interval: None,
            speed_limit: None,
            global: None,
            local_global_iterations: None,
            global_iterations: None,
            preconditioner: None,
            factor_precision: None,
            newton_iterations: None,
            cg_iterations: None,
            cg_tolerance: None,
            cg_warm_start: None,
            exact_jacobian: None,
            adaptive: None,
            strain_limit: None,
            step_strain_limit: None,
            retry_residual: None,
            max_frame_halvings: None,
            divergence: None,
            guard_every: None,
            allow_unstable: None,
        }
    }

    /// Writes the settings this spec gives into `s`, except those whose command-line option `given`
    /// says was given (`given` takes `springsim bench`'s option names with `_`: `h`, `substep_scale`,
    /// `no_rayleigh`, `cg_iterations`, …).
    pub fn apply(&self, s: &mut StepSettings, given: &dyn Fn(&str) -> bool) {
        macro_rules! set {
            ($flag:literal, $src:expr, $dst:expr) => {
                if let Some(v) = $src {
                    if !given($flag) {
                        $dst = v;
                    }
                }
            };
        }
        set!("h", self.h.map(Some), s.fixed_h);
        set!("substep_scale", self.substep_scale, s.substep_scale);
        set!("no_rayleigh", self.rayleigh, s.rayleigh);
        set!("leu_interval", self.leu_interval, s.leu_interval);
        set!("speed_limit", self.speed_limit, s.speed_limit);
        set!("global", self.global, s.global);
        set!("local_global_iterations", self.local_global_iterations, s.local_global_iterations);
        set!("global_iterations", self.global_iterations, s.global_iterations);
        set!("preconditioner", self.preconditioner, s.preconditioner);
        set!("factor_precision", self.factor_precision, s.factor_precision);
        set!("newton_iterations", self.newton_iterations, s.newton_iterations);
        set!("cg_iterations", self.cg_iterations, s.cg_max_iterations);
        set!("cg_tolerance", self.cg_tolerance, s.cg_tolerance);
        set!("cg_warm_start", self.cg_warm_start, s.cg_warm_start);
        set!("exact_jacobian", self.exact_jacobian, s.exact_jacobian);
        if !given("no_adaptive") {
            set!("adaptive", self.adaptive, s.adaptive);
        }
        set!("strain_limit", self.strain_limit, s.strain_limit);
        set!("step_strain_limit", self.step_strain_limit, s.step_strain_limit);
        set!("retry_residual", self.retry_residual, s.retry_residual);
        set!("max_frame_halvings", self.max_frame_halvings, s.max_frame_halvings);
        set!("divergence", self.divergence, s.guard.policy);
        set!("guard_every", self.guard_every, s.guard.every);
        set!("allow_unstable", self.allow_unstable, s.allow_unstable);
    }
}

/// A setting written by its command-line name and read by the project's own parser.
pub trait Named: Sized + Copy {
    /// Parses a name.
    fn parse_name(s: &str) -> Result<Self>;
    /// The name.
    fn cli_name(self) -> &'static str;
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn parse_name(s: &str) -> Result<Self> {
                <$t>::parse(s)
            }
            fn cli_name(self) -> &'static str {
                self.name()
            }
        }
    )*};
}
named!(Method, GlobalSolve, Preconditioner, FactorPrecision, DivergencePolicy);

mod named {
    use super::Named;
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    pub fn serialize<T: Named, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.cli_name())
    }

    pub fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let s = String::deserialize(d)?;
        T::parse_name(&s).map_err(D::Error::custom)
    }
}

mod opt_named {
    use super::Named;
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    pub fn serialize<T: Named, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_some(v.cli_name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        Option::<String>::deserialize(d)?.map(|s| T::parse_name(&s).map_err(D::Error::custom)).transpose()
    }
}

mod builder_name {
    use crate::model::scene_builders::BUILDERS;
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        let s = String::deserialize(d)?;
        if BUILDERS.contains(&s.as_str()) {
            Ok(s)
        } else {
            Err(D::Error::custom(format!("unknown builder '{s}' (known: {})", BUILDERS.join(", "))))
        }
    }
}

/// ron with `implicit_some` on: `size: 81` for `Some(81)` (`Some(81)` reads too).
pub(crate) fn ron_options() -> ron::Options {
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

impl SceneFile {
    /// The file as RON (pretty, settings left at their defaults omitted); it parses back to `self`.
    pub fn to_ron(&self) -> Result<String> {
        let cfg = ron::ser::PrettyConfig::new().compact_arrays(true);
        let mut s =
            ron_options().to_string_pretty(self, cfg).map_err(|e| Error::invalid("scene", "to_ron", Bound::Other(e.to_string())))?;
        s.push('\n');
        Ok(s)
    }

    /// The step settings the file gives (the rest [`StepSettings::default`]).
    pub fn settings(&self) -> StepSettings {
        let mut s = StepSettings { frame_dt: self.frame_dt, ..Default::default() };
        self.method.apply(&mut s, &|_| false);
        s
    }
}
