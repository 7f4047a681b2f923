//! Pipelines of `shaders/power.wgsl`: k₀ by power iteration on the GPU.

use super::layout::{groups, KERNEL_WGSL};
use super::pipelines::{bind, build, storage, uniform};
use super::state::GpuState;
use crate::cpu::power::power_start;
use crate::cpu::CpuModel;

/// The power-iteration kernels and their layout.
pub struct PowerPipelines {
    /// (P, nbr, csr, src, y_in, y_out, partials, scalars).
    pub layout: wgpu::BindGroupLayout,
    /// `power_matvec`.
    pub matvec: wgpu::ComputePipeline,
    /// `power_reduce`.
    pub reduce: wgpu::ComputePipeline,
}

impl PowerPipelines {
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
        let (layout, p) = build(device, "springsim.power", KERNEL_WGSL[2].1, &entries, &["power_matvec", "power_reduce"]);
        let [matvec, reduce]: [wgpu::ComputePipeline; 2] = p.try_into().expect("two entry points");
        PowerPipelines { layout, matvec, reduce }
    }

    /// The groups per parity q: y[q] → y[1−q], at the positions of state[0].
    pub fn groups(&self, device: &wgpu::Device, st: &GpuState) -> [wgpu::BindGroup; 2] {
        [0, 1].map(|q| {
            bind(
                device,
                &self.layout,
                "springsim.power",
                &[&st.params, &st.nbr, &st.csr, &st.state[0], &st.y[q], &st.y[1 - q], &st.partials, &st.scalars],
            )
        })
    }

    /// Uploads the start vector (the CPU twin's) and records `iters` iterations; the Rayleigh quotient
    /// ends in `scalars[0].y`.
    pub fn encode(
        &self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        st: &GpuState,
        groups_: &[wgpu::BindGroup; 2],
        m: &CpuModel,
        iters: usize,
    ) {
        let mut y0 = Vec::with_capacity(m.n);
        let mut norm2 = 0.0f64;
        for i in 0..m.n {
            let v = if m.inv_mass[i] == 0.0 {
                [0.0f32; 4]
            } else {
                [power_start(i, 0) as f32, power_start(i, 1) as f32, power_start(i, 2) as f32, 0.0]
            };
            norm2 += v.iter().map(|c| (*c as f64).powi(2)).sum::<f64>();
            y0.push(v);
        }
        if m.n > 0 {
            queue.write_buffer(&st.y[0], 0, bytemuck::cast_slice(&y0));
        }
        queue.write_buffer(&st.scalars, 0, bytemuck::cast_slice(&[norm2 as f32, 0.0, 0.0, 0.0]));
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("springsim.power"), timestamp_writes: None });
        for it in 0..iters {
            pass.set_pipeline(&self.matvec);
            pass.set_bind_group(0, &groups_[it % 2], &[]);
            pass.dispatch_workgroups(groups(m.n), 1, 1);
            pass.set_pipeline(&self.reduce);
            pass.dispatch_workgroups(1, 1, 1);
        }
    }
}
