//! [`GpuProbe`]: what benchmarks, tests and tools look at inside a [`GpuEngine`] besides driving it
//! (the cost model of a frame, GPU timestamps, local/global's phase split, read-backs of the solvers'
//! inner state for checks against the CPU twins). Many of these calls submit and wait: none belongs on
//! a frame path. Reached by [`GpuEngine::probe`] or [`crate::GpuSimulator::probe`].

use super::{GpuCgState, GpuEngine, LocalGlobalEval};
use crate::engine::StepsReport;
use crate::error::{Bound, Error, Result};
use crate::gpu::base::state::{read_words, GpuState};
use crate::gpu::methods::integrator::Integrator;
use crate::gpu::methods::local_global::LocalGlobalSplit;
use crate::gpu::profiling::cost_model::{frame_model, CostModel, FrameShape};
use crate::gpu::profiling::timestamps::{GpuTimes, KernelTime, PhaseTimer, TimestampSupport};
use crate::gpu::reports::signals::{decode_step_energy, SIGNAL_BYTES};
use crate::gpu::step_end::self_collision::GpuHash;
use crate::method::Method;

/// The probe handle of a [`GpuEngine`]: measurement and inspection, kept apart from the calls that
/// drive a simulation (see [`GpuEngine::probe`]).
pub struct GpuProbe<'a> {
    engine: &'a mut GpuEngine,
}

impl GpuEngine {
    /// The probe handle: the cost model, timestamps and read-backs for checks ([`GpuProbe`]).
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// let mut sim = GpuSimulator::new(device, queue, &model, Method::ImplicitEuler, StepSettings::default())?;
    /// sim.run_frames(1)?;
    /// let cg = sim.probe().cg_state_gpu()?; // the PCG's status words, read back
    /// println!("PCG: {} iterations, residual {:.1e}", cg.total_iterations, cg.residual);
    /// # Ok(()) }
    /// ```
    pub fn probe(&mut self) -> GpuProbe<'_> {
        GpuProbe { engine: self }
    }
}

impl<'a> GpuProbe<'a> {
    /// The engine's buffers (the state, the parameters, the counters), for building kernels beside the
    /// engine's in a benchmark.
    pub fn state(self) -> &'a GpuState {
        let engine: &'a GpuEngine = self.engine;
        &engine.state
    }
}

