//! Self-collision on the GPU (`shaders/self_collision.wgsl`, twin [`crate::reference::self_collision`]):
//! the kernels, compiled only for a model with self-collision, and their buffers: the bucket counts
//! (`u32` atomics), the hash (starts, block sums, each particle's bucket, the particles by bucket) and
//! the repulsion's output state. Recorded after every step, before the colliders.

use crate::error::Result;
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::{groups, SelfInfo, WORKGROUP_SIZE};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{bind, build, params, storage, Bindings, Kernel};
use crate::gpu::base::state::{read_buffer, GpuState};
use crate::gpu::profiling::cost::{CountedPass, Phase};
use crate::model::SelfCollision;
use crate::reference::self_collision::table_size;

/// The entry points, in dispatch order.
pub const SELF_COLLISION_KERNELS: [&str; 8] =
    ["sc_count", "sc_scan_blocks", "sc_scan_sums", "sc_add_sums", "sc_scatter", "sc_sort", "sc_repulse", "sc_apply"];

/// The hash as read back from the GPU ([`SelfCollider::read_hash`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuHash {
    /// The T + 1 bucket starts.
    pub start: Vec<u32>,
    /// Each particle's bucket.
    pub bucket: Vec<u32>,
    /// The particles by bucket.
    pub sorted: Vec<u32>,
}

/// One model's self-collision on the GPU: its kernels, buffers and a bind group per state buffer.
pub struct SelfCollider {
    pipelines: Vec<Kernel>,
    /// The hash buffer: `[start (T + 1) | block sums (T / WG) | bucket (n) | sorted (n)]`.
    hash: wgpu::Buffer,
    groups: [Bindings; 2],
    table: usize,
    passes: u32,
    n: usize,
    /// Bytes of the buffers.
    pub bytes: u64,
}

impl SelfCollider {
    /// Compiles the kernels and allocates the buffers (each checked against the device's limits);
    /// `None` without self-collision (then nothing is compiled or recorded).
    pub fn new(device: &wgpu::Device, options: &GpuOptions, st: &GpuState, sc: Option<&SelfCollision>) -> Result<Option<Self>> {
        let Some(sc) = sc else { return Ok(None) };
        let n = st.n;
        let table = table_size(n);
        let n_blocks = table / WORKGROUP_SIZE as usize;
        let mut alloc = Allocator::new(device);
        let info = SelfInfo {
            thickness: sc.thickness as f32,
            inv_cell: (1.0 / sc.cell_size()) as f32,
            table: table as u32,
            n_blocks: n_blocks as u32,
        };
        let info = alloc.params_init("springsim.self_info", bytemuck::bytes_of(&info))?;
        let counts = alloc.storage("springsim.self_counts", (table * 4) as u64, wgpu::BufferUsages::empty())?;
        let hash_words = table + 1 + n_blocks + 2 * n;
        let hash = alloc.storage("springsim.self_hash", (hash_words * 4) as u64, wgpu::BufferUsages::empty())?;
        let out = alloc.storage("springsim.self_out", (2 * n * 16) as u64, wgpu::BufferUsages::empty())?;
        let entries = [
            params(0),
            storage(1, false),
            storage(2, true),
            storage(3, true),
            params(4),
            storage(5, false),
            storage(6, false),
            storage(7, false),
            storage(8, true),
        ];
        let k = build(device, options, "self_collision.wgsl", &[&entries], &SELF_COLLISION_KERNELS)?;
        let layout = k.layout(0)?;
        let pipelines = SELF_COLLISION_KERNELS.iter().map(|name| k.pipeline(name)).collect::<Result<Vec<_>>>()?;
        let groups = [0, 1].map(|q| {
            bind(
                device,
                &layout,
                "springsim.self_collision",
                &[&st.params, &st.state[q], &st.nbr, &st.csr, &info, &counts, &hash, &out, &st.nbr_1],
            )
        });
        Ok(Some(SelfCollider { pipelines, hash, groups, table, passes: sc.passes, n, bytes: alloc.bytes() }))
    }

    /// The workgroups of each kernel, in [`SELF_COLLISION_KERNELS`] order.
    pub fn workgroups(n: usize) -> [u32; 8] {
        let (g, t) = (groups(n), groups(table_size(n)));
        [g, t, 1, t, g, t, g, g]
    }

    /// Records the hash build (count, scan, scatter, sort) on `state[q]`.
    fn encode_hash(&self, pass: &mut CountedPass, q: usize) {
        let wg = Self::workgroups(self.n);
        pass.set_bind_group(0, &self.groups[q], &[]);
        for (pipeline, &groups) in self.pipelines.iter().zip(&wg).take(6) {
            pass.set_pipeline(pipeline);
            pass.dispatch_workgroups(groups, 1, 1);
        }
    }

    /// Records every pass (hash, repulsion, apply) on `state[q]`.
    pub fn encode(&self, pass: &mut CountedPass, q: usize) {
        if self.n == 0 {
            return;
        }
        pass.phase(Phase::Collide);
        let wg = Self::workgroups(self.n);
        for _ in 0..self.passes {
            self.encode_hash(pass, q);
            for (pipeline, &groups) in self.pipelines.iter().zip(&wg).skip(6) {
                pass.set_pipeline(pipeline);
                pass.dispatch_workgroups(groups, 1, 1);
            }
        }
    }

    /// Builds the hash of `state[0]` (no repulsion) and reads it back (one submit, one read-back), for checks.
    pub fn read_hash(&self, device: &wgpu::Device, queue: &wgpu::Queue, st: &GpuState) -> Result<GpuHash> {
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.self_hash") });
        if self.n > 0 {
            let mut raw = st.counters.begin_pass(&mut enc, "springsim.self_hash", None);
            let mut pass = CountedPass::new(&mut raw, &st.counters);
            pass.phase(Phase::Collide);
            self.encode_hash(&mut pass, 0);
        }
        let bytes = self.hash.size();
        let mut alloc = Allocator::new(device);
        let staging = alloc.buffer("springsim.self_hash_staging", bytes, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
        enc.copy_buffer_to_buffer(&self.hash, 0, &staging, 0, bytes);
        st.counters.submit(queue, enc.finish());
        let data = read_buffer(device, &st.counters, &staging, bytes)?;
        let words: &[u32] = bytemuck::cast_slice(&data);
        let (t, nb, n) = (self.table, self.table / WORKGROUP_SIZE as usize, self.n);
        Ok(GpuHash {
            start: words[..t + 1].to_vec(),
            bucket: words[t + 1 + nb..t + 1 + nb + n].to_vec(),
            sorted: words[t + 1 + nb + n..t + 1 + nb + 2 * n].to_vec(),
        })
    }
}
