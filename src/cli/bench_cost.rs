//! The bench record's GPU cost fields (issue #15 items 1 and 2): what the engine counted over the timed
//! frames ([`springsim::gpu::GpuCost`]) per frame, the cost model's bytes per frame beside the floor,
//! the split per phase, and the GPU timestamps when `--timestamps` asked for them. Every field is null
//! on the CPU backend.

use serde::Serialize;
use springsim::gpu::profiling::cost_model::CostModel;
use springsim::gpu::{GpuCost, GpuProbe, GpuTimes, Phase};
use std::collections::BTreeMap;

/// The cost fields of one record (flattened into it: `passes_per_frame` and so on at the top level).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CostRecord {
    /// Compute passes begun per timed frame.
    pub passes_per_frame: Option<f64>,
    /// `dispatch_workgroups` calls per timed frame.
    pub dispatches_per_frame: Option<f64>,
    /// Workgroups dispatched per timed frame.
    pub workgroups_per_frame: Option<f64>,
    /// `queue.submit` calls per timed frame (the steps, the reports' read-backs, the divergence guard's).
    pub submits_per_frame: Option<f64>,
    /// Buffers read back per timed frame.
    pub readbacks_per_frame: Option<f64>,
    /// Times per timed frame that the host blocked until the device finished (`device.poll` with a
    /// wait): 0 on the pipelined path, which every GPU method takes except local/global with the host's
    /// Cholesky step (a read-back per iteration), implicit Euler's adaptive step on a model that depends
    /// on time (a read-back per trial step) and `--timestamps` (read after each frame).
    pub host_waits_per_frame: Option<f64>,
    /// Bytes read back per timed frame.
    pub readback_bytes_per_frame: Option<f64>,
    /// Bytes written through the queue per timed frame (parameter blocks, the Cholesky path's δ).
    pub upload_bytes_per_frame: Option<f64>,
    /// Steps recorded per timed frame (adaptive steps and retries included).
    pub steps_per_frame: Option<f64>,
    /// Bytes the kernels read and write per timed frame, by the cost model (estimated from each
    /// kernel's bindings and dispatch size) for the steps taken.
    pub kernel_bytes_per_frame: Option<f64>,
    /// Bytes the method must touch per timed frame: the state in and out once per step, the spring
    /// table once per force evaluation, per solver iteration the spring table and four vectors.
    pub floor_bytes_per_frame: Option<f64>,
    /// Per phase (`forces`, `integrate`, `local`, `rhs`, `global`, `collide`; only those the method has):
    /// dispatches counted, kernel bytes modelled and, with timestamps per phase, GPU milliseconds.
    pub phases: Option<BTreeMap<&'static str, PhaseRecord>>,
    /// `--timestamps`: `per-phase`, `pass-only`, or `unsupported: <why>` (null when not asked for).
    pub timestamps: Option<String>,
    /// `--timestamps`: GPU milliseconds per timed frame, from the first timestamp of each submit to its
    /// last (null without them).
    pub gpu_ms_per_frame: Option<f64>,
    /// `--kernel-times`: per kernel and phase, the longest first (absent without them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels: Option<Vec<KernelRecord>>,
}

/// One kernel of [`CostRecord::kernels`], per timed frame.
#[derive(Clone, Debug, Default, Serialize)]
pub struct KernelRecord {
    /// The entry point.
    pub kernel: &'static str,
    /// The phase its dispatches were recorded in.
    pub phase: &'static str,
    /// Dispatches per timed frame.
    pub dispatches_per_frame: f64,
    /// Workgroups per dispatch.
    pub workgroups_per_dispatch: f64,
    /// GPU milliseconds per timed frame.
    pub gpu_ms_per_frame: f64,
    /// GPU microseconds per dispatch.
    pub us_per_dispatch: f64,
    /// Megabytes a dispatch reads and writes, by the cost model (null for a kernel it does not model).
    pub mb_per_dispatch: Option<f64>,
    /// The model's bytes over the measured time, GB/s: how near the kernel runs to the adapter's memory
    /// bandwidth (an estimate: neighbour reads that hit the caches count in full).
    pub gb_per_s: Option<f64>,
}

/// One phase of [`CostRecord::phases`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhaseRecord {
    /// Dispatches counted per timed frame.
    pub dispatches_per_frame: f64,
    /// Kernel bytes per timed frame, by the cost model.
    pub kernel_bytes_per_frame: f64,
    /// GPU milliseconds per timed frame (timestamps per phase only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_ms_per_frame: Option<f64>,
}

