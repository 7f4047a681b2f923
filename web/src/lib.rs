//! springsim in a browser page, on WebGPU: the native demo's [`Demo`] (the scenes, the methods, the
//! renderer drawing straight from the position buffer, the mouse drag and pins, the egui panel) on a
//! canvas, driven by `requestAnimationFrame` through the pipelined frame path that never waits on the
//! GPU: the simulation and the drawing recorded into one encoder, one submit a frame, the reports
//! polled after it. What a page cannot do is said in the page, never a panic or a blank canvas:
//!
//! - no wait on the GPU: local/global's global step runs the GPU's CG (the native default, the CPU
//!   Cholesky, waits for each solve); implicit Euler's adaptive step runs on the device as natively,
//!   except on a scene with gusting wind or moving colliders, where the page takes the planned steps
//!   (natively the blocking frame decides there); a call that would wait returns an error the panel
//!   shows;
//! - no threads (faer and rayon run on the page's thread) and no file paths (the built-in scenes, or a
//!   scene file's text).
//!
//! [`self_test`] runs a scene file's text for some frames on the page's WebGPU and returns the
//! positions: what `web/test.sh` compares with the native f64 reference.

mod input;
mod readback;

use input::{Input, MouseMode};
use springsim::viewer::overlay::{Action, OverlayState};
use springsim::viewer::picture::Panel;
use springsim::viewer::{render, Demo, DemoArgs};
use springsim::{GlobalSolve, Method, Simulator, StepSettings};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Writes panics to the console (the page also shows the last error).
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&format!("springsim: {info}").into());
    }));
}

/// The step settings a page runs: local/global's global step by the GPU's CG (it does not wait on the
/// GPU); the rest as natively.
pub fn web_settings(base: StepSettings) -> StepSettings {
    let global = if base.global == GlobalSolve::Cholesky || base.global == GlobalSolve::Auto { GlobalSolve::Cg } else { base.global };
    StepSettings { global, ..base }
}

/// The page's WebGPU errors that no error scope caught (a shader Chrome's compiler rejects, an invalid
/// pipeline): WebGPU reports them only as console warnings; the page shows them and the test fails.
static GPU_ERRORS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn take_gpu_errors() -> Vec<String> {
    GPU_ERRORS.lock().map(|mut e| std::mem::take(&mut *e)).unwrap_or_default()
}

thread_local! {
    /// The page's one instance, and the demo's adapter and device.
    static INSTANCE: wgpu::Instance = {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::BROWSER_WEBGPU;
        wgpu::Instance::new(desc)
    };
    static DEVICE: RefCell<Option<(wgpu::Adapter, wgpu::Device, wgpu::Queue)>> = const { RefCell::new(None) };
}

fn instance() -> wgpu::Instance {
    INSTANCE.with(|i| i.clone())
}

/// A WebGPU adapter and device (WebGPU's default limits: what every browser grants): the page's
/// one, made once, when `shared`, else a new one.
async fn web_device(surface_for: Option<&wgpu::Surface<'_>>, shared: bool) -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), String> {
    if let Some(d) = DEVICE.with(|d| d.borrow().clone()).filter(|_| shared) {
        return Ok(d);
    }
    let adapter = instance()
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: surface_for,
            ..Default::default()
        })
        .await
        .map_err(|e| format!("this browser offers no WebGPU adapter ({e}); springsim's page needs WebGPU (Chrome, Edge, Safari 26, Firefox 141 or later)"))?;
    let desc = wgpu::DeviceDescriptor { label: Some("springsim.web"), required_limits: wgpu::Limits::defaults(), ..Default::default() };
    let (device, queue) = adapter.request_device(&desc).await.map_err(|e| format!("could not create the WebGPU device: {e}"))?;
    device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| {
        web_sys::console::error_1(&format!("springsim: WebGPU: {e}").into());
        if let Ok(mut errors) = GPU_ERRORS.lock() {
            errors.push(e.to_string());
        }
    }));
    device.set_device_lost_callback(|reason, message| {
        let e = format!("the WebGPU device was lost ({reason:?}): {message}");
        web_sys::console::error_1(&format!("springsim: {e}").into());
        if let Ok(mut errors) = GPU_ERRORS.lock() {
            errors.push(e);
        }
    });
    if shared {
        DEVICE.with(|d| *d.borrow_mut() = Some((adapter.clone(), device.clone(), queue.clone())));
    }
    Ok((adapter, device, queue))
}

