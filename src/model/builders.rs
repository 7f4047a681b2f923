//! Model builders: Liu et al.'s curtain, the lecture's cloth grid, strands, the massive spring,
//! a volumetric lattice and triangle meshes (with OBJ import).

use super::{Collider, Forces, Model, SelfCollision};
use crate::error::{Bound, Error, Result};
use std::path::Path;

/// Stiffness of Liu et al.'s 81×81 curtain (N/m).
pub const CURTAIN_K: f64 = 1000.0;

/// The stiffness that keeps the curtain's material when it is built at `n`×`n` instead of 81×81:
/// k scales with (n−1)/80 (Liu et al. §5: halve the spring length, double the stiffness).
pub fn curtain_stiffness(n: usize) -> f64 {
    CURTAIN_K * (n.max(2) - 1) as f64 / 80.0
}

fn check_size(name: &str, n: usize, min: usize) -> Result<()> {
    if n < min {
        return Err(Error::invalid(name, n, Bound::min_count(min as u64)));
    }
    if n > 4096 {
        return Err(Error::invalid(name, n, Bound::at_most(4096)));
    }
    Ok(())
}

/// Refuses an n×n grid whose model (n² particles, `springs_per_particle`·n² springs, 2n² triangles)
/// would not fit in the memory the machine has free ([`crate::memory`]), before allocating it.
fn check_grid_memory(name: &str, n: usize, springs_per_particle: u64) -> Result<()> {
    let p = (n * n) as u64;
    let bytes = crate::memory::model_bytes(p, springs_per_particle * p, 2 * p);
    crate::memory::check(&format!("the {n}x{n} {name} model"), bytes)
}

fn check_k(k: f64) -> Result<()> {
    if !k.is_finite() || k < 0.0 {
        return Err(Error::invalid("stiffness", k, Bound::NonNegative));
    }
    Ok(())
}

/// A flat n×n grid, 1 m × 1 m, 1 kg in all, in the x-z plane at y = 0, with the two corners of its first
/// row pinned, and its drawing triangles. Springs are added by the caller.
fn grid(n: usize) -> Model {
    let mut m = Model::new(Forces::default());
    let mass = 1.0 / (n * n) as f64;
    let step = 1.0 / (n - 1) as f64;
    for r in 0..n {
        for c in 0..n {
            m.add_particle([c as f64 * step - 0.5, 0.0, r as f64 * step], mass);
        }
    }
    for r in 0..n - 1 {
        for c in 0..n - 1 {
            let i = (r * n + c) as u32;
            let n32 = n as u32;
            m.triangles.push([i, i + 1, i + n32 + 1]);
            m.triangles.push([i, i + n32 + 1, i + n32]);
        }
    }
    m.pin(0);
    m.pin(n - 1);
    m
}

/// Structural and skip-one bend springs of an n×n grid (rows and columns).
fn grid_structural_and_bend(m: &mut Model, n: usize, k: f64) {
    let id = |r: usize, c: usize| (r * n + c) as u32;
    for r in 0..n {
        for c in 0..n {
            if c + 1 < n {
                m.add_spring(id(r, c), id(r, c + 1), k, 0.0);
            }
            if r + 1 < n {
                m.add_spring(id(r, c), id(r + 1, c), k, 0.0);
            }
        }
    }
    for r in 0..n {
        for c in 0..n {
            if c + 2 < n {
                m.add_spring(id(r, c), id(r, c + 2), k, 0.0);
            }
            if r + 2 < n {
                m.add_spring(id(r, c), id(r + 2, c), k, 0.0);
            }
        }
    }
}

/// Liu et al. 2013's curtain (§5, Table 1): n×n particles (81 in the paper), 1 m × 1 m, 1 kg in all;
/// structural springs, one diagonal per quad and bend springs that skip one particle along rows and
/// columns (81×81: 6561 particles, 32158 springs); every spring k (default [`curtain_stiffness`]);
/// gravity 9.81 m/s² along −y; flat and horizontal in the x-z plane, the two corners of its first row pinned.
pub fn curtain(n: usize, k: Option<f64>) -> Result<Model> {
    check_size("size", n, 3)?;
    let k = k.unwrap_or_else(|| curtain_stiffness(n));
    check_k(k)?;
    check_grid_memory("curtain", n, 5)?;
    let mut m = grid(n);
    // the springs' exact count, reserved once: a growing Vec would hold up to twice it while it moves
    m.springs.reserve_exact(5 * n * n - 8 * n + 1);
    grid_structural_and_bend(&mut m, n, k);
    let id = |r: usize, c: usize| (r * n + c) as u32;
    for r in 0..n - 1 {
        for c in 0..n - 1 {
            m.add_spring(id(r, c), id(r + 1, c + 1), k, 0.0);
        }
    }
    Ok(m)
}

