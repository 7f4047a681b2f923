//! The embedding example's window (winit 0.30): the window, its surface, the host's device and renderer
//! and the simulation are made in `resumed`; every redraw is one frame of `render_frame` into the
//! surface's texture, then `present`. After the last of `--frames`, the screenshot and the report.

use super::{build_simulation, check_size, render_frame, report, Args, Gpu, HostRenderer, Offscreen};
use anyhow::{anyhow, bail, Context, Result};
use springsim::stepping::GpuSimulator;
use springsim::wgpu;
use std::sync::Arc;
use std::time::Instant;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

/// What the window needs once it exists.
struct WindowState {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    gpu: Gpu,
    sim: GpuSimulator,
    renderer: HostRenderer,
}

impl WindowState {
    fn new(event_loop: &ActiveEventLoop, args: &Args) -> Result<Self> {
        let attributes = Window::default_attributes()
            .with_title("springsim embedded in a host renderer")
            .with_inner_size(winit::dpi::PhysicalSize::new(args.width, args.height));
        let window = Arc::new(event_loop.create_window(attributes).context("creating the window")?);
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(window.clone())));
        let surface = instance.create_surface(window.clone()).context("creating the surface")?;
        let gpu = Gpu::new(&instance, Some(&surface))?;
        let size = window.inner_size();
        check_size("width", size.width, &gpu.device)?;
        check_size("height", size.height, &gpu.device)?;
        let capabilities = surface.get_capabilities(&gpu.adapter);
        let format = capabilities.formats.iter().copied().find(|f| f.is_srgb()).or(capabilities.formats.first().copied());
        let mut config = surface
            .get_default_config(&gpu.adapter, size.width, size.height)
            .ok_or_else(|| anyhow!("the adapter cannot present to this window"))?;
        config.format = format.ok_or_else(|| anyhow!("the surface has no formats"))?;
        if args.frames.is_some() {
            config.present_mode = wgpu::PresentMode::AutoNoVsync;
        }
        surface.configure(&gpu.device, &config);
        let (sim, indices) = build_simulation(&gpu, args.size)?;
        let mut renderer = HostRenderer::new(&gpu.device, config.format, &indices);
        renderer.resize(&gpu.device, &gpu.queue, config.width, config.height);
        Ok(WindowState { window, surface, config, gpu, sim, renderer })
    }

    fn resize(&mut self, width: u32, height: u32) {
        if width > 0 && height > 0 {
            (self.config.width, self.config.height) = (width, height);
            self.surface.configure(&self.gpu.device, &self.config);
            self.renderer.resize(&self.gpu.device, &self.gpu.queue, width, height);
        }
    }
}

struct WindowApp {
    args: Args,
    state: Option<WindowState>,
    frames_done: usize,
    start: Instant,
    error: Option<anyhow::Error>,
}

impl WindowApp {
    /// Draws one frame into the window; after the last of `--frames`, also into the screenshot.
    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        let Some(s) = &mut self.state else { return Ok(()) };
        let frame = match s.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(frame) => frame,
            wgpu::CurrentSurfaceTexture::Suboptimal(_) | wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                let size = s.window.inner_size();
                s.resize(size.width, size.height);
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => return Ok(()),
            other => bail!("the surface failed: {other:?}"),
        };
        let view = frame.texture.create_view(&Default::default());
        let last = self.args.frames().is_some_and(|n| self.frames_done + 1 >= n);
        let capture = (last && self.args.screenshot.is_some())
            .then(|| Offscreen::new(&s.gpu.device, s.config.format, s.config.width, s.config.height));
        render_frame(&s.gpu, &mut s.sim, &s.renderer, &view, capture.as_ref())?;
        s.window.pre_present_notify();
        s.gpu.queue.present(frame);
        self.frames_done += 1;
        if last {
            let seconds = self.start.elapsed().as_secs_f64();
            if let (Some(path), Some(offscreen)) = (&self.args.screenshot, &capture) {
                offscreen.write_png(&s.gpu.device, path)?;
                let (w, h) = (s.config.width, s.config.height);
                println!("embed: wrote {} ({w}x{h}, window mode: the window's pipelines into an offscreen target)", path.display());
            }
            report("window", &s.gpu, &mut s.sim, self.frames_done, seconds)?;
            event_loop.exit();
        }
        Ok(())
    }
}

impl ApplicationHandler for WindowApp {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.state.is_some() {
            return;
        }
        match WindowState::new(event_loop, &self.args) {
            Ok(state) => {
                state.window.request_redraw();
                self.state = Some(state);
                self.start = Instant::now();
            }
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::KeyboardInput { event: key, .. }
                if key.state == ElementState::Pressed && key.logical_key == Key::Named(NamedKey::Escape) =>
            {
                event_loop.exit()
            }
            WindowEvent::Resized(size) => {
                if let Some(state) = &mut self.state {
                    state.resize(size.width, size.height);
                }
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw(event_loop) {
                    self.error = Some(e);
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(s) = &self.state {
            s.window.request_redraw();
        }
    }
}

/// Runs the window until it is closed or `--frames` are done.
pub fn run(event_loop: EventLoop<()>, args: Args) -> Result<()> {
    let mut app = WindowApp { args, state: None, frames_done: 0, start: Instant::now(), error: None };
    event_loop.run_app(&mut app).context("the event loop")?;
    app.error.map_or(Ok(()), Err)
}
