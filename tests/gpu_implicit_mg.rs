//! Implicit Euler's aggregation multigrid on the GPU (`shaders/implicit_mg.wgsl`) against its f64 twin
//! `linalg::spring_mg::SpringMg` (the CPU engine's preconditioner): one V-cycle, one step, and the PCG's
//! iteration count against Jacobi's. lavapipe-sized (≤ 64²). Each test prints what it measured.

mod common;

use common::{gpu, hash01, rel_err, rel_err_motion};
use springsim::cpu::implicit::FineImplicit;
use springsim::cpu::V3;
use springsim::method::{DivergencePolicy, GuardSettings, Preconditioner};
use springsim::stepping::{CpuSimulator, GpuSimulator};
use springsim::{Method, Model, Simulator, StepSettings};

const H: f64 = 1.0 / 30.0;

fn settings(precond: Preconditioner, iters: usize, tol: f64) -> StepSettings {
    StepSettings { cg_max_iterations: iters, cg_tolerance: tol, preconditioner: precond, ..Default::default() }
}

/// A curtain of n² that has swung for three frames (stretched, moving springs), its state rounded to
/// f32 (what the GPU holds) so that both sides start from the same numbers.
fn swinging_curtain(n: usize) -> (Model, Vec<[f64; 3]>, Vec<[f64; 3]>) {
    let model = springsim::model::curtain(n, None).unwrap();
    let raw = GuardSettings { policy: DivergencePolicy::Ignore, ..Default::default() };
    let s = StepSettings { guard: raw, ..settings(Preconditioner::Multigrid, 500, 1e-8) };
    let mut c = CpuSimulator::new(&model, Method::ImplicitEuler, s).unwrap();
    for _ in 0..3 {
        c.step_frame().unwrap();
    }
    let (x, v) = c.read_state().unwrap();
    let r = |a: Vec<[f64; 3]>| a.into_iter().map(|p| p.map(|c| c as f32 as f64)).collect::<Vec<_>>();
    (model, r(x), r(v))
}

fn norm(a: &[[f64; 3]]) -> f64 {
    a.iter().flat_map(|p| p.iter()).map(|c| c * c).sum::<f64>().sqrt()
}

/// (a) z = B r: one GPU V-cycle on the system of a swinging 32² curtain against SpringMg::apply in f64
/// on the CPU engine's system of the same state, for a pseudo-random r. The two systems differ by the
/// f32 rounding of the blocks (relative 1e-7 each, up to 1e-4 on the right-hand side near rest length),
/// and the GPU runs the whole cycle in f32, including the dense Cholesky of the last level: the bound is
/// a few hundred f32 ulps times that level's conditioning, not a fitted number.
#[test]
fn vcycle_matches_the_f64_twin() {
    let Some(ctx) = gpu() else { return };
    let (model, x, v) = swinging_curtain(32);
    let s = settings(Preconditioner::Multigrid, 200, 1e-6);
    let mut c = CpuSimulator::new(&model, Method::ImplicitEuler, s.clone()).unwrap();
    c.write_state(&x, &v).unwrap();
    c.engine_mut().implicit_step_h(H).unwrap();
    let mut scratch = c.engine().implicit_scratch().clone();
    let m = c.engine().model();
    let n = m.n;
    let r: Vec<[f64; 3]> = (0..n as u64).map(|i| [hash01(3 * i), hash01(3 * i + 1), hash01(3 * i + 2)]).collect();
    // the pinned rows of r are zero on both sides (the PCG's residual is)
    let r: Vec<[f64; 3]> = r.iter().enumerate().map(|(i, p)| if m.inv_mass[i] == 0.0 { [0.0; 3] } else { *p }).collect();
    let rv: Vec<V3> = r.iter().map(|p| V3::new(p[0], p[1], p[2])).collect();
    let mut z = vec![V3::zeros(); n];
    let mg = scratch.mg.as_mut().expect("the CPU engine built its hierarchy");
    let sizes = mg.sizes();
    mg.apply(&FineImplicit { m, sys: &scratch.sys }, &rv, &mut z);
    let z_ref: Vec<[f64; 3]> = z.iter().map(|p| [p.x, p.y, p.z]).collect();

    let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::ImplicitEuler, s).unwrap();
    g.write_state(&x, &v).unwrap();
    let z_gpu = g.probe().implicit_mg_apply(H, &r).unwrap();
    let e = rel_err(&z_gpu, &z_ref);
    eprintln!("levels {sizes:?}: |z| {:.4e}, GPU V-cycle relative error {e:.3e}", norm(&z_ref));
    assert!(norm(&z_ref) > 0.0);
    assert!(e < 2e-4, "GPU V-cycle against SpringMg::apply: relative error {e:e}");
}