/// The page's query: `?scene=flag&method=local-global`.
fn query(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()?.get(name)
}

/// Where the demo draws: the page's canvas, or a texture of its own (the browser test's pictures,
/// [`draw_test`]).
enum Target {
    Canvas { canvas: web_sys::HtmlCanvasElement, surface: wgpu::Surface<'static>, config: wgpu::SurfaceConfiguration },
    Texture(wgpu::Texture),
}

/// The running demo: its target, the demo and the egui panel.
struct App {
    target: Target,
    demo: Demo,
    panel: Panel,
    overlay: OverlayState,
    input: Input,
    /// The frames drawn (the page's `springsim_frames()`).
    frames: u64,
    /// The last error (shown in the panel's message and by `springsim_error()`).
    error: Option<String>,
    /// A `springsim_snapshot()` waiting for the next frame's picture.
    snapshot: Option<js_sys::Function>,
}

impl App {
    /// The demo drawing on `target`, a texture of `format`.
    fn new(target: Target, demo: Demo, format: wgpu::TextureFormat) -> App {
        let panel = Panel::new(&demo.device, format);
        App { target, demo, panel, overlay: OverlayState::default(), input: Input::default(), frames: 0, error: None, snapshot: None }
    }

    /// The canvas the demo draws on, if it does.
    fn canvas(&self) -> Option<&web_sys::HtmlCanvasElement> {
        match &self.target {
            Target::Canvas { canvas, .. } => Some(canvas),
            Target::Texture(_) => None,
        }
    }

    /// The target's size in pixels.
    fn size(&self) -> (u32, u32) {
        match &self.target {
            Target::Canvas { config, .. } => (config.width, config.height),
            Target::Texture(t) => (t.width(), t.height()),
        }
    }
}

thread_local! {
    static APP: RefCell<Option<Rc<RefCell<App>>>> = const { RefCell::new(None) };
}

/// Starts the demo on the canvas with id `canvas_id`; rejects with a readable message (no WebGPU, a
/// bad `?method=`), which the page shows.
#[wasm_bindgen]
pub async fn run(canvas_id: String) -> Result<(), JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let canvas = window
        .document()
        .and_then(|d| d.get_element_by_id(&canvas_id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        .ok_or_else(|| format!("no canvas #{canvas_id}"))?;
    let method = match query("method") {
        Some(m) => Method::parse(&m).map_err(|e| e.to_string())?,
        None => Method::SymplecticEuler,
    };
    let scene = query("scene").unwrap_or_else(|| "curtain".into());
    if !springsim::viewer::demo_scenes(false).contains(&scene.as_str()) {
        return Err(format!("unknown scene {scene:?} (known: {})", springsim::viewer::demo_scenes(false).join(", ")).into());
    }
    if !method.on_gpu() {
        return Err(format!("{} runs on the CPU only; the page runs the GPU's methods", method.name()).into());
    }
    let surface =
        instance().create_surface(wgpu::SurfaceTarget::Canvas(canvas.clone())).map_err(|e| format!("no WebGPU canvas context: {e}"))?;
    let (adapter, device, queue) = web_device(Some(&surface), true).await?;
    let (w, h) = input::canvas_size(&canvas);
    let caps = surface.get_capabilities(&adapter);
    // a canvas offers no sRGB format: the scene's pipelines encode sRGB themselves on a plain one
    let format = caps.formats.first().copied().ok_or("the canvas offers no format")?;
    let mut config = surface.get_default_config(&adapter, w, h).ok_or("the adapter cannot draw to the canvas")?;
    config.format = format;
    surface.configure(&device, &config);
    let samples = render::msaa_samples(&adapter, format);
    let args = DemoArgs { scene, method, width: w, height: h, settings: Some(web_settings(StepSettings::default())), ..Default::default() };
    let name = springsim::gpu::base::context::adapter_name(&adapter.get_info());
    let demo = Demo::new(device.clone(), queue, name, format, samples, &args).map_err(|e| format!("{e:#}"))?;
    let app = Rc::new(RefCell::new(App::new(Target::Canvas { canvas: canvas.clone(), surface, config }, demo, format)));
    input::listen(&canvas, app.clone())?;
    APP.with(|a| *a.borrow_mut() = Some(app.clone()));
    animate(app);
    Ok(())
}

/// The frames drawn so far (for the browser test).
#[wasm_bindgen]
pub fn springsim_frames() -> f64 {
    APP.with(|a| a.borrow().as_ref().map(|app| app.borrow().frames as f64).unwrap_or(0.0))
}

/// The canvas as a PNG data URL, taken right after the next frame is drawn (a WebGPU canvas's picture
/// lasts until the task that drew it ends): what `web/test.sh` screenshots.
#[wasm_bindgen]
pub fn springsim_snapshot() -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve, reject| {
        let app = APP.with(|a| a.borrow().clone());
        match app {
            Some(app) => app.borrow_mut().snapshot = Some(resolve),
            None => {
                let _ = reject.call1(&JsValue::NULL, &JsValue::from("the demo is not running"));
            }
        }
    })
}

