//! Errors a host can match (issue #35 item 7): each failure a host can act on is a variant whose fields
//! carry the parameter, its value and the rule ([`Bound`]), the adapter's limit and the request, the
//! solver's iteration; and each one's `Display` is the one line the CLI prints.

mod common;

use common::{gpu, hash01};
use springsim::error::{Bound, Error, HostCall, Value};
use springsim::model::Forces;
use springsim::scene_file::Scene;
use springsim::stepping::CpuSimulator;
use springsim::{GpuSimulator, Method, Preconditioner, Simulator, StepSettings};
use std::path::Path;

/// A negative mass: the model's field, the value as a number, and the rule (`> 0`).
#[test]
fn a_negative_mass_names_the_particle_its_value_and_the_rule() {
    let mut model = springsim::model::rope(5, None).unwrap();
    model.masses[3] = -2.5;
    let e = model.validate().unwrap_err();
    match &e {
        Error::InvalidModel { field, value: Value::Float(v), bound: Bound::Above { min, .. } } => {
            assert_eq!((field.as_str(), *v, *min), ("particles[3].mass", -2.5, 0.0));
        }
        other => panic!("not InvalidModel {{ particles[3].mass, Float, Above }}: {other:?}"),
    }
    assert_eq!(e.to_string(), "invalid model: particles[3].mass = -2.5: must be > 0");
    // a builder's mass: a parameter, finite and > 0
    let e = springsim::model::slinky(4, 1.0, -1.0, 1.0).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParameter { name, value: Value::Float(v), bound: Bound::Positive } if name == "mass" && *v == -1.0),
        "{e:?}"
    );
}

/// `h = -1` and a zero frame step: the setting's name, the value, `Bound::Positive`.
#[test]
fn a_bad_step_names_the_setting_and_the_bound() {
    let e = StepSettings { fixed_h: Some(-1.0), ..Default::default() }.validate().unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParameter { name, value: Value::Float(v), bound: Bound::Positive } if name == "h" && *v == -1.0),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "invalid parameter: h = -1: must be finite and > 0");
    let e = CpuSimulator::new(
        &springsim::model::rope(5, None).unwrap(),
        Method::SymplecticEuler,
        StepSettings { frame_dt: 0.0, ..Default::default() },
    )
    .err()
    .expect("a zero frame step is refused");
    assert!(
        matches!(&e, Error::InvalidParameter { name, value: Value::Float(v), bound: Bound::Positive } if name == "frame_dt" && *v == 0.0),
        "{e:?}"
    );
    // whole-number ranges and sizes carry their ends
    let e = StepSettings { cg_max_iterations: 0, ..Default::default() }.validate().unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { bound: Bound::IntRange { min: 1, max: 100_000 }, value: Value::UInt(0), .. }), "{e:?}");
    assert_eq!(e.to_string(), "invalid parameter: cg_max_iterations = 0: must be in 1..=100000");
    let e = springsim::model::cloth(2, None).unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { bound: Bound::AtLeast { min, .. }, value: Value::UInt(2), .. } if *min == 3.0), "{e:?}");
    assert_eq!(e.to_string(), "invalid parameter: size = 2: must be at least 3");
    let e = springsim::GlobalSolve::parse("lu").unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { bound: Bound::OneOf(names), .. } if names.len() == 5 && names[0] == "auto"), "{e:?}");
    assert_eq!(e.to_string(), "invalid parameter: global = lu: must be one of auto, cg, tridiagonal, cholesky, chebyshev");
}

/// The free-text constructor the front ends keep using: its reason is `Bound::Other`, its value text.
#[test]
fn the_free_text_constructor_still_builds_an_invalid_parameter() {
    let e = Error::param("wind", 3, "must be calm");
    assert!(
        matches!(&e, Error::InvalidParameter { name, value: Value::Text(v), bound: Bound::Other(r) } if name == "wind" && v == "3" && r == "must be calm")
    );
    assert_eq!(e.to_string(), "invalid parameter: wind = 3: must be calm");
}

