//! GPU timestamps per phase, optional: where the device has `TIMESTAMP_QUERY` together with
//! `TIMESTAMP_QUERY_INSIDE_ENCODERS` and `TIMESTAMP_QUERY_INSIDE_PASSES`, [`PhaseTimer`] writes a
//! timestamp inside the frame's compute pass wherever the [`Phase`] changes (through
//! [`crate::gpu::profiling::cost::CountedPass`]) and one after the last dispatch, so each interval is one phase's GPU
//! time; with `TIMESTAMP_QUERY` alone it times the whole pass (its beginning and end). Without either
//! the engine says so ([`TimestampSupport::Unsupported`]) and records nothing. The library takes the
//! host's device: the host must have requested these features when it created it
//! ([`crate::gpu::base::context::GpuContext::headless_with_timestamps`] does for the CLI).
//!
//! Recording only writes and resolves the queries (no wait); the blocking calls that submit a frame
//! read them back afterwards ([`PhaseTimer::read`]).

use std::collections::BTreeMap;

use crate::error::Result;
use crate::gpu::base::state::read_buffer;
use crate::gpu::profiling::cost::{GpuCounters, PassTimer, Phase};

/// The GPU time of one kernel in one phase, summed over the frames read
/// ([`PhaseTimer::time_each_dispatch`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KernelTime {
    /// The entry point.
    pub kernel: &'static str,
    /// The phase its dispatches were recorded in.
    pub phase: &'static str,
    /// Dispatches timed.
    pub dispatches: u64,
    /// Workgroups over those dispatches.
    pub workgroups: u64,
    /// Milliseconds over those dispatches.
    pub ms: f64,
}

/// Queries per frame at most (wgpu's limit per query set is 4096); phase changes beyond it are not
/// timed and the frame counts as truncated.
pub const MAX_QUERIES: u32 = 4096;

/// What the device offers for timing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimestampSupport {
    /// Timestamps inside passes: GPU time per phase.
    PerPhase,
    /// Timestamps at pass boundaries only: GPU time per frame, no split.
    PassOnly,
    /// No timestamps, and why.
    Unsupported(String),
}

impl TimestampSupport {
    /// What `features` (the device's) allow.
    pub fn of(features: wgpu::Features) -> TimestampSupport {
        let inside = wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
        if !features.contains(wgpu::Features::TIMESTAMP_QUERY) {
            TimestampSupport::Unsupported("the device has no TIMESTAMP_QUERY".into())
        } else if features.contains(inside) {
            TimestampSupport::PerPhase
        } else {
            TimestampSupport::PassOnly
        }
    }

    /// `per-phase`, `pass-only`, or `unsupported: <why>`.
    pub fn describe(&self) -> String {
        match self {
            TimestampSupport::PerPhase => "per-phase".into(),
            TimestampSupport::PassOnly => "pass-only".into(),
            TimestampSupport::Unsupported(why) => format!("unsupported: {why}"),
        }
    }
}

/// GPU time summed over the frames read so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct GpuTimes {
    /// Frames (submits of timed work) read.
    pub frames: u64,
    /// Milliseconds per [`Phase`] (indexed as [`Phase::ALL`]; zeros in pass-only mode).
    pub phase_ms: [f64; 5],
    /// Milliseconds from the first timestamp of each frame to its last.
    pub total_ms: f64,
    /// Frames whose phase changes outran [`MAX_QUERIES`] (their tail is not timed).
    pub truncated: u64,
}

/// Milliseconds per phase from resolved `ticks`: interval k (from query k to k + 1) belongs to
/// `marks[k]` (`None`: a closing mark, nothing after it); `period_ns` is the queue's timestamp period
/// (nanoseconds per tick). A tick that goes backwards counts as 0.
pub fn phase_ms(ticks: &[u64], marks: &[Option<Phase>], period_ns: f32) -> ([f64; 5], f64) {
    let mut out = [0.0; 5];
    let mut total = 0.0;
    for k in 0..marks.len().min(ticks.len()).saturating_sub(1) {
        let ms = ticks[k + 1].saturating_sub(ticks[k]) as f64 * period_ns as f64 * 1e-6;
        if let Some(p) = marks[k] {
            out[p as usize] += ms;
        }
        total += ms;
    }
    (out, total)
}

