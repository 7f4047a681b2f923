//! `Allocator`: every buffer of the GPU engine is created here, checked against the device's limits
//! before it is allocated (a buffer that would not fit is an [`Error::BufferTooLarge`] naming it, never a
//! panic in `create_buffer` or `create_bind_group`), and counted, so that [`crate::gpu::GpuProbe::gpu_bytes`]
//! is the sum of what the state and the current integrator hold.

use crate::error::{Error, Result};

/// The largest split size [`split_bytes`] gives: chunk indices stay well inside `u32` for every element
/// size (4 B words to 32 B records).
pub const MAX_SPLIT_BYTES: u64 = 1 << 30;

/// The split size the kernels are composed with when no device is known (`tests/shaders.rs`): WebGPU's
/// default `max_storage_buffer_binding_size`, also lavapipe's.
pub const DEFAULT_SPLIT_BYTES: u64 = 128 << 20;

/// The bytes at which a storage buffer is split into bindings: the device's binding limit `device_max`,
/// or `cap` when that is smaller, rounded down to a multiple of 256 (so that every element size, 4 to 32
/// B, divides it and a pair of `vec4` never straddles two chunks), within [256 B, [`MAX_SPLIT_BYTES`]].
/// The one source of truth of the split: the kernels get it as `const SPLIT_VEC4` (`vec4`s per chunk,
/// [`crate::gpu::base::layout::compose_split`]) and the allocator splits at it ([`Allocator::split_storage`]).
pub fn split_bytes(device_max: u64, cap: Option<u64>) -> u64 {
    let b = cap.map_or(device_max, |c| c.min(device_max));
    (b / 256 * 256).clamp(256, MAX_SPLIT_BYTES)
}

/// The name of the limit a buffer split over `slots` bindings is held to, for [`Error::BufferTooLarge`].
fn split_limit_name(slots: usize) -> &'static str {
    match slots {
        1 => "max_storage_buffer_binding_size",
        2 => "max_storage_buffer_binding_size (split size) × 2 bindings",
        3 => "max_storage_buffer_binding_size (split size) × 3 bindings",
        4 => "max_storage_buffer_binding_size (split size) × 4 bindings",
        _ => "max_storage_buffer_binding_size (split size) × its bindings",
    }
}

/// Refuses a buffer `label` of `bytes` split at `split` bytes over `slots` bindings when it needs more
/// ([`Error::BufferTooLarge`] naming it, its bytes and `slots` × `split`).
pub fn check_split_bytes(label: &str, bytes: u64, split: u64, slots: usize) -> Result<()> {
    let limit = split * slots as u64;
    if bytes > limit {
        return Err(Error::BufferTooLarge { buffer: label.to_string(), bytes, limit_name: split_limit_name(slots), limit });
    }
    Ok(())
}

/// A storage buffer split into up to `slots` bindings of at most the split size each: `parts[0]` holds
/// elements [0, chunk), `parts[1]` [chunk, 2·chunk), …; the slots beyond the parts needed are bound to a
/// 64-byte placeholder. A buffer that fits one binding is one part, as it would be unsplit. The kernels
/// select the part by index (`if e < SPLIT_VEC4 { a[e] } else { a_1[e − SPLIT_VEC4] }`).
pub struct SplitBuffer {
    /// The parts (at least one), then the placeholder when fewer parts than slots.
    buffers: Vec<wgpu::Buffer>,
    /// Parts holding data.
    parts: usize,
    /// Bindings the kernels declare for it.
    slots: usize,
    /// Bytes per part (the split size).
    split: u64,
}

impl SplitBuffer {
    /// The buffers to bind, one per slot in order (the placeholder for the slots beyond the parts).
    pub fn bindings(&self) -> Vec<&wgpu::Buffer> {
        (0..self.slots).map(|k| &self.buffers[k.min(self.buffers.len() - 1)]).collect()
    }

    /// The first part (the whole buffer when it is not split).
    pub fn first(&self) -> &wgpu::Buffer {
        &self.buffers[0]
    }

    /// The parts holding data (1 when not split).
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// The buffers holding data.
    pub fn part_buffers(&self) -> &[wgpu::Buffer] {
        &self.buffers[..self.parts]
    }

    /// The part holding byte `offset` of the whole, and the offset within it.
    pub fn locate(&self, offset: u64) -> (&wgpu::Buffer, u64) {
        let k = ((offset / self.split) as usize).min(self.parts - 1);
        (&self.buffers[k], offset - k as u64 * self.split)
    }

