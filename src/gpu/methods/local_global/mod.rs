//! The kernels of `shaders/local_global.wgsl` (composed with `shaders/pcg.wgsl`): Liu et al. 2013's
//! local/global steps on the GPU, the twins of [`crate::cpu::local_global`], with the per-dispatch
//! uniform table, the phases of a step and the time split. The integrator (buffers, bind groups, the
//! global solver's runtime) is in [`crate::gpu::methods::local_global::integrator`].
//!
//! Groups: 0 the operator's buffers (Params, LgConsts, the rows of the global matrix
//! ([`crate::gpu::methods::local_global::rows`]), the state at the start of the step, the iterate, `lg_work`, the rows past the
//! split), per state parity; 1 the PCG's; 2 the per-dispatch
//! [`LgPass`] at a dynamic offset into one buffer ([`LgPassTable`]).

pub mod integrator;
pub mod multigrid;
pub mod rows;

use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::{groups, LgPass};
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
    /// Group 0: (P, LgConsts, the rows' table, src, dst, lg_work, the table past the split).
    pub layout: GroupLayout,
    /// Group 2: `LgPass` with a dynamic offset.
    pub pass_layout: GroupLayout,
    /// `lg_inertia`.
    pub inertia: Kernel,
    /// `lg_local_residual`.
    pub local_residual: Kernel,
    /// `lg_chebyshev`.
    pub chebyshev: Kernel,
    /// `lg_chebyshev_advance`.
    pub chebyshev_advance: Kernel,
    /// `lg_advance`.
    pub advance: Kernel,
    /// `lg_velocity`.
    pub velocity: Kernel,
    /// `lg_report`.
    pub report: Kernel,
    /// `lg_cheb_residual` (Chebyshev with the multigrid preconditioner).
    pub cheb_residual: Kernel,
    /// `lg_cheb_combine`.
    pub cheb_combine: Kernel,
    /// The PCG with `operator_apply` = the global matrix (M(1 + h d₀ + h² s) + h² L) p.
    pub pcg: PcgKernels,
    /// The multigrid V-cycle that can precondition it (compiled when the multigrid preconditioner is
    /// first chosen, [`LocalGlobalKernels::ensure_multigrid`]).
    pub multigrid: Option<MultigridKernels>,
}

/// The per-dispatch [`LgPass`] values of one configuration (global solver, budget, ρ), one per
/// dynamic offset: the Chebyshev iterations k = 0..budget, then the residual's two partial slots,
/// `lg_advance`'s source, and the residual without partials.
pub struct LgPassTable {
    /// The parameter table.
    pub buffer: wgpu::Buffer,
    /// Group 2 over it.
    pub group: Bindings,
    /// Bytes between entries ([`crate::gpu::base::pipelines::params_stride`]).
    pub stride: u32,
    /// Chebyshev iterations per global step (the entries before the fixed ones).
    pub budget: usize,
    /// Chebyshev-Jacobi with its ends fused ([`LgPassTable::new`]): `lg_local_residual` takes the first
    /// iteration and, from a budget of 2, `lg_chebyshev_advance` the last with the advance.
    pub fused: bool,
}

