//! Where the demo looks first: a bound on the region a scene moves through under its forces (its rest
//! shape and where gravity, wind and the colliders take it), the camera fitted to that region, and the
//! ground the window draws (a scene's half-space, or a reference floor under the region).
//!
//! The region ([`motion_bounds`]) is the bounding box of these points:
//!
//! 1. **The rest shape**, every particle where it starts.
//! 2. **Hanging from the pins.** A particle joined to a pin by a path of springs of total rest length
//!    `L` is never further than `L·(1 + ε)` from that pin, where ε bounds the mean strain along the
//!    path (the triangle inequality: the path's springs are now `Σ Lₖ(1 + εₖ)` long). So it lies in
//!    the ball of that radius about its nearest pin (shortest spring path, Dijkstra over rest
//!    lengths), and also in the intersection of the balls about the two outermost pins: its lowest
//!    point is the lowest point of the smaller of the two regions. That bound is sound as long as
//!    no path stretches by more than ε on average ([`STRAIN_ALLOWANCE`], 5%: the curtain hangs 1%
//!    longer than at rest, its largest strain, 30% on the springs at the corner pins, is local). With
//!    wind, the point furthest along `g + d₀·w` is added the same way (a particle at rest
//!    accelerates that way, so that is where the cloth streams out, as the flag does).
//! 3. **Free bodies** (particles with no spring path to a pin) fall along gravity until stopped: onto
//!    a half-space facing up (each particle projected onto it), else to the lowest point of the other
//!    colliders (sphere, capsule, box, by their bounding spheres: the body drapes over them and
//!    slides off no lower), else for [`FREE_FALL_TIME`] of free fall.
//!
//! Every point is finally kept on the upper side of each half-space facing up (the ground stops the
//! hanging too). This is where the scene starts and where its forces take it, not every point of
//! the way there: a body released to one side of its pins (the curtain) swings through them and
//! out the other side as far as it started (on the curtain, to z = −1 and briefly 19 cm above its
//! pins). Bounding that swing as well (the rest shape mirrored through the pins) doubles the box's
//! depth and, in a 45° perspective, leaves the cloth a tenth of the frame; instead the camera looks
//! from the pins' side ([`hinge_yaw`]), so the swing comes towards the viewer, larger, and may
//! graze the frame's edges at its height. Item 3 is a falling body's bound, not a proof for every
//! motion (a cloth thrown by the mouse leaves it); `F` re-frames on the current positions.

use super::camera::Camera;
use crate::model::{Collider, Model};
use glam::{DVec3, Vec3};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The mean strain ε the region allows along a spring path (5%): a particle hangs at most `(1 + ε)`
/// times its spring-path distance from a pin.
pub const STRAIN_ALLOWANCE: f64 = 0.05;

/// How long a free body with nothing under it is followed in free fall (s): the demo's first second.
pub const FREE_FALL_TIME: f64 = 1.0;

/// The shortest spring path from each particle to a pinned particle, by rest lengths: `(length,
/// the pin)`, or `(∞, usize::MAX)` for a particle with no path to any pin. A pinned particle is its
/// own nearest pin at distance 0.
pub fn pin_distances(m: &Model) -> Vec<(f64, usize)> {
    let pins: Vec<usize> = (0..m.n_particles()).filter(|&i| m.pinned[i]).collect();
    path_distances(m, &pins)
}

/// The shortest spring path (by rest lengths) from each particle to the nearest of `sources`, and
/// which: Dijkstra from all of them at once.
pub fn path_distances(m: &Model, sources: &[usize]) -> Vec<(f64, usize)> {
    let n = m.n_particles();
    let inc = m.incidence();
    let mut best = vec![(f64::INFINITY, usize::MAX); n];
    // (the distance's bits: rest lengths are ≥ 0 and finite, validated, so they order as the f64s)
    let mut heap = BinaryHeap::new();
    for &i in sources.iter().filter(|&&i| i < n) {
        best[i] = (0.0, i);
        heap.push(Reverse((0u64, i)));
    }
    while let Some(Reverse((at, i))) = heap.pop() {
        let (d, pin) = best[i];
        if at != key(d) {
            continue; // a stale entry: i was reached by a shorter path since
        }
        for &e in &inc.entries[inc.offsets[i] as usize..inc.offsets[i + 1] as usize] {
            let s = &m.springs[(e >> 1) as usize];
            if s.rest <= 0.0 {
                continue; // a zero-rest-length spring (a bending term) is a force, not a reach
            }
            let j = if s.a as usize == i { s.b as usize } else { s.a as usize };
            let dj = d + s.rest;
            if dj < best[j].0 {
                best[j] = (dj, pin);
                heap.push(Reverse((key(dj), j)));
            }
        }
    }
    best
}

