//! The two engines under the stepping policy: [`CpuSimulator`] (the f64 CPU engine) and
//! [`GpuSimulator`] (the GPU engine on a caller's device), with their constructors and the calls that
//! need both the policy and one engine.

use super::Stepper;
use crate::cpu::CpuEngine;
use crate::engine::Engine;
use crate::error::Result;
use crate::gpu::{GpuEngine, GpuOptions};
use crate::method::{Method, StepSettings};
use crate::model::{Cursor, Model};

/// A simulation on the CPU, in f64: the CPU engine under the stepping policy.
pub type CpuSimulator = Stepper<CpuEngine>;

/// A simulation on the GPU: the GPU engine under the stepping policy. Through `Deref` it offers the
/// engine's own calls: `encode_frame` (record into the host's encoder), `positions_buffer`,
/// `gpu_bytes`, the interaction calls.
pub type GpuSimulator = Stepper<GpuEngine>;

impl Stepper<CpuEngine> {
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
    pub fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        self.mark_edited();
        self.engine.set_particle(i, x, v, pinned)
    }

    /// [`CpuEngine::set_cursor`], told to the divergence guard (while the cursor spring acts, only
    /// finiteness is judged).
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
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, model: &Model, method: Method, settings: StepSettings) -> Result<Self> {
        Self::new_with_options(device, queue, model, method, settings, GpuOptions::default())
    }

    /// [`GpuSimulator::new`] with explicit [`GpuOptions`]. Every buffer is checked against the device's
    /// limits before it is allocated: one that would not fit is an [`crate::Error::BufferTooLarge`].
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

    /// Names the adapter in reports.
    pub fn with_adapter_name(mut self, name: impl Into<String>) -> Self {
        self.engine.set_adapter_name(name.into());
        self
    }

    /// [`GpuEngine::set_particle`], told to the divergence guard (the user's work is not judged).
    pub fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        self.mark_edited();
        self.engine.set_particle(i, x, v, pinned)
    }

    /// [`GpuEngine::set_cursor`], told to the divergence guard (while the cursor spring acts, only
    /// finiteness is judged).
    pub fn set_cursor(&mut self, cursor: Option<Cursor>) -> Result<()> {
        self.engine.set_cursor(cursor)?;
        self.mark_cursor(cursor.is_some());
        Ok(())
    }

    /// The explicit methods on the `encode_frame` path: whether a step since the last check exceeded the
    /// speed limit; if so, k₀ is recomputed at the current state and the step re-planned (Shinya §5.3).
    /// `step_frame` does this after every frame; one small read-back.
    pub fn check_divergence(&mut self) -> Result<bool> {
        let diverged = self.engine.take_speed_flag()?;
        if diverged && self.engine.method() != Method::Leu {
            self.replan()?;
        }
        Ok(diverged)
    }
}
