//! The GPU engine's counting layer: [`GpuCounters`], which every compute pass, dispatch, submit,
//! read-back and queue write of the engine goes through, and [`GpuCost`], its snapshot (public API:
//! [`GpuProbe::cost`](crate::gpu::GpuProbe::cost)). Dispatches are recorded through [`CountedPass`], a thin wrapper around
//! `wgpu::ComputePass` that every `encode_*` function of the engine takes: it forwards each call
//! unchanged and counts the dispatches and workgroups, per [`Phase`], and, when a [`crate::gpu::profiling::timestamps::PhaseTimer`] rides
//! along, writes a GPU timestamp where the phase changes. The plan-derived figures that these counts
//! are checked against, and the bytes each kernel touches, are in [`crate::gpu::profiling::cost_model`].

mod blocking;

use crate::gpu::base::kernel::{Bindings, Kernel};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The phases of a frame, as the cost model and the timestamps split it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The spring-force gather: the explicit stages (which integrate in the same kernel), LEU's
    /// linearisation, implicit Euler's system assembly.
    Forces,
    /// The update of the state: LEU's step and fix-up, implicit Euler's integration and strain check,
    /// local/global's inertia, advance (x += δ) and velocity.
    Integrate,
    /// Local/global's local step fused with its right-hand side (`local_global_local_residual`: d of eq. 10 per
    /// spring and r = b − A x per particle).
    Local,
    /// The global solve: the PCG (with its multigrid V-cycles) or the Chebyshev iterations.
    Global,
    /// The end of a step: the moving pins (`move_pins`), Provot's strain limiting (`strain_limit_pass`,
    /// `strain_limit_copy`), self-collision (the `sc_*` kernels) and the colliders (`collide`, and
    /// local/global's per-iteration `collide_positions`).
    Collide,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 5] = [Phase::Forces, Phase::Integrate, Phase::Local, Phase::Global, Phase::Collide];

    /// The name in records (`forces`, `integrate`, `local`, `global`, `collide`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Forces => "forces",
            Phase::Integrate => "integrate",
            Phase::Local => "local",
            Phase::Global => "global",
            Phase::Collide => "collide",
        }
    }
}

/// What the engine recorded and transferred so far (every figure a running total since the engine
/// was built); [`GpuCost::since`] gives the difference of two snapshots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GpuCost {
    /// Compute passes begun.
    pub passes: u64,
    /// `dispatch_workgroups` calls.
    pub dispatches: u64,
    /// Workgroups dispatched (x·y·z summed).
    pub workgroups: u64,
    /// Dispatches per [`Phase`] (indexed as [`Phase::ALL`]).
    pub phase_dispatches: [u64; 5],
    /// `queue.submit` calls.
    pub submits: u64,
    /// Buffers mapped and copied back to the host.
    pub readbacks: u64,
    /// Bytes copied back.
    pub readback_bytes: u64,
    /// `queue.write_buffer` calls.
    pub uploads: u64,
    /// Bytes written through the queue.
    pub upload_bytes: u64,
    /// Simulation steps recorded.
    pub steps: u64,
    /// Times the host blocked until the device finished its work (`device.poll` with a wait: every
    /// blocking read-back, the streamed uploads' waits, the host-driven Cholesky frame's phases).
    /// The pipelined frame path ([`crate::GpuSimulator::encode_frame`]) adds none.
    pub waits: u64,
}

impl GpuCost {
    /// `self − earlier`, figure by figure.
    pub fn since(&self, earlier: &GpuCost) -> GpuCost {
        let mut phase_dispatches = [0; 5];
        for (k, d) in phase_dispatches.iter_mut().enumerate() {
            *d = self.phase_dispatches[k].saturating_sub(earlier.phase_dispatches[k]);
        }
        GpuCost {
            passes: self.passes.saturating_sub(earlier.passes),
            dispatches: self.dispatches.saturating_sub(earlier.dispatches),
            workgroups: self.workgroups.saturating_sub(earlier.workgroups),
            phase_dispatches,
            submits: self.submits.saturating_sub(earlier.submits),
            readbacks: self.readbacks.saturating_sub(earlier.readbacks),
            readback_bytes: self.readback_bytes.saturating_sub(earlier.readback_bytes),
            uploads: self.uploads.saturating_sub(earlier.uploads),
            upload_bytes: self.upload_bytes.saturating_sub(earlier.upload_bytes),
            steps: self.steps.saturating_sub(earlier.steps),
            waits: self.waits.saturating_sub(earlier.waits),
        }
    }

