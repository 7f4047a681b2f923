// Jacobi-preconditioned conjugate gradients on the GPU, matrix-free and without read-back
// (Kauppila §3.2.2, §4.2; twin: cpu::implicit::pcg_solve, step for step).
//
// A reusable solver: an operator file is composed in front of this one (layout::KERNEL_WGSL
// concatenates them) and supplies, in bind group 0, its own buffers and
//     fn operator_apply(i: u32, p_i: vec3<f32>) -> vec3<f32>
// returning (A p)_i, reading the other particles' search direction with pcg_dir(j). It writes the
// right-hand side and the inverse diagonal with pcg_set_rhs(i, b, inv_diag) (zero on filtered, e.g.
// pinned, particles) before `pcg_begin`, and reads the solution with pcg_solution(i) after
// `pcg_finish`. shaders/implicit.wgsl is the implicit Euler operator; Liu's global step plugs in the
// same way with its (M + h²L) product.
//
// Per solve: pcg_begin, then a fixed budget of (pcg_matvec, pcg_update) pairs, then pcg_finish.
// Dot products: each kernel reduces its contributions in the workgroup into `partials`; the next kernel
// needs their sums in every workgroup. For a small solve (C.reduced = 0) every workgroup sums the G
// partials again itself (the same order everywhere, so every workgroup gets the same scalars and the
// same decisions; G² loads a dispatch, cheaper than a dispatch of its own below G = 1024). For a large one
// (C.reduced = 1) `pcg_reduce`, one workgroup recorded just before pcg_matvec and pcg_update, sums the
// three slots into [3G, 3G + 3) with the same loop and tree, and every workgroup reads those: the same
// numbers bit for bit, G loads instead of G². No float atomics. Once the relative residual is under the
// tolerance (or CG breaks down) a status word turns the rest into no-ops.
// The search direction ping-pongs between p0 and p1, and the direction update costs no dispatch of its
// own: pcg_matvec forms p = z + βp_old on the fly for itself and for its neighbours; or, with
// PCG_AP_RECURRENCE, p for itself and A p = A z + β A p_old (the operator's gather reads z only; A p_old
// is the last iteration's Ap, kept): in exact arithmetic the same iterates as the twin's A (z + βp_old),
// in f32 rounded differently.

// Rust twin: gpu::base::layout::CgPass.
struct CgPass {
    n: u32,        // vector length (particles)
    groups: u32,   // workgroups of a per-particle dispatch (partials per slot)
    parity: u32,   // iteration parity q: (rz, rr, bb) of the current residual in slot q; p_old = p[q]
    tol2: f32,     // ε²: converged when r·r <= ε² b·b
    warm: u32,     // 1: start from the x left by the last solve (r = b − Ax); 0: from x = 0
    reduced: u32,  // 1: the slots' sums are at [3G, 3G + 3), written by pcg_reduce
    per_lane: u32, // particles per thread of pcg_begin, pcg_matvec, pcg_update (pcg_particle)
    _pad2: u32,
}

@group(1) @binding(0) var<storage, read> C: CgPass;
// vectors, n vec4 each: r, z, p0, p1, Ap, x (the solution), inverse diagonal
@group(1) @binding(1) var<storage, read_write> cg_vectors: array<vec4<f32>>;
// partials: slot 0 at [0, G), slot 1 at [G, 2G): (r·z, r·r, b·b, 0); p·Ap at [2G, 3G); the three slots'
// sums at [3G, 3G + 3) when C.reduced
@group(1) @binding(2) var<storage, read_write> partials: array<vec4<f32>>;
// [0] status (0 running, 1 converged, 2 breakdown), [1] iterations of this solve, [2] final relative
// residual (f32 bits), [3] iterations summed since the host last cleared it, [4] breakdowns seen
@group(1) @binding(3) var<storage, read_write> cg_state: array<atomic<u32>, 8>;

const SEG_R: u32 = 0u;
const SEG_Z: u32 = 1u;
const SEG_P: u32 = 2u; // p0; p1 at SEG_P + 1
const SEG_AP: u32 = 4u;
const SEG_X: u32 = 5u;
const SEG_D: u32 = 6u;

