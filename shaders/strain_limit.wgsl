// Provot's strain limiting (twin: reference::strain_limit; Provot 1995 §5): after every step, a few
// Jacobi passes, one thread per particle gathering over its CSR incidence list (no atomics). A pass
// reads the state `src` and writes `dst`: for each incident spring longer than (1 + τ)L, the correction
// that brings it back to (1 + τ)L shared by inverse mass (a pinned endpoint, w = 0, does not move),
// averaged over the springs over the limit and scaled by ω. The velocity follows the position by the
// method's rule: Δv = Δx/h, or (`rod`, explicit Euler and LEU) the relative velocity along each spring
// at its limit removed, shared and averaged the same way. The passes ping-pong between the step's
// state buffer and a scratch state; an odd count ends with `strain_limit_copy` back.

// Rust twin: gpu::layout::StrainLimitInfo.
struct StrainLimitInfo {
    limit: f32,      // τ
    relaxation: f32, // ω
    rod: u32,        // 1: the rod velocity rule, 0: Δv = Δx/h
    _pad: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> csr: array<u32>;
@group(0) @binding(2) var<storage, read> nbr: array<Nbr>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(5) var<uniform> S: StrainLimitInfo;
// The incidence records from SPLIT_VEC4 on (a placeholder when `nbr` holds them all): nbr_at.
@group(0) @binding(6) var<storage, read> nbr_1: array<Nbr>;

@compute @workgroup_size(WG)
fn strain_limit_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = P.n_particles;
    let i = gid.x;
    if (i >= n) { return; }
    let xw = src[i];
    let v = src[n + i];
    let wi = xw.w;
    if (wi == 0.0) {
        dst[i] = xw;
        dst[n + i] = v;
        return;
    }
    let xi = xw.xyz;
    var dx = vec3<f32>(0.0);
    var dv = vec3<f32>(0.0);
    var count = 0u;
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let s = nbr_at(e);
        let xj = src[s.j];
        let d = xi - xj.xyz;
        let l = length(d);
        let target_len = (1.0 + S.limit) * s.rest;
        if (l > target_len && l > EPS_LEN) {
            let share = wi / (wi + xj.w);
            dx -= d * (share * (l - target_len) / l);
            let u = d / l;
            dv -= u * (share * dot(v.xyz - src[n + s.j].xyz, u));
            count += 1u;
        }
    }
    if (count == 0u) {
        dst[i] = xw;
        dst[n + i] = v;
        return;
    }
    let scale = S.relaxation / f32(count);
    dx *= scale;
    dst[i] = vec4<f32>(xi + dx, wi);
    if (S.rod != 0u) {
        dst[n + i] = vec4<f32>(v.xyz + dv * scale, v.w);
    } else {
        dst[n + i] = vec4<f32>(v.xyz + dx / P.h, v.w);
    }
}

@compute @workgroup_size(WG)
fn strain_limit_copy(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = P.n_particles;
    let i = gid.x;
    if (i >= n) { return; }
    dst[i] = src[i];
    dst[n + i] = src[n + i];
}