/// The query set and buffers of one engine's timestamps, and the marks of the frame being recorded.
pub struct PhaseTimer {
    support: TimestampSupport,
    query_set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
    period_ns: f32,
    /// The phase that starts at each query written so far (`None`: the closing mark).
    marks: Vec<Option<Phase>>,
    /// Per-dispatch mode: the kernel and workgroups of the dispatch after each query (beside `marks`).
    dispatches: Vec<(&'static str, u64)>,
    /// A timestamp before every dispatch, not only at phase changes.
    per_dispatch: bool,
    truncated: bool,
    times: GpuTimes,
    /// Per-dispatch mode: the times per (kernel, phase).
    kernels: BTreeMap<(&'static str, &'static str), KernelTime>,
}

impl PhaseTimer {
    /// A timer on `device` when its features allow one (`None` otherwise, with [`TimestampSupport::of`]
    /// saying why).
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Option<Self> {
        let support = TimestampSupport::of(device.features());
        let count = match support {
            TimestampSupport::PerPhase => MAX_QUERIES,
            TimestampSupport::PassOnly => 2,
            TimestampSupport::Unsupported(_) => return None,
        };
        let query_set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("springsim.timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        let bytes = count as u64 * 8;
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("springsim.timestamps_resolve"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("springsim.timestamps_staging"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Some(PhaseTimer {
            support,
            query_set,
            resolve,
            staging,
            period_ns: queue.get_timestamp_period(),
            marks: Vec::new(),
            dispatches: Vec::new(),
            per_dispatch: false,
            truncated: false,
            times: GpuTimes::default(),
            kernels: BTreeMap::new(),
        })
    }

    /// Per phase or pass only.
    pub fn support(&self) -> &TimestampSupport {
        &self.support
    }

    /// The times read so far.
    pub fn times(&self) -> GpuTimes {
        self.times
    }

    /// Forgets the times read so far.
    pub fn reset(&mut self) {
        self.times = GpuTimes::default();
        self.kernels.clear();
    }

    /// Per-phase mode only: a timestamp before every dispatch, so that [`PhaseTimer::kernel_times`] gives
    /// each kernel's GPU time (the phases' times are the same sums). Returns whether the device allows it.
    /// Each timestamp waits for the work before it, so kernels that a GPU would overlap are timed one
    /// after the other.
    pub fn time_each_dispatch(&mut self) -> bool {
        self.per_dispatch = self.support == TimestampSupport::PerPhase;
        self.per_dispatch
    }

    /// The times per kernel and phase read so far, the longest first (empty unless
    /// [`PhaseTimer::time_each_dispatch`]).
    pub fn kernel_times(&self) -> Vec<KernelTime> {
        let mut v: Vec<KernelTime> = self.kernels.values().cloned().collect();
        v.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        v
    }

    /// Pass-only mode: the pass's beginning and end timestamps (to give `begin_compute_pass`), recorded as
    /// one frame's marks; `None` in per-phase mode.
    pub fn pass_writes(&mut self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        if self.support != TimestampSupport::PassOnly {
            return None;
        }
        self.marks = vec![None, None];
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.query_set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        })
    }

    /// Records the resolve of this frame's queries into the staging buffer (after the pass ended).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        let n = self.marks.len() as u32;
        if n >= 2 {
            encoder.resolve_query_set(&self.query_set, 0..n, &self.resolve, 0);
            encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.staging, 0, n as u64 * 8);
        }
    }

    /// After the frame's submit: reads the resolved ticks back (one read-back, not counted in the
    /// engine's [`crate::gpu::profiling::cost::GpuCost`]: the measurement is not the method's cost) and adds the phases'
    /// milliseconds; nothing when no frame was recorded since the last read.
    pub fn read(&mut self, device: &wgpu::Device) -> Result<()> {
        let n = self.marks.len();
        if n >= 2 {
            let bytes = read_buffer(device, &GpuCounters::default(), &self.staging, n as u64 * 8)?;
            let ticks: &[u64] = bytemuck::cast_slice(&bytes);
            let (phases, total) = phase_ms(ticks, &self.marks, self.period_ns);
            if self.per_dispatch {
                self.add_kernels(ticks);
            }
            for (t, p) in self.times.phase_ms.iter_mut().zip(phases) {
                *t += p;
            }
            self.times.total_ms += total;
            self.times.frames += 1;
            self.times.truncated += self.truncated as u64;
        }
        self.marks.clear();
        self.dispatches.clear();
        self.truncated = false;
        Ok(())
    }

