//! The colliders on the GPU (`shaders/collide.wgsl`), applied after every step of every method: the
//! kernel, compiled only for a model with colliders, and the buffers of one model's colliders.

use super::alloc::Allocator;
use super::cost::{CountedPass, Phase};
use super::layout::{groups, CollideInfo, GpuCollider, COLLIDER_BOX, COLLIDER_CAPSULE, COLLIDER_HALF_SPACE, COLLIDER_SPHERE};
use super::options::GpuOptions;
use super::pipelines::{bind, build, storage, uniform};
use super::state::GpuState;
use crate::error::Result;
use crate::model::Collider;

/// The `collide` kernel and its layout.
pub struct CollideKernels {
    /// (P, state, colliders, info).
    pub layout: wgpu::BindGroupLayout,
    /// `collide`.
    pub collide: wgpu::ComputePipeline,
}

impl CollideKernels {
    /// Compiles the kernel.
    pub fn new(device: &wgpu::Device, options: &GpuOptions) -> Result<Self> {
        let entries = [uniform(0), storage(1, false), storage(2, true), uniform(3)];
        let k = build(device, options, "collide.wgsl", &[&entries], &["collide"])?;
        Ok(CollideKernels { layout: k.layout(0)?, collide: k.pipeline("collide")? })
    }
}

/// The GPU record of a collider (unit normal and quaternion: pass [`Collider::normalized`] ones).
pub fn pack_collider(c: &Collider) -> GpuCollider {
    let v4 = |p: [f64; 3], w: f64| [p[0] as f32, p[1] as f32, p[2] as f32, w as f32];
    let mut r = GpuCollider { friction: c.friction() as f32, thickness: c.thickness() as f32, ..Default::default() };
    match *c {
        Collider::HalfSpace { normal, offset, .. } => {
            r.kind = COLLIDER_HALF_SPACE;
            r.a = v4(normal, offset);
        }
        Collider::Sphere { center, radius, .. } => {
            r.kind = COLLIDER_SPHERE;
            r.a = v4(center, radius);
        }
        Collider::Capsule { a, b, radius, .. } => {
            r.kind = COLLIDER_CAPSULE;
            r.a = v4(a, radius);
            r.b = v4(b, 0.0);
        }
        Collider::Box { center, half_extents, rotation, .. } => {
            r.kind = COLLIDER_BOX;
            r.a = v4(center, 0.0);
            r.b = v4(half_extents, 0.0);
            r.c = rotation.map(|q| q as f32);
        }
    }
    r
}

/// One model's colliders on the GPU: the kernel, their records, the count, and a bind group per state
/// buffer.
pub struct Colliders {
    /// The kernel.
    pub kernels: CollideKernels,
    /// The `Collider` records.
    pub records: wgpu::Buffer,
    /// `CollideInfo` (uniform).
    pub info: wgpu::Buffer,
    /// The bind group that collides `state[q]`, per q.
    pub groups: [wgpu::BindGroup; 2],
    /// Bytes of the buffers.
    pub bytes: u64,
}

impl Colliders {
    /// Compiles the kernel, uploads `colliders` (unit normals) and builds the bind groups once; `None`
    /// when there are none (then nothing is compiled or recorded and the steps are exactly those of a
    /// model without colliders).
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState, colliders: &[Collider]) -> Result<Option<Self>> {
        if colliders.is_empty() {
            return Ok(None);
        }
        let kernels = CollideKernels::new(device, options)?;
        let mut alloc = Allocator::new(device);
        let recs: Vec<GpuCollider> = colliders.iter().map(pack_collider).collect();
        let records = alloc.buffer_init("springsim.colliders", bytemuck::cast_slice(&recs), wgpu::BufferUsages::STORAGE)?;
        let ci = CollideInfo { n_colliders: recs.len() as u32, _pad: [0; 3] };
        let info = alloc.buffer_init("springsim.collide_info", bytemuck::bytes_of(&ci), wgpu::BufferUsages::UNIFORM)?;
        let groups = [0, 1].map(|q| bind(device, &kernels.layout, "springsim.collide", &[&st.params, &st.state[q], &records, &info]));
        Ok(Some(Colliders { kernels, records, info, groups, bytes: alloc.bytes() }))
    }

    /// Records the `collide` dispatch on `state[q]` (n particles).
    pub fn encode(&self, pass: &mut CountedPass, q: usize, n: usize) {
        pass.phase(Phase::Collide);
        pass.set_pipeline(&self.kernels.collide);
        pass.set_bind_group(0, &self.groups[q], &[]);
        pass.dispatch_workgroups(groups(n), 1, 1);
    }
}