impl GpuProbe<'_> {
    /// Records the engine's frame alone into `encoder`: the planned steps without the pipelined frame's
    /// report copy, checkpoints or guard signals (what [`GpuProbe::cost_model`] plans). A simulation
    /// driven this way is not judged by the guard.
    pub fn encode_bare_frame(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        self.engine.encode_frame(encoder)
    }

    /// Submits `commands` on the host's `queue`, counted in [`GpuProbe::cost`](crate::gpu::GpuProbe::cost) (a benchmark's own
    /// submits, so that its figures per frame include them).
    pub fn submit_counted(&self, queue: &wgpu::Queue, commands: wgpu::CommandBuffer) {
        self.engine.state.counters.submit(queue, commands);
    }

    /// Bytes of every GPU buffer the engine holds now: the state, the current integrator's buffers, the
    /// colliders', self-collision's, strain limiting's, the wind's, the device checkpoints and the frame
    /// scratch (the power iteration's exist only while it runs; the read-backs' staging buffers beyond
    /// the state's small one only during the read).
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, Simulator, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// let mut sim = GpuSimulator::new(device, queue, &model, Method::ImplicitEuler, StepSettings::default())?;
    /// let n = sim.model().n as u64;
    /// println!("{} B a particle on the GPU", sim.probe().gpu_bytes() / n);
    /// # Ok(()) }
    /// ```
    pub fn gpu_bytes(&self) -> u64 {
        self.engine.gpu_bytes()
    }

    /// What the engine recorded, transferred and waited for since it was built ([`crate::gpu::GpuCost`]:
    /// passes, dispatches, workgroups, submits, read-backs, uploads, waits, steps); the difference of two
    /// snapshots is what happened between them. [`GpuProbe::cost_model`] gives what a planned frame
    /// should record.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let before = sim.probe().cost();
    /// sim.run_frames(10)?;
    /// let spent = sim.probe().cost().since(&before);
    /// println!("{} dispatches, {} waits (the final flush's)", spent.dispatches, spent.waits);
    /// # Ok(()) }
    /// ```
    pub fn cost(&self) -> crate::gpu::GpuCost {
        self.engine.cost()
    }

    /// `steps` steps of the planned h submitted and waited for, outside the guard and the frame
    /// reports: one submit of the recorded steps, or for local/global with the host's Cholesky global
    /// step its multi-submit driver. For tests and benchmarks that step the engine bare.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// let mut sim = GpuSimulator::new(device, queue, &model, Method::LocalGlobal, StepSettings::default())?;
    /// sim.probe().run_steps(1)?; // one local/global step with the host's Cholesky solve
    /// # Ok(()) }
    /// ```
    pub fn run_steps(&mut self, steps: usize) -> Result<()> {
        self.engine.run_steps(steps)
    }

    /// `steps` steps submitted and waited for, with the report the stepping policy reads (the PCG's
    /// iterations and residual, local/global's residual, LEU's retries, the explicit methods' speed
    /// flag): the engine's blocking step, not judged by the divergence guard.
    pub fn take_steps_blocking(&mut self, steps: usize) -> Result<StepsReport> {
        self.engine.take_steps_blocking(steps)
    }

    /// Local/global: builds or refreshes the global solver for the current step and pinned set (the
    /// Cholesky factor, ρ, the multigrid hierarchy) now, so that the first frame does not pay for it.
    pub fn prepare_local_global(&mut self) -> Result<()> {
        self.engine.prepare_local_global()
    }

    /// k₀ by `iters` power iterations on the GPU at the current positions (submits and reads back).
    pub fn power_k0(&mut self, iters: usize) -> Result<f64> {
        self.engine.power_k0(iters)
    }

    /// Reads the timestamps of the work submitted since the last read (waits for the device; not
    /// counted in [`GpuProbe::cost`](crate::gpu::GpuProbe::cost)). Nothing without timestamps.
    pub fn read_timestamps(&mut self) -> Result<()> {
        self.engine.read_timestamps()
    }

    /// The shape of a planned frame of the current method, plan and settings: what
    /// [`crate::GpuSimulator::encode_frame`] records (implicit Euler's trial steps off: set `trial` for the
    /// adaptive step's blocking path). Local/global's solver as last prepared.
    pub fn frame_shape(&self) -> FrameShape {
        let m = &self.engine.model;
        let s = &self.engine.settings;
        let (global, multigrid, multigrid_update) = match &self.engine.integrator {
            Integrator::LocalGlobal(lg) => (lg.global().or(s.global.resolve(Method::LocalGlobal).ok()), lg.multigrid_shape(), None),
            Integrator::Implicit(i) => match i.multigrid_shape() {
                Some((vcycle, update)) => (None, Some(vcycle), Some(update)),
                None => (None, None, None),
            },
            _ => (None, None, None),
        };
        let (pcg_reduce, pcg_groups) = match &self.engine.integrator {
            Integrator::LocalGlobal(lg) => (lg.pcg_reduces(m.n), lg.pcg_groups(m.n)),
            Integrator::Implicit(im) => (im.pcg_reduces(m.n), im.pcg_groups(m.n)),
            _ => (false, 0),
        };
        FrameShape {
            method: Some(self.engine.method),
            n: m.n as u64,
            springs: m.end_a.len() as u64,
            entries: m.incidence.entries.len() as u64,
            colliders: self.engine.colliders.as_ref().map_or(0, |_| m.colliders.len() as u64),
            moving_pins: self.engine.colliders.as_ref().map_or(0, |_| m.moving_pins.len() as u64),
            self_collision_passes: self.engine.self_collider.as_ref().map_or(0, |_| m.self_collision.map_or(0, |s| s.passes as u64)),
            wind_entries: m.aero.map(|_| m.tri.others.len() as u64),
            steps: self.engine.plan.substeps as u64,
            strain_passes: self.engine.strain.as_ref().map_or(0, |s| s.passes() as u64),
            relinearize_every: self.engine.plan.relinearize_every as u64,
            cg_iterations: s.cg_max_iterations as u64,
            trial: false,
            local_global_iterations: s.local_global_iterations as u64,
            global,
            global_iterations: s.global_iterations as u64,
            multigrid,
            pcg_reduce,
            pcg_groups: pcg_groups as u64,
            multigrid_update,
            local_global_rows: match &self.engine.integrator {
                Integrator::LocalGlobal(lg) => Some(lg.rows()),
                _ => None,
            },
        }
    }

    /// The cost model of a planned frame ([`GpuProbe::frame_shape`]): its kernels with their
    /// dispatches, workgroups and estimated bytes, its passes, and the floor.
    pub fn cost_model(&self) -> CostModel {
        frame_model(&self.frame_shape())
    }

    /// Asks for GPU timestamps per phase: they are written when the device has `TIMESTAMP_QUERY` with
    /// `TIMESTAMP_QUERY_INSIDE_ENCODERS` and `TIMESTAMP_QUERY_INSIDE_PASSES` (per phase), or
    /// `TIMESTAMP_QUERY` alone (the frame's pass as a whole). The host must have requested these features
    /// when it created the device; without them this says why and nothing is timed (never an error).
    /// Timed are the frames recorded by the engine and implicit Euler's trial steps;
    /// local/global with the host's Cholesky step is not. The blocking calls read the times after each
    /// submit; a host that submits [`crate::GpuSimulator::encode_frame`] itself calls [`GpuProbe::read_timestamps`].
    pub fn enable_timestamps(&mut self) -> TimestampSupport {
        if self.engine.timer.is_none() {
            self.engine.timer = PhaseTimer::new(&self.engine.device, &self.engine.queue);
        }
        match &self.engine.timer {
            Some(t) => t.support().clone(),
            None => TimestampSupport::of(self.engine.device.features()),
        }
    }

    /// [`GpuProbe::enable_timestamps`] with a timestamp before every dispatch, where the device times
    /// per phase: [`GpuProbe::kernel_times`] then gives each kernel's GPU time. Returns what the device
    /// offers, as `enable_timestamps` does (only [`TimestampSupport::PerPhase`] times kernels).
    pub fn enable_kernel_timestamps(&mut self) -> TimestampSupport {
        let support = self.enable_timestamps();
        if let Some(t) = self.engine.timer.as_mut() {
            t.time_each_dispatch();
        }
        support
    }

    /// The GPU time of each kernel and phase read so far, the longest first (empty unless
    /// [`GpuProbe::enable_kernel_timestamps`] found timestamps per phase).
    pub fn kernel_times(&self) -> Vec<KernelTime> {
        self.engine.timer.as_ref().map(PhaseTimer::kernel_times).unwrap_or_default()
    }

    /// The GPU times read so far (`None` without timestamps).
    pub fn gpu_times(&self) -> Option<GpuTimes> {
        self.engine.timer.as_ref().map(|t| t.times())
    }

    /// Forgets the GPU times read so far (e.g. after warm-up frames).
    pub fn reset_gpu_times(&mut self) {
        if let Some(t) = self.engine.timer.as_mut() {
            t.reset();
        }
    }

    /// Local/global with the host's global step (`--global cholesky`, Liu et al. 2013 §4 with the f64
    /// factor on the CPU): runs one frame by several submits (per iteration one read-back of r and one
    /// upload of δ, n `vec4` each) and waits for it. This is the blocking call to use where
    /// [`crate::GpuSimulator::encode_frame`] refuses; it also runs the GPU solvers (`cg`, `chebyshev`) the same
    /// way. The split of the frame is kept for [`GpuProbe::local_global_last_split`].
    pub fn run_host_global_frame(&mut self) -> Result<LocalGlobalSplit> {
        self.engine.run_host_global_steps(self.engine.plan.substeps, false)
    }

    /// Local/global: runs `frames` frames with every phase its own submit, timed on the host (submit and
    /// wait; lavapipe has no cheaper clock), and returns the split summed over them (see [`LocalGlobalSplit`]).
    /// The frames advance the simulation like `step_frame`.
    pub fn local_global_profile_frames(&mut self, frames: usize) -> Result<LocalGlobalSplit> {
        if self.engine.method != Method::LocalGlobal {
            return Err(Error::invalid(
                "method",
                self.engine.method.name(),
                Bound::Unsupported("the phase split is for local-global".into()),
            ));
        }
        let mut total = LocalGlobalSplit::default();
        for _ in 0..frames {
            let s = self.engine.run_host_global_steps(self.engine.plan.substeps, true)?;
            total.frames += 1;
            total.other_ms += s.other_ms;
            total.local_ms += s.local_ms;
            total.global_ms += s.global_ms;
            total.advance_ms += s.advance_ms;
            total.readback_ms += s.readback_ms;
            total.solve_ms += s.solve_ms;
            total.upload_ms += s.upload_ms;
            total.total_ms += s.total_ms;
        }
        Ok(total)
    }

    /// Local/global: the split of the last frame run by the multi-submit driver (the `cholesky` path, or
    /// [`GpuProbe::local_global_profile_frames`]).
    pub fn local_global_last_split(&self) -> LocalGlobalSplit {
        match &self.engine.integrator {
            Integrator::LocalGlobal(lg) => lg.last_split(),
            _ => LocalGlobalSplit::default(),
        }
    }

    /// Local/global with `chebyshev`: the spectral radius estimate in use (0 for the other solvers).
    pub fn local_global_rho(&self) -> f64 {
        match &self.engine.integrator {
            Integrator::LocalGlobal(lg) => lg.rho(),
            _ => 0.0,
        }
    }

    /// Local/global, for checks against the CPU twins: runs `local_global_inertia` on the current state (q, v), then
    /// `local_global_local_residual` at the positions `x` (pinned particles: give their q), and reads back y, r and
    /// the inverse diagonal. The current state is left as it was.
    pub fn local_global_eval(&mut self, x: &[[f64; 3]]) -> Result<LocalGlobalEval> {
        if self.engine.method != Method::LocalGlobal {
            return Err(Error::invalid(
                "method",
                self.engine.method.name(),
                Bound::Unsupported("local_global_eval needs local-global".into()),
            ));
        }
        if x.len() != self.engine.model.n {
            return Err(Error::invalid("x", x.len(), Bound::length(self.engine.model.n, "must have {} positions")));
        }
        self.engine.prepare_local_global()?;
        let Integrator::LocalGlobal(lg) = &self.engine.integrator else {
            return Err(Error::invalid(
                "method",
                self.engine.method.name(),
                Bound::Unsupported("local_global_eval needs local-global".into()),
            ));
        };
        lg.eval(&self.engine.device, &self.engine.queue, &self.engine.state, &self.engine.model, x)
    }

    /// Implicit Euler and local/global: the PCG's status words (one read-back); zeros for the methods
    /// without a PCG.
    pub fn cg_state_gpu(&self) -> Result<GpuCgState> {
        match &self.engine.integrator {
            Integrator::Implicit(i) => i.cg_state(&self.engine.device, &self.engine.queue, &self.engine.state),
            Integrator::LocalGlobal(lg) => lg.cg_state(&self.engine.device, &self.engine.queue, &self.engine.state),
            _ => Ok(GpuCgState::default()),
        }
    }

    /// Implicit Euler's adaptive step on the device: the halvings a frame recorded now has room for
    /// (`max_frame_halvings`, doubled after frames that forced steps, up to
    /// [`crate::gpu::methods::implicit::adaptive::ADAPTIVE_ROOM_GROWTH`] times it).
    pub fn adaptive_room(&self) -> usize {
        self.engine.adaptive_room
    }

    /// Implicit Euler's adaptive step: the energy sums of the last trial step (`signals_step_partial`
    /// and `signals_reduce`, one read-back), for checks against their twin
    /// ([`crate::reference::signals::step_energy`]); `None` before the first trial.
    pub fn step_energy(&self) -> Result<Option<crate::reference::signals::StepEnergy>> {
        let Integrator::Implicit(i) = &self.engine.integrator else { return Ok(None) };
        let Some(a) = i.adaptive() else { return Ok(None) };
        let words = SIGNAL_BYTES as usize / 4;
        let words = read_words(&self.engine.device, &self.engine.queue, &self.engine.state, &a.energy.out, 0, words)?;
        Ok(Some(decode_step_energy(bytemuck::cast_slice(&words))))
    }

    /// Implicit Euler: Δv of the last solve, read back (for checks).
    pub fn read_dv(&self) -> Result<Vec<[f64; 3]>> {
        match &self.engine.integrator {
            Integrator::Implicit(i) => i.read_dv(&self.engine.device, &self.engine.queue, &self.engine.state),
            _ => Err(Error::invalid("method", self.engine.method.name(), Bound::Unsupported("read_dv needs implicit-euler".into()))),
        }
    }

    /// Implicit Euler with the multigrid preconditioner: z = B r, one GPU V-cycle on the system of the
    /// current state for a step of size `h` (for checks against [`crate::linalg::spring_mg::SpringMg`]).
    pub fn implicit_mg_apply(&mut self, h: f64, r: &[[f64; 3]]) -> Result<Vec<[f64; 3]>> {
        self.engine.write_params_h(h);
        let Integrator::Implicit(implicit) = &self.engine.integrator else {
            return Err(Error::invalid(
                "method",
                self.engine.method.name(),
                Bound::Unsupported("implicit_mg_apply needs implicit-euler".into()),
            ));
        };
        let z = implicit.apply_multigrid(&self.engine.device, &self.engine.queue, &self.engine.state, 0, r);
        self.engine.write_params();
        z
    }

    /// LEU: the divergence retries counted on the GPU so far (one read-back); 0 for the other methods.
    pub fn leu_retries_gpu(&self) -> Result<usize> {
        match &self.engine.integrator {
            Integrator::Leu(leu) => {
                Ok(read_words(&self.engine.device, &self.engine.queue, &self.engine.state, leu.flags(), 0, 4)?[2] as usize)
            }
            _ => Ok(0),
        }
    }

    /// Self-collision: builds the spatial hash of the current state on the GPU (no repulsion) and reads
    /// it back, for checks against [`crate::reference::self_collision::SpatialHash`]; `None` without
    /// self-collision.
    pub fn self_collision_hash(&self) -> Result<Option<GpuHash>> {
        self.engine.self_collider.as_ref().map(|sc| sc.read_hash(&self.engine.device, &self.engine.queue, &self.engine.state)).transpose()
    }
}
