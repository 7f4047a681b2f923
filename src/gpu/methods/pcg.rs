//! Pipelines of `shaders/pcg.wgsl`: the reusable matrix-free Jacobi-PCG (Kauppila §3.2.2, §4.2).
//!
//! The solver has no matrix of its own: a linear system composes its operator file in front of
//! `pcg.wgsl` (see `KERNEL_WGSL`), binds its buffers in group 0 and defines `operator_apply`; the PCG's
//! vectors, partial sums and status live in group 1 ([`PcgBuffers`], owned by the integrator that
//! solves: implicit Euler, or Liu's global step with `operator_apply` = (M + h²L)p), compiled with
//! [`PcgKernels::ENTRY_POINTS`] appended, and [`PcgKernels::encode_solve`] to record the solve.

use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
#[cfg(doc)]
use crate::gpu::base::layout::PCG_PER_LANE;
use crate::gpu::base::layout::{groups, CgPass, CG_STATE_WORDS, CG_VECTORS, WORKGROUP_SIZE};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, params, storage, Bindings, GroupLayout, Kernel, Kernels};
use crate::gpu::profiling::cost::{CountedPass, GpuCounters};

/// An external preconditioner's recorder: `(pass, slot)` records z = B r and the r·z partials of `slot`.
pub type Precondition<'a> = &'a dyn Fn(&mut CountedPass, usize);

/// The PCG kernels of one composed module (an operator followed by `pcg.wgsl`).
pub struct PcgKernels {
    /// Group 1: (CgPass, cg_vectors, partials, cg_state).
    pub layout: GroupLayout,
    /// `pcg_begin`.
    pub begin: Kernel,
    /// `pcg_matvec`.
    pub matvec: Kernel,
    /// `pcg_update`.
    pub update: Kernel,
    /// `pcg_finish`.
    pub finish: Kernel,
    /// `pcg_reduce`: the partials' sums in one workgroup, for solves of [`PcgKernels::reduces`].
    pub reduce: Kernel,
    /// [`GpuOptions::pcg_reduce_from`] of the engine that compiled them.
    reduce_from: u32,
    /// Particles per thread of the per-particle kernels ([`CgPass::per_lane`]).
    per_lane: u32,
}

