//! The mouse on the demo: picking a particle under the cursor, holding and dragging it, letting it go,
//! pinning it. The window and the browser page both call these.

use super::Demo;
use crate::stepping::Simulator;
use crate::StepSettings;
use anyhow::Result;
use glam::Vec3;

/// A particle held by the mouse (issue #5): in the explicit methods and LEU a stiff spring pulls it
/// to the cursor ([`crate::model::Cursor::stable`], the particle stays free); in the implicit methods
/// (`Method::is_implicit`) it is a kinematic position constraint: pinned at the cursor's point while
/// held, with the cursor's velocity when let go. A particle that was pinned before is moved as a pin
/// in every method, and so is any particle when the step leaves no room for a stiff enough spring
/// (substep scale near 1, [`crate::model::Cursor::is_usable`]).
#[derive(Clone, Copy, Debug)]
pub struct Grab {
    /// The particle.
    pub index: usize,
    /// Whether it was pinned before.
    pub was_pinned: bool,
    /// Where the cursor puts it.
    pub target: Vec3,
    /// Where it was last frame.
    pub last: Vec3,
    /// Held by the position constraint now (pinned by the grab), rather than by the cursor spring.
    pub held: bool,
    /// Where the cursor spring pulls: it follows `target` by at most [`CURSOR_MAX_STEP`] a frame.
    pub anchor: Vec3,
}

/// How far the cursor spring's anchor moves towards the mouse in one frame (m): 3 cm, 0.9 m/s at
/// 30 frames/s. Measured on the 21×21 curtain (CPU, a particle of the free edge pulled up for 20
/// frames): at 3 cm a frame symplectic Euler, explicit Euler, RK4 and LEU stay below 8 m/s; at 10 cm a
/// frame explicit Euler and LEU reach 130 m/s, past the divergence speed, and recompute k₀ in 11 and 20
/// of the 20 frames (LEU also retries 252 steps). A faster mouse leaves the anchor behind; it catches
/// up when the mouse rests.
pub const CURSOR_MAX_STEP: f32 = 0.03;

impl Demo {
    /// Picks the particle nearest to pixel (px, py) within `radius` pixels (one read-back).
    pub fn pick(&mut self, px: f32, py: f32, w: f32, h: f32, radius: f32) -> Result<Option<(usize, Vec3)>> {
        let (x, _) = self.sim.read_state()?;
        Ok(self.pick_among(&x, px, py, w, h, radius))
    }

    /// [`Demo::pick`] among positions `x` the host already has (a browser page reads them back
    /// asynchronously, a frame late).
    pub fn pick_among(&self, x: &[[f64; 3]], px: f32, py: f32, w: f32, h: f32, radius: f32) -> Option<(usize, Vec3)> {
        let eye = self.camera.eye();
        let mut best: Option<(f32, f32, usize)> = None;
        for (i, p) in x.iter().enumerate() {
            let p = Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32);
            if let Some((sx, sy)) = self.camera.project(p, w, h) {
                let d = ((sx - px).powi(2) + (sy - py).powi(2)).sqrt();
                if d <= radius {
                    let z = (p - eye).length();
                    // prefer the nearest on screen, then the nearest to the eye
                    let key = (d / radius).round() * 1e6 + z;
                    if best.is_none_or(|b| key < b.0) {
                        best = Some((key, d, i));
                    }
                }
            }
        }
        best.map(|(_, _, i)| (i, Vec3::new(x[i][0] as f32, x[i][1] as f32, x[i][2] as f32)))
    }

    /// Starts holding particle `i` at `at` (the grab takes effect at the next [`Demo::simulate`]).
    pub fn grab(&mut self, i: usize, at: Vec3) {
        self.grab = Some(Grab { index: i, was_pinned: self.sim.is_pinned(i), target: at, last: at, held: false, anchor: at });
    }

    /// Moves the held particle's target under the cursor at pixel (`x`, `y`) of a `w`×`h` view, on
    /// the plane through the target that faces the camera (nothing when no particle is held).
    pub fn drag_to(&mut self, x: f32, y: f32, w: f32, h: f32) {
        let Some(gr) = &mut self.grab else { return };
        let cam = &self.camera;
        let n = (cam.target - cam.eye()).normalize();
        let (o, d) = cam.ray(x, y, w, h);
        let denom = d.dot(n);
        if denom.abs() > 1e-6 {
            let t = (gr.target - o).dot(n) / denom;
            if t > 0.0 {
                gr.target = o + t * d;
            }
        }
    }

    /// Lets go of the held particle: a position-constrained one keeps the cursor's last velocity (and
    /// its pin if it had one); a spring-held one just loses the spring, keeping its own velocity.
    pub fn release(&mut self) -> Result<()> {
        if let Some(g) = self.grab.take() {
            if self.sim.cursor().is_some() {
                self.sim.set_cursor(None)?;
            }
            if g.held {
                let dt = StepSettings::default().frame_dt as f32;
                let v = (g.target - g.last) / dt;
                self.sim.set_particle(g.index, g.target.to_array().map(f64::from), v.to_array().map(f64::from), g.was_pinned)?;
            }
        }
        Ok(())
    }

    /// Pins or unpins particle `i` where it is.
    pub fn toggle_pin(&mut self, i: usize, at: Vec3) -> Result<()> {
        let pinned = !self.sim.is_pinned(i);
        self.sim.set_particle(i, at.to_array().map(f64::from), [0.0; 3], pinned)?;
        self.pin_overrides.insert(i, pinned);
        self.renderer.set_pins(&self.device, &self.sim, self.model.n_particles());
        Ok(())
    }
}
