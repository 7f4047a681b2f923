//! The two engines under the stepping policy: [`CpuSimulator`] (the f64 CPU engine) and
//! [`GpuSimulator`] (the GPU engine on a caller's device), with their constructors and the calls that
//! need both the policy and one engine.

use super::Stepper;
use crate::cpu::CpuEngine;
use crate::error::Result;
use crate::gpu::{GpuEngine, GpuOptions, GpuProbe};
use crate::method::{Method, StepSettings};
use crate::model::{Cursor, Model};

/// A simulation on the CPU, in f64: the CPU engine under the stepping policy.
pub type CpuSimulator = Stepper<CpuEngine>;

/// A simulation on the GPU: the GPU engine under the stepping policy, driven by a host through one
/// path that never waits: [`GpuSimulator::prepare_frame`], [`GpuSimulator::encode_frame`] into the
/// host's encoder, the host's submit, then [`GpuSimulator::poll_reports`]
/// ([`crate::stepping::pipelined`]). The host draws from [`GpuSimulator::positions_buffer`] and
/// edits through [`GpuSimulator::set_particle`] and [`GpuSimulator::set_cursor`]. The blocking
/// [`crate::Simulator`] calls (`step_frame`, `read_state`) are for tests and scripts; what the bench
/// and the tests probe of the engine is reached through one handle, [`GpuSimulator::probe`].
pub type GpuSimulator = Stepper<GpuEngine>;

impl Stepper<CpuEngine> {
    /// The CPU engine (its state and counters, read directly: nothing waits on the CPU).
    pub fn engine(&self) -> &CpuEngine {
        &self.engine
    }

    /// The CPU engine, mutably (its kernels, for tests against the reference).
    pub fn engine_mut(&mut self) -> &mut CpuEngine {
        &mut self.engine
    }

    /// Builds the CPU engine for `model` and plans its step (k₀ by power iteration where the method
    /// needs it).
    pub fn new(model: &Model, method: Method, settings: StepSettings) -> Result<Self> {
        Stepper::drive(CpuEngine::new(model, method, settings)?)
    }

    /// Runs the parallel passes on a pool of `threads` threads of its own instead of rayon's global pool
    /// (see [`CpuEngine::with_threads`]).
    pub fn with_threads(self, threads: usize) -> Result<Self> {
        let Stepper { engine, plan, adaptive, leu_retries, watch, pipe } = self;
        Ok(Stepper { engine: engine.with_threads(threads)?, plan, adaptive, leu_retries, watch, pipe })
    }

    /// [`CpuEngine::set_particle`], told to the divergence guard (the user's work is not judged).
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// // hold particle 0 at the mouse, pinned, until let go
    /// sim.set_particle(0, [0.1, 0.2, 0.0], [0.0; 3], true)?;
    /// assert!(sim.is_pinned(0));
    /// # Ok(()) }
    /// ```
    pub fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        self.mark_edited();
        self.engine.set_particle(i, x, v, pinned)
    }

    /// [`CpuEngine::set_cursor`], told to the divergence guard (while the cursor spring acts, only
    /// finiteness is judged).
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// use springsim::model::Cursor;
    /// let plan = springsim::Simulator::plan(&sim);
    /// // a spring from particle 5 to the mouse, as stiff as the planned step allows
    /// sim.set_cursor(Some(Cursor::stable(5, [0.0, -0.3, 0.2], &plan, sim.model().drag)))?;
    /// # Ok(()) }
    /// ```
    pub fn set_cursor(&mut self, cursor: Option<Cursor>) -> Result<()> {
        self.engine.set_cursor(cursor)?;
        self.mark_cursor(cursor.is_some());
        Ok(())
    }
}

