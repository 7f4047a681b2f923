//! The kernels of `shaders/local_global.wgsl` (composed with `shaders/pcg.wgsl`): Liu et al. 2013's
//! local/global steps on the GPU, the twins of [`crate::cpu::local_global`], with the per-dispatch
//! uniform table, the phases of a step and the time split. The integrator (buffers, bind groups, the
//! global solver's runtime) is in [`crate::gpu::methods::local_global::integrator`].
//!
//! Groups: 0 the operator's buffers (Params, LocalGlobalConsts, the rows of the global matrix
//! ([`crate::gpu::methods::local_global::rows`]), the state at the start of the step, the iterate, `local_global_work`, the rows past the
//! split), per state parity; 1 the PCG's; 2 the per-dispatch
//! [`LocalGlobalPass`] at a dynamic offset into one buffer ([`LocalGlobalPassTable`]).

pub mod integrator;
pub mod multigrid;
pub mod rows;

use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::{groups, LocalGlobalPass};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{
    bind_dynamic, build_specialized, dynamic_params, params, params_stride, storage, Bindings, GroupLayout, Kernel,
};
use crate::gpu::base::specialize::split_constant;
use crate::gpu::methods::local_global::multigrid::{MultigridData, MultigridKernels};
use crate::gpu::methods::local_global::rows::TableShape;
use crate::gpu::methods::pcg::PcgKernels;
use crate::gpu::profiling::cost::{CountedPass, Phase};
use crate::linalg::chebyshev::{chebyshev_omega, chebyshev_rho_used};

/// The local/global kernels, the PCG compiled with them, and their layouts.
pub struct LocalGlobalKernels {
    /// Group 0: (P, LocalGlobalConsts, the rows' table, src, dst, local_global_work, the table past the split).
    pub layout: GroupLayout,
    /// Group 2: `LocalGlobalPass` with a dynamic offset.
    pub pass_layout: GroupLayout,
    /// `local_global_inertia`.
    pub inertia: Kernel,
    /// `local_global_local_residual`.
    pub local_residual: Kernel,
    /// `local_global_chebyshev`.
    pub chebyshev: Kernel,
    /// `local_global_chebyshev_advance`.
    pub chebyshev_advance: Kernel,
    /// `local_global_advance`.
    pub advance: Kernel,
    /// `local_global_velocity`.
    pub velocity: Kernel,
    /// `local_global_report`.
    pub report: Kernel,
    /// `local_global_cheb_residual` (Chebyshev with the multigrid preconditioner).
    pub cheb_residual: Kernel,
    /// `local_global_cheb_combine`.
    pub cheb_combine: Kernel,
    /// The PCG with `operator_apply` = the global matrix (M(1 + h d₀ + h² s) + h² L) p.
    pub pcg: PcgKernels,
    /// The multigrid V-cycle that can precondition it (compiled when the multigrid preconditioner is
    /// first chosen, [`LocalGlobalKernels::ensure_multigrid`]).
    pub multigrid: Option<MultigridKernels>,
}

/// The per-dispatch [`LocalGlobalPass`] values of one configuration (global solver, budget, ρ), one per
/// dynamic offset: the Chebyshev iterations k = 0..budget, then the residual's two partial slots,
/// `local_global_advance`'s source, and the residual without partials.
pub struct LocalGlobalPassTable {
    /// The parameter table.
    pub buffer: wgpu::Buffer,
    /// Group 2 over it.
    pub group: Bindings,
    /// Bytes between entries ([`crate::gpu::base::pipelines::params_stride`]).
    pub stride: u32,
    /// Chebyshev iterations per global step (the entries before the fixed ones).
    pub budget: usize,
    /// Chebyshev-Jacobi with its ends fused ([`LocalGlobalPassTable::new`]): `local_global_local_residual` takes the first
    /// iteration and, from a budget of 2, `local_global_chebyshev_advance` the last with the advance.
    pub fused: bool,
}

