//! The demo's calls that wait for the device, kept apart from the frame path (the window records its
//! frames and polls their reports, never waiting): the window's adapter and device at start-up, the
//! offscreen runs' frame ([`Demo::simulate`]: record, submit, wait) and the offscreen capture of a frame
//! (a read-back of the picture).

use super::render::{DrawOptions, SceneRenderer};
use super::Demo;
use crate::gpu::base::context::{limits_for, select_adapter};
use crate::stepping::GpuSimulator;
use anyhow::{anyhow, Context, Result};
use std::time::Instant;

/// The adapter for the window's surface (the one `WGPU_ADAPTER_NAME` names, else wgpu's choice for the
/// surface) and its device with the limits springsim needs, once, at start-up.
pub fn window_device(instance: &wgpu::Instance, surface: &wgpu::Surface) -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue)> {
    let adapter = if std::env::var_os("WGPU_ADAPTER_NAME").is_some() {
        select_adapter(instance)?
    } else {
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::from_env().unwrap_or(wgpu::PowerPreference::HighPerformance),
            force_fallback_adapter: false,
            compatible_surface: Some(surface),
            ..Default::default()
        }))
        .map_err(|e| anyhow!("no GPU adapter for the window: {e}. `springsim bench` runs headless (or --backend cpu)"))?
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("springsim.demo"),
        required_limits: limits_for(&adapter)?,
        ..Default::default()
    }))
    .context("creating the device")?;
    Ok((adapter, device, queue))
}

impl Demo {
    /// Applies the mouse grab, then runs one frame of simulation (or the single step asked for) and
    /// waits for it: [`Demo::encode_simulation`] in an encoder of its own, submitted, and every report
    /// waited for. Returns the wall time (ms), or `None` when paused. The window does not wait: it records
    /// the simulation into its drawing's encoder and calls [`Demo::after_submit`].
    pub fn simulate(&mut self) -> Result<Option<f64>> {
        let t = Instant::now();
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.demo") });
        if !self.encode_simulation(&mut encoder)? {
            return Ok(None);
        }
        self.queue.submit([encoder.finish()]);
        let events = self.sim.flush_reports()?;
        self.take_events(events);
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(Some(t.elapsed().as_secs_f64() * 1e3))
    }
}

impl SceneRenderer {
    /// Draws one frame offscreen (same pipelines) and reads it back as tightly packed RGBA8; with
    /// `readback` false it only draws (and waits), returning nothing.
    #[allow(clippy::too_many_arguments)] // as `encode`, plus the queue and the read-back switch
    pub fn capture(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        sim: &GpuSimulator,
        w: u32,
        h: u32,
        opts: &DrawOptions,
        readback: bool,
    ) -> Result<Vec<u8>> {
        let tex = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("springsim.offscreen"),
            size: wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: self.format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let view = tex.create_view(&Default::default());
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.capture") });
        self.encode(device, &mut enc, sim, &view, w, h, opts);
        if !readback {
            queue.submit([enc.finish()]);
            device.poll(wgpu::PollType::wait_indefinitely()).context("waiting for the draw")?;
            return Ok(Vec::new());
        }
        let row = (w * 4).div_ceil(256) * 256;
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("springsim.capture"),
            size: (row * h) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        enc.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo { texture: &tex, mip_level: 0, origin: wgpu::Origin3d::ZERO, aspect: wgpu::TextureAspect::All },
            wgpu::TexelCopyBufferInfo {
                buffer: &out,
                layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(row), rows_per_image: Some(h) },
            },
            wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
        );
        queue.submit([enc.finish()]);
        let slice = out.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        device.poll(wgpu::PollType::wait_indefinitely()).context("waiting for the capture")?;
        rx.recv().context("capture map")?.context("capture map")?;
        let data = slice.get_mapped_range().context("capture map")?;
        let bgra = matches!(self.format, wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb);
        let mut rgba = Vec::with_capacity((w * h * 4) as usize);
        for y in 0..h as usize {
            let r = &data[y * row as usize..y * row as usize + (w * 4) as usize];
            for px in r.chunks_exact(4) {
                if bgra {
                    rgba.extend_from_slice(&[px[2], px[1], px[0], 255]);
                } else {
                    rgba.extend_from_slice(&[px[0], px[1], px[2], 255]);
                }
            }
        }
        drop(data);
        out.unmap();
        Ok(rgba)
    }
}
