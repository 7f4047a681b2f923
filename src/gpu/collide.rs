//! Pipelines of `shaders/collide.wgsl`: the colliders, applied after every step of every method, and
//! the buffers of one model's colliders.

use super::layout::{groups, CollideInfo, GpuCollider, COLLIDER_HALF_SPACE, COLLIDE_WGSL, KERNEL_WGSL};
use super::pipelines::{bind, build, storage, uniform};
use super::state::GpuState;
use crate::model::Collider;
use wgpu::util::DeviceExt;

/// The `collide` kernel and its layout.
pub struct CollidePipelines {
    /// (P, state, colliders, info).
    pub layout: wgpu::BindGroupLayout,
    /// `collide`.
    pub collide: wgpu::ComputePipeline,
}

impl CollidePipelines {
    /// Compiles the kernel.
    pub fn new(device: &wgpu::Device) -> Self {
        let entries = [uniform(0), storage(1, false), storage(2, true), uniform(3)];
        let (layout, mut p) = build(device, "springsim.collide", KERNEL_WGSL[COLLIDE_WGSL].1, &entries, &["collide"]);
        CollidePipelines { layout, collide: p.remove(0) }
    }
}

/// The GPU record of a collider (unit normal: pass [`Collider::normalized`] ones).
pub fn pack_collider(c: &Collider) -> GpuCollider {
    match *c {
        Collider::HalfSpace { normal, offset, friction } => GpuCollider {
            kind: COLLIDER_HALF_SPACE,
            friction: friction as f32,
            _pad: [0; 2],
            a: [normal[0] as f32, normal[1] as f32, normal[2] as f32, offset as f32],
            b: [0.0; 4],
        },
    }
}

/// One model's colliders on the GPU: their records, the count, and a bind group per state buffer.
pub struct Colliders {
    /// The `Collider` records.
    pub records: wgpu::Buffer,
    /// `CollideInfo` (uniform).
    pub info: wgpu::Buffer,
    /// The bind group that collides `state[q]`, per q.
    pub groups: [wgpu::BindGroup; 2],
}

impl Colliders {
    /// Uploads `colliders` (unit normals) and builds the bind groups once; `None` when there are none
    /// (then nothing is recorded and the steps are exactly those of a model without colliders).
    pub fn new(device: &wgpu::Device, pipes: &CollidePipelines, st: &GpuState, colliders: &[Collider]) -> Option<Self> {
        if colliders.is_empty() {
            return None;
        }
        let recs: Vec<GpuCollider> = colliders.iter().map(pack_collider).collect();
        let records = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("springsim.colliders"),
            contents: bytemuck::cast_slice(&recs),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let ci = CollideInfo { n_colliders: recs.len() as u32, _pad: [0; 3] };
        let info = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("springsim.collide_info"),
            contents: bytemuck::bytes_of(&ci),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let groups = [0, 1].map(|q| bind(device, &pipes.layout, "springsim.collide", &[&st.params, &st.state[q], &records, &info]));
        Some(Colliders { records, info, groups })
    }

    /// Records the `collide` dispatch on `state[q]` (n particles).
    pub fn encode(&self, pipes: &CollidePipelines, pass: &mut wgpu::ComputePass, q: usize, n: usize) {
        pass.set_pipeline(&pipes.collide);
        pass.set_bind_group(0, &self.groups[q], &[]);
        pass.dispatch_workgroups(groups(n), 1, 1);
    }
}
