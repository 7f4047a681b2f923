//! The winit 0.30 application: the window, its surface and the device are created in `resumed`; every
//! redraw runs one frame of simulation (timed), then draws the scene and the overlay (timed).

use super::overlay::{Action, OverlayState};
use super::picture::Panel;
use super::render;
use super::write_png;
use super::{demo_methods, demo_scenes, Demo, DemoArgs};
use crate::gpu::base::context::adapter_name;
use crate::Simulator;
use anyhow::{anyhow, Context, Result};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, ModifiersState, NamedKey};
use winit::window::{Window, WindowId};

/// Why the window did not run.
#[derive(Debug)]
pub enum WindowError {
    /// No display to open a window on.
    NoDisplay(String),
    /// Anything else.
    Other(anyhow::Error),
}

#[derive(Clone, Copy, PartialEq)]
enum MouseMode {
    None,
    Orbit,
    Pan,
    Grab,
}

struct Gfx {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    demo: Demo,
    panel: Panel,
    egui_state: egui_winit::State,
    lost: Arc<Mutex<Option<String>>>,
}

struct App {
    args: DemoArgs,
    gfx: Option<Gfx>,
    error: Option<anyhow::Error>,
    overlay: OverlayState,
    mods: ModifiersState,
    mouse: MouseMode,
    cursor: (f32, f32),
    frames_done: usize,
}

/// Opens the window and runs until it is closed (or `--frames` are done).
pub fn run_window(args: DemoArgs) -> std::result::Result<(), WindowError> {
    let event_loop = EventLoop::new().map_err(|e| WindowError::NoDisplay(e.to_string()))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        args,
        gfx: None,
        error: None,
        overlay: OverlayState::default(),
        mods: ModifiersState::empty(),
        mouse: MouseMode::None,
        cursor: (0.0, 0.0),
        frames_done: 0,
    };
    event_loop.run_app(&mut app).map_err(|e| WindowError::Other(anyhow!("event loop: {e}")))?;
    match app.error.take() {
        Some(e) => Err(WindowError::Other(e)),
        None => Ok(()),
    }
}

