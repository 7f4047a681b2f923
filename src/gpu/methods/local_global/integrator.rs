//! Liu et al. 2013's local/global method on the GPU: [`LocalGlobalIntegrator`] owns its buffers
//! ([`LocalGlobalBuffers`]: the global matrix's rows, the work vectors, `LocalGlobalConsts`, the PCG's), its kernels
//! ([`crate::gpu::methods::local_global::LocalGlobalKernels`]), its bind groups, and the global solver prepared for
//! one step h and pinned set (the per-dispatch table, the Cholesky factor, ρ, the multigrid hierarchy).
//!
//! Each step is y = q + hαv, then `local_global_iterations` × (local step with the residual r = b − A x, one
//! kernel; global solve A δ = r; x += δ) on corrections, then the local step and residual at the final x
//! and v = (x − q)/h.
//! With `cg` and `chebyshev` a frame is recorded into one encoder with no read-back
//! ([`LocalGlobalIntegrator::encode_step`]). With `cholesky` the global solve is the f64 factor on the
//! host: [`LocalGlobalIntegrator::host_frame`] submits once per iteration, reads r back and uploads δ
//! (n `vec4` each), timed apart in [`LocalGlobalSplit`].

use crate::gpu::base::alloc::{Allocator, SplitBuffer};
use crate::gpu::base::layout::{groups, LocalGlobalConsts, CG_STATE_WORDS};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, Bindings};
use crate::gpu::base::state::{read_buffer, read_vec4s, read_words, xyz, GpuState};
use crate::gpu::methods::local_global::multigrid::{MgUse, MultigridData};
use crate::gpu::methods::local_global::rows::{LocalGlobalRows, TableShape};
use crate::gpu::methods::local_global::{LocalGlobalKernels, LocalGlobalPassTable, LocalGlobalPhase, LocalGlobalSplit};
use crate::gpu::methods::pcg::{GpuCgState, PcgBuffers, INVERSE_DIAGONAL_VECTOR, SOLUTION_VECTOR};
use crate::gpu::profiling::cost::{CountedPass, GpuCounters};
use crate::gpu::step_end::collide::Colliders;
use crate::gpu::step_end::StepEnd;
// ρ of the Chebyshev iteration is estimated in f64 by power iteration on the CPU engine's operator.
use crate::cpu::local_global::cholesky_solve_held;
use crate::error::{Error, HostCall, Result};
use crate::linalg::cg::CgWork;
use crate::linalg::chebyshev::{chebyshev_rho, CHEBYSHEV_POWER_ITERATIONS, MULTIGRID_RHO_ITERATIONS};
use crate::linalg::global::GlobalCholesky;
use crate::linalg::global_mg::GlobalMg;
use crate::method::{FactorPrecision, GlobalSolve, Method, Preconditioner, StepSettings};
use crate::reference::contact::Contact;
use crate::reference::local_global::LocalGlobalParams;
use crate::reference::model::{CpuModel, V3};

mod host;

/// Local/global's own buffers.
pub struct LocalGlobalBuffers {
    /// The global matrix's rows as a sliced ELL table ([`LocalGlobalRows`]): `local_global_rows` and `local_global_rows_1` of
    /// `shaders/local_global.wgsl`, split at the state's split size.
    pub tables: SplitBuffer,
    /// The table's slots and widths ([`LocalGlobalRows::shape`]).
    pub rows: TableShape,
    /// The Chebyshev iterates (3n), the ‖r‖² partials (2 slots of `groups`) and the report (one
    /// `vec4`): `local_global_work` of `shaders/local_global.wgsl`.
    pub work: wgpu::Buffer,
    /// `LocalGlobalConsts` (a parameter block).
    pub consts: wgpu::Buffer,
    /// The PCG's vectors (its r is the residual, its x the correction δ), partials and status.
    pub pcg: PcgBuffers,
    /// The contacts held through the global solves (3n `vec4`, `contacts` of `shaders/local_global.wgsl`)
    /// when the model has colliders; one `vec4` otherwise.
    pub contacts: wgpu::Buffer,
    /// The queue the tables and the multigrid hierarchy are uploaded through.
    pub queue: wgpu::Queue,
    /// Bytes of the buffers above.
    pub bytes: u64,
}

/// Bindings of local/global's table (split in two at most: 2 × 128 MiB).
pub const LOCAL_GLOBAL_SLOTS: usize = 2;

/// `vec4`s of the work buffer: 3n Chebyshev iterates, 2G partials and the report.
pub fn work_len(n: usize) -> usize {
    3 * n + 2 * groups(n) as usize + 1
}

