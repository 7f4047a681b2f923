//! k₀ by power iteration on the GPU (`shaders/power.wgsl`). The kernels are compiled on first use and
//! kept by the simulator; the iteration vectors, partials and scalars exist only while
//! [`PowerKernels::k0`] runs.

use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::groups;
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build_specialized, params, storage, GroupLayout, Kernel};
use crate::gpu::base::specialize::Splits;
use crate::gpu::base::state::{read_buffer, GpuState};
use crate::gpu::profiling::cost::{CountedPass, Phase};
use crate::reference::model::CpuModel;
use crate::reference::power::power_start;

/// The power-iteration kernels and their layout.
pub struct PowerKernels {
    /// (P, nbr, csr, src, y_in, y_out, partials, scalars, nbr_1).
    pub layout: GroupLayout,
    /// `power_matvec`.
    pub matvec: Kernel,
    /// `power_reduce`.
    pub reduce: Kernel,
}

impl PowerKernels {
    /// Compiles the kernels.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, splits: Splits) -> Result<Self> {
        let entries = [
            params(0),
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, true),
            storage(5, false),
            storage(6, false),
            storage(7, false),
            storage(8, true),
        ];
        let k = build_specialized(device, options, "power.wgsl", &[&entries], &["power_matvec", "power_reduce"], &splits.constants())?;
        Ok(PowerKernels { layout: k.layout(0)?, matvec: k.pipeline("power_matvec")?, reduce: k.pipeline("power_reduce")? })
    }

    /// k₀ by `iters` iterations at the positions of `state[0]`, from the CPU twin's start vector:
    /// [`PowerKernels::record`], submitted, and the Rayleigh quotient read back (a wait).
    pub fn k0(&self, device: &wgpu::Device, queue: &wgpu::Queue, st: &GpuState, m: &CpuModel, iters: usize) -> Result<f64> {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.power") });
        let scalars = self.record(device, queue, &mut encoder, st, m, iters)?;
        encoder.copy_buffer_to_buffer(&scalars, 0, &st.readback, 0, 16);
        st.counters.submit(queue, encoder.finish());
        let bytes = read_buffer(device, &st.counters, &st.readback, 16)?;
        let s: &[f32] = bytemuck::cast_slice(&bytes);
        Ok(s[1] as f64)
    }

    /// Records `iters` iterations at the positions of `state[0]` into `encoder` (the start vector is
    /// written through the queue, before the host's next submit) and returns the buffer of the scalars
    /// (|y|², x·y, 0, 0): x·y is k₀ once the work has run. The iteration's buffers are allocated here
    /// and released once the recorded work no longer needs them.
    pub fn record(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        st: &GpuState,
        m: &CpuModel,
        iters: usize,
    ) -> Result<wgpu::Buffer> {
        let mut alloc = Allocator::new(device);
        let none = wgpu::BufferUsages::empty();
        let vector_bytes = (m.n * 16).max(16) as u64;
        let y = [alloc.storage("springsim.power_y0", vector_bytes, none)?, alloc.storage("springsim.power_y1", vector_bytes, none)?];
        let partials = alloc.storage("springsim.power_partials", groups(m.n).max(1) as u64 * 16, none)?;
        let scalars = alloc.storage("springsim.power_scalars", 16, wgpu::BufferUsages::COPY_SRC)?;
        let bind_groups = [0, 1].map(|q| {
            bind(
                device,
                &self.layout,
                "springsim.power",
                &[&st.params, &st.nbr, &st.csr, &st.state[0], &y[q], &y[1 - q], &partials, &scalars, &st.nbr_1],
            )
        });
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
            st.counters.write_buffer(queue, &y[0], 0, bytemuck::cast_slice(&y0));
        }
        st.counters.write_buffer(queue, &scalars, 0, bytemuck::cast_slice(&[norm2 as f32, 0.0, 0.0, 0.0]));
        {
            let mut raw = st.counters.begin_pass(encoder, "springsim.power", None);
            let mut pass = CountedPass::new(&mut raw, &st.counters);
            pass.phase(Phase::Forces);
            for it in 0..iters {
                pass.set_pipeline(&self.matvec);
                pass.set_bind_group(0, &bind_groups[it % 2], &[]);
                pass.dispatch_workgroups(groups(m.n), 1, 1);
                pass.set_pipeline(&self.reduce);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        Ok(scalars)
    }
}
