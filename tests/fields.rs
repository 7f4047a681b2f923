//! Force fields (issue #17 item 4): point attractors and repellers, vortices, their falloffs and boxes,
//! and the gusting aerodynamic wind on triangles. The formulas against hand-computed values, a particle
//! in a vortex orbiting its axis, a repeller pushing a rope away, a wind raising a hanging flag's tip
//! (every method, CPU and GPU), the GPU held to the reference with every field on, and bad input as
//! one-line errors.

mod common;

use common::{gpu, rel_err_motion};
use springsim::cpu::{CpuModel, V3};
use springsim::method::{DivergencePolicy, GuardSettings};
use springsim::model::{self, AeroWind, Falloff, Field, Forces, Model};
use springsim::reference::fields::{aero_accel, falloff, field_accel, one_field, CpuField};
use springsim::stepping::{CpuSimulator, GpuSimulator};
use springsim::{Method, Simulator, StepSettings};

fn close(a: V3, b: V3, tol: f64) -> bool {
    (a - b).norm() <= tol * b.norm().max(1e-12)
}

/// Settings without the divergence guard (the fields put energy in, which is what they are for) and
/// with implicit Euler on its planned step, so that both backends take the same steps.
fn settings(h: Option<f64>) -> StepSettings {
    let guard = GuardSettings { policy: DivergencePolicy::Ignore, ..Default::default() };
    StepSettings { guard, adaptive: false, fixed_h: h, ..Default::default() }
}

/// An n×n cloth, 1 m × 1 m and 0.1 kg, hanging in the x-y plane from its pinned top row (y = 1):
/// structural and shear springs, two triangles per cell with normals along +z.
fn hanging_flag(n: usize) -> Model {
    let mut m = Model::new(Forces::default());
    let s = 1.0 / (n - 1) as f64;
    let mass = 0.1 / (n * n) as f64;
    for r in 0..n {
        for c in 0..n {
            m.add_particle([c as f64 * s, 1.0 - r as f64 * s, 0.0], mass);
        }
    }
    let id = |r: usize, c: usize| (r * n + c) as u32;
    let k = 40.0 * (n - 1) as f64;
    for r in 0..n {
        for c in 0..n {
            if c + 1 < n {
                m.add_spring(id(r, c), id(r, c + 1), k, 0.0);
            }
            if r + 1 < n {
                m.add_spring(id(r, c), id(r + 1, c), k, 0.0);
            }
            if r + 1 < n && c + 1 < n {
                m.add_spring(id(r, c), id(r + 1, c + 1), k, 0.0);
                m.add_spring(id(r, c + 1), id(r + 1, c), k, 0.0);
                // counter-clockwise seen from +z: (x right, y up) → normal +z
                m.triangles.push([id(r + 1, c), id(r + 1, c + 1), id(r, c + 1)]);
                m.triangles.push([id(r + 1, c), id(r, c + 1), id(r, c)]);
            }
        }
    }
    for c in 0..n {
        m.pin(c);
    }
    m.forces.drag = 0.2;
    m
}

fn layout(fields: &[Field]) -> CpuModel {
    let mut m = Model::new(Forces::none());
    m.add_particle([0.0; 3], 1.0);
    m.fields = fields.to_vec();
    CpuModel::new(&m).unwrap()
}

