//! The GPU engine as middleware: `encode_frame` only records. Two frames of the simulator and a compute
//! pass of the test's own go into ONE encoder on the test's device, submitted once; before that submit
//! the state is still the initial one (it would have advanced had `encode_frame` submitted) and the
//! test's own kernel has not run; after it the state matches the CPU twin (two `step_frame`s).
//!
//! Tolerance: ‖x_gpu − x_cpu‖₂ / ‖x_cpu − x₀‖₂ < 1e-4 (relative to the motion over the two frames), for
//! symplectic Euler, implicit Euler and local/global with `cg`; each run prints its figure.
//!
//! Also: `--global cholesky` is refused by `encode_frame` with an error naming the blocking call;
//! `gpu_bytes` follows the method (symplectic Euler on a cloth: at most 300 B per particle); a buffer
//! over the device's storage-binding limit is an error naming it, before anything is allocated.

mod common;

use common::{gpu, rel_err_motion};
use springsim::stepping::CpuSimulator;
use springsim::stepping::GpuSimulator;
use springsim::{Error, GlobalSolve, Method, Model, Simulator, StepSettings};

const TOL: f64 = 1e-4;

/// A trivial kernel of the host's own: out[i] = 2i + 1.
const HOST_KERNEL: &str = "
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn host_main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&out)) {
        out[gid.x] = 2u * gid.x + 1u;
    }
}
";
const HOST_WORDS: usize = 64;

/// The host's compute pass: its pipeline, its buffer and a staging buffer to read it back.
struct HostPass {
    pipeline: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    out: wgpu::Buffer,
    staging: wgpu::Buffer,
}

use springsim::wgpu;

impl HostPass {
    fn new(device: &wgpu::Device) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("host"),
            source: wgpu::ShaderSource::Wgsl(HOST_KERNEL.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("host"),
            layout: None,
            module: &module,
            entry_point: Some("host_main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let bytes = (HOST_WORDS * 4) as u64;
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("host.out"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("host.staging"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("host"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: out.as_entire_binding() }],
        });
        HostPass { pipeline, group, out, staging }
    }

    fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("host"), timestamp_writes: None });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// Copies `out` to the staging buffer in a submit of its own and reads it.
    fn read(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<u32> {
        let mut enc = device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&self.out, 0, &self.staging, 0, (HOST_WORDS * 4) as u64);
        queue.submit([enc.finish()]);
        let slice = self.staging.slice(..);
        slice.map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
        let words = bytemuck::cast_slice(&slice.get_mapped_range().expect("mapped")).to_vec();
        self.staging.unmap();
        words
    }
}

fn moving_curtain(n: usize) -> Model {
    let mut m = springsim::model::curtain(n, None).unwrap();
    for (i, v) in m.velocities.iter_mut().enumerate() {
        *v = [0.3 * common::hash01(3 * i as u64), 0.3 * common::hash01(3 * i as u64 + 1), 0.3 * common::hash01(3 * i as u64 + 2)];
    }
    m
}

#[test]
fn two_frames_and_a_host_pass_in_one_submit_match_the_cpu_twin() {
    let Some(ctx) = gpu() else { return };
    let (device, queue) = (&ctx.device, &ctx.queue);
    let model = moving_curtain(21);
    let lg = StepSettings { global: GlobalSolve::Cg, local_global_iterations: 3, global_iterations: 20, ..StepSettings::default() };
    // the GPU's implicit solve is Jacobi-PCG, and encode_frame records the planned steps (the adaptive
    // step decides on a read-back): the twin runs the same
    let jacobi = StepSettings { preconditioner: springsim::method::Preconditioner::Jacobi, adaptive: false, ..StepSettings::default() };
    for (method, settings) in
        [(Method::SymplecticEuler, StepSettings::default()), (Method::ImplicitEuler, jacobi), (Method::LocalGlobal, lg)]
    {
        let mut cpu = CpuSimulator::new(&model, method, settings.clone()).unwrap();
        let mut sim = GpuSimulator::new(device, queue, &model, method, settings).unwrap();
        // the same step on both (k₀ agrees to f32 rounding; the frame's substeps must agree)
        assert_eq!(sim.plan().substeps, cpu.plan().substeps, "{method}: plans differ");
        assert_eq!(sim.plan().h, cpu.plan().h, "{method}: plans differ");
        let host = HostPass::new(device);
        let (x0, v0) = sim.read_state().unwrap();

        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("one frame pair") });
        sim.encode_frame(&mut encoder).unwrap();
        host.record(&mut encoder);
        sim.encode_frame(&mut encoder).unwrap();

        // nothing ran yet: encode_frame neither submitted nor polled work of its own
        assert_eq!(sim.read_state().unwrap(), (x0.clone(), v0), "{method}: the state moved before the host's submit");
        assert!(host.read(device, queue).iter().all(|&w| w == 0), "{method}: the host's pass ran before its submit");

        queue.submit([encoder.finish()]);
        let words = host.read(device, queue);
        assert!(words.iter().enumerate().all(|(i, &w)| w == 2 * i as u32 + 1), "{method}: the host's pass: {words:?}");
        cpu.step_frame().unwrap();
        cpu.step_frame().unwrap();
        let (xg, _) = sim.read_state().unwrap();
        let (xc, _) = cpu.read_state().unwrap();
        let e = rel_err_motion(&xg, &xc, &x0);
        let moved: f64 = xc.iter().zip(&x0).map(|(a, b)| (0..3).map(|c| (a[c] - b[c]).powi(2)).sum::<f64>()).sum::<f64>().sqrt();
        eprintln!("{method:17} two frames in one submit: ‖x_gpu − x_cpu‖/‖x_cpu − x0‖ = {e:.2e} (gpu_bytes {})", sim.probe().gpu_bytes());
        assert!(moved > 1e-4, "{method}: nothing moved ({moved:e} m)");
        assert!(e < TOL, "{method}: {e:.3e} of the motion >= {TOL:e}");
    }
}

