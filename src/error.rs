//! The library's one error type.

use thiserror::Error;

/// Everything that can go wrong in springsim, with the field and value that caused it.
#[derive(Debug, Error)]
pub enum Error {
    /// A model field failed validation (see [`crate::model::Model::validate`]).
    #[error("invalid model: {field} = {value}: {reason}")]
    InvalidModel {
        /// The field, with its index, e.g. `particles[3].mass`.
        field: String,
        /// The offending value as written.
        value: String,
        /// What the rule is.
        reason: &'static str,
    },
    /// A parameter of a scene, method or run was out of range.
    #[error("invalid parameter: {name} = {value}: {reason}")]
    InvalidParameter {
        /// The parameter's name as the CLI and the API spell it.
        name: String,
        /// The offending value.
        value: String,
        /// What the rule is.
        reason: String,
    },
    /// A scene name that the registry does not know.
    #[error("unknown scene '{0}' (known: {1})")]
    UnknownScene(String, String),
    /// A method name that is not known.
    #[error("unknown method '{0}' (known: {1})")]
    UnknownMethod(String, String),
    /// Reading a mesh file failed.
    #[error("could not load mesh '{path}': {reason}")]
    Mesh {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A scene file is invalid: it does not parse (a missing field, a wrong type, an unknown field or
    /// name), or a value it gives is out of range (a negative mass, a pin index past the model, an OBJ
    /// that does not load). One line: `path:line:col: field: what`.
    #[error("{}", scene_file_message(path, *line, *col, field, msg))]
    SceneFile {
        /// The file (`scenes/NAME.ron` for a built-in scene).
        path: String,
        /// The line (1-based; 0 when the file could not be read).
        line: usize,
        /// The column (1-based).
        col: usize,
        /// The field, as a path: `material.mass`, `pins[3]`, `colliders[0].radius`.
        field: String,
        /// What is wrong.
        msg: String,
    },
    /// No GPU adapter could be found (or none matched `WGPU_ADAPTER_NAME` / `WGPU_BACKEND`).
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// The device could not be created.
    #[error("could not create a GPU device: {0}")]
    Device(String),
    /// A GPU buffer would exceed a device limit (`max_storage_buffer_binding_size` or `max_buffer_size`);
    /// checked before allocating.
    #[error("GPU buffer {buffer} needs {bytes} B, over the device's {limit_name} of {limit} B")]
    BufferTooLarge {
        /// The buffer's label.
        buffer: String,
        /// The bytes it needs.
        bytes: u64,
        /// The limit's name in `wgpu::Limits`.
        limit_name: &'static str,
        /// The limit.
        limit: u64,
    },
    /// Host memory: the estimated bytes of a model or an engine's structures exceed what the machine has
    /// free (checked before allocating; [`crate::memory`]).
    #[error("not enough host memory: {what} needs about {} ({bytes} B), {} available (MemAvailable, or SPRINGSIM_HOST_MEMORY)", human_bytes(*bytes), human_bytes(*available))]
    HostMemory {
        /// What would be allocated.
        what: String,
        /// The estimated bytes.
        bytes: u64,
        /// The bytes available.
        available: u64,
    },
    /// A GPU operation (mapping, polling) failed.
    #[error("GPU error: {0}")]
    Gpu(String),
    /// The implicit step's linear solve failed: CG broke down (pᵀAp ≤ 0 or not finite: an indefinite or
    /// singular system, e.g. with the exact Jacobian of compressed springs), a solver does not apply to the
    /// model, or the adaptive step fell below its floor.
    #[error("linear solve failed: {0}")]
    Solver(String),
    /// An explicit method was asked for a step above Shinya's stable step and `allow_unstable` is off.
    #[error(
        "h = {h:.4e} s is above {method}'s stable step h_max = {h_max:.4e} s (Shinya §3, k0 = {k0:.4e} 1/s²): pass --allow-unstable to run it anyway"
    )]
    Unstable {
        /// The method's CLI name.
        method: &'static str,
        /// The step asked for (s).
        h: f64,
        /// The stable step (s).
        h_max: f64,
        /// k₀ = λ_max(M⁻¹K) (1/s²).
        k0: f64,
    },
    /// The simulation left the finite range.
    #[error("simulation diverged at frame {frame}: {what}")]
    Diverged {
        /// The frame at which a non-finite value or a runaway was seen.
        frame: usize,
        /// What was seen.
        what: String,
    },
}

fn scene_file_message(path: &str, line: usize, col: usize, field: &str, msg: &str) -> String {
    let msg = msg.replace('\n', " ");
    match (line, field.is_empty()) {
        (0, _) => format!("{path}: {msg}"),
        (_, true) => format!("{path}:{line}:{col}: {msg}"),
        (_, false) => format!("{path}:{line}:{col}: {field}: {msg}"),
    }
}

/// Result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An invalid parameter: `name` is the field as the user wrote it, `value` what was given.
    pub fn param(name: &str, value: impl ToString, reason: impl Into<String>) -> Self {
        Error::InvalidParameter { name: name.to_string(), value: value.to_string(), reason: reason.into() }
    }
}

/// A byte count as people read it in a message: `1.23 GB`, `168.5 MB`, `5000 B`.
fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{bytes} B")
    }
}
