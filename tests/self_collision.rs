//! Self-collision (issue #17 item 2): the GPU's spatial hash (counting sort with u32 atomics) equals
//! the reference's, the GPU repulsion matches the reference, two GPU runs are bitwise equal, the
//! `folds` scene settles with its layers apart (`self_gap` ≥ 0.5 by the reference hash) on the CPU in
//! every method and on the GPU, and falls through itself without it, the drape scenes (which have no
//! self-collision) fold without passing through themselves, two crossing strands stay apart, and bad
//! input is a one-line error.

mod common;

use common::{cloth_gap, gpu, hash01};
use springsim::cpu::V3;
use springsim::model::{self, Forces, Model, SelfCollision};
use springsim::reference::model::CpuModel;
use springsim::reference::self_collision::{self_collide_pass, self_gap, SpatialHash};
use springsim::stepping::{CpuSimulator, GpuSimulator};
use springsim::{Method, Simulator, StepSettings};

fn v3(x: &[[f64; 3]]) -> Vec<V3> {
    x.iter().map(|p| V3::from(*p)).collect()
}

/// A dense cloud of `n` free particles in a 0.2 m box, at rest, no forces, with zero-stiffness springs
/// joining every 7th particle to the next (so the joined pairs must be skipped); self-collision of
/// thickness 0.03 (several particles a bucket and contacts everywhere).
fn cloud(n: usize) -> Model {
    let mut m = Model::new(Forces::none());
    for i in 0..n as u64 {
        m.add_particle([0.1 * hash01(3 * i), 0.1 * hash01(3 * i + 1), 0.1 * hash01(3 * i + 2)], 0.01 * (1.5 + hash01(7000 + i)));
        m.velocities[i as usize] = [hash01(9000 + i), hash01(9100 + i), hash01(9200 + i)];
    }
    for i in (0..n as u32 - 1).step_by(7) {
        m.add_spring(i, i + 1, 0.0, 0.0);
    }
    m.pin(5);
    m.self_collision = Some(SelfCollision { thickness: 0.03, cell: Some(0.04), passes: 1 });
    m
}

/// One step of size h with no force changes nothing but what the self-collision does.
fn one_step() -> StepSettings {
    StepSettings { fixed_h: Some(1e-9), frame_dt: 1e-9, ..Default::default() }
}

/// The GPU's hash (bucket of every particle, the T + 1 starts, the particles by bucket in index order)
/// is the reference's, on the cloud and on the `folds` cloth after 40 steps.
#[test]
fn gpu_hash_equals_the_reference() {
    let Some(ctx) = gpu() else { return };
    let folds = model::folds(24, None).unwrap();
    for (name, m, steps) in [("cloud", cloud(3000), 0), ("folds", folds, 40)] {
        let settings = if steps == 0 { one_step() } else { StepSettings::default() };
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, settings).unwrap();
        if steps > 0 {
            g.probe().run_steps(steps).unwrap();
        }
        let (x, _) = g.read_state().unwrap();
        let sc = m.self_collision.unwrap();
        let r = SpatialHash::build(&v3(&x), sc.cell_size());
        let h = g.probe().self_collision_hash().unwrap().expect("self-collision is on");
        let multi = r.counts.iter().filter(|&&c| c > 1).count();
        eprintln!(
            "{name}: {} particles, {} buckets, {multi} holding more than one, largest {}",
            x.len(),
            r.table,
            r.counts.iter().max().unwrap()
        );
        assert_eq!(h.bucket, r.bucket, "{name}: buckets");
        assert_eq!(h.start, r.start, "{name}: starts (the prefix sum)");
        assert_eq!(h.sorted, r.sorted, "{name}: the particles by bucket");
        assert!(multi > 10, "{name}: the hash is exercised");
    }
}

/// One self-collision pass on the GPU equals the reference's pass on the same (f32) state, relative to
/// the motion it makes (measured: 6e-7 in x, 2e-7 in v on lavapipe; tolerance 1e-5), the pinned particle
/// stays.
#[test]
fn gpu_repulsion_matches_the_reference() {
    let Some(ctx) = gpu() else { return };
    let m = cloud(3000);
    let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, one_step()).unwrap();
    let (x0, v0) = g.read_state().unwrap();
    g.probe().run_steps(1).unwrap();
    let (xg, vg) = g.read_state().unwrap();
    let cm = CpuModel::new(&m).unwrap();
    let (mut x, mut v) = (v3(&x0), v3(&v0));
    self_collide_pass(&cm, &m.self_collision.unwrap(), &mut x, &mut v);
    let (mut num, mut den, mut vnum, mut vden) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for i in 0..x.len() {
        num = num.max((V3::from(xg[i]) - x[i]).norm());
        den = den.max((x[i] - V3::from(x0[i])).norm());
        vnum = vnum.max((V3::from(vg[i]) - v[i]).norm());
        vden = vden.max((v[i] - V3::from(v0[i])).norm());
    }
    eprintln!("largest push {den:.3e} m, GPU − reference {num:.3e} m; largest Δv {vden:.3e}, GPU − reference {vnum:.3e}");
    assert!(den > 1e-3 && vden > 1e-2, "the pass moves the particles");
    assert!(num / den < 1e-5, "positions: {num} vs motion {den}");
    assert!(vnum / vden < 1e-5, "velocities: {vnum} vs change {vden}");
    assert_eq!(xg[5], x0[5], "the pinned particle stays");
}

