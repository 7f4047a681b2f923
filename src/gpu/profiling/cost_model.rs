//! The cost model: what a planned frame of each GPU method records, derived from the plan alone
//! (substeps, stages, CG and local/global iterations, the multigrid V-cycle's dispatch list), and the
//! bytes each kernel reads and writes, estimated from its bindings and its dispatch size, beside the
//! floor: the bytes the method must touch once per step or iteration. The counts that the engine
//! actually records ([`crate::gpu::profiling::cost::GpuCost`]) are checked against this model by `tests/gpu_cost.rs`.
//!
//! Byte estimates (f32 throughout): a particle's state is 32 B (position and velocity `vec4`s), a
//! vector entry 16 B, an incidence entry (`Nbr`: neighbour, rest length, k, k_d) 16 B, a particle's CSR
//! offsets 8 B. A per-particle gather reads the particle's state and offsets, and per incidence entry
//! the entry and the neighbour's state (or vector). Parameter blocks, caches and reuse are ignored: a kernel's
//! bytes are what it would move from memory with no cache, an upper estimate for the gathers (each
//! neighbour's state is read once per incidence entry) and a fair one for the streaming kernels.

use crate::gpu::base::layout::groups;
use crate::gpu::methods::local_global::rows::TableShape;
use crate::gpu::profiling::cost::Phase;
use crate::method::{GlobalSolve, Method};

const ST: u64 = 32;
const V: u64 = 16;
const NB: u64 = 16;
const CSR: u64 = 8;
/// Local/global's rows (sliced ELL, [`crate::gpu::methods::local_global::rows`]): a particle's two block offsets (one with a
/// stencil, none in a uniform table without one: counted anyway), and per slot its neighbour and k (the
/// global matrix) and its signed rest length (the local step).
const ROW: u64 = 8;
const SLOT_MATRIX: u64 = 8;
const SLOT_LOCAL: u64 = 12;
/// A collider's record (`GpuCollider`).
const COLLIDER: u64 = size_of::<crate::gpu::base::layout::GpuCollider>() as u64;

/// The shape of a frame: what the model needs of the model, the method and the plan.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameShape {
    /// The method (a GPU one).
    pub method: Option<Method>,
    /// Particles.
    pub n: u64,
    /// Springs.
    pub springs: u64,
    /// Incidence entries (two per spring).
    pub entries: u64,
    /// Colliders (0: no collide dispatch).
    pub colliders: u64,
    /// Pinned particles moving along paths (0: no `move_pins` dispatch).
    pub moving_pins: u64,
    /// Self-collision passes per step (0: off); each is the eight `sc_*` dispatches.
    pub self_collision_passes: u64,
    /// The aerodynamic wind's vertex→triangle entries (three per triangle), `None` without the wind
    /// (then no `wind_kick` dispatch).
    pub wind_entries: Option<u64>,
    /// Steps per frame.
    pub steps: u64,
    /// Strain limiting's Jacobi passes per step (0: none; an odd count adds a copy back).
    pub strain_passes: u64,
    /// LEU: steps between linearisations (the frame starts with one).
    pub relinearize_every: u64,
    /// Implicit Euler: the CG budget per step.
    pub cg_iterations: u64,
    /// Implicit Euler: each step is a trial step followed by the strain and energy checks (the adaptive
    /// step).
    pub trial: bool,
    /// Local/global: iterations per step.
    pub local_global_iterations: u64,
    /// Local/global: the global solve.
    pub global: Option<GlobalSolve>,
    /// Local/global with cg or chebyshev: the budget of each global step.
    pub global_iterations: u64,
    /// The multigrid V-cycle, when it preconditions the global step or implicit Euler's PCG:
    /// (dispatches, workgroups, bytes of its matrices (implicit Euler: its lists and blocks), rows summed
    /// over the levels).
    pub multigrid: Option<(u64, u64, u64, u64)>,
    /// The PCG sums its dot products in `pcg_reduce` dispatches (one workgroup before each `pcg_matvec`
    /// and `pcg_update`) instead of in every workgroup of those ([`crate::gpu::methods::pcg::PcgKernels::reduces`]).
    pub pcg_reduce: bool,
    /// The workgroups of the PCG's per-particle kernels (`pcg_begin`, `pcg_matvec`, `pcg_update`: a
    /// Jacobi solve's threads take [`crate::gpu::base::layout::PCG_PER_LANE`] particles each); 0: one a thread.
    pub pcg_groups: u64,
    /// Implicit Euler's multigrid: each step's block sums and last-level factor (dispatches, workgroups,
    /// bytes of the lists, bytes of the blocks written).
    pub multigrid_update: Option<(u64, u64, u64, u64)>,
    /// Local/global's row table: the slots a sweep reads and those the table stores, the padding
    /// included ([`crate::gpu::methods::local_global::rows::LocalGlobalRows::shape`]); `None`: both counted as the incidence entries.
    pub local_global_rows: Option<TableShape>,
}

