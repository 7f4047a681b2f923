//! The page's mouse, wheel and keys: to the egui panel, else to the camera and the drag, as the native
//! window does (`springsim::viewer::app`). A click picks a particle among positions read back a frame
//! or two later (a page cannot wait for them): the copy rides in the next frame's encoder, mapped on
//! submit, and the pick completes when the browser has mapped it.

use crate::App;
use springsim::viewer::Demo;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// What the mouse does in the scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MouseMode {
    /// Nothing.
    #[default]
    None,
    /// Orbit the camera.
    Orbit,
    /// Pan the camera.
    Pan,
    /// Drag the held particle.
    Grab,
    /// Waiting for the positions of a pick.
    Picking,
}

/// A click waiting for its positions.
struct Pick {
    /// Where (physical pixels).
    at: (f32, f32),
    /// Ctrl or Shift held: toggle a pin.
    pin: bool,
    /// The button went up meanwhile.
    released: bool,
    /// The copy of the positions, once recorded, and whether it is mapped (Some(ok)).
    copy: Option<(wgpu::Buffer, Rc<Cell<Option<bool>>>)>,
}

/// The input state between frames.
#[derive(Default)]
pub struct Input {
    /// The scene's mouse mode.
    pub mouse: MouseMode,
    /// The pointer (physical pixels).
    cursor: (f32, f32),
    /// egui's events since the last frame.
    events: Vec<egui::Event>,
    /// The panel wanted the pointer in the last frame.
    pub egui_wants_pointer: bool,
    pick: Option<Pick>,
}

/// The device pixel ratio.
pub fn pixel_ratio() -> f32 {
    web_sys::window().map(|w| w.device_pixel_ratio() as f32).unwrap_or(1.0).max(0.25)
}

/// The canvas's size in physical pixels (its CSS size × the pixel ratio), set as its drawing size.
pub fn canvas_size(canvas: &web_sys::HtmlCanvasElement) -> (u32, u32) {
    let r = pixel_ratio();
    let w = ((canvas.client_width().max(1) as f32 * r).round() as u32).clamp(1, 8192);
    let h = ((canvas.client_height().max(1) as f32 * r).round() as u32).clamp(1, 8192);
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    (w, h)
}

fn modifiers(e: &web_sys::MouseEvent) -> egui::Modifiers {
    egui::Modifiers {
        alt: e.alt_key(),
        ctrl: e.ctrl_key(),
        shift: e.shift_key(),
        mac_cmd: e.meta_key(),
        command: e.ctrl_key() || e.meta_key(),
    }
}

fn button(b: i16) -> Option<egui::PointerButton> {
    match b {
        0 => Some(egui::PointerButton::Primary),
        1 => Some(egui::PointerButton::Middle),
        2 => Some(egui::PointerButton::Secondary),
        _ => None,
    }
}

