//! The library API the window uses: switching method keeps positions and velocities, rebuilding for a
//! stiffness/drag/wind change keeps them, and the interaction calls (`set_particle`) agree between the
//! GPU and the CPU twin.

mod common;

use springsim::cpu::CpuSimulator;
use springsim::gpu::GpuSimulator;
use springsim::{model, Method, Simulator, StepSettings};

#[cfg(feature = "viewer")]
#[test]
fn switching_method_in_the_demo_keeps_positions_and_velocities() {
    use springsim::viewer::{Demo, DemoArgs};
    let Some(ctx) = common::gpu() else { return };
    let args = DemoArgs { scene: "curtain".into(), size: Some(15), ..Default::default() };
    let format = springsim::wgpu::TextureFormat::Rgba8UnormSrgb;
    let mut demo = Demo::new(ctx.device.clone(), ctx.queue.clone(), ctx.adapter_name(), format, 1, &args).unwrap();
    for _ in 0..5 {
        demo.simulate().unwrap();
    }
    let (x0, v0) = demo.sim.read_state().unwrap();
    assert!(v0.iter().any(|v| v.iter().any(|c| c.abs() > 1e-3)), "the curtain should be moving");
    for m in Method::ALL.iter().rev().copied() {
        demo.set_method(m).unwrap();
        assert_eq!(demo.method(), m);
        let (x, v) = demo.sim.read_state().unwrap();
        assert_eq!(x, x0, "{m}: positions changed on switching");
        assert_eq!(v, v0, "{m}: velocities changed on switching");
    }
    // it goes on from there in the new method
    demo.simulate().unwrap();
    let (x1, _) = demo.sim.read_state().unwrap();
    assert!(x1.iter().all(|p| p.iter().all(|c| c.is_finite())));
    assert!(common::rel_err(&x1, &x0) > 0.0);
    // a stiffness change rebuilds the simulation with the state carried over
    let (x1, v1) = demo.sim.read_state().unwrap();
    demo.controls.stiffness_scale = 2.0;
    demo.rebuild(true).unwrap();
    let (x2, v2) = demo.sim.read_state().unwrap();
    assert_eq!(x2, x1);
    assert_eq!(v2, v1);
    assert_eq!(demo.method(), Method::ExplicitEuler);
}

#[test]
fn set_particle_gpu_matches_the_cpu_twin() {
    let Some(ctx) = common::gpu() else { return };
    let m = model::rope(16, None).unwrap();
    let settings = StepSettings::default();
    let mut cpu = CpuSimulator::new(&m, Method::SymplecticEuler, settings.clone()).unwrap();
    let mut gpu = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, settings).unwrap();
    gpu.set_h(cpu.plan().h).unwrap();
    cpu.set_h(cpu.plan().h).unwrap();
    let end = 15;
    // the free end, held a little off its start (x = 0.5): a mouse drag
    let held = [0.45, -0.05, 0.02];
    for s in [&mut cpu as &mut dyn FnMutSet, &mut gpu as &mut dyn FnMutSet] {
        s.set(end, held, [0.0; 3], true);
        s.set(7, [-0.5 + 7.0 / 15.0, 0.01, 0.0], [0.0, 0.2, 0.0], false);
    }
    assert!(cpu.is_pinned(end) && gpu.is_pinned(end));
    assert!(cpu.is_pinned(0) && gpu.is_pinned(0), "the rope hangs from particle 0");
    for _ in 0..200 {
        cpu.step();
    }
    gpu.run_steps(200).unwrap();
    let (xc, _) = cpu.read_state().unwrap();
    let (xg, _) = gpu.read_state().unwrap();
    for c in 0..3 {
        assert!((xc[end][c] - held[c]).abs() < 1e-6, "the pinned end moved on the CPU");
        assert!((xg[end][c] - held[c]).abs() < 1e-6, "the pinned end moved on the GPU");
    }
    let err = common::rel_err(&xg, &xc);
    assert!(err < 1e-3, "GPU vs CPU after set_particle: rel err {err:.3e}");
    // unpin: it falls again
    cpu.set_particle(end, held, [0.0; 3], false).unwrap();
    gpu.set_particle(end, held, [0.0; 3], false).unwrap();
    for _ in 0..50 {
        cpu.step();
    }
    gpu.run_steps(50).unwrap();
    let (xc, _) = cpu.read_state().unwrap();
    let (xg, _) = gpu.read_state().unwrap();
    assert!(xc[end][1] < held[1] - 1e-4 && xg[end][1] < held[1] - 1e-4, "the freed end should fall");
}

trait FnMutSet {
    fn set(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool);
}
impl FnMutSet for CpuSimulator {
    fn set(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) {
        self.set_particle(i, x, v, pinned).unwrap();
    }
}
impl FnMutSet for GpuSimulator {
    fn set(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) {
        self.set_particle(i, x, v, pinned).unwrap();
    }
}