    /// Adds each dispatch's interval (query k to k + 1) to its kernel's time.
    fn add_kernels(&mut self, ticks: &[u64]) {
        for k in 0..self.marks.len().min(ticks.len()).saturating_sub(1) {
            let (Some(phase), (kernel, workgroups)) = (self.marks[k], self.dispatches[k]) else { continue };
            let ms = ticks[k + 1].saturating_sub(ticks[k]) as f64 * self.period_ns as f64 * 1e-6;
            let t = self.kernels.entry((kernel, phase.name())).or_insert(KernelTime {
                kernel,
                phase: phase.name(),
                dispatches: 0,
                workgroups: 0,
                ms: 0.0,
            });
            t.dispatches += 1;
            t.workgroups += workgroups;
            t.ms += ms;
        }
    }
}

impl PassTimer for PhaseTimer {
    /// Per-phase mode: a timestamp where `phase` starts (when it differs from the last mark; before
    /// every dispatch of `kernel` over `workgroups` in per-dispatch mode), or the closing one (`None`).
    /// Nothing in pass-only mode.
    fn mark(&mut self, pass: &mut wgpu::ComputePass, phase: Option<Phase>, kernel: &'static str, workgroups: u64) {
        let same = !self.per_dispatch && phase.is_some() && self.marks.last() == Some(&phase);
        if self.support != TimestampSupport::PerPhase || same {
            return;
        }
        // keep the last query for the closing mark
        let room = if phase.is_some() { MAX_QUERIES - 1 } else { MAX_QUERIES };
        if self.marks.len() as u32 >= room {
            self.truncated = true;
            return;
        }
        pass.write_timestamp(&self.query_set, self.marks.len() as u32);
        self.marks.push(phase);
        self.dispatches.push((kernel, workgroups));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_to_phase_ms() {
        // forces 0..1000, global 1000..4000, forces 4000..4500, closing mark; period 2 ns per tick
        let marks = [Some(Phase::Forces), Some(Phase::Global), Some(Phase::Forces), None];
        let (ms, total) = phase_ms(&[0, 1000, 4000, 4500], &marks, 2.0);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
        assert!(close(ms[Phase::Forces as usize], 0.003), "{ms:?}");
        assert!(close(ms[Phase::Global as usize], 0.006), "{ms:?}");
        assert!(close(total, 0.009), "{total}");
        assert_eq!(ms[Phase::Local as usize], 0.0);
        // a clock that goes backwards counts as 0; too few ticks give nothing
        let (ms, _) = phase_ms(&[10, 5], &[Some(Phase::Local), None], 1.0);
        assert_eq!(ms[Phase::Local as usize], 0.0);
        assert_eq!(phase_ms(&[7], &[Some(Phase::Local)], 1.0).1, 0.0);
        // pass-only: two closing-style marks time the total only
        let (ms, total) = phase_ms(&[100, 350], &[None, None], 1.0);
        assert_eq!(ms, [0.0; 5]);
        assert!(close(total, 250e-6), "{total}");
    }

    #[test]
    fn support_from_features() {
        use wgpu::Features as F;
        assert!(matches!(TimestampSupport::of(F::empty()), TimestampSupport::Unsupported(_)));
        assert_eq!(TimestampSupport::of(F::TIMESTAMP_QUERY), TimestampSupport::PassOnly);
        let all = F::TIMESTAMP_QUERY | F::TIMESTAMP_QUERY_INSIDE_ENCODERS | F::TIMESTAMP_QUERY_INSIDE_PASSES;
        assert_eq!(TimestampSupport::of(all), TimestampSupport::PerPhase);
    }
}
