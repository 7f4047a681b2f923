//! `springsim bench`'s timed frames on the GPU, run the way a user's loop runs them: each frame recorded
//! with `GpuSimulator::encode_frame` and submitted, its report collected a frame or more later by
//! `poll_reports`, never a wait. At most [`FRAMES_IN_FLIGHT`] frames are ahead of the last report (a
//! swapchain's double buffering); the host spins on non-blocking polls for the next report when it is
//! that far ahead. A frame's time is the wall time between its report's arrival and the previous one's;
//! the quality figures (finiteness, the largest strain and stretch) come from the reports' signals,
//! reduced on the GPU: nothing else is read back until the timed frames are done.

use springsim::error::Result;
use springsim::gpu::GpuCost;
use springsim::method::DivergencePolicy;
use springsim::stepping::FrameReport;
use springsim::{FrameEvent, GpuSimulator};
use std::time::Instant;

/// Frames recorded ahead of the last report that came back.
pub const FRAMES_IN_FLIGHT: usize = 2;

/// What the timed frames gave.
#[derive(Debug, Default)]
pub struct TimedFrames {
    /// Wall time of each timed frame (ms).
    pub times: Vec<f64>,
    /// Solver iterations over the timed frames.
    pub iterations: usize,
    /// The last timed frame's report.
    pub report: FrameReport,
    /// Implicit Euler's adaptive frame: steps accepted as they were because the frame's room for
    /// halvings ran out, summed over the timed frames.
    pub forced_steps: usize,
    /// The largest |l − L|/L seen in any frame's report.
    pub peak_strain: f64,
    /// The largest stretch (l − L)/L seen.
    pub peak_stretch: f64,
    /// The first frame (counted from the first warm-up frame) whose state was not finite (policy
    /// `report` or `ignore`; `recover` rolls such a frame back).
    pub failed_frame: Option<usize>,
    /// The engine's counts over the timed frames.
    pub counted: GpuCost,
}

/// Runs `warmup` + `frames` frames of `sim` pipelined on `device`/`queue`; `tick` after each report.
pub fn run(
    sim: &mut GpuSimulator,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    (warmup, frames): (usize, usize),
    tick: &dyn Fn(),
) -> Result<TimedFrames> {
    sim.set_frame_signals(true);
    let recover = sim.settings().guard.policy == DivergencePolicy::Recover;
    let total = warmup + frames;
    let mut out = TimedFrames { peak_strain: 0.0, peak_stretch: f64::NEG_INFINITY, ..Default::default() };
    let (mut recorded, mut reported) = (0usize, 0usize);
    let mut before = None;
    let mut last_arrival = None;
    while recorded < total || sim.reports_in_flight() > 0 {
        if recorded < total && sim.reports_in_flight() < FRAMES_IN_FLIGHT && out.failed_frame.is_none() {
            if recorded == warmup {
                sim.probe().reset_gpu_times();
                before = Some(sim.probe().cost());
                if warmup == 0 {
                    last_arrival = Some(Instant::now());
                }
            }
            sim.prepare_frame()?;
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.bench") });
            sim.encode_frame(&mut encoder)?;
            sim.probe().submit_counted(queue, encoder.finish());
            recorded += 1;
        }
        let events = sim.poll_reports()?;
        let now = Instant::now();
        let idle = events.is_empty();
        for e in events {
            let FrameEvent::Report { report, signals, sums, .. } = e else { continue };
            if reported >= warmup {
                if let Some(t) = last_arrival {
                    out.times.push(now.duration_since(t).as_secs_f64() * 1e3);
                }
                out.iterations += report.iterations;
                out.forced_steps += report.forced_steps;
                out.report = report;
            }
            last_arrival = Some(now);
            if let (Some(s), Some(sums)) = (signals, sums) {
                if !s.finite && !recover && out.failed_frame.is_none() {
                    out.failed_frame = Some(reported);
                }
                out.peak_strain = out.peak_strain.max(s.max_strain);
                out.peak_stretch = out.peak_stretch.max(sums.max_stretch);
            }
            reported += 1;
            tick();
        }
        if out.failed_frame.is_some() && recorded >= reported && sim.reports_in_flight() == 0 {
            break;
        }
        if idle && (recorded == total || sim.reports_in_flight() >= FRAMES_IN_FLIGHT || out.failed_frame.is_some()) {
            std::thread::yield_now();
        }
    }
    let after = sim.probe().cost();
    out.counted = before.map(|b| after.since(&b)).unwrap_or_default();
    Ok(out)
}