/// The record of `frames` timed frames over which the engine counted `cost`; `times` the GPU times of
/// those frames, `timestamps` what the adapter offered (`None`: not asked for); `trial`: implicit
/// Euler's steps were adaptive trial steps (each with its strain check).
pub fn record(
    engine: &GpuProbe,
    cost: &GpuCost,
    frames: usize,
    trial: bool,
    timestamps: Option<String>,
    times: Option<GpuTimes>,
) -> CostRecord {
    let f = frames.max(1) as f64;
    let per = |v: u64| Some(v as f64 / f);
    let mut shape = engine.frame_shape();
    shape.trial = trial;
    let model = springsim::gpu::profiling::cost_model::frame_model(&shape);
    // the model is for the planned steps; scale it to the steps taken
    let scale = if model.steps == 0 { 0.0 } else { cost.steps as f64 / f / model.steps as f64 };
    let mut phases = BTreeMap::new();
    for p in Phase::ALL {
        let (d, b) = (cost.dispatches_in(p), model.kernel_bytes_in(p));
        if d == 0 && b == 0 {
            continue;
        }
        let ms = times.filter(|t| t.frames > 0 && timestamps.as_deref() == Some("per-phase")).map(|t| t.phase_ms[p as usize] / f);
        phases.insert(
            p.name(),
            PhaseRecord { dispatches_per_frame: d as f64 / f, kernel_bytes_per_frame: b as f64 * scale, gpu_ms_per_frame: ms },
        );
    }
    CostRecord {
        passes_per_frame: per(cost.passes),
        host_waits_per_frame: per(cost.waits),
        dispatches_per_frame: per(cost.dispatches),
        workgroups_per_frame: per(cost.workgroups),
        submits_per_frame: per(cost.submits),
        readbacks_per_frame: per(cost.readbacks),
        readback_bytes_per_frame: per(cost.readback_bytes),
        upload_bytes_per_frame: per(cost.upload_bytes),
        steps_per_frame: per(cost.steps),
        kernel_bytes_per_frame: Some(model.kernel_bytes() as f64 * scale),
        floor_bytes_per_frame: Some(model.floor_bytes as f64 * scale),
        phases: Some(phases),
        gpu_ms_per_frame: times.filter(|t| t.frames > 0).map(|t| t.total_ms / f),
        timestamps,
        kernels: kernel_records(engine, &model, frames as u64),
    }
}

/// The engine's per-kernel times over `frames` timed frames (`None` when none were taken), each with the
/// bytes the cost `model` gives its dispatches (found by entry point and phase).
fn kernel_records(engine: &GpuProbe, model: &CostModel, frames: u64) -> Option<Vec<KernelRecord>> {
    let k = engine.kernel_times();
    let f = frames.max(1) as f64;
    let per = |n: u64| n.max(1) as f64;
    (!k.is_empty()).then(|| {
        k.into_iter()
            .map(|t| {
                let modelled = model.kernels.iter().find(|c| c.name == t.kernel && c.phase.name() == t.phase && c.dispatches > 0);
                let bytes = modelled.map(|c| (c.read_bytes + c.write_bytes) as f64 / c.dispatches as f64);
                let us = t.ms * 1e3 / per(t.dispatches);
                KernelRecord {
                    kernel: t.kernel,
                    phase: t.phase,
                    dispatches_per_frame: t.dispatches as f64 / f,
                    workgroups_per_dispatch: t.workgroups as f64 / per(t.dispatches),
                    gpu_ms_per_frame: t.ms / f,
                    us_per_dispatch: us,
                    mb_per_dispatch: bytes.map(|b| b / 1e6),
                    gb_per_s: bytes.filter(|_| us > 0.0).map(|b| b / us / 1e3),
                }
            })
            .collect()
    })
}

/// `a + b`, figure by figure (the timed frames' counts summed, the quality read-backs between them left
/// out).
pub fn add(a: &GpuCost, b: &GpuCost) -> GpuCost {
    let mut phase_dispatches = a.phase_dispatches;
    for (d, x) in phase_dispatches.iter_mut().zip(b.phase_dispatches) {
        *d += x;
    }
    GpuCost {
        passes: a.passes + b.passes,
        dispatches: a.dispatches + b.dispatches,
        workgroups: a.workgroups + b.workgroups,
        phase_dispatches,
        submits: a.submits + b.submits,
        readbacks: a.readbacks + b.readbacks,
        readback_bytes: a.readback_bytes + b.readback_bytes,
        uploads: a.uploads + b.uploads,
        upload_bytes: a.upload_bytes + b.upload_bytes,
        steps: a.steps + b.steps,
        waits: a.waits + b.waits,
    }
}
