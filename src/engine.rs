//! The contract between an engine (the CPU's or the GPU's) and the stepping policy above it
//! ([`crate::stepping`]): an engine takes steps of a given size with one method and reports what its
//! solvers and checks saw; it never chooses a step, a substep count or a retry itself.

use crate::error::{Bound, Error, Result};
use crate::method::{Method, StepPlan, StepSettings};
use crate::reference::forces;
use crate::reference::model::{CpuModel, V3};
use crate::reference::signals::SignalSums;

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
    /// Implicit Euler's trial step, where the engine measures it (the CPU engine; `None` on the GPU,
    /// where it would cost a read-back of the state): the energy the step gained beyond what the external
    /// forces can supply in it, E(x', v') − E(x, v) − P h (see [`Signals::external_power`]), as a
    /// fraction of the model's energy scale. Implicit Euler on a quadratic energy never gains; a step
    /// whose linearization is poor does (a well-solved step at h = 1/30 on a falling cloth gains up to
    /// 0.07 J of the 96² cloth's 0.9 J), and the adaptive step discards it.
    pub energy_gain: Option<f64>,
}

/// Provot's strain limiting: the Jacobi passes run, summed, and the steps they ran in (their ratio is the
/// record's `strain_passes_per_step`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassTally {
    /// Passes run (a check pass whose output was dropped included: it ran).
    pub passes: u64,
    /// Steps limited.
    pub steps: u64,
    /// The most passes any one step ran.
    pub most: u32,
}

/// The raw signals of the divergence guard ([`crate::stepping::guard`]) at one state: an engine supplies
/// them, the stepping policy judges them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Signals {
    /// Every coordinate finite.
    pub finite: bool,
    /// Total energy: kinetic, spring, gravity and central field (J) ([`forces::energy`]).
    pub energy: f64,
    /// Largest |l − L|/L ([`forces::max_strain`]).
    pub max_strain: f64,
    /// The model's energy scale (J): Σ mᵢ|g| times the diagonal of the positions' bounding box, plus
    /// the kinetic, spring and field energy (the guard takes it once, at its baseline).
    pub energy_scale: f64,
    /// The most power (W) the external forces can put in: the drag against a wind w gives
    /// −d₀m(v − w)·v ≤ d₀m|w|²/4 per particle, the force fields their
    /// [`crate::reference::fields::power_bound`]; gravity and the central field are in the energy and
    /// the drag without wind only removes it.
    pub external_power: f64,
    /// Something moves along a scripted path ([`crate::model::Motion`]): its work is not bounded by
    /// `external_power`, so the guard does not judge the energy (the strain, the solver and finiteness
    /// still are).
    pub scripted: bool,
}

impl Signals {
    /// The signals of state (`x`, `v`) of `model`: O(particles + springs), on the calling thread.
    pub fn of(model: &CpuModel, x: &[V3], v: &[V3]) -> Signals {
        let finite = x.iter().chain(v.iter()).all(|p| p.iter().all(|c| c.is_finite()));
        let (mut lo, mut hi) = (V3::repeat(f64::INFINITY), V3::repeat(f64::NEG_INFINITY));
        let mut mass = 0.0;
        let mut positive = 0.0;
        for i in 0..model.n {
            lo = lo.inf(&x[i]);
            hi = hi.sup(&x[i]);
            mass += model.mass[i];
            positive += 0.5 * model.mass[i] * v[i].norm_squared();
            if model.central_strength != 0.0 {
                positive += 0.5 * model.mass[i] * model.central_strength * (x[i] - model.central_center).norm_squared();
            }
        }
        for s in 0..model.end_a.len() {
            let l = (x[model.end_a[s] as usize] - x[model.end_b[s] as usize]).norm();
            positive += 0.5 * model.k[s] * (l - model.rest[s]).powi(2);
        }
        let extent = if model.n > 0 { (hi - lo).norm() } else { 0.0 };
        let wind = model.wind.norm_squared();
        Signals {
            finite,
            energy: forces::energy(model, x, v),
            max_strain: forces::max_strain(model, x),
            energy_scale: mass * model.gravity.norm() * extent + positive,
            external_power: 0.25 * model.drag * mass * wind + crate::reference::fields::power_bound(model, x, v),
            scripted: model.has_motion(),
        }
    }
}

