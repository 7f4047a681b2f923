//! Scripted motion (issue #17 items 1 and 5): colliders and pins moved along keyframed paths. A moving
//! sphere pushes a particle and leaves it with the sphere's speed; a moving box carries a resting
//! particle by friction; the rail scene's rings follow their path exactly while the cloth trails; the
//! GPU agrees with the reference; `encode_frame` without `prepare_frame` is refused; bad paths are
//! one-line errors.

mod common;

use common::{gpu, rel_err_motion};
use springsim::method::{DivergencePolicy, GuardSettings};
use springsim::model::{self, Collider, Forces, Model, Motion, MotionTarget, Path};
use springsim::scene::{self, SceneOptions};
use springsim::stepping::{CpuSimulator, GpuSimulator};
use springsim::{Method, Simulator, StepSettings};

/// One free particle at (0.5, 0, 0), at rest, no forces; a sphere (r = 0.2, skin 0.01) at the origin
/// moving along +x at 1 m/s for 2 s.
fn swept_particle() -> Model {
    let mut m = Model::new(Forces::none());
    m.add_particle([0.5, 0.0, 0.0], 0.01);
    m.colliders.push(Collider::sphere([0.0; 3], 0.2, 0.01, 0.3));
    m.motions.push(Motion { target: MotionTarget::Collider(0), path: Path::linear([1.0, 0.0, 0.0], 2.0) });
    m
}

fn settings() -> StepSettings {
    StepSettings { fixed_h: Some(1e-3), frame_dt: 0.02, ..Default::default() }
}

/// After 1 s the sphere's centre is at x = 1: the particle sits on its skin ahead of it (x = 1.21, to
/// the projection's rounding) and moves with it (v = (1, 0, 0): the response acts on the velocity
/// relative to the collider's; a static response would leave v = 0). The GPU agrees to f32 rounding.
#[test]
fn a_moving_sphere_pushes_a_particle_ahead_of_it() {
    let m = swept_particle();
    let mut cpu = CpuSimulator::new(&m, Method::SymplecticEuler, settings()).unwrap();
    for _ in 0..50 {
        cpu.step_frame().unwrap();
    }
    let (x, v) = cpu.read_state().unwrap();
    eprintln!("CPU after 1 s: x = {:?}, v = {:?}", x[0], v[0]);
    assert!((x[0][0] - 1.21).abs() < 1e-9 && x[0][1].abs() < 1e-12, "{:?}", x[0]);
    assert!((v[0][0] - 1.0).abs() < 1e-9, "the particle must move with the sphere: {:?}", v[0]);
    let Some(ctx) = gpu() else { return };
    let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, settings()).unwrap();
    for _ in 0..50 {
        g.step_frame().unwrap();
    }
    let (xg, vg) = g.read_state().unwrap();
    eprintln!("GPU after 1 s: x = {:?}, v = {:?}", xg[0], vg[0]);
    assert!((xg[0][0] - 1.21).abs() < 1e-4 && (vg[0][0] - 1.0).abs() < 1e-4, "{:?} {:?}", xg[0], vg[0]);
}

/// A particle resting on a box's top face (friction μ = 1) when the box starts sliding along +x at
/// u = 0.5 m/s: Coulomb friction accelerates it at μg until it moves with the box, slipping
/// u²/(2μg) = 12.7 mm on the way; after 1 s it moves at the box's speed and has gone 0.5 m less the slip.
#[test]
fn friction_carries_a_particle_on_a_moving_box() {
    let mut m = Model::new(Forces::default());
    let t = 0.01;
    m.add_particle([0.0, t, 0.0], 0.01);
    m.colliders.push(Collider::aabb([0.0, -0.5, 0.0], [1.0, 0.5, 1.0], t, 1.0));
    m.motions.push(Motion { target: MotionTarget::Collider(0), path: Path::linear([0.5, 0.0, 0.0], 5.0) });
    for (name, backend) in [("CPU", false), ("GPU", true)] {
        let (x, v) = if backend {
            let Some(ctx) = gpu() else { return };
            let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, settings()).unwrap();
            for _ in 0..50 {
                g.step_frame().unwrap();
            }
            g.read_state().unwrap()
        } else {
            let mut c = CpuSimulator::new(&m, Method::SymplecticEuler, settings()).unwrap();
            for _ in 0..50 {
                c.step_frame().unwrap();
            }
            c.read_state().unwrap()
        };
        eprintln!("{name}: after 1 s on the moving box: x = {:?}, v = {:?}", x[0], v[0]);
        let tol = if backend { 1e-4 } else { 1e-9 };
        assert!((v[0][0] - 0.5).abs() < tol, "{name}: not carried: {:?}", v[0]);
        let slip = 0.25 / (2.0 * 9.81);
        assert!((x[0][0] - (0.5 - slip)).abs() < 1e-3, "{name}: {:?}, want x = {}", x[0], 0.5 - slip);
        assert!((x[0][1] - t).abs() < 1e-4, "{name}: left the face: {:?}", x[0]);
    }
}

