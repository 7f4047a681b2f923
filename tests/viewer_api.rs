//! The library API the window uses: switching method keeps positions and velocities, rebuilding for a
//! stiffness/drag/wind change keeps them, and the interaction calls (`set_particle`, the cursor spring of
//! `set_cursor`) agree between the GPU and the CPU twin: the explicit methods drag with a stiff spring,
//! the implicit ones with a position constraint.

mod common;

use springsim::stepping::CpuSimulator;
use springsim::stepping::GpuSimulator;
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
    for m in springsim::viewer::demo_methods().into_iter().rev() {
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
    assert!(cpu.engine().is_pinned(end) && gpu.is_pinned(end));
    assert!(cpu.engine().is_pinned(0) && gpu.is_pinned(0), "the rope hangs from particle 0");
    for _ in 0..200 {
        cpu.engine_mut().step();
    }
    gpu.probe().run_steps(200).unwrap();
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
        cpu.engine_mut().step();
    }
    gpu.probe().run_steps(50).unwrap();
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
    for method in [Method::SymplecticEuler, Method::Rk4, Method::Leu, Method::ImplicitEuler] {
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
            // the explicit methods pull it with the cursor spring (free); the implicit ones pin it there
            assert_eq!(demo.sim.is_pinned(end), method.is_implicit(), "{method}: pinned while held");
            assert_eq!(demo.sim.cursor().is_some(), !method.is_implicit(), "{method}: cursor spring while held");
        }
        if method.is_implicit() {
            let (x, _) = demo.sim.read_state().unwrap();
            for c in 0..3 {
                assert!((x[end][c] as f32 - target[c]).abs() < 1e-5, "{method}: the held particle is at the cursor");
            }
        } else {
            // the spring's anchor trails a fast cursor (at most CURSOR_MAX_STEP a frame), then catches up;
            // the spring pulls the particle within a few mm of the cursor once the cursor rests
            let g = demo.grab.unwrap();
            assert!((g.anchor - at).length() <= 5.0 * springsim::viewer::CURSOR_MAX_STEP + 1e-6, "{method}: anchor {:?}", g.anchor);
            for _ in 0..12 {
                demo.simulate().unwrap();
            }
            assert_eq!(demo.grab.unwrap().anchor, target, "{method}: the anchor caught up");
            let (x, _) = demo.sim.read_state().unwrap();
            let off = (glam::Vec3::new(x[end][0] as f32, x[end][1] as f32, x[end][2] as f32) - target).length();
            eprintln!("{method}: distance to the resting cursor {off:.2e} m (moved {:.3} m)", (target - at).length());
            assert!(off < 0.01, "{method}: the held particle follows the cursor ({off} m away)");
        }
        let (x, _) = demo.sim.read_state().unwrap();
        assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())));
        demo.release().unwrap();
        assert!(!demo.sim.is_pinned(end), "{method}: let go, it is free again");
        assert!(demo.sim.cursor().is_none(), "{method}: let go, no cursor spring");
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

