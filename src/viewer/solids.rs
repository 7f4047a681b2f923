//! The colliders drawn as solids: every sphere, capsule and box of the model as a lit, matte mesh
//! (`vs_solid`/`fs_solid` in `shaders/render.wgsl`), grown by half its skin: the cloth rests on the
//! skin's outer surface, and a flat triangle between particles resting there dips below it (by s²/8R
//! for a spacing s on a sphere of radius R), so a solid drawn at the full skin shows through the cloth. The meshes are built on the host once per model, in the colliders' placement at time 0,
//! each vertex naming its collider in `w`; a collider that moves along a path ([`crate::model::Motion`])
//! is moved by its offset at the simulation's time, one `vec4` per collider written before the frame.
//! Half-spaces are the ground quad's ([`super::framing::ground`]).

use crate::model::{Collider, Model, MotionTarget};
use glam::{DQuat, DVec3};
use wgpu::util::DeviceExt;

/// Segments around a sphere's or a capsule's axis, and rings from pole to pole.
const AROUND: usize = 48;
const RINGS: usize = 24;

/// The pipeline and the layout of its group 1 (the colliders' offsets at binding 4).
pub struct SolidPipeline {
    layout: wgpu::BindGroupLayout,
    pipe: wgpu::RenderPipeline,
}

/// One model's solids: the mesh and the offsets.
pub struct Solids {
    positions: wgpu::Buffer,
    normals: wgpu::Buffer,
    indices: wgpu::Buffer,
    n_indices: u32,
    offsets: wgpu::Buffer,
    bg: wgpu::BindGroup,
    /// Per collider: the path that moves it, if any.
    paths: Vec<Option<crate::model::Path>>,
}

impl SolidPipeline {
    /// Builds the pipeline from the render module, with the camera's layout as group 0.
    pub fn new(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        cam_layout: &wgpu::BindGroupLayout,
        (format, depth_format): (wgpu::TextureFormat, wgpu::TextureFormat),
        samples: u32,
    ) -> Self {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("springsim.solids"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 4,
                visibility: wgpu::ShaderStages::VERTEX,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: true },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("springsim.solids"),
            bind_group_layouts: &[Some(cam_layout), Some(&layout)],
            immediate_size: 0,
        });
        use super::pipeline::{build, vec4s, Spec};
        let buffers = [Some(vec4s(0)), Some(vec4s(1))];
        let spec = Spec {
            label: "springsim.solids",
            layout: &pl,
            entry: ("vs_solid", "fs_solid"),
            buffers: &buffers,
            cull_back: true,
            depth: (true, wgpu::CompareFunction::Less),
        };
        let pipe = build(device, module, (format, depth_format), samples, spec);
        SolidPipeline { layout, pipe }
    }

    /// Records the solids' draw (nothing without any).
    pub fn draw(&self, pass: &mut wgpu::RenderPass, solids: &Solids) {
        pass.set_pipeline(&self.pipe);
        pass.set_bind_group(1, &solids.bg, &[]);
        pass.set_vertex_buffer(0, solids.positions.slice(..));
        pass.set_vertex_buffer(1, solids.normals.slice(..));
        pass.set_index_buffer(solids.indices.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..solids.n_indices, 0, 0..1);
    }
}

/// A mesh under construction: positions (w: the collider's index), normals, triangles.
#[derive(Default)]
pub struct SolidMesh {
    /// `[x, y, z, collider]`.
    pub positions: Vec<[f32; 4]>,
    /// `[nx, ny, nz, 0]`, outward.
    pub normals: Vec<[f32; 4]>,
    /// Counter-clockwise seen from outside.
    pub indices: Vec<u32>,
}

impl SolidMesh {
    fn vertex(&mut self, p: DVec3, n: DVec3, collider: usize) -> u32 {
        self.positions.push([p.x as f32, p.y as f32, p.z as f32, collider as f32]);
        self.normals.push([n.x as f32, n.y as f32, n.z as f32, 0.0]);
        (self.positions.len() - 1) as u32
    }

    /// A sphere-swept segment from `a` to `b` of radius `r` (a sphere when a = b): rings of
    /// hemispheres around each end joined by the cylinder between them.
    fn capsule(&mut self, a: DVec3, b: DVec3, r: f64, collider: usize) {
        let axis = b - a;
        let z = if axis.length() > 1e-12 { axis.normalize() } else { DVec3::Z };
        let x = z.any_orthonormal_vector();
        let y = z.cross(x);
        let base = self.positions.len() as u32;
        for ring in 0..=RINGS {
            // from the pole at a's far side (θ = π) to the pole at b's (θ = 0)
            let theta = std::f64::consts::PI * (1.0 - ring as f64 / RINGS as f64);
            let end = if ring <= RINGS / 2 { a } else { b };
            for k in 0..=AROUND {
                let phi = std::f64::consts::TAU * k as f64 / AROUND as f64;
                let n = x * (theta.sin() * phi.cos()) + y * (theta.sin() * phi.sin()) + z * theta.cos();
                self.vertex(end + n * r, n, collider);
            }
        }
        let row = (AROUND + 1) as u32;
        for ring in 0..RINGS as u32 {
            for k in 0..AROUND as u32 {
                let (i0, i1) = (base + ring * row + k, base + ring * row + k + 1);
                let (j0, j1) = (i0 + row, i1 + row);
                self.indices.extend_from_slice(&[i0, i1, j1, i0, j1, j0]);
            }
        }
    }