var<workgroup> wg_status: u32;
// partial_sums's reduced sums, shared uniformly
var<workgroup> wg_sums: vec4<f32>;
// Pipeline-overridable: true where no external preconditioner uses Ap as scratch between iterations
// (implicit Euler sets it; the multigrid V-cycle and Chebyshev's iteration use Ap, so local/global
// keeps the default).
override PCG_AP_RECURRENCE: bool = false;

// pcg_dir(j) = v_a[j] + pcg_beta v_b[j] (v_a[j] alone with PCG_AP_RECURRENCE), the segments set by the
// kernel: (z, p_old) in pcg_matvec, (x, x) with β = 0 in pcg_begin's warm start. Segments instead of a
// branch: lavapipe runs the loads of both sides of a branch.
var<private> pcg_beta: f32;
var<private> pcg_dir_a: u32;
var<private> pcg_dir_b: u32;

// The k-th particle of thread lid of workgroup wid in pcg_begin, pcg_matvec and pcg_update: a workgroup
// covers WG·per_lane consecutive particles, the threads striding through them (gpu::base::layout::PCG_PER_LANE);
// with per_lane = 1 the global invocation index.
fn pcg_particle(wid: u32, lid: u32, k: u32) -> u32 {
    return (wid * C.per_lane + k) * WG + lid;
}

fn seg(s: u32, i: u32) -> u32 {
    return s * C.n + i;
}

// For the operator: writes b_i and the inverse diagonal (0 where filtered).
fn pcg_set_rhs(i: u32, b: vec3<f32>, inv_diag: vec3<f32>) {
    cg_vectors[seg(SEG_R, i)] = vec4<f32>(b, 0.0);
    cg_vectors[seg(SEG_D, i)] = vec4<f32>(inv_diag, 0.0);
}

// For the operator: the solution x_i.
fn pcg_solution(i: u32) -> vec3<f32> {
    return cg_vectors[seg(SEG_X, i)].xyz;
}

// For the operator: the vector it multiplies at particle j: in pcg_matvec the search direction
// p_j = z_j + β p_old_j (z_j with PCG_AP_RECURRENCE, A p then being A z + β A p_old); in pcg_begin's
// warm start x_j.
fn pcg_dir(j: u32) -> vec3<f32> {
    if (PCG_AP_RECURRENCE) {
        return cg_vectors[seg(pcg_dir_a, j)].xyz;
    }
    return cg_vectors[seg(pcg_dir_a, j)].xyz + pcg_beta * cg_vectors[seg(pcg_dir_b, j)].xyz;
}

// The sum of the G partials at [base, base + G) by this workgroup: the loop and tree that every
// workgroup runs alike when the solve is not reduced, and that pcg_reduce runs once when it is.
fn partial_sum(lid: u32, base: u32) -> vec4<f32> {
    var s = vec4<f32>(0.0);
    for (var g = lid; g < C.groups; g += WG) {
        s += partials[base + g];
    }
    return wg_reduce(lid, s);
}

// Two sums: (Σ a.x, Σ a.y, Σ a.z, Σ b.x) over the G partials at base_a and base_b (slots, base = slot·G):
// pcg_reduce's sums when C.reduced (uniform: so is the branch), else one reduction in this workgroup
// (one reduction's barriers instead of two; per component the same additions as partial_sum's).
fn partial_sums(lid: u32, base_a: u32, base_b: u32) -> vec4<f32> {
    if (C.reduced != 0u) {
        // read by one thread and shared through a uniform load: the branches on it that come before a
        // barrier are then uniform (WebGPU's uniformity analysis, as Chrome's Tint applies it, takes a
        // read-write storage load for non-uniform)
        if (lid == 0u) {
            let top = 3u * C.groups;
            wg_sums = vec4<f32>(partials[top + base_a / C.groups].xyz, partials[top + base_b / C.groups].x);
        }
        return workgroupUniformLoad(&wg_sums);
    }
    var s = vec4<f32>(0.0);
    for (var g = lid; g < C.groups; g += WG) {
        s += vec4<f32>(partials[base_a + g].xyz, partials[base_b + g].x);
    }
    return wg_reduce(lid, s);
}