/// The exact Jacobian of a compressed, stiff chain makes A indefinite: CG reports the iteration and the
/// curvature pᵀAp ≤ 0 it met there.
#[test]
fn a_cg_breakdown_carries_its_iteration_and_curvature() {
    let mut chain = springsim::model::rope(40, Some(1e5)).unwrap();
    chain.forces = Forces::none();
    for i in 0..40 {
        chain.positions[i][0] = -0.5 + 0.5 * i as f64 / 39.0;
        chain.velocities[i] = [hash01(i as u64), hash01(50 + i as u64), hash01(90 + i as u64)];
    }
    let exact = StepSettings {
        exact_jacobian: true,
        cg_max_iterations: 500,
        cg_tolerance: 1e-8,
        preconditioner: Preconditioner::Jacobi,
        ..Default::default()
    };
    let mut s = CpuSimulator::new(&chain, Method::ImplicitEuler, exact).unwrap();
    let e = s.step_frame().unwrap_err();
    match &e {
        Error::CgBreakdown { iteration, pap, .. } => {
            assert!(*iteration < 500, "{e}");
            assert!(*pap <= 0.0 || !pap.is_finite(), "a breakdown is pᵀAp <= 0 or not finite: {e}");
            assert!(e.to_string().starts_with(&format!("linear solve failed: CG breakdown at iteration {iteration}: pᵀAp = ")), "{e}");
        }
        other => panic!("not a CgBreakdown: {other:?}"),
    }
}

/// A scene file's error keeps its file, line and field; the library's typed error is wrapped into it.
#[test]
fn a_scene_file_error_keeps_file_line_and_field() {
    let text = "(\n    model: (builder: \"rope\", size: 8, stiffness: 300.0),\n    method: (name: \"rk4\", substep_scale: -1.0),\n    frame_dt: 0.02,\n    frames: 3,\n)\n";
    let e = Scene::parse(text, Path::new("bad.ron")).and_then(|s| s.build(&Default::default())).unwrap_err();
    assert!(matches!(&e, Error::SceneFile { path, line: 3, field, .. } if path == "bad.ron" && field == "method.substep_scale"), "{e:?}");
    assert_eq!(e.to_string().lines().count(), 1);
    // a value the library's own check refuses: the typed error is the cause
    let text = "(\n    model: (builder: \"rope\", size: 8, stiffness: 300.0),\n    method: (name: \"rk4\", cg_iterations: 0),\n    frame_dt: 0.02,\n    frames: 3,\n)\n";
    let e = Scene::parse(text, Path::new("bad.ron")).and_then(|s| s.build(&Default::default())).unwrap_err();
    match &e {
        Error::SceneFile { line: 3, field, cause: Some(cause), .. } if field == "method.cg_iterations" => {
            assert!(matches!(**cause, Error::InvalidParameter { bound: Bound::IntRange { min: 1, .. }, .. }), "{cause:?}");
            assert!(e.to_string().ends_with(&cause.to_string()), "{e}");
        }
        other => panic!("not a SceneFile with a cause: {other:?}"),
    }
}