/// The lecture slides' cloth: structural springs, both shear diagonals and flexion (bend) springs that
/// skip one particle; otherwise as [`curtain`].
pub fn cloth(n: usize, k: Option<f64>) -> Result<Model> {
    check_size("size", n, 3)?;
    let k = k.unwrap_or_else(|| curtain_stiffness(n));
    check_k(k)?;
    check_grid_memory("cloth", n, 6)?;
    let mut m = grid(n);
    // the springs' exact count, reserved once: a growing Vec would hold up to twice it while it moves
    m.springs.reserve_exact(6 * n * n - 10 * n + 2);
    grid_structural_and_bend(&mut m, n, k);
    let id = |r: usize, c: usize| (r * n + c) as u32;
    for r in 0..n - 1 {
        for c in 0..n - 1 {
            m.add_spring(id(r, c), id(r + 1, c + 1), k, 0.0);
            m.add_spring(id(r, c + 1), id(r + 1, c), k, 0.0);
        }
    }
    Ok(m)
}

/// One strand of `n` particles from `start` along `dir` (unit), `length` long, `mass` in all, with
/// edge springs and skip-one bend springs (the slides' hair: "springs between the non-immediate
/// neighbours"), its first particle pinned.
#[allow(clippy::too_many_arguments)] // the strand's geometry and material, each named at the call
fn strand(m: &mut Model, n: usize, start: [f64; 3], dir: [f64; 3], length: f64, mass: f64, k: f64, kb: f64) {
    let first = m.n_particles() as u32;
    let step = length / (n - 1) as f64;
    for i in 0..n {
        let t = i as f64 * step;
        m.add_particle([start[0] + dir[0] * t, start[1] + dir[1] * t, start[2] + dir[2] * t], mass / n as f64);
    }
    for i in 0..n as u32 - 1 {
        m.add_spring(first + i, first + i + 1, k, 0.0);
    }
    for i in 0..(n as u32).saturating_sub(2) {
        m.add_spring(first + i, first + i + 2, kb, 0.0);
    }
    m.pin(first as usize);
}

/// A rope: `n` particles, 1 m long, 0.1 kg, horizontal along +x from a pinned end, with edge springs
/// (k, default 50·(n−1) N/m so that the rope's material does not change with n) and skip-one bend
/// springs (k/10).
pub fn rope(n: usize, k: Option<f64>) -> Result<Model> {
    check_size("size", n, 3)?;
    let k = k.unwrap_or(50.0 * (n - 1) as f64);
    check_k(k)?;
    let mut m = Model::new(Forces::default());
    strand(&mut m, n, [-0.5, 0.0, 0.0], [1.0, 0.0, 0.0], 1.0, 0.1, k, k / 10.0);
    Ok(m)
}

/// Hair: 16 strands of `n` particles, 0.3 m long and 2 g each, rooted on an arc and pointing outward
/// and up, roots pinned; edge springs k (default 20·(n−1)) and skip-one bend springs k/4.
pub fn hair(n: usize, k: Option<f64>) -> Result<Model> {
    check_size("size", n, 3)?;
    let k = k.unwrap_or(20.0 * (n - 1) as f64);
    check_k(k)?;
    let mut m = Model::new(Forces::default());
    let strands = 16;
    for s in 0..strands {
        let a = std::f64::consts::PI * (s as f64 + 0.5) / strands as f64;
        let root = [0.1 * a.cos(), 0.1 * a.sin(), 0.0];
        let d = [a.cos() * 0.8, 0.6, 0.0];
        let len = (d[0] * d[0] + d[1] * d[1]).sqrt();
        let d = [d[0] / len, d[1] / len, 0.0]; // strand() needs a unit direction
        strand(&mut m, n, root, d, 0.3, 0.002, k, k / 4.0);
    }
    Ok(m)
}