/// The demo's last error, if any (for the browser test).
#[wasm_bindgen]
pub fn springsim_error() -> Option<String> {
    APP.with(|a| a.borrow().as_ref().and_then(|app| app.borrow().error.clone()))
}

fn animate(app: Rc<RefCell<App>>) {
    let f: Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>> = Rc::new(RefCell::new(None));
    let g = f.clone();
    *g.borrow_mut() = Some(Closure::new(move |_t: f64| {
        let result = app.borrow_mut().frame();
        if let Err(e) = result.map(|_drew| ()) {
            web_sys::console::error_1(&format!("springsim: {e}").into());
            let mut a = app.borrow_mut();
            a.demo.message = Some(e.clone());
            a.error = Some(e);
        }
        if let Some(cb) = f.borrow().as_ref() {
            let _ = web_sys::window().map(|w| w.request_animation_frame(cb.as_ref().unchecked_ref()));
        }
    }));
    let first = g.borrow();
    if let Some(cb) = first.as_ref() {
        let _ = web_sys::window().map(|w| w.request_animation_frame(cb.as_ref().unchecked_ref()));
    }
}

impl App {
    /// One frame: the target's size, the picks that came back, the simulation, the scene and the
    /// panel in one encoder and one submit, then the reports that came back. Returns whether it drew
    /// (not while [`FRAMES_IN_FLIGHT`] frames wait for their reports).
    fn frame(&mut self) -> Result<bool, String> {
        // at most two frames ahead of the reports (a page's loop cannot block; this is its back-pressure)
        if self.demo.sim.reports_in_flight() >= FRAMES_IN_FLIGHT {
            self.demo.after_submit().map_err(|e| format!("{e:#}"))?;
            if self.demo.sim.reports_in_flight() >= FRAMES_IN_FLIGHT {
                return Ok(false);
            }
        }
        let (w, h, surface_texture, view) = match &mut self.target {
            Target::Canvas { canvas, surface, config } => {
                let (w, h) = input::canvas_size(canvas);
                if (w, h) != (config.width, config.height) {
                    config.width = w;
                    config.height = h;
                    self.demo.aspect = w as f32 / h as f32;
                    surface.configure(&self.demo.device, config);
                }
                let frame = match surface.get_current_texture() {
                    wgpu::CurrentSurfaceTexture::Success(f) | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
                    _ => {
                        surface.configure(&self.demo.device, config);
                        return Ok(false);
                    }
                };
                let view = frame.texture.create_view(&Default::default());
                (w, h, Some(frame), view)
            }
            Target::Texture(t) => (t.width(), t.height(), None, t.create_view(&Default::default())),
        };
        self.input.finish_pick(&mut self.demo, (w as f32, h as f32)).map_err(|e| format!("{e:#}"))?;
        let mut enc = self.demo.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.web") });
        let t = now_ms();
        let stepped = match self.demo.encode_simulation(&mut enc) {
            Ok(stepped) => stepped,
            Err(e) => {
                self.demo.message = Some(format!("{e:#}"));
                self.demo.paused = true;
                false
            }
        };
        let sim_ms = stepped.then(|| now_ms() - t);
        let t = now_ms();
        self.input.record_pick(&self.demo, &mut enc);
        let mut raw = self.input.egui_input(w, h, input::pixel_ratio());
        raw.max_texture_side = Some(self.demo.device.limits().max_texture_dimension_2d as usize);
        let picture = self.demo.encode_picture(&mut self.panel, &mut self.overlay, raw, &mut enc, &view, (w, h));
        self.input.egui_wants_pointer = self.panel.ctx.egui_wants_pointer_input() || self.panel.ctx.is_pointer_over_egui();
        let d = &mut self.demo;
        d.queue.submit(picture.uploads.into_iter().chain([enc.finish()]));
        if let Some(frame) = surface_texture {
            d.queue.present(frame);
        }
        if let Err(e) = d.after_submit() {
            d.message = Some(format!("{e:#}"));
        }
        d.record(sim_ms, now_ms() - t);
        let errors = take_gpu_errors();
        if !errors.is_empty() {
            let e = format!("WebGPU: {}", errors.join("; "));
            d.message = Some(e.clone());
            d.paused = true;
            self.error = Some(e);
        }
        if let (Some(resolve), Target::Canvas { canvas, .. }) = (self.snapshot.take(), &self.target) {
            // the canvas's picture, taken in the task that drew it (later it is gone)
            let url = canvas.to_data_url().unwrap_or_default();
            let _ = resolve.call1(&JsValue::NULL, &JsValue::from(url));
        }
        for a in picture.actions {
            let result = match a {
                Action::Scene(s) => d.set_scene(&s),
                Action::Method(m) => d.set_method(m),
                Action::Reset => d.reset(),
                // framing reads the positions back (a wait): the page frames the scene's motion instead
                Action::Frame => {
                    springsim::viewer::framing::frame_motion(&mut d.camera, &d.model, d.aspect);
                    Ok(())
                }
            };
            if let Err(e) = result {
                d.message = Some(format!("{e:#}"));
            }
        }
        if self.input.mouse == MouseMode::Grab && d.grab.is_none() {
            self.input.mouse = MouseMode::None;
        }
        self.frames += 1;
        Ok(true)
    }
}