impl Signals {
    /// The signals of the sums that `shaders/signals.wgsl` reduces on the GPU
    /// ([`crate::reference::signals`]): the energy without the pinned particles' constant terms (the
    /// guard judges differences), the energy scale from the sums' extent, and the external forces'
    /// power bound from Σ m|v|. The aerodynamic wind's bound needs every particle's relative air
    /// speed, which the sums do not carry: with it the energy is not judged (as for scripted motion;
    /// finiteness, the strain and the solver still are).
    pub fn from_sums(model: &CpuModel, s: &SignalSums) -> Signals {
        let mass: f64 = model.mass.iter().sum();
        let energy = s.energy();
        let a_fields: f64 = model.fields.iter().map(|f| f.strength.abs()).sum();
        Signals {
            finite: !s.non_finite && energy.is_finite() && s.max_strain.is_finite() && s.momentum_norm.is_finite(),
            energy,
            max_strain: s.max_strain,
            energy_scale: mass * model.gravity.norm() * s.extent() + s.kinetic + s.central + s.spring,
            external_power: 0.25 * model.drag * mass * model.wind.norm_squared() + a_fields * s.momentum_norm,
            scripted: model.unbounded_work(),
        }
    }
}

/// A state saved by [`Engine::checkpoint`] for [`Engine::rollback`].
#[derive(Clone, Debug, PartialEq)]
pub enum Checkpoint {
    /// Positions and velocities copied to the host.
    Host(StateVectors),
    /// Kept on the device by the engine (the GPU: a buffer copy, nothing read back).
    Device,
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
    /// The springs' damping β = max k_d/k (s) of the model ([`crate::reference::model::CpuModel::spring_damping`];
    /// Shinya's plan depends on it).
    fn spring_damping(&self) -> f64;
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
    /// The divergence guard's signals at the current state (the GPU reads the state back).
    fn signals(&mut self) -> Result<Signals>;
    /// Simulated time (s) at the end of the last step taken (the GPU: recorded).
    fn time(&self) -> f64;
    /// The laid-out model.
    fn model(&self) -> &CpuModel;
    /// Overwrites particle `i`'s position and velocity and pins or frees it (1/m or 0), the rest of the
    /// state untouched; from the next step on.
    fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()>;
    /// Whether particle `i` is pinned now (1/m = 0).
    fn is_pinned(&self, i: usize) -> bool;
    /// Sets or clears the cursor spring ([`crate::model::Cursor`]); from the next step on.
    fn set_cursor(&mut self, cursor: Option<crate::model::Cursor>) -> Result<()>;
    /// The cursor spring set by [`Engine::set_cursor`].
    fn cursor(&self) -> Option<crate::model::Cursor>;
    /// Strain limiting's passes since the engine was built; `None` without strain limiting. The GPU
    /// engine reads its tally back (a stall: call it at the end of a run, not every frame).
    fn strain_passes(&mut self) -> Result<Option<PassTally>> {
        Ok(None)
    }
    /// Whether [`Engine::signals`] reads back from a device (the guard then checks every few frames).
    fn signals_read_back(&self) -> bool {
        false
    }
    /// Saves the current state for [`Engine::rollback`]. The default copies it to the host.
    fn checkpoint(&mut self) -> Result<Checkpoint> {
        self.read_state().map(Checkpoint::Host)
    }
    /// Returns to a state saved by [`Engine::checkpoint`]; what the integrator carries between steps
    /// (LEU's linearization, a CG warm start) is rebuilt.
    fn rollback(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        match checkpoint {
            Checkpoint::Host((x, v)) => self.write_state(x, v),
            Checkpoint::Device => Err(Error::NoDeviceCheckpoint { engine: "this engine" }),
        }
    }
}

/// The error for a state of the wrong length: `x` and `v` must have one entry per particle.
pub fn check_state_len(n: usize, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()> {
    if x.len() != n {
        return Err(Error::invalid("positions.len()", x.len(), Bound::length(n, "must equal the number of particles ({})")));
    }
    if v.len() != n {
        return Err(Error::invalid("velocities.len()", v.len(), Bound::length(n, "must equal the number of particles ({})")));
    }
    Ok(())
}
