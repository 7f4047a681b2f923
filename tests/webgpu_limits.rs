//! Every method, on the GPU, within WebGPU's default limits: a device that asks for exactly
//! `wgpu::Limits::defaults()` (8 storage buffers per shader stage, 128 MiB a storage binding, 4 bind
//! groups), what a browser grants a page, runs one frame of each method and GPU global solve on the
//! curtain, and its positions are those of the same frame under the adapter's own limits, bit for bit.
//! A kernel that binds more than a browser allows fails here, natively, without a browser.

mod common;

use springsim::gpu::{GpuContext, LimitsRequest};
use springsim::method::{GlobalSolve, Preconditioner};
use springsim::{GpuSimulator, Method, StepSettings};

/// The GPU variants: each method with its default solve, and every GPU global solve and preconditioner.
fn variants() -> Vec<(&'static str, Method, StepSettings)> {
    let with = |global, preconditioner| StepSettings { global, preconditioner, ..Default::default() };
    vec![
        ("explicit", Method::ExplicitEuler, StepSettings::default()),
        ("symplectic", Method::SymplecticEuler, StepSettings::default()),
        ("midpoint", Method::Midpoint, StepSettings::default()),
        ("rk4", Method::Rk4, StepSettings::default()),
        ("leu", Method::Leu, StepSettings::default()),
        ("implicit cg multigrid", Method::ImplicitEuler, with(GlobalSolve::Cg, Preconditioner::Multigrid)),
        ("implicit cg jacobi", Method::ImplicitEuler, with(GlobalSolve::Cg, Preconditioner::Jacobi)),
        ("local-global cholesky", Method::LocalGlobal, with(GlobalSolve::Cholesky, Preconditioner::Auto)),
        ("local-global cg jacobi", Method::LocalGlobal, with(GlobalSolve::Cg, Preconditioner::Jacobi)),
        ("local-global cg multigrid", Method::LocalGlobal, with(GlobalSolve::Cg, Preconditioner::Multigrid)),
        ("local-global chebyshev", Method::LocalGlobal, with(GlobalSolve::Chebyshev, Preconditioner::Auto)),
    ]
}

/// One frame of `method` on `model` on `ctx`'s device: the positions.
fn one_frame(ctx: &GpuContext, model: &springsim::Model, method: Method, settings: StepSettings) -> springsim::Result<Vec<[f64; 3]>> {
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, model, method, settings)?;
    if sim.needs_blocking_frame() {
        springsim::Simulator::step_frame(&mut sim)?;
    } else {
        sim.run_frames(1)?;
        sim.flush_reports()?;
    }
    Ok(springsim::Simulator::read_state(&mut sim)?.0)
}

#[test]
fn every_method_runs_a_frame_within_webgpus_default_limits() {
    let Some(native) = common::gpu() else { return };
    let webgpu = GpuContext::headless_with_limits(wgpu::Features::empty(), LimitsRequest::WebGpuDefaults)
        .expect("a device with WebGPU's default limits");
    assert_eq!(webgpu.device.limits().max_storage_buffers_per_shader_stage, 8);
    assert!(native.device.limits().max_storage_buffers_per_shader_stage > 8, "the adapter's own limits are above WebGPU's");
    let model = springsim::model::curtain(21, None).unwrap();
    let x0: Vec<[f64; 3]> = model.positions.clone();
    let mut failures = Vec::new();
    for (name, method, settings) in variants() {
        match (one_frame(&webgpu, &model, method, settings.clone()), one_frame(&native, &model, method, settings)) {
            (Ok(x), Ok(reference)) => {
                // the same kernels in layouts of their own, the parameters read as uniforms, implicit_mg_post in
                // two dispatches: the same numbers, bit for bit
                if x != reference {
                    let err = common::rel_err_motion(&x, &reference, &x0);
                    failures.push(format!("{name}: {err:.2e} (relative to the motion) from the run under the adapter's limits"));
                }
            }
            (Err(e), _) => failures.push(format!("{name}: {e}")),
            (_, Err(e)) => failures.push(format!("{name} (adapter's limits): {e}")),
        }
    }
    assert!(failures.is_empty(), "under WebGPU's default limits:\n{}", failures.join("\n"));
}
