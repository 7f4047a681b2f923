//! The windowed demo (`springsim demo`, feature `viewer`): a winit window that draws straight from the
//! simulation's position buffer, with an orbit camera, mouse dragging and pinning, live method and
//! scene switching and an egui overlay. `--screenshot` renders the last of `--frames` frames with the
//! same pipelines into an offscreen target and writes a PNG; without a display it runs headless.
//!
//! - [`Demo`]: the simulation, the renderer and the controls, shared by the window and the headless path.
//! - `app`: the winit `ApplicationHandler` (window, surface and device are created in `resumed`).
//! - `render`: normals compute pass, cloth and ribbon pipelines, offscreen capture.
//! - `camera`, `overlay`: the orbit camera and the egui panel.
//! - `framing`: the region a scene moves through (the first view) and the ground every scene shows.
//! - `pins`: the pin markers. `headless`: `springsim demo`'s entry and the offscreen run.
//! - `picture`: a frame's picture (the scene and the panel) in the host's encoder, for the window and
//!   the browser page alike; `interaction`: picking, holding, dragging and pinning a particle.
//! - `animation`: `--animation FILE.gif`, every K-th frame of the offscreen run as a looping GIF.

pub mod animation;
// the window (winit's event loop, a device waited for) and the offscreen runs wait on the GPU: not in a
// browser page, which drives a `Demo` of its own (web/)
#[cfg(not(target_arch = "wasm32"))]
pub mod app;
#[cfg(not(target_arch = "wasm32"))]
mod blocking;
pub mod camera;
pub mod framing;
#[cfg(not(target_arch = "wasm32"))]
pub mod headless;
mod interaction;
pub mod overlay;
pub mod picture;
pub mod pins;
mod pipeline;
pub mod render;
pub mod solids;
#[cfg(not(target_arch = "wasm32"))]
mod summary;

#[cfg(not(target_arch = "wasm32"))]
pub use headless::{run, run_headless, write_png};
pub use interaction::{Grab, CURSOR_MAX_STEP};

use crate::method::{DivergencePolicy, GuardSettings};
use crate::model::Cursor;
use crate::model::Model;
use crate::reference::stats::state_stats;
use crate::scene::{self, SceneOptions};
use crate::stepping::GpuSimulator;
use crate::stepping::{FrameReport, Simulator};
use crate::{Method, StepSettings};
use anyhow::{Context, Result};
use camera::Camera;
use glam::Vec3;
use render::{DrawOptions, SceneRenderer};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What `springsim demo` was asked for.
#[derive(Clone, Debug)]
pub struct DemoArgs {
    /// The scene (a registry name, or a scene file's path ending in `.ron`).
    pub scene: String,
    /// The method.
    pub method: Method,
    /// Scene resolution.
    pub size: Option<usize>,
    /// Spring stiffness (N/m).
    pub stiffness: Option<f64>,
    /// OBJ file (scene `mesh`; giving one selects it).
    pub mesh: Option<PathBuf>,
    /// Run this many frames, then exit (with `screenshot`: write the last one).
    pub frames: Option<usize>,
    /// Write the last frame here as a PNG.
    pub screenshot: Option<PathBuf>,
    /// Write the run's last `animation_frames` × `animation_every` frames here as a looping GIF
    /// (offscreen; [`animation::Plan`]).
    pub animation: Option<PathBuf>,
    /// GIF frames in the animation.
    pub animation_frames: usize,
    /// Every K-th simulation frame becomes a GIF frame.
    pub animation_every: usize,
    /// Window / image size.
    pub width: u32,
    /// Window / image size.
    pub height: u32,
    /// Never open a window (offscreen only; needs `screenshot`, `animation` or `frames`).
    pub headless: bool,
    /// What the divergence guard does (default `recover`: roll back and halve h, with a banner).
    pub divergence: DivergencePolicy,
    /// Run an explicit method above Shinya's h_max (refused otherwise).
    pub allow_unstable: bool,
    /// The step settings to start from (a scene file's; `None`: the defaults). The overlay's substep
    /// scale starts at theirs; the guard's policy and `allow_unstable` above win.
    pub settings: Option<StepSettings>,
    /// Where the camera starts, (eye, target) (a scene file's; `None`: framing the model).
    pub camera: Option<([f64; 3], [f64; 3])>,
}

