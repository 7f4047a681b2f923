//! An orbit camera: yaw and pitch about a target, a distance, pan and zoom, and framing of a box.

use glam::{Mat4, Vec3};

/// The share of the viewport's half-width and half-height that [`Camera::fit`] fills.
pub const FIT_FILL: f32 = 0.96;

/// An orbit camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// The point looked at.
    pub target: Vec3,
    /// Angle about +y (rad).
    pub yaw: f32,
    /// Elevation (rad), in (−π/2, π/2).
    pub pitch: f32,
    /// Distance from the target (m).
    pub distance: f32,
    /// Vertical field of view (rad).
    pub fov_y: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Camera { target: Vec3::ZERO, yaw: 0.45, pitch: 0.3, distance: 3.0, fov_y: 45f32.to_radians() }
    }
}

impl Camera {
    /// The eye position.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + self.distance * Vec3::new(cp * sy, sp, cp * cy)
    }

    /// View and projection for an aspect ratio (width / height).
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        let near = (self.distance * 0.01).max(1e-3);
        let far = self.distance * 100.0 + 10.0;
        Mat4::perspective_rh(self.fov_y, aspect.max(1e-3), near, far) * Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }

    /// Orbits by a mouse movement of (dx, dy) pixels.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(-1.5, 1.5);
    }

    /// Pans by (dx, dy) pixels in a viewport `height` pixels tall.
    pub fn pan(&mut self, dx: f32, dy: f32, height: f32) {
        let fwd = (self.target - self.eye()).normalize();
        let right = fwd.cross(Vec3::Y).normalize_or_zero();
        let up = right.cross(fwd);
        let per_px = 2.0 * self.distance * (self.fov_y * 0.5).tan() / height.max(1.0);
        self.target += (-dx * right + dy * up) * per_px;
    }

    /// Zooms by wheel `steps` (positive: closer).
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * 0.9f32.powf(steps)).clamp(0.02, 1.0e4);
    }

    /// Looks at `target` from `eye` (a scene file's camera); an eye straight above or below the target
    /// is tilted to the pitch limit.
    pub fn look(&mut self, eye: Vec3, target: Vec3) {
        let d = eye - target;
        self.target = target;
        self.distance = d.length().clamp(0.02, 1.0e4);
        self.pitch = (d.y / d.length().max(1e-6)).clamp(-1.0, 1.0).asin().clamp(-1.5, 1.5);
        self.yaw = d.x.atan2(d.z);
    }

    /// Looks at the box [lo, hi] from the current direction, fitting it in view.
    pub fn frame(&mut self, lo: Vec3, hi: Vec3) {
        self.target = (lo + hi) * 0.5;
        let radius = ((hi - lo).length() * 0.5).max(0.05);
        self.distance = radius / (self.fov_y * 0.5).tan() * 0.95;
    }

    /// Looks at `points` from the current direction (yaw and pitch kept) as close as the viewport of
    /// `aspect` (width / height) allows with every point in view, [`FIT_FILL`] of the way to its
    /// edges: the distance is the smallest one that keeps each point inside both half-angles
    /// (`|x| ≤ tan(fov/2)·depth` across and up), then the target is moved to centre the points'
    /// on-screen extent (a few rounds: perspective shifts it as the target moves).
    pub fn fit(&mut self, points: &[Vec3], aspect: f32) {
        if points.is_empty() || points.iter().any(|p| !p.is_finite()) {
            return;
        }
        let (lo, hi) = points.iter().fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(l, h), p| (l.min(*p), h.max(*p)));
        self.target = (lo + hi) * 0.5;
        let ty = (self.fov_y * 0.5).tan() * FIT_FILL;
        let tx = ty * aspect.max(1e-3);
        let size = ((hi - lo).length() * 0.5).max(0.05);
        for _ in 0..4 {
            let fwd = (self.target - self.eye()).normalize();
            let right = fwd.cross(Vec3::Y).normalize_or(Vec3::X);
            let up = right.cross(fwd);
            let local: Vec<Vec3> =
                points.iter().map(|p| *p - self.target).map(|o| Vec3::new(o.dot(right), o.dot(up), o.dot(fwd))).collect();
            // depth of a point = distance + z; it must see |x| within tx·depth and |y| within ty·depth
            let d = local.iter().map(|o| (o.x.abs() / tx).max(o.y.abs() / ty) - o.z).fold(0.0f32, f32::max);
            let nearest = local.iter().map(|o| -o.z).fold(f32::NEG_INFINITY, f32::max);
            self.distance = d.max(nearest + 0.05 * size).clamp(0.02, 1.0e4);
            // centre the on-screen extent (in units of the half-angles' tangents)
            let (mut sx, mut sy) = ((f32::INFINITY, f32::NEG_INFINITY), (f32::INFINITY, f32::NEG_INFINITY));
            for o in &local {
                let depth = (self.distance + o.z).max(1e-6);
                sx = (sx.0.min(o.x / depth), sx.1.max(o.x / depth));
                sy = (sy.0.min(o.y / depth), sy.1.max(o.y / depth));
            }
            let shift = right * (0.5 * (sx.0 + sx.1) * self.distance) + up * (0.5 * (sy.0 + sy.1) * self.distance);
            self.target += shift;
        }
    }

    /// The world-space ray through pixel (px, py) of a `w`×`h` viewport: (origin, unit direction).
    pub fn ray(&self, px: f32, py: f32, w: f32, h: f32) -> (Vec3, Vec3) {
        let inv = self.view_proj(w / h).inverse();
        let ndc_x = 2.0 * px / w - 1.0;
        let ndc_y = 1.0 - 2.0 * py / h;
        let a = inv.project_point3(Vec3::new(ndc_x, ndc_y, 0.0));
        let b = inv.project_point3(Vec3::new(ndc_x, ndc_y, 1.0));
        (a, (b - a).normalize())
    }

    /// Pixel coordinates of a world point in a `w`×`h` viewport, or `None` behind the eye.
    pub fn project(&self, p: Vec3, w: f32, h: f32) -> Option<(f32, f32)> {
        let c = self.view_proj(w / h) * p.extend(1.0);
        if c.w <= 1e-6 {
            return None;
        }
        Some(((c.x / c.w * 0.5 + 0.5) * w, (0.5 - c.y / c.w * 0.5) * h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_puts_the_eye_there() {
        let mut c = Camera::default();
        let (eye, target) = (Vec3::new(1.0, 2.0, 3.0), Vec3::new(0.5, -0.5, 0.0));
        c.look(eye, target);
        assert!((c.eye() - eye).length() < 1e-5, "{:?}", c.eye());
        assert_eq!(c.target, target);
    }

    #[test]
    fn fit_keeps_every_point_in_view_and_fills_it() {
        let mut c = Camera::default();
        let pts = [Vec3::new(-0.5, -1.5, -1.0), Vec3::new(0.5, 0.0, 1.0), Vec3::new(0.5, -1.5, 1.0), Vec3::new(-0.5, 0.0, -1.0)];
        let (w, h) = (960.0, 720.0);
        c.fit(&pts, w / h);
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for p in pts {
            let (x, y) = c.project(p, w, h).unwrap();
            assert!((0.0..=w).contains(&x) && (0.0..=h).contains(&y), "{p} at ({x}, {y})");
            lo = lo.min(Vec3::new(x, y, 0.0));
            hi = hi.max(Vec3::new(x, y, 0.0));
        }
        // one pair of edges is nearly touched, and the extent is centred
        let fill = ((hi.x - lo.x) / w).max((hi.y - lo.y) / h);
        assert!(fill > 0.9, "fills {fill}");
        assert!(((lo.x + hi.x) * 0.5 - w * 0.5).abs() < 0.02 * w && ((lo.y + hi.y) * 0.5 - h * 0.5).abs() < 0.02 * h, "{lo} {hi}");
    }

    #[test]
    fn ray_hits_what_project_shows() {
        let mut c = Camera::default();
        c.frame(Vec3::new(-0.5, -1.0, 0.0), Vec3::new(0.5, 0.0, 1.0));
        let p = Vec3::new(0.2, -0.3, 0.4);
        let (px, py) = c.project(p, 800.0, 600.0).unwrap();
        let (o, d) = c.ray(px, py, 800.0, 600.0);
        let t = (p - o).dot(d);
        assert!((o + t * d - p).length() < 1e-3);
    }
}
