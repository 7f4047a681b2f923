//! `GpuState`: the particle state of one simulation and what every method reads: the state ping-pong
//! buffers, the model's CSR neighbour table and offsets, the `Params` block and a small read-back
//! staging buffer. Nothing method-specific: each integrator owns its own buffers
//! ([`crate::gpu::methods::integrator`]). Also the read-back helpers.

use crate::error::{Error, Result};
use crate::gpu::base::alloc::Allocator;
use crate::gpu::base::layout::{GpuNbr, GpuParams};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::profiling::cost::GpuCounters;
use crate::reference::model::CpuModel;

/// Bindings of the neighbour table (`nbr`, `nbr_1`): 2 × 128 MiB holds 16.7 M incidence entries.
pub const NBR_SLOTS: usize = 2;

/// Bytes of the small staging buffer [`GpuState::readback`] (status words, flags, reports).
pub const READBACK_BYTES: u64 = 256;

/// The particle state and the shared topology of one simulation.
pub struct GpuState {
    /// Particles.
    pub n: usize,
    /// Springs.
    pub n_springs: usize,
    /// `Params` (a parameter block).
    pub params: wgpu::Buffer,
    /// One `Nbr` per CSR incidence entry, in CSR order: the first [`GpuState::split`] bytes (all of
    /// them when they fit one binding).
    pub nbr: wgpu::Buffer,
    /// The `Nbr` records past the split (a 64-byte placeholder when `nbr` holds them all): the kernels'
    /// `nbr_1`, read through `nbr_at` (`shaders/shared/forces.wgsl`).
    pub nbr_1: wgpu::Buffer,
    /// The bytes at which storage buffers are split into bindings ([`crate::gpu::base::alloc::split_bytes`]; the
    /// kernels' `SPLIT_VEC4` = split / 16).
    pub split: u64,
    /// The bindings the incidence records span (1 when `nbr` holds them all; the kernels' `NBR_SPLIT`,
    /// [`crate::gpu::base::specialize::Splits`]).
    pub nbr_parts: usize,
    /// The n + 1 CSR offsets into `nbr`.
    pub csr: wgpu::Buffer,
    /// The ping-pong states: positions (`vec4<f32>`, w = 1/m) at [0, n), velocities at [n, 2n)
    /// (`STORAGE | VERTEX | COPY_SRC | COPY_DST`). `state[0]` holds the current state between frames;
    /// its first n entries are the positions, usable as a vertex buffer.
    pub state: [wgpu::Buffer; 2],
    /// A staging buffer of [`READBACK_BYTES`] for the small read-backs (larger ones get their own).
    pub readback: wgpu::Buffer,
    /// What the engine records and transfers, counted ([`crate::gpu::profiling::cost`]).
    pub counters: GpuCounters,
    /// The queue the model was uploaded through (the integrators upload their tables through it too).
    pub queue: wgpu::Queue,
    /// Bytes of the buffers above.
    bytes: u64,
}

/// Packs positions (w = 1/m, 0 when pinned) and velocities into the state layout.
pub fn pack_state(m: &CpuModel, x: &[[f64; 3]], v: &[[f64; 3]]) -> Vec<[f32; 4]> {
    packed_state(m, x, v).collect()
}

/// [`pack_state`]'s entries one by one (positions, then velocities), for an upload that streams them.
pub fn packed_state<'a>(m: &'a CpuModel, x: &'a [[f64; 3]], v: &'a [[f64; 3]]) -> impl Iterator<Item = [f32; 4]> + 'a {
    let positions = x.iter().zip(&m.inv_mass).take(m.n).map(|(xi, &w)| [xi[0] as f32, xi[1] as f32, xi[2] as f32, w as f32]);
    let velocities = v.iter().zip(&m.inv_mass).take(m.n).map(|(vi, &w)| {
        let vi = if w == 0.0 { [0.0; 3] } else { *vi };
        [vi[0] as f32, vi[1] as f32, vi[2] as f32, 0.0]
    });
    positions.chain(velocities)
}