impl Default for DemoArgs {
    fn default() -> Self {
        DemoArgs {
            scene: "curtain".into(),
            method: Method::SymplecticEuler,
            size: None,
            stiffness: None,
            mesh: None,
            frames: None,
            screenshot: None,
            animation: None,
            animation_frames: 60,
            animation_every: 1,
            width: 960,
            height: 720,
            headless: false,
            divergence: DivergencePolicy::Recover,
            allow_unstable: false,
            settings: None,
            camera: None,
        }
    }
}

/// The knobs of the overlay that change the model or the step (they rebuild the simulation, keeping
/// positions and velocities).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelControls {
    /// Stiffness multiplier on every spring.
    pub stiffness_scale: f64,
    /// Air drag d₀ (1/s); `None`: the scene's.
    pub drag: Option<f64>,
    /// h = S · h_max.
    pub substep_scale: f64,
    /// The scene's wind on or off.
    pub wind: bool,
}

impl Default for ModelControls {
    fn default() -> Self {
        ModelControls { stiffness_scale: 1.0, drag: None, substep_scale: StepSettings::default().substep_scale, wind: true }
    }
}

/// Timings and statistics the overlay shows.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Simulation time of the last frame (ms), smoothed.
    pub sim_ms: f64,
    /// Drawing time of the last frame (ms), smoothed.
    pub draw_ms: f64,
    /// Frames simulated.
    pub frames: usize,
    /// Largest strain at the last check.
    pub max_strain: f64,
    /// Energy at the last check.
    pub energy: f64,
    /// All finite at the last check.
    pub finite: bool,
    /// Sums for the run's averages (sim, draw, count).
    pub totals: (f64, f64, usize),
    /// The last frame's report (CG iterations and residual for the methods that solve a system).
    pub report: FrameReport,
}

/// The demo: the simulation, the renderer and the controls, with no window in it.
pub struct Demo {
    /// The device.
    pub device: wgpu::Device,
    /// The queue.
    pub queue: wgpu::Queue,
    /// The adapter's description.
    pub adapter: String,
    /// The current scene.
    pub scene: String,
    /// Scene options.
    pub options: SceneOptions,
    /// The model as built (with the demo's changes).
    pub model: Model,
    /// The simulation.
    pub sim: GpuSimulator,
    /// The renderer.
    pub renderer: SceneRenderer,
    /// The camera.
    pub camera: Camera,
    /// The viewport's width / height, for framing (the window keeps it up to date).
    pub aspect: f32,
    /// Drawing options.
    pub draw: DrawOptions,
    /// Model controls wanted (the overlay edits these).
    pub controls: ModelControls,
    /// Model controls the simulation was built with.
    pub applied: ModelControls,
    /// Paused.
    pub paused: bool,
    /// Steps per drawn frame; 0: a whole frame (`frame_dt` of simulated time).
    pub steps_per_draw: usize,
    /// Single steps pending.
    pub step_once: bool,
    /// Pins the user toggled.
    pub pin_overrides: BTreeMap<usize, bool>,
    /// The particle held by the mouse.
    pub grab: Option<Grab>,
    /// Statistics.
    pub stats: Stats,
    /// The simulation diverged (non-finite state): paused until reset.
    pub diverged: bool,
    /// A message for the overlay (errors of rebuilds and the like).
    pub message: Option<String>,
    /// The divergence guard's policy and `allow_unstable`, kept for rebuilds.
    pub guard: (DivergencePolicy, bool),
    /// The step settings the controls start from (a scene file's, or the defaults).
    pub base_settings: StepSettings,
    /// The banner: the guard's last divergence, its cause and what it did.
    pub guard_banner: Option<String>,
}