// One workgroup, recorded before pcg_matvec and pcg_update when C.reduced: the sums of the three
// partial slots into [3G, 3G + 3), for every workgroup of the next kernel to read.
@compute @workgroup_size(WG)
fn pcg_reduce(@builtin(local_invocation_index) lid: u32) {
    if (load_status(lid) != 0u) { return; }
    for (var slot = 0u; slot < 3u; slot++) {
        let t = partial_sum(lid, slot * C.groups);
        if (lid == 0u) {
            partials[3u * C.groups + slot] = t;
        }
    }
}

// The solve's status, uniform in the workgroup.
fn load_status(lid: u32) -> u32 {
    if (lid == 0u) {
        wg_status = atomicLoad(&cg_state[0]);
    }
    return workgroupUniformLoad(&wg_status);
}

// Starts a solve: from the last solve's x when C.warm (r = b − Ax, A·x by the operator's gather; x is
// only read here, so the neighbours see it whole), else from x = 0 (r = b, as written by the operator);
// z = P⁻¹r, p_old = 0, and the partials of (r·z, r·r, b·b) in slot 0 (slot 1 zero: β = 0 at the first
// iteration).
@compute @workgroup_size(WG)
fn pcg_begin(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    var c = vec4<f32>(0.0);
    for (var k = 0u; k < C.per_lane; k++) {
        let i = pcg_particle(wid.x, lid, k);
        if (i >= C.n) { break; }
        let b = cg_vectors[seg(SEG_R, i)].xyz;
        var r = b;
        if (C.warm != 0u) {
            pcg_dir_a = SEG_X;
            pcg_dir_b = SEG_X;
            pcg_beta = 0.0;
            r = b - operator_apply(i, cg_vectors[seg(SEG_X, i)].xyz);
        } else {
            cg_vectors[seg(SEG_X, i)] = vec4<f32>(0.0);
        }
        let z = r * cg_vectors[seg(SEG_D, i)].xyz;
        cg_vectors[seg(SEG_R, i)] = vec4<f32>(r, 0.0);
        cg_vectors[seg(SEG_Z, i)] = vec4<f32>(z, 0.0);
        cg_vectors[seg(SEG_P, i)] = vec4<f32>(0.0);
        cg_vectors[seg(SEG_P + 1u, i)] = vec4<f32>(0.0);
        cg_vectors[seg(SEG_AP, i)] = vec4<f32>(0.0);
        c += vec4<f32>(dot(r, z), dot(r, r), dot(b, b), 0.0);
    }
    let t = wg_reduce(lid, c);
    if (lid == 0u) {
        partials[wid.x] = t;
        partials[C.groups + wid.x] = vec4<f32>(0.0);
    }
    if (wid.x == 0u && lid == 0u) {
        atomicStore(&cg_state[0], 0u);
        atomicStore(&cg_state[1], 0u);
        atomicStore(&cg_state[2], 0u);
    }
}