#[test]
fn fields_follow_their_formulas() {
    // falloffs at 0, R/2, R and 2R (R = 2)
    let r = 2.0;
    for (code, want) in [(0, [1.0, 1.0, 1.0, 1.0]), (1, [1.0, 4.0 / 5.0, 0.5, 0.2]), (2, [1.0, 0.5, 0.0, 0.0]), (3, [1.0, 0.5, 0.0, 0.0])] {
        for (d, w) in [0.0, 1.0, 2.0, 4.0].into_iter().zip(want) {
            let got = falloff(code, r, d);
            assert!((got - w).abs() < 1e-12, "falloff {code} at {d}: {got}, expected {w}");
        }
    }
    // the smooth falloff has zero slope at both ends (central differences)
    let e = 1e-6;
    for d in [1e-3, 2.0 - 1e-3] {
        let slope = (falloff(3, r, d + e) - falloff(3, r, d - e)) / (2.0 * e);
        assert!(slope.abs() < 1e-2, "smooth falloff slope at {d}: {slope}");
    }
    // an attractor of 3 m/s² with the inverse square (r = 1) at distance 2 along (1, 2, 2)/3
    let c = [1.0, -1.0, 0.5];
    let m = layout(&[Field::point(c, 3.0, Falloff::InverseSquare { radius: 1.0 })]);
    let dir = V3::new(1.0, 2.0, 2.0) / 3.0;
    let x = V3::from(c) + dir * 2.0;
    let want = -dir * (3.0 * 1.0 / (4.0 + 1.0));
    assert!(close(field_accel(&m, x), want, 1e-12), "attractor {:?} vs {want:?}", field_accel(&m, x));
    // the same as a repeller pushes outwards
    let rep = layout(&[Field::point(c, -3.0, Falloff::InverseSquare { radius: 1.0 })]);
    assert!(close(field_accel(&rep, x), -want, 1e-12));
    // a vortex about +z (axis given unnormalised) at ρ = 0.5 from the axis, 0.7 along it: s·φ(ρ) along ẑ × r̂⊥
    let vx = Field::vortex([0.0; 3], [0.0, 0.0, 5.0], 2.0, Falloff::Linear { radius: 1.0 });
    let x = V3::new(0.3, 0.4, 0.7);
    let want = V3::new(-0.4, 0.3, 0.0) / 0.5 * (2.0 * 0.5);
    let got = one_field(&CpuField::new(&vx), x);
    assert!(close(got, want, 1e-12), "vortex {got:?} vs {want:?}");
    assert!(got.dot(&V3::new(0.3, 0.4, 0.0)).abs() < 1e-12, "a vortex is tangential");
    // the box switches a field off outside it; on its faces it acts
    let mut boxed = Field::point([0.0; 3], 1.0, Falloff::Constant);
    boxed.bounds = Some(([-1.0, -1.0, -1.0], [1.0, 0.5, 1.0]));
    let f = CpuField::new(&boxed);
    assert_eq!(one_field(&f, V3::new(0.0, 0.6, 0.0)), V3::zeros());
    assert!(one_field(&f, V3::new(0.0, 0.5, 0.0)).norm() > 0.99);
    // no direction at the centre: zero, not NaN
    assert_eq!(one_field(&f, V3::zeros()), V3::zeros());

    // the wind on one triangle: area ½, normal +z, still air against a triangle moving at −3 ẑ:
    // f = c A u² n̂ = 0.7 · 0.5 · 9 ẑ, a third of it on each vertex of mass 0.2
    let mut t = Model::new(Forces::none());
    for p in [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
        t.add_particle(p, 0.2);
        t.velocities.last_mut().unwrap()[2] = -3.0;
    }
    t.triangles.push([0, 1, 2]);
    t.aero_wind = Some(AeroWind { base: [0.0; 3], gust: [0.0; 3], frequency: 0.0, coefficient: 0.7 });
    let cm = CpuModel::new(&t).unwrap();
    let (x, v): (Vec<V3>, Vec<V3>) =
        (t.positions.iter().map(|&p| V3::from(p)).collect(), t.velocities.iter().map(|&p| V3::from(p)).collect());
    for i in 0..3 {
        let a = aero_accel(i, &cm, V3::zeros(), 0.7, &x, &v);
        assert!(close(a, V3::new(0.0, 0.0, 0.7 * 0.5 * 9.0 / 3.0 / 0.2), 1e-12), "vertex {i}: {a:?}");
    }
    // air along the plate pushes nothing; the sign follows u·n̂ whichever way the triangle faces
    assert_eq!(aero_accel(0, &cm, V3::new(5.0, 5.0, -3.0), 0.7, &x, &v), V3::zeros());
    // the gust: base + gust·(0.6 sin 2πft + 0.4 sin(2π·2.17ft + 1.1))
    let w = AeroWind { base: [1.0, 0.0, 0.0], gust: [0.0, 2.0, 0.0], frequency: 0.5, coefficient: 0.7 };
    let t1 = 0.3;
    let g = 0.6 * (std::f64::consts::PI * t1).sin() + 0.4 * (2.17 * std::f64::consts::PI * t1 + 1.1).sin();
    assert_eq!(w.at(t1), [1.0, 2.0 * g, 0.0]);
}

