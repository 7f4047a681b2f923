//! Embedding springsim in a host wgpu application. The host owns everything a real renderer owns (the
//! winit window, the instance, adapter, device, queue and surface, its camera, its render pipelines and
//! its own lit scenery: a checkered ground and a box); springsim only simulates. Each frame is ONE
//! command encoder and ONE `queue.submit`: springsim records its compute passes into the host's
//! encoder (`GpuSimulator::encode_frame`), then the host's render pass draws the scenery and the cloth,
//! the cloth straight from springsim's position buffer bound as a vertex buffer (no CPU copy). After
//! the submit, `GpuSimulator::poll_reports` collects the reports of frames that have finished (never
//! waiting): each frame's solver figures and the divergence guard's verdict, which rolls a diverged
//! frame back to a checkpoint kept on the GPU and says so.
//!
//! ```text
//! cargo run --release --example embed                                  # a window (Esc closes it)
//! cargo run --release --example embed -- --frames 60 --screenshot out.png
//! ```
//!
//! With `--frames N --screenshot out.png` it renders N frames and writes the last one as a PNG: in the
//! window when there is a display (the last frame is drawn a second time, with the same pipelines,
//! into an offscreen texture that is read back), else, or with `--headless`, into an offscreen texture
//! alone. `WGPU_BACKEND` and `WGPU_ADAPTER_NAME` choose the adapter as they do for `springsim`.

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use springsim::model::{self, Collider};
use springsim::stepping::GpuSimulator;
use springsim::wgpu::{self, util::DeviceExt};
use springsim::{Method, Simulator, StepSettings};
use std::path::PathBuf;
use std::time::Instant;
use winit::event_loop::{ControlFlow, EventLoop};

#[path = "embed/window.rs"]
mod window;

/// The ground's height (m): the host draws it and springsim collides the cloth with it. The curtain
/// hangs from y = 0 and is 1 m long.
const GROUND_Y: f32 = -1.1;
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
const CLEAR: wgpu::Color = wgpu::Color { r: 0.02, g: 0.022, b: 0.03, a: 1.0 };

#[derive(Parser, Clone)]
#[command(about = "A host wgpu application that draws springsim's cloth in its own render pass")]
struct Args {
    /// Render this many frames, then exit (default: run until the window is closed).
    #[arg(long)]
    frames: Option<usize>,
    /// Write the last frame as a PNG (with no --frames: after 1 frame).
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Never open a window: render offscreen.
    #[arg(long)]
    headless: bool,
    /// The curtain's particles per side (Liu et al.'s 81 is slow on a software rasterizer).
    #[arg(long, default_value_t = 41)]
    size: usize,
    /// Width of the window or picture (px).
    #[arg(long, default_value_t = 800)]
    width: u32,
    /// Height of the window or picture (px).
    #[arg(long, default_value_t = 600)]
    height: u32,
}

impl Args {
    /// The frames to render before exiting: `--frames`, or 1 for a `--screenshot` alone; `None`: until closed.
    fn frames(&self) -> Option<usize> {
        self.frames.or(self.screenshot.as_ref().map(|_| 1))
    }
}

/// `Camera` in scene.wgsl.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CameraUniform {
    view_proj: [[f32; 4]; 4],
    eye: [f32; 4],
    light: [f32; 4],
}

/// A vertex of the host's scenery: position, normal, albedo (a = 1: checkered).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SceneryVertex {
    position: [f32; 3],
    normal: [f32; 3],
    albedo: [f32; 4],
}

/// The host's device and queue.
struct Gpu {
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
}

