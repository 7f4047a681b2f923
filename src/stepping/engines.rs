//! The two engines under the stepping policy: [`CpuSimulator`] (the f64 CPU engine) and
//! [`GpuSimulator`] (the GPU engine on a caller's device), with their constructors and the calls that
//! need both the policy and one engine.

use super::Stepper;
use crate::cpu::CpuEngine;
use crate::error::Result;
use crate::gpu::{GpuEngine, GpuOptions, GpuProbe};
use crate::method::{Method, StepSettings};
use crate::model::Model;

/// A simulation on the CPU, in f64: the CPU engine under the stepping policy.
pub type CpuSimulator = Stepper<CpuEngine>;

/// A simulation on the GPU: the GPU engine under the stepping policy, driven by a host through one
/// path that never waits: [`GpuSimulator::prepare_frame`], [`GpuSimulator::encode_frame`] into the
/// host's encoder, the host's submit, then [`GpuSimulator::poll_reports`]
/// ([`crate::stepping::pipelined`]). The host draws from [`GpuSimulator::positions`] and edits
/// through the [`crate::Simulator`] trait's interaction calls (`set_particle`, `set_cursor`), the same
/// on both engines; the trait's blocking calls (`step_frame`, `read_state`) are for tests, scripts and
/// the frames that need the host ([`GpuSimulator::needs_blocking_frame`]). What the bench and the tests
/// inspect of the engine is reached through one handle, [`GpuSimulator::probe`].
///
/// Its own calls: [`GpuSimulator::new`], [`GpuSimulator::new_with_options`],
/// [`GpuSimulator::prepare_frame`], [`GpuSimulator::encode_frame`], [`GpuSimulator::poll_reports`],
/// [`GpuSimulator::flush_reports`], [`GpuSimulator::run_frames`], [`GpuSimulator::needs_blocking_frame`],
/// [`GpuSimulator::set_frame_signals`], [`GpuSimulator::reports_in_flight`],
/// [`GpuSimulator::positions`] and [`GpuSimulator::probe`]; the stepping policy's
/// ([`Stepper::set_frame_steps`], [`Stepper::set_h`], ...) are the CPU simulator's too.
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
        let Stepper { engine, plan, adaptive, leu_retries, watch, pipe, frame_steps } = self;
        Ok(Stepper { engine: engine.with_threads(threads)?, plan, adaptive, leu_retries, watch, pipe, frame_steps })
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

    /// The positions, for drawing: the first n `vec4<f32>` of the state buffer (`STORAGE | VERTEX |
    /// COPY_SRC`), xyz the position and w = 1/m, written by the frames the host records. Bind it as a
    /// vertex buffer (stride 16, `Float32x4`) or a storage binding; nothing is copied to the host.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, Simulator, StepSettings};
    /// # let model = springsim::model::curtain(21, None)?;
    /// # let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// # let pass: &mut springsim::wgpu::RenderPass = unimplemented!();
    /// let positions = sim.positions();
    /// assert_eq!(positions.size(), 16 * sim.model().n as u64); // one vec4<f32> a particle
    /// pass.set_vertex_buffer(0, positions);
    /// # Ok(()) }
    /// ```
    pub fn positions(&self) -> wgpu::BufferSlice<'_> {
        self.engine.positions_buffer().slice(self.engine.state().positions_range())
    }

    /// Writes what the next frame needs to know of time, before [`GpuSimulator::encode_frame`]: queue
    /// writes only, the time for the gusts and the placements of whatever moves along a path (the
    /// colliders at the end of each of the frame's steps, the moving pins' offsets and velocities).
    /// Nothing to do for a model that does not depend on time; `encode_frame` refuses a frame of one
    /// that was not prepared for it ([`crate::Error::NeedsHostCall`]). It is a call of its own because
    /// queue writes take effect at the next submit: two frames recorded into one encoder need the host
    /// to submit between them.
    /// ```no_run
    /// # fn demo(device: &springsim::wgpu::Device, queue: &springsim::wgpu::Queue) -> springsim::Result<()> {
    /// # use springsim::{GpuSimulator, Method, StepSettings};
    /// // a flag in gusting wind: the gusts depend on time
    /// let model = springsim::model::scene_builders::flag_gusts(21, None)?;
    /// let mut sim = GpuSimulator::new(device, queue, &model, Method::SymplecticEuler, StepSettings::default())?;
    /// let mut encoder = device.create_command_encoder(&Default::default());
    /// sim.prepare_frame()?; // the frame's time, for the gusts
    /// sim.encode_frame(&mut encoder)?;
    /// queue.submit([encoder.finish()]);
    /// # Ok(()) }
    /// ```
    pub fn prepare_frame(&mut self) -> Result<()> {
        let steps = self.frame_steps.unwrap_or(self.plan.substeps);
        let h = self.plan.h;
        self.engine.prepare_steps(steps, h)
    }
}