    /// A box of half-extents `e` at `c`, turned by `q`.
    fn cuboid(&mut self, c: DVec3, e: DVec3, q: DQuat, collider: usize) {
        for axis in 0..3 {
            for sign in [-1.0, 1.0] {
                let mut n = DVec3::ZERO;
                n[axis] = sign;
                let unit = |a: usize| DVec3::from_array(std::array::from_fn(|k| f64::from(u8::from(k == a))));
                let (u, v) = (unit((axis + 1) % 3), unit((axis + 2) % 3));
                let (u, v) = if sign > 0.0 { (u, v) } else { (v, u) };
                let centre = n * e;
                let corner = |su: f64, sv: f64| c + q * (centre + u * (su * e.dot(u)) + v * (sv * e.dot(v)));
                let nn = q * n;
                let i = [corner(-1.0, -1.0), corner(1.0, -1.0), corner(1.0, 1.0), corner(-1.0, 1.0)].map(|p| self.vertex(p, nn, collider));
                self.indices.extend_from_slice(&[i[0], i[1], i[2], i[0], i[2], i[3]]);
            }
        }
    }

    /// The model's spheres, capsules and boxes, each grown by half its skin; `None` when it has none.
    pub fn of(model: &Model) -> Option<SolidMesh> {
        let mut mesh = SolidMesh::default();
        for (k, c) in model.colliders.iter().enumerate() {
            match c.normalized() {
                Collider::Sphere { center, radius, thickness, .. } => {
                    let c = DVec3::from_array(center);
                    mesh.capsule(c, c, radius + 0.5 * thickness, k);
                }
                Collider::Capsule { a, b, radius, thickness, .. } => {
                    mesh.capsule(DVec3::from_array(a), DVec3::from_array(b), radius + 0.5 * thickness, k);
                }
                Collider::Box { center, half_extents, rotation, thickness, .. } => {
                    let q = DQuat::from_array(rotation).normalize();
                    mesh.cuboid(DVec3::from_array(center), DVec3::from_array(half_extents) + DVec3::splat(0.5 * thickness), q, k);
                }
                Collider::HalfSpace { .. } => {}
            }
        }
        (!mesh.indices.is_empty()).then_some(mesh)
    }
}

impl Solids {
    /// Uploads the model's solids (`None` without any).
    pub fn new(device: &wgpu::Device, pipeline: &SolidPipeline, model: &Model) -> Option<Solids> {
        let mesh = SolidMesh::of(model)?;
        let init = |label: &str, data: &[u8], usage: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: data, usage })
        };
        let vertex = wgpu::BufferUsages::VERTEX;
        let positions = init("springsim.solids.positions", bytemuck::cast_slice(&mesh.positions), vertex);
        let normals = init("springsim.solids.normals", bytemuck::cast_slice(&mesh.normals), vertex);
        let indices = init("springsim.solids.indices", bytemuck::cast_slice(&mesh.indices), wgpu::BufferUsages::INDEX);
        let zero = vec![[0.0f32; 4]; model.colliders.len().max(1)];
        let offsets =
            init("springsim.solids.offsets", bytemuck::cast_slice(&zero), wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST);
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("springsim.solids"),
            layout: &pipeline.layout,
            entries: &[wgpu::BindGroupEntry { binding: 4, resource: offsets.as_entire_binding() }],
        });
        let mut paths = vec![None; model.colliders.len()];
        for m in &model.motions {
            if let MotionTarget::Collider(c) = m.target {
                if let Some(p) = paths.get_mut(c) {
                    *p = Some(m.path.clone());
                }
            }
        }
        Some(Solids { positions, normals, indices, n_indices: mesh.indices.len() as u32, offsets, bg, paths })
    }

    /// Moves the colliders that follow a path to where they are at simulated time `t` (s): one queue
    /// write, nothing for a model whose colliders stand still.
    pub fn update(&self, queue: &wgpu::Queue, t: f64) {
        if self.paths.iter().all(Option::is_none) {
            return;
        }
        let offsets: Vec<[f32; 4]> = self
            .paths
            .iter()
            .map(|p| {
                p.as_ref().map_or([0.0; 4], |p| {
                    let o = p.offset(t);
                    [o[0] as f32, o[1] as f32, o[2] as f32, 0.0]
                })
            })
            .collect();
        queue.write_buffer(&self.offsets, 0, bytemuck::cast_slice(&offsets));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sphere_mesh_lies_halfway_into_its_skin_with_outward_normals() {
        let mut m = Model::new(crate::model::Forces::none());
        m.colliders.push(Collider::sphere([0.1, 0.2, 0.3], 0.25, 0.01, 0.5));
        let mesh = SolidMesh::of(&m).expect("a sphere");
        for (p, n) in mesh.positions.iter().zip(&mesh.normals) {
            let d = DVec3::new(p[0] as f64 - 0.1, p[1] as f64 - 0.2, p[2] as f64 - 0.3);
            assert!((d.length() - 0.255).abs() < 1e-6, "{d:?}");
            assert!(d.normalize().dot(DVec3::new(n[0] as f64, n[1] as f64, n[2] as f64)) > 0.999);
            assert_eq!(p[3], 0.0);
        }
        assert_eq!(mesh.indices.len(), RINGS * AROUND * 6);
        assert!(SolidMesh::of(&Model::new(crate::model::Forces::none())).is_none());
    }
}