    /// Dispatches of `phase`.
    pub fn dispatches_in(&self, phase: Phase) -> u64 {
        self.phase_dispatches[phase as usize]
    }
}

/// The running totals behind [`GpuCost`] (atomics: the engine counts through `&self`).
#[derive(Debug, Default)]
pub struct GpuCounters {
    passes: AtomicU64,
    dispatches: AtomicU64,
    workgroups: AtomicU64,
    phase_dispatches: [AtomicU64; 5],
    submits: AtomicU64,
    readbacks: AtomicU64,
    readback_bytes: AtomicU64,
    uploads: AtomicU64,
    upload_bytes: AtomicU64,
    steps: AtomicU64,
    waits: AtomicU64,
}

impl GpuCounters {
    /// The totals now.
    pub fn snapshot(&self) -> GpuCost {
        GpuCost {
            passes: self.passes.load(Relaxed),
            dispatches: self.dispatches.load(Relaxed),
            workgroups: self.workgroups.load(Relaxed),
            phase_dispatches: std::array::from_fn(|k| self.phase_dispatches[k].load(Relaxed)),
            submits: self.submits.load(Relaxed),
            readbacks: self.readbacks.load(Relaxed),
            readback_bytes: self.readback_bytes.load(Relaxed),
            uploads: self.uploads.load(Relaxed),
            upload_bytes: self.upload_bytes.load(Relaxed),
            steps: self.steps.load(Relaxed),
            waits: self.waits.load(Relaxed),
        }
    }

    /// Begins a compute pass on `encoder` (counted), with `timestamp_writes` as given.
    pub fn begin_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        label: &str,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> wgpu::ComputePass<'e> {
        self.passes.fetch_add(1, Relaxed);
        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes })
    }

    /// Submits `commands` (counted as one submit).
    pub fn submit(&self, queue: &wgpu::Queue, commands: wgpu::CommandBuffer) {
        self.submits.fetch_add(1, Relaxed);
        queue.submit([commands]);
    }

    /// `queue.write_buffer`, counted with its bytes.
    pub fn write_buffer(&self, queue: &wgpu::Queue, buffer: &wgpu::Buffer, offset: u64, data: &[u8]) {
        self.uploads.fetch_add(1, Relaxed);
        self.upload_bytes.fetch_add(data.len() as u64, Relaxed);
        queue.write_buffer(buffer, offset, data);
    }

    /// Counts one read-back of `bytes` (the mapping itself is `state::read_buffer`'s).
    pub fn readback(&self, bytes: u64) {
        self.readbacks.fetch_add(1, Relaxed);
        self.readback_bytes.fetch_add(bytes, Relaxed);
    }

    /// Counts `steps` simulation steps recorded.
    pub fn steps(&self, steps: usize) {
        self.steps.fetch_add(steps as u64, Relaxed);
    }

    fn dispatch(&self, phase: Phase, workgroups: u64) {
        self.dispatches.fetch_add(1, Relaxed);
        self.workgroups.fetch_add(workgroups, Relaxed);
        self.phase_dispatches[phase as usize].fetch_add(1, Relaxed);
    }
}

