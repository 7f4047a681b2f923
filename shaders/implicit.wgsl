// Implicit Euler of Baraff & Witkin (Kauppila §2.1, eq. 6), linearized once per step: the operator of
// the GPU PCG (shaders/pcg.wgsl, composed after this file). Twin: cpu::implicit.
//
//   (M − h ∂f/∂v − h² ∂f/∂x) Δv = h (f₀ + h ∂f/∂x v₀),  v' = v₀ + Δv,  x' = x₀ + h v'.
//
// Per incidence entry e of particle i (spring to j) `blocks` holds the six values of the spring's block
// B_s = h k_d n̂n̂ᵀ + h² K_s of −h J_v − h² J_x (Kauppila §4.1): blocks[2e] = (xx, yy, zz, xy),
// blocks[2e + 1] = (xz, yz, j, 0) with the neighbour j's bits in z (so that A·p reads no neighbour table), K_s = k[n̂n̂ᵀ + c(I − n̂n̂ᵀ)], c = 1 − L/l clamped at 0 unless
// I.exact != 0 (Kauppila §2.2; Choi & Ko). Each endpoint keeps its own copy, so building the blocks is a
// per-particle pass with no scatter and A·p is a per-particle gather over the CSR lists:
//   (A p)_i = m_i (1 + h d₀ + h² s) p_i + Σ_e B_e (p_i − p_j),
// with pinned particles filtered out (Baraff & Witkin's constraint filter: zero rows and columns).

// Rust twin: gpu::base::layout::ImplicitParams.
struct ImplicitParams {
    exact: u32,          // 1: exact Jacobian; 0: transverse term clamped at zero
    strain_limit: f32,   // adaptive step: the largest |l − L|/L a step may leave (Kauppila §3.2.3)
    step_limit: f32,     // adaptive step: the largest |l' − l|/L within one step (Bridson et al. 2002)
    _pad0: u32,
}

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> nbr: array<Nbr>;
@group(0) @binding(2) var<storage, read> csr: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> blocks: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> I: ImplicitParams;
// The incidence records from SPLIT_VEC4 on (a placeholder when `nbr` holds them all): nbr_at.
@group(0) @binding(7) var<storage, read> nbr_1: array<Nbr>;
// The blocks from SPLIT_VEC4, 2·SPLIT_VEC4 and 3·SPLIT_VEC4 on (placeholders where `blocks` holds them
// all): blocks_at, blocks_set. SPLIT_VEC4 is even, so the two vec4 of an entry share a chunk.
@group(0) @binding(8) var<storage, read_write> blocks_1: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read_write> blocks_2: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> blocks_3: array<vec4<f32>>;

// BLOCKS_SPLIT: whether the blocks span more than one binding (set per pipeline from the buffer,
// gpu::base::specialize::split_constant). Without it blocks_at and blocks_set touch `blocks` alone, with no
// branch: lavapipe runs the loads of every side of the split's branches (the PCG's mat-vec ran 23%
// slower for them on the 256² cloth). The default keeps the branches, right for any model.
override BLOCKS_SPLIT: bool = true;

fn blocks_at(k: u32) -> vec4<f32> {
    if (!BLOCKS_SPLIT) { return blocks[k]; }
    if (k < SPLIT_VEC4) { return blocks[k]; }
    if (k < 2u * SPLIT_VEC4) { return blocks_1[k - SPLIT_VEC4]; }
    if (k < 3u * SPLIT_VEC4) { return blocks_2[k - 2u * SPLIT_VEC4]; }
    return blocks_3[k - 3u * SPLIT_VEC4];
}

fn blocks_set(k: u32, v: vec4<f32>) {
    if (!BLOCKS_SPLIT) { blocks[k] = v; return; }
    if (k < SPLIT_VEC4) { blocks[k] = v; }
    else if (k < 2u * SPLIT_VEC4) { blocks_1[k - SPLIT_VEC4] = v; }
    else if (k < 3u * SPLIT_VEC4) { blocks_2[k - 2u * SPLIT_VEC4] = v; }
    else { blocks_3[k - 3u * SPLIT_VEC4] = v; }
}

fn sym6_apply(b0: vec4<f32>, b1: vec4<f32>, u: vec3<f32>) -> vec3<f32> {
    // b0 = (xx, yy, zz, xy), b1 = (xz, yz, _, _)
    return vec3<f32>(
        b0.x * u.x + b0.w * u.y + b1.x * u.z,
        b0.w * u.x + b0.y * u.y + b1.y * u.z,
        b1.x * u.x + b1.y * u.y + b0.z * u.z,
    );
}

