//! `GpuEngine`: a model on a caller's device, as middleware. It holds the particle state
//! ([`GpuState`]), the current method's [`Integrator`] (built when the method is chosen, dropped when
//! another is), the colliders, and the step plan that the stepping policy gave it
//! ([`crate::stepping::Stepper`]; [`crate::GpuSimulator`] is the two together, and the face a host
//! uses). The engine's own public face is small: its constructors (it names its adapter from the
//! device), [`GpuEngine::probe`] (what benchmarks and tests inspect, `engine/probe.rs`) and the [`Engine`]
//! trait that the stepping policy drives. It records frames into the caller's encoder (no submit, no
//! poll, no read-back); the blocking calls (the [`Engine`] steps, the host's Cholesky global step, the
//! read-backs) are in `engine/blocking.rs`.

mod adaptive;
mod blocking;
mod frames;
mod guard;
mod interaction;
mod probe;

use crate::engine::{check_state_len, Checkpoint, Engine, PassTally, Signals, StepsReport};
use crate::error::{Bound, Error, HostCall, Result};
use crate::gpu::base::layout::{GpuParams, CURSOR_NONE};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::state::{pack_state, read_vec4s_with, xyz, GpuState};
use crate::gpu::methods::integrator::Integrator;
use crate::gpu::methods::local_global::integrator::host_global_error;
use crate::gpu::methods::power::PowerKernels;
use crate::gpu::profiling::cost::{CountedPass, GpuCost};
use crate::gpu::profiling::timestamps::PhaseTimer;
use crate::gpu::step_end::collide::Colliders;
use crate::gpu::step_end::self_collision::SelfCollider;
use crate::gpu::step_end::strain_limit::StrainLimiter;
use crate::gpu::step_end::wind::Wind;
use crate::gpu::step_end::StepEnd;
use crate::method::{GlobalSolve, Method, StepPlan, StepSettings};
use crate::model::Model;
use crate::reference::model::CpuModel;

pub use crate::gpu::methods::local_global::integrator::LocalGlobalEval;
pub use crate::gpu::methods::pcg::GpuCgState;
pub(crate) use frames::{FrameParts, FRAME_CHECKPOINTS};
pub use probe::GpuProbe;

/// A simulation on the GPU.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    options: GpuOptions,
    state: GpuState,
    /// The current method's kernels, buffers and bind groups.
    integrator: Integrator,
    /// k₀'s kernels, compiled on the first power iteration.
    power: Option<PowerKernels>,
    /// The model's colliders, `None` without any.
    colliders: Option<Colliders>,
    /// The model's self-collision, `None` without it.
    self_collider: Option<SelfCollider>,
    /// The model's strain limiting, `None` without it.
    strain: Option<StrainLimiter>,
    model: CpuModel,
    method: Method,
    settings: StepSettings,
    plan: StepPlan,
    adapter: String,
    /// The cursor spring (written into `Params` for the explicit methods only).
    cursor: Option<crate::model::Cursor>,
    /// The divergence guard's checkpoint: a copy of `state[0]` on the device, made on the first
    /// [`Engine::checkpoint`].
    checkpoint: Option<wgpu::Buffer>,
    /// GPU timestamps per phase, when asked for and the device has them ([`GpuProbe::enable_timestamps`]).
    timer: Option<PhaseTimer>,
    /// Simulated time (s): the end of the last recorded or accepted step; `Params.time` holds the start
    /// of the current batch for the gusts ([`GpuEngine::write_time`]).
    time: f64,
    /// The adaptive step's pending trial step (s), added to the time when it is accepted.
    trial_h: f64,
    /// The time at the divergence guard's checkpoint.
    checkpoint_time: f64,
    /// The steps whose placements [`crate::GpuSimulator::prepare_frame`] wrote: (start time, steps).
    prepared: Option<(f64, usize)>,
    /// Implicit Euler's adaptive step on the device: the halvings a frame has room for now
    /// (`max_frame_halvings`, grown after frames that forced steps; [`GpuEngine::note_forced_steps`]).
    adaptive_room: usize,
    /// The aerodynamic wind's pass, `None` without the wind.
    wind: Option<Wind>,
    /// The guard's signal kernels, built by the first pipelined frame that reduces them.
    signals: Option<crate::gpu::reports::signals::SignalKernels>,
    /// The pipelined guard's checkpoints on the device ([`FRAME_CHECKPOINTS`] at most).
    frame_checkpoints: Vec<wgpu::Buffer>,
    /// A browser page cannot read the state back: the positions last uploaded (at construction and by
    /// `write_state`), for the CPU power iteration that gives k₀ there.
    #[cfg(target_arch = "wasm32")]
    uploaded_positions: Vec<crate::reference::model::V3>,
}