    /// The byte ranges of the whole `[offset, offset + bytes)` as (part, offset within it, bytes), in order.
    pub fn pieces(&self, offset: u64, bytes: u64) -> Vec<(&wgpu::Buffer, u64, u64)> {
        let mut out = Vec::new();
        let (mut at, end) = (offset, offset + bytes);
        while at < end {
            let (buffer, local) = self.locate(at);
            let take = (self.split - local).min(end - at);
            out.push((buffer, local, take));
            at += take;
        }
        out
    }
}

/// Buffers are at least this many bytes (a zero-sized model still binds valid buffers).
const MIN_BUFFER_BYTES: u64 = 64;

/// Creates checked buffers on one device and counts their bytes.
pub struct Allocator<'a> {
    device: &'a wgpu::Device,
    /// Where [`Allocator::buffer_fill`] and [`Allocator::split_fill`] stream their content (`None`:
    /// through the buffers' mappings).
    queue: Option<&'a wgpu::Queue>,
    max_binding: u64,
    max_buffer: u64,
    bytes: u64,
}

/// The usages of a read-write storage buffer that can be cleared and copied.
pub const STORAGE_RW: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_DST).union(wgpu::BufferUsages::COPY_SRC);

/// The usages of a parameter buffer: written by the host, read by the kernels through a read-only
/// storage binding ([`crate::gpu::base::pipelines::params`]).
pub const PARAMS: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::UNIFORM).union(wgpu::BufferUsages::COPY_DST);

impl<'a> Allocator<'a> {
    /// An allocator on `device` with nothing counted yet.
    pub fn new(device: &'a wgpu::Device) -> Self {
        let limits = device.limits();
        Allocator { device, queue: None, max_binding: limits.max_storage_buffer_binding_size, max_buffer: limits.max_buffer_size, bytes: 0 }
    }

    /// An allocator whose filled buffers ([`Allocator::buffer_fill`], [`Allocator::split_fill`]) are
    /// uploaded through `queue` in chunks, submitted every [`SUBMIT_BYTES`] and waited for, so that the
    /// driver's staging memory stays bounded too (a buffer mapped at creation without `MAP_WRITE` gets a
    /// staging copy of its whole size from wgpu, held until the next submit).
    pub fn streaming(device: &'a wgpu::Device, queue: &'a wgpu::Queue) -> Self {
        Allocator { queue: Some(queue), ..Self::new(device) }
    }

    /// Bytes allocated through this allocator.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Checks `bytes` of a buffer `label` with `usage` against the limits: the buffer size always, the
    /// storage binding size when it is a storage buffer (the engine binds whole buffers).
    pub fn check(&self, label: &str, bytes: u64, usage: wgpu::BufferUsages) -> Result<()> {
        let too_large = |limit_name, limit| Error::BufferTooLarge { buffer: label.to_string(), bytes, limit_name, limit };
        if usage.contains(wgpu::BufferUsages::STORAGE) && bytes > self.max_binding {
            return Err(too_large("max_storage_buffer_binding_size", self.max_binding));
        }
        if bytes > self.max_buffer {
            return Err(too_large("max_buffer_size", self.max_buffer));
        }
        Ok(())
    }