/// The rail scene (41×41): after 50 frames (1.67 s; the rings turned back at 1.5 s) every ring (pinned
/// particle) sits at its model position plus the path's offset at that time, 0.6 − 0.4·(t − 1.5) m
/// (exactly on the CPU, to f32 rounding on the GPU). The cloth is carried: after 10 frames, at the
/// rings' constant speed, its bottom row has moved with them (within 25%); after the turn it swings on
/// past them. The GPU follows the reference with the error relative to the motion,
/// |x_gpu − x_cpu|/|x_cpu − x₀|.
#[test]
fn rail_rings_follow_their_path_and_the_gpu_follows_the_reference() {
    let m = scene::build("rail", &SceneOptions::default()).unwrap();
    let n = 41;
    let rings: Vec<usize> = (0..m.n_particles()).filter(|&i| m.pinned[i]).collect();
    assert!(rings.len() >= 6, "{rings:?}");
    let guard = GuardSettings { policy: DivergencePolicy::Ignore, ..Default::default() };
    let s = StepSettings { frame_dt: 1.0 / 30.0, guard, ..Default::default() };
    let frames = 50;
    let t = frames as f64 / 30.0;
    let offset = 0.6 - 0.4 * (t - 1.5);
    let mut cpu = CpuSimulator::new(&m, Method::SymplecticEuler, s.clone()).unwrap();
    let bottom_dx = |x: &[[f64; 3]]| (0..n).map(|c| x[(n - 1) * n + c][0] - m.positions[(n - 1) * n + c][0]).sum::<f64>() / n as f64;
    for f in 0..frames {
        cpu.step_frame().unwrap();
        if f == 9 {
            let (x, _) = cpu.read_state().unwrap();
            let (ring, bottom) = (x[rings[0]][0] - m.positions[rings[0]][0], bottom_dx(&x));
            eprintln!("after 10 frames: rings moved {ring:.4} m, the bottom row's mean dx {bottom:.4} m");
            assert!((bottom - ring).abs() < 0.25 * ring, "the cloth should move with its rings: {bottom} vs {ring}");
        }
    }
    let (x, _) = cpu.read_state().unwrap();
    let bottom = bottom_dx(&x);
    eprintln!("after {frames} frames: rings at {offset:.4} m, the bottom row's mean dx {bottom:.4} m");
    assert!(bottom > offset, "after the turn the cloth should swing on past its rings: {bottom} vs {offset}");
    for &i in &rings {
        let want = m.positions[i][0] + offset;
        assert!((x[i][0] - want).abs() < 1e-9 && (x[i][1] - m.positions[i][1]).abs() < 1e-12, "ring {i}: {:?}, want x {want}", x[i]);
    }
    let Some(ctx) = gpu() else { return };
    let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, s).unwrap();
    for _ in 0..frames {
        g.step_frame().unwrap();
    }
    let (xg, _) = g.read_state().unwrap();
    for &i in &rings {
        assert!((xg[i][0] - x[i][0]).abs() < 1e-5, "ring {i}: GPU {:?} vs {:?}", xg[i], x[i]);
    }
    let e = rel_err_motion(&xg, &x, &m.positions);
    eprintln!("rail, symplectic Euler, {frames} frames: GPU vs reference {e:.2e} relative to the motion");
    assert!(e < 1e-3, "GPU vs reference {e:.3e}");
}

