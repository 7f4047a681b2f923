//! The scene registry: one list of named scenes that the window, the bench and the tests share, each
//! a scene file (`scenes/NAME.ron`, embedded) that names one of the builders ([`crate::model::scene_builders`]).

use crate::error::{Error, Result};
use crate::model::Model;
use crate::scene_file::Scene;
use std::path::Path;

pub use crate::model::scene_builders as builders;
pub use builders::{builder, drape, flag, flag_gusts, rail, vortex, SceneOptions, BUILDERS, DRAPE_HEIGHT, RAIL_RING_SPACING};

/// A registered scene: its name and its file, `scenes/NAME.ron`, embedded in the library. The file
/// names the builder and gives its defaults (size, about, forces, the method); see [`crate::scene_file`].
#[derive(Clone, Copy, Debug)]
pub struct SceneInfo {
    /// The CLI name.
    pub name: &'static str,
    /// The text of `scenes/NAME.ron`.
    pub text: &'static str,
}

macro_rules! scene {
    ($name:literal) => {
        SceneInfo { name: $name, text: include_str!(concat!("../scenes/", $name, ".ron")) }
    };
}

/// Every scene.
pub const SCENES: &[SceneInfo] = &[
    scene!("curtain"),
    scene!("cloth"),
    scene!("rope"),
    scene!("hair"),
    scene!("slinky"),
    scene!("jelly"),
    scene!("orbit"),
    scene!("flag"),
    scene!("drape"),
    scene!("drape-sphere"),
    scene!("mesh"),
    scene!("rail"),
    scene!("folds"),
    scene!("flag-gusts"),
    scene!("vortex"),
];

impl SceneInfo {
    /// Its file, parsed.
    pub fn scene(&self) -> Result<Scene> {
        Scene::builtin(self.name, self.text)
    }

    /// One line about it (from its file).
    pub fn about(&self) -> String {
        match self.scene() {
            Ok(s) => s.file.about,
            Err(e) => e.to_string(),
        }
    }

    /// Its default size (from its file; 0 when the file gives none, as for `mesh`).
    pub fn default_size(&self) -> usize {
        self.scene().ok().and_then(|s| s.file.model.size).unwrap_or(0)
    }
}

/// The names, comma-separated.
pub fn scene_names() -> String {
    SCENES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// Whether a scene argument is a scene file's path (it ends in `.ron`) rather than a registry name.
pub fn is_file(name: &str) -> bool {
    name.ends_with(".ron")
}

/// A registered scene by name.
pub fn find(name: &str) -> Result<&'static SceneInfo> {
    SCENES.iter().find(|s| s.name == name).ok_or_else(|| Error::UnknownScene(name.to_string(), scene_names()))
}

/// A scene by name, or a scene file by path (one ending in `.ron`).
pub fn load(name: &str) -> Result<Scene> {
    if is_file(name) {
        Scene::load(Path::new(name))
    } else {
        find(name)?.scene()
    }
}

/// Builds a scene by name, or from a scene file's path ([`is_file`]). The model is validated
/// ([`Model::validate`]): options or a mesh file that give an invalid one (an OBJ coordinate that
/// overflows to ±inf, a negative orbit stiffness) are an error here, not a model that every engine then
/// refuses.
pub fn build(name: &str, opts: &SceneOptions) -> Result<Model> {
    load(name)?.build(opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builders_default_size_is_its_scene_files() {
        for info in SCENES {
            assert_eq!(builders::default_size(info.name), info.default_size(), "{}", info.name);
        }
    }
}