impl PcgKernels {
    /// The entry points, compiled after the operator's.
    pub const ENTRY_POINTS: [&'static str; 5] = ["pcg_begin", "pcg_matvec", "pcg_update", "pcg_finish", "pcg_reduce"];

    /// The layout of group 1.
    pub fn layout_entries() -> [wgpu::BindGroupLayoutEntry; 4] {
        [params(0), storage(1, false), storage(2, false), storage(3, false)]
    }

    /// Takes the group-1 layout (group 1 of `kernels`) and the pipelines of [`PcgKernels::ENTRY_POINTS`];
    /// `options` says from what size the dot products are reduced in a dispatch of their own.
    /// `per_lane`: particles per thread of the per-particle kernels, [`PCG_PER_LANE`] for a Jacobi
    /// solve; 1 where a multigrid V-cycle may precondition it (the V-cycle writes the r·z partials per
    /// particle workgroup, one particle a thread).
    pub fn from_kernels(kernels: &Kernels, options: &GpuOptions, per_lane: u32) -> Result<Self> {
        Ok(PcgKernels {
            layout: kernels.layout(1)?,
            begin: kernels.pipeline("pcg_begin")?,
            matvec: kernels.pipeline("pcg_matvec")?,
            update: kernels.pipeline("pcg_update")?,
            finish: kernels.pipeline("pcg_finish")?,
            reduce: kernels.pipeline("pcg_reduce")?,
            reduce_from: options.pcg_reduce_from(),
            per_lane: per_lane.max(1),
        })
    }

    /// Workgroups of `pcg_begin`, `pcg_matvec` and `pcg_update` at n particles (the partials per slot).
    pub fn groups(&self, n: usize) -> u32 {
        (n as u32).div_ceil(WORKGROUP_SIZE * self.per_lane)
    }

    /// Whether a solve of n particles sums its dot products in `pcg_reduce` dispatches (one before each
    /// `pcg_matvec` and each `pcg_update`) rather than in every workgroup of those kernels: from
    /// [`GpuOptions::pcg_reduce_from`] workgroups per vector on. [`PcgBuffers::write_pass`] must be told
    /// the same.
    pub fn reduces(&self, n: usize) -> bool {
        self.groups(n) >= self.reduce_from
    }

    /// The group-1 bind groups per iteration parity, built once.
    pub fn bind_groups(&self, device: &wgpu::Device, b: &PcgBuffers) -> [Bindings; 2] {
        [0, 1].map(|q| bind(device, &self.layout, "springsim.pcg", &[&b.pass[q], &b.vectors, &b.partials, &b.status]))
    }

    /// Records one solve into `pass`: `pcg_begin`, `iterations` × (`pcg_matvec`, `pcg_update`), each
    /// after a one-workgroup `pcg_reduce` when the solve [`PcgKernels::reduces`], and `pcg_finish`, with the operator's group 0 bound. The right-hand side and the inverse diagonal must
    /// already be in `cg_vectors` (the operator's prepare kernel, recorded before). A fixed budget: iterations
    /// after convergence are no-ops on the GPU; nothing is read back.
    ///
    /// `precondition(pass, slot)`, when given, records an external preconditioner after `pcg_begin`
    /// (slot 0) and after each `pcg_update` (slot 1 − q): it overwrites z with B r and the r·z partials
    /// of that slot (the multigrid V-cycle, [`crate::gpu::methods::local_global::multigrid::MultigridData::encode`]); the Jacobi z
    /// the PCG kernels formed is then unused.
    pub fn encode_solve(
        &self,
        pass: &mut CountedPass,
        operator_group: &Bindings,
        pcg_groups: &[Bindings; 2],
        n: usize,
        iterations: usize,
        precondition: Option<Precondition>,
    ) {
        let g = self.groups(n);
        let reduce = self.reduces(n);
        pass.set_bind_group(0, operator_group, &[]);
        pass.set_bind_group(1, &pcg_groups[0], &[]);
        pass.set_pipeline(&self.begin);
        pass.dispatch_workgroups(g, 1, 1);
        let external = |pass: &mut CountedPass, slot: usize| {
            if let Some(f) = precondition {
                f(pass, slot);
                pass.set_bind_group(0, operator_group, &[]);
            }
        };
        external(pass, 0);
        for k in 0..iterations {
            pass.set_bind_group(1, &pcg_groups[k % 2], &[]);
            for pipeline in [&self.matvec, &self.update] {
                if reduce {
                    pass.set_pipeline(&self.reduce);
                    pass.dispatch_workgroups(1, 1, 1);
                }
                pass.set_pipeline(pipeline);
                pass.dispatch_workgroups(g, 1, 1);
            }
            external(pass, 1 - k % 2);
        }
        pass.set_bind_group(1, &pcg_groups[iterations % 2], &[]);
        pass.set_pipeline(&self.finish);
        pass.dispatch_workgroups(1, 1, 1);
    }
}

/// The PCG's buffers, owned by the integrator that solves with it.
pub struct PcgBuffers {
    /// The vectors r, z, p0, p1, Ap, x, P⁻¹ (n `vec4` each; `cg_vectors` in `shaders/pcg.wgsl`).
    pub vectors: wgpu::Buffer,
    /// Per-workgroup partial sums, three slots, and the slots' sums (`pcg_reduce`).
    pub partials: wgpu::Buffer,
    /// Status, iterations, residual, iterations since cleared, breakdowns (`cg_state`).
    pub status: wgpu::Buffer,
    /// The `CgPass` parameter blocks of the two iteration parities.
    pub pass: [wgpu::Buffer; 2],
}

/// The index of the PCG's solution x among its vectors (r, z, p0, p1, Ap, x, P⁻¹).
pub const SOLUTION_VECTOR: usize = 5;
/// The index of the inverse diagonal P⁻¹ among the PCG's vectors.
pub const INVERSE_DIAGONAL_VECTOR: usize = 6;

impl PcgBuffers {
    /// Allocates them for n particles (checked against the device's limits).
    pub fn new(alloc: &mut Allocator, n: usize) -> Result<Self> {
        let none = wgpu::BufferUsages::empty();
        let vectors = alloc.storage("springsim.pcg_vectors", (CG_VECTORS * n * 16) as u64, none)?;
        let partials = alloc.storage("springsim.pcg_partials", (3 * groups(n) as u64 + 4) * 16, none)?;
        let status = alloc.storage("springsim.pcg_status", (CG_STATE_WORDS * 4) as u64, none)?;
        let size = std::mem::size_of::<CgPass>() as u64;
        let pass = [alloc.params("springsim.cg_pass0", size)?, alloc.params("springsim.cg_pass1", size)?];
        Ok(PcgBuffers { vectors, partials, status, pass })
    }

    /// Writes the `CgPass` blocks: n particles, tolerance `tolerance`, warm start or not, and the shape
    /// of the solves `kernels` record (workgroups, particles per thread, [`PcgKernels::reduces`]).
    pub fn write_pass(&self, queue: &wgpu::Queue, counters: &GpuCounters, n: usize, tolerance: f64, warm: bool, kernels: &PcgKernels) {
        let tol = tolerance as f32;
        for (parity, buffer) in self.pass.iter().enumerate() {
            let cp = CgPass {
                n: n as u32,
                groups: kernels.groups(n),
                parity: parity as u32,
                tol2: tol * tol,
                warm: warm as u32,
                reduced: kernels.reduces(n) as u32,
                per_lane: kernels.per_lane,
                _pad: 0,
            };
            counters.write_buffer(queue, buffer, 0, bytemuck::bytes_of(&cp));
        }
    }
}

/// The PCG's status words as the GPU left them (`cg_state` in `shaders/pcg.wgsl`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuCgState {
    /// The last solve: 0 ran out of its budget, 1 converged, 2 broke down.
    pub status: u32,
    /// Iterations of the last solve.
    pub iterations: usize,
    /// Final relative residual of the last solve (−1 after a breakdown).
    pub residual: f64,
    /// Iterations summed over the solves since the frame began.
    pub total_iterations: usize,
    /// Breakdowns since the frame began.
    pub breakdowns: usize,
    /// Adaptive step: the last step strained a spring beyond the limit.
    pub strained: bool,
}

impl GpuCgState {
    /// Decodes the first six status words.
    pub fn from_words(w: &[u32]) -> Self {
        let word = |i: usize| w.get(i).copied().unwrap_or(0);
        GpuCgState {
            status: word(0),
            iterations: word(1) as usize,
            residual: f32::from_bits(word(2)) as f64,
            total_iterations: word(3) as usize,
            breakdowns: word(4) as usize,
            strained: word(5) != 0,
        }
    }
}
