//! The library's one error type.
//!
//! Every error a host can act on is a variant with fields: an invalid value names the field, the value
//! and the rule it broke ([`Value`], [`Bound`]); an adapter limit names the limit, the request and what
//! the adapter has; a solver failure says which (a CG breakdown at an iteration, a matrix that is not
//! positive definite, a non-finite result). [`Error::Gpu`] carries only wgpu's own messages and
//! [`Error::Internal`] the library's broken invariants. The enum is `#[non_exhaustive]`: a host matches
//! with a `_` arm, and a variant's fields with `..` where it reads only some.
//!
//! ```
//! use springsim::error::{Bound, Error, Value};
//! let e = springsim::model::cloth(1, None).unwrap_err();
//! match e {
//!     Error::InvalidParameter { name, value: Value::UInt(n), bound: Bound::AtLeast { min, .. } } => {
//!         assert_eq!((name.as_str(), n, min), ("size", 1, 3.0));
//!     }
//!     other => panic!("{other}"),
//! }
//! ```

mod bound;

pub use bound::{Bound, Value};
use thiserror::Error;

/// Everything that can go wrong in springsim, with the field and value that caused it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A model field failed validation (see [`crate::model::Model::validate`]).
    #[error("invalid model: {field} = {value}: {bound}")]
    InvalidModel {
        /// The field, with its index, e.g. `particles[3].mass`.
        field: String,
        /// The offending value.
        value: Value,
        /// The rule it broke.
        bound: Bound,
    },
    /// A parameter of a scene, method or run was out of range, or does not apply here.
    #[error("invalid parameter: {name} = {value}: {bound}")]
    InvalidParameter {
        /// The parameter's name as the CLI and the API spell it.
        name: String,
        /// The offending value.
        value: Value,
        /// The rule it broke.
        bound: Bound,
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
        /// The library's own error where the file's value failed one of its checks (a negative mass, a
        /// step out of range): the typed [`Error::InvalidParameter`] or [`Error::InvalidModel`], its
        /// message the one `msg` gives. `None` for a file that does not parse.
        cause: Option<Box<Error>>,
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
    /// The adapter allows fewer of something than the library's kernels need (checked when the
    /// pipelines are built): e.g. a kernel binds more storage buffers per shader stage than
    /// `max_storage_buffers_per_shader_stage`, even in a layout of its own (every method fits WebGPU's
    /// default of 8). The fix is a better adapter, or a method that needs less.
    #[error("GPU error: {}", adapter_limit_message(what, limit_name, *requested, *available))]
    AdapterLimit {
        /// What asks for it (the WGSL file and, where each kernel has a layout of its own, the kernel:
        /// `implicit.wgsl (pcg_begin)`).
        what: String,
        /// The limit's name in `wgpu::Limits`.
        limit_name: &'static str,
        /// What the kernels need.
        requested: u64,
        /// What the adapter allows.
        available: u64,
    },
    /// A GPU table's entries outnumber what its `u32` indices reach (a model too large for the method's
    /// GPU layout).
    #[error("GPU error: {what} needs {count} packets, past the 2^32 its indices reach")]
    IndexOverflow {
        /// The table (`springsim.local_global_rows: the local/global table`).
        what: &'static str,
        /// The entries it needs.
        count: u64,
    },
    /// wgpu reported an error (mapping a buffer, polling the device): its message.
    #[error("GPU error: {0}")]
    Gpu(String),
    /// CG on the host broke down: pᵀAp ≤ 0 or not finite at `iteration` (an indefinite or singular
    /// system, e.g. with the exact Jacobian of compressed springs).
    #[error("linear solve failed: CG breakdown at iteration {iteration}: pᵀAp = {pap:e} ({why})")]
    CgBreakdown {
        /// The iteration (0-based) at which it broke down.
        iteration: usize,
        /// The curvature pᵀAp found there.
        pap: f64,
        /// What it means.
        why: &'static str,
    },
    /// CG on the GPU broke down (pᵀAp ≤ 0: the system is not positive definite); the kernels count the
    /// steps in which it did, not the iteration.
    #[error("linear solve failed: {}", gpu_cg_message(*steps, *local_global))]
    GpuCgBreakdown {
        /// The steps of the frame in which it broke down (`None` for one step).
        steps: Option<usize>,
        /// Whether it was local/global's global step (else implicit Euler's system).
        local_global: bool,
    },
    /// A matrix that must be symmetric positive definite is not (a zero or negative mass, a negative
    /// stiffness).
    #[error("linear solve failed: {}", not_spd_message(what, *pivot_row, hint))]
    NotPositiveDefinite {
        /// The matrix.
        what: String,
        /// The row of the Cholesky factorisation's non-positive pivot, where known.
        pivot_row: Option<usize>,
        /// What usually causes it (empty for none).
        hint: &'static str,
    },
    /// A direct solve met a singular matrix.
    #[error("linear solve failed: {what} is singular{}", block.map(|b| format!(" at block {b}")).unwrap_or_default())]
    Singular {
        /// The system.
        what: &'static str,
        /// The block of the block-tridiagonal solve where it was found.
        block: Option<usize>,
    },
    /// A solver produced a non-finite result.
    #[error("linear solve failed: {what} produced a non-finite {quantity}")]
    NonFinite {
        /// The solver (`local/global (cg)`, `Newton`).
        what: String,
        /// What was not finite (`position`, `residual`, `Δv`).
        quantity: &'static str,
    },
    /// The sparse Cholesky factorisation (faer) failed for a reason other than a non-positive pivot: its
    /// pattern, its symbolic step, its workspace.
    #[error("linear solve failed: {what}: {detail}")]
    Factorization {
        /// The matrix.
        what: String,
        /// What failed (faer's message where it gave one).
        detail: String,
    },
    /// The Cholesky factor is not available: the last factorisation failed.
    #[error("linear solve failed: the Cholesky factor is not available (the last factorisation failed)")]
    NoFactor,
    /// `encode_frame` (the non-blocking path) cannot record this frame: it needs a host call first or
    /// instead (see [`HostCall`]).
    #[error("invalid parameter: {0}")]
    NeedsHostCall(HostCall),
    /// A device checkpoint was restored on an engine that keeps none.
    #[error("GPU error: {engine} keeps no device checkpoint")]
    NoDeviceCheckpoint {
        /// The engine (`the CPU engine`, `this engine`).
        engine: &'static str,
    },
    /// A broken invariant of the library (a bind group, a kernel file or a solver that should be there):
    /// a bug to report, not something a host can fix. `layer` gives the message's prefix.
    #[error("{}: {what}", layer.prefix())]
    Internal {
        /// Where it broke.
        layer: Layer,
        /// What is missing or wrong.
        what: String,
    },
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

/// What `encode_frame` needs the host to call (the [`Error::NeedsHostCall`] variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostCall {
    /// Local/global with the Cholesky global step solves on the host between submits: the frame needs
    /// the blocking `Simulator::step_frame` (with `Stepper::set_frame_steps` for single steps), or
    /// `--global cg`/`chebyshev`.
    HostGlobalStep,
    /// The model depends on time (colliders or pins on paths, gusting wind): `GpuSimulator::prepare_frame`
    /// must write the frame's time and placements before each `encode_frame`.
    PrepareFrame,
}

