// Colliders (twin: reference::collide): after every step of every method, one thread per particle
// checks the state against every collider in order and pushes a particle that entered one back out:
// the position projected onto the surface (for the shapes with a skin t: to the signed distance φ = t)
// along the outward normal, the inward normal velocity removed (Δv_n), the tangential velocity reduced
// by μ·Δv_n, clamped at zero (Coulomb friction; Bridson, Fedkiw & Anderson 2002, §7.2), all relative to
// the collider's own velocity u (a collider moving along a path). Pinned particles (w = 0) are never moved
// here; `move_pins` places the pinned particles that follow a path. `collide_positions` is the position
// projection alone, for local/global's iterate after every iteration (Liu et al. 2013 §4.1).
//
// Group 1 holds what is placed per step: the colliders where they are at the step's end and each
// motion's (offset, velocity), one block per step of the frame at a dynamic offset (written once per
// frame by GpuEngine::prepare_frame).

// One collider. Rust twin: gpu::base::layout::GpuCollider. `kind` selects the shape; `a`, `b` and `c` hold
// its data.
struct Collider {
    kind: u32,          // COLLIDER_HALF_SPACE, _SPHERE, _CAPSULE or _BOX
    friction: f32,      // Coulomb μ
    thickness: f32,     // the skin t (0 for the half-space)
    _pad0: u32,
    a: vec4<f32>,       // half-space: (n, d), the free side n·x ≥ d; sphere: (centre, r); capsule: (end a, r); box: (centre, -)
    b: vec4<f32>,       // capsule: (end b, -); box: (half-extents, -)
    c: vec4<f32>,       // box: the unit quaternion (x, y, z, w)
    u: vec4<f32>,       // xyz: the collider's velocity (0 when static)
}

// A pinned particle on a path. Rust twin: gpu::base::layout::GpuMovingPin.
struct MovingPin {
    rest: vec4<f32>,    // xyz: its position in the model
    ids: vec4<u32>,     // x: the particle, y: its path
}

// Rust twin: gpu::base::layout::CollideInfo.
struct CollideInfo {
    n_colliders: u32,
    n_pins: u32,
    _pad1: u32,
    _pad2: u32,
}

// `Collider.kind` (twins: gpu::base::layout::COLLIDER_*).
const COLLIDER_HALF_SPACE: u32 = 0u;
const COLLIDER_SPHERE: u32 = 1u;
const COLLIDER_CAPSULE: u32 = 2u;
const COLLIDER_BOX: u32 = 3u;

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read_write> state: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> C: CollideInfo;
@group(0) @binding(3) var<storage, read> pins: array<MovingPin>;
@group(1) @binding(0) var<storage, read> colliders: array<Collider>;
@group(1) @binding(1) var<storage, read> paths: array<vec4<f32>>;   // per motion: offset, velocity
// collide_positions only: local/global's contacts (the layout of shaders/local_global.wgsl's `contacts`).
@group(2) @binding(0) var<storage, read_write> contacts: array<vec4<f32>>;

// The velocity after a contact with unit normal n and friction mu (twin: reference::collide::contact_velocity).
fn contact_velocity(v: vec3<f32>, n: vec3<f32>, mu: f32) -> vec3<f32> {
    let vn = dot(n, v);
    if (vn >= 0.0) {
        return v;
    }
    let dvn = -vn;
    let vt = v - n * vn;
    let t = length(vt);
    if (t <= 0.0) {
        return vt;
    }
    return vt * max(1.0 - mu * dvn / t, 0.0);
}

// The unit quaternion q applied to v (twin: reference::collide::rotate).
fn rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let t = cross(q.xyz, v) * 2.0;
    return v + t * q.w + cross(q.xyz, t);
}

fn sgn(c: f32) -> f32 {
    return select(-1.0, 1.0, c >= 0.0);
}

// (n, φ) of a round shape: the distance from x to the point p minus r (twin: `round` in reference::collide::distance).
fn round_distance(x: vec3<f32>, p: vec3<f32>, r: f32) -> vec4<f32> {
    let d = x - p;
    let l = length(d);
    if (l > 0.0) {
        return vec4<f32>(d / l, l - r);
    }
    return vec4<f32>(0.0, 1.0, 0.0, -r);
}