/// One kernel of the model, per frame.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KernelCost {
    /// The entry point (`mg_vcycle`: a whole V-cycle's dispatches).
    pub name: &'static str,
    /// Its phase.
    pub phase: Phase,
    /// Dispatches per frame.
    pub dispatches: u64,
    /// Workgroups per frame.
    pub workgroups: u64,
    /// Bytes read per frame (estimated).
    pub read_bytes: u64,
    /// Bytes written per frame (estimated).
    pub write_bytes: u64,
}

/// A planned frame: its kernels, passes and submits, and the floor.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CostModel {
    /// The kernels, in the order they first appear.
    pub kernels: Vec<KernelCost>,
    /// Compute passes per frame.
    pub passes: u64,
    /// Submits per frame the engine makes itself to record the steps (0 on the `encode_frame` path).
    pub submits: u64,
    /// Steps per frame.
    pub steps: u64,
    /// Bytes the method must touch per frame: the state in and out once per step, the spring table once
    /// per force evaluation, and per solver iteration the spring table and four vectors.
    pub floor_bytes: u64,
}

impl CostModel {
    /// Dispatches per frame.
    pub fn dispatches(&self) -> u64 {
        self.kernels.iter().map(|k| k.dispatches).sum()
    }

    /// Workgroups per frame.
    pub fn workgroups(&self) -> u64 {
        self.kernels.iter().map(|k| k.workgroups).sum()
    }

    /// Bytes the kernels read and write per frame.
    pub fn kernel_bytes(&self) -> u64 {
        self.kernels.iter().map(|k| k.read_bytes + k.write_bytes).sum()
    }

    /// Dispatches per frame of `phase`.
    pub fn dispatches_in(&self, phase: Phase) -> u64 {
        self.kernels.iter().filter(|k| k.phase == phase).map(|k| k.dispatches).sum()
    }

    /// Kernel bytes per frame of `phase`.
    pub fn kernel_bytes_in(&self, phase: Phase) -> u64 {
        self.kernels.iter().filter(|k| k.phase == phase).map(|k| k.read_bytes + k.write_bytes).sum()
    }

    /// Adds `count` dispatches of a kernel of `wg` workgroups each, reading and writing the given bytes
    /// per dispatch.
    fn add(&mut self, name: &'static str, phase: Phase, count: u64, wg: u64, read: u64, write: u64) {
        self.add_total(name, phase, [count, count * wg, count * read, count * write]);
    }

    /// Adds totals `[dispatches, workgroups, read bytes, write bytes]` to a kernel.
    fn add_total(&mut self, name: &'static str, phase: Phase, [dispatches, workgroups, read_bytes, write_bytes]: [u64; 4]) {
        if dispatches == 0 {
            return;
        }
        match self.kernels.iter_mut().find(|k| k.name == name && k.phase == phase) {
            Some(k) => {
                k.dispatches += dispatches;
                k.workgroups += workgroups;
                k.read_bytes += read_bytes;
                k.write_bytes += write_bytes;
            }
            None => self.kernels.push(KernelCost { name, phase, dispatches, workgroups, read_bytes, write_bytes }),
        }
    }
}

