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

#[cfg(feature = "viewer")]
#[test]
fn mouse_pick_drag_and_pin_through_the_demo_api() {
    use springsim::viewer::{Demo, DemoArgs};
    let Some(ctx) = common::gpu() else { return };
    let format = springsim::wgpu::TextureFormat::Rgba8UnormSrgb;
    for method in [Method::SymplecticEuler, Method::Rk4, Method::Leu] {
        let args = DemoArgs { scene: "rope".into(), size: Some(12), method, ..Default::default() };
        let mut demo = Demo::new(ctx.device.clone(), ctx.queue.clone(), ctx.adapter_name(), format, 1, &args).unwrap();
        let (w, h) = (640.0, 480.0);
        // click where the free end is drawn
        let (x0, _) = demo.sim.read_state().unwrap();
        let end = x0.len() - 1;
        let p = glam::Vec3::new(x0[end][0] as f32, x0[end][1] as f32, x0[end][2] as f32);
        let (px, py) = demo.camera.project(p, w, h).unwrap();
        let (i, at) = demo.pick(px + 3.0, py - 2.0, w, h, 14.0).unwrap().expect("a particle under the cursor");
        assert_eq!(i, end, "{method}: picked the free end");
        demo.grab(i, at);
        // drag it up and towards the pin over a few frames
        let target = at + glam::Vec3::new(-0.2, 0.3, 0.0);
        for k in 1..=5 {
            demo.grab.as_mut().unwrap().target = at + (target - at) * (k as f32 / 5.0);
            demo.simulate().unwrap();
        }
        let (x, _) = demo.sim.read_state().unwrap();
        for c in 0..3 {
            assert!((x[end][c] as f32 - target[c]).abs() < 1e-5, "{method}: the held particle follows the cursor");
        }
        assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())));
        demo.release().unwrap();
        assert!(!demo.sim.is_pinned(end), "{method}: let go, it is free again");
        demo.simulate().unwrap();
        let (x, v) = demo.sim.read_state().unwrap();
        assert!((x[end][1] as f32 - target[1]).abs() > 1e-6 || v[end][1] != 0.0, "{method}: it moves once let go");
        // ctrl+click pins it where it is; it then stays
        let here = glam::Vec3::new(x[end][0] as f32, x[end][1] as f32, x[end][2] as f32);
        demo.toggle_pin(end, here).unwrap();
        assert!(demo.sim.is_pinned(end));
        for _ in 0..3 {
            demo.simulate().unwrap();
        }
        let (x2, _) = demo.sim.read_state().unwrap();
        for c in 0..3 {
            assert!((x2[end][c] as f32 - here[c]).abs() < 1e-6, "{method}: a pinned particle stays");
        }
    }
}