/// A host recording frames itself must write each frame's placements first: `encode_frame` alone is an
/// error naming `prepare_frame`; with it, the frames match `step_frame`'s.
#[test]
fn encode_frame_needs_prepare_frame_when_something_moves() {
    let Some(ctx) = gpu() else { return };
    let m = swept_particle();
    let s = StepSettings { guard: GuardSettings { policy: DivergencePolicy::Ignore, ..Default::default() }, ..settings() };
    let mut a = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, s.clone()).unwrap();
    let mut b = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, s).unwrap();
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    let e = a.encode_frame(&mut enc).expect_err("encode_frame without prepare_frame").to_string();
    eprintln!("{e}");
    assert!(e.contains("prepare_frame") && !e.contains('\n'), "{e}");
    for _ in 0..30 {
        a.prepare_frame().unwrap();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        a.encode_frame(&mut enc).unwrap();
        ctx.queue.submit([enc.finish()]);
        b.step_frame().unwrap();
    }
    let ((xa, va), (xb, vb)) = (a.read_state().unwrap(), b.read_state().unwrap());
    assert_eq!((xa, va), (xb, vb), "encode_frame and step_frame must step the same");
    assert!((a.time() - 0.6).abs() < 1e-9, "time {}", a.time());
}

/// Bad paths and targets: one-line errors naming the field and the value, from the library and from a
/// scene file (with its line).
#[test]
fn bad_motions_are_one_line_errors() {
    let base = swept_particle();
    let key = |t: f64, x: f64| (t, [x, 0.0, 0.0]);
    let cases: Vec<(Motion, &str, &str)> = vec![
        (
            Motion { target: MotionTarget::Collider(0), path: Path { keys: vec![key(1.0, 0.0), key(0.5, 1.0)], repeat: false } },
            "motions[1].path.keys[1].time",
            "0.5",
        ),
        (Motion { target: MotionTarget::Collider(0), path: Path { keys: vec![], repeat: false } }, "motions[1].path.keys", "[]"),
        (Motion { target: MotionTarget::Collider(0), path: Path { keys: vec![key(0.0, f64::NAN)], repeat: false } }, "offset", "NaN"),
        (Motion { target: MotionTarget::Collider(3), path: Path::linear([1.0; 3], 1.0) }, "motions[1].target", "Collider(3)"),
        (Motion { target: MotionTarget::Pins(vec![0]), path: Path::linear([1.0; 3], 1.0) }, "motions[1].target.Pins[0]", "0"),
    ];
    for (mo, field, value) in cases {
        let mut m = base.clone();
        m.motions.push(mo);
        let e = CpuSimulator::new(&m, Method::SymplecticEuler, settings()).err().expect("an error").to_string();
        eprintln!("{e}");
        assert!(e.contains(field) && e.contains(value) && !e.contains('\n'), "{e}");
    }
    let text = scene::SCENES.iter().find(|s| s.name == "rail").unwrap().text.replace("(3.0, (0.0, 0.0, 0.0))", "(1.0, (0.0, 0.0, 0.0))");
    let e =
        springsim::scene_file::Scene::parse(&text, std::path::Path::new("rail-bad.ron")).and_then(|s| s.build(&SceneOptions::default()));
    let e = e.expect_err("keys out of order").to_string();
    eprintln!("{e}");
    assert!(e.contains("rail-bad.ron") && e.contains("motions[0].path.keys[2].time") && !e.contains('\n'), "{e}");
}

/// The reference's paths: linear between keys, held outside them, repeated with their period.
#[test]
fn paths_interpolate_and_repeat() {
    let p = Path { keys: vec![(0.0, [0.0; 3]), (1.5, [0.6, 0.0, 0.0]), (3.0, [0.0; 3])], repeat: true };
    for (t, want) in [(0.75, 0.3), (1.5, 0.6), (2.25, 0.3), (3.75, 0.3), (6.0, 0.0)] {
        assert!((p.offset(t)[0] - want).abs() < 1e-12, "t = {t}: {:?}", p.offset(t));
    }
    assert!((p.velocity(0.5)[0] - 0.4).abs() < 1e-12 && (p.velocity(2.0)[0] + 0.4).abs() < 1e-12);
    assert!(model::Path::linear([1.0, 0.0, 0.0], 2.0).velocity(3.0) == [0.0; 3]);
}