/// Frames the page records ahead of the last report that came back (a swapchain's double buffering).
const FRAMES_IN_FLIGHT: usize = 2;

/// The page's clock (ms).
fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// A scene file's model and its step settings in their web form ([`web_settings`]).
fn parse_scene(scene_ron: &str) -> Result<(springsim::scene_file::Scene, springsim::Model, StepSettings), JsValue> {
    let scene = springsim::scene_file::Scene::parse(scene_ron, std::path::Path::new("page.ron")).map_err(|e| e.to_string())?;
    let model = scene.build(&springsim::scene::SceneOptions::default()).map_err(|e| e.to_string())?;
    let settings = web_settings(scene.settings());
    Ok((scene, model, settings))
}

fn diverged_in(events: Vec<springsim::FrameEvent>, diverged: &mut Vec<String>) {
    for e in events {
        if let springsim::FrameEvent::Diverged(d) = e {
            diverged.push(d.to_string());
        }
    }
}

/// Runs the scene file `scene_ron` (its model, method and settings, in their web form:
/// [`web_settings`]) for `frames` frames on the page's WebGPU through the pipelined frame path, and
/// resolves to `{ positions, initial: Float32Array (x, y, z per particle), particles, diverged, adapter }`.
#[wasm_bindgen]
pub async fn self_test(scene_ron: String, frames: u32) -> Result<JsValue, JsValue> {
    let (scene, model, settings) = parse_scene(&scene_ron)?;
    // a device of its own: the run's numbers whatever the demo's device went through
    let (adapter, device, queue) = web_device(None, false).await?;
    // the run's validation errors (a kernel the browser's compiler rejects runs as nothing)
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut sim = springsim::GpuSimulator::new(&device, &queue, &model, scene.file.method.name, settings).map_err(|e| e.to_string())?;
    let mut diverged = Vec::new();
    for _ in 0..frames {
        let mut enc = device.create_command_encoder(&Default::default());
        sim.prepare_frame().map_err(|e| e.to_string())?;
        sim.encode_frame(&mut enc).map_err(|e| e.to_string())?;
        queue.submit([enc.finish()]);
        diverged_in(sim.poll_reports().map_err(|e| e.to_string())?, &mut diverged);
    }
    let positions = readback::positions(&device, &queue, &sim).await?;
    if let Some(e) = scope.pop().await {
        return Err(format!("WebGPU: {e}").into());
    }
    // the reports of the last frames, now that the GPU is done
    diverged_in(sim.poll_reports().map_err(|e| e.to_string())?, &mut diverged);
    let out = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&out, &k.into(), v);
    set("positions", &js_sys::Float32Array::from(positions.as_slice()).into())?;
    let initial: Vec<f32> = model.positions.iter().flat_map(|p| p.map(|c| c as f32)).collect();
    set("initial", &js_sys::Float32Array::from(initial.as_slice()).into())?;
    set("particles", &JsValue::from(model.n_particles() as f64))?;
    set("diverged", &JsValue::from(diverged.join("; ")))?;
    set("adapter", &JsValue::from(springsim::gpu::base::context::adapter_name(&adapter.get_info())))?;
    Ok(out.into())
}

