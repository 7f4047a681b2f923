//! The explicit family on the GPU (`shaders/explicit.wgsl`): explicit and symplectic Euler, midpoint,
//! RK4. Kernels and layout in [`ExplicitKernels`], buffers in [`ExplicitBuffers`] (the intermediate
//! states and RK4's accumulator for the multi-stage methods only, and the speed-limit flags), bind
//! groups built once in [`ExplicitIntegrator`].

use crate::error::{Bound, Error, Result};
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::groups;
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build_specialized, params, storage, Bindings, GroupLayout, Kernel};
use crate::gpu::base::specialize::{ForceFeatures, Splits};
use crate::gpu::base::state::GpuState;
use crate::gpu::profiling::cost::{CountedPass, Phase};
use crate::method::Method;

/// Where a stage reads its derivative and writes its result (the step's base is always `state[p]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// state\[p\] → state[1−p].
    Direct,
    /// state\[p\] → tmp0.
    ToTmp0,
    /// tmp0 → tmp1.
    Tmp0ToTmp1,
    /// tmp1 → tmp0.
    Tmp1ToTmp0,
    /// tmp0 → state[1−p].
    Tmp0ToOut,
}

/// The stages of one explicit method: (entry point, route).
fn stages(method: Method) -> Result<&'static [(&'static str, Route)]> {
    Ok(match method {
        Method::ExplicitEuler => &[("euler_step", Route::Direct)],
        Method::SymplecticEuler => &[("symplectic_step", Route::Direct)],
        Method::Midpoint => &[("midpoint_stage1", Route::ToTmp0), ("midpoint_stage2", Route::Tmp0ToOut)],
        Method::Rk4 => &[
            ("rk4_stage1", Route::ToTmp0),
            ("rk4_stage2", Route::Tmp0ToTmp1),
            ("rk4_stage3", Route::Tmp1ToTmp0),
            ("rk4_stage4", Route::Tmp0ToOut),
        ],
        other => return Err(Error::invalid("method", other.name(), Bound::Unsupported("is not an explicit method".into()))),
    })
}

/// The kernels of one explicit method and their layout.
pub struct ExplicitKernels {
    /// (P, nbr, csr, src, base, dst, acc, flags, nbr_1).
    pub layout: GroupLayout,
    /// The method's stages, in order.
    pub stages: Vec<Kernel>,
}

impl ExplicitKernels {
    /// Compiles the entry points of `method`'s stages with the force terms of `features`.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, method: Method, features: ForceFeatures, splits: Splits) -> Result<Self> {
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
        let names: Vec<&'static str> = stages(method)?.iter().map(|(name, _)| *name).collect();
        let constants = [features.constants().as_slice(), splits.constants().as_slice()].concat();
        let kernels = build_specialized(device, options, "explicit.wgsl", &[&entries], &names, &constants)?;
        let stages = names.iter().map(|name| kernels.pipeline(name)).collect::<Result<_>>()?;
        Ok(ExplicitKernels { layout: kernels.layout(0)?, stages })
    }
}

/// The explicit methods' own buffers.
pub struct ExplicitBuffers {
    /// The intermediate states (midpoint: tmp0; RK4: tmp0 and tmp1); empty for the one-stage methods.
    pub tmp: Vec<wgpu::Buffer>,
    /// RK4's accumulator; a 64-byte placeholder for the others (bound, never read).
    pub acc: wgpu::Buffer,
    /// \[3\]: a step exceeded the speed limit (`flags` in `shaders/explicit.wgsl`).
    pub flags: wgpu::Buffer,
    /// Bytes of the buffers above.
    pub bytes: u64,
}

impl ExplicitBuffers {
    /// Allocates what `method` needs (checked against the device's limits).
    pub fn new(device: &wgpu::Device, st: &GpuState, method: Method) -> Result<Self> {
        let mut alloc = Allocator::new(device);
        let none = wgpu::BufferUsages::empty();
        let tmp_count = match method {
            Method::Midpoint => 1,
            Method::Rk4 => 2,
            _ => 0,
        };
        let tmp = (0..tmp_count).map(|q| alloc.storage(&format!("springsim.tmp{q}"), st.state_bytes(), none)).collect::<Result<_>>()?;
        let acc_bytes = if method == Method::Rk4 { st.state_bytes() } else { 0 };
        let acc = alloc.storage("springsim.acc", acc_bytes, none)?;
        let flags = alloc.storage("springsim.flags", 16, none)?;
        Ok(ExplicitBuffers { tmp, acc, flags, bytes: alloc.bytes() })
    }
}

/// One explicit method on the GPU: its kernels, buffers and bind groups.
pub struct ExplicitIntegrator {
    kernels: ExplicitKernels,
    buffers: ExplicitBuffers,
    /// Per stage, the bind group per ping-pong parity p (reading `state[p]`).
    stage_groups: Vec<[Bindings; 2]>,
}

impl ExplicitIntegrator {
    /// Compiles `method`'s kernels (with the force terms of `features`), allocates its buffers and builds
    /// its bind groups.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState, method: Method, features: ForceFeatures) -> Result<Self> {
        let kernels = ExplicitKernels::new(device, options, method, features, Splits::of(st))?;
        let buffers = ExplicitBuffers::new(device, st, method)?;
        let b = &buffers;
        let stage_groups = stages(method)?
            .iter()
            .map(|&(_, route)| {
                [0, 1].map(|p| {
                    let (state, out) = (&st.state[p], &st.state[1 - p]);
                    let (src, dst) = match route {
                        Route::Direct => (state, out),
                        Route::ToTmp0 => (state, &b.tmp[0]),
                        Route::Tmp0ToTmp1 => (&b.tmp[0], &b.tmp[1]),
                        Route::Tmp1ToTmp0 => (&b.tmp[1], &b.tmp[0]),
                        Route::Tmp0ToOut => (&b.tmp[0], out),
                    };
                    bind(
                        device,
                        &kernels.layout,
                        "springsim.explicit",
                        &[&st.params, &st.nbr, &st.csr, src, state, dst, &b.acc, &b.flags, &st.nbr_1],
                    )
                })
            })
            .collect();
        Ok(ExplicitIntegrator { kernels, buffers, stage_groups })
    }

    /// Bytes of the method's buffers.
    pub fn bytes(&self) -> u64 {
        self.buffers.bytes
    }

    /// The speed-limit flags.
    pub fn flags(&self) -> &wgpu::Buffer {
        &self.buffers.flags
    }

    /// Records one step from state\[p\] into state[1−p].
    pub fn encode_step(&self, pass: &mut CountedPass, p: usize, n: usize) {
        pass.phase(Phase::Forces);
        for (pipeline, bind_groups) in self.kernels.stages.iter().zip(&self.stage_groups) {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_groups[p], &[]);
            pass.dispatch_workgroups(groups(n), 1, 1);
        }
    }
}