/// The implicit method's settings that the GPU cannot honour are errors, not silent changes.
/// The device's adapter as [`Engine::backend_name`] names it (`name (backend, type)`; `"caller's device"`
/// where the backend gives no name).
fn adapter_name(device: &wgpu::Device) -> String {
    let info = device.adapter_info();
    if info.name.is_empty() {
        String::from("caller's device")
    } else {
        crate::gpu::base::context::adapter_name(&info)
    }
}

fn check_gpu_settings(method: Method, s: &StepSettings) -> Result<()> {
    if !method.on_gpu() {
        return Err(Error::invalid("method", method.name(), Bound::Unsupported("runs on the CPU only (use --backend cpu)".into())));
    }
    s.global.resolve(method)?;
    s.preconditioner.check(method, s.global)?;
    if method == Method::ImplicitEuler && s.global == GlobalSolve::Tridiagonal {
        return Err(Error::invalid(
            "global",
            "tridiagonal",
            Bound::Unsupported("the tridiagonal solve runs on the CPU only (use --backend cpu or --global cg)".into()),
        ));
    }
    Ok(())
}

impl GpuEngine {
    /// Builds the engine on the caller's device and queue with the default [`GpuOptions`] (kernels with
    /// wgpu's runtime checks): uploads the model and builds the method's integrator. It steps once the
    /// stepping policy has given it a plan ([`Engine::set_plan`]); `springsim::GpuSimulator::new` does both.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// use springsim::{gpu::GpuEngine, stepping::Stepper, Method, StepSettings};
    /// let model = springsim::model::curtain(41, None)?;
    /// let engine = GpuEngine::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let sim = Stepper::drive(engine)?; // the plan: what springsim::GpuSimulator::new does in one call
    /// # let _ = sim; Ok(()) }
    /// ```
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, model: &Model, method: Method, settings: StepSettings) -> Result<Self> {
        Self::new_with_options(device, queue, model, method, settings, GpuOptions::default())
    }

    /// [`GpuEngine::new`] with explicit [`GpuOptions`]. Every buffer is checked against the device's
    /// limits before it is allocated: one that would not fit is an [`Error::BufferTooLarge`].
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// use springsim::{gpu::{GpuEngine, GpuOptions}, Method, StepSettings};
    /// let model = springsim::model::curtain(41, None)?;
    /// // the default keeps wgpu's bounds checks in the kernels (`with_unchecked_shaders` opts out)
    /// let options = GpuOptions::default();
    /// let engine = GpuEngine::new_with_options(device, queue, &model, Method::ImplicitEuler, StepSettings::default(), options)?;
    /// # let _ = engine; Ok(()) }
    /// ```
    pub fn new_with_options(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        model: &Model,
        method: Method,
        settings: StepSettings,
        options: GpuOptions,
    ) -> Result<Self> {
        settings.validate()?;
        check_gpu_settings(method, &settings)?;
        let (np, ns) = (model.n_particles() as u64, model.springs.len() as u64);
        // the f64 layout, and the packed state and neighbour tables on their way to the GPU
        crate::memory::check(
            &format!("the GPU engine's host copy of {np} particles and {ns} springs"),
            crate::memory::cpu_model_bytes(np, ns) + 64 * np + 32 * ns,
        )?;
        let mut cm = CpuModel::new(model)?;
        let state = GpuState::new(device, queue, &options, &cm, &model.positions, &model.velocities)?;
        let mut colliders = Colliders::new(device, &options, &state, &cm, 1)?;
        if let Some(c) = colliders.as_mut() {
            c.write_slots(device, queue, &state.counters, &mut cm, &[0.0])?;
        }
        let integrator = Integrator::new(device, &options, &state, &cm, method, &settings, colliders.as_ref())?;
        let self_collider = SelfCollider::new(device, &options, &state, cm.self_collision.as_ref())?;
        let rule = crate::reference::strain_limit::VelocityRule::of(method);
        let strain = StrainLimiter::new(device, &options, &state, cm.strain_limit, rule)?;
        let wind = Wind::new(device, &options, &state, &cm)?;
        let room = settings.max_frame_halvings;
        let sim = GpuEngine {
            device: device.clone(),
            queue: queue.clone(),
            options,
            state,
            integrator,
            power: None,
            colliders,
            self_collider,
            strain,
            plan: StepPlan::default(),
            model: cm,
            method,
            settings,
            adapter: adapter_name(device),
            cursor: None,
            checkpoint: None,
            timer: None,
            time: 0.0,
            trial_h: 0.0,
            checkpoint_time: 0.0,
            prepared: None,
            adaptive_room: room,
            wind,
            signals: None,
            frame_checkpoints: Vec::new(),
            #[cfg(target_arch = "wasm32")]
            uploaded_positions: model.positions.iter().map(|p| crate::reference::model::V3::from(*p)).collect(),
        };
        sim.write_params();
        Ok(sim)
    }

    /// The shared buffers (positions for drawing: `state().state[0]`, range `state().positions_range()`).
    pub(crate) fn state(&self) -> &GpuState {
        &self.state
    }

    /// The buffer whose first n `vec4<f32>` are the current positions (`STORAGE | VERTEX | COPY_SRC`).
    pub(crate) fn positions_buffer(&self) -> &wgpu::Buffer {
        &self.state.state[0]
    }

    /// Bytes of every GPU buffer the simulation holds now: the state, the current integrator's buffers
    /// and the colliders' (the power iteration's exist only while it runs; the read-backs' staging
    /// buffers beyond the state's small one only during the read).
    fn gpu_bytes(&self) -> u64 {
        self.state.bytes()
            + self.integrator.bytes()
            + self.colliders.as_ref().map_or(0, |c| c.bytes)
            + self.self_collider.as_ref().map_or(0, |c| c.bytes)
            + self.strain.as_ref().map_or(0, |s| s.bytes)
            + self.wind.as_ref().map_or(0, |w| w.bytes)
            + self.checkpoint.as_ref().map_or(0, |b| b.size())
            + self.frame_bytes()
    }

    /// Writes the simulation time reached so far into `Params.time` (the gusts of
    /// [`crate::model::AeroWind`] are evaluated at it over the next batch of steps). The blocking calls
    /// do it before each batch; a host that records [`crate::GpuSimulator::encode_frame`] itself calls it before
    /// each frame's submit (else the gust stays at the last time written). Nothing without the wind.
    pub(crate) fn write_time(&self) {
        if self.wind.is_some() {
            let t = self.time as f32;
            let at = std::mem::offset_of!(GpuParams, time) as u64;
            self.state.counters.write_buffer(&self.queue, &self.state.params, at, bytemuck::bytes_of(&t));
        }
    }

    fn write_params(&self) {
        self.write_params_h(self.plan.h);
    }

    /// Writes `Params` and the integrator's parameter blocks for the step h.
    fn write_params_h(&self, h: f64) {
        let m = &self.model;
        let mut p = GpuParams {
            gravity: [m.gravity.x as f32, m.gravity.y as f32, m.gravity.z as f32, m.drag as f32],
            wind: [m.wind.x as f32, m.wind.y as f32, m.wind.z as f32, m.central_strength as f32],
            center: [m.central_center.x as f32, m.central_center.y as f32, m.central_center.z as f32, self.settings.speed_limit as f32],
            n_particles: m.n as u32,
            n_springs: m.end_a.len() as u32,
            h: h as f32,
            alpha: self.plan.alpha as f32,
            cursor: [0.0; 4],
            cursor_particle: CURSOR_NONE,
            cursor_damping: 0.0,
            _pad: [0; 2],
            time: self.time as f32,
            n_fields: m.fields.len() as u32,
            ..Default::default()
        };
        if let Some(a) = m.aero {
            let v4 = |p: [f64; 3], w: f64| [p[0] as f32, p[1] as f32, p[2] as f32, w as f32];
            p.aero_base = v4(a.base, a.coefficient);
            p.aero_gust = v4(a.gust, a.frequency);
        }
        for (f, field) in m.fields.iter().take(crate::model::MAX_FIELDS).enumerate() {
            p.fields[4 * f..4 * f + 4].copy_from_slice(&crate::gpu::base::layout::pack_field(field));
        }
        if let Some(c) = self.cursor.filter(|_| !self.method.is_implicit()) {
            p.cursor = [c.target[0] as f32, c.target[1] as f32, c.target[2] as f32, c.stiffness as f32];
            p.cursor_particle = c.particle as u32;
            p.cursor_damping = c.damping as f32;
        }
        self.state.counters.write_buffer(&self.queue, &self.state.params, 0, bytemuck::bytes_of(&p));
        self.integrator.write_params(&self.queue, &self.state.counters, m, &self.settings, h);
    }

    /// Local/global: builds or refreshes the global solver for the current step h and pinned set (the
    /// Cholesky factor, ρ, the multigrid hierarchy, the per-dispatch parameter blocks; see
    /// [`crate::gpu::methods::local_global::integrator::LocalGlobalIntegrator::prepare`]). Nothing to do for the other
    /// methods or when nothing changed.
    pub(super) fn prepare_local_global(&mut self) -> Result<()> {
        self.prepare_lg_uploading(true)
    }

    /// Local/global: the global solver in use once prepared (`None` for the other methods).
    fn local_global_global(&self) -> Option<GlobalSolve> {
        match &self.integrator {
            Integrator::LocalGlobal(lg) => lg.global(),
            _ => None,
        }
    }

    /// Records one frame (`plan().substeps` steps) into `encoder`, without submitting, polling, reading
    /// back or writing the queue: the host submits. The state ends in `state[0]`. On the LEU path the
    /// divergence retries are counted on the GPU; [`GpuProbe::leu_retries_gpu`] reads them.
    ///
    /// Local/global with `--global cholesky` cannot be recorded into one encoder (its global step reads r
    /// back and uploads δ once per iteration): that returns an error naming
    /// the blocking calls to use instead (`Simulator::step_frame`, [`GpuEngine::run_steps`]).
    ///
    /// Implicit Euler's adaptive step (on by default) decides after each trial step from a flag read back
    /// from the GPU, so it is not recorded here either: `encode_frame` records the planned steps as they
    /// come, as with `adaptive: false`. A host that wants the adaptive step calls the blocking
    /// `step_frame` of [`crate::GpuSimulator`], or sets a step the model tolerates (`StepSettings::fixed_h`).
    ///
    /// A model with scripted motion ([`crate::model::Motion`]: moving colliders or pins) needs the
    /// frame's placements written first: call [`crate::GpuSimulator::prepare_frame`] (it writes the queue) before
    /// each `encode_frame`, as with glyphon's `prepare` and `render`; without it this is an error.
    pub(crate) fn encode_frame(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        self.encode_steps(encoder, self.plan.substeps)
    }

    /// Whether the model depends on time: it moves colliders or pins along paths, or has gusting wind
    /// (then [`crate::GpuSimulator::prepare_frame`] comes before every [`crate::GpuSimulator::encode_frame`]).
    pub(crate) fn needs_prepare(&self) -> bool {
        self.model.has_motion() || self.wind.is_some()
    }

    /// Writes what the next `steps` steps of size `h` need to know of time, before they are recorded:
    /// the time for the gusts (`Params.time`) and the placements of whatever moves along a path (the
    /// colliders where they are at the end of each step, the moving pins' offsets and velocities: one
    /// `write_buffer` of one 256-byte-aligned block per step, evaluated in f64 on the host). Nothing to
    /// do for a model that does not depend on time ([`crate::GpuSimulator::prepare_frame`]).
    pub(crate) fn prepare_steps(&mut self, steps: usize, h: f64) -> Result<()> {
        if !self.needs_prepare() {
            return Ok(());
        }
        self.write_time();
        if let Some(c) = self.colliders.as_mut().filter(|_| self.model.has_motion()) {
            let t_end: Vec<f64> = (1..=steps).map(|k| self.time + k as f64 * h).collect();
            c.write_slots(&self.device, &self.queue, &self.state.counters, &mut self.model, &t_end)?;
        }
        self.prepared = Some((self.time, steps));
        Ok(())
    }

    /// A model that depends on time must have had its frame prepared for these steps.
    fn check_prepared(&self, steps: usize) -> Result<()> {
        match self.prepared {
            _ if !self.needs_prepare() => Ok(()),
            Some((t, k)) if t == self.time && k >= steps => Ok(()),
            _ => Err(Error::NeedsHostCall(HostCall::PrepareFrame)),
        }
    }

    /// Records `steps` steps (a frame is `plan().substeps` of them); see [`crate::GpuSimulator::encode_frame`].
    pub(crate) fn encode_steps(&mut self, encoder: &mut wgpu::CommandEncoder, steps: usize) -> Result<()> {
        self.prepare_lg_uploading(false)?;
        if self.local_global_global() == Some(GlobalSolve::Cholesky) {
            return Err(host_global_error());
        }
        self.check_prepared(steps)?;
        self.integrator.begin_frame(encoder);
        let mut p = 0usize;
        {
            let writes = self.timer.as_mut().and_then(|t| t.pass_writes());
            let mut raw = self.state.counters.begin_pass(encoder, "springsim.frame", writes);
            let mut pass = CountedPass::new(&mut raw, &self.state.counters).with_timer(self.timer.as_mut());
            self.state.counters.steps(steps);
            for k in 0..steps {
                if let Some(w) = &self.wind {
                    // the wind's impulse into the other buffer; the step runs from there
                    w.encode(&mut pass, p, self.state.n);
                    p ^= 1;
                }
                let contact = self.colliders.as_ref().map(|c| (c, k));
                self.integrator.encode_step(&mut pass, p, &self.state, &self.plan, &self.settings, contact)?;
                let end = StepEnd {
                    strain: self.strain.as_ref(),
                    self_collider: self.self_collider.as_ref(),
                    colliders: self.colliders.as_ref(),
                };
                end.encode(&mut pass, 1 - p, self.state.n, k);
                p ^= 1;
            }
            pass.finish();
        }
        if let Some(t) = &self.timer {
            t.resolve(encoder);
        }
        if p == 1 {
            encoder.copy_buffer_to_buffer(&self.state.state[1], 0, &self.state.state[0], 0, self.state.state_bytes());
        }
        self.time += steps as f64 * self.plan.h;
        self.prepared = None;
        Ok(())
    }

    /// Runs `steps` steps and waits for them: one submit of the recorded steps, or, for
    /// local/global with the host's Cholesky global step, the multi-submit driver.
    fn run_steps(&mut self, steps: usize) -> Result<()> {
        self.submit_steps(steps, false).map(|_| ())
    }

    /// [`GpuEngine::run_steps`]; with `report`, the copies of [`Integrator::encode_report`] are recorded
    /// after the steps in the same submit (after the Cholesky driver's last submit, in one of their own)
    /// and their bytes read back, else nothing is.
    pub(super) fn submit_steps(&mut self, steps: usize, report: bool) -> Result<Vec<u8>> {
        self.prepare_local_global()?;
        self.prepare_steps(steps, self.plan.h)?;
        let cholesky = self.local_global_global() == Some(GlobalSolve::Cholesky);
        if cholesky {
            self.run_host_global_steps(steps, false)?;
            if !report {
                return Ok(Vec::new());
            }
        }
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.steps") });
        if !cholesky {
            self.encode_steps(&mut enc, steps)?;
        }
        let bytes = if report { self.integrator.encode_report(&mut enc, &self.state, &self.state.readback, 0) } else { 0 };
        self.state.counters.submit(&self.queue, enc.finish());
        let out = if report {
            crate::gpu::base::state::read_buffer(&self.device, &self.state.counters, &self.state.readback, bytes)?
        } else {
            self.state.counters.wait(&self.device)?;
            Vec::new()
        };
        if !cholesky {
            self.read_timestamps()?;
        }
        Ok(out)
    }

    /// What the engine recorded and transferred since it was built ([`GpuCost`]: passes, dispatches,
    /// workgroups, submits, read-backs, uploads, steps); the difference of two snapshots is what happened
    /// between them. [`GpuProbe::cost_model`] gives what a planned frame should record.
    fn cost(&self) -> GpuCost {
        self.state.counters.snapshot()
    }

    /// Reads the timestamps of the work submitted since the last read (waits for the device; its
    /// read-back is not counted in [`GpuProbe::cost`](crate::gpu::GpuProbe::cost)). Nothing without timestamps.
    pub(super) fn read_timestamps(&mut self) -> Result<()> {
        match self.timer.as_mut() {
            Some(t) => t.read(&self.device),
            None => Ok(()),
        }
    }
}

