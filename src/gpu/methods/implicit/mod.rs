//! Implicit Euler on the GPU (`shaders/implicit.wgsl` composed with `shaders/pcg.wgsl`): the linearized
//! step of Baraff & Witkin solved by the GPU PCG. Kernels in [`ImplicitKernels`], buffers in
//! [`ImplicitBuffers`] (the spring blocks, `ImplicitParams`, the PCG's), bind groups built once in
//! [`ImplicitIntegrator`]. With the multigrid preconditioner the kernels come from `implicit_mg.wgsl`
//! (the same files followed by `shaders/implicit_mg.wgsl`, [`crate::gpu::methods::implicit::multigrid`]) and the PCG is
//! preconditioned by its V-cycle.

pub mod adaptive;
pub mod multigrid;

use crate::error::{Bound, Error, Result};
use crate::gpu::base::alloc::{Allocator, SplitBuffer, STORAGE_RW};
use crate::gpu::base::layout::{groups, ImplicitParams, CG_STATE_WORDS, PCG_PER_LANE};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build_specialized, fits, params, storage, Bindings, GroupLayout, Kernel};
use crate::gpu::base::specialize::{split_constant, ForceFeatures, Splits};
use crate::gpu::base::state::{read_vec4s, read_words, xyz, GpuState};
use crate::gpu::methods::implicit::adaptive::DeviceAdaptive;
use crate::gpu::methods::implicit::multigrid::{ImplicitMg, ImplicitMgKernels};
use crate::gpu::methods::pcg::{GpuCgState, PcgBuffers, PcgKernels, SOLUTION_VECTOR};
use crate::gpu::profiling::cost::{CountedPass, GpuCounters, Phase};
use crate::method::StepSettings;
use crate::reference::model::CpuModel;

/// Bindings of the implicit blocks (`blocks`, `blocks_1` … `blocks_3`): 4 × 128 MiB holds 16.7 M
/// incidence entries.
pub const BLOCK_SLOTS: usize = 4;

/// The implicit kernels, the PCG compiled with them, and their layouts.
pub struct ImplicitKernels {
    /// Group 0: (P, nbr, csr, src, dst, blocks, ImplicitParams, nbr_1, blocks_1, blocks_2, blocks_3).
    pub layout: GroupLayout,
    /// `implicit_prepare`.
    pub prepare: Kernel,
    /// `implicit_integrate`.
    pub integrate: Kernel,
    /// `implicit_strain`: the adaptive step's check.
    pub strain: Kernel,
    /// The PCG with `operator_apply` = the implicit system's A·p.
    pub pcg: PcgKernels,
    /// The multigrid kernels (group 2), when compiled with them.
    pub mg: Option<Box<ImplicitMgKernels>>,
}

impl ImplicitKernels {
    /// Compiles the kernels with the force terms of `features`, and with the multigrid kernels of
    /// `implicit_mg.wgsl` when `multigrid`; for the state's split tables `splits` and blocks held in
    /// `block_parts` bindings (`BLOCKS_SPLIT`).
    pub fn new(
        device: &wgpu::Device,
        options: &GpuOptions,
        features: ForceFeatures,
        multigrid: bool,
        splits: Splits,
        block_parts: usize,
    ) -> Result<Self> {
        let operator = [
            params(0),
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, false),
            storage(5, false),
            params(6),
            storage(7, true),
            storage(8, false),
            storage(9, false),
            storage(10, false),
        ];
        let pcg = PcgKernels::layout_entries();
        let (img, implicit_mg_pass) = (ImplicitMgKernels::layout_entries(), ImplicitMgKernels::pass_layout_entries());
        let mut names = vec!["implicit_prepare", "implicit_integrate", "implicit_strain"];
        names.extend_from_slice(&PcgKernels::ENTRY_POINTS);
        // the PCG may keep Ap between iterations (pcg.wgsl's PCG_AP_RECURRENCE): the implicit V-cycle
        // keeps its level-0 temporary in its own buffer, not in Ap
        let mut constants = [features.constants().as_slice(), splits.constants().as_slice()].concat();
        constants.push(split_constant("BLOCKS_SPLIT", block_parts));
        constants.push(("PCG_AP_RECURRENCE", 1.0));
        let mg_groups: [&[wgpu::BindGroupLayoutEntry]; 4] = [&operator, &pcg, &img, &implicit_mg_pass];
        // implicit_mg_post binds one storage buffer more than WebGPU's default 8: in two dispatches there
        let post_apart = !fits(device, &mg_groups);
        let k = if multigrid {
            names.extend_from_slice(ImplicitMgKernels::entry_points(post_apart));
            build_specialized(device, options, "implicit_mg.wgsl", &mg_groups, &names, &constants)?
        } else {
            build_specialized(device, options, "implicit.wgsl", &[&operator, &pcg], &names, &constants)?
        };
        Ok(ImplicitKernels {
            layout: k.layout(0)?,
            prepare: k.pipeline("implicit_prepare")?,
            integrate: k.pipeline("implicit_integrate")?,
            strain: k.pipeline("implicit_strain")?,
            pcg: PcgKernels::from_kernels(&k, options, if multigrid { 1 } else { PCG_PER_LANE })?,
            mg: if multigrid { Some(Box::new(ImplicitMgKernels::from_kernels(&k, post_apart)?)) } else { None },
        })
    }
}

