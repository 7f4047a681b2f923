// Colliders (twin: cpu::collide): after every step of every method, one thread per particle checks
// the state against every collider in order and pushes a particle that entered one back out: the
// position projected onto the surface along its normal, the inward normal velocity removed (Δv_n),
// the tangential velocity reduced by μ·Δv_n, clamped at zero (Coulomb friction; Bridson, Fedkiw &
// Anderson 2002, §7.2). Pinned particles (w = 0) are never moved.

// One collider. Rust twin: gpu::layout::GpuCollider. `kind` selects the shape; `a` and `b` hold its
// data, so that later shapes (a sphere: centre and radius in `a`; a box: centre and half-extents)
// are one more branch in `collide`.
struct Collider {
    kind: u32,          // COLLIDER_HALF_SPACE
    friction: f32,      // Coulomb μ
    _pad0: u32,
    _pad1: u32,
    a: vec4<f32>,       // half-space: xyz the unit normal n, w the offset d (the free side is n·x ≥ d)
    b: vec4<f32>,       // unused by the half-space
}

// Rust twin: gpu::layout::CollideInfo.
struct CollideInfo {
    n_colliders: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// `Collider.kind` of a half-space (twin: gpu::layout::COLLIDER_HALF_SPACE).
const COLLIDER_HALF_SPACE: u32 = 0u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> state: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> colliders: array<Collider>;
@group(0) @binding(3) var<uniform> C: CollideInfo;

// The velocity after a contact with unit normal n and friction mu (twin: cpu::collide::contact_velocity).
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

@compute @workgroup_size(WG)
fn collide(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let xw = state[i];
    if (xw.w == 0.0) { return; }
    var x = xw.xyz;
    var v = state[n + i].xyz;
    var hit = false;
    for (var c = 0u; c < C.n_colliders; c++) {
        let col = colliders[c];
        if (col.kind == COLLIDER_HALF_SPACE) {
            let nrm = col.a.xyz;
            let phi = dot(nrm, x) - col.a.w;
            if (phi < 0.0) {
                x -= nrm * phi;
                v = contact_velocity(v, nrm, col.friction);
                hit = true;
            }
        }
    }
    if (hit) {
        state[i] = vec4<f32>(x, xw.w);
        state[n + i] = vec4<f32>(v, 0.0);
    }
}