impl Gfx {
    fn new(event_loop: &ActiveEventLoop, args: &DemoArgs) -> Result<Self> {
        let attrs =
            Window::default_attributes().with_title("springsim").with_inner_size(winit::dpi::PhysicalSize::new(args.width, args.height));
        let window = Arc::new(event_loop.create_window(attrs).context("creating the window")?);
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(window.clone())));
        let surface = instance.create_surface(window.clone()).context("creating the surface")?;
        let (adapter, device, queue) = super::blocking::window_device(&instance, &surface)?;
        let lost = Arc::new(Mutex::new(None));
        let lost2 = lost.clone();
        device.set_device_lost_callback(move |reason, msg| {
            *lost2.lock().unwrap() = Some(format!("{reason:?}: {msg}"));
        });
        let size = window.inner_size();
        let caps = surface.get_capabilities(&adapter);
        let format = caps
            .formats
            .iter()
            .copied()
            .find(|f| f.is_srgb())
            .or(caps.formats.first().copied())
            .ok_or_else(|| anyhow!("the surface has no formats"))?;
        let mut config = surface
            .get_default_config(&adapter, size.width.max(1), size.height.max(1))
            .ok_or_else(|| anyhow!("the adapter cannot present to this window"))?;
        config.format = format;
        config.present_mode = wgpu::PresentMode::AutoNoVsync;
        surface.configure(&device, &config);
        let samples = render::msaa_samples(&adapter, format);
        let name = adapter_name(&adapter.get_info());
        let mut demo = Demo::new(device.clone(), queue, name, format, samples, args)?;
        let aspect = size.width.max(1) as f32 / size.height.max(1) as f32;
        if aspect != demo.aspect && args.camera.is_none() {
            // the window manager gave another size than asked: frame for the one we got
            demo.aspect = aspect;
            super::framing::frame_motion(&mut demo.camera, &demo.model, aspect);
        }
        let panel = Panel::new(&device, format);
        let egui_state = egui_winit::State::new(
            panel.ctx.clone(),
            egui::ViewportId::ROOT,
            &*window,
            Some(window.scale_factor() as f32),
            None,
            Some(device.limits().max_texture_dimension_2d as usize),
        );
        Ok(Gfx { window, surface, config, demo, panel, egui_state, lost })
    }

    fn resize(&mut self, w: u32, h: u32) {
        if w > 0 && h > 0 {
            self.config.width = w;
            self.config.height = h;
            self.demo.aspect = w as f32 / h as f32;
            self.surface.configure(&self.demo.device, &self.config);
        }
    }
}

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, e: anyhow::Error) {
        self.error = Some(e);
        event_loop.exit();
    }

    fn act(&mut self, a: Action) -> Result<()> {
        let Some(g) = &mut self.gfx else {
            return Ok(());
        };
        let d = &mut g.demo;
        match a {
            Action::Scene(s) => d.set_scene(&s)?,
            Action::Method(m) => d.set_method(m)?,
            Action::Reset => d.reset()?,
            Action::Frame => d.frame_scene()?,
        }
        Ok(())
    }

    fn key(&mut self, event_loop: &ActiveEventLoop, key: &Key) -> Result<()> {
        let shift = self.mods.shift_key();
        let Some(g) = &mut self.gfx else {
            return Ok(());
        };
        let d = &mut g.demo;
        let cycle = |len: usize, i: usize| {
            if shift {
                (i + len - 1) % len
            } else {
                (i + 1) % len
            }
        };
        match key {
            Key::Named(NamedKey::Space) => d.paused = !d.paused,
            Key::Named(NamedKey::Escape) => event_loop.exit(),
            Key::Named(NamedKey::F1) => self.overlay.help = !self.overlay.help,
            Key::Character(c) => match c.to_lowercase().as_str() {
                "n" => {
                    d.paused = true;
                    d.step_once = true;
                }
                "r" => d.reset()?,
                "m" => {
                    let methods = demo_methods();
                    let i = methods.iter().position(|&m| m == d.method()).unwrap_or(0);
                    d.set_method(methods[cycle(methods.len(), i)])?;
                }
                "c" => {
                    let scenes = demo_scenes(d.options.mesh.is_some());
                    let i = scenes.iter().position(|&s| s == d.scene).unwrap_or(0);
                    d.set_scene(scenes[cycle(scenes.len(), i)])?;
                }
                "f" => d.frame_scene()?,
                "v" => d.draw.springs = !d.draw.springs,
                "w" => d.controls.wind = !d.controls.wind,
                "[" => d.controls.stiffness_scale /= 1.25,
                "]" => d.controls.stiffness_scale *= 1.25,
                "-" => d.controls.substep_scale /= 1.25,
                "=" | "+" => d.controls.substep_scale = (d.controls.substep_scale * 1.25).min(1.0),
                "h" => self.overlay.hidden = !self.overlay.hidden,
                "?" => self.overlay.help = !self.overlay.help,
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }

    fn mouse_button(&mut self, button: MouseButton, state: ElementState) -> Result<()> {
        let Some(g) = &mut self.gfx else {
            return Ok(());
        };
        let (w, h) = (g.config.width as f32, g.config.height as f32);
        if state == ElementState::Released {
            if self.mouse == MouseMode::Grab {
                g.demo.release()?;
            }
            self.mouse = MouseMode::None;
            return Ok(());
        }
        match button {
            MouseButton::Left => {
                let hit = g.demo.pick(self.cursor.0, self.cursor.1, w, h, 14.0)?;
                match hit {
                    Some((i, p)) if self.mods.control_key() || self.mods.shift_key() => g.demo.toggle_pin(i, p)?,
                    Some((i, p)) => {
                        g.demo.grab(i, p);
                        self.mouse = MouseMode::Grab;
                    }
                    None => self.mouse = MouseMode::Orbit,
                }
            }
            MouseButton::Right | MouseButton::Middle => self.mouse = MouseMode::Pan,
            _ => {}
        }
        Ok(())
    }

    fn cursor_moved(&mut self, x: f32, y: f32) {
        let (dx, dy) = (x - self.cursor.0, y - self.cursor.1);
        self.cursor = (x, y);
        let Some(g) = &mut self.gfx else { return };
        let (w, h) = (g.config.width as f32, g.config.height as f32);
        match self.mouse {
            MouseMode::Orbit => g.demo.camera.orbit(dx, dy),
            MouseMode::Pan => g.demo.camera.pan(dx, dy, h),
            MouseMode::Grab => g.demo.drag_to(x, y, w, h),
            MouseMode::None => {}
        }
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        let Some(g) = &mut self.gfx else {
            return Ok(());
        };
        if let Some(msg) = g.lost.lock().unwrap().clone() {
            return Err(anyhow!("the GPU device was lost ({msg}); restart springsim demo"));
        }
        let size = g.window.inner_size();
        if size.width == 0 || size.height == 0 {
            return Ok(()); // minimised
        }
        let frame = match g.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f) => f,
            wgpu::CurrentSurfaceTexture::Suboptimal(f) => {
                drop(f);
                g.resize(size.width, size.height);
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                g.resize(size.width, size.height);
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => return Ok(()),
            other => return Err(anyhow!("the surface failed: {other:?}")),
        };
        // the simulation and the drawing in one encoder and one submit; its reports are polled after
        // the submit, never waited for (the present paces the loop)
        let mut enc = g.demo.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.draw") });
        let t = Instant::now();
        let sim_ms = g.demo.encode_simulation(&mut enc)?.then(|| t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let view = frame.texture.create_view(&Default::default());
        let (w, h) = (g.config.width, g.config.height);
        let raw = g.egui_state.take_egui_input(&g.window);
        let picture = g.demo.encode_picture(&mut g.panel, &mut self.overlay, raw, &mut enc, &view, (w, h));
        g.egui_state.handle_platform_output(&g.window, picture.platform_output);
        let d = &mut g.demo;
        d.queue.submit(picture.uploads.into_iter().chain([enc.finish()]));
        d.queue.present(frame);
        d.after_submit()?;
        let actions = picture.actions;
        let draw_ms = t.elapsed().as_secs_f64() * 1e3;
        g.demo.record(sim_ms, draw_ms);
        for a in actions {
            if let Err(e) = self.act(a) {
                if let Some(g) = &mut self.gfx {
                    g.demo.message = Some(format!("{e:#}"));
                }
            }
        }
        if sim_ms.is_some() {
            self.frames_done += 1;
        }
        if let Some(n) = self.args.frames {
            if self.frames_done >= n {
                self.finish(event_loop)?;
            }
        }
        Ok(())
    }

    /// `--frames` done: write the screenshot (offscreen, same pipelines, the window's size) and exit.
    fn finish(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        let Some(g) = &mut self.gfx else {
            return Ok(());
        };
        let d = &mut g.demo;
        d.check()?;
        super::summary::report(d, "window", self.frames_done);
        if let Some(path) = &self.args.screenshot {
            let (w, h) = (g.config.width, g.config.height);
            d.renderer.set_camera(&d.queue, &d.camera, w, h, &d.draw);
            d.renderer.set_collider_time(&d.queue, d.sim.time());
            let img = d.renderer.capture(&d.device, &d.queue, &d.sim, w, h, &d.draw, true)?;
            write_png(path, w, h, &img)?;
            println!("springsim demo: wrote {} ({w}x{h}, window mode: the window's pipelines into an offscreen target)", path.display());
        }
        event_loop.exit();
        Ok(())
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gfx.is_some() {
            return;
        }
        match Gfx::new(event_loop, &self.args) {
            Ok(g) => {
                g.window.request_redraw();
                self.gfx = Some(g);
            }
            Err(e) => self.fail(event_loop, e),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let consumed = match &mut self.gfx {
            Some(g) => g.egui_state.on_window_event(&g.window, &event).consumed,
            None => false,
        };
        let r: Result<()> = match &event {
            WindowEvent::CloseRequested => {
                event_loop.exit();
                Ok(())
            }
            WindowEvent::Resized(s) => {
                if let Some(g) = &mut self.gfx {
                    g.resize(s.width, s.height);
                }
                Ok(())
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            WindowEvent::ModifiersChanged(m) => {
                self.mods = m.state();
                Ok(())
            }
            WindowEvent::KeyboardInput { event: k, .. } if !consumed && k.state == ElementState::Pressed => {
                self.key(event_loop, &k.logical_key)
            }
            WindowEvent::MouseInput { state, button, .. } if !consumed || *state == ElementState::Released => {
                self.mouse_button(*button, *state)
            }
            WindowEvent::CursorMoved { position, .. } => {
                self.cursor_moved(position.x as f32, position.y as f32);
                Ok(())
            }
            WindowEvent::MouseWheel { delta, .. } if !consumed => {
                if let Some(g) = &mut self.gfx {
                    let steps = match delta {
                        MouseScrollDelta::LineDelta(_, y) => *y,
                        MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                    };
                    g.demo.camera.zoom(steps);
                }
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            self.fail(event_loop, e);
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(g) = &self.gfx {
            g.window.request_redraw();
        }
    }
}