#[test]
fn cholesky_global_step_is_refused_by_encode_frame_and_runs_blocking() {
    let Some(ctx) = gpu() else { return };
    let model = moving_curtain(13);
    let s = StepSettings { global: GlobalSolve::Cholesky, local_global_iterations: 2, ..StepSettings::default() };
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::LocalGlobal, s.clone()).unwrap();
    let (x0, _) = sim.read_state().unwrap();
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let err = sim.encode_frame(&mut encoder).unwrap_err().to_string();
    assert!(err.contains("cholesky") && err.contains("step_frame"), "{err}");
    sim.set_frame_steps(Some(1));
    let err = sim.encode_frame(&mut encoder).unwrap_err().to_string();
    assert!(err.contains("step_frame"), "{err}");
    sim.set_frame_steps(None);
    assert_eq!(sim.read_state().unwrap().0, x0, "a refused frame runs nothing");
    // the blocking call and step_frame run the same frame
    let mut twin = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::LocalGlobal, s).unwrap();
    let split = sim.probe().run_host_global_frame().unwrap();
    assert_eq!(split.frames, 1);
    twin.step_frame().unwrap();
    let (xa, xb) = (sim.read_state().unwrap().0, twin.read_state().unwrap().0);
    assert_ne!(xa, x0);
    assert_eq!(xa, xb, "run_host_global_frame and step_frame differ");
}

#[test]
fn gpu_bytes_follow_the_method() {
    let Some(ctx) = gpu() else { return };
    let n = 41;
    let model = springsim::model::cloth(n, None).unwrap();
    let particles = (n * n) as u64;
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, Method::SymplecticEuler, StepSettings::default()).unwrap();
    let symplectic = sim.probe().gpu_bytes();
    eprintln!("symplectic Euler, {n}x{n} cloth: {symplectic} B, {} B per particle", symplectic / particles);
    assert!(symplectic <= 300 * particles, "symplectic Euler holds {} B per particle", symplectic / particles);
    let mut per_method = vec![(Method::SymplecticEuler, symplectic)];
    for method in [Method::Rk4, Method::Leu, Method::ImplicitEuler, Method::LocalGlobal, Method::SymplecticEuler] {
        sim.set_method(method).unwrap();
        let bytes = sim.probe().gpu_bytes();
        eprintln!("{method:17}: {bytes} B, {} B per particle", bytes / particles);
        per_method.push((method, bytes));
    }
    let bytes = |m: Method| per_method.iter().find(|(k, _)| *k == m).map(|(_, b)| *b).unwrap();
    // RK4's two intermediate states and accumulator: 3 more state buffers (2 vec4, 32 B, per particle
    // each) in place of the one-stage methods' 64-byte accumulator placeholder
    assert_eq!(bytes(Method::Rk4), symplectic + 3 * 32 * particles - 64);
    // LEU's blocks (48 B per incidence entry) and implicit Euler's (32 B) and PCG (7 vectors)
    assert!(bytes(Method::Leu) > bytes(Method::Rk4));
    assert!(bytes(Method::ImplicitEuler) >= symplectic + 7 * 16 * particles);
    assert!(bytes(Method::LocalGlobal) >= symplectic + 7 * 16 * particles);
    // switching back drops the other methods' buffers
    assert_eq!(per_method.last().unwrap().1, symplectic);
}