/// What rides along a [`CountedPass`] to time it: a timestamp where the phase changes, or before every
/// dispatch ([`crate::gpu::profiling::timestamps::PhaseTimer`]; a trait here so that the counting layer does not depend
/// on the timing layer).
pub trait PassTimer {
    /// Called before each dispatch (`phase` `None`: after the last one, `kernel` the bound entry point).
    fn mark(&mut self, pass: &mut wgpu::ComputePass, phase: Option<Phase>, kernel: &'static str, workgroups: u64);
}

/// A compute pass that counts what is recorded into it: the engine's `encode_*` functions take this
/// instead of `wgpu::ComputePass` and call the same methods, which are forwarded unchanged. The phase
/// ([`CountedPass::phase`]) only labels the dispatches that follow, for the split and the timestamps.
pub struct CountedPass<'a, 'e> {
    pass: &'a mut wgpu::ComputePass<'e>,
    counters: &'a GpuCounters,
    phase: Phase,
    timer: Option<&'a mut dyn PassTimer>,
    /// The bound kernel's entry point.
    kernel: &'static str,
    /// The per-kernel bind groups set ([`crate::gpu::base::pipelines::GroupLayout`]): (index, bindings,
    /// the dynamic offsets), bound for the kernel of the next dispatch.
    pending: Vec<(u32, Bindings, Vec<u32>)>,
    /// Whether the kernel or a per-kernel bind group changed since the last dispatch.
    rebind: bool,
    /// The dynamic offsets a kernel's own group keeps, gathered at each rebind (reused: no allocation
    /// per dispatch).
    kept_offsets: Vec<u32>,
    /// While set, each dispatch runs indirectly through the gate's arguments (see [`Gate`]).
    gate: Option<Gate<'a>>,
}

/// Dispatches gated by the device: while a gate is set on a [`CountedPass`], each `dispatch_workgroups(x,
/// y, 1)` is recorded as an indirect dispatch whose arguments are the gate's slot for (x, y): the host
/// writes (x, y, 0) into the slot once ([`Gate::sizes`], in the order first recorded), and a kernel that
/// runs before the gated dispatches writes the third word, 1 to run them or 0 to skip them (zero
/// workgroups). Implicit Euler's adaptive step on the device records each trial step this way.
pub struct Gate<'a> {
    buffer: &'a wgpu::Buffer,
    /// Slots the buffer holds.
    capacity: usize,
    sizes: Vec<[u32; 2]>,
    /// A dispatch found no free slot (more distinct sizes than `capacity`).
    overflow: bool,
}

impl<'a> Gate<'a> {
    /// A gate over the `capacity` 12-byte argument slots at the start of `buffer` (usage `INDIRECT`).
    pub fn new(buffer: &'a wgpu::Buffer, capacity: usize) -> Self {
        Gate { buffer, capacity, sizes: Vec::new(), overflow: false }
    }

    /// The (x, y) of each slot used, in slot order.
    pub fn sizes(&self) -> &[[u32; 2]] {
        &self.sizes
    }

    /// Whether more distinct sizes were dispatched than the gate has slots.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    /// The byte offset of the slot for (x, y), taking a new slot for a new size.
    fn slot(&mut self, x: u32, y: u32) -> Option<u64> {
        let k = match self.sizes.iter().position(|s| *s == [x, y]) {
            Some(k) => k,
            None if self.sizes.len() < self.capacity => {
                self.sizes.push([x, y]);
                self.sizes.len() - 1
            }
            None => {
                self.overflow = true;
                return None;
            }
        };
        Some(12 * k as u64)
    }
}

impl<'a, 'e> CountedPass<'a, 'e> {
    /// Wraps `pass`, counting into `counters` (phase [`Phase::Forces`] until told otherwise).
    pub fn new(pass: &'a mut wgpu::ComputePass<'e>, counters: &'a GpuCounters) -> Self {
        CountedPass {
            pass,
            counters,
            phase: Phase::Forces,
            timer: None,
            kernel: "?",
            pending: Vec::new(),
            rebind: false,
            kept_offsets: Vec::new(),
            gate: None,
        }
    }