impl Engine for GpuEngine {
    fn backend_name(&self) -> String {
        format!("gpu: {}", self.adapter)
    }

    fn method(&self) -> Method {
        self.method
    }

    fn settings(&self) -> &StepSettings {
        &self.settings
    }

    fn set_settings(&mut self, settings: StepSettings) -> Result<()> {
        check_gpu_settings(self.method, &settings)?;
        self.adaptive_room = settings.max_frame_halvings;
        self.settings = settings;
        self.write_params();
        Ok(())
    }

    fn drag(&self) -> f64 {
        self.model.drag
    }

    fn spring_damping(&self) -> f64 {
        self.model.spring_damping()
    }

    /// Builds the new method's integrator (its kernels, buffers and bind groups) and drops the old one;
    /// the state is kept.
    fn set_method(&mut self, method: Method) -> Result<()> {
        check_gpu_settings(method, &self.settings)?;
        let integrator =
            Integrator::new(&self.device, &self.options, &self.state, &self.model, method, &self.settings, self.colliders.as_ref())?;
        self.integrator = integrator;
        if let Some(s) = self.strain.as_mut() {
            s.set_rule(&self.state.counters, &self.queue, crate::reference::strain_limit::VelocityRule::of(method));
        }
        self.method = method;
        self.adaptive_room = self.settings.max_frame_halvings;
        Ok(())
    }

