//! springsim: a GPU-compute mass-spring simulator on wgpu, with an f64 CPU twin of every kernel.
//!
//! The layers, each importing only from those above it in this list:
//! - [`error`], [`memory`] (host memory checked before it is taken), [`method`] (the methods and their
//!   settings), [`model`] (particles, springs, pins, builders, validation, CSR incidence lists, the cursor
//!   spring), [`scene`] (the built-in scenes) and [`scene_file`] (scenes as RON files);
//! - [`reference`](mod@reference): the f64 twin of every WGSL kernel, one plain function per entry point, and
//!   [`linalg`]: the sparse Cholesky, orderings, multigrid and CG that both engines use;
//! - the engines behind the [`engine::Engine`] contract: [`cpu`] (the reference kernels in parallel with
//!   rayon) and [`gpu`] (middleware on a caller's `Device` and `Queue`);
//! - [`stepping`]: the stepping policy (Shinya's plan, substeps, the adaptive step, the re-plan after a
//!   divergence) once for both engines: [`CpuSimulator`] and [`GpuSimulator`];
//! - the front ends: `viewer` (feature `viewer`, on by default: the windowed demo) and the `springsim`
//!   binary (feature `cli`: bench, converge, info).
#![warn(missing_docs)]

pub mod cpu;
pub mod engine;
pub mod error;
pub mod gpu;
pub mod linalg;
pub mod memory;
pub mod method;
pub mod model;
pub mod reference;
pub mod scene;
pub mod scene_file;
pub mod stepping;
#[cfg(feature = "viewer")]
pub mod viewer;

pub use error::{Error, Result};
pub use method::{FactorPrecision, GlobalSolve, Method, Preconditioner, StepPlan, StepSettings};
pub use model::Model;
pub use stepping::{CpuSimulator, FrameEvent, FrameReport, GpuSimulator, Simulator};
pub use wgpu;

/// The README's library example, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
