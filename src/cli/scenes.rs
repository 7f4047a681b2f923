//! `springsim scene`: a scene's RON on stdout (`print`), the built-in scenes (`list`); and how the
//! commands name a scene (`--scene NAME|FILE.ron`, `--scene-file FILE`).

use anyhow::Result;
use springsim::scene::{self, SCENES};
use springsim::scene_file::Scene;
use std::path::Path;

/// What `springsim scene` does.
#[derive(clap::Subcommand)]
pub enum SceneAction {
    /// Writes a scene's RON to stdout: a built-in scene's file as shipped (`scenes/NAME.ron`, with its
    /// comments), or a scene file (.ron) as loaded (checked, then printed back).
    Print {
        /// A built-in scene's name or a scene file's path.
        scene: String,
    },
    /// Lists the built-in scenes: name, default size, about.
    List,
}

/// Runs `springsim scene`.
pub fn run(action: SceneAction) -> Result<()> {
    match action {
        SceneAction::Print { scene: name } => {
            if scene::is_file(&name) {
                out!("{}", Scene::load(Path::new(&name))?.file.to_ron()?)?;
            } else {
                out!("{}", scene::find(&name)?.text)?;
            }
        }
        SceneAction::List => {
            for info in SCENES {
                outln!("{:<13} {:>4}  {}", info.name, info.default_size(), info.about())?;
            }
        }
    }
    Ok(())
}

/// The scene a command runs: `--scene-file`'s path when given (it must end in `.ron`, which is how a
/// scene argument tells a file from a name), else `--scene` (a name or a .ron path).
pub fn scene_arg(scene: &str, file: Option<&Path>) -> Result<String> {
    match file {
        Some(f) => {
            let f = f.display().to_string();
            if !scene::is_file(&f) {
                anyhow::bail!("--scene-file {f}: a scene file's name ends in .ron");
            }
            Ok(f)
        }
        None => Ok(scene.to_string()),
    }
}