/// Times `warmup` + `frames` frames of the scene file `scene_ron` (in its web form) on the page's
/// WebGPU the way `springsim bench` times the GPU natively: each frame recorded with `encode_frame`
/// and submitted, at most two frames ahead of the last report, the page yielding to the browser while
/// it waits; a frame's time is the gap between its report's arrival and the previous one's. Resolves to
/// `{ times: Float64Array (ms, the timed frames), diverged, adapter }`.
#[wasm_bindgen]
pub async fn time_frames(scene_ron: String, warmup: u32, frames: u32) -> Result<JsValue, JsValue> {
    let (scene, model, settings) = parse_scene(&scene_ron)?;
    let (adapter, device, queue) = web_device(None, false).await?;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut sim = springsim::GpuSimulator::new(&device, &queue, &model, scene.file.method.name, settings).map_err(|e| e.to_string())?;
    sim.set_frame_signals(true);
    let (warmup, total) = (warmup as usize, (warmup + frames) as usize);
    let (mut recorded, mut reported) = (0usize, 0usize);
    let mut last_arrival = None;
    let mut times = Vec::new();
    let mut diverged = Vec::new();
    while recorded < total || sim.reports_in_flight() > 0 {
        if recorded < total && sim.reports_in_flight() < FRAMES_IN_FLIGHT {
            if recorded == 0 && warmup == 0 {
                last_arrival = Some(now_ms());
            }
            sim.prepare_frame().map_err(|e| e.to_string())?;
            let mut enc = device.create_command_encoder(&Default::default());
            sim.encode_frame(&mut enc).map_err(|e| e.to_string())?;
            queue.submit([enc.finish()]);
            recorded += 1;
        }
        let events = sim.poll_reports().map_err(|e| e.to_string())?;
        let now = now_ms();
        let idle = events.is_empty();
        for e in events {
            match e {
                springsim::FrameEvent::Report { .. } => {
                    if let (true, Some(t)) = (reported >= warmup, last_arrival) {
                        times.push(now - t);
                    }
                    last_arrival = Some(now);
                    reported += 1;
                }
                springsim::FrameEvent::Diverged(d) => diverged.push(d.to_string()),
                _ => {}
            }
        }
        if idle && (recorded == total || sim.reports_in_flight() >= FRAMES_IN_FLIGHT) {
            readback::next_task().await?;
        }
    }
    if let Some(e) = scope.pop().await {
        return Err(format!("WebGPU: {e}").into());
    }
    let out = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&out, &k.into(), v);
    set("times", &js_sys::Float64Array::from(times.as_slice()).into())?;
    set("diverged", &JsValue::from(diverged.join("; ")))?;
    set("adapter", &JsValue::from(springsim::gpu::base::context::adapter_name(&adapter.get_info())))?;
    Ok(out.into())
}

