//! One substep of every explicit method on the CPU (f64), on the 81×81 curtain (6561 particles,
//! 32158 springs) and on a 256×256 cloth (65536 particles, 390658 springs), and one GPU step of
//! symplectic Euler on the curtain when a GPU adapter is available.
//!
//! `cargo bench --bench substep` (a few minutes; `-- cpu_substep/curtain81` for a subset). The
//! reported time is per substep. The simulation advances through the measurement; the cost of a
//! substep does not depend on the state (LEU's re-linearization every h_nl is averaged in).

use criterion::{criterion_group, criterion_main, Criterion};
use springsim::cpu::CpuSimulator;
use springsim::gpu::{GpuContext, GpuSimulator};
use springsim::{Method, Model, StepSettings};
use std::time::{Duration, Instant};

/// The methods with a CPU substep (implicit Euler solves a system per step and has its own benchmarks).
const METHODS: [Method; 5] = [Method::ExplicitEuler, Method::SymplecticEuler, Method::Midpoint, Method::Rk4, Method::Leu];

/// GPU steps per measured submit (the reported time is divided by it).
const GPU_STEPS: usize = 10;

fn scenes() -> Vec<(&'static str, Model)> {
    vec![
        ("curtain81", springsim::model::curtain(81, None).expect("curtain")),
        ("cloth256", springsim::model::cloth(256, None).expect("cloth")),
    ]
}

fn cpu_substeps(c: &mut Criterion) {
    for (name, model) in scenes() {
        let big = model.springs.len() > 100_000;
        let mut group = c.benchmark_group(format!("cpu_substep/{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(if big { 1000 } else { 500 }))
            .measurement_time(Duration::from_secs(if big { 3 } else { 2 }));
        for method in METHODS {
            let mut sim = CpuSimulator::new(&model, method, StepSettings::default()).expect("simulator");
            group.bench_function(method.name(), |b| b.iter(|| sim.step()));
        }
        group.finish();
    }
}

fn gpu_steps(c: &mut Criterion) {
    let ctx = match GpuContext::headless() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("gpu_substep: no GPU adapter ({e}); skipped");
            return;
        }
    };
    eprintln!("gpu_substep: adapter {}", ctx.adapter_name());
    let model = springsim::model::curtain(81, None).expect("curtain");
    let mut sim = match GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, StepSettings::default()) {
        Ok(sim) => sim,
        Err(e) => {
            eprintln!("gpu_substep: the GPU simulator failed to start ({e}); skipped");
            return;
        }
    };
    let mut group = c.benchmark_group("gpu_substep/curtain81");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    group.bench_function(format!("{} ({GPU_STEPS} steps per submit, time per step)", Method::SymplecticEuler.name()), |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                sim.run_steps(GPU_STEPS).expect("gpu steps");
            }
            t.elapsed() / GPU_STEPS as u32
        })
    });
    group.finish();
}

criterion_group!(benches, cpu_substeps, gpu_steps);
criterion_main!(benches);