/// Two GPU runs of 20 steps of the dense cloud are bitwise equal (the per-bucket sort makes the
/// scatter's atomic order irrelevant).
#[test]
fn gpu_self_collision_is_deterministic() {
    let Some(ctx) = gpu() else { return };
    let mut m = cloud(4000);
    m.forces = Forces::default();
    let settings = StepSettings { fixed_h: Some(1e-3), frame_dt: 1e-3, ..Default::default() };
    let run = || {
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::SymplecticEuler, settings.clone()).unwrap();
        g.probe().run_steps(20).unwrap();
        g.read_state().unwrap()
    };
    let (a, b) = (run(), run());
    let moved = a.0.iter().zip(&m.positions).filter(|(p, q)| p != q).count();
    assert!(moved > 1000, "{moved} particles moved");
    assert!(a == b, "two runs differ");
}

/// `folds` (24×24, the scene's 60 frames) with `method` on the CPU: the final gap by the reference hash.
fn folds_cpu(method: Method, settings: StepSettings, self_collision: bool) -> f64 {
    let mut m = model::folds(24, None).unwrap();
    let sc = m.self_collision.unwrap();
    if !self_collision {
        m.self_collision = None;
    }
    let mut cpu = CpuSimulator::new(&m, method, settings).unwrap();
    for f in 0..60 {
        cpu.step_frame().unwrap_or_else(|e| panic!("{method} frame {f}: {e}"));
    }
    let (x, _) = cpu.read_state().unwrap();
    let lo = x.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
    let gap = self_gap(cpu.engine().model(), &sc, &v3(&x));
    eprintln!("folds, {method}, self-collision {self_collision}: self_gap {gap:.3}, lowest y {lo:.4}");
    assert!(lo > -1e-9, "on the ground");
    gap
}

/// The folds settle onto each other with no two unjoined particles closer than half the thickness, on
/// the CPU in every method at its default step: local/global's is one step a frame, where a layer
/// moves more than the thickness in one step, held apart by the contacts it keeps through its global
/// solves (reference::contact); without self-collision the layers fall through each other and the
/// gap is far smaller.
#[test]
fn folds_settle_apart_on_the_cpu() {
    for method in Method::ALL {
        let gap = folds_cpu(method, StepSettings::default(), true);
        assert!(gap >= 0.5, "{method}: self_gap {gap}");
    }
    let off = folds_cpu(Method::SymplecticEuler, StepSettings::default(), false);
    assert!(off < 0.25, "without self-collision: self_gap {off}");
}

/// The same on the GPU (symplectic Euler, the scene's method, and local/global at its one step a
/// frame), the gap checked by the reference hash; a frame records exactly the dispatches the cost
/// model plans.
#[test]
fn folds_settle_apart_on_the_gpu() {
    let Some(ctx) = gpu() else { return };
    for method in [Method::SymplecticEuler, Method::LocalGlobal] {
        folds_gpu(&ctx, method);
    }
}

fn folds_gpu(ctx: &springsim::gpu::GpuContext, method: Method) {
    let m = model::folds(24, None).unwrap();
    let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, method, StepSettings::default()).unwrap();
    let before = g.probe().cost();
    g.step_frame().unwrap();
    let got = g.probe().cost().since(&before);
    let model = g.probe().cost_model();
    assert_eq!(got.dispatches, model.dispatches(), "counted vs planned dispatches");
    assert_eq!(
        got.dispatches_in(springsim::gpu::profiling::cost::Phase::Collide),
        model.dispatches_in(springsim::gpu::profiling::cost::Phase::Collide)
    );
    for _ in 1..60 {
        g.step_frame().unwrap();
    }
    let (x, _) = g.read_state().unwrap();
    let gap = self_gap(g.model(), &m.self_collision.unwrap(), &v3(&x));
    eprintln!("folds on the GPU, {method}: self_gap {gap:.3}, {} dispatches a frame", model.dispatches());
    assert!(gap >= 0.5, "{method}: self_gap {gap}");
}