    fn stiffness_k0(&mut self) -> Result<f64> {
        // a browser page cannot read the GPU's power iteration back: the CPU's, at the positions last
        // uploaded (the pipelined frame re-estimates k₀ on the GPU after a speed alarm, as natively)
        #[cfg(target_arch = "wasm32")]
        return Ok(crate::cpu::power::power_k0(&self.model, &self.uploaded_positions, self.settings.power_iterations));
        #[cfg(not(target_arch = "wasm32"))]
        self.power_k0(self.settings.power_iterations)
    }

    fn set_plan(&mut self, plan: &StepPlan) -> Result<()> {
        self.plan = *plan;
        self.integrator.relinearize();
        if let Integrator::Implicit(i) = &self.integrator {
            i.reset_adaptive(&self.queue, &self.state.counters);
        }
        self.write_params();
        self.prepare_local_global()
    }

    fn take_steps(&mut self, steps: usize) -> Result<StepsReport> {
        self.take_steps_blocking(steps)
    }

    fn try_step(&mut self, h: f64) -> Result<StepsReport> {
        self.try_implicit_step(h)
    }

    fn accept_trial(&mut self) -> Result<()> {
        self.time += self.trial_h;
        self.trial_h = 0.0;
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.accept") });
        enc.copy_buffer_to_buffer(&self.state.state[1], 0, &self.state.state[0], 0, self.state.state_bytes());
        self.state.counters.submit(&self.queue, enc.finish());
        Ok(())
    }

