//! `Integrator`: the method the simulator runs now, built when the method is chosen (its kernels
//! compiled, its buffers allocated, its bind groups built) and dropped when another is chosen. One
//! variant per method family; each owns everything that family needs beyond the shared
//! [`crate::gpu::GpuState`].

use crate::error::{Bound, Error, Result};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::specialize::ForceFeatures;
use crate::gpu::base::state::GpuState;
use crate::gpu::methods::explicit::ExplicitIntegrator;
use crate::gpu::methods::implicit::ImplicitIntegrator;
use crate::gpu::methods::leu::LeuIntegrator;
use crate::gpu::methods::local_global::integrator::LocalGlobalIntegrator;
use crate::gpu::profiling::cost::{CountedPass, GpuCounters};
use crate::gpu::step_end::collide::Colliders;
use crate::method::{Method, Preconditioner, StepPlan, StepSettings};
use crate::reference::model::CpuModel;

/// The current method's integrator.
pub enum Integrator {
    /// Explicit and symplectic Euler, midpoint, RK4.
    Explicit(ExplicitIntegrator),
    /// Linearized explicit Euler.
    Leu(LeuIntegrator),
    /// Implicit Euler with the GPU PCG.
    Implicit(Box<ImplicitIntegrator>),
    /// Liu et al. 2013's local/global method.
    LocalGlobal(Box<LocalGlobalIntegrator>),
}

impl Integrator {
    /// Builds `method`'s integrator on the state `st` (sizes checked against the device's limits first).
    pub fn new(
        device: &wgpu::Device,
        options: &GpuOptions,
        st: &GpuState,
        m: &CpuModel,
        method: Method,
        settings: &StepSettings,
        colliders: Option<&Colliders>,
    ) -> Result<Self> {
        let entries = m.incidence.entries.len();
        let features = ForceFeatures::of(m, method);
        Ok(match method {
            Method::ExplicitEuler | Method::SymplecticEuler | Method::Midpoint | Method::Rk4 => {
                Integrator::Explicit(ExplicitIntegrator::new(device, options, st, method, features)?)
            }
            Method::Leu => Integrator::Leu(LeuIntegrator::new(device, options, st, entries)?),
            Method::ImplicitEuler => {
                let multigrid = settings.preconditioner.resolve(method) == Preconditioner::Multigrid;
                Integrator::Implicit(Box::new(ImplicitIntegrator::new(device, options, st, m, features, multigrid)?))
            }
            Method::LocalGlobal => {
                Integrator::LocalGlobal(Box::new(LocalGlobalIntegrator::new(device, options, st, m, settings, colliders)?))
            }
            Method::Newton => {
                return Err(Error::invalid("method", method.name(), Bound::Unsupported("runs on the CPU only (use --backend cpu)".into())))
            }
        })
    }

    /// Bytes of the integrator's buffers.
    pub fn bytes(&self) -> u64 {
        match self {
            Integrator::Explicit(i) => i.bytes(),
            Integrator::Leu(i) => i.bytes(),
            Integrator::Implicit(i) => i.bytes(),
            Integrator::LocalGlobal(i) => i.bytes(),
        }
    }

    /// Writes the integrator's parameter blocks for the step h (before a frame, never within).
    pub fn write_params(&self, queue: &wgpu::Queue, counters: &GpuCounters, m: &CpuModel, settings: &StepSettings, h: f64) {
        match self {
            Integrator::Implicit(i) => i.write_params(queue, counters, m.n, settings),
            Integrator::LocalGlobal(i) => i.write_params(queue, counters, m, settings, h),
            Integrator::Explicit(_) | Integrator::Leu(_) => {}
        }
    }

    /// The state, the step or the forces changed: LEU linearises again at its next step.
    pub fn relinearize(&mut self) {
        if let Integrator::Leu(i) = self {
            i.relinearize();
        }
    }

    /// The speed-limit flags (\[3\]) of the explicit family and LEU.
    pub fn flags(&self) -> Option<&wgpu::Buffer> {
        match self {
            Integrator::Explicit(i) => Some(i.flags()),
            Integrator::Leu(i) => Some(i.flags()),
            _ => None,
        }
    }

    /// Records, after a frame's steps and in the same submit, the copies of what the stepping policy reads
    /// of them into `dst` from byte `at` (the explicit family's speed flag, which it also clears; LEU's
    /// flags; the PCG's status; local/global's residuals and the PCG's status); returns their bytes (at
    /// most 128): the blocking path's read-back of `st.readback`, or a frame report's slot
    /// ([`crate::gpu::reports`]).
    pub fn encode_report(&self, encoder: &mut wgpu::CommandEncoder, st: &GpuState, dst: &wgpu::Buffer, at: u64) -> u64 {
        match self {
            Integrator::Explicit(i) => {
                encoder.copy_buffer_to_buffer(i.flags(), 0, dst, at, 16);
                encoder.clear_buffer(i.flags(), 12, Some(4));
                16
            }
            Integrator::Leu(i) => {
                encoder.copy_buffer_to_buffer(i.flags(), 0, dst, at, 16);
                16
            }
            Integrator::Implicit(i) => i.encode_report(encoder, dst, at),
            Integrator::LocalGlobal(i) => i.encode_report(encoder, st, dst, at),
        }
    }

    /// Records what a frame does before its first step (clearing flags or the PCG's status).
    pub fn begin_frame(&self, encoder: &mut wgpu::CommandEncoder) {
        match self {
            Integrator::Leu(i) => i.begin_frame(encoder),
            Integrator::Implicit(i) => i.begin_frame(encoder),
            Integrator::LocalGlobal(i) => i.begin_frame(encoder),
            Integrator::Explicit(_) => {}
        }
    }

    /// Records one step from state\[p\] into state[1−p].
    pub fn encode_step(
        &mut self,
        pass: &mut CountedPass,
        p: usize,
        st: &GpuState,
        plan: &StepPlan,
        settings: &StepSettings,
        contact: Option<(&Colliders, usize)>,
    ) -> Result<()> {
        match self {
            Integrator::Explicit(i) => i.encode_step(pass, p, st.n),
            Integrator::Leu(i) => i.encode_step(pass, p, st.n, plan.relinearize_every),
            Integrator::Implicit(i) => i.encode_step(pass, p, st.n, settings.cg_max_iterations),
            Integrator::LocalGlobal(i) => i.encode_step(pass, p, st, settings, contact)?,
        }
        Ok(())
    }
}
