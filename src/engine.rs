//! The contract between an engine (the CPU's or the GPU's) and the stepping policy above it
//! ([`crate::stepping`]): an engine takes steps of a given size with one method and reports what its
//! solvers and checks saw; it never chooses a step, a substep count or a retry itself.

use crate::error::{Error, Result};
use crate::method::{Method, StepPlan, StepSettings};

/// Positions and velocities, one `[x, y, z]` per particle each.
pub type StateVectors = (Vec<[f64; 3]>, Vec<[f64; 3]>);

/// What an engine saw over the steps it was asked to take.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepsReport {
    /// Solver iterations summed over the steps (CG for implicit Euler; the global step's for
    /// local/global, a Chebyshev budget counting in full; Newton's for Newton; 0 for the explicit family).
    pub iterations: usize,
    /// The last step's final relative residual (implicit Euler: ‖b − AΔv‖/‖b‖; local/global and Newton:
    /// ‖∇g(x)‖/‖∇g(y)‖, Liu et al. 2013 eq. 7).
    pub residual: f64,
    /// LEU: divergence retries since the engine was built (Shinya §4, step 2.3).
    pub leu_retries: usize,
    /// The explicit family: some step exceeded `StepSettings::speed_limit` while the state stayed finite
    /// (Shinya §5.3: k₀ is then recomputed).
    pub speed_exceeded: bool,
    /// Implicit Euler: the step stretched or compressed a spring beyond `StepSettings::strain_limit`
    /// (Kauppila §3.2.3's adaptive step discards it).
    pub strained: bool,
}

/// One simulation engine: a model, its state and one method's integrator, on one device.
///
/// The stepping policy ([`crate::stepping::Stepper`]) plans the step from k₀ (Shinya §3), splits frames
/// into substeps, runs the adaptive step and re-plans after a divergence, through these calls alone.
pub trait Engine {
    /// The backend, with the adapter for the GPU (`"cpu (f64)"`, `"gpu: llvmpipe …"`).
    fn backend_name(&self) -> String;
    /// The method whose integrator is built.
    fn method(&self) -> Method;
    /// The settings the integrator runs with.
    fn settings(&self) -> &StepSettings;
    /// Replaces the settings (validated by the caller); the integrator follows them from the next step.
    fn set_settings(&mut self, settings: StepSettings) -> Result<()>;
    /// The air drag d₀ of the model (Shinya's plan depends on it).
    fn drag(&self) -> f64;
    /// Builds `method`'s integrator in place of the current one, keeping positions and velocities. The
    /// caller sets a plan for it before the next step.
    fn set_method(&mut self, method: Method) -> Result<()>;
    /// k₀ = λ_max(M⁻¹K) at the current state, by `StepSettings::power_iterations` power iterations.
    fn stiffness_k0(&mut self) -> Result<f64>;
    /// Takes steps of `plan.h` with Rayleigh α = `plan.alpha` (LEU re-linearises every
    /// `plan.relinearize_every` steps) from the next step on.
    fn set_plan(&mut self, plan: &StepPlan) -> Result<()>;
    /// Takes `steps` steps of the plan's h.
    fn take_steps(&mut self, steps: usize) -> Result<StepsReport>;
    /// Takes one trial step of size `h` from the current state, which is kept until
    /// [`Engine::accept_trial`] (implicit Euler's adaptive step).
    fn try_step(&mut self, h: f64) -> Result<StepsReport>;
    /// Makes the last trial step's state the current one.
    fn accept_trial(&mut self) -> Result<()>;
    /// Positions and velocities (the GPU reads them back).
    fn read_state(&mut self) -> Result<StateVectors>;
    /// Overwrites positions and velocities (pinned particles keep zero velocity).
    fn write_state(&mut self, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()>;
}

/// The error for a state of the wrong length: `x` and `v` must have one entry per particle.
pub fn check_state_len(n: usize, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()> {
    if x.len() != n {
        return Err(Error::param("positions.len()", x.len(), format!("must equal the number of particles ({n})")));
    }
    if v.len() != n {
        return Err(Error::param("velocities.len()", v.len(), format!("must equal the number of particles ({n})")));
    }
    Ok(())
}
