//! `Allocator`: every buffer of the GPU engine is created here, checked against the device's limits
//! before it is allocated (a buffer that would not fit is an [`Error::BufferTooLarge`] naming it, never a
//! panic in `create_buffer` or `create_bind_group`), and counted, so that [`super::GpuEngine::gpu_bytes`]
//! is the sum of what the state and the current integrator hold.

use crate::error::{Error, Result};
use wgpu::util::DeviceExt;

/// Buffers are at least this many bytes (a zero-sized model still binds valid buffers).
const MIN_BUFFER_BYTES: u64 = 64;

/// Creates checked buffers on one device and counts their bytes.
pub struct Allocator<'a> {
    device: &'a wgpu::Device,
    max_binding: u64,
    max_buffer: u64,
    bytes: u64,
}

/// The usages of a read-write storage buffer that can be cleared and copied.
pub const STORAGE_RW: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_DST).union(wgpu::BufferUsages::COPY_SRC);

impl<'a> Allocator<'a> {
    /// An allocator on `device` with nothing counted yet.
    pub fn new(device: &'a wgpu::Device) -> Self {
        let limits = device.limits();
        Allocator { device, max_binding: limits.max_storage_buffer_binding_size, max_buffer: limits.max_buffer_size, bytes: 0 }
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
        let mut contents = data.to_vec();
        contents.resize(size as usize, 0);
        self.bytes += size;
        Ok(self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: &contents, usage }))
    }

    /// A read-write storage buffer (`STORAGE | COPY_DST | COPY_SRC`, plus `extra`).
    pub fn storage(&mut self, label: &str, bytes: u64, extra: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        self.buffer(label, bytes, STORAGE_RW | extra)
    }

    /// A uniform buffer (`UNIFORM | COPY_DST`) of `bytes`.
    pub fn uniform(&mut self, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
        self.buffer(label, bytes, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST)
    }

    /// A uniform buffer (`UNIFORM | COPY_DST`) holding `data`.
    pub fn uniform_init(&mut self, label: &str, data: &[u8]) -> Result<wgpu::Buffer> {
        self.buffer_init(label, data, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST)
    }
}
