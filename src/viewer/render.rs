//! The draw pipelines: per-vertex normals in a compute pass, shaded two-sided cloth straight from the
//! simulation's position buffer (bound as the vertex buffer), strands and the spring view as
//! screen-space ribbons read from the same buffer, MSAA and a depth buffer. One code path draws into
//! the window's surface and into an offscreen texture (the screenshot).

use super::camera::Camera;
use super::pins::{PinList, PinPipeline};
use super::solids::{SolidPipeline, Solids};
use crate::model::Model;
use crate::stepping::{GpuSimulator, Simulator};
use wgpu::util::DeviceExt;

/// The depth buffer's format.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CameraUniform {
    view_proj: [[f32; 4]; 4],
    eye: [f32; 4],
    light: [f32; 4],
    viewport: [f32; 4],
    front: [f32; 4],
    back: [f32; 4],
    line: [f32; 4],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Seg {
    a: u32,
    b: u32,
    rest: f32,
    _pad: f32,
}

/// What to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawOptions {
    /// Every spring, coloured by strain (instead of the surface / the structure).
    pub springs: bool,
    /// The strain that saturates the colour scale.
    pub strain_scale: f32,
    /// Ribbon width (px).
    pub line_width: f32,
    /// Draw the model (off: the ground, the colliders and the pins alone; what a picture of the
    /// model's share of the screen compares against).
    pub model: bool,
}

impl Default for DrawOptions {
    fn default() -> Self {
        DrawOptions { springs: false, strain_scale: 0.05, line_width: 4.0, model: true }
    }
}

struct MeshGpu {
    tris: wgpu::Buffer,
    n_indices: u32,
    normals: wgpu::Buffer,
    normals_bg: wgpu::BindGroup,
    n_vertices: u32,
}

struct SegsGpu {
    bg: wgpu::BindGroup,
    count: u32,
}

/// The per-model resources, rebuilt when the simulation is.
struct ModelGpu {
    mesh: Option<MeshGpu>,
    structure: SegsGpu,
    springs: SegsGpu,
    /// The ground quad (every scene has one, [`super::framing::ground`]).
    ground: wgpu::BindGroup,
    /// The pin markers' list (`None` without pins).
    pins: Option<PinList>,
    /// The colliders drawn as solids (`None` without spheres, capsules or boxes).
    solids: Option<Solids>,
    /// The position buffer's binding, for a new pin list.
    positions: (wgpu::Buffer, u64),
}

/// `Ground` in `shaders/render.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GroundUniform {
    plane: [f32; 4],
    center: [f32; 4],
}

/// The renderer of one colour format and sample count.
pub struct SceneRenderer {
    /// The colour format it draws into.
    pub format: wgpu::TextureFormat,
    /// MSAA samples (1 where the adapter does not allow 4).
    pub samples: u32,
    camera_buf: wgpu::Buffer,
    camera_bg: wgpu::BindGroup,
    seg_layout: wgpu::BindGroupLayout,
    normals_layout: wgpu::BindGroupLayout,
    ground_layout: wgpu::BindGroupLayout,
    ground_pipe: wgpu::RenderPipeline,
    cloth_pipe: wgpu::RenderPipeline,
    line_pipe: wgpu::RenderPipeline,
    normals_pipe: wgpu::ComputePipeline,
    pin_pipe: PinPipeline,
    solid_pipe: SolidPipeline,
    model: Option<ModelGpu>,
    targets: Option<(u32, u32, Option<wgpu::TextureView>, wgpu::TextureView)>,
}

fn buf_entry(binding: u32, vis: wgpu::ShaderStages, ty: wgpu::BufferBindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: vis,
        ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
        count: None,
    }
}

/// MSAA samples the adapter allows for `format` and the depth format (4 or 1).
pub fn msaa_samples(adapter: &wgpu::Adapter, format: wgpu::TextureFormat) -> u32 {
    let ok = |f: wgpu::TextureFormat| adapter.get_texture_format_features(f).flags.sample_count_supported(4);
    if ok(format) && ok(DEPTH_FORMAT) {
        4
    } else {
        1
    }
}