    fn read_state(&mut self) -> Result<(Vec<[f64; 3]>, Vec<[f64; 3]>)> {
        let n = self.state.n;
        // converted from the mapping: no f32 copy on the host
        read_vec4s_with(&self.device, &self.queue, &self.state.counters, &self.state.state[0], 0, 2 * n, |v4| {
            (xyz(&v4[..n]), xyz(&v4[n..]))
        })
    }

    fn write_state(&mut self, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()> {
        check_state_len(self.model.n, x, v)?;
        #[cfg(target_arch = "wasm32")]
        {
            self.uploaded_positions = x.iter().map(|p| crate::reference::model::V3::from(*p)).collect();
        }
        let packed = pack_state(&self.model, x, v);
        if !packed.is_empty() {
            self.state.counters.write_buffer(&self.queue, &self.state.state[0], 0, bytemuck::cast_slice(&packed));
        }
        self.integrator.relinearize();
        Ok(())
    }

    fn signals(&mut self) -> Result<Signals> {
        self.guard_signals()
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn model(&self) -> &CpuModel {
        &self.model
    }

    fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        GpuEngine::set_particle(self, i, x, v, pinned)
    }

    fn is_pinned(&self, i: usize) -> bool {
        GpuEngine::is_pinned(self, i)
    }

    fn set_cursor(&mut self, cursor: Option<crate::model::Cursor>) -> Result<()> {
        GpuEngine::set_cursor(self, cursor)
    }

    fn cursor(&self) -> Option<crate::model::Cursor> {
        GpuEngine::cursor(self)
    }

    fn signals_read_back(&self) -> bool {
        true
    }

    fn strain_passes(&mut self) -> Result<Option<PassTally>> {
        self.strain.as_ref().map(|s| s.tally(&self.device, &self.queue, &self.state.counters)).transpose()
    }

    fn checkpoint(&mut self) -> Result<Checkpoint> {
        self.checkpoint_time = self.time;
        self.save_checkpoint()
    }

    fn rollback(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        self.restore_checkpoint(checkpoint)?;
        self.time = self.checkpoint_time;
        self.prepared = None;
        Ok(())
    }
}