/// The model of one planned frame of `s` (an empty model for a method that does not run on the GPU).
pub fn frame_model(s: &FrameShape) -> CostModel {
    let (n, e) = (s.n, s.entries);
    let g = groups(n as usize) as u64;
    let pcg_g = if s.pcg_groups > 0 { s.pcg_groups } else { g };
    let gather = n * (ST + CSR) + e * (NB + ST);
    let table = e * NB + 4 * (n + 1);
    let steps = s.steps;
    let mut m = CostModel { passes: 1, steps, ..Default::default() };
    let mut evaluations = steps;
    let mut iterations = 0;
    let Some(method) = s.method else { return CostModel::default() };
    match method {
        Method::ExplicitEuler | Method::SymplecticEuler => {
            let name = if method == Method::ExplicitEuler { "euler_step" } else { "symplectic_step" };
            m.add(name, Phase::Forces, steps, g, gather + n * V, n * ST);
        }
        Method::Midpoint => {
            m.add("midpoint_stage1", Phase::Forces, steps, g, gather + n * ST, n * ST);
            m.add("midpoint_stage2", Phase::Forces, steps, g, gather + n * ST, n * ST);
            evaluations = 2 * steps;
        }
        Method::Rk4 => {
            m.add("rk4_stage1", Phase::Forces, steps, g, gather + n * ST, 2 * n * ST);
            m.add("rk4_stage2", Phase::Forces, steps, g, gather + 2 * n * ST, 2 * n * ST);
            m.add("rk4_stage3", Phase::Forces, steps, g, gather + 2 * n * ST, 2 * n * ST);
            m.add("rk4_stage4", Phase::Forces, steps, g, gather + 2 * n * ST, n * ST);
            evaluations = 4 * steps;
        }
        Method::Leu => {
            let every = s.relinearize_every.max(1);
            m.add("leu_linearize", Phase::Forces, steps.div_ceil(every), g, gather, n * 3 * V + e * 3 * V);
            m.add("leu_step", Phase::Integrate, steps, g, n * (ST + 3 * V + CSR) + e * (3 * V + NB + ST), n * ST);
            m.add("leu_fixup", Phase::Integrate, steps, g, n * ST, n * ST);
        }
        Method::ImplicitEuler => {
            let it = s.cg_iterations;
            m.add("implicit_prepare", Phase::Forces, steps, g, gather, e * 2 * V + n * 3 * V);
            let matvec = n * (V + V + CSR) + e * (2 * V + NB + V);
            if let Some((d, w, lists, blocks)) = s.multigrid_update {
                // every list read once, the fine blocks once, the coarse blocks written and read once more
                m.add_total(
                    "implicit_mg_update",
                    Phase::Global,
                    [steps * d, steps * w, steps * (lists + e * 2 * V + blocks), steps * blocks],
                );
            }
            pcg(&mut m, steps, it, pcg_g, n, matvec, s.multigrid, s.pcg_reduce);
            m.add("implicit_integrate", Phase::Integrate, steps, g, n * (ST + V), n * ST);
            if s.trial {
                m.add("implicit_strain", Phase::Integrate, steps, g, n * (2 * ST + CSR) + e * (NB + 2 * ST), 4);
                // the energy check: both states and the springs' ends in both, four vec4 a workgroup folded
                m.add("signals_step_partial", Phase::Integrate, steps, g, n * (4 * V + CSR) + e * (NB + 2 * V), g * 4 * V);
                m.add("signals_reduce", Phase::Integrate, steps, 1, g * 4 * V, 4 * V);
            }
            iterations = steps * it;
        }
        Method::LocalGlobal => {
            let (li, budget) = (s.local_global_iterations, s.global_iterations);
            let global = s.global.unwrap_or(GlobalSolve::Cg);
            m.add("local_global_inertia", Phase::Integrate, steps, g, n * ST, n * 2 * V);
            let local = steps * (li + 1);
            // every slot gathers its neighbour; the table's slots are read from memory, the stencil's (the
            // same few packets for a block's threads) are not counted, like a parameter block
            let (slots, stored) = s.local_global_rows.map_or((e, e), |r| (r.slots, r.table_slots));
            // x and y read, R and D written, the two Chebyshev slots zeroed, the ‖r‖² partials; the residuals
            // that start a Chebyshev-Jacobi solve write R, δ₀ = 0 and its first iteration δ₁ = D⁻¹ r
            let solves = steps * li;
            let jacobi_chebyshev = global == GlobalSolve::Chebyshev && s.multigrid.is_none();
            // with colliders the contacts held mark their release from δ itself: no fused ends
            let fused = jacobi_chebyshev && s.colliders == 0;
            let (start, fused_advance) = (fused && budget > 0, fused && budget >= 2);
            let started = if start { solves } else { 0 };
            m.add_total(
                "local_global_local_residual",
                Phase::Local,
                [
                    local,
                    local * g,
                    local * (n * (2 * V + ROW) + stored * SLOT_LOCAL + slots * V),
                    (local - started) * n * 4 * V + started * n * 3 * V + local * g * V,
                ],
            );
            let matvec = n * (2 * V + ROW) + stored * SLOT_MATRIX + slots * V;
            match global {
                GlobalSolve::Cholesky => {
                    // every phase its own pass, and one submit per iteration (r read back, δ uploaded) and at the end
                    let contact = s.colliders > 0 || s.moving_pins > 0 || s.self_collision_passes > 0 || s.strain_passes > 0;
                    let projections = (s.colliders > 0) as u64 * li.saturating_sub(1);
                    m.passes = steps * (1 + 2 * li + 2 + contact as u64 + projections + s.wind_entries.is_some() as u64);
                    m.submits = solves + 1;
                }
                GlobalSolve::Chebyshev => match s.multigrid {
                    Some(mg) => {
                        m.add("local_global_cheb_residual", Phase::Global, solves * budget, g, matvec + n * V, n * V);
                        vcycles(&mut m, solves * budget, mg);
                        m.add("local_global_cheb_combine", Phase::Global, solves * budget, g, n * 3 * V, n * V);
                    }
                    // the Jacobi sweep: δ_{k−1} and r (D⁻¹ in its w) beside the gather, no δ_k,i or state;
                    // the first iteration is the residual's, the last advances x (reads and writes x, no δ)
                    None => {
                        let sweeps = budget.saturating_sub(start as u64 + fused_advance as u64);
                        m.add("local_global_chebyshev", Phase::Global, solves * sweeps, g, matvec, n * V);
                        if fused_advance {
                            m.add("local_global_chebyshev_advance", Phase::Global, solves, g, matvec + n * V, n * V);
                        }
                    }
                },
                _ => pcg(&mut m, solves, budget, pcg_g, n, matvec, s.multigrid, s.pcg_reduce),
            }
            if global != GlobalSolve::Cholesky {
                iterations = solves * budget;
            }
            if !fused_advance {
                m.add("local_global_advance", Phase::Integrate, solves, g, n * 2 * V, n * V);
            }
            if s.colliders > 0 && li > 1 {
                // Liu §4.1: the iterate projected out of the colliders after every iteration but the last
                m.add("collide_positions", Phase::Collide, steps * (li - 1), g, n * V + s.colliders * COLLIDER, n * V);
            }
            m.add("local_global_velocity", Phase::Integrate, steps, g, n * (2 * V + ST), n * ST);
            m.add("local_global_report", Phase::Integrate, steps, 1, 2 * g * V, V);
            evaluations = local;
        }
        Method::Newton => return CostModel::default(),
    }
    if s.moving_pins > 0 {
        let pins = s.moving_pins;
        m.add("move_pins", Phase::Collide, steps, groups(pins as usize) as u64, pins * 32 + pins * 2 * V, pins * 2 * V);
    }
    if s.strain_passes > 0 {
        // a gather per pass: the particle's state and offsets, per entry the record and the neighbour's
        // position; the first pass of each pair also checks (the control words: a few bytes a
        // workgroup). Every recorded pass counts in full: once the passes stop, the rest return at once,
        // so this is the most they do. The accelerated passes (from STRAIN_ACCELERATION_AFTER on) also
        // read what they overwrite, the state two passes back, for the particles they move: counted for
        // every check and second pass, an upper bound like the rest.
        let p = s.strain_passes;
        let bytes = n * (ST + CSR) + e * (NB + V);
        m.add("strain_limit_first", Phase::Collide, steps, g, bytes, n * ST);
        m.add("strain_limit_check", Phase::Collide, steps * (p.div_ceil(2) - 1), g, bytes + n * ST, n * ST);
        m.add("strain_limit_pass", Phase::Collide, steps * (p / 2), g, bytes + n * ST, n * ST);
        m.add("strain_limit_copy", Phase::Collide, steps * (p % 2), g, n * ST, n * ST);
    }
    if s.self_collision_passes > 0 && n > 0 {
        self_collision(&mut m, steps * s.self_collision_passes, n, e);
    }
    if let Some(te) = s.wind_entries {
        // the state and the offsets per particle; per entry the pair (j, k) and both states
        m.add("wind_kick", Phase::Forces, steps, g, n * (ST + 8) + 4 + te * (8 + 2 * ST), n * ST);
    }
    if s.colliders > 0 {
        m.add("collide", Phase::Collide, steps, g, n * ST + s.colliders * COLLIDER, n * ST);
    }
    m.floor_bytes = steps * 2 * n * ST + evaluations * table + iterations * (table + 4 * n * V);
    m
}