impl SceneRenderer {
    /// Compiles the pipelines for `format` with `samples` (1 or 4).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, samples: u32) -> Self {
        let render_src = include_str!("../../shaders/render.wgsl");
        let normals_src = include_str!("../../shaders/normals.wgsl");
        let rm = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("springsim.render"),
            source: wgpu::ShaderSource::Wgsl(render_src.into()),
        });
        let nm = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("springsim.normals"),
            source: wgpu::ShaderSource::Wgsl(normals_src.into()),
        });
        let vf = wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT;
        let cam_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("springsim.camera"),
            entries: &[buf_entry(0, vf, wgpu::BufferBindingType::Uniform)],
        });
        let ro = wgpu::BufferBindingType::Storage { read_only: true };
        let seg_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("springsim.segs"),
            entries: &[buf_entry(0, wgpu::ShaderStages::VERTEX, ro), buf_entry(1, wgpu::ShaderStages::VERTEX, ro)],
        });
        let c = wgpu::ShaderStages::COMPUTE;
        let normals_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("springsim.normals"),
            entries: &[
                buf_entry(0, c, wgpu::BufferBindingType::Uniform),
                buf_entry(1, c, ro),
                buf_entry(2, c, ro),
                buf_entry(3, c, ro),
                buf_entry(4, c, ro),
                buf_entry(5, c, wgpu::BufferBindingType::Storage { read_only: false }),
            ],
        });
        let camera_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("springsim.camera"),
            size: std::mem::size_of::<CameraUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let camera_bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("springsim.camera"),
            layout: &cam_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: camera_buf.as_entire_binding() }],
        });
        let cloth_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("springsim.cloth"),
            bind_group_layouts: &[Some(&cam_layout)],
            immediate_size: 0,
        });
        let ground_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("springsim.ground"),
            entries: &[buf_entry(2, vf, wgpu::BufferBindingType::Uniform)],
        });
        let ground_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("springsim.ground"),
            bind_group_layouts: &[Some(&cam_layout), Some(&ground_layout)],
            immediate_size: 0,
        });
        let line_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("springsim.lines"),
            bind_group_layouts: &[Some(&cam_layout), Some(&seg_layout)],
            immediate_size: 0,
        });
        let normals_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("springsim.normals"),
            bind_group_layouts: &[Some(&normals_layout)],
            immediate_size: 0,
        });
        use super::pipeline::{build, vec4s, Spec};
        let formats = (format, DEPTH_FORMAT);
        let less = (true, wgpu::CompareFunction::Less);
        let buffers = [Some(vec4s(0)), Some(vec4s(1))];
        let spec = Spec {
            label: "springsim.cloth",
            layout: &cloth_pl,
            entry: ("vs_cloth", "fs_cloth"),
            buffers: &buffers,
            cull_back: false,
            depth: less,
        };
        let cloth_pipe = build(device, &rm, formats, samples, spec);
        let spec =
            Spec { label: "springsim.lines", layout: &line_pl, entry: ("vs_line", "fs_line"), buffers: &[], cull_back: false, depth: less };
        let line_pipe = build(device, &rm, formats, samples, spec);
        let spec = Spec {
            label: "springsim.ground",
            layout: &ground_pl,
            entry: ("vs_ground", "fs_ground"),
            buffers: &[],
            cull_back: false,
            depth: less,
        };
        let ground_pipe = build(device, &rm, formats, samples, spec);
        let normals_pipe = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("springsim.normals"),
            layout: Some(&normals_pl),
            module: &nm,
            entry_point: Some("vertex_normals"),
            compilation_options: Default::default(),
            cache: None,
        });
        SceneRenderer {
            format,
            samples,
            camera_buf,
            camera_bg,
            seg_layout,
            normals_layout,
            ground_layout,
            ground_pipe,
            cloth_pipe,
            line_pipe,
            normals_pipe,
            pin_pipe: PinPipeline::new(device, &rm, &cam_layout, formats, samples),
            solid_pipe: SolidPipeline::new(device, &rm, &cam_layout, formats, samples),
            model: None,
            targets: None,
        }
    }

    /// Binds the simulation's buffers and uploads the model's triangles and segments. Call again after
    /// the simulation is rebuilt.
    pub fn set_model(&mut self, device: &wgpu::Device, model: &Model, sim: &GpuSimulator) {
        let n = model.n_particles();
        let positions = sim.positions();
        let pos_binding =
            wgpu::BufferBinding { buffer: positions.buffer(), offset: positions.offset(), size: wgpu::BufferSize::new(positions.size()) };
        let init = |label: &str, data: &[u8], usage: wgpu::BufferUsages| {
            let mut bytes = data.to_vec();
            bytes.resize(bytes.len().max(16), 0);
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: &bytes, usage })
        };
        let st = wgpu::BufferUsages::STORAGE;
        let mesh = if model.triangles.is_empty() {
            None
        } else {
            // the per-vertex triangle CSR list
            let mut count = vec![0u32; n + 1];
            for t in &model.triangles {
                for &v in t {
                    count[v as usize + 1] += 1;
                }
            }
            for i in 0..n {
                count[i + 1] += count[i];
            }
            let offsets = count.clone();
            let mut fill = count;
            let mut vt = vec![0u32; 3 * model.triangles.len()];
            for (ti, t) in model.triangles.iter().enumerate() {
                for &v in t {
                    vt[fill[v as usize] as usize] = ti as u32;
                    fill[v as usize] += 1;
                }
            }
            let flat: Vec<u32> = model.triangles.iter().flatten().copied().collect();
            let tris = init("springsim.tris", bytemuck::cast_slice(&flat), st | wgpu::BufferUsages::INDEX);
            let offs = init("springsim.vt_offsets", bytemuck::cast_slice(&offsets), st);
            let vtb = init("springsim.vt_tris", bytemuck::cast_slice(&vt), st);
            let np = init("springsim.normal_params", bytemuck::cast_slice(&[n as u32, 0, 0, 0]), wgpu::BufferUsages::UNIFORM);
            let normals = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("springsim.normals"),
                size: (n * 16).max(16) as u64,
                usage: st | wgpu::BufferUsages::VERTEX,
                mapped_at_creation: false,
            });
            let normals_bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("springsim.normals"),
                layout: &self.normals_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: np.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Buffer(pos_binding.clone()) },
                    wgpu::BindGroupEntry { binding: 2, resource: tris.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: offs.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: vtb.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 5, resource: normals.as_entire_binding() },
                ],
            });
            Some(MeshGpu { tris, n_indices: flat.len() as u32, normals, normals_bg, n_vertices: n as u32 })
        };
        // every spring with a length (a zero-rest-length spring is a term of a bending energy, not a strand)
        let all: Vec<Seg> =
            model.springs.iter().filter(|s| s.rest > 0.0).map(|s| Seg { a: s.a, b: s.b, rest: s.rest as f32, _pad: 0.0 }).collect();
        // The structure: the shortest springs (rope and hair edges, the slinky's coils, the jelly's lattice
        // edges), not the bend and diagonal ones.
        let min_rest = model.springs.iter().map(|s| s.rest).filter(|&r| r > 0.0).fold(f64::INFINITY, f64::min);
        let structure: Vec<Seg> = model
            .springs
            .iter()
            .filter(|s| s.rest > 0.0 && s.rest <= min_rest * 1.05)
            .map(|s| Seg { a: s.a, b: s.b, rest: s.rest as f32, _pad: 0.0 })
            .collect();
        let segs = |label: &str, v: &[Seg]| {
            let b = init(label, bytemuck::cast_slice(v), st);
            let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout: &self.seg_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::Buffer(pos_binding.clone()) },
                    wgpu::BindGroupEntry { binding: 1, resource: b.as_entire_binding() },
                ],
            });
            SegsGpu { bg, count: v.len() as u32 }
        };
        let g = super::framing::ground(model);
        let g = GroundUniform { plane: g.normal.extend(g.offset).to_array(), center: g.center.extend(g.half_size).to_array() };
        let b = init("springsim.ground", bytemuck::bytes_of(&g), wgpu::BufferUsages::UNIFORM);
        let ground = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("springsim.ground"),
            layout: &self.ground_layout,
            entries: &[wgpu::BindGroupEntry { binding: 2, resource: b.as_entire_binding() }],
        });
        let positions = (positions.buffer().clone(), pos_binding.size.map_or(16, |s| s.get()));
        let (structure, springs) = (segs("springsim.structure", &structure), segs("springsim.springs", &all));
        let solids = Solids::new(device, &self.solid_pipe, model);
        self.model = Some(ModelGpu { mesh, structure, springs, ground, pins: None, solids, positions });
        self.set_pins(device, sim, n);
    }

    /// Uploads the list of particles `0..n` that `sim` has pinned now, for the pin markers. Call after
    /// a pin is toggled (the model's own pins are listed by [`SceneRenderer::set_model`]).
    pub fn set_pins(&mut self, device: &wgpu::Device, sim: &GpuSimulator, n: usize) {
        let pins: Vec<u32> = (0..n).filter(|&i| sim.is_pinned(i)).map(|i| i as u32).collect();
        if let Some(m) = &mut self.model {
            let binding = wgpu::BufferBinding { buffer: &m.positions.0, offset: 0, size: wgpu::BufferSize::new(m.positions.1) };
            m.pins = self.pin_pipe.list(device, binding, &pins);
        }
    }

    /// How many pin markers are drawn.
    pub fn pin_markers(&self) -> u32 {
        self.model.as_ref().and_then(|m| m.pins.as_ref()).map_or(0, |p| p.count())
    }

    /// Writes the camera for a `w`×`h` target.
    pub fn set_camera(&self, queue: &wgpu::Queue, cam: &Camera, w: u32, h: u32, opts: &DrawOptions) {
        let eye = cam.eye();
        let u = CameraUniform {
            view_proj: cam.view_proj(w as f32 / h.max(1) as f32).to_cols_array_2d(),
            eye: [eye.x, eye.y, eye.z, 1.0],
            light: [0.4, 0.9, 0.5, 0.0],
            viewport: [w as f32, h as f32, opts.line_width, if opts.springs { opts.strain_scale.max(1e-6) } else { 0.0 }],
            front: [0.85, 0.32, 0.22, 1.0],
            back: [0.25, 0.45, 0.8, 1.0],
            line: [0.95, 0.8, 0.35, 1.0],
        };
        queue.write_buffer(&self.camera_buf, 0, bytemuck::bytes_of(&u));
    }

    /// Moves the colliders drawn as solids that follow a path to where they are at simulated time `t`
    /// (s), before the frame's draw (nothing for colliders that stand still).
    pub fn set_collider_time(&self, queue: &wgpu::Queue, t: f64) {
        if let Some(solids) = self.model.as_ref().and_then(|m| m.solids.as_ref()) {
            solids.update(queue, t);
        }
    }

    fn ensure_targets(&mut self, device: &wgpu::Device, w: u32, h: u32) {
        if matches!(&self.targets, Some((tw, th, _, _)) if *tw == w && *th == h) {
            return;
        }
        let size = wgpu::Extent3d { width: w.max(1), height: h.max(1), depth_or_array_layers: 1 };
        let tex = |format, label| {
            device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size,
                    mip_level_count: 1,
                    sample_count: self.samples,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                })
                .create_view(&Default::default())
        };
        let msaa = (self.samples > 1).then(|| tex(self.format, "springsim.msaa"));
        let depth = tex(DEPTH_FORMAT, "springsim.depth");
        self.targets = Some((w, h, msaa, depth));
    }

    /// Records the vertex-normals compute pass (nothing for a model without triangles).
    pub fn encode_normals(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some(mesh) = self.model.as_ref().and_then(|m| m.mesh.as_ref()) {
            let mut pass =
                encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("springsim.normals"), timestamp_writes: None });
            pass.set_pipeline(&self.normals_pipe);
            pass.set_bind_group(0, &mesh.normals_bg, &[]);
            pass.dispatch_workgroups(mesh.n_vertices.div_ceil(64), 1, 1);
        }
    }

    /// Records the normals pass and the scene's render pass into `encoder`, drawing into `view`
    /// (`w`×`h`, the renderer's format, one sample), cleared first.
    #[allow(clippy::too_many_arguments)] // the host's device, encoder and target, and what to draw
    pub fn encode(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        sim: &GpuSimulator,
        view: &wgpu::TextureView,
        w: u32,
        h: u32,
        opts: &DrawOptions,
    ) {
        self.ensure_targets(device, w, h);
        let Some(m) = &self.model else { return };
        let draw_mesh = m.mesh.as_ref().filter(|_| !opts.springs);
        if !opts.springs {
            self.encode_normals(encoder);
        }
        let (_, _, msaa, depth) = self.targets.as_ref().expect("targets");
        let (att_view, resolve) = match msaa {
            Some(ms) => (ms, Some(view)),
            None => (view, None),
        };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("springsim.scene"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: att_view,
                depth_slice: None,
                resolve_target: resolve,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(super::pipeline::clear_color(self.format, [0.055, 0.06, 0.075])),
                    store: wgpu::StoreOp::Store,
                },
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
        pass.set_bind_group(0, &self.camera_bg, &[]);
        pass.set_pipeline(&self.ground_pipe);
        pass.set_bind_group(1, &m.ground, &[]);
        pass.draw(0..6, 0..1);
        if let Some(solids) = &m.solids {
            self.solid_pipe.draw(&mut pass, solids);
        }
        match (opts.model, draw_mesh) {
            (false, _) => {}
            (true, Some(mesh)) => {
                pass.set_pipeline(&self.cloth_pipe);
                pass.set_vertex_buffer(0, sim.positions());
                pass.set_vertex_buffer(1, mesh.normals.slice(..));
                pass.set_index_buffer(mesh.tris.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..mesh.n_indices, 0, 0..1);
            }
            (true, None) => {
                let segs = if opts.springs { &m.springs } else { &m.structure };
                if segs.count > 0 {
                    pass.set_pipeline(&self.line_pipe);
                    pass.set_bind_group(1, &segs.bg, &[]);
                    pass.draw(0..segs.count * 6, 0..1);
                }
            }
        }
        if let Some(pins) = &m.pins {
            self.pin_pipe.draw(&mut pass, pins);
        }
    }
}