impl GpuState {
    /// Checks every size against the device's limits, then allocates and uploads through `queue`.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        options: &GpuOptions,
        m: &CpuModel,
        x: &[[f64; 3]],
        v: &[[f64; 3]],
    ) -> Result<Self> {
        // uploads streamed through the queue in chunks: neither the host nor the driver holds a staging
        // copy of a whole table
        let mut alloc = Allocator::streaming(device, queue);
        let split = options.split_bytes(device);
        let nbr_bytes = (m.incidence.entries.len() * std::mem::size_of::<GpuNbr>()) as u64;
        let read_only = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let state_usage = crate::gpu::base::alloc::STORAGE_RW | wgpu::BufferUsages::VERTEX;
        let state_bytes = (2 * m.n * 16) as u64;
        // check both state buffers and the neighbour table before building or uploading anything
        alloc.check("springsim.state", state_bytes, state_usage)?;
        alloc.check_split("springsim.nbr", nbr_bytes, split, NBR_SLOTS)?;
        // written a chunk at a time: no host copy of the table or the state
        let records = m.incidence.entries.iter().map(|&e| {
            let spring = (e >> 1) as usize;
            let j = if e & 1 == 0 { m.end_b[spring] } else { m.end_a[spring] };
            GpuNbr { j, rest: m.rest[spring] as f32, k: m.k[spring] as f32, kd: m.kd[spring] as f32 }
        });
        let nbr = alloc.split_fill("springsim.nbr", nbr_bytes, split, NBR_SLOTS, read_only, |w| w.records(records))?;
        let nbr_parts = nbr.parts();
        let (nbr, nbr_1) = (nbr.bindings()[0].clone(), nbr.bindings()[1].clone());
        let state = [
            alloc.buffer_fill("springsim.state0", state_bytes, state_usage, |w| w.records(packed_state(m, x, v)))?,
            alloc.buffer("springsim.state1", state_bytes, state_usage)?,
        ];
        let csr = alloc.buffer_init("springsim.csr", bytemuck::cast_slice(&m.incidence.offsets), read_only)?;
        let params = alloc.params("springsim.params", std::mem::size_of::<GpuParams>() as u64)?;
        let readback = alloc.buffer("springsim.readback", READBACK_BYTES, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
        Ok(GpuState {
            n: m.n,
            n_springs: m.end_a.len(),
            params,
            nbr,
            nbr_1,
            split,
            nbr_parts,
            csr,
            state,
            readback,
            counters: GpuCounters::default(),
            queue: queue.clone(),
            bytes: alloc.bytes(),
        })
    }

    /// Bytes of the state's buffers.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes of one state buffer's content (2n `vec4`).
    pub fn state_bytes(&self) -> u64 {
        (2 * self.n * 16).max(16) as u64
    }

    /// The byte range of the positions in `state[0]` (bind it as a vertex buffer of `vec4<f32>`).
    pub fn positions_range(&self) -> std::ops::Range<u64> {
        0..(self.n * 16) as u64
    }
}

/// Maps `buffer[..bytes]` and copies it out (waits for the device); counted as one read-back.
pub(crate) fn read_buffer(device: &wgpu::Device, counters: &GpuCounters, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
    read_mapped(device, counters, buffer, bytes, |data| data.to_vec())
}

/// Maps `buffer[..bytes]` and hands the mapped bytes to `f` (waits for the device; no copy of its own);
/// counted as one read-back.
fn read_mapped<T>(
    device: &wgpu::Device,
    counters: &GpuCounters,
    buffer: &wgpu::Buffer,
    bytes: u64,
    f: impl FnOnce(&[u8]) -> T,
) -> Result<T> {
    counters.readback(bytes);
    let slice = buffer.slice(..bytes);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    counters.wait(device)?;
    rx.recv().map_err(|e| Error::Gpu(e.to_string()))?.map_err(|e| Error::Gpu(e.to_string()))?;
    let out = f(&slice.get_mapped_range().map_err(|e| Error::Gpu(e.to_string()))?);
    buffer.unmap();
    Ok(out)
}

/// Reads `count` `vec4<f32>`s of `buffer` from `vec4` index `at` through a staging buffer of their own
/// (submits one copy and waits).
pub(crate) fn read_vec4s(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    counters: &GpuCounters,
    buffer: &wgpu::Buffer,
    at: usize,
    count: usize,
) -> Result<Vec<[f32; 4]>> {
    read_vec4s_with(device, queue, counters, buffer, at, count, |v| v.to_vec())
}

/// [`read_vec4s`] handing the mapped `vec4`s to `f` instead of copying them out (a caller that converts
/// them keeps one host copy, not two).
pub(crate) fn read_vec4s_with<T>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    counters: &GpuCounters,
    buffer: &wgpu::Buffer,
    at: usize,
    count: usize,
    f: impl FnOnce(&[[f32; 4]]) -> T,
) -> Result<T> {
    if count == 0 {
        return Ok(f(&[]));
    }
    let bytes = (count * 16) as u64;
    let mut alloc = Allocator::new(device);
    let staging = alloc.buffer("springsim.staging", bytes, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
    let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.read") });
    enc.copy_buffer_to_buffer(buffer, (at * 16) as u64, &staging, 0, bytes);
    counters.submit(queue, enc.finish());
    read_mapped(device, counters, &staging, bytes, |data| match bytemuck::try_cast_slice::<u8, [f32; 4]>(data) {
        Ok(v) => f(v),
        // a mapping not aligned to 4 bytes (none seen): through an aligned copy
        Err(_) => {
            let mut v = vec![[0.0f32; 4]; data.len() / 16];
            bytemuck::cast_slice_mut::<[f32; 4], u8>(&mut v).copy_from_slice(data);
            f(&v)
        }
    })
}

/// Reads `words` u32s of `buffer` from byte `offset` through the state's small staging buffer.
pub(crate) fn read_words(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    st: &GpuState,
    buffer: &wgpu::Buffer,
    offset: u64,
    words: usize,
) -> Result<Vec<u32>> {
    let bytes = (words * 4) as u64;
    let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.read_words") });
    enc.copy_buffer_to_buffer(buffer, offset, &st.readback, 0, bytes);
    st.counters.submit(queue, enc.finish());
    let data = read_buffer(device, &st.counters, &st.readback, bytes)?;
    Ok(bytemuck::cast_slice(&data).to_vec())
}

/// The xyz of `vec4`s as f64.
pub(crate) fn xyz(v: &[[f32; 4]]) -> Vec<[f64; 3]> {
    v.iter().map(|a| [a[0] as f64, a[1] as f64, a[2] as f64]).collect()
}