/// Under a binding limit of 24 B per incidence entry: LEU's blocks (48 B per entry, one binding) are
/// refused by name, at construction and on a switch that leaves the simulator usable; implicit Euler's
/// blocks (32 B per entry) are split over their bindings (`gpu::base::alloc::split_bytes`) and it runs.
#[test]
fn a_buffer_over_the_binding_limit_is_an_error_naming_it() {
    let Some(ctx) = gpu() else { return };
    let model = springsim::model::cloth(33, None).unwrap();
    let entries = springsim::cpu::CpuModel::new(&model).unwrap().incidence.entries.len() as u64;
    // room for the neighbour table (16 B per entry) but not for LEU's blocks (48 B) or, in one binding,
    // implicit Euler's (32 B)
    let limit = (24 * entries).next_multiple_of(256);
    let required_limits = wgpu::Limits { max_storage_buffer_binding_size: limit, ..ctx.adapter.limits() };
    let desc = wgpu::DeviceDescriptor { label: Some("small"), required_limits, ..Default::default() };
    let (device, queue) = pollster::block_on(ctx.adapter.request_device(&desc)).unwrap();
    let mut sim = GpuSimulator::new(&device, &queue, &model, Method::SymplecticEuler, StepSettings::default()).unwrap();
    sim.step_frame().unwrap();
    let (method, buffer, bytes) = (Method::Leu, "springsim.leu_blocks", 48 * entries);
    let err = match GpuSimulator::new(&device, &queue, &model, method, StepSettings::default()) {
        Err(e) => e,
        Ok(_) => panic!("{method}: a {bytes} B buffer was allocated over the {limit} B limit"),
    };
    assert!(matches!(&err, Error::BufferTooLarge { buffer: b, .. } if b == buffer), "{method}: {err}");
    let line = err.to_string();
    assert!(line.contains(buffer) && line.contains(&bytes.to_string()) && line.contains(&limit.to_string()), "{line}");
    // switching to the method fails the same way and keeps the simulator usable
    let switched = sim.set_method(method).unwrap_err();
    assert!(matches!(&switched, Error::BufferTooLarge { .. }), "{switched}");
    assert_eq!(sim.method(), Method::SymplecticEuler);
    sim.step_frame().unwrap();
    // implicit Euler's blocks pass one binding but are split: it is built and steps a finite frame
    assert!(32 * entries > limit);
    sim.set_method(Method::ImplicitEuler).unwrap();
    sim.step_frame().unwrap();
    let (x, _) = sim.read_state().unwrap();
    assert!(x.iter().flatten().all(|c| c.is_finite()));
}

/// On a device that allows fewer storage buffers per shader stage than a method's kernels bind, even
/// each kernel in a layout of its own, the method is refused with one line naming the kernel, the count
/// and the limit (wgpu would raise a validation error, a panic without an error handler), and a switch
/// to it leaves the simulator usable. With 6 allowed, implicit Euler's kernels with the Jacobi PCG fit
/// (6 storage buffers at most once their parameters are uniforms); symplectic Euler's power iteration
/// (its k₀) binds 7.
#[test]
fn a_method_over_the_storage_binding_count_is_refused_by_name() {
    let Some(ctx) = gpu() else { return };
    let model = springsim::model::cloth(9, None).unwrap();
    let limit = 6;
    let required_limits = wgpu::Limits { max_storage_buffers_per_shader_stage: limit, ..ctx.adapter.limits() };
    let desc = wgpu::DeviceDescriptor { label: Some("few bindings"), required_limits, ..Default::default() };
    let (device, queue) = pollster::block_on(ctx.adapter.request_device(&desc)).unwrap();
    let jacobi = StepSettings { preconditioner: springsim::Preconditioner::Jacobi, ..Default::default() };
    let mut sim = GpuSimulator::new(&device, &queue, &model, Method::ImplicitEuler, jacobi).unwrap();
    sim.step_frame().unwrap();
    let err = match GpuSimulator::new(&device, &queue, &model, Method::SymplecticEuler, StepSettings::default()) {
        Err(e) => e,
        Ok(_) => panic!("symplectic Euler was built on a device with {limit} storage buffers per stage"),
    };
    let line = err.to_string();
    println!("{line}");
    assert!(matches!(&err, Error::AdapterLimit { requested: 7, available: 6, what, .. } if what == "power.wgsl (power_matvec)"), "{line}");
    assert!(
        line.contains(".wgsl (") && line.contains(" binds 7 buffers") && line.contains("max_storage_buffers_per_shader_stage of 6"),
        "{line}"
    );
    let switched = sim.set_method(Method::SymplecticEuler).unwrap_err();
    assert_eq!(switched.to_string(), line);
    assert_eq!(sim.method(), Method::ImplicitEuler);
    sim.step_frame().unwrap();
}
