// Shinya's linearized explicit Euler, §4 (twin: cpu::leu). One thread per particle.
// lin: x0 at [0,n), v0 at [n,2n), a0 at [2n,3n). blocks: per incidence entry e, three vec4 holding
// K_s = (xx, yy, zz, xy), (xz, yz | D_s xx, yy), (D_s zz, xy, xz, yz). Each endpoint keeps its own
// copy of its springs' blocks, so that re-linearization is a per-particle pass with no scatter.
// flags: [0], [1] the divergence flag of the last step of each parity, [2] the retry count.

struct LeuPass {
    parity: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> nbr: array<Nbr>;
@group(0) @binding(2) var<storage, read> csr: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> lin: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> blocks: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> flags: array<atomic<u32>, 4>;
@group(0) @binding(8) var<storage, read> L: LeuPass;
// The incidence records from SPLIT_VEC4 on (a placeholder when `nbr` holds them all): nbr_at.
@group(0) @binding(9) var<storage, read> nbr_1: array<Nbr>;

fn sym_apply(b0: vec3<f32>, b1: vec3<f32>, u: vec3<f32>) -> vec3<f32> {
    // b0 = (xx, yy, zz), b1 = (xy, xz, yz)
    return vec3<f32>(
        b0.x * u.x + b1.x * u.y + b1.y * u.z,
        b1.x * u.x + b0.y * u.y + b1.z * u.z,
        b1.y * u.x + b1.z * u.y + b0.z * u.z,
    );
}

// Step 1 of Shinya's procedure for particle i at `src`: store x0, v0, a0 and the blocks
// K_s = k[n̂n̂ᵀ + max(0, 1 − L/l)(I − n̂n̂ᵀ)] and D_s = αK_s + k_d n̂n̂ᵀ of each incident spring.
// Returns a0.
fn linearize(i: u32) -> vec3<f32> {
    let n = P.n_particles;
    let a0 = accel(i);
    lin[i] = src[i];
    lin[n + i] = src[n + i];
    lin[2u * n + i] = vec4<f32>(a0, 0.0);
    let xi = src[i].xyz;
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let s = nbr_at(e);
        let d = xi - src[s.j].xyz;
        let l = length(d);
        var kd0 = vec3<f32>(0.0);
        var kd1 = vec3<f32>(0.0);
        var dd0 = vec3<f32>(0.0);
        var dd1 = vec3<f32>(0.0);
        if (l > EPS_LEN) {
            let u = d / l;
            let c = max(1.0 - s.rest / l, 0.0);
            let o0 = u * u;
            let o1 = vec3<f32>(u.x * u.y, u.x * u.z, u.y * u.z);
            kd0 = s.k * (o0 + c * (vec3<f32>(1.0) - o0));
            kd1 = s.k * (o1 - c * o1);
            dd0 = P.alpha * s.k * (o0 + c * (vec3<f32>(1.0) - o0)) + s.kd * o0;
            dd1 = P.alpha * s.k * (o1 - c * o1) + s.kd * o1;
        }
        blocks[3u * e] = vec4<f32>(kd0, kd1.x);
        blocks[3u * e + 1u] = vec4<f32>(kd1.y, kd1.z, dd0.x, dd0.y);
        blocks[3u * e + 2u] = vec4<f32>(dd0.z, dd1);
    }
    return a0;
}

// The linearized acceleration of eq. 34 at `src`: a0 + M⁻¹[−Σ K_s(Δx_i − Δx_j) − Σ D_s(Δv_i − Δv_j)]
// − d0 Δv_i − s Δx_i − (c Δx_i + d Δv_i on the cursor's particle).
fn leu_accel(i: u32) -> vec3<f32> {
    let n = P.n_particles;
    let w = src[i].w;
    if (w == 0.0) {
        return vec3<f32>(0.0);
    }
    let dxi = src[i].xyz - lin[i].xyz;
    let dvi = src[n + i].xyz - lin[n + i].xyz;
    var f = vec3<f32>(0.0);
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let j = nbr_at(e).j;
        let ddx = dxi - (src[j].xyz - lin[j].xyz);
        let ddv = dvi - (src[n + j].xyz - lin[n + j].xyz);
        let b0 = blocks[3u * e];
        let b1 = blocks[3u * e + 1u];
        let b2 = blocks[3u * e + 2u];
        f -= sym_apply(b0.xyz, vec3<f32>(b0.w, b1.x, b1.y), ddx) + sym_apply(vec3<f32>(b1.z, b1.w, b2.x), b2.yzw, ddv);
    }
    var a = lin[2u * n + i].xyz + f * w - dvi * P.gravity.w;
    if (P.wind.w != 0.0) {
        a -= dxi * P.wind.w;
    }
    // the cursor spring is linear: its change since the linearization is exact
    if (i == P.cursor_particle) {
        a -= dxi * P.cursor.w + dvi * P.cursor_damping;
    }
    return a;
}

// Scheduled re-linearization (every h_nl).
@compute @workgroup_size(WG)
fn leu_linearize(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n_particles) { return; }
    linearize(i);
}

// Steps 2.1-2.3: an Euler step with the linearized force; a speed over the limit raises this
// parity's flag. The other parity's flag was consumed by the previous fix-up pass and is cleared.
@compute @workgroup_size(WG)
fn leu_step(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i == 0u) {
        atomicStore(&flags[1u - L.parity], 0u);
    }
    if (i >= n) { return; }
    let a = leu_accel(i);
    let v = src[n + i].xyz + a * P.h;
    dst[i] = vec4<f32>(src[i].xyz + src[n + i].xyz * P.h, src[i].w);
    dst[n + i] = vec4<f32>(v, 0.0);
    // `!(x <= lim²)` also catches NaN.
    if (!(dot(v, v) <= P.center.w * P.center.w)) {
        atomicOr(&flags[L.parity], 1u);
    }
}

// The retry: if the step diverged, discard it, re-evaluate K and D at `src` and take the step again
// (with a fresh linearization the force at `src` is the exact one). A no-op otherwise.
@compute @workgroup_size(WG)
fn leu_fixup(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (atomicLoad(&flags[L.parity]) == 0u) { return; }
    if (i == 0u) {
        atomicAdd(&flags[2], 1u);
    }
    if (i >= n) { return; }
    let a0 = linearize(i);
    var a = a0;
    if (src[i].w == 0.0) {
        a = vec3<f32>(0.0);
    }
    dst[i] = vec4<f32>(src[i].xyz + src[n + i].xyz * P.h, src[i].w);
    dst[n + i] = vec4<f32>(src[n + i].xyz + a * P.h, 0.0);
}