// Iteration k, first half: stop if ‖r‖ <= ε‖b‖; else β = (r·z)/(r·z)_prev, p = z + βp_old (into
// p[1 − q]), Ap = A p by the operator's gather (A z + β Ap_old with PCG_AP_RECURRENCE), and the partials of p·Ap.
@compute @workgroup_size(WG)
fn pcg_matvec(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    if (load_status(lid) != 0u) { return; }
    let q = C.parity;
    // (r·z, r·r, b·b) of the current residual and the previous r·z
    let cur = partial_sums(lid, q * C.groups, (1u - q) * C.groups);
    if (cur.y <= C.tol2 * cur.z) {
        if (wid.x == 0u && lid == 0u) {
            atomicStore(&cg_state[0], 1u);
            var res = 0.0;
            if (cur.z > 0.0) {
                res = sqrt(cur.y / cur.z);
            }
            atomicStore(&cg_state[2], bitcast<u32>(res));
        }
        return;
    }
    pcg_beta = 0.0;
    if (cur.w > 0.0) {
        pcg_beta = cur.x / cur.w;
    }
    pcg_dir_a = SEG_Z;
    pcg_dir_b = SEG_P + q;
    var c = vec4<f32>(0.0);
    for (var k = 0u; k < C.per_lane; k++) {
        let i = pcg_particle(wid.x, lid, k);
        if (i >= C.n) { break; }
        var p: vec3<f32>;
        var ap: vec3<f32>;
        if (PCG_AP_RECURRENCE) {
            // the gather reads one vector of the neighbours (z) instead of forming their p from two
            let z = cg_vectors[seg(SEG_Z, i)].xyz;
            p = z + pcg_beta * cg_vectors[seg(SEG_P + q, i)].xyz;
            ap = operator_apply(i, z) + pcg_beta * cg_vectors[seg(SEG_AP, i)].xyz;
        } else {
            p = pcg_dir(i);
            ap = operator_apply(i, p);
        }
        cg_vectors[seg(SEG_P + 1u - q, i)] = vec4<f32>(p, 0.0);
        cg_vectors[seg(SEG_AP, i)] = vec4<f32>(ap, 0.0);
        c += vec4<f32>(dot(p, ap), 0.0, 0.0, 0.0);
    }
    let t = wg_reduce(lid, c);
    if (lid == 0u) {
        partials[2u * C.groups + wid.x] = t;
    }
}

// Iteration k, second half: α = (r·z)/(p·Ap) (a breakdown, p·Ap <= 0 or not finite, stops the solve
// with status 2), x += αp, r −= αAp, z = P⁻¹r, and the partials of the new (r·z, r·r, b·b) in slot 1 − q.
@compute @workgroup_size(WG)
fn pcg_update(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    if (load_status(lid) != 0u) { return; }
    let q = C.parity;
    // (r·z, r·r, b·b) and p·Ap
    let cur = partial_sums(lid, q * C.groups, 2u * C.groups);
    let pap = cur.w;
    if (!(pap > 0.0 && pap < 3.0e38)) {
        if (wid.x == 0u && lid == 0u) {
            atomicStore(&cg_state[0], 2u);
            atomicAdd(&cg_state[4], 1u);
            atomicStore(&cg_state[2], bitcast<u32>(-1.0f));
        }
        return;
    }
    let alpha = cur.x / pap;
    var c = vec4<f32>(0.0);
    for (var k = 0u; k < C.per_lane; k++) {
        let i = pcg_particle(wid.x, lid, k);
        if (i >= C.n) { break; }
        let p = cg_vectors[seg(SEG_P + 1u - q, i)].xyz;
        cg_vectors[seg(SEG_X, i)] += vec4<f32>(alpha * p, 0.0);
        let r = cg_vectors[seg(SEG_R, i)].xyz - alpha * cg_vectors[seg(SEG_AP, i)].xyz;
        let z = r * cg_vectors[seg(SEG_D, i)].xyz;
        cg_vectors[seg(SEG_R, i)] = vec4<f32>(r, 0.0);
        cg_vectors[seg(SEG_Z, i)] = vec4<f32>(z, 0.0);
        c += vec4<f32>(dot(r, z), dot(r, r), 0.0, 0.0);
    }
    let t = wg_reduce(lid, c);
    if (lid == 0u) {
        partials[(1u - q) * C.groups + wid.x] = vec4<f32>(t.x, t.y, partials[q * C.groups + wid.x].z, 0.0);
    }
    if (wid.x == 0u && lid == 0u) {
        atomicAdd(&cg_state[1], 1u);
        atomicAdd(&cg_state[3], 1u);
    }
}

// After the budget (one workgroup, with the parity of the budget): a solve still running reports the
// relative residual of its last iterate.
@compute @workgroup_size(WG)
fn pcg_finish(@builtin(local_invocation_index) lid: u32) {
    if (load_status(lid) != 0u) { return; }
    let cur = partial_sum(lid, C.parity * C.groups);
    if (lid == 0u) {
        var res = 0.0;
        if (cur.z > 0.0) {
            res = sqrt(cur.y / cur.z);
        }
        atomicStore(&cg_state[2], bitcast<u32>(res));
    }
}