/// An order-preserving key for a non-negative finite f64.
fn key(d: f64) -> u64 {
    d.max(0.0).to_bits()
}

fn v(p: &[f64; 3]) -> DVec3 {
    DVec3::from_array(*p)
}

/// The half-spaces that face up against gravity `down` (unit normal n, offset d of n·x ≥ d).
fn grounds(m: &Model, down: DVec3) -> Vec<(DVec3, f64)> {
    m.colliders
        .iter()
        .filter_map(|c| match c.normalized() {
            Collider::HalfSpace { normal, offset, .. } if v(&normal).dot(down) < -1e-6 => Some((v(&normal), offset)),
            _ => None,
        })
        .collect()
}

/// Moves `p` up along −`down` onto each ground it is below.
fn above_grounds(mut p: DVec3, down: DVec3, grounds: &[(DVec3, f64)]) -> DVec3 {
    for &(n, d) in grounds {
        let phi = n.dot(p) - d;
        if phi < 0.0 {
            p -= down * (phi / n.dot(down));
        }
    }
    p
}

/// How far down (along `down`) the colliders other than half-spaces reach: the largest `down·x` over
/// their bounding spheres; `None` without any.
fn collider_bottom(m: &Model, down: DVec3) -> Option<f64> {
    m.colliders
        .iter()
        .filter_map(|c| match c.normalized() {
            Collider::HalfSpace { .. } => None,
            Collider::Sphere { center, radius, thickness, .. } => Some(v(&center).dot(down) + radius + thickness),
            Collider::Capsule { a, b, radius, thickness, .. } => Some(v(&a).dot(down).max(v(&b).dot(down)) + radius + thickness),
            Collider::Box { center, half_extents, thickness, .. } => Some(v(&center).dot(down) + v(&half_extents).length() + thickness),
        })
        .reduce(f64::max)
}

/// The point of the intersection of the balls (a, ra) and (b, rb) furthest along the unit `dir`;
/// `None` when they do not meet or a radius is infinite.
fn deepest(a: DVec3, ra: f64, b: DVec3, rb: f64, dir: DVec3) -> Option<DVec3> {
    if !(ra.is_finite() && rb.is_finite()) {
        return None;
    }
    let (pa, pb) = (a + dir * ra, b + dir * rb);
    if (pa - b).length() <= rb {
        return Some(pa);
    }
    if (pb - a).length() <= ra {
        return Some(pb);
    }
    // on the circle where the spheres meet
    let d = (b - a).length();
    if d == 0.0 {
        return None;
    }
    let u = (b - a) / d;
    let t = (d * d + ra * ra - rb * rb) / (2.0 * d);
    let rc2 = ra * ra - t * t;
    if rc2 < 0.0 {
        return None;
    }
    let w = dir - u * dir.dot(u);
    Some(a + u * t + w.normalize_or_zero() * rc2.sqrt())
}

/// The points whose bounding box is the region the model moves through (see the module's doc).
pub fn motion_points(m: &Model) -> Vec<DVec3> {
    let x: Vec<DVec3> = m.positions.iter().map(v).collect();
    let mut pts = x.clone();
    let g = v(&m.forces.gravity);
    if g.length() == 0.0 || x.is_empty() {
        return pts;
    }
    let down = g.normalize();
    let ground = grounds(m, down);
    let wind = v(&m.forces.wind) * m.forces.drag;
    let mut dirs = vec![down];
    if wind.length() > 0.0 {
        dirs.push((g + wind).normalize_or(down));
    }
    let reach = pin_distances(m);
    // the two pins furthest apart along the line from the first pin to the last, each on its own
    let pin_list: Vec<usize> = (0..x.len()).filter(|&i| m.pinned[i]).collect();
    let pair = match (pin_list.first(), pin_list.last()) {
        (Some(&f), Some(&l)) if f != l => {
            let axis = x[l] - x[f];
            let along = |i: &&usize| x[**i].dot(axis);
            let a = *pin_list.iter().min_by(|i, j| along(i).total_cmp(&along(j))).unwrap_or(&f);
            let b = *pin_list.iter().max_by(|i, j| along(i).total_cmp(&along(j))).unwrap_or(&l);
            Some((a, path_distances(m, &[a]), b, path_distances(m, &[b])))
        }
        _ => None,
    };
    let stretch = 1.0 + STRAIN_ALLOWANCE;
    for (i, &(d, pin)) in reach.iter().enumerate() {
        if !m.pinned[i] && d.is_finite() {
            for &dir in &dirs {
                let mut p = x[pin] + dir * d * stretch;
                if let Some((a, da, b, db)) = &pair {
                    let (ra, rb) = (da[i].0 * stretch, db[i].0 * stretch);
                    if let Some(q) = deepest(x[*a], ra, x[*b], rb, dir).filter(|q| q.dot(dir) < p.dot(dir)) {
                        p = q;
                    }
                }
                pts.push(p);
            }
        }
    }
    let free: Vec<DVec3> = reach.iter().zip(&x).filter(|((d, _), _)| d.is_infinite()).map(|(_, p)| *p).collect();
    if !free.is_empty() && ground.is_empty() {
        let fall = match collider_bottom(m, down) {
            Some(bottom) => free.iter().map(|p| bottom - p.dot(down)).fold(0.0, f64::max),
            None => 0.5 * g.length() * FREE_FALL_TIME * FREE_FALL_TIME,
        };
        pts.extend(free.iter().map(|p| *p + down * fall));
    } else {
        // onto the ground (moved up onto it below)
        pts.extend(free.iter().map(|p| *p + down * 1.0e6));
    }
    pts.iter().map(|p| above_grounds(*p, down, &ground)).collect()
}