impl LgPassTable {
    /// The entries for a global step of `budget` Chebyshev iterations with radius estimate `rho`
    /// (ω from [`chebyshev_omega`] in f64 at [`chebyshev_rho_used`]), and `lg_advance` reading δ from
    /// the PCG's solution (`chebyshev` false: the PCG and the Cholesky upload) or from the last
    /// Chebyshev iterate. With `fused` (Chebyshev-Jacobi) the residuals that start a global step take its
    /// first iteration, which gathers nothing (δ₁ = D⁻¹ r), and the last iteration is recorded fused with
    /// the advance ([`LgPassTable::advances`]): a global step of `budget` iterations is `budget − 1`
    /// dispatches and no `lg_advance`.
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
        let stride = params_stride(device, std::mem::size_of::<LgPass>());
        let mut entries = Vec::with_capacity(budget + 3);
        let rho_used = chebyshev_rho_used(rho);
        let mut omega = 1.0;
        for k in 0..budget {
            omega = chebyshev_omega(k, rho_used, omega);
            entries.push(LgPass { k: k as u32, omega: omega as f32, slot: 0, start: 0 });
        }
        entries.push(LgPass { slot: 0, start, ..Default::default() });
        entries.push(LgPass { slot: 1, ..Default::default() });
        entries.push(LgPass { slot: if chebyshev { (budget % 3) as u32 } else { 3 }, ..Default::default() });
        entries.push(LgPass { slot: 2, start, ..Default::default() });
        let mut bytes = vec![0u8; entries.len() * stride as usize];
        for (e, p) in entries.iter().enumerate() {
            let o = e * stride as usize;
            bytes[o..o + std::mem::size_of::<LgPass>()].copy_from_slice(bytemuck::bytes_of(p));
        }
        let buffer = alloc.params_init("springsim.lg_pass", &bytes)?;
        let group = bind_dynamic(device, &kernels.pass_layout, "springsim.lg_pass", &buffer, std::mem::size_of::<LgPass>());
        Ok(LgPassTable { buffer, group, stride, budget, fused })
    }

    /// Whether the global step's last dispatch advances x itself (`lg_chebyshev_advance`), so that the
    /// [`LgPhase::Advance`] that follows it records nothing.
    pub fn advances(&self) -> bool {
        self.fused && self.budget >= 2
    }

    /// The offset of Chebyshev iteration k.
    pub fn chebyshev(&self, k: usize) -> u32 {
        k as u32 * self.stride
    }

    /// The offset of `lg_local_residual` writing its ‖r‖² partials into `slot` (0 the step's first residual,
    /// 1 its final one, 2 none).
    pub fn residual(&self, slot: u32) -> u32 {
        (self.budget + [0, 1, 3][slot.min(2) as usize]) as u32 * self.stride
    }

    /// The offset of `lg_advance`.
    pub fn advance(&self) -> u32 {
        (self.budget + 2) as u32 * self.stride
    }
}

/// What to record: one phase of a local/global step (Liu §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LgPhase {
    /// `lg_inertia`: y = q + hαv, x = y.
    Inertia,
    /// `lg_local_residual`: the local step (d of eq. 10, formed where gathered) and r = b − A x with the
    /// Jacobi diagonal, with its ‖r‖² partials into a slot (0 the step's first residual, ‖∇g(y)‖; 1 its
    /// final one, ‖∇g(x)‖; 2 none).
    LocalResidual(u32),
    /// The PCG's solve of A δ = r with a budget.
    Cg(usize),
    /// Chebyshev-Jacobi iterations (the table's budget).
    Chebyshev,
    /// `lg_advance`: x += δ.
    Advance,
    /// `lg_velocity` and `lg_report`.
    Finish,
}

impl LgPhase {
    /// The phase of the cost model and the timestamps.
    pub fn cost_phase(self) -> Phase {
        match self {
            LgPhase::Inertia | LgPhase::Advance | LgPhase::Finish => Phase::Integrate,
            LgPhase::LocalResidual(_) => Phase::Local,
            LgPhase::Cg(_) | LgPhase::Chebyshev => Phase::Global,
        }
    }
}

impl LocalGlobalKernels {
    /// The entry points of `shaders/local_global.wgsl` (the PCG's, composed after it, are
    /// [`PcgKernels::ENTRY_POINTS`]).
    pub const ENTRY_POINTS: [&'static str; 9] = [
        "lg_inertia",
        "lg_local_residual",
        "lg_chebyshev",
        "lg_chebyshev_advance",
        "lg_advance",
        "lg_velocity",
        "lg_report",
        "lg_cheb_residual",
        "lg_cheb_combine",
    ];

