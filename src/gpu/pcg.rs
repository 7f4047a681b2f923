//! Pipelines of `shaders/pcg.wgsl`: the reusable matrix-free Jacobi-PCG (Kauppila §3.2.2, §4.2).
//!
//! The solver has no matrix of its own: a linear system composes its operator file in front of
//! `pcg.wgsl` (see `KERNEL_WGSL`), binds its buffers in group 0 and defines `operator_apply`; the PCG's
//! vectors, partial sums and status live in group 1 (`GpuState::cgv`, `cg_partials`, `cg_state`,
//! `cg_pass`). Liu's global step will plug in the same way: its own operator file with
//! `operator_apply` = (M + h²L)p and a right-hand-side kernel calling `pcg_set_rhs`, compiled with
//! [`PcgPipelines::ENTRY_POINTS`] appended, and [`PcgPipelines::encode_solve`] to record the solve.

use super::layout::groups;
use super::pipelines::{bind, storage, uniform};
use super::state::GpuState;

/// An external preconditioner's recorder: `(pass, slot)` records z = B r and the r·z partials of `slot`.
pub type Precondition<'a> = &'a dyn Fn(&mut wgpu::ComputePass, usize);

/// The PCG kernels of one composed module (an operator followed by `pcg.wgsl`).
pub struct PcgPipelines {
    /// Group 1: (CgPass, cgv, partials, cg_state).
    pub layout: wgpu::BindGroupLayout,
    /// `pcg_begin`.
    pub begin: wgpu::ComputePipeline,
    /// `pcg_matvec`.
    pub matvec: wgpu::ComputePipeline,
    /// `pcg_update`.
    pub update: wgpu::ComputePipeline,
    /// `pcg_finish`.
    pub finish: wgpu::ComputePipeline,
}

impl PcgPipelines {
    /// The entry points, in the order [`PcgPipelines::from_built`] takes them.
    pub const ENTRY_POINTS: [&'static str; 4] = ["pcg_begin", "pcg_matvec", "pcg_update", "pcg_finish"];

    /// The layout of group 1.
    pub fn layout_entries() -> [wgpu::BindGroupLayoutEntry; 4] {
        [uniform(0), storage(1, false), storage(2, false), storage(3, false)]
    }

    /// Takes the group-1 layout and the four pipelines of [`PcgPipelines::ENTRY_POINTS`].
    pub fn from_built(layout: wgpu::BindGroupLayout, pipelines: Vec<wgpu::ComputePipeline>) -> Self {
        let [begin, matvec, update, finish]: [wgpu::ComputePipeline; 4] = pipelines.try_into().expect("four PCG entry points");
        PcgPipelines { layout, begin, matvec, update, finish }
    }

    /// The group-1 bind groups per iteration parity, built once.
    pub fn groups(&self, device: &wgpu::Device, st: &GpuState) -> [wgpu::BindGroup; 2] {
        [0, 1].map(|q| bind(device, &self.layout, "springsim.pcg", &[&st.cg_pass[q], &st.cgv, &st.cg_partials, &st.cg_state]))
    }

    /// Records one solve into `pass`: `pcg_begin`, `iterations` × (`pcg_matvec`, `pcg_update`), and
    /// `pcg_finish`, with the operator's group 0 bound. The right-hand side and the inverse diagonal must
    /// already be in `cgv` (the operator's prepare kernel, recorded before). A fixed budget: iterations
    /// after convergence are no-ops on the GPU; nothing is read back.
    ///
    /// `precondition(pass, slot)`, when given, records an external preconditioner after `pcg_begin`
    /// (slot 0) and after each `pcg_update` (slot 1 − q): it overwrites z with B r and the r·z partials
    /// of that slot (the multigrid V-cycle, [`super::multigrid::MultigridData::encode`]); the Jacobi z
    /// the PCG kernels formed is then unused.
    pub fn encode_solve(
        &self,
        pass: &mut wgpu::ComputePass,
        operator_group: &wgpu::BindGroup,
        pcg_groups: &[wgpu::BindGroup; 2],
        n: usize,
        iterations: usize,
        precondition: Option<Precondition>,
    ) {
        let g = groups(n);
        pass.set_bind_group(0, operator_group, &[]);
        pass.set_bind_group(1, &pcg_groups[0], &[]);
        pass.set_pipeline(&self.begin);
        pass.dispatch_workgroups(g, 1, 1);
        let external = |pass: &mut wgpu::ComputePass, slot: usize| {
            if let Some(f) = precondition {
                f(pass, slot);
                pass.set_bind_group(0, operator_group, &[]);
            }
        };
        external(pass, 0);
        for k in 0..iterations {
            pass.set_bind_group(1, &pcg_groups[k % 2], &[]);
            pass.set_pipeline(&self.matvec);
            pass.dispatch_workgroups(g, 1, 1);
            pass.set_pipeline(&self.update);
            pass.dispatch_workgroups(g, 1, 1);
            external(pass, 1 - k % 2);
        }
        pass.set_bind_group(1, &pcg_groups[iterations % 2], &[]);
        pass.set_pipeline(&self.finish);
        pass.dispatch_workgroups(1, 1, 1);
    }
}