    /// An uninitialised buffer of at least `bytes` (rounded up to 64 B at least and to a multiple of 4).
    pub fn buffer(&mut self, label: &str, bytes: u64, usage: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        let size = bytes.max(MIN_BUFFER_BYTES).next_multiple_of(4);
        self.check(label, size, usage)?;
        self.bytes += size;
        Ok(self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false }))
    }

    /// A buffer holding `data` (zero-padded to 64 B at least and to a multiple of 4).
    pub fn buffer_init(&mut self, label: &str, data: &[u8], usage: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        let size = (data.len() as u64).max(MIN_BUFFER_BYTES).next_multiple_of(4);
        self.check(label, size, usage)?;
        self.bytes += size;
        // written in place through the mapping (no padded host copy of the data); a fresh mapping is
        // zeroed, so the padding is zero
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: true });
        if !data.is_empty() {
            let mut view = buffer.get_mapped_range_mut(..).map_err(|e| Error::Gpu(format!("{label}: {e}")))?;
            view.slice(..data.len()).copy_from_slice(data);
        }
        buffer.unmap();
        Ok(buffer)
    }

    /// A buffer of `bytes` (padded as [`Allocator::buffer_init`]) whose content `fill` writes in order
    /// ([`UploadWriter`]): no host copy of the whole content is made.
    pub fn buffer_fill(
        &mut self,
        label: &str,
        bytes: u64,
        usage: wgpu::BufferUsages,
        fill: impl FnOnce(&mut UploadWriter) -> Result<()>,
    ) -> Result<wgpu::Buffer> {
        let size = bytes.max(MIN_BUFFER_BYTES).next_multiple_of(4);
        self.check(label, size, usage)?;
        let buffer = self.filled(label, size, usage);
        self.fill(label, &[&buffer], size, bytes, fill)?;
        Ok(buffer)
    }

    /// [`Allocator::split_storage`] whose content `fill` writes in order ([`UploadWriter`], crossing from
    /// one part to the next): no host copy of the whole is made.
    #[allow(clippy::too_many_arguments)]
    pub fn split_fill(
        &mut self,
        label: &str,
        bytes: u64,
        split: u64,
        slots: usize,
        usage: wgpu::BufferUsages,
        fill: impl FnOnce(&mut UploadWriter) -> Result<()>,
    ) -> Result<SplitBuffer> {
        self.check_split(label, bytes, split, slots)?;
        let parts = split_parts(label, bytes, split);
        let mut buffers = Vec::with_capacity(parts.len() + 1);
        for (name, lo, hi) in &parts {
            let size = (hi - lo).max(MIN_BUFFER_BYTES).next_multiple_of(4);
            self.check(name, size, usage)?;
            buffers.push(self.filled(name, size, usage));
        }
        self.fill(label, &buffers.iter().collect::<Vec<_>>(), split, bytes, fill)?;
        self.close_split(label, buffers, parts.len(), slots, split, usage)
    }

    /// A buffer of `size` bytes (checked by the caller) for [`Allocator::fill`], counted: mapped at
    /// creation (zeroed) without a queue, else zeroed by wgpu and written through the queue.
    fn filled(&mut self, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.bytes += size;
        let mapped_at_creation = self.queue.is_none();
        self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation })
    }

    /// Runs `fill` over the parts `buffers` (at `split` bytes each) of a content of `bytes`.
    fn fill(
        &self,
        label: &str,
        buffers: &[&wgpu::Buffer],
        split: u64,
        bytes: u64,
        fill: impl FnOnce(&mut UploadWriter) -> Result<()>,
    ) -> Result<()> {
        let sink = match self.queue {
            Some(queue) => Sink::Queue {
                device: self.device.clone(),
                queue: queue.clone(),
                buffers: buffers.iter().map(|&b| b.clone()).collect(),
                counters: crate::gpu::profiling::cost::GpuCounters::default(),
                chunk: Vec::with_capacity(FILL_CHUNK_BYTES),
                flushed: 0,
                unsubmitted: 0,
            },
            None => Sink::Mapped(
                buffers
                    .iter()
                    .map(|b| b.get_mapped_range_mut(..).map_err(|e| Error::Gpu(format!("{label}: {e}"))))
                    .collect::<Result<_>>()?,
            ),
        };
        let mut writer = UploadWriter { label: label.to_string(), sink, split, at: 0, bytes };
        fill(&mut writer)?;
        writer.finish()?;
        if self.queue.is_none() {
            for b in buffers {
                b.unmap();
            }
        }
        Ok(())
    }

    /// Checks a buffer of `bytes` to be split at `split` bytes over at most `slots` bindings: one that
    /// needs more is an [`Error::BufferTooLarge`] naming it, its bytes and `slots` × `split`.
    pub fn check_split(&self, label: &str, bytes: u64, split: u64, slots: usize) -> Result<()> {
        check_split_bytes(label, bytes, split, slots)
    }

    /// A storage buffer of `bytes` with `usage`, split into parts of at most `split` bytes over `slots`
    /// bindings (parts `label`, `label.1`, …; the placeholder `label.none`), uninitialised.
    pub fn split_storage(&mut self, label: &str, bytes: u64, split: u64, slots: usize, usage: wgpu::BufferUsages) -> Result<SplitBuffer> {
        self.split_with(label, bytes, split, slots, usage, None)
    }

    /// [`Allocator::split_storage`] holding `data` (zero-padded), uploaded part by part.
    pub fn split_init(&mut self, label: &str, data: &[u8], split: u64, slots: usize, usage: wgpu::BufferUsages) -> Result<SplitBuffer> {
        self.split_with(label, data.len() as u64, split, slots, usage, Some(data))
    }

    fn split_with(
        &mut self,
        label: &str,
        bytes: u64,
        split: u64,
        slots: usize,
        usage: wgpu::BufferUsages,
        data: Option<&[u8]>,
    ) -> Result<SplitBuffer> {
        self.check_split(label, bytes, split, slots)?;
        let parts = split_parts(label, bytes, split);
        let mut buffers = Vec::with_capacity(parts.len() + 1);
        for (name, lo, hi) in &parts {
            buffers.push(match data {
                Some(d) => self.buffer_init(name, &d[*lo as usize..*hi as usize], usage)?,
                None => self.buffer(name, hi - lo, usage)?,
            });
        }
        self.close_split(label, buffers, parts.len(), slots, split, usage)
    }

    /// A [`SplitBuffer`] of the `parts` buffers in `buffers`, with a placeholder for the bindings its
    /// kernels declare beyond them.
    fn close_split(
        &mut self,
        label: &str,
        mut buffers: Vec<wgpu::Buffer>,
        parts: usize,
        slots: usize,
        split: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<SplitBuffer> {
        if parts < slots {
            buffers.push(self.buffer(&format!("{label}.none"), MIN_BUFFER_BYTES, usage)?);
        }
        Ok(SplitBuffer { buffers, parts, slots, split })
    }

    /// A read-write storage buffer (`STORAGE | COPY_DST | COPY_SRC`, plus `extra`).
    pub fn storage(&mut self, label: &str, bytes: u64, extra: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        self.buffer(label, bytes, STORAGE_RW | extra)
    }

    /// A parameter buffer (`STORAGE | UNIFORM | COPY_DST`, bound read-only by
    /// [`crate::gpu::base::pipelines::params`], as a uniform where a kernel file's per-kernel layouts
    /// need it, [`crate::gpu::base::specialize::params_as_uniforms`]) of `bytes`.
    pub fn params(&mut self, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
        self.buffer(label, bytes, PARAMS)
    }

    /// A parameter buffer (`STORAGE | UNIFORM | COPY_DST`) holding `data`.
    pub fn params_init(&mut self, label: &str, data: &[u8]) -> Result<wgpu::Buffer> {
        self.buffer_init(label, data, PARAMS)
    }
}