impl LocalGlobalPassTable {
    /// The entries for a global step of `budget` Chebyshev iterations with radius estimate `rho`
    /// (ω from [`chebyshev_omega`] in f64 at [`chebyshev_rho_used`]), and `local_global_advance` reading δ from
    /// the PCG's solution (`chebyshev` false: the PCG and the Cholesky upload) or from the last
    /// Chebyshev iterate. With `fused` (Chebyshev-Jacobi) the residuals that start a global step take its
    /// first iteration, which gathers nothing (δ₁ = D⁻¹ r), and the last iteration is recorded fused with
    /// the advance ([`LocalGlobalPassTable::advances`]): a global step of `budget` iterations is `budget − 1`
    /// dispatches and no `local_global_advance`.
    pub fn new(
        device: &wgpu::Device,
        alloc: &mut Allocator,
        kernels: &LocalGlobalKernels,
        budget: usize,
        rho: f64,
        chebyshev: bool,
        fused: bool,
    ) -> Result<Self> {
        let fused = fused && chebyshev;
        let start = (fused && budget > 0) as u32;
        let stride = params_stride(device, std::mem::size_of::<LocalGlobalPass>());
        let mut entries = Vec::with_capacity(budget + 3);
        let rho_used = chebyshev_rho_used(rho);
        let mut omega = 1.0;
        for k in 0..budget {
            omega = chebyshev_omega(k, rho_used, omega);
            entries.push(LocalGlobalPass { k: k as u32, omega: omega as f32, slot: 0, start: 0 });
        }
        entries.push(LocalGlobalPass { slot: 0, start, ..Default::default() });
        entries.push(LocalGlobalPass { slot: 1, ..Default::default() });
        entries.push(LocalGlobalPass { slot: if chebyshev { (budget % 3) as u32 } else { 3 }, ..Default::default() });
        entries.push(LocalGlobalPass { slot: 2, start, ..Default::default() });
        let mut bytes = vec![0u8; entries.len() * stride as usize];
        for (e, p) in entries.iter().enumerate() {
            let o = e * stride as usize;
            bytes[o..o + std::mem::size_of::<LocalGlobalPass>()].copy_from_slice(bytemuck::bytes_of(p));
        }
        let buffer = alloc.params_init("springsim.local_global_pass", &bytes)?;
        let group =
            bind_dynamic(device, &kernels.pass_layout, "springsim.local_global_pass", &buffer, std::mem::size_of::<LocalGlobalPass>());
        Ok(LocalGlobalPassTable { buffer, group, stride, budget, fused })
    }

    /// Whether the global step's last dispatch advances x itself (`local_global_chebyshev_advance`), so that the
    /// [`LocalGlobalPhase::Advance`] that follows it records nothing.
    pub fn advances(&self) -> bool {
        self.fused && self.budget >= 2
    }

    /// The offset of Chebyshev iteration k.
    pub fn chebyshev(&self, k: usize) -> u32 {
        k as u32 * self.stride
    }

    /// The offset of `local_global_local_residual` writing its ‖r‖² partials into `slot` (0 the step's first residual,
    /// 1 its final one, 2 none).
    pub fn residual(&self, slot: u32) -> u32 {
        (self.budget + [0, 1, 3][slot.min(2) as usize]) as u32 * self.stride
    }

    /// The offset of `local_global_advance`.
    pub fn advance(&self) -> u32 {
        (self.budget + 2) as u32 * self.stride
    }
}

/// What to record: one phase of a local/global step (Liu §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalGlobalPhase {
    /// `local_global_inertia`: y = q + hαv, x = y.
    Inertia,
    /// `local_global_local_residual`: the local step (d of eq. 10, formed where gathered) and r = b − A x with the
    /// Jacobi diagonal, with its ‖r‖² partials into a slot (0 the step's first residual, ‖∇g(y)‖; 1 its
    /// final one, ‖∇g(x)‖; 2 none).
    LocalResidual(u32),
    /// The PCG's solve of A δ = r with a budget.
    Cg(usize),
    /// Chebyshev-Jacobi iterations (the table's budget).
    Chebyshev,
    /// `local_global_advance`: x += δ.
    Advance,
    /// `local_global_velocity` and `local_global_report`.
    Finish,
}

impl LocalGlobalPhase {
    /// The phase of the cost model and the timestamps.
    pub fn cost_phase(self) -> Phase {
        match self {
            LocalGlobalPhase::Inertia | LocalGlobalPhase::Advance | LocalGlobalPhase::Finish => Phase::Integrate,
            LocalGlobalPhase::LocalResidual(_) => Phase::Local,
            LocalGlobalPhase::Cg(_) | LocalGlobalPhase::Chebyshev => Phase::Global,
        }
    }
}