impl LocalGlobalBuffers {
    /// Allocates and uploads them (checked against the device's limits).
    pub fn new(device: &wgpu::Device, st: &GpuState, m: &CpuModel) -> Result<Self> {
        let mut alloc = Allocator::streaming(device, &st.queue);
        let n = m.n;
        let work_bytes = (work_len(n) * 16) as u64;
        let rows = LocalGlobalRows::plan(m)?;
        alloc.check("springsim.local_global_work", work_bytes, crate::gpu::base::alloc::STORAGE_RW)?;
        alloc.check_split("springsim.local_global_rows", rows.bytes(), st.split, LOCAL_GLOBAL_SLOTS)?;
        let read_only = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        // streamed through the queue a block at a time: no host copy of the table
        let tables =
            alloc.split_fill("springsim.local_global_rows", rows.bytes(), st.split, LOCAL_GLOBAL_SLOTS, read_only, |w| rows.write(m, w))?;
        let work = alloc.storage("springsim.local_global_work", work_bytes, wgpu::BufferUsages::empty())?;
        let consts = alloc.params("springsim.local_global_consts", std::mem::size_of::<LocalGlobalConsts>() as u64)?;
        let pcg = PcgBuffers::new(&mut alloc, n)?;
        let contact_bytes = if m.colliders.is_empty() { 16 } else { (3 * n * 16) as u64 };
        alloc.check("springsim.local_global_contacts", contact_bytes, crate::gpu::base::alloc::STORAGE_RW)?;
        let contacts = alloc.storage("springsim.local_global_contacts", contact_bytes, wgpu::BufferUsages::empty())?;
        Ok(LocalGlobalBuffers { tables, rows: rows.shape(), work, consts, pcg, contacts, queue: st.queue.clone(), bytes: alloc.bytes() })
    }
}

/// The global solver prepared for one step h and one set of pinned particles.
struct LocalGlobalRuntime {
    /// cholesky, cg or chebyshev.
    global: GlobalSolve,
    /// The step the solver is for.
    h: f64,
    /// Chebyshev iterations per global step (the table's budget).
    budget: usize,
    /// The pinned set changed since: the factor and ρ are rebuilt before the next frame.
    stale: bool,
    /// Chebyshev: ρ of the Jacobi iteration matrix, by power iteration in f64 (Wang 2015 §4).
    rho: f64,
    /// The per-dispatch parameter blocks (Chebyshev weights, slots).
    table: LocalGlobalPassTable,
    /// cholesky: the f64 factor of the free particles' M̃ + h²L.
    cholesky: Option<GlobalCholesky>,
    /// cg with the multigrid preconditioner: the hierarchy on the GPU.
    multigrid: Option<MultigridData>,
    /// The preconditioner the runtime was built for.
    precond: Preconditioner,
    /// The precision of the host Cholesky solves it was built for.
    precision: FactorPrecision,
    /// The split of the last host-driven frame.
    split: LocalGlobalSplit,
    /// Bytes of the table and the hierarchy.
    bytes: u64,
}

/// One operation of a local/global step: a GPU phase, or the host's Cholesky solve (a read-back of r and
/// an upload of δ).
#[derive(Clone, Copy, Debug, PartialEq)]
enum LocalGlobalOp {
    Gpu(LocalGlobalPhase),
    HostSolve,
}

/// The operations of one step of `iters` local/global iterations (Liu §4), ending with the local step
/// and residual at the final x (for the report's ‖∇g(x)‖) and the velocities.
fn local_global_ops(global: GlobalSolve, iters: usize, budget: usize) -> Vec<LocalGlobalOp> {
    let solve = match global {
        GlobalSolve::Cholesky => LocalGlobalOp::HostSolve,
        GlobalSolve::Chebyshev => LocalGlobalOp::Gpu(LocalGlobalPhase::Chebyshev),
        _ => LocalGlobalOp::Gpu(LocalGlobalPhase::Cg(budget)),
    };
    let mut ops = vec![LocalGlobalOp::Gpu(LocalGlobalPhase::Inertia)];
    for k in 0..iters {
        let slot = if k == 0 { 0 } else { 2 };
        ops.extend([LocalGlobalOp::Gpu(LocalGlobalPhase::LocalResidual(slot)), solve, LocalGlobalOp::Gpu(LocalGlobalPhase::Advance)]);
    }
    ops.extend([LocalGlobalOp::Gpu(LocalGlobalPhase::LocalResidual(1)), LocalGlobalOp::Gpu(LocalGlobalPhase::Finish)]);
    ops
}