/// `count` self-collision passes (phase `collide`): the hash's counting sort over T buckets and the
/// repulsion's gather, which reads per particle its state, its 27 cells' starts, and per candidate the
/// index and the candidate's state (about 8 candidates a particle at rest in a layer, estimated), and
/// walks its incidence list (4 B an entry) per candidate within the thickness (about 2).
fn self_collision(m: &mut CostModel, count: u64, n: u64, e: u64) {
    let table = crate::reference::self_collision::table_size(n as usize) as u64;
    let [g, t, one, _, _, _, _, _] = crate::gpu::step_end::self_collision::SelfCollider::workgroups(n as usize).map(u64::from);
    m.add("sc_count", Phase::Collide, count, g, n * V, n * 8);
    m.add("sc_scan_blocks", Phase::Collide, count, t, table * 4, table * 4);
    m.add("sc_scan_sums", Phase::Collide, count, one, 2 * table / 64 * 4, table / 64 * 4);
    m.add("sc_add_sums", Phase::Collide, count, t, table * 8, table * 4);
    m.add("sc_scatter", Phase::Collide, count, g, n * 12, n * 8);
    m.add("sc_sort", Phase::Collide, count, t, table * 8 + n * 8, n * 4);
    m.add("sc_repulse", Phase::Collide, count, g, n * (ST + 27 * 8 + 8 * (4 + ST) + CSR) + 2 * e * 4, n * ST);
    m.add("sc_apply", Phase::Collide, count, g, n * ST, n * ST);
}

