//! Pipelines of `shaders/explicit.wgsl`: explicit and symplectic Euler, midpoint, RK4.

use super::layout::KERNEL_WGSL;
use super::pipelines::{bind, build, storage, uniform};
use super::state::GpuState;

/// The explicit kernels and their layout.
pub struct ExplicitPipelines {
    /// (P, nbr, csr, src, base, dst, acc, flags).
    pub layout: wgpu::BindGroupLayout,
    /// `euler_step`.
    pub euler: wgpu::ComputePipeline,
    /// `symplectic_step`.
    pub symplectic: wgpu::ComputePipeline,
    /// `midpoint_stage1`, `midpoint_stage2`.
    pub midpoint: [wgpu::ComputePipeline; 2],
    /// `rk4_stage1` … `rk4_stage4`.
    pub rk4: [wgpu::ComputePipeline; 4],
}

impl ExplicitPipelines {
    /// Compiles the kernels.
    pub fn new(device: &wgpu::Device) -> Self {
        let entries = [
            uniform(0),
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, true),
            storage(5, false),
            storage(6, false),
            storage(7, false),
        ];
        let eps =
            ["euler_step", "symplectic_step", "midpoint_stage1", "midpoint_stage2", "rk4_stage1", "rk4_stage2", "rk4_stage3", "rk4_stage4"];
        let (layout, p) = build(device, "springsim.explicit", KERNEL_WGSL[0].1, &entries, &eps);
        let mut it = p.into_iter();
        let mut next = || it.next().expect("one pipeline per entry point");
        ExplicitPipelines { euler: next(), symplectic: next(), midpoint: [next(), next()], rk4: [next(), next(), next(), next()], layout }
    }

    /// A bind group: derivative at `src`, step from `base`, result to `dst`.
    pub fn bind_group(
        &self,
        device: &wgpu::Device,
        st: &GpuState,
        src: &wgpu::Buffer,
        base: &wgpu::Buffer,
        dst: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        bind(device, &self.layout, "springsim.explicit", &[&st.params, &st.nbr, &st.csr, src, base, dst, &st.acc, &st.flags])
    }
}

/// The explicit bind groups of one state, per ping-pong parity p (reading `state[p]`).
pub struct ExplicitGroups {
    /// state[p] → state[1−p] (Euler, symplectic Euler).
    pub direct: [wgpu::BindGroup; 2],
    /// state[p] → tmp0 (midpoint 1, RK4 1).
    pub to_t0: [wgpu::BindGroup; 2],
    /// tmp0 → tmp1, base state[p] (RK4 2).
    pub t0_to_t1: [wgpu::BindGroup; 2],
    /// tmp1 → tmp0, base state[p] (RK4 3).
    pub t1_to_t0: [wgpu::BindGroup; 2],
    /// tmp0 → state[1−p], base state[p] (midpoint 2, RK4 4).
    pub t0_to_out: [wgpu::BindGroup; 2],
}

impl ExplicitGroups {
    /// Builds every group once.
    pub fn new(device: &wgpu::Device, p: &ExplicitPipelines, st: &GpuState) -> Self {
        let s = &st.state;
        let t = &st.tmp;
        let per = |f: &dyn Fn(usize) -> wgpu::BindGroup| [f(0), f(1)];
        ExplicitGroups {
            direct: per(&|q| p.bind_group(device, st, &s[q], &s[q], &s[1 - q])),
            to_t0: per(&|q| p.bind_group(device, st, &s[q], &s[q], &t[0])),
            t0_to_t1: per(&|q| p.bind_group(device, st, &t[0], &s[q], &t[1])),
            t1_to_t0: per(&|q| p.bind_group(device, st, &t[1], &s[q], &t[0])),
            t0_to_out: per(&|q| p.bind_group(device, st, &t[0], &s[q], &s[1 - q])),
        }
    }
}