impl std::fmt::Display for HostCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HostCall::HostGlobalStep => {
                "global = cholesky: the Cholesky global step runs on the host between submits, so a frame cannot be recorded into \
                 one encoder: call the blocking Simulator::step_frame, or use --global cg or chebyshev"
            }
            HostCall::PrepareFrame => {
                "encode_frame = without prepare_frame: this model depends on time (colliders or pins on paths, or gusting wind): \
                 call GpuSimulator::prepare_frame (it writes the frame's time and placements) before each encode_frame"
            }
        })
    }
}

/// The layer an [`Error::Internal`] broke in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Layer {
    /// The GPU engine (bind groups, kernel files, staging writes, checkpoints).
    Gpu,
    /// The solvers (a factor or a solver not prepared).
    Solver,
}

impl Layer {
    fn prefix(self) -> &'static str {
        match self {
            Layer::Gpu => "GPU error",
            Layer::Solver => "linear solve failed",
        }
    }
}

fn adapter_limit_message(what: &str, limit_name: &str, requested: u64, available: u64) -> String {
    if limit_name.contains("storage_buffers") {
        format!("{what} binds {requested} buffers that count against the device's {limit_name} of {available}")
    } else {
        format!("{what}: needs {requested}, over the device's {limit_name} of {available}")
    }
}

fn gpu_cg_message(steps: Option<usize>, local_global: bool) -> String {
    let (what, matrix) = if local_global { ("global step(s)", "the global matrix") } else { ("step(s)", "the system") };
    match steps {
        Some(n) => format!("GPU CG broke down in {n} {what} of this frame (pᵀAp <= 0: {matrix} is not positive definite)"),
        None => format!("GPU CG broke down (pᵀAp <= 0: {matrix} is not positive definite)"),
    }
}

fn not_spd_message(what: &str, pivot_row: Option<usize>, hint: &str) -> String {
    let mut s = format!("{what} is not positive definite");
    if let Some(row) = pivot_row {
        s += &format!(": the Cholesky factorisation (faer) met a non-positive pivot at row {row}");
    }
    if !hint.is_empty() {
        s += &format!(" ({hint})");
    }
    s
}

impl Error {
    /// An invalid parameter whose rule is free text: `name` is the field as the user wrote it, `value`
    /// what was given (kept as text: [`Value::Text`]), `reason` the rule ([`Bound::Other`]). Prefer
    /// [`Error::invalid`], whose value and bound a host can match.
    pub fn param(name: &str, value: impl ToString, reason: impl Into<String>) -> Self {
        Error::InvalidParameter { name: name.to_string(), value: Value::Text(value.to_string()), bound: Bound::Other(reason.into()) }
    }

    /// An invalid parameter: `name` as the CLI and the API spell it, its value, the rule it broke.
    pub fn invalid(name: &str, value: impl Into<Value>, bound: Bound) -> Self {
        Error::InvalidParameter { name: name.to_string(), value: value.into(), bound }
    }

    /// A model field that failed validation: the field (with its index), its value, the rule.
    pub fn model(field: impl Into<String>, value: impl Into<Value>, bound: Bound) -> Self {
        Error::InvalidModel { field: field.into(), value: value.into(), bound }
    }

    /// A broken invariant of the GPU engine ([`Error::Internal`]).
    pub fn internal_gpu(what: impl Into<String>) -> Self {
        Error::Internal { layer: Layer::Gpu, what: what.into() }
    }

    /// A broken invariant of a solver ([`Error::Internal`]).
    pub fn internal_solver(what: impl Into<String>) -> Self {
        Error::Internal { layer: Layer::Solver, what: what.into() }
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
