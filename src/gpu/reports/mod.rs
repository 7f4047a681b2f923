//! Reports a frame late: a small ring of `MAP_READ` buffers into which a frame's report is copied inside
//! the frame's own command buffer, mapped when that buffer is submitted
//! (`CommandEncoder::map_buffer_on_submit`) and collected by a poll that never waits
//! (`PollType::Poll`). The host reads frame k's report while later frames run; nothing on the frame path
//! blocks. A slot holds one frame's report ([`REPORT_SLOT_BYTES`]):
//!
//! | bytes | what |
//! |---|---|
//! | 0–63 | the guard's signals ([`crate::gpu::reports::signals::SIGNAL_BYTES`], when the frame reduced them) |
//! | 64–79 | the power iteration's scalars (`power.wgsl`: x·y is k₀, when the frame re-estimated it) |
//! | 128–511 | the integrator's report ([`crate::gpu::methods::integrator::Integrator::encode_report`]; implicit Euler's adaptive frame adds the steps it tried, [`crate::gpu::methods::implicit::adaptive::AdaptiveReport`]) |
//!
//! A slot is free, recorded (its copy is in a command buffer the host has not yet submitted, or whose
//! work has not finished) or mapped. The ring grows while every slot is busy, up to [`MAX_SLOTS`]; past
//! that (a host that records frames without submitting them, or never polls) a frame records no report
//! and [`ReportRing::dropped`] counts it.

pub mod signals;

use crate::error::{Error, Result};
use crate::gpu::base::alloc::Allocator;
use crate::gpu::profiling::cost::GpuCounters;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Bytes of one slot.
pub const REPORT_SLOT_BYTES: u64 = 512;
/// Where the signals lie in a slot.
pub const SIGNALS_AT: u64 = 0;
/// Where the power iteration's scalars lie in a slot.
pub const POWER_AT: u64 = 64;
/// Where the integrator's report lies in a slot (at most 384 bytes: implicit Euler's adaptive frame has 304).
pub const INTEGRATOR_AT: u64 = 128;
/// The most slots (frames whose reports are in flight at once).
pub const MAX_SLOTS: usize = 16;

const WAITING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

/// What the frame recorded into a slot; the caller's tag comes back with the bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlotContent<T> {
    /// The caller's description of the frame.
    pub tag: T,
    /// The signals were reduced and copied.
    pub signals: bool,
    /// The power iteration's scalars were copied.
    pub power: bool,
    /// Bytes of the integrator's report.
    pub integrator_bytes: u64,
}

/// A report that came back.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrived<T> {
    /// What was recorded.
    pub content: SlotContent<T>,
    /// The slot's bytes ([`REPORT_SLOT_BYTES`]).
    pub bytes: Vec<u8>,
}

impl<T> Arrived<T> {
    /// The integrator's report.
    pub fn integrator(&self) -> &[u8] {
        let at = INTEGRATOR_AT as usize;
        &self.bytes[at..at + self.content.integrator_bytes as usize]
    }

    /// The signals' bytes, when the frame reduced them.
    pub fn signals(&self) -> Option<&[u8]> {
        self.content.signals.then(|| &self.bytes[SIGNALS_AT as usize..POWER_AT as usize])
    }

    /// k₀ (the Rayleigh quotient x·y of the last power iteration), when the frame re-estimated it.
    pub fn k0(&self) -> Option<f64> {
        let at = POWER_AT as usize;
        self.content.power.then(|| bytemuck::pod_read_unaligned::<f32>(&self.bytes[at + 4..at + 8]) as f64)
    }
}

struct Slot<T> {
    buffer: wgpu::Buffer,
    status: Arc<AtomicU8>,
    /// `None`: free.
    content: Option<SlotContent<T>>,
    /// The order in which the slot was recorded.
    order: u64,
}

/// The ring of report slots.
pub struct ReportRing<T> {
    slots: Vec<Slot<T>>,
    recorded: u64,
    dropped: u64,
}

impl<T: Copy> Default for ReportRing<T> {
    fn default() -> Self {
        ReportRing { slots: Vec::new(), recorded: 0, dropped: 0 }
    }
}

