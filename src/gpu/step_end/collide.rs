//! The colliders and the moving pins on the GPU (`shaders/collide.wgsl`), applied after every step of
//! every method: the kernels, compiled only for a model with colliders or motions, and one model's
//! buffers.
//!
//! What moves along a path ([`crate::model::Motion`]) is placed on the host in f64, per step: the
//! colliders where they are at the step's end and each motion's (offset, velocity), in one block per
//! step of the frame, 256-byte aligned (the device's storage offset alignment), written by one
//! `write_buffer` per frame ([`Colliders::write_slots`]); step k's dispatches bind block k by a dynamic
//! offset. A model without motions writes its one block at construction and never again.

use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::{
    groups, CollideInfo, GpuCollider, GpuMovingPin, COLLIDER_BOX, COLLIDER_CAPSULE, COLLIDER_HALF_SPACE, COLLIDER_SPHERE,
};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, bind_entries, build, params, storage, Bindings, GroupLayout, Kernel};
use crate::gpu::base::state::GpuState;
use crate::gpu::profiling::cost::{CountedPass, GpuCounters, Phase};
use crate::model::Collider;
use crate::reference::model::{CpuModel, V3};

/// A storage binding with a dynamic offset, of `size` bytes from its buffer offset.
fn dynamic_storage(binding: u32, size: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: true,
            min_binding_size: wgpu::BufferSize::new(size),
        },
        count: None,
    }
}

/// The `collide`, `collide_positions` and `move_pins` kernels and their layouts.
pub struct CollideKernels {
    /// Group 0: (P, state, info, pins).
    pub layout: GroupLayout,
    /// Group 1: (colliders, paths) of one step, at a dynamic offset.
    pub placed_layout: GroupLayout,
    /// Group 2 of `collide_positions`: local/global's contacts.
    pub contacts_layout: GroupLayout,
    /// `collide`.
    pub collide: Kernel,
    /// `collide_positions`.
    pub collide_positions: Kernel,
    /// `move_pins`.
    pub move_pins: Kernel,
}

impl CollideKernels {
    /// Compiles the kernels for blocks of `colliders_bytes` + `paths_bytes`.
    pub fn new(device: &wgpu::Device, options: &GpuOptions, colliders_bytes: u64, paths_bytes: u64) -> Result<Self> {
        let g0 = [params(0), storage(1, false), params(2), storage(3, true)];
        let g1 = [dynamic_storage(0, colliders_bytes), dynamic_storage(1, paths_bytes)];
        let k = build(device, options, "collide.wgsl", &[&g0, &g1], &["collide", "move_pins"])?;
        // collide_positions writes local/global's contacts too (group 2)
        let g2 = [storage(0, false)];
        let kp = build(device, options, "collide.wgsl", &[&g0, &g1, &g2], &["collide_positions"])?;
        Ok(CollideKernels {
            layout: k.layout(0)?,
            placed_layout: k.layout(1)?,
            contacts_layout: kp.layout(2)?,
            collide: k.pipeline("collide")?,
            collide_positions: kp.pipeline("collide_positions")?,
            move_pins: k.pipeline("move_pins")?,
        })
    }
}

