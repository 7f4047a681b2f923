//! Pipelines of `shaders/leu.wgsl`: Shinya's linearized explicit Euler.

use super::layout::KERNEL_WGSL;
use super::pipelines::{bind, build, storage, uniform};
use super::state::GpuState;

/// The LEU kernels and their layout.
pub struct LeuPipelines {
    /// (P, nbr, csr, src, dst, lin, blocks, flags, pass).
    pub layout: wgpu::BindGroupLayout,
    /// `leu_linearize`.
    pub linearize: wgpu::ComputePipeline,
    /// `leu_step`.
    pub step: wgpu::ComputePipeline,
    /// `leu_fixup`.
    pub fixup: wgpu::ComputePipeline,
}

impl LeuPipelines {
    /// Compiles the kernels.
    pub fn new(device: &wgpu::Device) -> Self {
        let entries = [
            uniform(0),
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, false),
            storage(5, false),
            storage(6, false),
            storage(7, false),
            uniform(8),
        ];
        let (layout, p) = build(device, "springsim.leu", KERNEL_WGSL[1].1, &entries, &["leu_linearize", "leu_step", "leu_fixup"]);
        let [linearize, step, fixup]: [wgpu::ComputePipeline; 3] = p.try_into().expect("three entry points");
        LeuPipelines { layout, linearize, step, fixup }
    }

    /// The groups per parity p: state[p] → state[1−p].
    pub fn groups(&self, device: &wgpu::Device, st: &GpuState) -> [wgpu::BindGroup; 2] {
        [0, 1].map(|q| {
            bind(
                device,
                &self.layout,
                "springsim.leu",
                &[&st.params, &st.nbr, &st.csr, &st.state[q], &st.state[1 - q], &st.lin, &st.blocks, &st.flags, &st.leu_pass[q]],
            )
        })
    }
}