/// Implicit Euler's own buffers.
pub struct ImplicitBuffers {
    /// Two `vec4` per incidence entry: the six values of the spring's block of −h J_v − h² J_x (each
    /// endpoint its own copy), split over [`BLOCK_SLOTS`] bindings at the state's split size.
    pub blocks: SplitBuffer,
    /// `ImplicitParams` (a parameter block).
    pub params: wgpu::Buffer,
    /// The PCG's vectors, partials, status and parameter blocks.
    pub pcg: PcgBuffers,
    /// Bytes of the buffers above.
    pub bytes: u64,
}

impl ImplicitBuffers {
    /// Allocates them for `entries` incidence entries (checked against the device's limits).
    pub fn new(device: &wgpu::Device, st: &GpuState, entries: usize) -> Result<Self> {
        let mut alloc = Allocator::new(device);
        let block_bytes = (2 * entries * 16) as u64;
        alloc.check_split("springsim.implicit_blocks", block_bytes, st.split, BLOCK_SLOTS)?;
        let pcg = PcgBuffers::new(&mut alloc, st.n)?;
        let blocks = alloc.split_storage("springsim.implicit_blocks", block_bytes, st.split, BLOCK_SLOTS, STORAGE_RW)?;
        let params = alloc.params("springsim.implicit_params", std::mem::size_of::<ImplicitParams>() as u64)?;
        Ok(ImplicitBuffers { blocks, params, pcg, bytes: alloc.bytes() })
    }
}

/// Four counts of a multigrid's dispatches for the cost model (see
/// [`ImplicitIntegrator::multigrid_shape`]).
pub type MgShape = (u64, u64, u64, u64);

/// Implicit Euler on the GPU.
pub struct ImplicitIntegrator {
    kernels: ImplicitKernels,
    buffers: ImplicitBuffers,
    /// The operator's groups per state parity p: state\[p\] → state[1−p].
    operator_groups: [Bindings; 2],
    /// The PCG's groups per iteration parity.
    pcg_groups: [Bindings; 2],
    /// The multigrid preconditioner, when chosen (and the model has a coarse level to solve).
    mg: Option<Box<ImplicitMg>>,
    /// The adaptive step on the device, made with the first pipelined adaptive frame.
    adaptive: Option<Box<DeviceAdaptive>>,
}

impl ImplicitIntegrator {
    /// Compiles the kernels (with the force terms of `features`), allocates the buffers for the
    /// incidence entries of `m`, builds the groups; with `multigrid`, uploads the hierarchy of
    /// [`ImplicitMg::hierarchy`] too (a model without one is preconditioned with Jacobi).
    pub fn new(
        device: &wgpu::Device,
        options: &GpuOptions,
        st: &GpuState,
        m: &CpuModel,
        features: ForceFeatures,
        multigrid: bool,
    ) -> Result<Self> {
        let buffers = ImplicitBuffers::new(device, st, m.incidence.entries.len())?;
        let hierarchy = if multigrid { ImplicitMg::hierarchy(m)? } else { None };
        let kernels = ImplicitKernels::new(device, options, features, hierarchy.is_some(), Splits::of(st), buffers.blocks.parts())?;
        let mg = match (&hierarchy, &kernels.mg) {
            (Some(h), Some(k)) => Some(Box::new(ImplicitMg::new(device, &mut crate::gpu::base::alloc::Allocator::new(device), k, m, h)?)),
            _ => None,
        };
        drop(hierarchy);
        let b = &buffers;
        let blocks = b.blocks.bindings();
        let operator_groups = [0, 1].map(|p| {
            let mut buffers = vec![&st.params, &st.nbr, &st.csr, &st.state[p], &st.state[1 - p], blocks[0], &b.params, &st.nbr_1];
            buffers.extend_from_slice(&blocks[1..]);
            bind(device, &kernels.layout, "springsim.implicit", &buffers)
        });
        let pcg_groups = kernels.pcg.bind_groups(device, &b.pcg);
        Ok(ImplicitIntegrator { kernels, buffers, operator_groups, pcg_groups, mg, adaptive: None })
    }