/// The CPU twin's cursor spring in a long run, every explicit method: the rope's free end is dragged
/// 0.42 m up and towards the pin over 1 s, then held there 2 s. It follows the cursor without being
/// pinned, nothing diverges (no speed over the limit: k₀ is never recomputed), and it rests at the
/// cursor. A spring beyond the bound (c = 2·k₀, so h²(k₀ + c) = 8 > 4) makes symplectic Euler blow up:
/// the bound of `Cursor::stable` is what keeps the step stable.
#[test]
fn cursor_drag_follows_and_stays_stable_on_the_cpu() {
    use springsim::model::Cursor;
    let m = model::rope(24, None).unwrap();
    let end = m.n_particles() - 1;
    let start = m.positions[end];
    let target_at = |f: usize| {
        let s = ((f + 1) as f64 / 30.0).min(1.0);
        [start[0] - 0.3 * s, start[1] + 0.3 * s, start[2]]
    };
    let dist = |a: [f64; 3], b: [f64; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    for method in Method::EXPLICIT {
        let mut cpu = CpuSimulator::new(&m, method, StepSettings::default()).unwrap();
        let k0 = cpu.plan().k0;
        let mut worst: f64 = 0.0;
        for f in 0..90 {
            let target = target_at(f);
            let cursor = Cursor::stable(end, target, &cpu.plan(), cpu.engine().model().drag);
            cpu.set_cursor(Some(cursor)).unwrap();
            cpu.step_frame().unwrap();
            assert!(!cpu.engine().is_pinned(end));
            let x = cpu.engine().x[end];
            if f >= 5 {
                worst = worst.max(dist([x[0], x[1], x[2]], target));
            }
        }
        let (x, v) = cpu.read_state().unwrap();
        let vmax = v.iter().map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()).fold(0.0, f64::max);
        let rest = dist(x[end], target_at(89));
        let c = cpu.engine().cursor().unwrap();
        eprintln!(
            "{method:17} c = {:.3e}/s² ({:.2} k0), d = {:.1}/s: worst lag {worst:.4} m, final distance {rest:.2e} m, max speed {vmax:.3} m/s",
            c.stiffness,
            c.stiffness / k0,
            c.damping
        );
        assert!(x.iter().all(|p| p.iter().all(|c| c.is_finite())));
        assert_eq!(cpu.plan().k0, k0, "{method}: a speed over the limit made it recompute k0");
        assert!(worst < 0.02, "{method}: the end lags the cursor by {worst} m");
        assert!(rest < 0.005, "{method}: the end rests {rest} m from the cursor");
        cpu.set_cursor(None).unwrap();
        cpu.step_frame().unwrap();
        assert!(cpu.engine().cursor().is_none());
    }
    // beyond the bound: symplectic Euler diverges
    let mut cpu = CpuSimulator::new(&m, Method::SymplecticEuler, StepSettings::default()).unwrap();
    let mut c = Cursor::stable(end, target_at(0), &cpu.plan(), cpu.engine().model().drag);
    c.stiffness = 2.0 * cpu.plan().k0;
    c.damping = 0.0;
    cpu.set_cursor(Some(c)).unwrap();
    for _ in 0..5 {
        let _ = cpu.step_frame();
    }
    let (x, _) = cpu.read_state().unwrap();
    let blown = x.iter().any(|p| p.iter().any(|c| !c.is_finite() || c.abs() > 1e3));
    assert!(blown, "a cursor spring of 2 k0 should make symplectic Euler diverge");
}

/// The overlay's solver figures come from the frame report: implicit Euler reports its CG iterations
/// and a residual within the tolerance, the explicit methods none; the drag row tells the mode; the
/// overlay builds (egui, no window) with them.
#[cfg(feature = "viewer")]
#[test]
fn overlay_shows_the_solver_and_drag_figures() {
    use springsim::viewer::{drag_mode, overlay, Demo, DemoArgs};
    let Some(ctx) = common::gpu() else { return };
    let format = springsim::wgpu::TextureFormat::Rgba8UnormSrgb;
    let args = DemoArgs { scene: "curtain".into(), size: Some(11), method: Method::ImplicitEuler, ..Default::default() };
    let mut demo = Demo::new(ctx.device.clone(), ctx.queue.clone(), ctx.adapter_name(), format, 1, &args).unwrap();
    demo.simulate().unwrap();
    let r = demo.stats.report;
    eprintln!("implicit-euler frame: {r:?}");
    assert!(r.iterations > 0 && r.substeps > 0, "{r:?}");
    assert!(r.residual.is_finite() && r.residual <= StepSettings::default().cg_tolerance * 1.01, "{r:?}");
    // single steps report too
    demo.paused = true;
    demo.step_once = true;
    demo.simulate().unwrap();
    assert!(demo.stats.report.iterations > 0 && demo.stats.report.substeps == 1, "{:?}", demo.stats.report);
    demo.paused = false;
    // a grab in implicit Euler is a position constraint, in symplectic Euler a cursor spring
    let (x, _) = demo.sim.read_state().unwrap();
    let at = glam::Vec3::new(x[60][0] as f32, x[60][1] as f32, x[60][2] as f32);
    demo.grab(60, at);
    demo.simulate().unwrap();
    assert_eq!(drag_mode(&demo), Some(None));
    demo.set_method(Method::SymplecticEuler).unwrap();
    demo.simulate().unwrap();
    assert_eq!(demo.stats.report.iterations, 0);
    let Some(Some((c, d))) = drag_mode(&demo) else { panic!("no cursor spring: {:?}", drag_mode(&demo)) };
    assert!(c > 0.2 * demo.sim.plan().k0 && d > 0.0, "c {c} d {d}");
    assert!(!demo.sim.is_pinned(60), "switched to the spring, the particle is free");
    // the overlay builds with these figures
    let egui_ctx = egui::Context::default();
    let mut st = overlay::OverlayState { help: true, ..Default::default() };
    let mut actions = Vec::new();
    let out = egui_ctx.run_pass(egui::RawInput::default(), |c| actions = overlay::show(c, &mut demo, &mut st));
    out.drop_without_applying_deltas();
    assert!(actions.is_empty(), "{actions:?}");
    demo.release().unwrap();
    assert_eq!(drag_mode(&demo), None);
}

