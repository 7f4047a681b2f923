//! Shinya's linearized explicit Euler on the GPU (`shaders/leu.wgsl`): kernels in [`LeuKernels`],
//! buffers in [`LeuBuffers`] (x₀ v₀ a₀, the K and D blocks, the divergence flags, the parity
//! parameter blocks), bind groups built once in [`LeuIntegrator`], which also counts the steps since the last
//! linearisation.

use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::{groups, LeuPass};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build_specialized, params, storage, Bindings, GroupLayout, Kernel};
use crate::gpu::base::specialize::Splits;
use crate::gpu::base::state::GpuState;
use crate::gpu::profiling::cost::{CountedPass, Phase};

/// The LEU kernels and their layout.
pub struct LeuKernels {
    /// (P, nbr, csr, src, dst, lin, blocks, flags, pass, nbr_1).
    pub layout: GroupLayout,
    /// `leu_linearize`.
    pub linearize: Kernel,
    /// `leu_step`.
    pub step: Kernel,
    /// `leu_fixup`.
    pub fixup: Kernel,
}

impl LeuKernels {
    /// Compiles the kernels.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, splits: Splits) -> Result<Self> {
        let entries = [
            params(0),
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, false),
            storage(5, false),
            storage(6, false),
            storage(7, false),
            params(8),
            storage(9, true),
        ];
        let names = ["leu_linearize", "leu_step", "leu_fixup"];
        let k = build_specialized(device, options, "leu.wgsl", &[&entries], &names, &splits.constants())?;
        Ok(LeuKernels {
            layout: k.layout(0)?,
            linearize: k.pipeline("leu_linearize")?,
            step: k.pipeline("leu_step")?,
            fixup: k.pipeline("leu_fixup")?,
        })
    }
}

/// LEU's own buffers.
pub struct LeuBuffers {
    /// x₀, v₀, a₀ (n `vec4` each).
    pub lin: wgpu::Buffer,
    /// Three `vec4` per incidence entry (the K and D blocks).
    pub blocks: wgpu::Buffer,
    /// Divergence flags of the two parities (\[0\], \[1\]) and the retry count (\[2\]); \[3\]: an explicit step
    /// exceeded the speed limit.
    pub flags: wgpu::Buffer,
    /// The parity parameter blocks.
    pub parity: [wgpu::Buffer; 2],
    /// Bytes of the buffers above.
    pub bytes: u64,
}

impl LeuBuffers {
    /// Allocates them for `entries` incidence entries (checked against the device's limits).
    pub fn new(device: &wgpu::Device, st: &GpuState, entries: usize) -> Result<Self> {
        let mut alloc = Allocator::new(device);
        let none = wgpu::BufferUsages::empty();
        alloc.check("springsim.leu_blocks", (3 * entries * 16) as u64, crate::gpu::base::alloc::STORAGE_RW)?;
        let lin = alloc.storage("springsim.leu_lin", (3 * st.n * 16) as u64, none)?;
        let blocks = alloc.storage("springsim.leu_blocks", (3 * entries * 16) as u64, none)?;
        let flags = alloc.storage("springsim.leu_flags", 16, none)?;
        let parity = [
            alloc.params_init("springsim.leu_pass0", bytemuck::bytes_of(&LeuPass { parity: 0, _pad: [0; 3] }))?,
            alloc.params_init("springsim.leu_pass1", bytemuck::bytes_of(&LeuPass { parity: 1, _pad: [0; 3] }))?,
        ];
        Ok(LeuBuffers { lin, blocks, flags, parity, bytes: alloc.bytes() })
    }
}

/// LEU on the GPU.
pub struct LeuIntegrator {
    kernels: LeuKernels,
    buffers: LeuBuffers,
    /// Per parity p: state\[p\] → state[1−p].
    bind_groups: [Bindings; 2],
    /// Steps since the last `leu_linearize` (`usize::MAX`: linearise at the next step).
    steps_since_linearize: usize,
}

impl LeuIntegrator {
    /// Compiles the kernels, allocates the buffers for `entries` incidence entries, builds the groups.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState, entries: usize) -> Result<Self> {
        let buffers = LeuBuffers::new(device, st, entries)?;
        let kernels = LeuKernels::new(device, options, Splits::of(st))?;
        let b = &buffers;
        let bind_groups = [0, 1].map(|p| {
            bind(
                device,
                &kernels.layout,
                "springsim.leu",
                &[&st.params, &st.nbr, &st.csr, &st.state[p], &st.state[1 - p], &b.lin, &b.blocks, &b.flags, &b.parity[p], &st.nbr_1],
            )
        });
        Ok(LeuIntegrator { kernels, buffers, bind_groups, steps_since_linearize: usize::MAX })
    }

    /// Bytes of LEU's buffers.
    pub fn bytes(&self) -> u64 {
        self.buffers.bytes
    }

    /// The divergence flags and retry count.
    pub fn flags(&self) -> &wgpu::Buffer {
        &self.buffers.flags
    }

    /// Linearise again at the next step (the state, the step or the forces changed).
    pub fn relinearize(&mut self) {
        self.steps_since_linearize = usize::MAX;
    }

    /// Records the start of a frame: clears the parities' divergence flags.
    pub fn begin_frame(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.buffers.flags, 0, Some(8));
    }

    /// Records one step from state\[p\] into state[1−p], linearising first every `relinearize_every` steps.
    pub fn encode_step(&mut self, pass: &mut CountedPass, p: usize, n: usize, relinearize_every: usize) {
        let mut run = |pipeline: &Kernel, phase: Phase| {
            pass.phase(phase);
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &self.bind_groups[p], &[]);
            pass.dispatch_workgroups(groups(n), 1, 1);
        };
        if self.steps_since_linearize >= relinearize_every {
            run(&self.kernels.linearize, Phase::Forces);
            self.steps_since_linearize = 0;
        }
        run(&self.kernels.step, Phase::Integrate);
        run(&self.kernels.fixup, Phase::Integrate);
        self.steps_since_linearize += 1;
    }
}
