//! Pipelines of `shaders/implicit.wgsl` (composed with `shaders/pcg.wgsl`): the linearized implicit
//! Euler step of Baraff & Witkin, solved by the GPU PCG.

use super::layout::{groups, IMPLICIT_WGSL, KERNEL_WGSL};
use super::pcg::PcgPipelines;
use super::pipelines::{bind, build_groups, storage, uniform};
use super::state::GpuState;

/// The implicit kernels, the PCG compiled with them, and their layouts.
pub struct ImplicitPipelines {
    /// Group 0: (P, nbr, csr, src, dst, blocks, ImplicitParams).
    pub layout: wgpu::BindGroupLayout,
    /// `implicit_prepare`.
    pub prepare: wgpu::ComputePipeline,
    /// `implicit_integrate`.
    pub integrate: wgpu::ComputePipeline,
    /// `implicit_strain`: the adaptive step's check.
    pub strain: wgpu::ComputePipeline,
    /// The PCG with `operator_apply` = the implicit system's A·p.
    pub pcg: PcgPipelines,
}

impl ImplicitPipelines {
    /// Compiles the kernels.
    pub fn new(device: &wgpu::Device) -> Self {
        let op = [uniform(0), storage(1, true), storage(2, true), storage(3, true), storage(4, false), storage(5, false), uniform(6)];
        let pcg = PcgPipelines::layout_entries();
        let mut eps = vec!["implicit_prepare", "implicit_integrate", "implicit_strain"];
        eps.extend_from_slice(&PcgPipelines::ENTRY_POINTS);
        let (mut layouts, p) = build_groups(device, "springsim.implicit", KERNEL_WGSL[IMPLICIT_WGSL].1, &[&op, &pcg], &eps);
        let pcg_layout = layouts.pop().expect("two groups");
        let layout = layouts.pop().expect("two groups");
        let mut it = p.into_iter();
        let prepare = it.next().expect("prepare");
        let integrate = it.next().expect("integrate");
        let strain = it.next().expect("strain");
        ImplicitPipelines { layout, prepare, integrate, strain, pcg: PcgPipelines::from_built(pcg_layout, it.collect()) }
    }

    /// The operator groups per state parity p: state[p] → state[1−p].
    pub fn groups(&self, device: &wgpu::Device, st: &GpuState) -> [wgpu::BindGroup; 2] {
        [0, 1].map(|q| {
            bind(
                device,
                &self.layout,
                "springsim.implicit",
                &[&st.params, &st.nbr, &st.csr, &st.state[q], &st.state[1 - q], &st.imp_blocks, &st.imp_params],
            )
        })
    }

    /// Records one implicit step from state[p] into state[1−p]: the system (blocks, right-hand side,
    /// preconditioner), the PCG with a budget of `iterations`, and the integration.
    pub fn encode_step(
        &self,
        pass: &mut wgpu::ComputePass,
        op: &wgpu::BindGroup,
        pcg_groups: &[wgpu::BindGroup; 2],
        n: usize,
        iterations: usize,
    ) {
        let g = groups(n);
        pass.set_bind_group(0, op, &[]);
        pass.set_bind_group(1, &pcg_groups[0], &[]);
        pass.set_pipeline(&self.prepare);
        pass.dispatch_workgroups(g, 1, 1);
        self.pcg.encode_solve(pass, op, pcg_groups, n, iterations, None);
        pass.set_bind_group(0, op, &[]);
        pass.set_pipeline(&self.integrate);
        pass.dispatch_workgroups(g, 1, 1);
    }

    /// Records the adaptive step's strain check of state[1−p] (after [`ImplicitPipelines::encode_step`]).
    pub fn encode_strain(&self, pass: &mut wgpu::ComputePass, op: &wgpu::BindGroup, pcg_groups: &[wgpu::BindGroup; 2], n: usize) {
        pass.set_bind_group(0, op, &[]);
        pass.set_bind_group(1, &pcg_groups[0], &[]);
        pass.set_pipeline(&self.strain);
        pass.dispatch_workgroups(groups(n), 1, 1);
    }
}