/// The demo's step settings: `base` with the controls' substep scale and the guard's policy.
fn demo_settings(base: &StepSettings, controls: &ModelControls, (policy, allow_unstable): (DivergencePolicy, bool)) -> StepSettings {
    StepSettings {
        substep_scale: controls.substep_scale,
        allow_unstable,
        guard: GuardSettings { policy, ..base.guard.clone() },
        ..base.clone()
    }
}

/// The methods the demo offers (the overlay's list and the M key), in [`Method::ALL`]'s order: the
/// window simulates on the GPU, so Newton's method (a CPU reference) is left out.
pub fn demo_methods() -> Vec<Method> {
    Method::ALL.into_iter().filter(|m| m.on_gpu()).collect()
}

/// How the held particle is dragged now: `Some((c, d))` for the cursor spring (stiffness 1/s², damping
/// 1/s), `None` for the position constraint.
pub fn drag_mode(demo: &Demo) -> Option<Option<(f64, f64)>> {
    let g = demo.grab.as_ref()?;
    Some(if g.held { None } else { demo.sim.cursor().map(|c| (c.stiffness, c.damping)) })
}

/// Scenes the demo offers (not `orbit`: one particle and no springs to draw).
pub fn demo_scenes(has_mesh: bool) -> Vec<&'static str> {
    scene::SCENES.iter().map(|s| s.name).filter(|&n| n != "orbit" && (n != "mesh" || has_mesh)).collect()
}

impl Demo {
    /// Builds the scene and the simulation on `device`, and a renderer for `format` with `samples`.
    pub fn new(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter: String,
        format: wgpu::TextureFormat,
        samples: u32,
        args: &DemoArgs,
    ) -> Result<Self> {
        let scene = if args.mesh.is_some() && args.scene == "curtain" { "mesh".to_string() } else { args.scene.clone() };
        let options = SceneOptions { size: args.size, stiffness: args.stiffness, mesh: args.mesh.clone() };
        let base_settings = args.settings.clone().unwrap_or_default();
        let controls = ModelControls { substep_scale: base_settings.substep_scale, ..Default::default() };
        let model = build_model(&scene, &options, &controls, &BTreeMap::new())?;
        let guard = (args.divergence, args.allow_unstable);
        let settings = demo_settings(&base_settings, &controls, guard);
        let mut sim = GpuSimulator::new(&device, &queue, &model, args.method, settings)?;
        sim.set_frame_signals(true);
        let mut renderer = SceneRenderer::new(&device, format, samples);
        renderer.set_model(&device, &model, &sim);
        let mut camera = Camera::default();
        let aspect = args.width as f32 / args.height.max(1) as f32;
        match args.camera {
            Some((eye, target)) => camera.look(Vec3::from_array(eye.map(|c| c as f32)), Vec3::from_array(target.map(|c| c as f32))),
            None => framing::frame_motion(&mut camera, &model, aspect),
        }
        Ok(Demo {
            device,
            queue,
            adapter,
            scene,
            options,
            model,
            sim,
            renderer,
            camera,
            aspect,
            draw: DrawOptions::default(),
            applied: controls.clone(),
            controls,
            paused: false,
            steps_per_draw: 0,
            step_once: false,
            pin_overrides: BTreeMap::new(),
            grab: None,
            stats: Stats { finite: true, ..Default::default() },
            diverged: false,
            message: None,
            guard,
            guard_banner: None,
            base_settings,
        })
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.sim.method()
    }

    /// Switches the method live: positions and velocities are kept (the simulator's `set_method`).
    pub fn set_method(&mut self, m: Method) -> Result<()> {
        self.sim.set_method(m)?;
        Ok(())
    }

    /// Rebuilds the simulation from the scene with the current controls; `keep_state` carries the
    /// positions and velocities over (stiffness, drag, wind and step changes), else it starts afresh.
    pub fn rebuild(&mut self, keep_state: bool) -> Result<()> {
        let method = self.sim.method();
        let model = build_model(&self.scene, &self.options, &self.controls, &self.pin_overrides)?;
        let settings = demo_settings(&self.base_settings, &self.controls, self.guard);
        // a browser page cannot read the state back (that waits on the GPU): it starts the scene afresh
        let keep_state = keep_state && cfg!(not(target_arch = "wasm32"));
        let state = if keep_state && model.n_particles() == self.model.n_particles() { Some(self.sim.read_state()?) } else { None };
        let mut sim = GpuSimulator::new(&self.device, &self.queue, &model, method, settings)?;
        sim.set_frame_signals(true);
        if let Some((x, v)) = state {
            sim.write_state(&x, &v)?;
        }
        self.renderer.set_model(&self.device, &model, &sim);
        self.sim = sim;
        self.model = model;
        self.applied = self.controls.clone();
        self.grab = None;
        Ok(())
    }