// m_i (1 + h d₀ + h² s): the mass part of A's diagonal (w = 1/m > 0).
fn mass_diag(w: f32) -> f32 {
    return (1.0 + P.h * P.gravity.w + P.h * P.h * P.wind.w) / w;
}

// The system at `src`: the blocks of i's springs, b_i = h (f₀ + h J_x v₀)_i and the Jacobi diagonal
// (twin: cpu::implicit::implicit_prepare).
@compute @workgroup_size(WG)
fn implicit_prepare(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let w = src[i].w;
    if (w == 0.0) {
        pcg_set_rhs(i, vec3<f32>(0.0), vec3<f32>(0.0));
        return;
    }
    let h = P.h;
    let xi = src[i].xyz;
    let vi = src[n + i].xyz;
    let mi = 1.0 / w;
    // J_x v₀ at i: −Σ K_s (v_i − v_j) − s m_i v_i
    var jxv = -vi * (P.wind.w * mi);
    // the spring force at i, gathered in the same loop as the blocks (accel's, fused: one gather of the
    // neighbours' x and v instead of two)
    var f = vec3<f32>(0.0);
    let md = mass_diag(w);
    var diag = vec3<f32>(md);
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let s = nbr_at(e);
        let d = xi - src[s.j].xyz;
        let l = length(d);
        var b0 = vec4<f32>(0.0);
        var b1 = vec4<f32>(0.0, 0.0, bitcast<f32>(s.j), 0.0);
        if (l > EPS_LEN) {
            let u = d / l;
            let du = vi - src[n + s.j].xyz;
            add_spring_force(&f, s, u, l, du);
            var c = 1.0 - s.rest / l;
            if (I.exact == 0u) {
                c = max(c, 0.0);
            }
            let o0 = u * u;
            let o1 = vec3<f32>(u.x * u.y, u.x * u.z, u.y * u.z);
            let k0 = s.k * (o0 + c * (vec3<f32>(1.0) - o0));
            let k1 = s.k * (o1 - c * o1);
            jxv -= sym6_apply(vec4<f32>(k0, k1.x), vec4<f32>(k1.y, k1.z, 0.0, 0.0), du);
            let bd = h * h * k0 + h * s.kd * o0;
            let bo = h * h * k1 + h * s.kd * o1;
            b0 = vec4<f32>(bd, bo.x);
            b1 = vec4<f32>(bo.y, bo.z, bitcast<f32>(s.j), 0.0);
            diag += bd;
        }
        blocks_set(2u * e, b0);
        blocks_set(2u * e + 1u, b1);
    }
    let f0 = accel_from_springs(i, xi, vi, w, f) * mi;
    pcg_set_rhs(i, (f0 + jxv * h) * h, vec3<f32>(1.0) / diag);
}

// (A p)_i for the PCG (the twin of cpu::implicit::implicit_matvec); pinned rows are zero.
fn operator_apply(i: u32, p_i: vec3<f32>) -> vec3<f32> {
    let w = src[i].w;
    if (w == 0.0) {
        return vec3<f32>(0.0);
    }
    var y = p_i * mass_diag(w);
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let b1 = blocks_at(2u * e + 1u);
        y += sym6_apply(blocks_at(2u * e), b1, p_i - pcg_dir(bitcast<u32>(b1.z)));
    }
    return y;
}

// v' = v₀ + Δv, x' = x₀ + h v' into `dst`; pinned particles keep x and v = 0.
@compute @workgroup_size(WG)
fn implicit_integrate(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let x = src[i];
    if (x.w == 0.0) {
        dst[i] = x;
        dst[n + i] = vec4<f32>(0.0);
        return;
    }
    let v = src[n + i].xyz + pcg_solution(i);
    dst[i] = vec4<f32>(x.xyz + v * P.h, x.w);
    dst[n + i] = vec4<f32>(v, 0.0);
}

// The adaptive step's check of the step from `src` to `dst` (Kauppila §3.2.3): a spring of particle i
// whose strain at the new state is above I.strain_limit, or whose length changed within the step by more
// than I.step_limit of its rest length, raises cg_state[5] (cleared by the host before the step).
@compute @workgroup_size(WG)
fn implicit_strain(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n_particles) { return; }
    let xi = dst[i].xyz;
    let xi0 = src[i].xyz;
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let s = nbr_at(e);
        if (s.rest > 0.0) {
            let after = length(xi - dst[s.j].xyz);
            let before = length(xi0 - src[s.j].xyz);
            let strain = abs(after - s.rest) / s.rest;
            let change = abs(after - before) / s.rest;
            // `!(x <= limit)` also catches NaN
            if (!(strain <= I.strain_limit) || !(change <= I.step_limit)) {
                atomicOr(&cg_state[5], 1u);
            }
        }
    }
}