impl Input {
    /// egui's input for a `w`×`h` canvas at `ppp` physical pixels per point.
    pub fn egui_input(&mut self, w: u32, h: u32, ppp: f32) -> egui::RawInput {
        let mut raw = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(w as f32 / ppp, h as f32 / ppp))),
            events: std::mem::take(&mut self.events),
            time: web_sys::window().and_then(|w| w.performance()).map(|p| p.now() / 1e3),
            ..Default::default()
        };
        raw.viewports.entry(egui::ViewportId::ROOT).or_default().native_pixels_per_point = Some(ppp);
        raw
    }

    /// Records the copy of the positions for a pending pick into the frame's `encoder`.
    pub fn record_pick(&mut self, demo: &Demo, encoder: &mut wgpu::CommandEncoder) {
        let Some(p) = &mut self.pick else { return };
        if p.copy.is_some() {
            return;
        }
        let buffer = crate::readback::copy_positions(&demo.device, encoder, &demo.sim);
        let done = Rc::new(Cell::new(None));
        let flag = done.clone();
        encoder.map_buffer_on_submit(&buffer, wgpu::MapMode::Read, .., move |r| flag.set(Some(r.is_ok())));
        p.copy = Some((buffer, done));
    }

    /// Completes a pick whose positions have come back: grab the particle (or toggle its pin), or orbit.
    pub fn finish_pick(&mut self, demo: &mut Demo, (w, h): (f32, f32)) -> anyhow::Result<()> {
        let ready = matches!(&self.pick, Some(Pick { copy: Some((_, done)), .. }) if done.get().is_some());
        if !ready {
            return Ok(());
        }
        let Some(Pick { at, pin, released, copy: Some((buffer, done)) }) = self.pick.take() else { return Ok(()) };
        if done.get() != Some(true) {
            anyhow::bail!("reading the positions back for a pick failed");
        }
        let xyz = crate::readback::xyz(&buffer).map_err(anyhow::Error::msg)?;
        let x: Vec<[f64; 3]> = xyz.chunks_exact(3).map(|p| [p[0] as f64, p[1] as f64, p[2] as f64]).collect();
        match demo.pick_among(&x, at.0, at.1, w, h, 14.0 * pixel_ratio()) {
            Some((i, p)) if pin => {
                demo.toggle_pin(i, p)?;
                self.mouse = MouseMode::None;
            }
            Some((i, p)) if !released => {
                demo.grab(i, p);
                self.mouse = MouseMode::Grab;
            }
            Some(_) => self.mouse = MouseMode::None,
            None => self.mouse = if released { MouseMode::None } else { MouseMode::Orbit },
        }
        Ok(())
    }

    fn pointer_down(&mut self, e: &web_sys::PointerEvent) {
        let Some(b) = button(e.button()) else { return };
        let ppp = pixel_ratio();
        let pos = egui::pos2(e.offset_x() as f32, e.offset_y() as f32);
        self.events.push(egui::Event::PointerButton { pos, button: b, pressed: true, modifiers: modifiers(e) });
        if self.egui_wants_pointer {
            return;
        }
        self.cursor = (pos.x * ppp, pos.y * ppp);
        match b {
            egui::PointerButton::Primary if self.pick.is_none() => {
                self.pick = Some(Pick { at: self.cursor, pin: e.ctrl_key() || e.shift_key(), released: false, copy: None });
                self.mouse = MouseMode::Picking;
            }
            egui::PointerButton::Secondary | egui::PointerButton::Middle => self.mouse = MouseMode::Pan,
            _ => {}
        }
    }

    fn pointer_up(&mut self, demo: &mut Demo, e: &web_sys::PointerEvent) -> anyhow::Result<()> {
        if let Some(b) = button(e.button()) {
            let pos = egui::pos2(e.offset_x() as f32, e.offset_y() as f32);
            self.events.push(egui::Event::PointerButton { pos, button: b, pressed: false, modifiers: modifiers(e) });
        }
        if let Some(p) = &mut self.pick {
            p.released = true;
        }
        if self.mouse == MouseMode::Grab {
            demo.release()?;
        }
        self.mouse = MouseMode::None;
        Ok(())
    }

    fn pointer_move(&mut self, demo: &mut Demo, e: &web_sys::PointerEvent, (w, h): (f32, f32)) {
        let ppp = pixel_ratio();
        let pos = egui::pos2(e.offset_x() as f32, e.offset_y() as f32);
        self.events.push(egui::Event::PointerMoved(pos));
        let (x, y) = (pos.x * ppp, pos.y * ppp);
        let (dx, dy) = (x - self.cursor.0, y - self.cursor.1);
        self.cursor = (x, y);
        match self.mouse {
            MouseMode::Orbit => demo.camera.orbit(dx, dy),
            MouseMode::Pan => demo.camera.pan(dx, dy, h),
            MouseMode::Grab => demo.drag_to(x, y, w, h),
            MouseMode::None | MouseMode::Picking => {}
        }
    }

    fn wheel(&mut self, demo: &mut Demo, e: &web_sys::WheelEvent) {
        let delta = egui::vec2(-e.delta_x() as f32, -e.delta_y() as f32);
        let unit = match e.delta_mode() {
            web_sys::WheelEvent::DOM_DELTA_LINE => egui::MouseWheelUnit::Line,
            web_sys::WheelEvent::DOM_DELTA_PAGE => egui::MouseWheelUnit::Page,
            _ => egui::MouseWheelUnit::Point,
        };
        self.events.push(egui::Event::MouseWheel {
            unit,
            delta,
            modifiers: modifiers(e),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
        if !self.egui_wants_pointer {
            let steps = match unit {
                egui::MouseWheelUnit::Point => delta.y / 40.0,
                _ => delta.y,
            };
            demo.camera.zoom(steps);
        }
    }

    fn key(&mut self, demo: &mut Demo, e: &web_sys::KeyboardEvent) -> anyhow::Result<()> {
        match e.key().as_str() {
            " " => demo.paused = !demo.paused,
            "n" | "N" => {
                demo.paused = true;
                demo.step_once = true;
            }
            "r" | "R" => demo.reset()?,
            "v" | "V" => demo.draw.springs = !demo.draw.springs,
            "w" | "W" => demo.controls.wind = !demo.controls.wind,
            _ => {}
        }
        Ok(())
    }
}

fn on<E: JsCast + 'static>(
    target: &web_sys::EventTarget,
    name: &str,
    app: &Rc<RefCell<App>>,
    f: impl Fn(&mut App, &E) -> anyhow::Result<()> + 'static,
) -> Result<(), JsValue> {
    let app = app.clone();
    let cb = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        if let Ok(e) = e.dyn_into::<E>() {
            let mut a = app.borrow_mut();
            if let Err(err) = f(&mut a, &e) {
                a.demo.message = Some(format!("{err:#}"));
            }
        }
    });
    let options = web_sys::AddEventListenerOptions::new();
    options.set_passive(false);
    target.add_event_listener_with_callback_and_add_event_listener_options(name, cb.as_ref().unchecked_ref(), &options)?;
    cb.forget();
    Ok(())
}