/// Each typed variant's line is the message the CLI printed when it was a string.
#[test]
fn typed_errors_print_the_messages_they_replaced() {
    let cases: Vec<(Error, &str)> = vec![
        (
            Error::AdapterLimit {
                what: "implicit.wgsl (pcg_begin)".into(),
                limit_name: "max_storage_buffers_per_shader_stage",
                requested: 6,
                available: 4,
            },
            "GPU error: implicit.wgsl (pcg_begin) binds 6 buffers that count against the device's max_storage_buffers_per_shader_stage of 4",
        ),
        (
            Error::CgBreakdown { iteration: 3, pap: -2.0, why: "the system is not positive definite" },
            "linear solve failed: CG breakdown at iteration 3: pᵀAp = -2e0 (the system is not positive definite)",
        ),
        (
            Error::GpuCgBreakdown { steps: Some(2), local_global: true },
            "linear solve failed: GPU CG broke down in 2 global step(s) of this frame (pᵀAp <= 0: the global matrix is not positive definite)",
        ),
        (
            Error::GpuCgBreakdown { steps: None, local_global: false },
            "linear solve failed: GPU CG broke down (pᵀAp <= 0: the system is not positive definite)",
        ),
        (
            Error::NotPositiveDefinite { what: "the global matrix".into(), pivot_row: Some(7), hint: "a zero or negative mass, or a negative stiffness, does this" },
            "linear solve failed: the global matrix is not positive definite: the Cholesky factorisation (faer) met a non-positive pivot at row 7 (a zero or negative mass, or a negative stiffness, does this)",
        ),
        (
            Error::NotPositiveDefinite { what: "multigrid: the coarsest matrix (4×4)".into(), pivot_row: None, hint: "is every mass > 0?" },
            "linear solve failed: multigrid: the coarsest matrix (4×4) is not positive definite (is every mass > 0?)",
        ),
        (Error::Singular { what: "the block-tridiagonal system", block: Some(4) }, "linear solve failed: the block-tridiagonal system is singular at block 4"),
        (Error::NonFinite { what: "Newton".into(), quantity: "position" }, "linear solve failed: Newton produced a non-finite position"),
        (Error::NoDeviceCheckpoint { engine: "the CPU engine" }, "GPU error: the CPU engine keeps no device checkpoint"),
        (Error::internal_gpu("no checkpoint buffer"), "GPU error: no checkpoint buffer"),
        (Error::internal_solver("Newton solver missing"), "linear solve failed: Newton solver missing"),
        (
            Error::invalid("strain_limiting.relaxation", 2.0, Bound::Interval { min: 0.0, max: 2.0, min_open: true, max_open: true }),
            "invalid parameter: strain_limiting.relaxation = 2: must be in (0, 2)",
        ),
        (
            Error::invalid("cursor.particle", 9usize, Bound::index(4).worded("must be < the number of particles ({})")),
            "invalid parameter: cursor.particle = 9: must be < the number of particles (4)",
        ),
        (Error::model("forces.wind", [f64::NAN, 0.0, 1.0], Bound::Finite), "invalid model: forces.wind = [NaN, 0.0, 1.0]: must be finite"),
    ];
    for (e, line) in cases {
        assert_eq!(e.to_string(), line, "{e:?}");
    }
    let host = Error::NeedsHostCall(HostCall::PrepareFrame).to_string();
    assert!(host.starts_with("invalid parameter: encode_frame = without prepare_frame: this model depends on time"), "{host}");
    assert!(!host.contains("  ") && host.lines().count() == 1, "{host}");
}

/// A device that allows 4 storage buffers per shader stage (wgpu's downlevel default) cannot run
/// implicit Euler's kernels, even each in a layout of its own: the error names the kernel, the limit,
/// what the kernel binds and what the device allows. With WebGPU's default 8 they run
/// (`tests/webgpu_limits.rs`).
#[test]
fn an_adapter_limit_names_the_kernel_the_limit_the_request_and_the_adapter() {
    let Some(ctx) = gpu() else { return };
    let model = springsim::model::cloth(9, None).unwrap();
    let required_limits = wgpu::Limits { max_storage_buffers_per_shader_stage: 4, ..wgpu::Limits::default() };
    let desc = wgpu::DeviceDescriptor { label: Some("four"), required_limits, ..Default::default() };
    let (device, queue) = pollster::block_on(ctx.adapter.request_device(&desc)).unwrap();
    let e = match GpuSimulator::new(&device, &queue, &model, Method::ImplicitEuler, StepSettings::default()) {
        Err(e) => e,
        Ok(_) => panic!("implicit Euler was built with 4 storage buffers per shader stage"),
    };
    match &e {
        Error::AdapterLimit { what, limit_name, requested, available } => {
            assert_eq!((*limit_name, *available), ("max_storage_buffers_per_shader_stage", 4), "{e}");
            assert!(*requested > 4 && what.contains(".wgsl (") && what.ends_with(')'), "{e}");
        }
        other => panic!("not an AdapterLimit: {other:?}"),
    }
    let line = e.to_string();
    assert!(line.contains(" binds ") && line.contains("max_storage_buffers_per_shader_stage of 4") && line.lines().count() == 1, "{line}");
}