/// `solves` PCG solves of `budget` iterations with the operator's mat-vec reading `matvec` bytes, each
/// preconditioned by a V-cycle `mg` when given (after `pcg_begin` and after every `pcg_update`).
/// `pcg_matvec` and `pcg_update` each need the sums of two partial slots in every workgroup: without
/// `reduce` each of the g workgroups sums 2g partials itself (2g² reads a dispatch); with it a
/// one-workgroup `pcg_reduce` before each sums the three slots (3g reads) and every workgroup reads two.
#[allow(clippy::too_many_arguments)] // the solve's shape
fn pcg(m: &mut CostModel, solves: u64, budget: u64, g: u64, n: u64, matvec: u64, mg: Option<(u64, u64, u64, u64)>, reduce: bool) {
    let sums = if reduce { g * 2 * V } else { g * 2 * g * V };
    m.add("pcg_begin", Phase::Global, solves, g, n * 3 * V, n * 4 * V + g * V);
    if reduce {
        m.add("pcg_reduce", Phase::Global, 2 * solves * budget, 1, 3 * g * V, 3 * V);
    }
    m.add("pcg_matvec", Phase::Global, solves * budget, g, matvec + sums, n * V + g * V);
    m.add("pcg_update", Phase::Global, solves * budget, g, n * 5 * V + g * V + sums, n * 4 * V + g * V);
    if let Some(mg) = mg {
        vcycles(m, solves * (budget + 1), mg);
    }
    m.add("pcg_finish", Phase::Global, solves, 1, 3 * g * V, 32);
}

/// `count` V-cycles (kept as one kernel, `mg_vcycle`): every level's matrices read twice (smoothing
/// down and up), the vectors read six times and written three times per row.
fn vcycles(m: &mut CostModel, count: u64, (dispatches, workgroups, mat_bytes, rows): (u64, u64, u64, u64)) {
    let (read, write) = (2 * mat_bytes + 6 * rows * V, 3 * rows * V);
    m.add_total("mg_vcycle", Phase::Global, [count * dispatches, count * workgroups, count * read, count * write]);
}
