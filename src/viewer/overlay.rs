//! The egui overlay: controls, statistics and the shortcut list.

use super::{demo_methods, demo_scenes, drag_mode, Demo};
use crate::stepping::Simulator;
use crate::Method;

/// What the overlay asks the window to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Switch scene.
    Scene(String),
    /// Switch method (keeps the state).
    Method(Method),
    /// Back to the first state.
    Reset,
    /// Look at the whole scene.
    Frame,
}

/// Overlay state that is not the demo's.
#[derive(Clone, Debug, Default)]
pub struct OverlayState {
    /// The shortcut list is open.
    pub help: bool,
    /// The panel is hidden.
    pub hidden: bool,
}

/// The keyboard shortcuts, as listed by `?` / F1.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Space", "pause / resume"),
    ("N", "single step (while paused)"),
    ("R", "reset the scene"),
    ("M / Shift+M", "next / previous method (keeps the state; those the GPU runs)"),
    ("C / Shift+C", "next / previous scene"),
    ("F", "frame the current positions"),
    ("V", "spring view (strain colours)"),
    ("W", "wind on / off"),
    ("[ / ]", "stiffness / 1.25, x 1.25"),
    ("- / =", "substep scale / 1.25, x 1.25 (capped at 1)"),
    ("H", "hide / show the panel"),
    ("? / F1", "this list"),
    ("Esc", "quit"),
    ("Left drag", "orbit; on a particle: drag it (explicit methods: a stiff spring to the cursor; implicit: pinned to it)"),
    ("Ctrl/Shift + click", "pin / unpin a particle"),
    ("Right or middle drag", "pan"),
    ("Wheel", "zoom"),
];

/// Builds the overlay for this frame.
pub fn show(ctx: &egui::Context, demo: &mut Demo, st: &mut OverlayState) -> Vec<Action> {
    let mut actions = Vec::new();
    if st.help {
        egui::Window::new("Shortcuts").collapsible(false).show(ctx, |ui| {
            egui::Grid::new("keys").striped(true).show(ui, |ui| {
                for (k, what) in SHORTCUTS {
                    ui.monospace(*k);
                    ui.label(*what);
                    ui.end_row();
                }
            });
            if ui.button("Close").clicked() {
                st.help = false;
            }
        });
    }
    if st.hidden {
        return actions;
    }
    egui::Window::new("springsim").default_pos([10.0, 10.0]).default_width(300.0).show(ctx, |ui| {
        ui.label(egui::RichText::new(demo.adapter.as_str()).small());
        if demo.diverged {
            ui.colored_label(egui::Color32::from_rgb(255, 90, 60), "The simulation diverged (non-finite state).");
            if ui.button("Reset").clicked() {
                actions.push(Action::Reset);
            }
        }
        if let Some(b) = &demo.guard_banner {
            ui.colored_label(egui::Color32::from_rgb(255, 170, 60), format!("Divergence guard: {b}"));
        }
        if let Some(m) = &demo.message {
            ui.colored_label(egui::Color32::YELLOW, m.as_str());
        }
        let mut scene = demo.scene.clone();
        egui::ComboBox::from_label("scene").selected_text(scene.clone()).show_ui(ui, |ui| {
            for s in demo_scenes(demo.options.mesh.is_some()) {
                ui.selectable_value(&mut scene, s.to_string(), s);
            }
        });
        if scene != demo.scene {
            actions.push(Action::Scene(scene));
        }
        let mut method = demo.method();
        egui::ComboBox::from_label("method").selected_text(method.name()).show_ui(ui, |ui| {
            for m in demo_methods() {
                ui.selectable_value(&mut method, m, m.name());
            }
        });
        if method != demo.method() {
            actions.push(Action::Method(method));
        }
        ui.horizontal(|ui| {
            if ui.button(if demo.paused { "Resume" } else { "Pause" }).clicked() {
                demo.paused = !demo.paused;
            }
            if ui.button("Step").clicked() {
                demo.paused = true;
                demo.step_once = true;
            }
            if ui.button("Reset").clicked() {
                actions.push(Action::Reset);
            }
            if ui.button("Frame").clicked() {
                actions.push(Action::Frame);
            }
        });
        ui.add(egui::Slider::new(&mut demo.steps_per_draw, 0..=400).text("steps / drawn frame (0: whole frame)"));
        let mut ks = demo.controls.stiffness_scale;
        ui.add(egui::Slider::new(&mut ks, 0.1..=10.0).logarithmic(true).text("stiffness x"));
        let mut drag = demo.controls.drag.unwrap_or(demo.model.forces.drag);
        ui.add(egui::Slider::new(&mut drag, 0.0..=5.0).text("damping d0 (1/s)"));
        let mut ss = demo.controls.substep_scale;
        ui.add(egui::Slider::new(&mut ss, 0.05..=1.0).text("substep scale (h / h_max)"));
        let mut wind = demo.controls.wind;
        ui.checkbox(&mut wind, "wind");
        // Model changes rebuild the simulation (keeping the state): apply them once the mouse is up.
        if !ctx.input(|i| i.pointer.any_down()) {
            demo.controls.stiffness_scale = ks;
            if (drag - demo.model.forces.drag).abs() > 1e-12 || demo.controls.drag.is_some() {
                demo.controls.drag = Some(drag);
            }
            demo.controls.substep_scale = ss;
            demo.controls.wind = wind;
        }
        ui.checkbox(&mut demo.draw.springs, "spring view (strain)");
        if demo.draw.springs {
            ui.add(egui::Slider::new(&mut demo.draw.strain_scale, 0.001..=0.5).logarithmic(true).text("strain at full colour"));
        }
        ui.separator();
        let p = demo.sim.plan();
        let s = &demo.stats;
        egui::Grid::new("stats").show(ui, |ui| {
            let mut row = |k: &str, v: String| {
                ui.label(k);
                ui.monospace(v);
                ui.end_row();
            };
            row("frame", format!("{:.1} ms sim + {:.1} ms draw", s.sim_ms, s.draw_ms));
            row("particles", demo.model.n_particles().to_string());
            row("springs", demo.model.springs.len().to_string());
            row("h", format!("{:.3e} s (h_max {:.3e})", p.h, p.h_max));
            row("substeps", p.substeps.to_string());
            let r = &s.report;
            if demo.method().is_implicit() || r.iterations > 0 {
                row("CG iterations", format!("{} in {} step(s)", r.iterations, r.substeps));
                row("CG residual", format!("{:.2e}", r.residual));
            } else {
                row("CG iterations", "- (no linear solve in this method)".into());
                row("CG residual", "-".into());
            }
            match drag_mode(demo) {
                Some(Some((c, d))) => row("drag", format!("cursor spring c = {c:.2e}/s², d = {d:.1}/s")),
                Some(None) => row("drag", "position constraint".into()),
                None => {}
            }
            row("max strain", format!("{:.4}", s.max_strain));
            row("energy", format!("{:.4e} J", s.energy));
            row("state", if s.finite { "finite".into() } else { "DIVERGED".into() });
        });
        ui.label(egui::RichText::new("? or F1: shortcuts").small());
    });
    actions
}