/// Listens to the canvas's pointer and wheel events and the window's keys.
pub fn listen(canvas: &web_sys::HtmlCanvasElement, app: Rc<RefCell<App>>) -> Result<(), JsValue> {
    let target: &web_sys::EventTarget = canvas.as_ref();
    on::<web_sys::PointerEvent>(target, "pointerdown", &app, |a, e| {
        if let Some(canvas) = a.canvas() {
            let _ = canvas.set_pointer_capture(e.pointer_id());
        }
        a.input.pointer_down(e);
        Ok(())
    })?;
    on::<web_sys::PointerEvent>(target, "pointerup", &app, |a, e| a.input.pointer_up(&mut a.demo, e))?;
    on::<web_sys::PointerEvent>(target, "pointermove", &app, |a, e| {
        let size = a.size();
        let size = (size.0 as f32, size.1 as f32);
        a.input.pointer_move(&mut a.demo, e, size);
        Ok(())
    })?;
    on::<web_sys::WheelEvent>(target, "wheel", &app, |a, e| {
        e.prevent_default();
        a.input.wheel(&mut a.demo, e);
        Ok(())
    })?;
    on::<web_sys::MouseEvent>(target, "contextmenu", &app, |_, e| {
        e.prevent_default();
        Ok(())
    })?;
    let window: web_sys::EventTarget = web_sys::window().ok_or("no window")?.into();
    on::<web_sys::KeyboardEvent>(&window, "keydown", &app, |a, e| {
        if a.panel.ctx.egui_wants_keyboard_input() {
            return Ok(());
        }
        a.input.key(&mut a.demo, e)
    })?;
    Ok(())
}