/// `F` (`Demo::frame_scene`) frames the current positions live: after the rope has fallen and the view
/// was moved away, every particle is back in the viewport, filling it along one axis; and toggling a
/// pin updates the pin markers' list.
#[cfg(feature = "viewer")]
#[test]
fn frame_scene_fits_the_current_positions_and_pins_are_listed() {
    use springsim::viewer::{Demo, DemoArgs};
    let Some(ctx) = common::gpu() else { return };
    let format = springsim::wgpu::TextureFormat::Rgba8UnormSrgb;
    let args = DemoArgs { scene: "rope".into(), size: Some(12), width: 640, height: 480, ..Default::default() };
    let mut demo = Demo::new(ctx.device.clone(), ctx.queue.clone(), ctx.adapter_name(), format, 1, &args).unwrap();
    assert_eq!(demo.renderer.pin_markers(), 1, "the rope's pinned end is marked");
    for _ in 0..10 {
        demo.simulate().unwrap();
    }
    demo.camera.pan(500.0, 300.0, 480.0);
    demo.camera.zoom(8.0);
    demo.frame_scene().unwrap();
    let (x, _) = demo.sim.read_state().unwrap();
    let (w, h) = (640.0, 480.0);
    let (mut lo, mut hi) = ((f32::INFINITY, f32::INFINITY), (f32::NEG_INFINITY, f32::NEG_INFINITY));
    for p in &x {
        let (px, py) = demo.camera.project(glam::Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32), w, h).unwrap();
        assert!((0.0..=w).contains(&px) && (0.0..=h).contains(&py), "({px}, {py}) is out of view");
        lo = (lo.0.min(px), lo.1.min(py));
        hi = (hi.0.max(px), hi.1.max(py));
    }
    let fill = ((hi.0 - lo.0) / w).max((hi.1 - lo.1) / h);
    assert!(fill > 0.8, "the rope fills {fill:.2} of the view");
    let (xe, _) = demo.sim.read_state().unwrap();
    let end = xe.len() - 1;
    let at = glam::Vec3::new(xe[end][0] as f32, xe[end][1] as f32, xe[end][2] as f32);
    demo.toggle_pin(end, at).unwrap();
    assert_eq!(demo.renderer.pin_markers(), 2, "a pinned particle gets a marker");
}

/// A browser's canvas has no sRGB format: the scene's pipelines encode sRGB themselves on a plain target
/// (`ENCODE_SRGB` in shaders/render.wgsl). The same state drawn into `Rgba8Unorm` and `Rgba8UnormSrgb`
/// (one sample each, so that no resolve averages differently) gives the same bytes, to the rounding of
/// one encoding against the other. Fails if the plain target gets linear colours (a dark picture).
#[cfg(feature = "viewer")]
#[test]
fn a_plain_target_shows_the_same_colours_as_an_srgb_one() {
    use springsim::viewer::render::SceneRenderer;
    use springsim::viewer::{Demo, DemoArgs};
    let Some(ctx) = common::gpu() else { return };
    let args = DemoArgs { scene: "curtain".into(), size: Some(15), ..Default::default() };
    let srgb = springsim::wgpu::TextureFormat::Rgba8UnormSrgb;
    let mut demo = Demo::new(ctx.device.clone(), ctx.queue.clone(), ctx.adapter_name(), srgb, 1, &args).unwrap();
    for _ in 0..3 {
        demo.simulate().unwrap();
    }
    let (w, h) = (160, 120);
    let mut pictures = Vec::new();
    for format in [srgb, springsim::wgpu::TextureFormat::Rgba8Unorm] {
        let mut r = SceneRenderer::new(&ctx.device, format, 1);
        r.set_model(&ctx.device, &demo.model, &demo.sim);
        r.set_camera(&ctx.queue, &demo.camera, w, h, &demo.draw);
        pictures.push(r.capture(&ctx.device, &ctx.queue, &demo.sim, w, h, &demo.draw, true).unwrap());
    }
    let worst = pictures[0].iter().zip(&pictures[1]).map(|(a, b)| (*a as i32 - *b as i32).abs()).max().unwrap();
    let mean = |p: &[u8]| p.iter().map(|&b| b as f64).sum::<f64>() / p.len() as f64;
    eprintln!("sRGB target mean {:.1}, plain target mean {:.1}, largest difference {worst}", mean(&pictures[0]), mean(&pictures[1]));
    assert!(worst <= 2, "the plain target's bytes differ from the sRGB target's by up to {worst}");
}
