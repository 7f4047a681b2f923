//! Criterion benchmarks of whole steps: one step of every method (all its kernels, as the simulator
//! takes it at its planned h) on the CPU (f64) and on the GPU, on Liu et al.'s 81×81 curtain and on a
//! 256×256 cloth (the cloth not in CI, see `common`). The explicit CPU methods also run with the
//! plain reference passes in place of the fused force kernel (`…/reference`), side by side; the GPU's
//! explicit methods and LEU take 10 steps per submit (`…_x10`, as in a frame), the others one.
//! Run with `cargo bench --bench substep`; docs/PERFORMANCE.md has the figures that matter to a user.

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use springsim::gpu::GpuContext;
use springsim::stepping::{CpuSimulator, GpuSimulator};
use springsim::{Method, Model, StepSettings};

/// The settings of a benchmarked step: implicit Euler's PCG capped at 10 iterations per step.
fn settings() -> StepSettings {
    StepSettings { cg_max_iterations: 10, ..Default::default() }
}

/// One step of each method on the CPU; the explicit ones also with the reference passes.
fn cpu_steps(c: &mut Criterion, name: &str, m: &Model, methods: &[Method]) {
    let mut g = c.benchmark_group(format!("cpu_step/{name}"));
    common::configure(&mut g, 2.0);
    let variants = methods.iter().flat_map(|&m| {
        let explicit = !m.is_implicit() && m != Method::Leu;
        [(m, true), (m, false)].into_iter().filter(move |&(_, fast)| fast || explicit)
    });
    for (method, fast) in variants {
        let mut sim = CpuSimulator::new(m, method, settings()).expect("valid scene");
        sim.engine_mut().set_fast_kernel(fast);
        let label = if fast { method.name().to_string() } else { format!("{}/reference", method.name()) };
        g.bench_function(label, |b| b.iter(|| sim.engine_mut().step()));
    }
    g.finish();
}

/// One step (10 for the explicit methods and LEU) of each GPU method, submitted and waited for.
fn gpu_steps(c: &mut Criterion, ctx: &GpuContext, name: &str, m: &Model) {
    let mut g = c.benchmark_group(format!("gpu_step/{name}"));
    common::configure(&mut g, 3.0);
    for method in Method::ALL.into_iter().filter(|m| m.on_gpu()) {
        let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, m, method, settings()).expect("gpu sim");
        let steps = if method.is_implicit() { 1 } else { 10 };
        let label = if steps == 1 { method.name().to_string() } else { format!("{}_x{steps}", method.name()) };
        g.bench_function(label, |b| b.iter(|| sim.probe().run_steps(steps).expect("gpu steps")));
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let gpu = GpuContext::headless().map_err(|e| eprintln!("no GPU adapter, GPU benchmarks skipped: {e}")).ok();
    for (name, m) in common::scenes() {
        // Newton's method is the CPU reference of local/global: on the curtain only
        let methods: Vec<Method> = Method::ALL.into_iter().filter(|&x| x != Method::Newton || name == "curtain81").collect();
        cpu_steps(c, name, &m, &methods);
        if let Some(ctx) = &gpu {
            gpu_steps(c, ctx, name, &m);
        }
    }
}

criterion_group!(substep, benches);
criterion_main!(substep);
