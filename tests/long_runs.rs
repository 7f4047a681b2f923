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
fn resident_memory_is_flat_over_forty_pipelined_frames() {
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
        // plateau by then (measured 191.9 MB from frame 20 to frame 160 at 32²)
        sim.run_frames(20).unwrap();
        let Some(early) = springsim::memory::resident() else {
            common::skipped("no /proc/self/status");
            return;
        };
        sim.run_frames(40).unwrap();
        let late = springsim::memory::resident().unwrap();
        let growth = late as f64 / early as f64 - 1.0;
        eprintln!(
            "{method}: resident {:.1} MB after 20 frames, {:.1} MB after 60 ({:+.2}%)",
            early as f64 / 1e6,
            late as f64 / 1e6,
            100.0 * growth
        );
        // the multigrid growth this guards against was ~3 KB a particle a frame (3 MB a frame here)
        assert!(growth < 0.05, "{method}: resident memory grew {:.1}% over 40 frames", 100.0 * growth);
        assert_eq!(sim.reports_in_flight(), 0);
    }
}
