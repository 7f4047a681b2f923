//! The divergence guard's signals reduced on the GPU (`shaders/signals.wgsl`, twin
//! [`crate::reference::signals`]): two dispatches over `state[0]` write 64 bytes that a frame's report
//! copies, so the guard judges a frame without reading its state back. Built the first time a frame
//! asks for them (the pipelined path with the guard on); nothing is allocated otherwise.

use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::groups;
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build_specialized, params, storage, Bindings, Kernel};
use crate::gpu::base::specialize::Splits;
use crate::gpu::base::state::GpuState;
use crate::gpu::profiling::cost::{CountedPass, Phase};
use crate::reference::model::V3;
use crate::reference::signals::{SignalSums, StepEnergy};

/// Bytes of the reduced signals (four `vec4<f32>`).
pub const SIGNAL_BYTES: u64 = 64;

/// The kernels, the workgroups' partials, the result and the bind group over `state[0]`.
pub struct SignalKernels {
    partial: Kernel,
    reduce: Kernel,
    group: Bindings,
    /// The reduced signals ([`SIGNAL_BYTES`]), the source of the report's copy.
    pub out: wgpu::Buffer,
    /// Bytes of the buffers.
    pub bytes: u64,
}

impl SignalKernels {
    /// Compiles the kernels and allocates the partials (four `vec4` a workgroup) and the result.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState) -> Result<Self> {
        let (partial, reduce, group, out, bytes) = reduction(device, options, st, "signals_partial", "springsim.signals")?;
        Ok(SignalKernels { partial, reduce, group, out, bytes })
    }

    /// Records the two dispatches over `state[0]` (n particles) into `pass`.
    pub fn encode(&self, pass: &mut CountedPass, n: usize) {
        pass.phase(Phase::Collide);
        encode_reduction(pass, &self.partial, &self.reduce, &self.group, n);
    }
}

/// A per-particle kernel of `signals.wgsl` (`partial`: `signals_partial` over `state[0]`, or
/// `signals_step_partial` from `state[0]` to `state[1]`) and `signals_reduce` after it, with their
/// partials (four `vec4` a workgroup), their result ([`SIGNAL_BYTES`]), the bind group and the bytes.
fn reduction(
    device: &wgpu::Device,
    options: &GpuOptions,
    st: &GpuState,
    partial: &'static str,
    label: &str,
) -> Result<(Kernel, Kernel, Bindings, wgpu::Buffer, u64)> {
    let step = partial == "signals_step_partial";
    let mut entries =
        vec![params(0), storage(1, true), storage(2, true), storage(3, true), storage(4, false), storage(5, false), storage(6, true)];
    if step {
        entries.push(storage(7, true));
    }
    let k = build_specialized(device, options, "signals.wgsl", &[&entries], &[partial, "signals_reduce"], &Splits::of(st).constants())?;
    let mut alloc = Allocator::new(device);
    let none = wgpu::BufferUsages::empty();
    let partials = alloc.storage(&format!("{label}_partials"), (groups(st.n).max(1) as u64) * 64, none)?;
    let out = alloc.storage(label, SIGNAL_BYTES, wgpu::BufferUsages::COPY_SRC)?;
    let mut buffers = vec![&st.params, &st.nbr, &st.csr, &st.state[0], &partials, &out, &st.nbr_1];
    if step {
        buffers.push(&st.state[1]);
    }
    let group = bind(device, &k.layout(0)?, label, &buffers);
    Ok((k.pipeline(partial)?, k.pipeline("signals_reduce")?, group, out, alloc.bytes()))
}

/// Records `partial` over n particles and `signals_reduce` after it.
fn encode_reduction(pass: &mut CountedPass, partial: &Kernel, reduce: &Kernel, group: &Bindings, n: usize) {
    pass.set_bind_group(0, group, &[]);
    pass.set_pipeline(partial);
    pass.dispatch_workgroups(groups(n).max(1), 1, 1);
    pass.set_pipeline(reduce);
    pass.dispatch_workgroups(1, 1, 1);
}

/// The adaptive step's energy check of a trial step (`signals_step_partial` from `state[0]` to
/// `state[1]`, then `signals_reduce`; twin [`crate::reference::signals::signals_step_partial`]): two
/// dispatches that write [`SIGNAL_BYTES`], judged on the device by `adaptive_judge` or read back by the
/// blocking trial step ([`decode_step_energy`]). Made with implicit Euler's adaptive step.
pub struct StepEnergyKernels {
    partial: Kernel,
    reduce: Kernel,
    group: Bindings,
    /// The reduced sums ([`SIGNAL_BYTES`]).
    pub out: wgpu::Buffer,
    /// Bytes of the buffers.
    pub bytes: u64,
}

impl StepEnergyKernels {
    /// Compiles the kernels and allocates the partials (four `vec4` a workgroup) and the result.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState) -> Result<Self> {
        let (partial, reduce, group, out, bytes) = reduction(device, options, st, "signals_step_partial", "springsim.step_energy")?;
        Ok(StepEnergyKernels { partial, reduce, group, out, bytes })
    }

    /// Records the two dispatches over the trial step from `state[0]` to `state[1]` (n particles).
    pub fn encode(&self, pass: &mut CountedPass, n: usize) {
        pass.phase(Phase::Integrate);
        encode_reduction(pass, &self.partial, &self.reduce, &self.group, n);
    }
}

/// The sums of [`StepEnergyKernels`] from the [`SIGNAL_BYTES`] they wrote.
pub fn decode_step_energy(bytes: &[u8]) -> StepEnergy {
    let f: &[f32] = bytemuck::cast_slice(&bytes[..SIGNAL_BYTES as usize]);
    let d = |k: usize| f[k] as f64;
    StepEnergy {
        change: d(0) + d(1) + d(2),
        positive: d(3),
        momentum_norm: d(4),
        non_finite: !(f[6] == 0.0),
        hi: V3::new(d(8), d(9), d(10)),
        lo: V3::new(-d(12), -d(13), -d(14)),
    }
}

/// The sums from the [`SIGNAL_BYTES`] the kernels wrote (the layout of `shaders/signals.wgsl`).
pub fn decode_signals(bytes: &[u8]) -> SignalSums {
    let f: &[f32] = bytemuck::cast_slice(&bytes[..SIGNAL_BYTES as usize]);
    let d = |k: usize| f[k] as f64;
    SignalSums {
        kinetic: d(0),
        gravity: d(1),
        central: d(2),
        spring: d(3),
        momentum_norm: d(4),
        max_strain: d(5),
        max_stretch: if f[7] <= -3.0e38 { f64::NEG_INFINITY } else { d(7) },
        non_finite: !(f[6] == 0.0),
        hi: V3::new(d(8), d(9), d(10)),
        lo: V3::new(-d(12), -d(13), -d(14)),
    }
}
