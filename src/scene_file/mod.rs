//! Scene files: a scene as RON text (`scenes/*.ron`, parsed with serde and ron). A file names the
//! model's builder and its parameters (size, stiffness, or an OBJ for `mesh`), material overrides (total
//! mass, spring damping as k_d or as a time β with k_d = β·k), extra pins, colliders (the [`crate::model::Collider`] variants), self-collision
//! (`self_collision: (thickness: 0.02)`, a [`crate::model::SelfCollision`]), force fields (gravity,
//! drag, wind, a central field), the method and its main settings (named as `springsim bench`'s
//! options), the frame step and count, and an optional camera:
//!
//! ```ron
//! (
//!     about: "a rope in a wind, onto a sphere",
//!     model: (builder: "rope", size: 24, stiffness: 1500.0),
//!     material: (mass: 0.2, damping: 0.01),
//!     pins: [23],
//!     colliders: [Sphere(center: (0.0, -0.6, 0.0), radius: 0.2, thickness: 0.01, friction: 0.5)],
//!     forces: (gravity: (0.0, -9.81, 0.0), drag: 0.5, wind: (0.0, 0.0, 2.0)),
//!     method: (name: "local-global", global: "cholesky", local_global_iterations: 10),
//!     frame_dt: 0.03333333333333333,
//!     frames: 60,
//!     camera: (eye: (0.0, 0.5, 3.0), target: (0.0, -0.3, 0.0)),
//! )
//! ```
//!
//! Unknown fields are errors, and so is every invalid value: each is an [`Error::SceneFile`], one line
//! naming the file, the line and column, and the field. The builders stay Rust code
//! ([`crate::scene`]); what a file adds (material, pins, colliders, forces) is applied to the builder's
//! model. This module sits with the model and the scene registry: it imports neither engine, the
//! stepping policy nor a front end.

mod format;
mod locate;

pub use format::*;

use crate::error::{Error, Result};
use crate::method::StepSettings;
use crate::model::scene_builders::{self as scene, SceneOptions};
use crate::model::Model;
use format::ron_options;
use locate::{Index, Pos};
use std::path::{Path, PathBuf};

/// Where a scene came from.
#[derive(Clone, Debug, PartialEq)]
enum Origin {
    /// A built-in scene, `scenes/NAME.ron` embedded in the library.
    Builtin(&'static str),
    /// A file on disk.
    File(PathBuf),
}

/// A parsed scene file with its text and where it came from: what errors found after parsing are
/// located in, and what a relative OBJ path is resolved against.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The content.
    pub file: SceneFile,
    origin: Origin,
    text: String,
}

impl Scene {
    /// Parses and checks a scene file's text; `path` names it in errors and locates its OBJ.
    pub fn parse(text: &str, path: &Path) -> Result<Scene> {
        Scene::parse_from(text, Origin::File(path.to_path_buf()))
    }