/// The axis-aligned box of [`motion_points`] (f32, for the camera).
pub fn motion_bounds(m: &Model) -> (Vec3, Vec3) {
    bounds(motion_points(m).iter().map(|p| p.as_vec3()))
}

/// The axis-aligned box of some points.
pub fn bounds(points: impl IntoIterator<Item = Vec3>) -> (Vec3, Vec3) {
    points.into_iter().fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(lo, hi), p| (lo.min(p), hi.max(p)))
}

/// The eight corners of a box.
pub fn corners(lo: Vec3, hi: Vec3) -> [Vec3; 8] {
    std::array::from_fn(|k| {
        Vec3::new(if k & 1 == 0 { lo.x } else { hi.x }, if k & 2 == 0 { lo.y } else { hi.y }, if k & 4 == 0 { lo.z } else { hi.z })
    })
}

/// The side the camera looks from, for a body hung from a line of pins to one side of it (the
/// curtain, the jelly): `Some(yaw)` on the pins' side, [`HINGE_YAW_OFFSET`] off the line through
/// the pins' and the body's centres. Such a body swings about that line through the pins and back,
/// a sheet through every angle: from the pins' side its first swing comes towards the viewer and it
/// hangs face-on, where the default view (from the body's side, or along the hinge) would see the
/// swing's far half nearly edge-on. `None` (keep the camera's yaw) for bodies hung from a point or
/// a vertical line (a rope, the flag: the default view is across their swing), or centred over their
/// pins, or free.
pub fn hinge_yaw(m: &Model) -> Option<f32> {
    let horizontal = |p: DVec3| DVec3::new(p.x, 0.0, p.z);
    let pins: Vec<DVec3> = m.positions.iter().zip(&m.pinned).filter(|(_, p)| **p).map(|(x, _)| v(x)).collect();
    let (first, last) = (*pins.first()?, *pins.last()?);
    let n = m.n_particles() as f64;
    let body = m.positions.iter().map(v).sum::<DVec3>() / n;
    let centre = pins.iter().sum::<DVec3>() / pins.len() as f64;
    let (lo, hi) = m.bounds();
    let ext = (v(&hi) - v(&lo)).max_element();
    let axis = horizontal(last - first);
    let off = horizontal(body - centre);
    if axis.length() < 0.25 * ext || off.length() < 0.1 * ext || m.forces.wind.iter().any(|&w| w != 0.0) {
        return None;
    }
    let axis = axis.normalize();
    let side = -(off - axis * off.dot(axis)).normalize_or_zero();
    (side.length() > 0.0).then(|| side.x.atan2(side.z) as f32 + HINGE_YAW_OFFSET)
}

/// How far [`hinge_yaw`] turns off the line across the hinge (rad), for a three-quarter view.
pub const HINGE_YAW_OFFSET: f32 = 0.35;

/// Points the camera at the model's whole motion ([`motion_bounds`]), fitted to a viewport of
/// `aspect` (width / height): from [`hinge_yaw`]'s side where it gives one, else from the current
/// direction.
pub fn frame_motion(cam: &mut Camera, m: &Model, aspect: f32) {
    if let Some(yaw) = hinge_yaw(m) {
        cam.yaw = yaw;
    }
    let (lo, hi) = motion_bounds(m);
    if lo.is_finite() && hi.is_finite() {
        cam.fit(&corners(lo, hi), aspect);
    }
}