impl LocalGlobalKernels {
    /// The entry points of `shaders/local_global.wgsl` (the PCG's, composed after it, are
    /// [`PcgKernels::ENTRY_POINTS`]).
    pub const ENTRY_POINTS: [&'static str; 9] = [
        "local_global_inertia",
        "local_global_local_residual",
        "local_global_chebyshev",
        "local_global_chebyshev_advance",
        "local_global_advance",
        "local_global_velocity",
        "local_global_report",
        "local_global_cheb_residual",
        "local_global_cheb_combine",
    ];

    /// Compiles the kernels (the multigrid V-cycle's only when `multigrid`) for the global matrix's
    /// rows' table held in `table_parts` bindings (`TABLES_SPLIT`), of the widths `rows` (`LOCAL_GLOBAL_PACKETS`
    /// and `LOCAL_GLOBAL_STENCIL`, [`crate::gpu::methods::local_global::rows::LocalGlobalRows::shape`]).
    /// With `held` (a model with colliders) the kernels hold contacts through the global solves
    /// (`HELD_CONTACTS`, [`crate::reference::contact`]).
    pub fn new(
        device: &wgpu::Device,
        options: &GpuOptions,
        multigrid: bool,
        table_parts: usize,
        rows: TableShape,
        held: bool,
    ) -> Result<Self> {
        let operator = [
            params(0),
            params(1),
            storage(2, true),
            storage(3, true),
            storage(4, false),
            storage(5, false),
            storage(6, true),
            storage(7, false),
        ];
        let pcg = PcgKernels::layout_entries();
        let pass = [dynamic_params(0, std::mem::size_of::<LocalGlobalPass>())];
        let mut names = Self::ENTRY_POINTS.to_vec();
        names.extend_from_slice(&PcgKernels::ENTRY_POINTS);
        // no force gather is composed in: the rows' own split and width are the constants
        let constants = [
            split_constant("TABLES_SPLIT", table_parts),
            ("LOCAL_GLOBAL_PACKETS", rows.packets as f64),
            ("LOCAL_GLOBAL_STENCIL", rows.stencil as u8 as f64),
            ("HELD_CONTACTS", held as u8 as f64),
        ];
        let k = build_specialized(device, options, "local_global.wgsl", &[&operator, &pcg, &pass], &names, &constants)?;
        let mut kernels = LocalGlobalKernels {
            layout: k.layout(0)?,
            pass_layout: k.layout(2)?,
            inertia: k.pipeline("local_global_inertia")?,
            local_residual: k.pipeline("local_global_local_residual")?,
            chebyshev: k.pipeline("local_global_chebyshev")?,
            chebyshev_advance: k.pipeline("local_global_chebyshev_advance")?,
            advance: k.pipeline("local_global_advance")?,
            velocity: k.pipeline("local_global_velocity")?,
            report: k.pipeline("local_global_report")?,
            cheb_residual: k.pipeline("local_global_cheb_residual")?,
            cheb_combine: k.pipeline("local_global_cheb_combine")?,
            // one particle a thread: a multigrid V-cycle may precondition it (ensure_multigrid)
            pcg: PcgKernels::from_kernels(&k, options, 1)?,
            multigrid: None,
        };
        if multigrid {
            kernels.ensure_multigrid(device, options)?;
        }
        Ok(kernels)
    }

    /// Compiles the multigrid V-cycle's kernels if they are not yet.
    pub fn ensure_multigrid(&mut self, device: &wgpu::Device, options: &GpuOptions) -> Result<&MultigridKernels> {
        let kernels = match self.multigrid.take() {
            Some(kernels) => kernels,
            None => MultigridKernels::new(device, options)?,
        };
        Ok(self.multigrid.insert(kernels))
    }