impl Gpu {
    /// Picks an adapter (`WGPU_ADAPTER_NAME`: the first whose name contains it; else the high-performance
    /// one that can present to `surface`) and asks for the limits springsim needs.
    fn new(instance: &wgpu::Instance, surface: Option<&wgpu::Surface<'_>>) -> Result<Self> {
        let adapter = if let Ok(want) = std::env::var("WGPU_ADAPTER_NAME") {
            let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
            let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
            adapters
                .into_iter()
                .filter(|a| surface.is_none_or(|s| a.is_surface_supported(s)))
                .find(|a| a.get_info().name.to_lowercase().contains(&want.to_lowercase()))
                .ok_or_else(|| anyhow!("no GPU adapter: WGPU_ADAPTER_NAME={want} matches none that fits of [{}]", names.join(", ")))?
        } else {
            let options = wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::from_env().unwrap_or(wgpu::PowerPreference::HighPerformance),
                force_fallback_adapter: false,
                compatible_surface: surface,
                ..Default::default()
            };
            pollster::block_on(instance.request_adapter(&options)).map_err(|e| anyhow!("no GPU adapter: {e}"))?
        };
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("host"),
            required_limits: springsim::gpu::base::context::limits_for(&adapter)?,
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&descriptor)).context("creating the device")?;
        Ok(Gpu { adapter, device, queue })
    }

    fn adapter_name(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?})", info.name, info.backend)
    }
}

/// The simulation: Liu et al.'s curtain, flat at y = 0 and pinned at the two corners of its z = 0 edge, so
/// it swings down and through like a pendulum (no damping); the host's ground is also its collider.
fn build_simulation(gpu: &Gpu, size: usize) -> Result<(GpuSimulator, Vec<u32>)> {
    let mut cloth = model::curtain(size, None)?;
    cloth.colliders.push(Collider::ground(GROUND_Y as f64, 0.5));
    // The drawing triangles: built once; the positions they index stay on the GPU.
    let indices = cloth.triangles.iter().flatten().copied().collect();
    let sim = GpuSimulator::new(&gpu.device, &gpu.queue, &cloth, Method::SymplecticEuler, StepSettings::default())?;
    Ok((sim, indices))
}

/// The ground quad (4 m square) and a 40 cm box beside the cloth, as a triangle list.
fn scenery() -> Vec<SceneryVertex> {
    let ground_albedo = [0.18, 0.42, 0.16, 1.0];
    let box_albedo = [0.16, 0.3, 0.7, 0.0];
    let mut v = Vec::new();
    let mut quad = |corners: [[f32; 3]; 4], normal: [f32; 3], albedo: [f32; 4]| {
        for i in [0, 1, 2, 0, 2, 3] {
            v.push(SceneryVertex { position: corners[i], normal, albedo });
        }
    };
    let (y, r) = (GROUND_Y, 2.0);
    quad([[-r, y, -r], [-r, y, r], [r, y, r], [r, y, -r]], [0.0, 1.0, 0.0], ground_albedo);
    let (lo, hi) = ([-1.3, GROUND_Y, 0.3], [-0.9, GROUND_Y + 0.4, 0.7]);
    let p = |x: usize, y: usize, z: usize| [[lo[0], hi[0]][x], [lo[1], hi[1]][y], [lo[2], hi[2]][z]];
    quad([p(0, 1, 0), p(0, 1, 1), p(1, 1, 1), p(1, 1, 0)], [0.0, 1.0, 0.0], box_albedo); // top
    quad([p(0, 0, 1), p(1, 0, 1), p(1, 1, 1), p(0, 1, 1)], [0.0, 0.0, 1.0], box_albedo); // front (+z)
    quad([p(1, 0, 0), p(0, 0, 0), p(0, 1, 0), p(1, 1, 0)], [0.0, 0.0, -1.0], box_albedo); // back
    quad([p(1, 0, 1), p(1, 0, 0), p(1, 1, 0), p(1, 1, 1)], [1.0, 0.0, 0.0], box_albedo); // +x
    quad([p(0, 0, 0), p(0, 0, 1), p(0, 1, 1), p(0, 1, 0)], [-1.0, 0.0, 0.0], box_albedo); // -x
    v
}

