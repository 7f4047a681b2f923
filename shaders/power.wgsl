// Power iteration for k0, the largest eigenvalue of M⁻¹K (Shinya §3, §5.3; twin: cpu::power).
// Iterates y = S x on S = M^{-1/2} K_c M^{-1/2} + s·I, x = y_prev / |y_prev|, matrix-free over the
// CSR incidence lists. Dot products: a workgroup reduction (`shared/reduce.wgsl`) into `partials`,
// then `power_reduce`.
// scalars: (|y|², x·y, _, _) of the last iteration; x·y is the Rayleigh quotient.

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> nbr: array<Nbr>;
@group(0) @binding(2) var<storage, read> csr: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> y_in: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> y_out: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> scalars: array<vec4<f32>>;
// The incidence records from SPLIT_VEC4 on (a placeholder when `nbr` holds them all): nbr_at.
@group(0) @binding(8) var<storage, read> nbr_1: array<Nbr>;

fn x_of(j: u32, inv_norm: f32) -> vec3<f32> {
    return y_in[j].xyz * inv_norm;
}

@compute @workgroup_size(WG)
fn power_matvec(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    let n = P.n_particles;
    let inv_norm = inverseSqrt(max(scalars[0].x, 1e-30));
    var contrib = vec2<f32>(0.0);
    if (i < n) {
        let wi = src[i].w;
        var y = vec3<f32>(0.0);
        let xi = x_of(i, inv_norm);
        if (wi != 0.0) {
            let si = sqrt(wi);
            let pi = src[i].xyz;
            let e_end = csr[i + 1u];
            for (var e = csr[i]; e < e_end; e++) {
                let s = nbr_at(e);
                let j = s.j;
                let d = pi - src[j].xyz;
                let l = length(d);
                if (l > EPS_LEN) {
                    let dir = d / l;
                    let c = max(0.0, 1.0 - s.rest / l);
                    let u = xi * si - x_of(j, inv_norm) * sqrt(src[j].w);
                    y += kc_apply(s.k, c, dir, u);
                }
            }
            y = y * si + xi * P.wind.w;
        }
        y_out[i] = vec4<f32>(y, 0.0);
        contrib = vec2<f32>(dot(y, y), dot(xi, y));
    }
    let t = wg_reduce(lid, vec4<f32>(contrib, 0.0, 0.0));
    if (lid == 0u) {
        partials[wid.x] = t;
    }
}

// Sums the partials of `power_matvec` (one workgroup).
@compute @workgroup_size(WG)
fn power_reduce(@builtin(local_invocation_index) lid: u32) {
    let groups = (P.n_particles + WG - 1u) / WG;
    var sum = vec2<f32>(0.0);
    for (var g = lid; g < groups; g += WG) {
        sum += partials[g].xy;
    }
    let t = wg_reduce(lid, vec4<f32>(sum, 0.0, 0.0));
    if (lid == 0u) {
        scalars[0] = t;
    }
}