/// A particle 1 m from the z axis, moving at 1.5 m/s around it, in a vortex of 2 m/s² (constant falloff) about z, held by a
/// harmonic field s = 4/s² (ω = 2/s) and air drag d₀ = 1/s. The tangential push and the drag balance
/// at speed 2/1 = 2 m/s, and the circular orbit of that speed in the field has radius v/ω = 1 m: the
/// particle (its ellipse's inner radius about 0.75 m) spins up and settles onto the unit circle.
/// Without the vortex the drag would bring it to the axis. Returns per frame the (angle, radius, speed).
fn vortex_orbit<S: Simulator>(sim: &mut S, frames: usize) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for _ in 0..frames {
        sim.step_frame().unwrap();
        let (x, v) = sim.read_state().unwrap();
        let (p, u) = (x[0], v[0]);
        out.push((p[1].atan2(p[0]), (p[0] * p[0] + p[1] * p[1]).sqrt(), (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt()));
    }
    out
}

fn vortex_model() -> Model {
    let mut m = Model::new(Forces { drag: 1.0, central: Some(([0.0; 3], 4.0)), ..Forces::none() });
    m.add_particle([1.0, 0.0, 0.0], 0.5);
    m.velocities[0] = [0.0, 1.5, 0.0];
    m.fields.push(Field::vortex([0.0; 3], [0.0, 0.0, 1.0], 2.0, Falloff::Constant));
    m
}

fn check_orbit(label: &str, o: &[(f64, f64, f64)], settled: bool) {
    let mut prev = 0.0;
    let mut turned = 0.0;
    for (f, &(a, r, _)) in o.iter().enumerate() {
        let mut da = a - prev;
        if da < -std::f64::consts::PI {
            da += std::f64::consts::TAU;
        }
        assert!(da > 0.0, "{label}: the angle went back at frame {f} ({da})");
        assert!((0.5..2.0).contains(&r), "{label}: radius {r} at frame {f}");
        turned += da;
        prev = a;
    }
    let &(_, r, v) = o.last().unwrap();
    eprintln!("{label}: turned {:.2} rad, final radius {r:.4} m, speed {v:.4} m/s (analytic 1, 2)", turned);
    if !settled {
        return;
    }
    // 6 s is six drag times: the transient is down to e⁻⁶
    assert!((r - 1.0).abs() < 0.02 && (v - 2.0).abs() < 0.04, "{label}: radius {r}, speed {v}");
}

#[test]
fn a_particle_in_a_vortex_orbits_its_axis_cpu() {
    let m = vortex_model();
    for method in Method::ALL {
        let mut cpu = CpuSimulator::new(&m, method, settings(Some(2e-3))).unwrap();
        let o = vortex_orbit(&mut cpu, 180);
        check_orbit(&format!("cpu {method}"), &o, true);
    }
}

#[test]
fn a_particle_in_a_vortex_orbits_its_axis_gpu() {
    let Some(ctx) = gpu() else { return };
    let m = vortex_model();
    for method in Method::ALL.into_iter().filter(|m| m.on_gpu()) {
        // the first second (the spin-up, 500 steps) to keep lavapipe's dispatches few, held to the reference
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, method, settings(Some(2e-3))).unwrap();
        let o = vortex_orbit(&mut g, 30);
        check_orbit(&format!("gpu {method}"), &o, false);
        let mut cpu = CpuSimulator::new(&m, method, settings(Some(2e-3))).unwrap();
        let c = vortex_orbit(&mut cpu, 30);
        let worst = o.iter().zip(&c).map(|(a, b)| (a.1 - b.1).abs().max((a.2 - b.2).abs())).fold(0.0, f64::max);
        eprintln!("gpu {method}: radius and speed within {worst:.1e} of the reference over 30 frames");
        assert!(worst < 1e-3, "gpu {method}: {worst}");
    }
}