/// The GPU record of a collider (unit normal and quaternion: pass [`Collider::normalized`] ones) moving
/// at velocity `u`.
pub fn pack_collider(c: &Collider, u: V3) -> GpuCollider {
    let v4 = |p: [f64; 3], w: f64| [p[0] as f32, p[1] as f32, p[2] as f32, w as f32];
    let mut r =
        GpuCollider { friction: c.friction() as f32, thickness: c.thickness() as f32, u: v4([u.x, u.y, u.z], 0.0), ..Default::default() };
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

/// `n` rounded up to a multiple of `a`.
fn align(n: u64, a: u64) -> u64 {
    n.div_ceil(a) * a
}

/// One model's colliders and moving pins on the GPU: the kernels, the per-step blocks, the pins, and
/// the bind groups (group 0 per state buffer and for local/global's iterate; group 1 once).
pub struct Colliders {
    /// The kernels.
    pub kernels: CollideKernels,
    /// The per-step blocks: colliders then paths, `stride` bytes apart.
    pub placed: wgpu::Buffer,
    /// `CollideInfo` (a parameter block).
    pub info: wgpu::Buffer,
    /// The moving pins (`MovingPin` records; one unused record when there are none).
    pub pins: wgpu::Buffer,
    /// Group 0 on `state[q]`, per q (local/global's iterate x is `state[1 − p]`'s first half).
    pub groups: [Bindings; 2],
    /// Group 1.
    pub placed_group: Bindings,
    /// Colliders and moving pins.
    pub counts: (usize, usize),
    /// Bytes of the colliders' and the paths' part of a block.
    pub block: (u64, u64),
    /// Bytes between blocks.
    pub stride: u64,
    /// Blocks in `placed`.
    pub slots: usize,
    /// Whether anything moves (then the blocks are written per frame).
    pub moving: bool,
    /// Bytes of the buffers.
    pub bytes: u64,
}

impl Colliders {
    /// Compiles the kernels, uploads the model's colliders (placed at time 0) and moving pins, and builds
    /// the bind groups once, with room for `slots` steps per frame; `None` when the model has neither
    /// colliders nor motions (then nothing is compiled or recorded).
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState, m: &CpuModel, slots: usize) -> Result<Option<Self>> {
        if m.colliders.is_empty() && m.moving_pins.is_empty() {
            return Ok(None);
        }
        let a = u64::from(device.limits().min_storage_buffer_offset_alignment).max(16);
        let cbytes = align((m.colliders.len().max(1) * size_of::<GpuCollider>()) as u64, a);
        let pbytes = align((2 * m.motions.len().max(1) * 16) as u64, 16);
        let stride = align(cbytes + pbytes, a);
        let slots = if m.has_motion() { slots.max(1) } else { 1 };
        let kernels = CollideKernels::new(device, options, cbytes, pbytes)?;
        let mut alloc = Allocator::new(device);
        let placed = alloc.storage("springsim.colliders", stride * slots as u64, wgpu::BufferUsages::COPY_DST)?;
        let ci = CollideInfo { n_colliders: m.colliders.len() as u32, n_pins: m.moving_pins.len() as u32, _pad: [0; 2] };
        let info = alloc.params_init("springsim.collide_info", bytemuck::bytes_of(&ci))?;
        let mut recs: Vec<GpuMovingPin> = (m.moving_pins.iter().zip(&m.moving_pins_rest))
            .map(|(&(i, path), r)| GpuMovingPin { rest: [r.x as f32, r.y as f32, r.z as f32, 0.0], ids: [i, path, 0, 0] })
            .collect();
        if recs.is_empty() {
            recs.push(GpuMovingPin::default());
        }
        let pins = alloc.buffer_init("springsim.moving_pins", bytemuck::cast_slice(&recs), wgpu::BufferUsages::STORAGE)?;
        let groups = [0, 1].map(|q| bind(device, &kernels.layout, "springsim.collide", &[&st.params, &st.state[q], &info, &pins]));
        let placed_group = Self::bind_placed(device, &kernels, &placed, cbytes, pbytes);
        let c = Colliders {
            kernels,
            placed,
            info,
            pins,
            groups,
            placed_group,
            counts: (m.colliders.len(), m.moving_pins.len()),
            block: (cbytes, pbytes),
            stride,
            slots,
            moving: m.has_motion(),
            bytes: alloc.bytes(),
        };
        Ok(Some(c))
    }

    fn bind_placed(device: &wgpu::Device, k: &CollideKernels, placed: &wgpu::Buffer, cbytes: u64, pbytes: u64) -> Bindings {
        let entry = |binding: u32, offset: u64, size: u64| wgpu::BindGroupEntry {
            binding,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: placed, offset, size: wgpu::BufferSize::new(size) }),
        };
        bind_entries(device, &k.placed_layout, "springsim.collide_placed", &[entry(0, 0, cbytes), entry(1, cbytes, pbytes)])
    }

    /// Writes the blocks of the steps that end at `t_end[k]`: the colliders placed there (`m` is placed
    /// in passing, [`CpuModel::place`]) and the motions' offsets and velocities; one `write_buffer`. Grows
    /// the buffer (and rebuilds the bind group) when a frame has more steps than it holds.
    pub fn write_slots(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        counters: &GpuCounters,
        m: &mut CpuModel,
        t_end: &[f64],
    ) -> Result<()> {
        if t_end.len() > self.slots {
            let mut alloc = Allocator::new(device);
            let placed = alloc.storage("springsim.colliders", self.stride * t_end.len() as u64, wgpu::BufferUsages::COPY_DST)?;
            self.bytes = self.bytes - self.placed.size() + placed.size();
            self.placed_group = Self::bind_placed(device, &self.kernels, &placed, self.block.0, self.block.1);
            self.placed = placed;
            self.slots = t_end.len();
        }
        let mut data = vec![0u8; self.stride as usize * t_end.len()];
        for (k, &t) in t_end.iter().enumerate() {
            m.place(t);
            let recs: Vec<GpuCollider> = m.colliders.iter().zip(&m.collider_velocity).map(|(c, &u)| pack_collider(c, u)).collect();
            let paths: Vec<[f32; 4]> = m
                .motion_at(t)
                .iter()
                .flat_map(|(o, v)| [[o.x as f32, o.y as f32, o.z as f32, 0.0], [v.x as f32, v.y as f32, v.z as f32, 0.0]])
                .collect();
            let base = k * self.stride as usize;
            let cb: &[u8] = bytemuck::cast_slice(&recs);
            data[base..base + cb.len()].copy_from_slice(cb);
            let pb: &[u8] = bytemuck::cast_slice(&paths);
            let p0 = base + self.block.0 as usize;
            data[p0..p0 + pb.len()].copy_from_slice(pb);
        }
        counters.write_buffer(queue, &self.placed, 0, &data);
        Ok(())
    }

    /// The dynamic offset of step slot `slot` (slot 0 for a model without motions).
    fn offset(&self, slot: usize) -> u32 {
        let slot = if self.moving { slot.min(self.slots - 1) } else { 0 };
        (slot as u64 * self.stride) as u32
    }

    /// Records the moving pins' placement at the end of a step on `state[q]` (`move_pins`, step slot
    /// `slot`); nothing without moving pins. It comes first at a step's end, before self-collision and
    /// the colliders ([`Colliders::encode`]).
    pub fn encode_pins(&self, pass: &mut CountedPass, q: usize, slot: usize) {
        if self.counts.1 == 0 {
            return;
        }
        pass.phase(Phase::Collide);
        pass.set_bind_group(0, &self.groups[q], &[]);
        let o = self.offset(slot);
        pass.set_bind_group(1, &self.placed_group, &[o, o]);
        pass.set_pipeline(&self.kernels.move_pins);
        pass.dispatch_workgroups(groups(self.counts.1), 1, 1);
    }

    /// Records the colliders on `state[q]` (n particles) placed as in step slot `slot` (`collide`);
    /// nothing without colliders.
    pub fn encode(&self, pass: &mut CountedPass, q: usize, n: usize, slot: usize) {
        if self.counts.0 == 0 {
            return;
        }
        pass.phase(Phase::Collide);
        pass.set_bind_group(0, &self.groups[q], &[]);
        let o = self.offset(slot);
        pass.set_bind_group(1, &self.placed_group, &[o, o]);
        pass.set_pipeline(&self.kernels.collide);
        pass.dispatch_workgroups(groups(n), 1, 1);
    }

    /// Records `collide_positions` on the positions of `state[q]` (local/global's iterate x during a
    /// step) with step slot `slot`'s colliders, writing the contacts of `contacts` (group 2 over
    /// local/global's contacts, [`CollideKernels::contacts_layout`]); nothing without colliders.
    pub fn encode_positions(&self, pass: &mut CountedPass, q: usize, n: usize, slot: usize, contacts: &Bindings) {
        if self.counts.0 == 0 {
            return;
        }
        pass.phase(Phase::Collide);
        pass.set_pipeline(&self.kernels.collide_positions);
        pass.set_bind_group(0, &self.groups[q], &[]);
        pass.set_bind_group(2, contacts, &[]);
        let o = self.offset(slot);
        pass.set_bind_group(1, &self.placed_group, &[o, o]);
        pass.dispatch_workgroups(groups(n), 1, 1);
    }
}
