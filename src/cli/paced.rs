//! `springsim bench --paced HZ`: frames paced like a presenting window's, after the timed ones.

use crate::bench_frames::FRAMES_IN_FLIGHT;
use crate::spread::Spread;
use serde::Serialize;
use springsim::error::Result;
use springsim::{FrameEvent, GpuSimulator, Simulator};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How long the paced frames run (s).
pub const PACED_SECONDS: f64 = 3.0;

/// `--paced HZ`: [`PACED_SECONDS`] of frames, each recorded at its display refresh, the way a window
/// that presents with vsync drives a simulation: at each tick of an `HZ` clock the host records and
/// submits one frame, unless [`FRAMES_IN_FLIGHT`] frames are still on the GPU (a swapchain's acquire would
/// block there), in which case that refresh is missed and the frame waits for the next tick. The host
/// sleeps on its own clock between ticks and never waits on the device; reports come back through
/// `poll_reports`. On the CPU each tick steps one frame (blocking) if the last one has finished.
/// A loop that keeps up records every tick: `paced_missed` 0 and `paced_ms_per_frame` 1000/HZ.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Paced {
    /// The refresh rate asked for (Hz; null without `--paced`).
    pub paced_hz: Option<f64>,
    /// Frames recorded at a refresh (0 without `--paced`).
    pub paced_frames: usize,
    /// Refreshes at which no frame could be recorded because the GPU had not caught up (null without
    /// `--paced`).
    pub paced_missed: Option<usize>,
    /// The median time between two frames' reports coming back (ms): 1000/HZ when the loop keeps up.
    pub paced_ms_per_frame: Option<f64>,
    /// The median time from a frame's submit to its report's arrival (ms): the GPU's time for the frame
    /// plus up to a poll's delay.
    pub paced_latency_ms: Option<f64>,
    /// Every coordinate finite after them (null without `--paced`).
    pub paced_finite: Option<bool>,
}

/// Sleeps until `t` (the last half millisecond spun, as a compositor's frame clock is precise).
fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now + Duration::from_micros(500) {
        std::thread::sleep(t - now - Duration::from_micros(500));
    }
    while Instant::now() < t {
        std::hint::spin_loop();
    }
}

/// The statistics of the paced frames.
fn summary(hz: f64, frames: usize, missed: usize, intervals: &[f64], latencies: &[f64], finite: bool) -> Paced {
    let med = |v: &[f64]| (!v.is_empty()).then(|| Spread::of(v).median);
    Paced {
        paced_hz: Some(hz),
        paced_frames: frames,
        paced_missed: Some(missed),
        paced_ms_per_frame: med(intervals),
        paced_latency_ms: med(latencies),
        paced_finite: Some(finite),
    }
}

impl Paced {
    /// The paced frames of a GPU simulation that runs pipelined.
    pub fn run_pipelined(sim: &mut GpuSimulator, device: &wgpu::Device, queue: &wgpu::Queue, hz: f64) -> Result<Paced> {
        sim.set_frame_signals(true);
        let period = Duration::from_secs_f64(1.0 / hz);
        let start = Instant::now();
        let end = start + Duration::from_secs_f64(PACED_SECONDS);
        let (mut tick, mut frames, mut missed) = (start, 0usize, 0usize);
        let mut submitted: VecDeque<Instant> = VecDeque::new();
        let (mut intervals, mut latencies) = (Vec::new(), Vec::new());
        let mut last_arrival: Option<Instant> = None;
        let mut collect = |sim: &mut GpuSimulator, submitted: &mut VecDeque<Instant>| -> Result<()> {
            let events = sim.poll_reports()?;
            let now = Instant::now();
            for e in events {
                let FrameEvent::Report { .. } = e else { continue };
                if let Some(s) = submitted.pop_front() {
                    latencies.push(now.duration_since(s).as_secs_f64() * 1e3);
                }
                if let Some(t) = last_arrival {
                    intervals.push(now.duration_since(t).as_secs_f64() * 1e3);
                }
                last_arrival = Some(now);
            }
            Ok(())
        };
        while tick < end {
            // poll until the refresh, then record a frame if the GPU has caught up
            while Instant::now() + Duration::from_millis(1) < tick {
                collect(sim, &mut submitted)?;
                std::thread::sleep(Duration::from_micros(250));
            }
            sleep_until(tick);
            collect(sim, &mut submitted)?;
            if sim.reports_in_flight() < FRAMES_IN_FLIGHT {
                sim.prepare_frame()?;
                let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.paced") });
                sim.encode_frame(&mut encoder)?;
                sim.probe().submit_counted(queue, encoder.finish());
                submitted.push_back(Instant::now());
                frames += 1;
            } else {
                missed += 1;
            }
            tick += period;
        }
        while sim.reports_in_flight() > 0 {
            collect(sim, &mut submitted)?;
            std::thread::yield_now();
        }
        let (x, v) = sim.read_state()?;
        Ok(summary(hz, frames, missed, &intervals, &latencies, springsim::reference::stats::all_finite(&x, &v)))
    }

    /// The paced frames of any simulation stepped one blocking frame at a time (the CPU engine, or a GPU
    /// frame that has to block): a tick that comes while the last frame is still stepping is missed.
    pub fn run(sim: &mut dyn Simulator, hz: f64) -> Result<Paced> {
        let period = Duration::from_secs_f64(1.0 / hz);
        let start = Instant::now();
        let end = start + Duration::from_secs_f64(PACED_SECONDS);
        let (mut tick, mut frames, mut missed) = (start, 0usize, 0usize);
        let (mut intervals, mut latencies) = (Vec::new(), Vec::new());
        let mut last_done: Option<Instant> = None;
        while tick < end {
            sleep_until(tick);
            let t = Instant::now();
            sim.step_frame()?;
            let done = Instant::now();
            frames += 1;
            latencies.push(done.duration_since(t).as_secs_f64() * 1e3);
            if let Some(l) = last_done {
                intervals.push(done.duration_since(l).as_secs_f64() * 1e3);
            }
            last_done = Some(done);
            // the refreshes that passed while the frame stepped
            tick += period;
            while tick < done {
                if tick < end {
                    missed += 1;
                }
                tick += period;
            }
        }
        let (x, v) = sim.read_state()?;
        Ok(summary(hz, frames, missed, &intervals, &latencies, springsim::reference::stats::all_finite(&x, &v)))
    }
}