/// Bytes an [`UploadWriter`] is best fed in, and the chunk it uploads through a queue: a caller that
/// builds its content piece by piece fills a buffer of this size, writes it and reuses it, so that the
/// host holds no more than this at once.
pub const FILL_CHUNK_BYTES: usize = 256 << 10;

/// Bytes an [`UploadWriter`] on a queue uploads between submits (it then waits for them, so that wgpu's
/// staging copies are freed).
pub const SUBMIT_BYTES: u64 = 16 << 20;

/// Where an [`UploadWriter`] puts the bytes.
enum Sink {
    /// The parts' mappings (mapped at creation).
    Mapped(Vec<wgpu::BufferViewMut>),
    /// `queue.write_buffer` a chunk at a time, submitted every [`SUBMIT_BYTES`].
    Queue {
        device: wgpu::Device,
        queue: wgpu::Queue,
        buffers: Vec<wgpu::Buffer>,
        /// The upload's own counts (the start-up's, apart from the engine's frames).
        counters: crate::gpu::profiling::cost::GpuCounters,
        /// Bytes not yet written, from `flushed` on.
        chunk: Vec<u8>,
        /// Bytes written to the queue.
        flushed: u64,
        /// Bytes written since the last submit.
        unsubmitted: u64,
    },
}

/// Writes a buffer's content in order into its parts (a buffer, or the parts of a [`SplitBuffer`] at
/// `split` bytes each), through their mappings or a queue ([`Allocator::streaming`]), so that a large
/// upload needs no host copy of the whole: [`Allocator::buffer_fill`], [`Allocator::split_fill`].
pub struct UploadWriter {
    label: String,
    sink: Sink,
    split: u64,
    /// Bytes written so far.
    at: u64,
    /// Bytes the content has.
    bytes: u64,
}

