//! Host memory stays flat over a run: the process's resident memory after many pipelined frames is
//! that after a few, for the methods whose frames upload or rebuild the most (implicit Euler with its
//! multigrid, local/global with the GPU PCG and its multigrid) and the explicit family. On lavapipe the
//! "GPU" buffers and the driver's compiled shaders live in host memory too, so a driver that kept a
//! shader variant per frame (as Mesa 22.3 did for uniform-buffer values before the parameter blocks
//! became storage), a staging buffer never reclaimed, or a report slot never unmapped shows here as
//! growth. One test alone in its binary: the resident memory is the process's.
//!
//! Measured at 64² (`springsim bench --scene cloth --size 64 --frames 10` and `--frames 100`, lavapipe,
//! 2026-11-29): local/global `cg` + multigrid 9,487 → 9,532 B a particle, implicit Euler (multigrid, the
//! pipelined planned steps) 8,446 → 8,442, symplectic Euler 4,225 → 4,204; implicit Euler with its
//! adaptive step on the device (2026-11-30) 37,919 → 37,931.

mod common;

use springsim::method::{GlobalSolve, Preconditioner};
use springsim::stepping::GpuSimulator;
use springsim::{Method, StepSettings};

#[test]
fn resident_memory_is_flat_over_pipelined_frames() {
    let Some(ctx) = common::gpu() else { return };
    let model = springsim::model::cloth(32, None).unwrap();
    let cases = [
        (Method::ImplicitEuler, StepSettings { adaptive: false, preconditioner: Preconditioner::Multigrid, ..Default::default() }),
        // the adaptive step on the device: its frame records every trial slot's dispatches
        (Method::ImplicitEuler, StepSettings { preconditioner: Preconditioner::Multigrid, ..Default::default() }),
        (Method::LocalGlobal, StepSettings { global: GlobalSolve::Cg, preconditioner: Preconditioner::Multigrid, ..Default::default() }),
        (Method::SymplecticEuler, StepSettings::default()),
    ];
    for (method, settings) in cases {
        let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, method, settings).unwrap();
        // 20 frames first: the adaptive frame's recorded commands (two frames in flight) reach their
        // plateau by then (measured 191.9 MB from frame 20 to frame 160 at 32²); then two windows of 40
        // frames. A leak grows in both (the multigrid growth this guards against was ~3 KB a particle a
        // frame, 3 MB a frame here: +60% a window); the process's resident memory can also step once
        // (the allocator's arenas, the driver's threads: one CI run read 195.1 → 225.1 MB between frames
        // 20 and 60), which shows in one window only.
        sim.run_frames(20).unwrap();
        let Some(first) = springsim::memory::resident() else {
            common::skipped("no /proc/self/status");
            return;
        };
        let mut marks = vec![first];
        for _ in 0..2 {
            sim.run_frames(40).unwrap();
            marks.push(springsim::memory::resident().unwrap());
        }
        let growth: Vec<f64> = marks.windows(2).map(|w| w[1] as f64 / w[0] as f64 - 1.0).collect();
        eprintln!(
            "{method}: resident {:.1} / {:.1} / {:.1} MB after 20 / 60 / 100 frames ({:+.2}%, {:+.2}%)",
            marks[0] as f64 / 1e6,
            marks[1] as f64 / 1e6,
            marks[2] as f64 / 1e6,
            100.0 * growth[0],
            100.0 * growth[1]
        );
        let least = growth.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(
            least < 0.05,
            "{method}: resident memory grew {:.1}% and {:.1}% over two windows of 40 frames",
            100.0 * growth[0],
            100.0 * growth[1]
        );
        assert_eq!(sim.reports_in_flight(), 0);
    }
}