/// The ground the window draws: the plane n·x = d (unit n), a point on it under the middle of the
/// region, and the half-size of the drawn quad (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ground {
    /// The plane's unit normal (pointing to the free side).
    pub normal: Vec3,
    /// Its offset d (n·x = d).
    pub offset: f32,
    /// The quad's centre, on the plane.
    pub center: Vec3,
    /// The quad's half-size (m).
    pub half_size: f32,
    /// Whether it is a collider (else a reference floor at the region's bottom).
    pub collider: bool,
}

/// The scene's ground: its first half-space collider, or else a reference floor under the region
/// the model moves through (normal against gravity, or +y without gravity), a little below the
/// region's lowest point. The quad is centred under the region, twice its largest extent across
/// (at least 1 m), with 10 cm checks.
pub fn ground(m: &Model) -> Ground {
    let pts = motion_points(m);
    let (lo, hi) = bounds(pts.iter().map(|p| p.as_vec3()));
    let (lo, hi) = if lo.is_finite() && hi.is_finite() { (lo, hi) } else { (Vec3::ZERO, Vec3::ZERO) };
    let mid = (lo + hi) * 0.5;
    let ext = (hi - lo).max_element();
    let half_space = m.colliders.iter().find_map(|c| match c.normalized() {
        Collider::HalfSpace { normal, offset, .. } => Some((v(&normal).as_vec3(), offset as f32)),
        _ => None,
    });
    let (normal, offset, collider) = match half_space {
        Some((n, d)) => (n, d, true),
        None => {
            let g = v(&m.forces.gravity);
            let up = if g.length() > 0.0 { -g.normalize().as_vec3() } else { Vec3::Y };
            // the lowest point along −up, and a margin of 2% of the region (at least 1 cm)
            let low = pts.iter().map(|p| p.as_vec3().dot(up)).fold(f32::INFINITY, f32::min);
            let low = if low.is_finite() { low } else { 0.0 };
            (up, low - (0.02 * ext).max(0.01), false)
        }
    };
    let center = mid - normal * (normal.dot(mid) - offset);
    Ground { normal, offset, center, half_size: (2.0 * ext).max(1.0), collider }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curtain_region_holds_its_hanging_shape() {
        // 1 m curtain pinned at two corners of its edge z = 0, flat at y = 0: it hangs 1 m below its
        // pins (1.01 m measured, 81x81); the bound puts the bottom 5% (the strain allowance) plus
        // the spring paths' detour below that (one diagonal per quad: the path to the far edge's
        // middle is 1.21 m one way, 1.5 m the other, against 1.12 m straight)
        let m = crate::model::curtain(21, None).unwrap();
        let (lo, hi) = motion_bounds(&m);
        assert!(hi.y.abs() < 1e-6, "{hi:?}");
        assert!(lo.y < -1.05 && lo.y > -1.35, "{lo:?}");
        assert!(lo.z.abs() < 1e-3 && (hi.z - 1.0).abs() < 1e-3, "{lo:?} {hi:?}");
        assert!((lo.x + 0.5).abs() < 1e-3 && (hi.x - 0.5).abs() < 1e-3, "{lo:?} {hi:?}");
        // from the pins' side (−z), a little turned
        let yaw = hinge_yaw(&m).unwrap();
        let turn = (yaw - HINGE_YAW_OFFSET).rem_euclid(std::f32::consts::TAU);
        assert!((turn - std::f32::consts::PI).abs() < 1e-4, "{yaw}");
        let g = ground(&m);
        assert!(!g.collider && g.normal == Vec3::Y && g.offset < lo.y, "{g:?}");
    }

    #[test]
    fn pin_distances_follow_the_springs() {
        let m = crate::model::rope(11, None).unwrap();
        let d = pin_distances(&m);
        assert_eq!(d[0], (0.0, 0));
        assert!((d[10].0 - 1.0).abs() < 1e-9, "{:?}", d[10]);
    }

    #[test]
    fn a_free_body_stops_on_the_ground_or_the_colliders() {
        let m = crate::scene::build("drape-sphere", &crate::scene::SceneOptions { size: Some(11), ..Default::default() }).unwrap();
        let (lo, _) = motion_bounds(&m);
        let bottom = -(crate::model::DRAPE_SPHERE_RADIUS + crate::model::DRAPE_SPHERE_THICKNESS) as f32;
        assert!((lo.y - bottom).abs() < 1e-4, "{lo:?}");
        let m = crate::scene::build("drape", &crate::scene::SceneOptions { size: Some(11), ..Default::default() }).unwrap();
        let (lo, _) = motion_bounds(&m);
        assert!(lo.y.abs() < 1e-6, "the ground y = 0 holds the drape: {lo:?}");
        assert!(ground(&m).collider);
    }
}
