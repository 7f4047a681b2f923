//! Issue #17's must-show: the drape-sphere cloth after 300 frames (10 s), every method on both backends
//! (Newton on the CPU only, where it runs): no particle deeper than 1% of the sphere's skin at the end
//! of any frame, and the cloth folded around the sphere without passing through itself: no two
//! particles that no spring joins closer than half a grid spacing at the end (`self_gap` ≥ 0.5 against
//! a thickness of one spacing; the scene has no self-collision, so this is the methods' own doing,
//! local/global's at one step a frame included). At 25×25 (the scene's builder at a smaller size), to keep lavapipe's dispatches within
//! CI's time; the scene's own 41×41 runs 60 frames of every method in `tests/colliders.rs`. Its own
//! test binary: lavapipe keeps host memory per explicit-method dispatch (measured about 130 KB, 8.5 GB
//! over this test's GPU part; not seen with the other methods' kernels), which the process returns when
//! it exits.

mod common;

use common::{cloth_gap, gpu};
use springsim::model;
use springsim::reference::model::CpuModel;
use springsim::reference::stats::penetration;
use springsim::stepping::{CpuSimulator, GpuSimulator};
use springsim::{Method, Simulator, StepSettings};

/// The CPU's part (every method). The GPU's runs in two more tests beside it: the harness runs them on
/// its two threads (one test running all in turn took 364 s on CI's two cores; split in three, 211 s
/// here).
#[test]
fn drape_sphere_after_300_frames_every_method_cpu() {
    let m = model::drape_sphere(25, None).unwrap();
    let cm = CpuModel::new(&m).unwrap();
    for method in Method::ALL {
        let t = std::time::Instant::now();
        let mut cpu = CpuSimulator::new(&m, method, StepSettings::default()).unwrap();
        let mut worst: f64 = 0.0;
        for f in 0..300 {
            cpu.step_frame().unwrap_or_else(|e| panic!("{method} CPU frame {f}: {e}"));
            worst = worst.max(penetration(&cm, &cpu.read_state().unwrap().0));
        }
        let gap = cloth_gap(&cm, &cpu.read_state().unwrap().0, 1.0 / 24.0);
        eprintln!("{method:17} CPU 300 frames: worst penetration {worst:.2e}, self_gap {gap:.3} ({:.1}s)", t.elapsed().as_secs_f64());
        assert!(worst <= 0.01, "{method}: CPU penetration {worst}");
        assert!(gap >= 0.5, "{method}: CPU self_gap {gap}");
    }
}

/// The GPU's implicit Euler, the longest run (156 s of the GPU's 260 s here), in a test of its own so
/// that the harness's two threads share the three parts about evenly.
#[test]
fn drape_sphere_after_300_frames_gpu_implicit_euler() {
    drape_gpu(&[Method::ImplicitEuler]);
}

/// The GPU's other methods.
#[test]
fn drape_sphere_after_300_frames_gpu_other_methods() {
    let methods: Vec<Method> = Method::ALL.into_iter().filter(|m| m.on_gpu() && *m != Method::ImplicitEuler).collect();
    drape_gpu(&methods);
}

/// 300 frames of each of `methods` on the GPU, checked after every frame.
fn drape_gpu(methods: &[Method]) {
    let m = model::drape_sphere(25, None).unwrap();
    let cm = CpuModel::new(&m).unwrap();
    let Some(ctx) = gpu() else { return };
    for &method in methods {
        let t = std::time::Instant::now();
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, method, StepSettings::default()).unwrap();
        let mut worst: f64 = 0.0;
        for f in 0..300 {
            g.step_frame().unwrap_or_else(|e| panic!("{method} GPU frame {f}: {e}"));
            worst = worst.max(penetration(&cm, &g.read_state().unwrap().0));
        }
        let gap = cloth_gap(&cm, &g.read_state().unwrap().0, 1.0 / 24.0);
        eprintln!("{method:17} GPU 300 frames: worst penetration {worst:.2e}, self_gap {gap:.3} ({:.1}s)", t.elapsed().as_secs_f64());
        assert!(worst <= 0.01, "{method}: GPU penetration {worst}");
        assert!(gap >= 0.5, "{method}: GPU self_gap {gap}");
    }
}