impl<T: Copy> ReportRing<T> {
    /// A free slot (a new one while there are fewer than [`MAX_SLOTS`]); `None` when every slot is busy.
    pub fn acquire(&mut self, device: &wgpu::Device) -> Result<Option<usize>> {
        if let Some(k) = self.slots.iter().position(|s| s.content.is_none()) {
            return Ok(Some(k));
        }
        if self.slots.len() >= MAX_SLOTS {
            self.dropped += 1;
            return Ok(None);
        }
        let mut alloc = Allocator::new(device);
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let buffer = alloc.buffer("springsim.report", REPORT_SLOT_BYTES, usage)?;
        self.slots.push(Slot { buffer, status: Arc::new(AtomicU8::new(WAITING)), content: None, order: 0 });
        Ok(Some(self.slots.len() - 1))
    }

    /// Slot `k`'s buffer, to copy into.
    pub fn buffer(&self, k: usize) -> &wgpu::Buffer {
        &self.slots[k].buffer
    }

    /// Marks slot `k` recorded with `content` and asks `encoder` to map it when its command buffer is
    /// submitted (the callback only sets a flag).
    pub fn record(&mut self, encoder: &wgpu::CommandEncoder, k: usize, content: SlotContent<T>) {
        let slot = &mut self.slots[k];
        slot.status.store(WAITING, Ordering::Release);
        let status = slot.status.clone();
        encoder.map_buffer_on_submit(&slot.buffer, wgpu::MapMode::Read, .., move |r| {
            status.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
        });
        slot.content = Some(content);
        slot.order = self.recorded;
        self.recorded += 1;
    }

    /// Polls the device without waiting and returns the reports mapped since the last call, in the
    /// order they were recorded (each counted as one read-back of its slot).
    pub fn collect(&mut self, device: &wgpu::Device, counters: &GpuCounters) -> Result<Vec<Arrived<T>>> {
        device.poll(wgpu::PollType::Poll).map_err(|e| Error::Gpu(e.to_string()))?;
        self.take_mapped(counters)
    }

    /// Waits for every recorded report whose command buffer was submitted (a counted wait) and returns
    /// them, for the end of a run and the blocking convenience calls. Reports recorded into a command
    /// buffer that was never submitted stay where they are.
    pub fn flush(&mut self, device: &wgpu::Device, counters: &GpuCounters) -> Result<Vec<Arrived<T>>> {
        if self.in_flight() > 0 {
            counters.wait(device)?;
        }
        self.take_mapped(counters)
    }

    fn take_mapped(&mut self, counters: &GpuCounters) -> Result<Vec<Arrived<T>>> {
        let mut ready: Vec<(u64, usize)> = Vec::new();
        for (k, s) in self.slots.iter().enumerate() {
            if s.content.is_some() {
                match s.status.load(Ordering::Acquire) {
                    MAPPED => ready.push((s.order, k)),
                    FAILED => return Err(Error::Gpu("a frame report's buffer could not be mapped".into())),
                    _ => {}
                }
            }
        }
        ready.sort_unstable();
        let mut out = Vec::with_capacity(ready.len());
        for (_, k) in ready {
            let slot = &mut self.slots[k];
            let bytes = slot.buffer.slice(..).get_mapped_range().map_err(|e| Error::Gpu(e.to_string()))?.to_vec();
            slot.buffer.unmap();
            slot.status.store(WAITING, Ordering::Release);
            counters.readback(REPORT_SLOT_BYTES);
            if let Some(content) = slot.content.take() {
                out.push(Arrived { content, bytes });
            }
        }
        Ok(out)
    }

    /// Reports recorded and not yet collected.
    pub fn in_flight(&self) -> usize {
        self.slots.iter().filter(|s| s.content.is_some()).count()
    }

    /// Frames that recorded no report because every slot was busy.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Bytes of the slots.
    pub fn bytes(&self) -> u64 {
        self.slots.len() as u64 * REPORT_SLOT_BYTES
    }
}
