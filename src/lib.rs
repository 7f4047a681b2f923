//! springsim: a GPU-compute mass-spring simulator on wgpu, with an f64 CPU twin of every kernel.
//!
//! - [`model`]: particles, springs, pins, builders, validation, CSR incidence lists.
//! - [`cpu`]: the f64 reference, one file per method family.
//! - [`gpu`]: buffers, pipelines and the simulator that embeds on a caller's `Device` and `Queue`.
//! - [`method`]: the integrators and Shinya's stable step.
//! - [`scene`]: the scene registry shared by the CLI, the bench and the tests.
//! - `viewer` (feature `viewer`, on by default): the windowed demo.
#![warn(missing_docs)]

pub mod cpu;
pub mod engine;
pub mod error;
pub mod gpu;
pub mod linalg;
pub mod method;
pub mod model;
pub mod reference;
pub mod scene;
pub mod sim;
pub mod stepping;
#[cfg(feature = "viewer")]
pub mod viewer;

pub use error::{Error, Result};
pub use method::{GlobalSolve, Method, Preconditioner, StepPlan, StepSettings};
pub use model::Model;
pub use sim::Simulator;
pub use wgpu;