    /// Compiles the kernels (the multigrid V-cycle's only when `multigrid`) for the global matrix's
    /// rows' table held in `table_parts` bindings (`TABLES_SPLIT`), of the widths `rows` (`LG_PACKETS`
    /// and `LG_STENCIL`, [`crate::gpu::methods::local_global::rows::LgRows::shape`]).
    pub fn new(device: &wgpu::Device, options: &GpuOptions, multigrid: bool, table_parts: usize, rows: TableShape) -> Result<Self> {
        let operator = [params(0), params(1), storage(2, true), storage(3, true), storage(4, false), storage(5, false), storage(6, true)];
        let pcg = PcgKernels::layout_entries();
        let pass = [dynamic_params(0, std::mem::size_of::<LgPass>())];
        let mut names = Self::ENTRY_POINTS.to_vec();
        names.extend_from_slice(&PcgKernels::ENTRY_POINTS);
        // no force gather is composed in: the rows' own split and width are the constants
        let constants =
            [split_constant("TABLES_SPLIT", table_parts), ("LG_PACKETS", rows.packets as f64), ("LG_STENCIL", rows.stencil as u8 as f64)];
        let k = build_specialized(device, options, "local_global.wgsl", &[&operator, &pcg, &pass], &names, &constants)?;
        let mut kernels = LocalGlobalKernels {
            layout: k.layout(0)?,
            pass_layout: k.layout(2)?,
            inertia: k.pipeline("lg_inertia")?,
            local_residual: k.pipeline("lg_local_residual")?,
            chebyshev: k.pipeline("lg_chebyshev")?,
            chebyshev_advance: k.pipeline("lg_chebyshev_advance")?,
            advance: k.pipeline("lg_advance")?,
            velocity: k.pipeline("lg_velocity")?,
            report: k.pipeline("lg_report")?,
            cheb_residual: k.pipeline("lg_cheb_residual")?,
            cheb_combine: k.pipeline("lg_cheb_combine")?,
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
        phase: LgPhase,
        op: &Bindings,
        pcg_groups: &[Bindings; 2],
        table: &LgPassTable,
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
            LgPhase::Inertia => run(pass, &self.inertia, table.advance(), g),
            LgPhase::LocalResidual(k) => run(pass, &self.local_residual, table.residual(k), g),
            LgPhase::Cg(budget) => match mg {
                Some((mg, mg_kernels)) => {
                    let v_cycle = |pass: &mut CountedPass, slot: usize| mg.encode(pass, mg_kernels, slot);
                    self.pcg.encode_solve(pass, op, pcg_groups, n, budget, Some(&v_cycle));
                }
                None => self.pcg.encode_solve(pass, op, pcg_groups, n, budget, None),
            },
            LgPhase::Chebyshev => match mg {
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
            LgPhase::Advance if table.advances() => {}
            LgPhase::Advance => run(pass, &self.advance, table.advance(), g),
            LgPhase::Finish => {
                run(pass, &self.velocity, table.advance(), g);
                run(pass, &self.report, table.advance(), 1);
            }
        }
    }
}

/// Where the time of local/global frames went (ms, summed over `frames`): the phases timed as separate
/// submits by [`crate::gpu::GpuProbe::lg_profile_frames`], and the host side of the `cholesky` path.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct LgSplit {
    /// Frames summed.
    pub frames: usize,
    /// `lg_inertia`, `lg_velocity` and `lg_report`.
    pub other_ms: f64,
    /// The local step with the right-hand side (`lg_local_residual`: d formed and J d gathered,
    /// r = b − A x).
    pub local_ms: f64,
    /// The GPU global step (PCG or Chebyshev); for `cholesky` the GPU work waited for before each
    /// read-back when not profiled phase by phase.
    pub global_ms: f64,
    /// `lg_advance` (x += δ).
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

impl LgSplit {
    /// Every figure divided by the frames: ms per frame.
    pub fn per_frame(&self) -> LgSplit {
        let f = self.frames.max(1) as f64;
        LgSplit {
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
    pub fn bucket(&mut self, phase: LgPhase) -> &mut f64 {
        match phase {
            LgPhase::Inertia | LgPhase::Finish => &mut self.other_ms,
            LgPhase::LocalResidual(_) => &mut self.local_ms,
            LgPhase::Cg(_) | LgPhase::Chebyshev => &mut self.global_ms,
            LgPhase::Advance => &mut self.advance_ms,
        }
    }
}
