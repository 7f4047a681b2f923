//! The explicit methods' order of convergence, measured: on a smooth problem (a free, tumbling and
//! vibrating tetrahedron of damped springs under gravity and air drag, no contacts, no Rayleigh term so
//! that the equations do not depend on h) the error at a fixed time T against a fine RK4 solution
//! written in this file (not the engine's) falls by 2× per halving of h for explicit and symplectic
//! Euler (order 1), 4× for midpoint (order 2) and 16× for RK4 (order 4). A stage with a wrong weight or time drops the order and breaks the band:
//! with RK4's third stage taken to 0.75h instead of h (tried on purpose) it measured 2.006, first order.
//!
//! Measured ratios (CPU engine, f64), over h, h/2, h/4: explicit Euler 2.001-2.002 (h = T/400),
//! symplectic Euler 2.000 (T/400), midpoint 4.004-4.006 (T/200), RK4 16.29-16.53 (T/40); printed by the
//! test. Bands: within 10% of 2^p on both sides (the next order's correction to the ratio is ≤ 3.3%).

use springsim::cpu::V3;
use springsim::model::{Forces, Model};
use springsim::stepping::CpuSimulator;
use springsim::{Method, Simulator, StepSettings};

const T: f64 = 1.0;

/// Four particles of 1-1.5 kg joined by six springs (k 8-14 N/m, k_d 0.05), started 20% off their rest
/// shape with a spin: its fastest mode has ω ≈ 6 rad/s, so ωh ≤ 0.06 for the Euler steps below.
fn tetrahedron() -> Model {
    let mut m = Model::new(Forces { drag: 0.2, ..Forces::default() });
    let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 0.0, 0.9], [0.5, 0.8, 0.3]];
    for (i, q) in p.iter().enumerate() {
        m.add_particle(*q, 1.0 + 0.15 * i as f64);
    }
    let mut s = 0;
    for a in 0..4u32 {
        for b in a + 1..4 {
            m.add_spring(a, b, 8.0 + s as f64, 0.05);
            s += 1;
        }
    }
    // off the rest shape (the rest lengths were taken from p) and spinning about y
    m.positions[3] = [0.5, 1.0, 0.3];
    m.positions[0] = [-0.1, 0.0, 0.05];
    for i in 0..4 {
        let q = m.positions[i];
        m.velocities[i] = [-(q[2] - 0.3), 0.1, q[0] - 0.5];
    }
    m
}

fn run(model: &Model, method: Method, steps: usize) -> Vec<V3> {
    let settings = StepSettings { rayleigh: false, ..Default::default() };
    let mut sim = CpuSimulator::new(model, method, settings).unwrap();
    sim.set_h(T / steps as f64).unwrap();
    assert_eq!(sim.plan().alpha, 0.0);
    for _ in 0..steps {
        sim.engine_mut().step();
    }
    sim.engine().x.clone()
}

/// The reference solution, apart from the code under test: classic RK4 written here, with the force of
/// Shinya §2 (Hooke and damping along each spring, gravity, drag −d₀ m v).
fn reference(model: &Model, steps: usize) -> Vec<V3> {
    let g = V3::from(model.forces.gravity);
    let d0 = model.forces.drag;
    let deriv = |x: &[V3], v: &[V3]| -> (Vec<V3>, Vec<V3>) {
        let mut a: Vec<V3> = v.iter().map(|vi| g - vi * d0).collect();
        for sp in &model.springs {
            let (i, j) = (sp.a as usize, sp.b as usize);
            let d = x[i] - x[j];
            let l = d.norm();
            let n = d / l;
            let f = -n * (sp.k * (l - sp.rest) + sp.kd * n.dot(&(v[i] - v[j])));
            a[i] += f / model.masses[i];
            a[j] -= f / model.masses[j];
        }
        (v.to_vec(), a)
    };
    let h = T / steps as f64;
    let mut x: Vec<V3> = model.positions.iter().map(|p| V3::from(*p)).collect();
    let mut v: Vec<V3> = model.velocities.iter().map(|p| V3::from(*p)).collect();
    let axpy = |a: &[V3], b: &[V3], s: f64| a.iter().zip(b).map(|(p, q)| p + q * s).collect::<Vec<V3>>();
    for _ in 0..steps {
        let k1 = deriv(&x, &v);
        let k2 = deriv(&axpy(&x, &k1.0, h / 2.0), &axpy(&v, &k1.1, h / 2.0));
        let k3 = deriv(&axpy(&x, &k2.0, h / 2.0), &axpy(&v, &k2.1, h / 2.0));
        let k4 = deriv(&axpy(&x, &k3.0, h), &axpy(&v, &k3.1, h));
        for i in 0..x.len() {
            x[i] += (k1.0[i] + k2.0[i] * 2.0 + k3.0[i] * 2.0 + k4.0[i]) * (h / 6.0);
            v[i] += (k1.1[i] + k2.1[i] * 2.0 + k3.1[i] * 2.0 + k4.1[i]) * (h / 6.0);
        }
    }
    x
}

fn max_diff(a: &[V3], b: &[V3]) -> f64 {
    a.iter().zip(b).map(|(p, q)| (p - q).amax()).fold(0.0, f64::max)
}

#[test]
fn halving_h_divides_the_error_by_two_to_the_order() {
    let model = tetrahedron();
    // the reference: this file's RK4 at h = T/6400, whose own error is ~(1/40)⁴ of RK4's at T/160 (2e-9):
    // ~1e-15; the engine's RK4 at T/6400 agrees with it to rounding
    let reference = reference(&model, 6400);
    let agree = max_diff(&run(&model, Method::Rk4, 6400), &reference);
    eprintln!("engine's RK4 vs this file's at T/6400: {agree:.1e} m");
    let moved = max_diff(&reference, &model.positions.iter().map(|p| V3::from(*p)).collect::<Vec<_>>());
    assert!(moved > 0.3, "the tetrahedron hardly moved ({moved} m)");
    let cases = [(Method::ExplicitEuler, 1, 400), (Method::SymplecticEuler, 1, 400), (Method::Midpoint, 2, 200), (Method::Rk4, 4, 40)];
    for (method, order, n0) in cases {
        let errors: Vec<f64> = [n0, 2 * n0, 4 * n0].iter().map(|&n| max_diff(&run(&model, method, n), &reference)).collect();
        let want = 2f64.powi(order);
        let ratios = [errors[0] / errors[1], errors[1] / errors[2]];
        eprintln!(
            "{method:17} h = T/{n0}, T/{}, T/{}: errors {:.3e} {:.3e} {:.3e}, ratios {ratios:.3?} (want {want})",
            2 * n0,
            4 * n0,
            errors[0],
            errors[1],
            errors[2]
        );
        // the errors must be far above the reference's own and f64 rounding
        assert!(errors[2] > 1e-10, "{method}: error {:e} too small to measure", errors[2]);
        for r in ratios {
            assert!((0.9 * want..=1.1 * want).contains(&r), "{method}: halving h divided the error by {r:.3}, not {want}±10%");
        }
    }
    // measured 4.4e-16 m
    assert!(agree < 1e-12, "the engine's RK4 and this file's differ by {agree:e} m at T/6400");
}