    /// Records one phase into `pass`, with the operator group `op` of the step's parity; the `cg` and
    /// `chebyshev` global steps are preconditioned by the multigrid hierarchy `mg` when one is given
    /// (built for that solver, [`crate::gpu::methods::local_global::multigrid::MgUse`]), by Jacobi otherwise.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        pass: &mut CountedPass,
        phase: LocalGlobalPhase,
        op: &Bindings,
        pcg_groups: &[Bindings; 2],
        table: &LocalGlobalPassTable,
        n: usize,
        mg: Option<&MultigridData>,
    ) {
        let g = groups(n);
        pass.phase(phase.cost_phase());
        pass.set_bind_group(0, op, &[]);
        pass.set_bind_group(1, &pcg_groups[0], &[]);
        pass.set_bind_group(2, &table.group, &[table.advance()]);
        let mg = mg.zip(self.multigrid.as_ref());
        let run = |pass: &mut CountedPass, pipe: &Kernel, offset: u32, count: u32| {
            pass.set_bind_group(2, &table.group, &[offset]);
            pass.set_pipeline(pipe);
            pass.dispatch_workgroups(count, 1, 1);
        };
        match phase {
            LocalGlobalPhase::Inertia => run(pass, &self.inertia, table.advance(), g),
            LocalGlobalPhase::LocalResidual(k) => run(pass, &self.local_residual, table.residual(k), g),
            LocalGlobalPhase::Cg(budget) => match mg {
                Some((mg, mg_kernels)) => {
                    let v_cycle = |pass: &mut CountedPass, slot: usize| mg.encode(pass, mg_kernels, slot);
                    self.pcg.encode_solve(pass, op, pcg_groups, n, budget, Some(&v_cycle));
                }
                None => self.pcg.encode_solve(pass, op, pcg_groups, n, budget, None),
            },
            LocalGlobalPhase::Chebyshev => match mg {
                Some((mg, mg_kernels)) => {
                    for k in 0..table.budget {
                        run(pass, &self.cheb_residual, table.chebyshev(k), g);
                        mg.encode(pass, mg_kernels, 0);
                        pass.set_bind_group(0, op, &[]);
                        pass.set_bind_group(1, &pcg_groups[0], &[]);
                        run(pass, &self.cheb_combine, table.chebyshev(k), g);
                    }
                }
                None => {
                    // fused: the first iteration was the residual's, the last advances x
                    let first = table.fused as usize;
                    for k in first..table.budget {
                        let last = table.advances() && k + 1 == table.budget;
                        run(pass, if last { &self.chebyshev_advance } else { &self.chebyshev }, table.chebyshev(k), g);
                    }
                }
            },
            LocalGlobalPhase::Advance if table.advances() => {}
            LocalGlobalPhase::Advance => run(pass, &self.advance, table.advance(), g),
            LocalGlobalPhase::Finish => {
                run(pass, &self.velocity, table.advance(), g);
                run(pass, &self.report, table.advance(), 1);
            }
        }
    }
}

/// Where the time of local/global frames went (ms, summed over `frames`): the phases timed as separate
/// submits by [`crate::gpu::GpuProbe::local_global_profile_frames`], and the host side of the `cholesky` path.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct LocalGlobalSplit {
    /// Frames summed.
    pub frames: usize,
    /// `local_global_inertia`, `local_global_velocity` and `local_global_report`.
    pub other_ms: f64,
    /// The local step with the right-hand side (`local_global_local_residual`: d formed and J d gathered,
    /// r = b − A x).
    pub local_ms: f64,
    /// The GPU global step (PCG or Chebyshev); for `cholesky` the GPU work waited for before each
    /// read-back when not profiled phase by phase.
    pub global_ms: f64,
    /// `local_global_advance` (x += δ).
    pub advance_ms: f64,
    /// `cholesky`: mapping and copying r back (n `vec4`), once per iteration.
    pub readback_ms: f64,
    /// `cholesky`: the f64 solve on the CPU (with the f32 ↔ f64 conversions).
    pub solve_ms: f64,
    /// `cholesky`: queueing δ for upload (n `vec4`), once per iteration.
    pub upload_ms: f64,
    /// Wall time of the frames.
    pub total_ms: f64,
}

impl LocalGlobalSplit {
    /// Every figure divided by the frames: ms per frame.
    pub fn per_frame(&self) -> LocalGlobalSplit {
        let f = self.frames.max(1) as f64;
        LocalGlobalSplit {
            frames: 1,
            other_ms: self.other_ms / f,
            local_ms: self.local_ms / f,
            global_ms: self.global_ms / f,
            advance_ms: self.advance_ms / f,
            readback_ms: self.readback_ms / f,
            solve_ms: self.solve_ms / f,
            upload_ms: self.upload_ms / f,
            total_ms: self.total_ms / f,
        }
    }

    /// The bucket of a phase.
    pub fn bucket(&mut self, phase: LocalGlobalPhase) -> &mut f64 {
        match phase {
            LocalGlobalPhase::Inertia | LocalGlobalPhase::Finish => &mut self.other_ms,
            LocalGlobalPhase::LocalResidual(_) => &mut self.local_ms,
            LocalGlobalPhase::Cg(_) | LocalGlobalPhase::Chebyshev => &mut self.global_ms,
            LocalGlobalPhase::Advance => &mut self.advance_ms,
        }
    }
}