/// A perspective camera that frames the stage: the space the cloth sweeps as it swings from its pins
/// (x in [-0.5, 0.5], y from the pins down to the ground, z in [-0.9, 1]) and the box, seen from the
/// front right, above.
fn camera(width: u32, height: u32) -> CameraUniform {
    use glam::{Mat4, Vec3};
    let (lo, hi) = (Vec3::new(-1.3, GROUND_Y, -0.9), Vec3::new(0.6, 0.05, 1.0));
    let (center, radius) = ((lo + hi) * 0.5, (hi - lo).length() * 0.5);
    let fov_y = 40f32.to_radians();
    let aspect = width as f32 / height.max(1) as f32;
    // the distance at which the stage's bounding sphere would just fit the narrower field of view, less a
    // quarter (the sphere is loose around a box; the far ground may leave the picture)
    let half = (fov_y * 0.5).min((aspect * (fov_y * 0.5).tan()).atan());
    let eye = center + Vec3::new(0.5, 0.3, 1.0).normalize() * (0.75 * radius / half.sin());
    let view_proj = Mat4::perspective_rh(fov_y, aspect, 0.05, 50.0) * Mat4::look_at_rh(eye, center, Vec3::Y);
    let light = Vec3::new(0.5, 0.9, 0.6).normalize();
    CameraUniform { view_proj: view_proj.to_cols_array_2d(), eye: eye.extend(1.0).to_array(), light: light.extend(0.0).to_array() }
}

/// The host's renderer: its pipelines, camera, scenery and the cloth's index buffer.
struct HostRenderer {
    camera: wgpu::Buffer,
    camera_group: wgpu::BindGroup,
    scenery_pipeline: wgpu::RenderPipeline,
    cloth_pipeline: wgpu::RenderPipeline,
    scenery: wgpu::Buffer,
    scenery_vertices: u32,
    cloth_indices: wgpu::Buffer,
    cloth_index_count: u32,
    /// The depth buffer and its size.
    depth: Option<(u32, u32, wgpu::TextureView)>,
}

impl HostRenderer {
    fn new(device: &wgpu::Device, format: wgpu::TextureFormat, cloth_indices: &[u32]) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("host.scene"),
            source: wgpu::ShaderSource::Wgsl(include_str!("embed/scene.wgsl").into()),
        });
        let camera_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("host.camera"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None },
                count: None,
            }],
        });
        let camera = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("host.camera"),
            size: std::mem::size_of::<CameraUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let camera_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("host.camera"),
            layout: &camera_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: camera.as_entire_binding() }],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("host.scene"),
            bind_group_layouts: &[Some(&camera_layout)],
            immediate_size: 0,
        });
        let pipeline = |label: &str, vs: &str, fs: &str, buffer: wgpu::VertexBufferLayout| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &shader,
                    entry_point: Some(vs),
                    compilation_options: Default::default(),
                    buffers: &[Some(buffer)],
                },
                primitive: wgpu::PrimitiveState { cull_mode: None, ..Default::default() },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: Default::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &shader,
                    entry_point: Some(fs),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState { format, blend: None, write_mask: wgpu::ColorWrites::ALL })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let scenery_pipeline = pipeline(
            "host.scenery",
            "vs_scenery",
            "fs_scenery",
            wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<SceneryVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32x4],
            },
        );
        // springsim's particles: one vec4<f32> each (xyz, w = 1/m), 16 bytes apart.
        let cloth_pipeline = pipeline(
            "host.cloth",
            "vs_cloth",
            "fs_cloth",
            wgpu::VertexBufferLayout {
                array_stride: 16,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x4],
            },
        );
        let vertices = scenery();
        let scenery = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("host.scenery"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let indices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("host.cloth_indices"),
            contents: bytemuck::cast_slice(cloth_indices),
            usage: wgpu::BufferUsages::INDEX,
        });
        HostRenderer {
            camera,
            camera_group,
            scenery_pipeline,
            cloth_pipeline,
            scenery,
            scenery_vertices: vertices.len() as u32,
            cloth_indices: indices,
            cloth_index_count: cloth_indices.len() as u32,
            depth: None,
        }
    }

    /// Sets the camera for a `width`×`height` target and (re)makes the depth buffer at that size.
    fn resize(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, width: u32, height: u32) {
        queue.write_buffer(&self.camera, 0, bytemuck::bytes_of(&camera(width, height)));
        if matches!(&self.depth, Some((w, h, _)) if (*w, *h) == (width, height)) {
            return;
        }
        let depth = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("host.depth"),
            size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: DEPTH_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        self.depth = Some((width, height, depth.create_view(&Default::default())));
    }

    /// Records the host's render pass: the scenery, then the cloth from `sim.positions()`.
    fn draw(&self, encoder: &mut wgpu::CommandEncoder, target: &wgpu::TextureView, sim: &GpuSimulator) {
        let Some((_, _, depth)) = &self.depth else { return };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("host.scene"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Clear(CLEAR), store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: depth,
                depth_ops: Some(wgpu::Operations { load: wgpu::LoadOp::Clear(1.0), store: wgpu::StoreOp::Discard }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &self.camera_group, &[]);
        pass.set_pipeline(&self.scenery_pipeline);
        pass.set_vertex_buffer(0, self.scenery.slice(..));
        pass.draw(0..self.scenery_vertices, 0..1);
        pass.set_pipeline(&self.cloth_pipeline);
        pass.set_vertex_buffer(0, sim.positions());
        pass.set_index_buffer(self.cloth_indices.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..self.cloth_index_count, 0, 0..1);
    }
}