    /// Reads, parses and checks a scene file.
    pub fn load(path: &Path) -> Result<Scene> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::SceneFile {
            path: path.display().to_string(),
            line: 0,
            col: 0,
            field: "(file)".into(),
            msg: e.to_string(),
            cause: None,
        })?;
        Scene::parse(&text, path)
    }

    /// A built-in scene's embedded file (`text` is `scenes/NAME.ron`).
    pub(crate) fn builtin(name: &'static str, text: &'static str) -> Result<Scene> {
        Scene::parse_from(text, Origin::Builtin(name))
    }

    fn parse_from(text: &str, origin: Origin) -> Result<Scene> {
        let scene = match ron_options().from_str::<SceneFile>(text) {
            Ok(file) => Scene { file, origin, text: text.to_string() },
            Err(e) => {
                let at = Pos { line: e.span.start.line, col: e.span.start.col };
                let index = Index::new(text);
                let field = match &e.code {
                    ron::Error::MissingStructField { field, .. } => join(index.path_at(at), field),
                    _ => index.path_at(at).to_string(),
                };
                return Err(Error::SceneFile {
                    path: origin_name(&origin),
                    line: at.line,
                    col: at.col,
                    field,
                    msg: e.code.to_string(),
                    cause: None,
                });
            }
        };
        scene.check()?;
        Ok(scene)
    }

    /// The file's name in messages: its path, or `scenes/NAME.ron` for a built-in one.
    pub fn name(&self) -> String {
        origin_name(&self.origin)
    }

    /// Whether this is a built-in scene.
    pub fn is_builtin(&self) -> bool {
        matches!(self.origin, Origin::Builtin(_))
    }

    /// The text it was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// An error at `field` of this file.
    fn error(&self, field: &str, msg: impl ToString) -> Error {
        let at = Index::new(&self.text).find(field).unwrap_or(Pos { line: 1, col: 1 });
        Error::SceneFile { path: self.name(), line: at.line, col: at.col, field: field.to_string(), msg: msg.to_string(), cause: None }
    }

    /// An error of the library's at `field`, its message kept and the error itself as the cause.
    fn wrap(&self, field: &str, e: Error) -> Error {
        let at = Index::new(&self.text).find(field).unwrap_or(Pos { line: 1, col: 1 });
        let msg = e.to_string();
        Error::SceneFile { path: self.name(), line: at.line, col: at.col, field: field.to_string(), msg, cause: Some(Box::new(e)) }
    }

    /// The checks that need no model: material, forces, colliders, settings, frames, camera.
    fn check(&self) -> Result<()> {
        let f = &self.file;
        let positive = |field: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(self.error(field, format!("{v} must be finite and > 0")))
            }
        };
        let nonneg = |field: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(self.error(field, format!("{v} must be finite and >= 0")))
            }
        };
        let finite = |field: &str, v: &[f64; 3]| {
            if v.iter().all(|c| c.is_finite()) {
                Ok(())
            } else {
                Err(self.error(field, format!("{v:?} must be finite")))
            }
        };
        if f.model.obj.is_some() && f.model.builder != "mesh" {
            return Err(self.error("model.obj", format!("only the mesh builder takes an OBJ (the builder is {})", f.model.builder)));
        }
        if let Some(k) = f.model.stiffness {
            positive("model.stiffness", k)?;
        }
        if let Some(m) = f.material.mass {
            positive("material.mass", m)?;
        }
        if let Some(d) = f.material.damping {
            nonneg("material.damping", d)?;
        }
        if let Some(b) = f.material.damping_time {
            nonneg("material.damping_time", b)?;
            if f.material.damping.is_some() {
                return Err(self.error("material.damping_time", "give damping (k_d, N·s/m) or damping_time (k_d = β·k, s), not both"));
            }
        }
        if let Some(b) = f.material.bending {
            nonneg("material.bending", b)?;
        }
        if let Some(g) = &f.forces.gravity {
            finite("forces.gravity", g)?;
        }
        if let Some(d) = f.forces.drag {
            nonneg("forces.drag", d)?;
        }
        if let Some(w) = &f.forces.wind {
            finite("forces.wind", w)?;
        }
        if let Some(c) = &f.forces.central {
            finite("forces.central.center", &c.center)?;
            nonneg("forces.central.strength", c.strength)?;
        }
        if f.forces.fields.len() > crate::model::MAX_FIELDS {
            return Err(self.error(
                "forces.fields",
                format!("{} fields: at most {} (they live in the GPU's Params block)", f.forces.fields.len(), crate::model::MAX_FIELDS),
            ));
        }
        for (i, fld) in f.forces.fields.iter().enumerate() {
            fld.validate(i).map_err(|e| self.wrap(&format!("forces.{}", field_of(&e).unwrap_or_else(|| format!("fields[{i}]"))), e))?;
        }
        if let Some(a) = &f.forces.aero_wind {
            a.validate().map_err(|e| self.wrap(&format!("forces.{}", field_of(&e).unwrap_or_else(|| "aero_wind".into())), e))?;
        }
        for (i, c) in f.colliders.iter().enumerate() {
            c.validate(i).map_err(|e| self.wrap(&field_of(&e).unwrap_or_else(|| format!("colliders[{i}]")), e))?;
        }
        for (k, mo) in f.motions.iter().enumerate() {
            let field = format!("motions[{k}].path");
            mo.path.validate(&field).map_err(|e| self.wrap(&field_of(&e).unwrap_or(field.clone()), e))?;
        }
        if let Some(sc) = &f.self_collision {
            sc.validate().map_err(|e| self.wrap(&field_of(&e).unwrap_or_else(|| "self_collision".into()), e))?;
        }
        if let Some(sl) = &f.strain_limiting {
            sl.validate().map_err(|e| self.wrap(&field_of(&e).unwrap_or_else(|| "strain_limiting".into()), e))?;
        }
        positive("frame_dt", f.frame_dt)?;
        if f.frames == 0 {
            return Err(self.error("frames", "0 must be >= 1"));
        }
        if let Some(c) = &f.camera {
            finite("camera.eye", &c.eye)?;
            finite("camera.target", &c.target)?;
            if c.eye == c.target {
                return Err(self.error("camera.eye", "the eye must not be the target"));
            }
        }
        let s = f.settings();
        let method = f.method.name;
        s.validate().map_err(|e| self.wrap(&setting_field(&e), e))?;
        s.global.resolve(method).map_err(|e| self.wrap("method.global", e))?;
        s.preconditioner.check(method, s.global).map_err(|e| self.wrap("method.preconditioner", e))?;
        Ok(())
    }

    /// The particles and springs of the model [`Scene::build`] would give, from the builder's size alone,
    /// for the builders whose counts are known without building (`cloth`: n² particles and 6n² − 10n + 2
    /// springs; `curtain`: 5n² − 8n + 1 springs); `None` for the others. For checks before building (the
    /// GPU's buffer limits: `springsim::gpu::base::budget`).
    pub fn counts(&self, opts: &SceneOptions) -> Option<(u64, u64)> {
        let spec = &self.file.model;
        let n = opts.size.or(spec.size).unwrap_or_else(|| scene::default_size(&spec.builder)) as u64;
        if n < 3 {
            return None;
        }
        match spec.builder.as_str() {
            "cloth" => Some((n * n, 6 * n * n - 10 * n + 2)),
            "curtain" => Some((n * n, 5 * n * n - 8 * n + 1)),
            _ => None,
        }
    }

    /// The model with the builder's parameters from `opts` where it gives them (size, stiffness, OBJ;
    /// the OBJ only for the `mesh` builder), else from the file; then the file's material, forces, pins
    /// and colliders; validated. A built-in scene's OBJ is not used (the registry's `mesh` needs
    /// `opts.mesh`). Errors of what the file gave name the file, line and field; errors of `opts` are
    /// the library's usual ones.
    pub fn build(&self, opts: &SceneOptions) -> Result<Model> {
        opts.validate()?;
        let spec = &self.file.model;
        let builder = spec.builder.as_str();
        let builtin = self.is_builtin();
        let size = opts.size.or(spec.size).unwrap_or_else(|| scene::default_size(builder));
        let stiffness = opts.stiffness.or(spec.stiffness);
        let obj = match (&opts.mesh, &spec.obj) {
            (Some(p), _) => Some(p.clone()),
            (None, Some(p)) if !builtin => Some(self.resolve(p)),
            _ => None,
        };
        // which errors are the file's: the parameters it gave and `opts` did not override
        let from_file = |name: &str| {
            !builtin
                && match name {
                    "size" => opts.size.is_none() && spec.size.is_some(),
                    "stiffness" => opts.stiffness.is_none() && spec.stiffness.is_some(),
                    _ => opts.mesh.is_none() && spec.obj.is_some(),
                }
        };
        let mut m = scene::builder(builder, size, stiffness, obj.as_deref()).map_err(|e| match &e {
            Error::InvalidParameter { name, .. } if (name == "size" || name == "stiffness") && from_file(name) => {
                self.wrap(&format!("model.{name}"), e)
            }
            Error::InvalidParameter { name, .. } if name == "mesh" && !builtin => {
                self.error("model.obj", "the mesh builder needs obj: \"path.obj\" (or --mesh)")
            }
            Error::Mesh { .. } | Error::InvalidParameter { .. } | Error::InvalidModel { .. } if builder == "mesh" && from_file("obj") => {
                self.wrap("model.obj", e)
            }
            _ => e,
        })?;
        let f = &self.file;
        if let Some(mass) = f.material.mass {
            let scale = mass / m.total_mass();
            for x in &mut m.masses {
                *x *= scale;
            }
        }
        if let Some(kd) = f.material.damping {
            for s in &mut m.springs {
                s.kd = kd;
            }
        }
        if let Some(beta) = f.material.damping_time {
            for s in &mut m.springs {
                s.kd = beta * s.k;
            }
        }
        // after the damping: the bending springs are undamped (a damping along a zero-rest spring's
        // direction is not the energy's own)
        if let Some(b) = f.material.bending {
            if b > 0.0 {
                crate::model::add_bending(&mut m, b).map_err(|e| self.wrap("material.bending", e))?;
            }
        }
        let forces = &f.forces;
        if let Some(g) = forces.gravity {
            m.forces.gravity = g;
        }
        if let Some(d) = forces.drag {
            m.forces.drag = d;
        }
        if let Some(w) = forces.wind {
            m.forces.wind = w;
        }
        if let Some(c) = forces.central {
            m.forces.central = Some((c.center, c.strength));
        }
        if !forces.fields.is_empty() {
            m.fields = forces.fields.clone();
        }
        if forces.aero_wind.is_some() {
            m.aero_wind = forces.aero_wind;
        }
        let n = m.n_particles();
        for (i, &p) in f.pins.iter().enumerate() {
            if p >= n {
                return Err(self.error(&format!("pins[{i}]"), format!("index {p} out of range (the model has {n} particles)")));
            }
            m.pin(p);
        }
        m.colliders.extend(f.colliders.iter().copied());
        m.motions.extend(f.motions.iter().cloned());
        if f.self_collision.is_some() {
            m.self_collision = f.self_collision;
        }
        if f.strain_limiting.is_some() {
            m.strain_limit = f.strain_limiting;
        }
        if builtin {
            m.validate()?;
        } else {
            let field = if f.material.mass.is_some() { "material" } else { "model" };
            m.validate().map_err(|e| {
                let at = field_of(&e).filter(|f| f.starts_with("motions")).unwrap_or(field.to_string());
                self.wrap(&at, e)
            })?;
        }
        Ok(m)
    }

    /// `p` relative to the file's folder (as given when absolute).
    fn resolve(&self, p: &Path) -> PathBuf {
        match &self.origin {
            Origin::File(f) if p.is_relative() => f.parent().map(|d| d.join(p)).unwrap_or_else(|| p.to_path_buf()),
            _ => p.to_path_buf(),
        }
    }

    /// The step settings the file gives.
    pub fn settings(&self) -> StepSettings {
        self.file.settings()
    }
}

fn origin_name(o: &Origin) -> String {
    match o {
        Origin::Builtin(name) => format!("scenes/{name}.ron"),
        Origin::File(p) => p.display().to_string(),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The field an error of the library's names.
fn field_of(e: &Error) -> Option<String> {
    match e {
        Error::InvalidParameter { name, .. } => Some(name.clone()),
        Error::InvalidModel { field, .. } => Some(field.clone()),
        _ => None,
    }
}

/// The file's field of a [`StepSettings::validate`] error.
fn setting_field(e: &Error) -> String {
    let Error::InvalidParameter { name, .. } = e else { return "method".into() };
    match name.as_str() {
        "frame_dt" => "frame_dt".into(),
        "cg_max_iterations" => "method.cg_iterations".into(),
        "guard.every" => "method.guard_every".into(),
        n => format!("method.{n}"),
    }
}
