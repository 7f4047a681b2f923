//! `springsim bench --sustained N`: frames stepped back to back after the timed ones.

use crate::spread::Spread;
use serde::Serialize;
use springsim::error::Result;
use springsim::Simulator;
use std::time::Instant;

/// The sustained frames' time budget (s): no frame starts after it (a slow method's frames keep the GPU
/// busy anyway).
pub const SUSTAINED_SECONDS: f64 = 5.0;

/// `--sustained N`: the timed frames again, N of them (as many as start within [`SUSTAINED_SECONDS`] where
/// the frames are not pipelined), on a second simulator built from the same model and settings after
/// the timed run: its `--warmup` frames untimed, then N frames stepped back to back, each timed alone by
/// the wall clock less the guard's checks, as the timed frames are, but with nothing between them: no
/// state read back and no statistics on the host. Both figures time the same frames of the same
/// physics, so their ratio is what the host's work between frames costs. Between blocking timed frames
/// the device idles while the host reads the state and computes the quality figures (at 1024²,
/// 0.15–0.2 s a frame), and a GPU's power management may keep an idling device slow: on an NVIDIA H200 the 1024² local/global frame took 26.8 ms timed one at a time and
/// 8–11 ms back to back after about a second of load (docs/PERFORMANCE.md, "Frames back to back"). These
/// frames are what a real-time loop that draws from the position buffer sees. The record's cost fields
/// and timestamps count the timed frames alone.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Sustained {
    /// Frames stepped back to back (0 without `--sustained`, or when the timed frames failed; fewer than
    /// asked when they passed [`SUSTAINED_SECONDS`]).
    pub sustained_frames: usize,
    /// Their median wall time (ms; null when none ran).
    pub sustained_ms_per_frame: Option<f64>,
    /// Their interquartile range (ms; null when none ran).
    pub sustained_ms_iqr: Option<f64>,
    /// Solver iterations per frame over them, the mean rounded, as the timed frames' `iterations` (null
    /// when none ran): the same frames give the same count.
    pub sustained_iterations: Option<usize>,
    /// Every coordinate finite after them (null when none ran).
    pub sustained_finite: Option<bool>,
    /// Divergences the guard found in them (null when none ran; see `diverged` and `recoveries` for the
    /// timed frames').
    pub sustained_divergences: Option<usize>,
}

impl Sustained {
    /// The sustained frames of a fresh GPU simulation that runs pipelined: [`crate::bench_frames::run`]'s
    /// `warmup` + `frames` frames, which are back to back already, the last `frames` timed.
    pub fn run_pipelined(
        sim: &mut springsim::GpuSimulator,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        warmup: usize,
        frames: usize,
    ) -> Result<Sustained> {
        if frames == 0 {
            return Ok(Sustained::default());
        }
        let found = sim.divergences().len();
        let t = crate::bench_frames::run(sim, device, queue, (warmup, frames), &|| {})?;
        let (x, v) = sim.read_state()?;
        let spread = Spread::of(&t.times);
        Ok(Sustained {
            sustained_frames: t.times.len(),
            sustained_ms_per_frame: Some(spread.median),
            sustained_ms_iqr: Some(spread.q3 - spread.q1),
            sustained_iterations: Some(per_frame(t.iterations, t.times.len())),
            sustained_finite: Some(springsim::reference::stats::all_finite(&x, &v)),
            sustained_divergences: Some(sim.divergences().len() - found),
        })
    }

    /// Steps `warmup` frames of a fresh `sim` untimed, then `frames` frames back to back, or as many as
    /// start within [`SUSTAINED_SECONDS`] (at least one).
    pub fn run(sim: &mut dyn Simulator, warmup: usize, frames: usize) -> Result<Sustained> {
        if frames == 0 {
            return Ok(Sustained::default());
        }
        for _ in 0..warmup {
            sim.step_frame()?;
        }
        let mut times = Vec::with_capacity(frames);
        let mut iterations = 0;
        let found = sim.divergences().len();
        let start = Instant::now();
        for _ in 0..frames {
            if start.elapsed().as_secs_f64() > SUSTAINED_SECONDS && !times.is_empty() {
                break;
            }
            let (t, guard) = (Instant::now(), sim.guard_seconds());
            iterations += sim.step_frame()?.iterations;
            times.push((t.elapsed().as_secs_f64() - (sim.guard_seconds() - guard)) * 1e3);
        }
        let (x, v) = sim.read_state()?;
        let finite = springsim::reference::stats::all_finite(&x, &v);
        let spread = Spread::of(&times);
        Ok(Sustained {
            sustained_frames: times.len(),
            sustained_ms_per_frame: Some(spread.median),
            sustained_ms_iqr: Some(spread.q3 - spread.q1),
            sustained_iterations: Some(per_frame(iterations, times.len())),
            sustained_finite: Some(finite),
            sustained_divergences: Some(sim.divergences().len() - found),
        })
    }
}

/// `total` iterations over `frames` frames: the mean, rounded (0 without frames).
fn per_frame(total: usize, frames: usize) -> usize {
    if frames == 0 {
        0
    } else {
        (total as f64 / frames as f64).round() as usize
    }
}