/// What the GPU kernels of a local/global evaluation produced ([`crate::gpu::GpuProbe::local_global_eval`]).
#[derive(Clone, Debug, Default)]
pub struct LocalGlobalEval {
    /// y = q + hαv (`local_global_inertia`).
    pub y: Vec<[f64; 3]>,
    /// r = b − A x per particle (`local_global_local_residual`).
    pub r: Vec<[f64; 3]>,
    /// The Jacobi inverse diagonal 1/A_ii (`local_global_local_residual`).
    pub inv_diag: Vec<[f64; 3]>,
}

/// Local/global on the GPU.
pub struct LocalGlobalIntegrator {
    kernels: LocalGlobalKernels,
    buffers: LocalGlobalBuffers,
    /// The operator's groups per state parity p: state\[p\] (q, v) → state[1 − p] (x, then the new state).
    operator_groups: [Bindings; 2],
    /// The PCG's groups per iteration parity.
    pcg_groups: [Bindings; 2],
    /// The prepared global solver ([`LocalGlobalIntegrator::prepare`]).
    runtime: Option<LocalGlobalRuntime>,
    /// `cholesky`: the staging buffer r is read back through (n `vec4`), made by the first host frame.
    residual_staging: Option<wgpu::Buffer>,
    /// Whether the model has colliders (then contacts are held through the global solves).
    held: bool,
    /// `collide_positions`'s group 2 over the contacts (with colliders).
    contacts_group: Option<Bindings>,
}

impl LocalGlobalIntegrator {
    /// Allocates the buffers, compiles the kernels (the V-cycle's with the multigrid preconditioner) and
    /// builds the groups; the global solver is prepared by [`LocalGlobalIntegrator::prepare`].
    ///
    /// With `colliders` (the engine's), `collide_positions`'s group over the contacts is built with
    /// their layout.
    pub fn new(
        device: &wgpu::Device,
        options: &GpuOptions,
        st: &GpuState,
        m: &CpuModel,
        settings: &StepSettings,
        colliders: Option<&Colliders>,
    ) -> Result<Self> {
        let buffers = LocalGlobalBuffers::new(device, st, m)?;
        let multigrid = settings.preconditioner == Preconditioner::Multigrid;
        let held = !m.colliders.is_empty();
        let kernels = LocalGlobalKernels::new(device, options, multigrid, buffers.tables.parts(), buffers.rows, held)?;
        let b = &buffers;
        let tables = b.tables.bindings();
        let operator_groups = [0, 1].map(|p| {
            bind(
                device,
                &kernels.layout,
                "springsim.local_global",
                &[&st.params, &b.consts, tables[0], &st.state[p], &st.state[1 - p], &b.work, tables[1], &b.contacts],
            )
        });
        let pcg_groups = kernels.pcg.bind_groups(device, &b.pcg);
        let contacts_group =
            colliders.filter(|_| held).map(|c| bind(device, &c.kernels.contacts_layout, "springsim.local_global_contacts", &[&b.contacts]));
        Ok(LocalGlobalIntegrator {
            kernels,
            buffers,
            operator_groups,
            pcg_groups,
            runtime: None,
            residual_staging: None,
            held,
            contacts_group,
        })
    }

    /// The contacts' group for `collide_positions`, an error where none was built.
    fn contacts_group(&self) -> Result<&Bindings> {
        self.contacts_group.as_ref().ok_or_else(|| Error::internal_solver("local/global: no contacts group for the colliders"))
    }

    /// Bytes of the method's buffers, the per-dispatch table, the multigrid hierarchy and the Cholesky
    /// path's staging buffer included.
    pub fn bytes(&self) -> u64 {
        self.buffers.bytes + self.runtime.as_ref().map_or(0, |rt| rt.bytes) + self.residual_staging.as_ref().map_or(0, |b| b.size())
    }