/// The massive spring of the Witkin/Baraff/Kass notes (§2): a spring of stiffness `k`, mass `mass` and
/// natural length `length` modelled as `n` small springs in series with k_i = n·k and particle masses
/// m/(n+1). It hangs along −y from its pinned top particle.
pub fn slinky(n: usize, k: f64, mass: f64, length: f64) -> Result<Model> {
    check_size("size", n, 1)?;
    check_k(k)?;
    if !(mass.is_finite() && mass > 0.0) {
        return Err(Error::invalid("mass", mass, Bound::Positive));
    }
    if !(length.is_finite() && length >= 0.0) {
        return Err(Error::invalid("length", length, Bound::NonNegative));
    }
    let mut m = Model::new(Forces::default());
    let mi = mass / (n + 1) as f64;
    let seg = length / n as f64;
    for i in 0..=n {
        m.add_particle([0.0, -(i as f64) * seg, 0.0], mi);
    }
    for i in 0..n as u32 {
        m.add_spring(i, i + 1, n as f64 * k, 0.0);
    }
    m.pin(0);
    Ok(m)
}

/// A jelly cube: an n×n×n lattice, 0.3 m on a side, 1 kg, with edge, face-diagonal and body-diagonal
/// springs (k, default 400·(n−1)/10), starting 0.5 m above the origin, free.
pub fn jelly(n: usize, k: Option<f64>) -> Result<Model> {
    check_size("size", n, 2)?;
    if n > 128 {
        return Err(Error::invalid("size", n, Bound::at_most(128).worded("must be at most {} for a lattice")));
    }
    let k = k.unwrap_or(400.0 * (n - 1) as f64 / 10.0);
    check_k(k)?;
    let mut m = Model::new(Forces::default());
    let side = 0.3;
    let step = side / (n - 1) as f64;
    let mass = 1.0 / (n * n * n) as f64;
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                m.add_particle([x as f64 * step - side / 2.0, 0.5 + y as f64 * step, z as f64 * step - side / 2.0], mass);
            }
        }
    }
    let id = |x: usize, y: usize, z: usize| ((z * n + y) * n + x) as u32;
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                // Every neighbour offset in {0,1}³ \ {0} (edges, face and body diagonals) plus the
                // two mirrored face diagonals and three mirrored body diagonals per cell.
                for (dx, dy, dz) in [
                    (1i64, 0i64, 0i64),
                    (0, 1, 0),
                    (0, 0, 1),
                    (1, 1, 0),
                    (1, -1, 0),
                    (1, 0, 1),
                    (1, 0, -1),
                    (0, 1, 1),
                    (0, 1, -1),
                    (1, 1, 1),
                    (1, 1, -1),
                    (1, -1, 1),
                    (1, -1, -1),
                ] {
                    let (x2, y2, z2) = (x as i64 + dx, y as i64 + dy, z as i64 + dz);
                    let r = 0..n as i64;
                    if r.contains(&x2) && r.contains(&y2) && r.contains(&z2) {
                        m.add_spring(id(x, y, z), id(x2 as usize, y2 as usize, z2 as usize), k, 0.0);
                    }
                }
            }
        }
    }
    Ok(m)
}

/// A triangle mesh as a mass-spring model (Kauppila §1.1): one spring per edge, and one bending spring
/// across every interior edge, between the two vertices opposite it. `mass` is spread evenly.
pub fn triangle_mesh(positions: Vec<[f64; 3]>, triangles: Vec<[u32; 3]>, mass: f64, k: f64, k_bend: f64) -> Result<Model> {
    check_k(k)?;
    check_k(k_bend)?;
    if positions.is_empty() {
        return Err(Error::invalid("mesh.positions", 0usize, Bound::min_count(1).worded("the mesh has no vertices")));
    }
    if !(mass.is_finite() && mass > 0.0) {
        return Err(Error::invalid("mass", mass, Bound::Positive));
    }
    let n = positions.len();
    let mut m = Model::new(Forces::default());
    for p in positions {
        m.add_particle(p, mass / n as f64);
    }
    for (t, tri) in triangles.iter().enumerate() {
        for &v in tri {
            if v as usize >= n {
                return Err(Error::model(format!("triangles[{t}]"), v, Bound::Index { len: n as u64, rule: "vertex out of range" }));
            }
        }
    }
    let edges = super::edges::mesh_edges(&triangles);
    for e in &edges {
        m.add_spring(e.key.0, e.key.1, k, 0.0);
    }
    // A bending spring across each interior edge, between the vertices opposite it; on closed meshes
    // those can already share an edge (a tetrahedron) or another bending spring: no duplicate springs.
    let keys: std::collections::HashSet<(u32, u32)> = edges.iter().map(|e| e.key).collect();
    let mut bends = std::collections::HashSet::new();
    for e in &edges {
        if let [(_, o0), (_, o1)] = e.sides[..] {
            let pair = (o0.min(o1), o0.max(o1));
            if o0 != o1 && !keys.contains(&pair) && bends.insert(pair) {
                m.add_spring(o0, o1, k_bend, 0.0);
            }
        }
    }
    m.triangles = triangles;
    Ok(m)
}