/// The drape scenes as shipped (`scenes/drape.ron`, `scenes/drape-sphere.ron`: their bending, no
/// self-collision; at 21×21) for 200 frames under every method at its default step, Newton aside (a
/// CPU reference, seconds a frame), on the CPU: every 20 frames no two particles that no spring joins
/// are closer than half the grid spacing ([`cloth_gap`]). The bending keeps the folds wider than the
/// grid; the builders' cloth without it slips through itself (explicit Euler's drape: 0.005).
#[test]
fn drape_scenes_fold_without_passing_through_themselves() {
    for name in ["drape", "drape-sphere"] {
        let m = springsim::scene::build(name, &springsim::scene::SceneOptions { size: Some(21), ..Default::default() }).unwrap();
        let cm = CpuModel::new(&m).unwrap();
        for method in Method::ALL.into_iter().filter(|&m| m != Method::Newton) {
            let mut cpu = CpuSimulator::new(&m, method, StepSettings::default()).unwrap();
            let mut worst: f64 = 1.0;
            for f in 0..200 {
                cpu.step_frame().unwrap_or_else(|e| panic!("{name}, {method}, frame {f}: {e}"));
                if f % 20 == 19 {
                    worst = worst.min(cloth_gap(&cm, &cpu.read_state().unwrap().0, 1.0 / 20.0));
                }
            }
            eprintln!("{name}, {method}: smallest gap {worst:.3}");
            assert!(worst >= 0.5, "{name}, {method}: gap {worst}");
        }
    }
}

/// Two strands crossing at right angles, one 0.05 m above the other and moving down onto it at
/// 0.5 m/s, no gravity: with self-collision the upper one stops on the lower (at the crossing it stays
/// above it); without, it passes through.
#[test]
fn crossing_strands_do_not_pass_through_each_other() {
    let build = |on: bool| {
        let mut m = Model::new(Forces::none());
        let n = 21;
        let s = 0.02;
        for (dir, y) in [([1.0, 0.0, 0.0], 0.0), ([0.0, 0.0, 1.0], 0.05)] {
            let first = m.n_particles() as u32;
            for i in 0..n {
                let t = (i as f64 - 10.0) * s;
                let id = m.add_particle([dir[0] * t, y, dir[2] * t], 0.001) as usize;
                if y > 0.0 {
                    m.velocities[id] = [0.0, -0.5, 0.0];
                }
            }
            for i in 0..n as u32 - 1 {
                m.add_spring(first + i, first + i + 1, 50.0, 0.0);
            }
            for i in 0..n as u32 - 2 {
                m.add_spring(first + i, first + i + 2, 5.0, 0.0);
            }
        }
        // the lower strand's ends are held
        m.pin(0);
        m.pin(20);
        if on {
            m.self_collision = Some(SelfCollision::new(0.025));
        }
        m
    };
    let settings = StepSettings { fixed_h: Some(1e-3), frame_dt: 0.01, ..Default::default() };
    let run = |on: bool| {
        let mut cpu = CpuSimulator::new(&build(on), Method::SymplecticEuler, settings.clone()).unwrap();
        for _ in 0..30 {
            cpu.step_frame().unwrap();
        }
        let (x, _) = cpu.read_state().unwrap();
        // the crossing particles: 10 (lower) and 31 (upper)
        x[31][1] - x[10][1]
    };
    let (on, off) = (run(true), run(false));
    eprintln!("upper − lower at the crossing after 0.3 s: {on:.4} m with self-collision, {off:.4} m without");
    assert!(on > 0.02, "with self-collision the upper strand stays above: {on}");
    assert!(off < 0.0, "without, it passes through: {off}");
}

/// Bad settings are one-line errors naming the field and the value.
#[test]
fn bad_self_collision_is_a_one_line_error() {
    let base = model::rope(4, None).unwrap();
    let cases = [
        (SelfCollision { thickness: 0.0, cell: None, passes: 1 }, "self_collision.thickness", "0"),
        (SelfCollision { thickness: -0.01, cell: None, passes: 1 }, "self_collision.thickness", "-0.01"),
        (SelfCollision { thickness: f64::NAN, cell: None, passes: 1 }, "self_collision.thickness", "NaN"),
        (SelfCollision { thickness: 0.01, cell: Some(0.0), passes: 1 }, "self_collision.cell", "0"),
        (SelfCollision { thickness: 0.01, cell: Some(0.005), passes: 1 }, "self_collision.cell", "0.005"),
        (SelfCollision { thickness: 0.01, cell: Some(f64::INFINITY), passes: 1 }, "self_collision.cell", "inf"),
        (SelfCollision { thickness: 0.01, cell: None, passes: 0 }, "self_collision.passes", "0"),
    ];
    for (sc, field, value) in cases {
        let mut m = base.clone();
        m.self_collision = Some(sc);
        let e = CpuSimulator::new(&m, Method::Rk4, StepSettings::default()).err().expect("an error");
        let s = e.to_string();
        eprintln!("{s}");
        assert!(s.contains(field) && s.contains(value) && !s.contains('\n'), "{s}");
    }
}