// The outward unit normal (xyz) and the signed distance φ (w) of a sphere, capsule or box at x
// (twin: reference::collide::distance).
fn distance(col: Collider, x: vec3<f32>) -> vec4<f32> {
    if (col.kind == COLLIDER_SPHERE) {
        return round_distance(x, col.a.xyz, col.a.w);
    }
    if (col.kind == COLLIDER_CAPSULE) {
        let ab = col.b.xyz - col.a.xyz;
        let den = dot(ab, ab);
        var t = 0.0;
        if (den > 0.0) {
            t = clamp(dot(x - col.a.xyz, ab) / den, 0.0, 1.0);
        }
        return round_distance(x, col.a.xyz + ab * t, col.a.w);
    }
    // the box
    let q = col.c;
    let p = rotate(vec4<f32>(-q.xyz, q.w), x - col.a.xyz);
    let e = abs(p) - col.b.xyz;
    let emax = max(e.x, max(e.y, e.z));
    var nl: vec3<f32>;
    var phi: f32;
    if (emax > 0.0) {
        let o = max(e, vec3<f32>(0.0));
        phi = length(o);
        nl = vec3<f32>(sgn(p.x) * o.x, sgn(p.y) * o.y, sgn(p.z) * o.z) / phi;
    } else if (e.x >= e.y && e.x >= e.z) {
        phi = e.x;
        nl = vec3<f32>(sgn(p.x), 0.0, 0.0);
    } else if (e.y >= e.z) {
        phi = e.y;
        nl = vec3<f32>(0.0, sgn(p.y), 0.0);
    } else {
        phi = e.z;
        nl = vec3<f32>(0.0, 0.0, sgn(p.z));
    }
    return vec4<f32>(rotate(q, nl), phi);
}

// Whether x is inside collider `col` (or its skin): xyz the outward unit normal, w how far to move along
// it (> 0), or w < 0 for no contact (twin: reference::collide::contact).
fn contact(col: Collider, x: vec3<f32>) -> vec4<f32> {
    if (col.kind == COLLIDER_HALF_SPACE) {
        let phi = dot(col.a.xyz, x) - col.a.w;
        return vec4<f32>(col.a.xyz, select(-1.0, -phi, phi < 0.0));
    }
    let d = distance(col, x);
    return vec4<f32>(d.xyz, select(-1.0, col.thickness - d.w, d.w < col.thickness));
}

// Particle i against every collider. Writes back only on a contact.
fn collide_one(i: u32) {
    let n = P.n_particles;
    let xw = state[i];
    if (xw.w == 0.0) { return; }
    var x = xw.xyz;
    var v = state[n + i].xyz;
    var hit = false;
    for (var c = 0u; c < C.n_colliders; c++) {
        let col = colliders[c];
        let k = contact(col, x);
        if (k.w >= 0.0) {
            x += k.xyz * k.w;
            v = col.u.xyz + contact_velocity(v - col.u.xyz, k.xyz, col.friction);
            hit = true;
        }
    }
    if (hit) {
        state[i] = vec4<f32>(x, xw.w);
        state[n + i] = vec4<f32>(v, 0.0);
    }
}

@compute @workgroup_size(WG)
fn collide(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.n_particles) { return; }
    collide_one(gid.x);
}

// Particle i's position alone, moved out of every collider, and the contact local/global then holds
// along the move's direction (twin: reference::contact::collide_positions); `state` is local/global's
// iterate here (positions at [0, n), its second half untouched).
@compute @workgroup_size(WG)
fn collide_positions(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let xw = state[i];
    if (xw.w == 0.0) { return; }
    var x = xw.xyz;
    var u = vec3<f32>(0.0);
    var mu = 0.0;
    for (var c = 0u; c < C.n_colliders; c++) {
        let col = colliders[c];
        let k = contact(col, x);
        if (k.w >= 0.0) {
            x += k.xyz * k.w;
            u = col.u.xyz;
            mu = max(mu, col.friction);
        }
    }
    let d = x - xw.xyz;
    let l = length(d);
    if (l > 0.0) {
        state[i] = vec4<f32>(x, xw.w);
        contacts[i] = vec4<f32>(d / l, 0.0);
        contacts[n + i] = vec4<f32>(u, mu);
        contacts[2u * n + i] = vec4<f32>(0.0);
    }
}

// Moving pin k placed on its path at the step's end: x = rest + offset, v = the path's velocity; one the
// host has freed since (w != 0) is left alone (twin: reference::collide::move_pins).
@compute @workgroup_size(WG)
fn move_pins(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if (k >= C.n_pins) { return; }
    let pin = pins[k];
    let i = pin.ids.x;
    let path = pin.ids.y;
    if (state[i].w != 0.0) { return; }
    state[i] = vec4<f32>(pin.rest.xyz + paths[2u * path].xyz, 0.0);
    state[P.n_particles + i] = vec4<f32>(paths[2u * path + 1u].xyz, 0.0);
}