    /// Writes `LocalGlobalConsts` for the step h and the PCG's parameter blocks (before a frame, never within).
    pub fn write_params(&self, queue: &wgpu::Queue, counters: &GpuCounters, m: &CpuModel, settings: &StepSettings, h: f64) {
        let lp = LocalGlobalParams::new(m, h);
        let fext = m.gravity + m.wind * m.drag + m.central_center * m.central_strength;
        let n = m.n;
        let consts = LocalGlobalConsts {
            fext: [fext.x as f32, fext.y as f32, fext.z as f32, 0.0],
            h: h as f32,
            alpha: lp.alpha as f32,
            inertia: lp.inertia as f32,
            mass_diag: lp.mass_diag as f32,
            n: n as u32,
            groups: groups(n),
            partials_base: (3 * n) as u32,
            stats_base: (3 * n + 2 * groups(n) as usize) as u32,
        };
        counters.write_buffer(queue, &self.buffers.consts, 0, bytemuck::bytes_of(&consts));
        // the global step solves for corrections from δ = 0 (the warm start is the iterate xₖ itself)
        self.buffers.pcg.write_pass(queue, counters, n, settings.cg_tolerance, false, &self.kernels.pcg);
    }

    /// The slots of its row table ([`LocalGlobalRows::shape`]): the cost model's counts.
    pub fn rows(&self) -> TableShape {
        self.buffers.rows
    }

    /// Whether its PCG (the `cg` global step) sums its dot products in `pcg_reduce` dispatches at n
    /// particles ([`crate::gpu::methods::pcg::PcgKernels::reduces`]).
    pub fn pcg_reduces(&self, n: usize) -> bool {
        self.kernels.pcg.reduces(n)
    }

    /// The workgroups of its PCG's per-particle kernels at n particles ([`crate::gpu::methods::pcg::PcgKernels::groups`]).
    pub fn pcg_groups(&self, n: usize) -> u32 {
        self.kernels.pcg.groups(n)
    }

    /// The prepared multigrid V-cycle for the cost model: (dispatches, workgroups, bytes of its matrices,
    /// rows over its levels); `None` without one.
    pub fn multigrid_shape(&self) -> Option<(u64, u64, u64, u64)> {
        let mg = self.runtime.as_ref()?.multigrid.as_ref()?;
        Some((
            mg.dispatches() as u64,
            mg.workgroups(),
            mg.mat.part_buffers().iter().map(|b| b.size()).sum::<u64>(),
            mg.sizes.iter().sum::<usize>() as u64,
        ))
    }

    /// The pinned set changed: the factor and ρ are rebuilt before the next frame.
    pub fn mark_stale(&mut self) {
        if let Some(rt) = &mut self.runtime {
            rt.stale = true;
        }
    }

    /// The global solver in use, once prepared.
    pub fn global(&self) -> Option<GlobalSolve> {
        self.runtime.as_ref().map(|rt| rt.global)
    }

    /// Chebyshev: the spectral radius estimate in use (0 for the other solvers).
    pub fn rho(&self) -> f64 {
        self.runtime.as_ref().map_or(0.0, |rt| rt.rho)
    }

    /// The split of the last host-driven frame.
    pub fn last_split(&self) -> LocalGlobalSplit {
        self.runtime.as_ref().map_or_else(LocalGlobalSplit::default, |rt| rt.split)
    }