impl Stepper<GpuEngine> {
    /// Builds the GPU engine on the caller's device and queue with the default [`GpuOptions`] and plans
    /// its step (k₀ by power iteration on the GPU where the method needs it: one submit and one
    /// read-back, at construction).
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// use springsim::{GpuSimulator, Method, StepSettings};
    /// let model = springsim::model::curtain(41, None)?;
    /// let sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// println!("h = {:.2e} s, {} steps a frame", springsim::Simulator::plan(&sim).h, springsim::Simulator::plan(&sim).substeps);
    /// # Ok(()) }
    /// ```
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, model: &Model, method: Method, settings: StepSettings) -> Result<Self> {
        Self::new_with_options(device, queue, model, method, settings, GpuOptions::default())
    }

    /// [`GpuSimulator::new`] with explicit [`GpuOptions`]. Every buffer is checked against the device's
    /// limits before it is allocated: one that would not fit is an [`crate::Error::BufferTooLarge`].
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// use springsim::{gpu::GpuOptions, GpuSimulator, Method, StepSettings};
    /// let model = springsim::model::curtain(41, None)?;
    /// // storage bindings of at most 128 MiB, as WebGPU's default limit allows
    /// let options = GpuOptions::default().with_max_binding_bytes(128 << 20);
    /// let sim = GpuSimulator::new_with_options(device, queue, &model, Method::ImplicitEuler, StepSettings::default(), options)?;
    /// # let _ = sim; Ok(()) }
    /// ```
    pub fn new_with_options(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        model: &Model,
        method: Method,
        settings: StepSettings,
        options: GpuOptions,
    ) -> Result<Self> {
        Stepper::drive(GpuEngine::new_with_options(device, queue, model, method, settings, options)?)
    }

    /// The probe handle ([`GpuProbe`]): the cost model of a frame, GPU timestamps and the read-backs that
    /// benchmarks and tests compare with the CPU twins. Not a frame-path call: many probes wait.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let planned = sim.probe().cost_model();
    /// println!("a frame: {} dispatches, {} bytes moved by its kernels", planned.dispatches(), planned.kernel_bytes());
    /// # Ok(()) }
    /// ```
    pub fn probe(&mut self) -> GpuProbe<'_> {
        self.engine.probe()
    }

    /// Simulated time (s) at the end of the last recorded frame or step.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// sim.run_frames(30)?;
    /// println!("t = {:.3} s", sim.time()); // 30 frames of 1/30 s: 1 s
    /// # Ok(()) }
    /// ```
    pub fn time(&self) -> f64 {
        self.engine.time()
    }

    /// `steps` steps of the planned h, submitted and waited for, outside the frame's guard and reports:
    /// the blocking call for a single step of a method whose frame is blocking anyway (local/global with
    /// the host's Cholesky step, implicit Euler's adaptive step on a model that depends on time; see
    /// [`GpuSimulator::needs_blocking_frame`]). Every other method steps by [`GpuSimulator::encode_steps`].
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// let mut sim = GpuSimulator::new(device, queue, &model, Method::LocalGlobal, StepSettings::default())?;
    /// sim.run_steps_blocking(1)?; // one local/global step with the host's Cholesky solve
    /// # Ok(()) }
    /// ```
    pub fn run_steps_blocking(&mut self, steps: usize) -> Result<()> {
        self.engine.run_steps(steps)
    }

    /// Names the adapter in reports.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue, adapter: &springsim::wgpu::Adapter) -> springsim::Result<()> {
    /// use springsim::{GpuSimulator, Method, Simulator, StepSettings};
    /// let model = springsim::model::curtain(21, None)?;
    /// let sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?
    ///     .with_adapter_name(adapter.get_info().name);
    /// println!("{}", sim.backend_name()); // "gpu: <the adapter's name>"
    /// # Ok(()) }
    /// ```
    pub fn with_adapter_name(mut self, name: impl Into<String>) -> Self {
        self.engine.set_adapter_name(name.into());
        self
    }

    /// Moves, pins or frees particle `i` (x, v), told to the divergence guard (the user's work is not
    /// judged).
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// // pin particle 0 where it is, at rest (the window's pin tool)
    /// sim.set_particle(0, model.positions[0], [0.0; 3], true)?;
    /// assert!(sim.is_pinned(0));
    /// # Ok(()) }
    /// ```
    pub fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        self.mark_edited();
        self.engine.set_particle(i, x, v, pinned)
    }

    /// Sets or clears the cursor spring that drags one particle, told to the divergence guard (while
    /// the cursor spring acts, only finiteness is judged).
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// use springsim::model::Cursor;
    /// // drag particle 220 towards a point, as the window's mouse does
    /// sim.set_cursor(Some(Cursor { particle: 220, target: [0.0, 0.5, 0.3], stiffness: 200.0, damping: 5.0 }))?;
    /// assert_eq!(sim.cursor().map(|c| c.particle), Some(220));
    /// sim.set_cursor(None)?; // released
    /// # Ok(()) }
    /// ```
    pub fn set_cursor(&mut self, cursor: Option<Cursor>) -> Result<()> {
        self.engine.set_cursor(cursor)?;
        self.mark_cursor(cursor.is_some());
        Ok(())
    }

    /// The cursor spring set by [`GpuSimulator::set_cursor`].
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// if let Some(c) = sim.cursor() {
    ///     println!("dragging particle {} towards {:?}", c.particle, c.target);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn cursor(&self) -> Option<Cursor> {
        self.engine.cursor()
    }

    /// Whether particle `i` is pinned now.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let pinned = (0..sim.model().n).filter(|&i| sim.is_pinned(i)).count();
    /// println!("{pinned} pinned particles"); // the curtain hangs from its top row
    /// # Ok(()) }
    /// ```
    pub fn is_pinned(&self, i: usize) -> bool {
        self.engine.is_pinned(i)
    }

    /// The buffer whose first n `vec4<f32>` are the current positions (`STORAGE | VERTEX | COPY_SRC`),
    /// for drawing; [`GpuSimulator::positions_range`] is their byte range.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// # let pass: &mut springsim::wgpu::RenderPass = unimplemented!();
    /// // a vertex buffer of vec4<f32> (stride 16, Float32x4): xyz the position, w = 1/m
    /// pass.set_vertex_buffer(0, sim.positions_buffer().slice(sim.positions_range()));
    /// # Ok(()) }
    /// ```
    pub fn positions_buffer(&self) -> &wgpu::Buffer {
        self.engine.positions_buffer()
    }

    /// The byte range of the positions in [`GpuSimulator::positions_buffer`].
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let range = sim.positions_range();
    /// assert_eq!(range.end - range.start, 16 * sim.model().n as u64); // one vec4<f32> a particle
    /// # Ok(()) }
    /// ```
    pub fn positions_range(&self) -> std::ops::Range<u64> {
        self.engine.state().positions_range()
    }

    /// The laid-out model.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let m = sim.model();
    /// println!("{} particles, {} springs", m.n, m.end_a.len());
    /// # Ok(()) }
    /// ```
    pub fn model(&self) -> &crate::reference::model::CpuModel {
        self.engine.model()
    }

    /// Bytes of every GPU buffer the simulation holds now.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// println!("{:.1} KiB on the GPU, {} B a particle", sim.gpu_bytes() as f64 / 1024.0, sim.gpu_bytes() / sim.model().n as u64);
    /// # Ok(()) }
    /// ```
    pub fn gpu_bytes(&self) -> u64 {
        self.engine.gpu_bytes()
    }

    /// What the engine recorded, transferred and waited for so far ([`crate::gpu::GpuCost`]).
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let before = sim.cost();
    /// sim.run_frames(10)?;
    /// let spent = sim.cost().since(&before);
    /// println!("{} dispatches, {} waits (the final flush's)", spent.dispatches, spent.waits);
    /// # Ok(()) }
    /// ```
    pub fn cost(&self) -> crate::gpu::GpuCost {
        self.engine.cost()
    }

    /// Whether the model depends on time (moving colliders or pins, gusting wind): then
    /// [`GpuSimulator::prepare_frame`] comes before every [`GpuSimulator::encode_frame`].
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// # let mut encoder = device.create_command_encoder(&Default::default());
    /// if sim.needs_prepare() {
    ///     sim.prepare_frame()?;
    /// }
    /// sim.encode_frame(&mut encoder)?;
    /// # Ok(()) }
    /// ```
    pub fn needs_prepare(&self) -> bool {
        self.engine.needs_prepare()
    }

    /// Writes what the next frame needs to know of time, before [`GpuSimulator::encode_frame`]: queue
    /// writes only, the time for the gusts and the placements of whatever moves along a path (the
    /// colliders at the end of each of the frame's steps, the moving pins' offsets and velocities).
    /// Nothing to do for a model that does not depend on time.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// # let mut encoder = device.create_command_encoder(&Default::default());
    /// sim.prepare_frame()?; // queue writes only: the gusts' time, the moving colliders and pins
    /// sim.encode_frame(&mut encoder)?;
    /// # Ok(()) }
    /// ```
    pub fn prepare_frame(&mut self) -> Result<()> {
        self.engine.prepare_frame()
    }

    /// [`GpuSimulator::prepare_frame`] for `steps` steps of the planned h, before
    /// [`GpuSimulator::encode_steps`] records them.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// # let mut encoder = device.create_command_encoder(&Default::default());
    /// // the window's slowed-down view: 3 steps a drawn frame
    /// sim.prepare_steps(3)?;
    /// sim.encode_steps(&mut encoder, 3)?;
    /// # Ok(()) }
    /// ```
    pub fn prepare_steps(&mut self, steps: usize) -> Result<()> {
        let h = self.plan.h;
        self.engine.prepare_steps(steps, h)
    }
}