/// Loads an OBJ file with tobj as one triangle mesh (all its objects merged), without tobj's
/// single-index option, which would split vertices at texture seams and tear the cloth apart.
pub fn load_obj(path: &Path, mass: f64, k: f64, k_bend: f64) -> Result<Model> {
    let opts = tobj::LoadOptions { triangulate: true, single_index: false, ..Default::default() };
    let (models, _) = tobj::load_obj(path, &opts).map_err(|e| Error::Mesh { path: path.display().to_string(), reason: e.to_string() })?;
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for model in &models {
        let base = positions.len() as u32;
        let mesh = &model.mesh;
        for p in mesh.positions.chunks_exact(3) {
            positions.push([p[0] as f64, p[1] as f64, p[2] as f64]);
        }
        for t in mesh.indices.chunks_exact(3) {
            triangles.push([base + t[0], base + t[1], base + t[2]]);
        }
    }
    if positions.is_empty() {
        return Err(Error::Mesh { path: path.display().to_string(), reason: "no vertices".into() });
    }
    triangle_mesh(positions, triangles, mass, k, k_bend)
}

/// The radius (m) of [`drape_sphere`]'s sphere.
pub const DRAPE_SPHERE_RADIUS: f64 = 0.35;
/// The skin thickness (m) of [`drape_sphere`]'s sphere.
pub const DRAPE_SPHERE_THICKNESS: f64 = 0.01;

/// A cloth dropped on a sphere: the [`curtain`] (n×n, 1 m × 1 m, stiffness `k` or
/// [`curtain_stiffness`]), free (no pins), flat and centred 5 cm above a sphere of radius
/// [`DRAPE_SPHERE_RADIUS`] at the origin with skin [`DRAPE_SPHERE_THICKNESS`] and friction μ = 0.5;
/// air drag d₀ = 0.5/s. It falls onto the sphere and folds down around it.
pub fn drape_sphere(n: usize, k: Option<f64>) -> Result<Model> {
    let mut m = curtain(n, k)?;
    let y = DRAPE_SPHERE_RADIUS + DRAPE_SPHERE_THICKNESS + 0.05;
    for p in m.positions.iter_mut() {
        *p = [p[0], y, p[2] - 0.5];
    }
    for pin in m.pinned.iter_mut() {
        *pin = false;
    }
    m.forces.drag = 0.5;
    m.colliders.push(super::Collider::sphere([0.0; 3], DRAPE_SPHERE_RADIUS, DRAPE_SPHERE_THICKNESS, 0.5));
    Ok(m)
}

/// The folds: Liu et al.'s cloth (as [`curtain`], 1 m × 1 m, 1 kg, unpinned) laid in a zig-zag of four
/// horizontal layers joined by three vertical folds of one row spacing s = 1/(n − 1) each (the layers
/// (1 − 3s)/4 long, s apart, the lowest 0.03 m up), over the ground plane y ≥ 0 (Coulomb friction 0.8),
/// with air drag d₀ = 1.5/s and self-collision of thickness s (cell s, two passes a step). It drops onto
/// the ground and its layers settle onto each other, kept s apart; without self-collision they fall
/// through each other onto the ground. Springs keep the flat cloth's rest lengths (the folds are
/// slightly compressed).
pub fn folds(n: usize, k: Option<f64>) -> Result<Model> {
    let mut m = curtain(n, k)?;
    let s = 1.0 / (n - 1) as f64;
    let (a, g, y0) = ((1.0 - 3.0 * s) / 4.0, s, 0.03);
    for (i, p) in m.positions.iter_mut().enumerate() {
        let u = (i / n) as f64 * s;
        // the zig-zag by arc length: layer, fold, layer, …
        let (mut y, mut z, mut left) = (y0, 0.0, u);
        for layer in 0..4 {
            let dir = if layer % 2 == 0 { 1.0 } else { -1.0 };
            let along = left.min(a);
            z += dir * along;
            left -= along;
            if left <= 0.0 || layer == 3 {
                break;
            }
            let up = left.min(g);
            y += up;
            left -= up;
            if left <= 0.0 {
                break;
            }
        }
        *p = [p[0], y, z - a / 2.0];
    }
    for pin in m.pinned.iter_mut() {
        *pin = false;
    }
    m.forces.drag = 1.5;
    m.colliders.push(Collider::ground(0.0, 0.8));
    m.self_collision = Some(SelfCollision { thickness: s, cell: None, passes: 2 });
    Ok(m)
}