/// The rope (16 particles, 1 m along x from its pinned end at (−0.5, 0, 0)) without gravity, a repeller
/// of 4 m/s² at (0.2, −0.3, 0) falling smoothly to zero at 1 m: the rope's centre of mass moves away.
fn rope_with_repeller(on: bool) -> Model {
    let mut m = model::rope(16, None).unwrap();
    m.forces = Forces { drag: 0.5, ..Forces::none() };
    if on {
        m.fields.push(Field::point([0.2, -0.3, 0.0], -4.0, Falloff::Smooth { radius: 1.0 }));
    }
    m
}

fn com_distance<S: Simulator>(sim: &mut S, frames: usize) -> f64 {
    for _ in 0..frames {
        sim.step_frame().unwrap();
    }
    let (x, _) = sim.read_state().unwrap();
    let c = x.iter().fold([0.0; 3], |a, p| [a[0] + p[0], a[1] + p[1], a[2] + p[2]]);
    let n = x.len() as f64;
    ((c[0] / n - 0.2).powi(2) + (c[1] / n + 0.3).powi(2) + (c[2] / n).powi(2)).sqrt()
}

#[test]
fn a_repeller_pushes_a_rope_away() {
    let ctx = gpu();
    let (off, on) = (rope_with_repeller(false), rope_with_repeller(true));
    let d0 = com_distance(&mut CpuSimulator::new(&off, Method::SymplecticEuler, settings(None)).unwrap(), 20);
    for method in Method::ALL {
        let d = com_distance(&mut CpuSimulator::new(&on, method, settings(None)).unwrap(), 20);
        eprintln!("cpu {method:17}: centre of mass {d:.4} m from the repeller (without it {d0:.4})");
        assert!(d > d0 + 0.02, "cpu {method}: {d} vs {d0}");
        if let (Some(c), true) = (&ctx, method.on_gpu()) {
            let dg = com_distance(&mut GpuSimulator::new(&c.device, &c.queue, &on, method, settings(None)).unwrap(), 20);
            eprintln!("gpu {method:17}: centre of mass {dg:.4} m");
            assert!(dg > d0 + 0.02, "gpu {method}: {dg} vs {d0}");
        }
    }
}

/// The tip (bottom middle) of the 9×9 hanging flag after `frames` frames.
fn tip_height<S: Simulator>(sim: &mut S, frames: usize) -> f64 {
    for _ in 0..frames {
        sim.step_frame().unwrap();
    }
    let (x, _) = sim.read_state().unwrap();
    x[8 * 9 + 4][1]
}

fn gusty(m: &mut Model) {
    // still on average, gusting through the flag's plane (along its normal) at 0.5 Hz up to 8 m/s
    m.aero_wind = Some(AeroWind { base: [0.0, 0.0, 4.0], gust: [0.0, 0.0, 4.0], frequency: 0.5, coefficient: 0.7 });
}

#[test]
fn a_gust_raises_a_flags_tip() {
    let ctx = gpu();
    let calm = hanging_flag(9);
    let mut windy = calm.clone();
    gusty(&mut windy);
    let h0 = tip_height(&mut CpuSimulator::new(&calm, Method::SymplecticEuler, settings(None)).unwrap(), 30);
    for method in Method::ALL {
        let h = tip_height(&mut CpuSimulator::new(&windy, method, settings(None)).unwrap(), 30);
        eprintln!("cpu {method:17}: tip at {h:.4} m after 1 s (calm: {h0:.4})");
        assert!(h > h0 + 0.05, "cpu {method}: tip {h} vs calm {h0}");
        if let (Some(c), true) = (&ctx, method.on_gpu()) {
            let hg = tip_height(&mut GpuSimulator::new(&c.device, &c.queue, &windy, method, settings(None)).unwrap(), 30);
            eprintln!("gpu {method:17}: tip at {hg:.4} m");
            assert!(hg > h0 + 0.05, "gpu {method}: tip {hg} vs calm {h0}");
        }
    }
}