/// Runs the demo (scene `scene`, method `method`, at its default size when `size` is 0) for `frames`
/// frames on a texture of its own (`width`×`height`, RGBA8), exactly as the page runs it on the canvas
/// (the simulation, the scene and the egui panel, one submit a frame), and resolves to three pictures
/// of the last frame's state, RGBA8 row after row: `frame` (what the canvas would show), `scene` (the
/// scene alone, without the panel) and `ground` (the scene without the model), with `width`, `height`
/// and `adapter`: what `web/test.sh` checks the drawing with, since a headless browser may not present.
/// `switch` (`"flag:local-global"`, or empty) switches the scene and then the method after half the
/// frames, as the panel's controls do.
#[wasm_bindgen]
#[allow(clippy::too_many_arguments)] // the scene, the run and the picture's size, each a number from the script
pub async fn draw_test(
    scene: String,
    method: String,
    size: u32,
    frames: u32,
    width: u32,
    height: u32,
    switch: String,
) -> Result<JsValue, JsValue> {
    let method = Method::parse(&method).map_err(|e| e.to_string())?;
    let mut switch = match switch.split_once(':') {
        Some((s, m)) => Some((s.to_string(), Method::parse(m).map_err(|e| e.to_string())?)),
        None if switch.is_empty() => None,
        None => return Err(format!("switch {switch:?}: expected scene:method").into()),
    };
    let (adapter, device, queue) = web_device(None, false).await?;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let target = |label| {
        device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        })
    };
    let samples = render::msaa_samples(&adapter, format);
    let args = DemoArgs {
        scene,
        method,
        size: (size > 0).then_some(size as usize),
        width,
        height,
        settings: Some(web_settings(StepSettings::default())),
        ..Default::default()
    };
    let name = springsim::gpu::base::context::adapter_name(&adapter.get_info());
    let demo = Demo::new(device.clone(), queue.clone(), name.clone(), format, samples, &args).map_err(|e| format!("{e:#}"))?;
    let frame = target("springsim.web_frame");
    let mut app = App::new(Target::Texture(frame.clone()), demo, format);
    let mut drawn = 0;
    while drawn < frames {
        if let Some((scene, method)) = switch.take_if(|_| drawn == frames / 2) {
            app.demo.set_scene(&scene).map_err(|e| format!("{e:#}"))?;
            app.demo.set_method(method).map_err(|e| format!("{e:#}"))?;
        }
        drawn += u32::from(app.frame()?);
        if let Some(e) = &app.error {
            return Err(e.clone().into());
        }
        readback::next_task().await?;
    }
    let frame_px = readback::texture_rgba(&device, &queue, &frame).await?;
    // the same state drawn again, without the panel, then without the model either
    let d = &mut app.demo;
    let mut pictures = Vec::new();
    for model in [true, false] {
        let texture = target("springsim.web_scene");
        let view = texture.create_view(&Default::default());
        let opts = render::DrawOptions { model, ..d.draw };
        let mut enc = device.create_command_encoder(&Default::default());
        d.renderer.set_camera(&queue, &d.camera, width, height, &opts);
        d.renderer.set_collider_time(&queue, d.sim.time());
        d.renderer.encode(&device, &mut enc, &d.sim, &view, width, height, &opts);
        queue.submit([enc.finish()]);
        pictures.push(readback::texture_rgba(&device, &queue, &texture).await?);
    }
    if let Some(e) = scope.pop().await {
        return Err(format!("WebGPU: {e}").into());
    }
    let errors = take_gpu_errors();
    if !errors.is_empty() {
        return Err(format!("WebGPU: {}", errors.join("; ")).into());
    }
    let out = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&out, &k.into(), v);
    set("frame", &js_sys::Uint8Array::from(frame_px.as_slice()).into())?;
    set("scene", &js_sys::Uint8Array::from(pictures[0].as_slice()).into())?;
    set("ground", &js_sys::Uint8Array::from(pictures[1].as_slice()).into())?;
    set("width", &JsValue::from(width))?;
    set("height", &JsValue::from(height))?;
    set("message", &JsValue::from(app.demo.message.clone().unwrap_or_default()))?;
    set("adapter", &JsValue::from(name))?;
    Ok(out.into())
}