impl UploadWriter {
    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.at
    }

    /// Appends `data` (an error past the content's size).
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        let end = self.at + data.len() as u64;
        if end > self.bytes {
            return Err(Error::internal_gpu(format!("{}: {} bytes written into {}", self.label, end, self.bytes)));
        }
        let mut rest = data;
        while !rest.is_empty() {
            let take = match &mut self.sink {
                Sink::Mapped(views) => {
                    let part = (self.at / self.split) as usize;
                    let local = (self.at - part as u64 * self.split) as usize;
                    let take = ((self.split as usize - local).min(rest.len())).min(views[part].len() - local);
                    views[part].slice(local..local + take).copy_from_slice(&rest[..take]);
                    take
                }
                Sink::Queue { chunk, .. } => {
                    let take = (FILL_CHUNK_BYTES - chunk.len()).min(rest.len());
                    chunk.extend_from_slice(&rest[..take]);
                    take
                }
            };
            rest = &rest[take..];
            self.at += take as u64;
            self.flush(false)?;
        }
        Ok(())
    }

    /// Through a queue: uploads the chunk when it is full (or `all`), split at the parts, and submits and
    /// waits every [`SUBMIT_BYTES`] (or `all`).
    fn flush(&mut self, all: bool) -> Result<()> {
        let Sink::Queue { device, queue, buffers, counters, chunk, flushed, unsubmitted } = &mut self.sink else { return Ok(()) };
        if chunk.len() < FILL_CHUNK_BYTES && !all {
            return Ok(());
        }
        let mut done = 0usize;
        while done < chunk.len() {
            let part = (*flushed / self.split) as usize;
            let local = *flushed - part as u64 * self.split;
            let take = ((self.split - local) as usize).min(chunk.len() - done);
            counters.write_buffer(queue, &buffers[part], local, &chunk[done..done + take]);
            done += take;
            *flushed += take as u64;
            *unsubmitted += take as u64;
        }
        chunk.clear();
        if *unsubmitted >= SUBMIT_BYTES || (all && *unsubmitted > 0) {
            // an empty submit carries the queued writes; waiting frees their staging
            let label = wgpu::CommandEncoderDescriptor { label: Some("springsim.upload") };
            counters.submit(queue, device.create_command_encoder(&label).finish());
            // a browser page cannot wait: its staging is freed when the browser is done with it
            #[cfg(not(target_arch = "wasm32"))]
            counters.wait(device).map_err(|e| Error::Gpu(format!("{}: {e}", self.label)))?;
            #[cfg(target_arch = "wasm32")]
            let _ = device;
            *unsubmitted = 0;
        }
        Ok(())
    }

    /// Appends `u32` words.
    pub fn words(&mut self, words: &[u32]) -> Result<()> {
        self.write(bytemuck::cast_slice(words))
    }

    /// Appends the f32 values of `values`, as words, through a chunk of [`FILL_CHUNK_BYTES`].
    pub fn f32s(&mut self, values: impl IntoIterator<Item = f64>) -> Result<()> {
        self.records(values.into_iter().map(|v| (v as f32).to_bits()))
    }

    /// Appends `Pod` records produced one by one, through a chunk of [`FILL_CHUNK_BYTES`].
    pub fn records<T: bytemuck::Pod>(&mut self, records: impl IntoIterator<Item = T>) -> Result<()> {
        let mut chunk: Vec<T> = Vec::with_capacity((FILL_CHUNK_BYTES / std::mem::size_of::<T>().max(1)).max(1));
        for r in records {
            chunk.push(r);
            if chunk.len() == chunk.capacity() {
                self.write(bytemuck::cast_slice(&chunk))?;
                chunk.clear();
            }
        }
        self.write(bytemuck::cast_slice(&chunk))
    }

    /// Checks that the whole content was written (the padding stays zero) and uploads what is left.
    fn finish(mut self) -> Result<()> {
        if self.at != self.bytes {
            return Err(Error::internal_gpu(format!("{}: {} of {} bytes written", self.label, self.at, self.bytes)));
        }
        self.flush(true)
    }
}

/// The parts of a content of `bytes` split at `split` bytes: (the buffer's label, first byte, end byte);
/// at least one.
fn split_parts(label: &str, bytes: u64, split: u64) -> Vec<(String, u64, u64)> {
    (0..bytes.div_ceil(split).max(1))
        .map(|k| {
            let name = if k == 0 { label.to_string() } else { format!("{label}.{k}") };
            (name, k * split, ((k + 1) * split).min(bytes))
        })
        .collect()
}
