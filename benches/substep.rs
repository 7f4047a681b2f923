//! Criterion benchmarks: one step of every method on the CPU (f64) on Liu et al.'s curtain and on a
//! 256×256 cloth, and one symplectic-Euler step on the GPU when an adapter is found.
//! Figures are recorded in docs/BENCHMARKS.md (`cargo bench --bench substep`).

use criterion::{criterion_group, criterion_main, Criterion};
use springsim::gpu::GpuContext;
use springsim::stepping::CpuSimulator;
use springsim::stepping::GpuSimulator;
use springsim::{model, Method, Model, Simulator, StepSettings};
use std::time::Duration;

/// One step of each method; the explicit ones also with the plain reference passes in place of the fused
/// force kernel (`…/reference`), side by side in the same run.
fn cpu_steps(c: &mut Criterion, name: &str, m: &Model, methods: &[Method]) {
    let mut g = c.benchmark_group(format!("cpu_step/{name}"));
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    let variants = methods.iter().flat_map(|&m| {
        let explicit = !m.is_implicit() && m != Method::Leu;
        [(m, true), (m, false)].into_iter().filter(move |&(_, fast)| fast || explicit)
    });
    for (method, fast) in variants {
        let settings = StepSettings { cg_max_iterations: 10, ..Default::default() };
        let mut sim = CpuSimulator::new(m, method, settings).expect("valid scene");
        sim.set_fast_kernel(fast);
        let label = if fast { method.name().to_string() } else { format!("{}/reference", method.name()) };
        g.bench_function(label, |b| {
            b.iter(|| {
                if method == Method::ImplicitEuler {
                    sim.step_frame().expect("implicit frame");
                } else {
                    sim.step();
                }
            })
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let curtain = model::curtain(81, None).expect("curtain");
    cpu_steps(c, "curtain81", &curtain, &Method::ALL);
    let cloth = model::cloth(256, None).expect("cloth");
    cpu_steps(c, "cloth256", &cloth, &[Method::SymplecticEuler, Method::Rk4]);
    match GpuContext::headless() {
        Ok(ctx) => {
            let mut g = c.benchmark_group(format!("gpu_step/curtain81 ({})", ctx.adapter_name()));
            g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
            for method in [Method::SymplecticEuler, Method::Rk4] {
                let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &curtain, method, StepSettings::default()).expect("gpu sim");
                // 10 steps in one submit, as in a frame; criterion reports the time of the 10.
                g.bench_function(format!("{}_x10", method.name()), |b| b.iter(|| sim.run_steps(10).expect("gpu steps")));
            }
            g.finish();
        }
        Err(e) => eprintln!("no GPU adapter, GPU benchmarks skipped: {e}"),
    }
}

criterion_group!(substep, benches);
criterion_main!(substep);