    /// Bytes of the method's buffers.
    pub fn bytes(&self) -> u64 {
        self.buffers.bytes + self.mg.as_ref().map_or(0, |g| g.bytes) + self.adaptive.as_ref().map_or(0, |a| a.bytes)
    }

    /// The adaptive step on the device, made on first use (its kernels compiled, its state allocated).
    pub fn device_adaptive(&mut self, device: &wgpu::Device, options: &GpuOptions, st: &GpuState) -> Result<&mut DeviceAdaptive> {
        if self.adaptive.is_none() {
            self.adaptive = Some(Box::new(DeviceAdaptive::new(device, options, st, &self.buffers.pcg.status)?));
        }
        self.adaptive.as_deref_mut().ok_or_else(|| Error::internal_gpu("the adaptive step's state".to_string()))
    }

    /// The adaptive step on the device, when made.
    pub fn adaptive(&self) -> Option<&DeviceAdaptive> {
        self.adaptive.as_deref()
    }

    /// Starts the device's adaptive step again from the planned step (a new plan or state).
    pub fn reset_adaptive(&self, queue: &wgpu::Queue, counters: &GpuCounters) {
        if let Some(a) = &self.adaptive {
            a.reset(queue, counters);
        }
    }

    /// The multigrid preconditioner's shape for the cost model, when it runs: one V-cycle's
    /// (dispatches, workgroups, bytes of the lists and blocks, nodes summed over the levels) and a step's
    /// update's (dispatches, workgroups, bytes of the lists, bytes of the blocks).
    pub fn multigrid_shape(&self) -> Option<(MgShape, MgShape)> {
        self.mg.as_ref().map(|g| {
            let ((vd, vw), (ud, uw)) = (g.vcycle_shape(), g.update_shape());
            let (lists, vals) = (g.lists.size(), g.vals.size());
            ((vd, vw, lists + vals, g.sizes.iter().sum::<usize>() as u64), (ud, uw, lists, vals))
        })
    }

    /// Writes `ImplicitParams` and the PCG's parameter blocks from the settings (before a frame, never within).
    pub fn write_params(&self, queue: &wgpu::Queue, counters: &GpuCounters, n: usize, settings: &StepSettings) {
        let ip = ImplicitParams {
            exact: settings.exact_jacobian as u32,
            strain_limit: settings.strain_limit as f32,
            step_limit: settings.step_strain_limit as f32,
            _pad: 0,
        };
        counters.write_buffer(queue, &self.buffers.params, 0, bytemuck::bytes_of(&ip));
        self.buffers.pcg.write_pass(queue, counters, n, settings.cg_tolerance, settings.cg_warm_start, &self.kernels.pcg);
    }