    /// Back to the scene's first state (keeps method and controls, drops pin changes).
    pub fn reset(&mut self) -> Result<()> {
        self.pin_overrides.clear();
        self.diverged = false;
        self.stats.finite = true;
        self.message = None;
        self.guard_banner = None;
        self.rebuild(false)
    }

    /// Switches to another scene.
    pub fn set_scene(&mut self, name: &str) -> Result<()> {
        let old = std::mem::replace(&mut self.scene, name.to_string());
        self.pin_overrides.clear();
        if let Err(e) = self.rebuild(false) {
            self.scene = old;
            return Err(e);
        }
        self.diverged = false;
        framing::frame_motion(&mut self.camera, &self.model, self.aspect);
        Ok(())
    }

    /// Frames the current positions (one read-back; the `F` key), fitted to [`Demo::aspect`] from
    /// the current direction.
    pub fn frame_scene(&mut self) -> Result<()> {
        let (x, _) = self.sim.read_state()?;
        let (lo, hi) = framing::bounds(x.iter().map(|p| Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32)));
        if lo.is_finite() && hi.is_finite() {
            self.camera.fit(&framing::corners(lo, hi), self.aspect);
        }
        Ok(())
    }

    /// Applies the controls and the mouse grab, then records one frame of simulation (or the steps
    /// asked for) into `encoder`: no submit, no wait. Returns whether anything was recorded (not when
    /// paused). The host submits, then calls [`Demo::after_submit`].
    pub fn encode_simulation(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<bool> {
        if self.controls != self.applied {
            if let Err(e) = self.rebuild(true) {
                self.message = Some(format!("{e:#}"));
                self.controls = self.applied.clone();
            }
        }
        let dt = StepSettings::default().frame_dt;
        if let Some(g) = &mut self.grab {
            let v = ((g.target - g.last) / dt as f32).to_array().map(f64::from);
            let target = g.target.to_array().map(f64::from);
            let plan = self.sim.plan();
            let to = g.target - g.anchor;
            let anchor = if to.length() > CURSOR_MAX_STEP { g.anchor + to.normalize() * CURSOR_MAX_STEP } else { g.target };
            let cursor = Cursor::stable(g.index, anchor.to_array().map(f64::from), &plan, self.sim.model().drag);
            if !self.sim.method().is_implicit() && !g.was_pinned && cursor.is_usable(&plan) {
                if g.held {
                    // from a position constraint (a method switch): free it at the cursor
                    self.sim.set_particle(g.index, target, v, false)?;
                    g.held = false;
                }
                self.sim.set_cursor(Some(cursor))?;
                g.anchor = anchor;
            } else {
                if self.sim.cursor().is_some() {
                    self.sim.set_cursor(None)?;
                }
                self.sim.set_particle(g.index, target, v, true)?;
                g.held = true;
                g.anchor = g.target;
            }
            g.last = g.target;
        }
        let run = !(self.paused || self.diverged) || self.step_once;
        if !run {
            return Ok(false);
        }
        let steps = if self.step_once && (self.paused || self.diverged) { 1 } else { self.steps_per_draw };
        // local/global's Cholesky step (every frame) and implicit Euler's adaptive step on a model that
        // depends on time (a whole frame) decide on the host between their steps: the blocking frame
        // (it waits), before the drawing. A page cannot wait: there the adaptive frame takes the
        // planned steps (encode_frame), and local/global runs the GPU's CG (web_settings).
        let cholesky = self.sim.method() == Method::LocalGlobal && self.sim.needs_blocking_frame();
        let blocking = self.sim.needs_blocking_frame() && (cholesky || !cfg!(target_arch = "wasm32"));
        // single steps and the steps slider: frames of that many steps
        self.sim.set_frame_steps((steps > 0).then_some(steps));
        if blocking && (steps == 0 || cholesky) {
            self.stats.report = self.sim.step_frame()?;
            if let Some(d) = self.stats.report.divergence {
                self.guard_banner = Some(d.to_string());
            }
        } else {
            self.sim.prepare_frame()?;
            self.sim.encode_frame(encoder)?;
        }
        self.step_once = false;
        self.stats.frames += 1;
        Ok(true)
    }

    /// After the host's submit: the frame reports that came back (polled, never waited for) update the
    /// overlay's figures (the solver's, the largest strain, the energy, finiteness) and the guard's
    /// banner.
    pub fn after_submit(&mut self) -> Result<()> {
        let events = self.sim.poll_reports()?;
        self.take_events(events);
        Ok(())
    }

    pub(super) fn take_events(&mut self, events: Vec<crate::FrameEvent>) {
        for e in events {
            match e {
                crate::FrameEvent::Report { report, signals, .. } => {
                    self.stats.report = report;
                    if let Some(s) = signals {
                        self.stats.max_strain = s.max_strain;
                        self.stats.energy = s.energy;
                        self.stats.finite = s.finite;
                        if !s.finite {
                            self.diverged = true;
                        }
                    }
                }
                crate::FrameEvent::Diverged(d) => self.guard_banner = Some(d.to_string()),
                _ => {}
            }
        }
    }

    /// Reads the state back (every 15 frames, for the overlay): strain, energy, divergence.
    pub fn check(&mut self) -> Result<()> {
        let (x, v) = self.sim.read_state()?;
        let s = state_stats(self.sim.model(), &x, &v);
        self.stats.max_strain = s.max_strain;
        self.stats.energy = s.energy;
        self.stats.finite = s.finite;
        if !s.finite {
            self.diverged = true;
        }
        Ok(())
    }

    /// Records a smoothed timing sample.
    pub fn record(&mut self, sim_ms: Option<f64>, draw_ms: f64) {
        let a = 0.2;
        if let Some(s) = sim_ms {
            self.stats.sim_ms = if self.stats.totals.2 == 0 { s } else { self.stats.sim_ms * (1.0 - a) + s * a };
            self.stats.totals.0 += s;
            self.stats.totals.1 += draw_ms;
            self.stats.totals.2 += 1;
        }
        self.stats.draw_ms = if self.stats.draw_ms == 0.0 { draw_ms } else { self.stats.draw_ms * (1.0 - a) + draw_ms * a };
    }

    /// The run's mean simulation and drawing times per frame (ms).
    pub fn mean_split(&self) -> (f64, f64) {
        let (s, d, n) = self.stats.totals;
        let n = n.max(1) as f64;
        (s / n, d / n)
    }
}

/// Builds a scene for the demo: the registry's model with the controls applied. The jelly cube hangs
/// from two corners of its top face (there is no ground to land on yet).
pub fn build_model(name: &str, options: &SceneOptions, c: &ModelControls, pins: &BTreeMap<usize, bool>) -> Result<Model> {
    let mut m = scene::build(name, options)?;
    if name == "jelly" {
        let n = options.size.unwrap_or(8);
        let id = |x: usize, y: usize, z: usize| (z * n + y) * n + x;
        m.pin(id(0, n - 1, 0));
        m.pin(id(n - 1, n - 1, 0));
    }
    if c.stiffness_scale != 1.0 {
        m.scale_stiffness(c.stiffness_scale);
    }
    if let Some(d) = c.drag {
        m.forces.drag = d;
    }
    if !c.wind {
        m.forces.wind = [0.0; 3];
    }
    for (&i, &p) in pins {
        if i < m.n_particles() {
            m.pinned[i] = p;
            if p {
                m.velocities[i] = [0.0; 3];
            }
        }
    }
    m.validate().context("the demo's model")?;
    Ok(m)
}