/// The 9×9 flag in the gusting wind with a vortex about its pole (boxed to its lower half) and an
/// inverse-square attractor, 20 frames of every GPU method against the reference: the error relative to
/// the motion. The gusts change over the run, so a wrong time on the GPU would part the two.
#[test]
fn gpu_matches_reference_with_every_field() {
    let Some(ctx) = gpu() else { return };
    let mut m = hanging_flag(9);
    gusty(&mut m);
    m.aero_wind.as_mut().unwrap().base = [1.0, 0.0, 2.0];
    let mut vortex = Field::vortex([0.0, 0.5, 0.0], [0.0, 1.0, 0.0], 3.0, Falloff::Smooth { radius: 1.5 });
    vortex.bounds = Some(([-2.0, -2.0, -2.0], [2.0, 0.5, 2.0]));
    m.fields = vec![vortex, Field::point([0.5, 0.0, 0.5], 2.0, Falloff::InverseSquare { radius: 0.3 })];
    for method in Method::ALL.into_iter().filter(|m| m.on_gpu()) {
        let mut cpu = CpuSimulator::new(&m, method, settings(None)).unwrap();
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, method, settings(None)).unwrap();
        for _ in 0..20 {
            cpu.step_frame().unwrap();
            g.step_frame().unwrap();
        }
        let (xg, _) = g.read_state().unwrap();
        let (xc, _) = cpu.read_state().unwrap();
        let e = rel_err_motion(&xg, &xc, &m.positions);
        eprintln!("{method:17} 20 frames ({} steps a frame): GPU vs reference {e:.2e} relative to the motion", g.plan().substeps);
        assert!(e < 1e-3, "{method}: {e}");
    }
}

#[test]
fn bad_fields_are_one_line_errors() {
    let ok = Field::point([0.0; 3], 1.0, Falloff::Constant);
    let mut cases: Vec<(Model, &str, &str)> = Vec::new();
    let with = |f: Field| {
        let mut m = hanging_flag(3);
        m.fields.push(f);
        m
    };
    cases.push((with(Field { strength: f64::NAN, ..ok }), "fields[0].strength", "NaN"));
    cases.push((with(Field { falloff: Falloff::Linear { radius: -1.0 }, ..ok }), "fields[0].falloff.radius", "-1"));
    cases.push((with(Field { falloff: Falloff::InverseSquare { radius: 0.0 }, ..ok }), "fields[0].falloff.radius", "0"));
    cases.push((with(Field { bounds: Some(([0.0; 3], [1.0, -1.0, 1.0])), ..ok }), "fields[0].bounds", "[1.0, -1.0, 1.0]"));
    cases.push((with(Field { bounds: Some(([0.0; 3], [1.0, 0.0, 1.0])), ..ok }), "fields[0].bounds", "empty or inverted"));
    cases.push((with(Field::vortex([0.0; 3], [0.0; 3], 1.0, Falloff::Constant)), "fields[0].axis", "[0.0, 0.0, 0.0]"));
    cases.push((with(Field { center: [0.0, f64::INFINITY, 0.0], ..ok }), "fields[0].center", "inf"));
    let mut five = hanging_flag(3);
    five.fields = vec![ok; 5];
    cases.push((five, "fields.len()", "5"));
    let air = |a: AeroWind| {
        let mut m = hanging_flag(3);
        m.aero_wind = Some(a);
        m
    };
    let w = AeroWind { base: [1.0, 0.0, 0.0], gust: [0.0; 3], frequency: 1.0, coefficient: 0.7 };
    cases.push((air(AeroWind { coefficient: -0.5, ..w }), "aero_wind.coefficient", "-0.5"));
    cases.push((air(AeroWind { frequency: f64::NAN, ..w }), "aero_wind.frequency", "NaN"));
    cases.push((air(AeroWind { gust: [f64::NAN, 0.0, 0.0], ..w }), "aero_wind.gust", "NaN"));
    let mut strands = model::rope(4, None).unwrap();
    strands.aero_wind = Some(w);
    cases.push((strands, "aero_wind", "no"));
    for (m, field, value) in cases {
        let e = CpuSimulator::new(&m, Method::Rk4, StepSettings::default()).err().expect("an error").to_string();
        eprintln!("{e}");
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(e.contains(field) && e.contains(value), "names {field} and {value}: {e}");
    }
}