/// (b) One implicit Euler step with the GPU multigrid against the CPU engine with SpringMg (both to a
/// relative residual of 1e-6) on a swinging 32² curtain: the positions agree relative to the motion
/// |x − x₀| of the step (measured 1.0e-6 on lavapipe). The bound, 1e-4, is the f32 floor of a
/// position (6e-8 m on a 1 m curtain) against a step's motion of a few mm, with room for Δv's own f32
/// rounding; a preconditioner that changed the solution (not only the iteration count) would miss it.
#[test]
fn step_matches_the_cpu_engine() {
    let Some(ctx) = gpu() else { return };
    let (model, x, v) = swinging_curtain(32);
    let s = settings(Preconditioner::Multigrid, 200, 1e-6);
    let mut c = CpuSimulator::new(&model, Method::ImplicitEuler, s.clone()).unwrap();
    c.write_state(&x, &v).unwrap();
    let rc = c.engine_mut().implicit_step_h(H).unwrap();
    let (xc, _) = c.read_state().unwrap();
    let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::ImplicitEuler, s).unwrap();
    g.write_state(&x, &v).unwrap();
    let h = g.plan().h;
    assert!((h - H).abs() < 1e-12, "the plan's h {h}");
    g.probe().run_steps(1).unwrap();
    let st = g.probe().cg_state_gpu().unwrap();
    let (xg, _) = g.read_state().unwrap();
    let e = rel_err_motion(&xg, &xc, &x);
    eprintln!(
        "one step: GPU multigrid {} iterations (residual {:.2e}, status {}), CPU {} (residual {:.2e}); |x − x_cpu| / |x_cpu − x₀| = {e:.3e}",
        st.iterations, st.residual, st.status, rc.iterations, rc.residual
    );
    assert_eq!(st.status, 1, "the GPU solve converged");
    assert!(e < 1e-4, "GPU step against the CPU engine: {e:e} of the motion");
}

/// (c) The PCG's iteration count on one step of a swinging 64² curtain (to 1e-5): the GPU multigrid
/// needs far fewer than the GPU Jacobi-PCG, and about as many as the CPU engine's SpringMg (the same
/// V-cycle in f64).
#[test]
fn multigrid_needs_far_fewer_iterations_than_jacobi() {
    let Some(ctx) = gpu() else { return };
    let (model, x, v) = swinging_curtain(64);
    let mut counts = Vec::new();
    for precond in [Preconditioner::Jacobi, Preconditioner::Multigrid] {
        let mut g = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::ImplicitEuler, settings(precond, 3000, 1e-5)).unwrap();
        g.write_state(&x, &v).unwrap();
        g.probe().run_steps(1).unwrap();
        let st = g.probe().cg_state_gpu().unwrap();
        assert_eq!(st.status, 1, "{}: converged", precond.name());
        counts.push(st.iterations);
    }
    let mut c = CpuSimulator::new(&model, Method::ImplicitEuler, settings(Preconditioner::Multigrid, 3000, 1e-5)).unwrap();
    c.write_state(&x, &v).unwrap();
    let cpu = c.engine_mut().implicit_step_h(H).unwrap().iterations;
    let (jacobi, mg) = (counts[0], counts[1]);
    let msg = format!("64² curtain, one step to 1e-5: GPU Jacobi {jacobi} iterations, GPU multigrid {mg}, CPU SpringMg {cpu}");
    eprintln!("{msg}");
    assert!(5 * mg < jacobi, "{msg}");
    assert!(mg <= cpu + cpu / 4 + 2, "{msg}: the GPU V-cycle preconditions as well as its twin");
}