/// An offscreen colour target that can be read back: the headless frame, or the window's screenshot.
struct Offscreen {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    readback: wgpu::Buffer,
    padded_row: u32,
}

impl Offscreen {
    fn new(device: &wgpu::Device, format: wgpu::TextureFormat, width: u32, height: u32) -> Self {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("host.offscreen"),
            size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let padded_row = (4 * width).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("host.readback"),
            size: padded_row as u64 * height as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Offscreen { view: texture.create_view(&Default::default()), texture, readback, padded_row }
    }

    /// Records the copy of the texture into the read-back buffer.
    fn copy(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.copy_texture_to_buffer(
            self.texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(self.padded_row), rows_per_image: None },
            },
            self.texture.size(),
        );
    }

    /// Waits for the copy and writes the picture as an RGBA PNG.
    fn write_png(&self, device: &wgpu::Device, path: &std::path::Path) -> Result<()> {
        let slice = self.readback.slice(..);
        let (sender, receiver) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| drop(sender.send(r)));
        device.poll(wgpu::PollType::wait_indefinitely()).context("waiting for the read-back")?;
        receiver.recv().context("read-back")?.context("mapping the read-back buffer")?;
        let (width, height) = (self.texture.width(), self.texture.height());
        let bgra = matches!(self.texture.format(), wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb);
        let mut rgba = Vec::with_capacity(4 * (width * height) as usize);
        {
            let data = slice.get_mapped_range().context("mapping the read-back buffer")?;
            for row in data.chunks_exact(self.padded_row as usize) {
                for px in row[..4 * width as usize].chunks_exact(4) {
                    rgba.extend_from_slice(&if bgra { [px[2], px[1], px[0], 255] } else { [px[0], px[1], px[2], 255] });
                }
            }
        }
        self.readback.unmap();
        let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&rgba)?;
        writer.finish()?;
        Ok(())
    }
}

/// One frame, one submit: springsim's compute passes, then the host's render pass into `target`, then
/// (when `capture` is given) the same pass into the offscreen texture and its copy for read-back.
fn render_frame(
    gpu: &Gpu,
    sim: &mut GpuSimulator,
    renderer: &HostRenderer,
    target: &wgpu::TextureView,
    capture: Option<&Offscreen>,
) -> Result<()> {
    let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("host.frame") });
    // springsim records its steps of this frame; it submits nothing.
    sim.encode_frame(&mut encoder)?;
    renderer.draw(&mut encoder, target, sim);
    if let Some(offscreen) = capture {
        if !std::ptr::eq(target, &offscreen.view) {
            renderer.draw(&mut encoder, &offscreen.view, sim);
        }
        offscreen.copy(&mut encoder);
    }
    gpu.queue.submit([encoder.finish()]);
    // the reports of the frames that have finished, never waited for
    for event in sim.poll_reports()? {
        if let springsim::FrameEvent::Diverged(d) = event {
            eprintln!("embed: {d}");
        }
    }
    Ok(())
}

