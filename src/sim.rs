//! What every simulator offers, CPU or GPU, and the statistics the bench and the tests report.

use crate::cpu::{forces, CpuModel, V3};
use crate::error::{Error, Result};
use crate::method::{Method, StepPlan};

/// What a frame did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameReport {
    /// Steps taken.
    pub substeps: usize,
    /// LEU: divergence retries so far (Shinya §4, step 2.3).
    pub leu_retries: usize,
    /// Implicit Euler: CG iterations used over the frame's steps (0 for the explicit methods).
    pub iterations: usize,
    /// Implicit Euler: the final relative residual ‖b − AΔv‖/‖b‖ of the frame's last solve.
    pub residual: f64,
}

/// A simulator of one model on one backend. The window, the bench and the tests drive this.
pub trait Simulator {
    /// Advances one frame (`frame_dt`, in `plan().substeps` steps).
    fn step_frame(&mut self) -> Result<FrameReport>;
    /// The step plan.
    fn plan(&self) -> StepPlan;
    /// The current method.
    fn method(&self) -> Method;
    /// Switches the method, keeping positions and velocities.
    fn set_method(&mut self, method: Method) -> Result<()>;
    /// Reads positions and velocities (the GPU copies them back).
    fn read_state(&mut self) -> Result<(Vec<[f64; 3]>, Vec<[f64; 3]>)>;
    /// Overwrites positions and velocities.
    fn write_state(&mut self, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()>;
    /// The backend, with the adapter for the GPU.
    fn backend_name(&self) -> String;
}

pub(crate) fn check_state_len(n: usize, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()> {
    if x.len() != n {
        return Err(Error::param("positions.len()", x.len(), format!("must equal the number of particles ({n})")));
    }
    if v.len() != n {
        return Err(Error::param("velocities.len()", v.len(), format!("must equal the number of particles ({n})")));
    }
    Ok(())
}

/// Statistics of a state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StateStats {
    /// Every coordinate finite.
    pub finite: bool,
    /// Largest |l − L|/L.
    pub max_strain: f64,
    /// Total energy (kinetic, spring, gravity, field).
    pub energy: f64,
    /// Lowest y (the sag of a hanging cloth).
    pub min_y: f64,
}

/// Statistics of a state of `model`.
pub fn state_stats(model: &CpuModel, x: &[[f64; 3]], v: &[[f64; 3]]) -> StateStats {
    let finite = x.iter().chain(v.iter()).all(|p| p.iter().all(|c| c.is_finite()));
    let xs: Vec<V3> = x.iter().map(|p| V3::from(*p)).collect();
    let vs: Vec<V3> = v.iter().map(|p| V3::from(*p)).collect();
    StateStats {
        finite,
        max_strain: forces::max_strain(model, &xs),
        energy: forces::energy(model, &xs, &vs),
        min_y: x.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min),
    }
}
