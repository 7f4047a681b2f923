//! The demo's closing line, for the window and the offscreen run alike: the scene, the method, the step,
//! the frames' split between simulation and drawing, the strain and the adapter.

use super::Demo;
use crate::stepping::Simulator;

/// Prints the closing line of a run of `frames` frames in `mode` (`window`, `headless offscreen`).
pub(crate) fn report(demo: &Demo, mode: &str, frames: usize) {
    let (s, d) = demo.mean_split();
    let p = demo.sim.plan();
    println!(
        "springsim demo: {mode}; scene {} ({} particles, {} springs), {}, h = {:.3e} s, {} substeps; {frames} frames: simulation {s:.2} ms + drawing {d:.2} ms per frame (drawing {:.1}% of simulation); max strain {:.4}, finite {}; adapter {}",
        demo.scene,
        demo.model.n_particles(),
        demo.model.springs.len(),
        demo.method(),
        p.h,
        p.substeps,
        100.0 * d / s.max(1e-9),
        demo.stats.max_strain,
        demo.stats.finite,
        demo.adapter
    );
}
