// Per-vertex normals of the drawn triangles, gathered per vertex over a CSR list of the triangles
// that touch it (no float atomics): n_i = normalize(Σ_t (p1 − p0) × (p2 − p0)) (area-weighted).
// `positions` is the simulation's own state buffer (w = 1/m, ignored here).

struct NormalParams {
    n_vertices: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> np: NormalParams;
@group(0) @binding(1) var<storage, read> positions: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> tris: array<u32>;        // 3 per triangle
@group(0) @binding(3) var<storage, read> vt_offsets: array<u32>;  // n + 1
@group(0) @binding(4) var<storage, read> vt_tris: array<u32>;     // triangle ids
@group(0) @binding(5) var<storage, read_write> normals: array<vec4<f32>>;

@compute @workgroup_size(64)
fn vertex_normals(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= np.n_vertices) {
        return;
    }
    var acc = vec3<f32>(0.0);
    for (var e = vt_offsets[i]; e < vt_offsets[i + 1u]; e = e + 1u) {
        let t = vt_tris[e];
        let p0 = positions[tris[3u * t]].xyz;
        let p1 = positions[tris[3u * t + 1u]].xyz;
        let p2 = positions[tris[3u * t + 2u]].xyz;
        acc = acc + cross(p1 - p0, p2 - p0);
    }
    let len = length(acc);
    var nrm = vec3<f32>(0.0, 1.0, 0.0);
    if (len > 1e-20) {
        nrm = acc / len;
    }
    normals[i] = vec4<f32>(nrm, 0.0);
}