    /// Builds or refreshes the global solver for the step h and the current pinned set (Liu et al. 2013
    /// §4): the numeric Cholesky factorisation in f64 (`cholesky`; a new symbolic analysis when the pinned
    /// set changed), ρ by power iteration in f64 (`chebyshev`, Wang 2015 §4), the multigrid hierarchy,
    /// the per-dispatch parameter blocks. Nothing to do when nothing changed.
    ///
    /// With `stream`, the hierarchy's matrices are uploaded through the queue in chunks, submitted and
    /// waited for as they go (the driver holds no staging copy of the whole); without it (a caller that
    /// records a frame and must not submit), through the buffer's mapping.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        options: &GpuOptions,
        m: &CpuModel,
        settings: &StepSettings,
        h: f64,
        stream: bool,
    ) -> Result<()> {
        let global = settings.global.resolve(Method::LocalGlobal)?;
        let precond = settings.preconditioner.resolve(Method::LocalGlobal);
        precond.check(Method::LocalGlobal, global)?;
        let budget = if global == GlobalSolve::Chebyshev { settings.global_iterations } else { 0 };
        let fresh = match &self.runtime {
            Some(rt) => {
                rt.global != global
                    || rt.h != h
                    || rt.stale
                    || rt.budget != budget
                    || rt.precond != precond
                    || rt.precision != settings.factor_precision
            }
            None => true,
        };
        if !fresh {
            return Ok(());
        }
        let params = LocalGlobalParams::new(m, h);
        let old = self.runtime.take();
        let (mut cholesky, mut rho) = (None, 0.0);
        match global {
            GlobalSolve::Cholesky => {
                cholesky = Some(match old {
                    // same free set: the numeric factorisation only
                    Some(LocalGlobalRuntime { cholesky: Some(mut c), stale: false, .. }) => {
                        c.refactor(m, &params)?;
                        c
                    }
                    _ => GlobalCholesky::new(m, &params)?,
                });
                if let Some(c) = cholesky.as_mut() {
                    c.set_single_precision(settings.factor_precision == FactorPrecision::F32);
                }
            }
            GlobalSolve::Chebyshev if precond == Preconditioner::Jacobi => rho = chebyshev_rho(m, &params, CHEBYSHEV_POWER_ITERATIONS),
            _ => {}
        }
        let mut alloc = if stream { Allocator::streaming(device, &self.buffers.queue) } else { Allocator::new(device) };
        let multigrid = match precond {
            Preconditioner::Multigrid => {
                // the finest matrix formed from the model when read, never stored on the host
                let mut hierarchy = GlobalMg::for_global(m, &params)?;
                let use_ = if global == GlobalSolve::Chebyshev {
                    // ρ of I − BA in f64 by the V-cycle's CPU twin on the same hierarchy (the CPU engine's
                    // ρ bit for bit), its vectors freed before the upload
                    rho = hierarchy.rho(m, &params, MULTIGRID_RHO_ITERATIONS);
                    MgUse::Chebyshev
                } else {
                    MgUse::Pcg
                };
                let (kernels, split) = (self.kernels.ensure_multigrid(device, options)?, options.split_bytes(device));
                Some(MultigridData::new(device, &mut alloc, kernels, &self.buffers.pcg, m.n, &hierarchy, use_, split)?)
            }
            Preconditioner::Jacobi | Preconditioner::Auto => None,
        };
        let chebyshev = global == GlobalSolve::Chebyshev;
        // held contacts mark their release after the solve from δ itself: no fused last iteration
        let table =
            LocalGlobalPassTable::new(device, &mut alloc, &self.kernels, budget, rho, chebyshev, multigrid.is_none() && !self.held)?;
        let bytes = alloc.bytes();
        self.runtime = Some(LocalGlobalRuntime {
            global,
            h,
            budget,
            stale: false,
            rho,
            table,
            cholesky,
            multigrid,
            precond,
            precision: settings.factor_precision,
            split: LocalGlobalSplit::default(),
            bytes,
        });
        Ok(())
    }

    fn runtime(&self) -> Result<&LocalGlobalRuntime> {
        self.runtime.as_ref().ok_or_else(|| Error::internal_solver("local/global solver not prepared"))
    }

    /// Records the start of a frame: clears the PCG's status words.
    pub fn begin_frame(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.buffers.pcg.status, 0, None);
    }

    /// Records one phase of a step from state\[p\] into `pass`.
    fn encode_phase(&self, pass: &mut CountedPass, rt: &LocalGlobalRuntime, phase: LocalGlobalPhase, p: usize, st: &GpuState) {
        let operator = &self.operator_groups[p];
        self.kernels.encode(pass, phase, operator, &self.pcg_groups, &rt.table, st.n, rt.multigrid.as_ref());
    }

    /// Records one phase of a step from state\[p\] into a compute pass of its own.
    fn record_phase(&self, encoder: &mut wgpu::CommandEncoder, rt: &LocalGlobalRuntime, phase: LocalGlobalPhase, p: usize, st: &GpuState) {
        let mut pass = st.counters.begin_pass(encoder, "springsim.local_global", None);
        self.encode_phase(&mut CountedPass::new(&mut pass, &st.counters), rt, phase, p, st);
    }

    /// Records one whole step from state\[p\] into state[1−p] (`cg` and `chebyshev`: every phase on the GPU).
    /// With `cholesky` the step needs the host: an error naming the blocking calls ([`crate::engine::Engine`]'s steps).
    ///
    /// With colliders (`contact`: them and the step's slot) the iterate is projected out of them after
    /// every iteration (Liu et al. 2013 §4.1: x moved directly to its collision-free state).
    pub fn encode_step(
        &self,
        pass: &mut CountedPass,
        p: usize,
        st: &GpuState,
        settings: &StepSettings,
        contact: Option<(&Colliders, usize)>,
    ) -> Result<()> {
        let rt = self.runtime()?;
        if rt.global == GlobalSolve::Cholesky {
            return Err(host_global_error());
        }
        let mut advances = 0;
        for op in local_global_ops(rt.global, settings.local_global_iterations, settings.global_iterations) {
            if let LocalGlobalOp::Gpu(phase) = op {
                self.encode_phase(pass, rt, phase, p, st);
                if let (LocalGlobalPhase::Advance, Some((c, slot))) = (phase, contact) {
                    advances += 1;
                    // every iteration's iterate but the last (see cpu::local_global::LocalGlobal::step)
                    if advances < settings.local_global_iterations {
                        c.encode_positions(pass, 1 - p, st.n, slot, self.contacts_group()?);
                    }
                }
            }
        }
        Ok(())
    }

    /// (‖∇g(y)‖, ‖∇g(x)‖, their ratio) of the last step (eq. 7; `local_global_report`), and the PCG's status words:
    /// one read-back of both.
    pub fn read_report(&self, device: &wgpu::Device, queue: &wgpu::Queue, st: &GpuState) -> Result<([f64; 3], GpuCgState)> {
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.local_global_report") });
        let bytes = self.encode_report(&mut enc, st, &st.readback, 0);
        st.counters.submit(queue, enc.finish());
        Ok(Self::decode_report(&read_buffer(device, &st.counters, &st.readback, bytes)?))
    }

    /// Records the copies of [`LocalGlobalIntegrator::read_report`]'s words into `dst` from byte `at`;
    /// returns their bytes.
    pub fn encode_report(&self, enc: &mut wgpu::CommandEncoder, st: &GpuState, dst: &wgpu::Buffer, at: u64) -> u64 {
        let stats = (3 * st.n + 2 * groups(st.n) as usize) as u64 * 16;
        enc.copy_buffer_to_buffer(&self.buffers.work, stats, dst, at, 16);
        enc.copy_buffer_to_buffer(&self.buffers.pcg.status, 0, dst, at + 16, (CG_STATE_WORDS * 4) as u64);
        16 + (CG_STATE_WORDS * 4) as u64
    }

    /// The report from the bytes [`LocalGlobalIntegrator::encode_report`] copied.
    pub fn decode_report(bytes: &[u8]) -> ([f64; 3], GpuCgState) {
        let f: &[f32] = bytemuck::cast_slice(&bytes[..16]);
        let words: &[u32] = bytemuck::cast_slice(&bytes[16..]);
        ([f[0] as f64, f[1] as f64, f[2] as f64], GpuCgState::from_words(words))
    }

    /// The PCG's status words (one read-back).
    pub fn cg_state(&self, device: &wgpu::Device, queue: &wgpu::Queue, st: &GpuState) -> Result<GpuCgState> {
        Ok(GpuCgState::from_words(&read_words(device, queue, st, &self.buffers.pcg.status, 0, CG_STATE_WORDS)?))
    }

    /// For checks against the CPU twins: runs `local_global_inertia` on the current state (q, v), then
    /// `local_global_local_residual` at the positions `x` (pinned particles: give their q), and reads back y, r and
    /// the inverse diagonal. state\[0\] is left as it was.
    pub fn eval(&self, device: &wgpu::Device, queue: &wgpu::Queue, st: &GpuState, m: &CpuModel, x: &[[f64; 3]]) -> Result<LocalGlobalEval> {
        let rt = self.runtime()?;
        let n = m.n;
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.local_global_eval") });
        self.record_phase(&mut enc, rt, LocalGlobalPhase::Inertia, 0, st);
        st.counters.submit(queue, enc.finish());
        let y = xyz(&read_vec4s(device, queue, &st.counters, &st.state[1], n, n)?);
        let packed: Vec<[f32; 4]> = (0..n).map(|i| [x[i][0] as f32, x[i][1] as f32, x[i][2] as f32, m.inv_mass[i] as f32]).collect();
        if n > 0 {
            st.counters.write_buffer(queue, &st.state[1], 0, bytemuck::cast_slice(&packed));
        }
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.local_global_eval") });
        self.record_phase(&mut enc, rt, LocalGlobalPhase::LocalResidual(0), 0, st);
        st.counters.submit(queue, enc.finish());
        let r = xyz(&read_vec4s(device, queue, &st.counters, &self.buffers.pcg.vectors, 0, n)?);
        let inv_diag = xyz(&read_vec4s(device, queue, &st.counters, &self.buffers.pcg.vectors, INVERSE_DIAGONAL_VECTOR * n, n)?);
        Ok(LocalGlobalEval { y, r, inv_diag })
    }
}

/// The error `encode_frame` returns for local/global with the host's Cholesky global step.
pub fn host_global_error() -> Error {
    Error::NeedsHostCall(HostCall::HostGlobalStep)
}