/// The closing line: the mode, the simulation and the frame time, and where the cloth ended (one
/// read-back of the state, after the last frame).
fn report(mode: &str, gpu: &Gpu, sim: &mut GpuSimulator, frames: usize, seconds: f64) -> Result<()> {
    let (x, _) = sim.read_state()?;
    let lowest = x.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
    let plan = sim.plan();
    println!(
        "embed: {mode}; {} particles, h = {:.3e} s, {} steps per frame; {frames} frames, {:.1} ms per frame; lowest cloth point y = {lowest:.3} m; adapter {}",
        x.len(),
        plan.h,
        plan.substeps,
        1e3 * seconds / frames.max(1) as f64,
        gpu.adapter_name()
    );
    Ok(())
}

fn check_size(name: &str, value: u32, device: &wgpu::Device) -> Result<()> {
    let max = device.limits().max_texture_dimension_2d;
    if value == 0 || value > max {
        bail!("--{name} {value}: must be between 1 and {max} (the device's largest texture)");
    }
    Ok(())
}

/// Renders `--frames` frames into an offscreen texture (no window).
fn run_headless(args: &Args) -> Result<()> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let gpu = Gpu::new(&instance, None)?;
    check_size("width", args.width, &gpu.device)?;
    check_size("height", args.height, &gpu.device)?;
    let (mut sim, indices) = build_simulation(&gpu, args.size)?;
    let format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let mut renderer = HostRenderer::new(&gpu.device, format, &indices);
    renderer.resize(&gpu.device, &gpu.queue, args.width, args.height);
    let offscreen = Offscreen::new(&gpu.device, format, args.width, args.height);
    let frames = args.frames().unwrap_or(1);
    let start = Instant::now();
    for frame in 0..frames {
        let last = frame + 1 == frames && args.screenshot.is_some();
        render_frame(&gpu, &mut sim, &renderer, &offscreen.view, last.then_some(&offscreen))?;
        // a windowed host is paced by presenting; this one waits for each frame instead
        gpu.device.poll(wgpu::PollType::wait_indefinitely()).context("waiting for the frame")?;
    }
    let seconds = start.elapsed().as_secs_f64();
    if let Some(path) = &args.screenshot {
        offscreen.write_png(&gpu.device, path)?;
        println!("embed: wrote {} ({}x{}, headless offscreen target)", path.display(), args.width, args.height);
    }
    report("headless offscreen", &gpu, &mut sim, frames, seconds)
}

/// `main`'s error, printed as one line (the cause chain, without a backtrace).
struct Failure(anyhow::Error);

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

fn main() -> std::result::Result<(), Failure> {
    run(Args::parse()).map_err(Failure)
}

fn run(args: Args) -> Result<()> {
    if args.frames == Some(0) {
        bail!("--frames 0: must be at least 1");
    }
    let batch = args.frames.is_some() || args.screenshot.is_some();
    let display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() || cfg!(any(windows, target_os = "macos"));
    if args.headless || (batch && !display) {
        if !args.headless {
            eprintln!("embed: no display (DISPLAY/WAYLAND_DISPLAY unset): rendering offscreen");
        }
        return run_headless(&args);
    }
    let event_loop = match EventLoop::new() {
        Ok(event_loop) => event_loop,
        Err(e) if batch => {
            eprintln!("embed: cannot open a window ({e}): rendering offscreen");
            return run_headless(&args);
        }
        Err(e) => bail!("no display to open a window on ({e}); try --headless --frames 60 --screenshot out.png"),
    };
    event_loop.set_control_flow(ControlFlow::Poll);
    window::run(event_loop, args)
}
