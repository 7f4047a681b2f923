// The gusting aerodynamic wind on the triangles (model::AeroWind; the mass-spring lecture's "Forces:
// Spatial Fields": wind, "can depend on time (e.g., wind gusts)"), as a pass before each step of every
// method: the state at the step's start with v ← v + h a_wind(x, v), from `src` into `dst` (twin:
// reference::fields::wind_kick). a_wind of particle i is (1/m_i) Σ over its triangles (i, j, k) of f/3,
// f = c A (u·n̂)|u·n̂| n̂, N = (x_j − x_i) × (x_k − x_i), A = |N|/2, u = w(t) − (v_i + v_j + v_k)/3: a gather
// over the vertex→triangle lists in `tri` (n + 1 offsets, then (j, k) per entry), no atomics.

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> tri: array<u32>;
@group(0) @binding(2) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<vec4<f32>>;

// The air's velocity at P.time: base + gust·g(t) (twin: model::AeroWind::at).
fn air_velocity() -> vec3<f32> {
    return P.aero_base.xyz + P.aero_gust.xyz * gust_shape(P.aero_gust.w, P.time);
}

@compute @workgroup_size(WG)
fn wind_kick(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let xi4 = src[i];
    let vi4 = src[n + i];
    dst[i] = xi4;
    if (xi4.w == 0.0) {
        dst[n + i] = vi4;
        return;
    }
    let xi = xi4.xyz;
    let w = air_velocity();
    let c = P.aero_base.w;
    let base = n + 1u;
    var f = vec3<f32>(0.0);
    let e_end = tri[i + 1u];
    for (var e = tri[i]; e < e_end; e++) {
        let j = tri[base + 2u * e];
        let k = tri[base + 2u * e + 1u];
        let nrm = cross(src[j].xyz - xi, src[k].xyz - xi);
        let l = length(nrm);
        if (l <= EPS_LEN * EPS_LEN) {
            continue;
        }
        let nh = nrm / l;
        let u = w - (vi4.xyz + src[n + j].xyz + src[n + k].xyz) / 3.0;
        let un = dot(u, nh);
        f += nh * (c * l * un * abs(un) / 6.0);
    }
    dst[n + i] = vec4<f32>(vi4.xyz + f * (xi4.w * P.h), vi4.w);
}