/// The wind's pass is counted: a frame of the windy flag records the cost model's dispatches (one
/// `wind_kick` a step on top of the method's), per phase, and a model without the wind records none.
#[test]
fn the_wind_pass_is_in_the_cost_model() {
    let Some(ctx) = gpu() else { return };
    let calm = hanging_flag(9);
    let mut windy = calm.clone();
    gusty(&mut windy);
    for method in [Method::SymplecticEuler, Method::ImplicitEuler, Method::LocalGlobal] {
        let mut per_step = [0u64; 2];
        // local/global's global step on the GPU (the host's Cholesky cannot be recorded into one encoder)
        let global = if method == Method::LocalGlobal { springsim::GlobalSolve::Cg } else { springsim::GlobalSolve::Auto };
        let s = StepSettings { global, ..settings(None) };
        for (k, m) in [&calm, &windy].into_iter().enumerate() {
            let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, m, method, s.clone()).unwrap();
            let before = sim.probe().cost();
            sim.prepare_frame().unwrap();
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            sim.encode_frame(&mut enc).unwrap();
            let got = sim.probe().cost().since(&before);
            ctx.queue.submit([enc.finish()]);
            ctx.device.poll(springsim::wgpu::PollType::wait_indefinitely()).unwrap();
            let model = sim.probe().cost_model();
            assert_eq!((got.dispatches, got.workgroups), (model.dispatches(), model.workgroups()), "{method} wind {k}");
            for p in springsim::gpu::Phase::ALL {
                assert_eq!(got.dispatches_in(p), model.dispatches_in(p), "{method} wind {k}: {}", p.name());
            }
            per_step[k] = got.dispatches / sim.plan().substeps as u64;
            let kick = model.kernels.iter().find(|kc| kc.name == "wind_kick").map_or(0, |kc| kc.dispatches);
            assert_eq!(kick, k as u64 * sim.plan().substeps as u64, "{method}: wind_kick dispatches");
        }
        assert_eq!(per_step[1], per_step[0] + 1, "{method}: one more dispatch a step with the wind");
    }
}

/// Local/global with the host's Cholesky global step (its multi-submit driver) takes the wind's pass
/// too: held to the reference as above.
#[test]
fn local_global_with_the_host_cholesky_takes_the_wind() {
    let Some(ctx) = gpu() else { return };
    let mut m = hanging_flag(9);
    gusty(&mut m);
    let s = StepSettings { global: springsim::GlobalSolve::Cholesky, ..settings(None) };
    let mut cpu = CpuSimulator::new(&m, Method::LocalGlobal, s.clone()).unwrap();
    let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &m, Method::LocalGlobal, s).unwrap();
    for _ in 0..20 {
        cpu.step_frame().unwrap();
        g.step_frame().unwrap();
    }
    let (xg, _) = g.read_state().unwrap();
    let (xc, _) = cpu.read_state().unwrap();
    let e = rel_err_motion(&xg, &xc, &m.positions);
    let tip = xc[8 * 9 + 4][1];
    eprintln!("local-global cholesky 20 frames: GPU vs reference {e:.2e} relative to the motion, tip at {tip:.3} m");
    assert!(tip > 0.05, "the wind raised the tip: {tip}");
    assert!(e < 1e-3, "{e}");
}
