//! Criterion benchmarks of the kernel families, one at a time, on Liu et al.'s 81×81 curtain and on a
//! 256×256 cloth (not in CI, see `common`):
//!
//! - CPU (f64): the force evaluation of the explicit substep (`forces`, the plain pass; the fused
//!   kernel runs inside `cpu_step/…` of the `substep` bench), LEU's linearization and its step,
//!   the collision projection (the drape scene's ground, at the same resolution). Implicit Euler's
//!   product and PCG, the local step, the global step and the multigrid V-cycle are in `global`.
//! - GPU: each family in the step that is made of it, submitted and waited for: the explicit
//!   substep (symplectic Euler, forces and integration fused, 10 per submit), LEU (10), implicit
//!   Euler (spring blocks, then the matrix-free product inside 10 Jacobi-PCG iterations), local/global
//!   with the `cg` global step (local step and global PCG) and with the multigrid V-cycle as its
//!   preconditioner; on their own: the `collide` kernel (10 dispatches on the drape's state) and the
//!   demo's vertex-normals pass (feature `viewer`).
//!
//! `cargo bench --bench kernels`.

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use springsim::cpu::forces::{accelerations, StepParams};
use springsim::cpu::leu::{leu_linearize, leu_step, Linearization};
use springsim::cpu::{collide::collide, CpuModel, Scratch, V3};
use springsim::gpu::step_end::collide::Colliders;
use springsim::gpu::GpuContext;
use springsim::scene::{self, SceneOptions};
use springsim::stepping::GpuSimulator;
use springsim::{GlobalSolve, Method, Model, Preconditioner, StepSettings};

fn state(m: &Model) -> (Vec<V3>, Vec<V3>) {
    let x = m.positions.iter().map(|a| V3::new(a[0], a[1], a[2])).collect();
    // a little motion, so that damping and the linearization have something to do
    let v = (0..m.n_particles()).map(|i| V3::new(0.0, 0.0, 0.01 * (i % 7) as f64)).collect();
    (x, v)
}

/// The drape scene at `side`×`side`, for the collision kernels.
fn drape(side: usize) -> Model {
    scene::build("drape", &SceneOptions { size: Some(side), ..Default::default() }).expect("drape")
}

fn cpu_kernels(c: &mut Criterion, name: &str, m: &Model, side: usize) {
    let cm = CpuModel::new(m).expect("model");
    let p = StepParams { h: 1.0e-4, alpha: 0.0 };
    let (x, v) = state(m);
    let mut out = vec![V3::zeros(); cm.n];
    let mut spring_f = Vec::new();
    let mut g = c.benchmark_group(format!("cpu_kernel/{name}"));
    common::configure(&mut g, 2.0);
    g.bench_function("forces", |b| b.iter(|| accelerations(&cm, &p, &x, &v, &mut out, &mut spring_f)));
    let mut lin = Linearization::default();
    let mut s = Scratch::default();
    g.bench_function("leu_linearize", |b| b.iter(|| leu_linearize(&cm, &p, &x, &v, &mut lin, &mut s)));
    leu_linearize(&cm, &p, &x, &v, &mut lin, &mut s);
    let (mut xo, mut vo) = (x.clone(), v.clone());
    g.bench_function("leu_step", |b| b.iter(|| leu_step(&cm, &p, &lin, 1.0e3, &x, &v, &mut xo, &mut vo)));
    let d = drape(side);
    let dm = CpuModel::new(&d).expect("drape");
    let (dx, dv) = state(&d);
    // below the ground: every particle is projected (the worst case)
    let dx: Vec<V3> = dx.iter().map(|p| V3::new(p.x, -0.01, p.z)).collect();
    g.bench_function("collide", |b| {
        b.iter_batched_ref(|| (dx.clone(), dv.clone()), |(x, v)| collide(&dm, x, v), criterion::BatchSize::LargeInput)
    });
    g.finish();
}

fn gpu_kernels(c: &mut Criterion, ctx: &GpuContext, name: &str, m: &Model, side: usize) {
    let mut g = c.benchmark_group(format!("gpu_kernel/{name}"));
    common::configure(&mut g, 3.0);
    let base = StepSettings { cg_max_iterations: 10, ..Default::default() };
    let local_global_cg = StepSettings { global: GlobalSolve::Cg, global_iterations: 10, ..base.clone() };
    let local_global_mg = StepSettings { preconditioner: Preconditioner::Multigrid, ..local_global_cg.clone() };
    let families = [
        ("explicit_x10", Method::SymplecticEuler, base.clone(), 10),
        ("leu_x10", Method::Leu, base.clone(), 10),
        ("implicit_pcg10", Method::ImplicitEuler, base.clone(), 1),
        ("local_global_cg", Method::LocalGlobal, local_global_cg, 1),
        ("local_global_vcycle", Method::LocalGlobal, local_global_mg, 1),
    ];
    for (label, method, settings, steps) in families {
        let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, m, method, settings).expect("gpu sim");
        g.bench_function(label, |b| b.iter(|| sim.probe().run_steps(steps).expect("gpu steps")));
    }
    // collide alone, on the drape's state (its parameters written by the simulator that owns it)
    let d = drape(side);
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &d, Method::SymplecticEuler, base.clone()).expect("gpu sim");
    let opts = springsim::gpu::GpuOptions::default();
    let mut cm = springsim::reference::model::CpuModel::new(&d).expect("model");
    let mut col = Colliders::new(&ctx.device, &opts, sim.probe().state(), &cm, 1).expect("colliders").expect("the drape has a ground");
    col.write_slots(&ctx.device, &ctx.queue, &springsim::gpu::GpuCounters::default(), &mut cm, &[0.0]).expect("placements");
    let n = d.n_particles();
    g.bench_function("collide_x10", |b| {
        b.iter(|| {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                let counters = springsim::gpu::GpuCounters::default();
                let mut pass = springsim::gpu::CountedPass::new(&mut pass, &counters);
                for _ in 0..10 {
                    col.encode(&mut pass, 0, n, 0);
                }
            }
            ctx.queue.submit([enc.finish()]);
            ctx.device.poll(springsim::wgpu::PollType::wait_indefinitely()).expect("poll");
        })
    });
    #[cfg(feature = "viewer")]
    {
        use springsim::viewer::render::SceneRenderer;
        let sim = GpuSimulator::new(&ctx.device, &ctx.queue, m, Method::SymplecticEuler, base).expect("gpu sim");
        let mut r = SceneRenderer::new(&ctx.device, springsim::wgpu::TextureFormat::Rgba8UnormSrgb, 1);
        r.set_model(&ctx.device, m, &sim);
        g.bench_function("normals", |b| {
            b.iter(|| {
                let mut enc = ctx.device.create_command_encoder(&Default::default());
                r.encode_normals(&mut enc);
                ctx.queue.submit([enc.finish()]);
                ctx.device.poll(springsim::wgpu::PollType::wait_indefinitely()).expect("poll");
            })
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let gpu = GpuContext::headless().map_err(|e| eprintln!("no GPU adapter, GPU benchmarks skipped: {e}")).ok();
    for (name, m) in common::scenes() {
        let side = if name == "curtain81" { 81 } else { 256 };
        cpu_kernels(c, name, &m, side);
        if let Some(ctx) = &gpu {
            gpu_kernels(c, ctx, name, &m, side);
        }
    }
}

criterion_group!(kernels, benches);
criterion_main!(kernels);