    /// Records the start of a frame: clears the PCG's status words.
    pub fn begin_frame(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.buffers.pcg.status, 0, None);
    }

    /// Whether its PCG sums its dot products in `pcg_reduce` dispatches at n particles
    /// ([`crate::gpu::methods::pcg::PcgKernels::reduces`]).
    pub fn pcg_reduces(&self, n: usize) -> bool {
        self.kernels.pcg.reduces(n)
    }

    /// The workgroups of its PCG's per-particle kernels at n particles ([`crate::gpu::methods::pcg::PcgKernels::groups`]).
    pub fn pcg_groups(&self, n: usize) -> u32 {
        self.kernels.pcg.groups(n)
    }

    /// Records one implicit step from state\[p\] into state[1−p]: the system (blocks, right-hand side,
    /// preconditioner), the PCG with a budget of `iterations`, and the integration.
    pub fn encode_step(&self, pass: &mut CountedPass, p: usize, n: usize, iterations: usize) {
        let k = &self.kernels;
        pass.phase(Phase::Forces);
        let operator = &self.operator_groups[p];
        pass.set_bind_group(0, operator, &[]);
        pass.set_bind_group(1, &self.pcg_groups[0], &[]);
        let mg = self.mg.as_ref().zip(k.mg.as_ref());
        if let Some((g, _)) = mg {
            g.bind(pass);
        }
        pass.set_pipeline(&k.prepare);
        pass.dispatch_workgroups(groups(n), 1, 1);
        pass.phase(Phase::Global);
        match mg {
            Some((g, gk)) => {
                g.encode_update(pass, gk);
                let vcycle = |pass: &mut CountedPass, slot: usize| g.encode_vcycle(pass, gk, slot);
                k.pcg.encode_solve(pass, operator, &self.pcg_groups, n, iterations, Some(&vcycle));
            }
            None => k.pcg.encode_solve(pass, operator, &self.pcg_groups, n, iterations, None),
        }
        pass.phase(Phase::Integrate);
        pass.set_bind_group(0, operator, &[]);
        pass.set_pipeline(&k.integrate);
        pass.dispatch_workgroups(groups(n), 1, 1);
    }

    /// Records the adaptive step's strain check of state[1−p] (after [`ImplicitIntegrator::encode_step`]).
    pub fn encode_strain(&self, pass: &mut CountedPass, p: usize, n: usize) {
        pass.phase(Phase::Integrate);
        pass.set_bind_group(0, &self.operator_groups[p], &[]);
        pass.set_bind_group(1, &self.pcg_groups[0], &[]);
        if let Some(g) = &self.mg {
            g.bind(pass);
        }
        pass.set_pipeline(&self.kernels.strain);
        pass.dispatch_workgroups(groups(n), 1, 1);
    }

    /// The PCG's status words (one read-back).
    pub fn cg_state(&self, device: &wgpu::Device, queue: &wgpu::Queue, st: &GpuState) -> Result<GpuCgState> {
        Ok(GpuCgState::from_words(&read_words(device, queue, st, &self.buffers.pcg.status, 0, CG_STATE_WORDS)?))
    }

    /// Records the copy of the PCG's status words into `dst` from byte `at` (read as
    /// [`GpuCgState::from_words`]); returns their bytes.
    pub fn encode_report(&self, encoder: &mut wgpu::CommandEncoder, dst: &wgpu::Buffer, at: u64) -> u64 {
        let bytes = (CG_STATE_WORDS * 4) as u64;
        encoder.copy_buffer_to_buffer(&self.buffers.pcg.status, 0, dst, at, bytes);
        bytes
    }

    /// Clears the PCG's vectors (no warm start from a failed solve); submits the clear.
    pub fn clear_solution(&self, device: &wgpu::Device, queue: &wgpu::Queue, counters: &GpuCounters) {
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.cg_clear") });
        enc.clear_buffer(&self.buffers.pcg.vectors, 0, None);
        counters.submit(queue, enc.finish());
    }

    /// Records the clear of the PCG's vectors (no warm start from a state rolled back to).
    pub fn encode_clear_solution(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.buffers.pcg.vectors, 0, None);
    }

    /// Δv of the last solve (the PCG's solution), read back.
    pub fn read_dv(&self, device: &wgpu::Device, queue: &wgpu::Queue, st: &GpuState) -> Result<Vec<[f64; 3]>> {
        let n = st.n;
        Ok(xyz(&read_vec4s(device, queue, &st.counters, &self.buffers.pcg.vectors, SOLUTION_VECTOR * n, n)?))
    }
}

impl ImplicitIntegrator {
    /// z = B r: one V-cycle of the multigrid preconditioner on the system of state\[p\] (its blocks built
    /// by `implicit_prepare` and summed up the levels as a step does), for checks against the f64 twin.
    /// Submits and reads back; leaves the PCG's vectors and status changed. An error without multigrid.
    pub fn apply_multigrid(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        st: &GpuState,
        p: usize,
        r: &[[f64; 3]],
    ) -> Result<Vec<[f64; 3]>> {
        let (n, k) = (st.n, &self.kernels);
        let (Some(g), Some(gk)) = (&self.mg, &k.mg) else {
            return Err(Error::invalid(
                "preconditioner",
                "jacobi",
                Bound::Unsupported("apply_multigrid needs the implicit multigrid".into()),
            ));
        };
        if r.len() != n {
            return Err(Error::invalid("r", r.len(), Bound::length(n, "must have {} entries")));
        }
        let record = |label: &str, f: &dyn Fn(&mut CountedPass)| {
            let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
            enc.clear_buffer(&self.buffers.pcg.status, 0, None);
            {
                let mut raw = st.counters.begin_pass(&mut enc, label, None);
                let mut pass = CountedPass::new(&mut raw, &st.counters);
                pass.set_bind_group(0, &self.operator_groups[p], &[]);
                pass.set_bind_group(1, &self.pcg_groups[0], &[]);
                g.bind(&mut pass);
                f(&mut pass);
                pass.finish();
            }
            st.counters.submit(queue, enc.finish());
        };
        record("springsim.implicit_mg_update", &|pass| {
            pass.set_pipeline(&k.prepare);
            pass.dispatch_workgroups(groups(n), 1, 1);
            g.encode_update(pass, gk);
        });
        let words: Vec<[f32; 4]> = r.iter().map(|v| [v[0] as f32, v[1] as f32, v[2] as f32, 0.0]).collect();
        st.counters.write_buffer(queue, &self.buffers.pcg.vectors, 0, bytemuck::cast_slice(&words));
        record("springsim.implicit_mg_vcycle", &|pass| g.encode_vcycle(pass, gk, 0));
        Ok(xyz(&read_vec4s(device, queue, &st.counters, &self.buffers.pcg.vectors, n, n)?))
    }
}