    /// Gates the dispatches that follow through `gate` (see [`Gate`]), or stops gating with `None`;
    /// returns the gate set before.
    pub fn set_gate(&mut self, gate: Option<Gate<'a>>) -> Option<Gate<'a>> {
        std::mem::replace(&mut self.gate, gate)
    }

    /// Also writes a timestamp through `timer` before the first dispatch of every phase change (before
    /// every dispatch when the timer times each one, [`crate::gpu::profiling::timestamps::PhaseTimer::time_each_dispatch`]).
    pub fn with_timer<T: PassTimer>(mut self, timer: Option<&'a mut T>) -> Self {
        self.timer = timer.map(|t| t as &mut dyn PassTimer);
        self
    }

    /// The dispatches that follow belong to `phase`.
    pub fn phase(&mut self, phase: Phase) {
        self.phase = phase;
    }

    /// `ComputePass::set_pipeline` with the kernel's pipeline (its name labels the dispatches that follow
    /// for a per-dispatch timing).
    pub fn set_pipeline(&mut self, kernel: &Kernel) {
        self.kernel = kernel.name;
        self.pass.set_pipeline(&kernel.pipeline);
        self.rebind |= !self.pending.is_empty();
    }

    /// `ComputePass::set_bind_group`: at once for a bind group that every kernel of its file shares;
    /// for one made of per-kernel layouts, the bind group of the kernel that the next dispatch runs,
    /// with the offsets of its own dynamic bindings.
    pub fn set_bind_group(&mut self, index: u32, bindings: &Bindings, offsets: &[u32]) {
        if let Some(group) = bindings.shared() {
            self.pending.retain(|(i, _, _)| *i != index);
            self.pass.set_bind_group(index, group, offsets);
            return;
        }
        match self.pending.iter_mut().find(|(i, _, _)| *i == index) {
            Some(p) => *p = (index, bindings.clone(), offsets.to_vec()),
            None => self.pending.push((index, bindings.clone(), offsets.to_vec())),
        }
        self.rebind = true;
    }

    /// Binds the per-kernel bind groups for the current kernel when it or they changed.
    fn bind_for_kernel(&mut self) {
        if !self.rebind {
            return;
        }
        for (index, bindings, offsets) in &self.pending {
            if let Some((group, kept)) = bindings.for_kernel(self.kernel) {
                self.kept_offsets.clear();
                self.kept_offsets.extend(kept.iter().filter_map(|&i| offsets.get(i).copied()));
                self.pass.set_bind_group(*index, group, &self.kept_offsets[..]);
            }
        }
        self.rebind = false;
    }

    /// `ComputePass::dispatch_workgroups`, counted (and timed when a timer rides along: at a phase change,
    /// or at every dispatch when it times each one).
    pub fn dispatch_workgroups(&mut self, x: u32, y: u32, z: u32) {
        self.bind_for_kernel();
        let workgroups = x as u64 * y as u64 * z as u64;
        if let Some(t) = self.timer.as_deref_mut() {
            t.mark(self.pass, Some(self.phase), self.kernel, workgroups);
        }
        self.counters.dispatch(self.phase, workgroups);
        if let Some(g) = self.gate.as_mut().filter(|_| z == 1) {
            if let Some(at) = g.slot(x, y) {
                self.pass.dispatch_workgroups_indirect(g.buffer, at);
                return;
            }
        }
        self.pass.dispatch_workgroups(x, y, z);
    }

    /// `ComputePass::dispatch_workgroups_indirect` with the arguments at byte `at` of `buffer`, counted
    /// as one dispatch of `workgroups` (the most the arguments may ask for).
    pub fn dispatch_indirect(&mut self, buffer: &wgpu::Buffer, at: u64, workgroups: u64) {
        self.bind_for_kernel();
        if let Some(t) = self.timer.as_deref_mut() {
            t.mark(self.pass, Some(self.phase), self.kernel, workgroups);
        }
        self.counters.dispatch(self.phase, workgroups);
        self.pass.dispatch_workgroups_indirect(buffer, at);
    }

    /// Writes the closing timestamp (after the last dispatch) when a timer rides along.
    pub fn finish(mut self) {
        if let Some(t) = self.timer.as_deref_mut() {
            t.mark(self.pass, None, "", 0);
        }
    }
}
