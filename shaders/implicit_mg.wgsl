// Aggregation multigrid for Baraff–Witkin's implicit Euler system on the GPU: the preconditioner of the
// GPU PCG, composed after shaders/implicit.wgsl and shaders/pcg.wgsl (it reads the implicit blocks, the
// state and the PCG's vectors through their bindings). The twin of linalg::spring_mg::SpringMg with one
// damped block-Jacobi sweep each side (SpringMg.sweeps = 1), kernel for kernel:
//
// Each step, after implicit_prepare (the fine blocks), the blocks of every coarse level are re-summed over
// lists fixed by the model (SpringMg::update):
//   implicit_mg_sum0    level 0: D⁻¹ per particle, the inverse of m_i(1 + h d₀ + h² s) I + Σ_e B_e   (n rows)
//   implicit_mg_sum     level l → l + 1: a coarse node's block = Σ members' node blocks + Σ its grounded fine
//               edges' blocks; a coarse edge's block = Σ its fine edges' blocks      (nodes + edges rows)
//   implicit_mg_dinv    level l + 1: D⁻¹ per node, the inverse of its block + Σ incident edge blocks
//   implicit_mg_factor  the last level: its dense matrix and its Cholesky factor L (one workgroup)
// The V(1,1)-cycle z = B r (SpringMg::apply), after pcg_begin and after every pcg_update:
//   implicit_mg_down     level 0: x = ωD⁻¹b                                                  (n rows)
//   implicit_mg_restrict level l → l + 1: b_c = Σ_{i ∈ c} (b − A x)_i, x_c = ωD_c⁻¹b_c          (rows of l + 1)
//   implicit_mg_coarse   the last level: x = L⁻ᵀL⁻¹b (one workgroup)
//   implicit_mg_up       level l: t = x + α x_{l+1}[agg(i)] (pinned: t = x)                  (rows of l)
//   implicit_mg_post     level l: x = t + ωD⁻¹(b − A t); level 0 also the r·z partials        (rows of l)
// Every level's (b, x, t) is in implicit_mg_vecs; implicit_mg_down copies the PCG's r into level 0's b and implicit_mg_post
// writes level 0's x into the PCG's z. A coarse level's A·x is the gather over its incidence: (A x)_i = G_i x_i + Σ B_e (x_i − x_o)
// (spring_mg's module notes); level 0's is implicit Euler's own operator. Once the PCG has stopped every
// V-cycle kernel is a no-op (the block sums are not: they run before pcg_begin).
//
// A symmetric block is two vec4 in implicit_mg_vals: (xx, yy, zz, xy), (xz, yz, 0, 0), as implicit.wgsl's.

// Rust twin: gpu::base::layout::ImplicitMgPass. One per dispatch, at a dynamic offset.
struct ImplicitMgPass {
    rows: u32,
    level: u32,      // the fine level (0: the particles)
    nodes: u32,      // implicit_mg_sum: coarse nodes (rows beyond: coarse edges); implicit_mg_factor/implicit_mg_coarse: last level's
    slot: u32,       // implicit_mg_post on level 0: r·z partials slot; 2: none
    groups: u32,     // the PCG's workgroups
    b: u32,          // fine level's b, x, t; coarse level's b, x
    x: u32,
    t: u32,
    cb: u32,
    cx: u32,
    f_inc_ptr: u32,  // fine level's incidence (coarse levels only), word offsets
    f_inc: u32,
    f_ground: u32,   // fine level's blocks, vec4 indices in implicit_mg_vals
    f_edge: u32,
    f_dinv: u32,
    agg: u32,        // link lists, word offsets
    mem_ptr: u32,
    mem: u32,
    gr_ptr: u32,
    gr: u32,
    ed_ptr: u32,
    ed: u32,
    ent: u32,        // level 0: fine edge → incidence entry
    c_inc_ptr: u32,  // coarse level's incidence, word offsets
    c_inc: u32,
    c_ground: u32,   // coarse level's blocks, vec4 indices
    c_edge: u32,
    c_dinv: u32,
    omega: f32,
    alpha: f32,
    _pad0: u32,
    _pad1: u32,
}

@group(3) @binding(0) var<storage, read> M: ImplicitMgPass;
@group(2) @binding(0) var<storage, read> implicit_mg_lists: array<u32>;
@group(2) @binding(1) var<storage, read_write> implicit_mg_vals: array<vec4<f32>>;
@group(2) @binding(2) var<storage, read_write> implicit_mg_vecs: array<vec4<f32>>;
// The last level's dense matrix, then its Cholesky factor (lower triangle, row-major, 3·nodes square).
@group(2) @binding(3) var<storage, read_write> implicit_mg_dense: array<f32>;

// The largest last level factored: 3 × 3 × linalg::spring_mg::COARSE_NODES unknowns.
const IMPLICIT_MG_DENSE_MAX: u32 = 1152u;
const IMPLICIT_MG_NONE: u32 = 0xffffffffu;

var<workgroup> implicit_mg_y: array<f32, IMPLICIT_MG_DENSE_MAX>;
var<workgroup> implicit_mg_z: array<f32, IMPLICIT_MG_DENSE_MAX>;

struct Sym {
    a: vec4<f32>,
    b: vec4<f32>,
}

fn sym_at(k: u32) -> Sym {
    return Sym(implicit_mg_vals[k], implicit_mg_vals[k + 1u]);
}

fn sym_put(k: u32, s: Sym) {
    implicit_mg_vals[k] = s.a;
    implicit_mg_vals[k + 1u] = s.b;
}

fn sym_add(s: Sym, t: Sym) -> Sym {
    return Sym(s.a + t.a, s.b + t.b);
}

fn sym_mul(s: Sym, u: vec3<f32>) -> vec3<f32> {
    return sym6_apply(s.a, s.b, u);
}

// The inverse of a symmetric positive definite block, 0 when singular (twin: spring_mg::sym_inverse).
fn sym_inv(s: Sym) -> Sym {
    let xx = s.a.x;
    let yy = s.a.y;
    let zz = s.a.z;
    let xy = s.a.w;
    let xz = s.b.x;
    let yz = s.b.y;
    let c0 = yy * zz - yz * yz;
    let c1 = xx * zz - xz * xz;
    let c2 = xx * yy - xy * xy;
    let c3 = xz * yz - xy * zz;
    let c4 = xy * yz - xz * yy;
    let c5 = xy * xz - xx * yz;
    let det = xx * c0 + xy * c3 + xz * c4;
    if (!(det > 0.0 && det < 3.0e38)) {
        return Sym(vec4<f32>(0.0), vec4<f32>(0.0));
    }
    let r = 1.0 / det;
    return Sym(vec4<f32>(c0, c1, c2, c3) * r, vec4<f32>(c4, c5, 0.0, 0.0) * r);
}

// A fine (level 0) edge's block: the incidence entry's, without the neighbour bits.
fn implicit_mg_block0(f: u32) -> Sym {
    let e = implicit_mg_lists[M.ent + f];
    let b1 = blocks_at(2u * e + 1u);
    return Sym(blocks_at(2u * e), vec4<f32>(b1.x, b1.y, 0.0, 0.0));
}

fn implicit_mg_fine_edge(f: u32) -> Sym {
    if (M.level == 0u) {
        return implicit_mg_block0(f);
    }
    return sym_at(M.f_edge + 2u * f);
}

fn implicit_mg_fine_ground(i: u32) -> Sym {
    if (M.level == 0u) {
        let md = mass_diag(src[i].w);
        return Sym(vec4<f32>(md, md, md, 0.0), vec4<f32>(0.0));
    }
    return sym_at(M.f_ground + 2u * i);
}

// Vectors are in implicit_mg_vecs only: the PCG's r and z are read and written by implicit_mg_down and implicit_mg_post on
// level 0 alone (a load or store that picks cg_vectors or implicit_mg_vecs by index crashes lavapipe's shader
// compiler here, Mesa 22.3).
fn implicit_mg_load(k: u32) -> vec3<f32> {
    return implicit_mg_vecs[k].xyz;
}

fn implicit_mg_store(k: u32, v: vec3<f32>) {
    implicit_mg_vecs[k] = vec4<f32>(v, 0.0);
}

// (A u)_i on the fine level of the dispatch, u at `base`: implicit Euler's operator on level 0 (pinned
// rows zero; twin: cpu::implicit::implicit_matvec), the gather over the level's incidence above.
fn implicit_mg_apply(i: u32, base: u32) -> vec3<f32> {
    let ui = implicit_mg_load(base + i);
    if (M.level == 0u) {
        let w = src[i].w;
        if (w == 0.0) {
            return vec3<f32>(0.0);
        }
        var y = ui * mass_diag(w);
        let e_end = csr[i + 1u];
        for (var e = csr[i]; e < e_end; e++) {
            let b1 = blocks_at(2u * e + 1u);
            y += sym6_apply(blocks_at(2u * e), b1, ui - implicit_mg_load(base + bitcast<u32>(b1.z)));
        }
        return y;
    }
    var y = sym_mul(sym_at(M.f_ground + 2u * i), ui);
    let k1 = implicit_mg_lists[M.f_inc_ptr + i + 1u];
    for (var k = implicit_mg_lists[M.f_inc_ptr + i]; k < k1; k++) {
        let e = implicit_mg_lists[M.f_inc + 2u * k];
        let o = implicit_mg_lists[M.f_inc + 2u * k + 1u];
        y += sym_mul(sym_at(M.f_edge + 2u * e), ui - implicit_mg_load(base + o));
    }
    return y;
}

// Level 0's inverse diagonal blocks (SpringMg::update's dinv0; 0 on pinned particles).
@compute @workgroup_size(WG)
fn implicit_mg_sum0(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= M.rows) { return; }
    let w = src[i].w;
    if (w == 0.0) {
        sym_put(M.f_dinv + 2u * i, Sym(vec4<f32>(0.0), vec4<f32>(0.0)));
        return;
    }
    let md = mass_diag(w);
    var d = Sym(vec4<f32>(md, md, md, 0.0), vec4<f32>(0.0));
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let b1 = blocks_at(2u * e + 1u);
        d = sym_add(d, Sym(blocks_at(2u * e), vec4<f32>(b1.x, b1.y, 0.0, 0.0)));
    }
    sym_put(M.f_dinv + 2u * i, sym_inv(d));
}

// The coarse level's node blocks (rows [0, nodes)) and edge blocks (rows beyond) from the fine level's.
@compute @workgroup_size(WG)
fn implicit_mg_sum(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r >= M.rows) { return; }
    var s = Sym(vec4<f32>(0.0), vec4<f32>(0.0));
    if (r < M.nodes) {
        let m1 = implicit_mg_lists[M.mem_ptr + r + 1u];
        for (var k = implicit_mg_lists[M.mem_ptr + r]; k < m1; k++) {
            s = sym_add(s, implicit_mg_fine_ground(implicit_mg_lists[M.mem + k]));
        }
        let g1 = implicit_mg_lists[M.gr_ptr + r + 1u];
        for (var k = implicit_mg_lists[M.gr_ptr + r]; k < g1; k++) {
            s = sym_add(s, implicit_mg_fine_edge(implicit_mg_lists[M.gr + k]));
        }
        sym_put(M.c_ground + 2u * r, s);
    } else {
        let c = r - M.nodes;
        let e1 = implicit_mg_lists[M.ed_ptr + c + 1u];
        for (var k = implicit_mg_lists[M.ed_ptr + c]; k < e1; k++) {
            s = sym_add(s, implicit_mg_fine_edge(implicit_mg_lists[M.ed + k]));
        }
        sym_put(M.c_edge + 2u * c, s);
    }
}

// The coarse level's inverse diagonal blocks.
@compute @workgroup_size(WG)
fn implicit_mg_dinv(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if (c >= M.rows) { return; }
    var d = sym_at(M.c_ground + 2u * c);
    let k1 = implicit_mg_lists[M.c_inc_ptr + c + 1u];
    for (var k = implicit_mg_lists[M.c_inc_ptr + c]; k < k1; k++) {
        d = sym_add(d, sym_at(M.c_edge + 2u * implicit_mg_lists[M.c_inc + 2u * k]));
    }
    sym_put(M.c_dinv + 2u * c, sym_inv(d));
}

// Writes block (r, c) of the dense matrix (3·nodes square, row-major), scaled by `sign`.
fn implicit_mg_dense_block(r: u32, c: u32, s: Sym, sign: f32, dim: u32) {
    let m = array<f32, 9>(s.a.x, s.a.w, s.b.x, s.a.w, s.a.y, s.b.y, s.b.x, s.b.y, s.a.z);
    for (var p = 0u; p < 3u; p++) {
        for (var q = 0u; q < 3u; q++) {
            implicit_mg_dense[(3u * r + p) * dim + 3u * c + q] = sign * m[3u * p + q];
        }
    }
}

// The last level (the coarse fields): its dense matrix and the Cholesky factor A = L Lᵀ in place (L in
// the lower triangle). One workgroup. A matrix that is not positive definite leaves NaN, which the
// PCG reports as a breakdown.
@compute @workgroup_size(WG)
fn implicit_mg_factor(@builtin(local_invocation_index) lid: u32) {
    let dim = 3u * M.nodes;
    for (var k = lid; k < dim * dim; k += WG) {
        implicit_mg_dense[k] = 0.0;
    }
    storageBarrier();
    for (var c = lid; c < M.nodes; c += WG) {
        var d = sym_at(M.c_ground + 2u * c);
        let k1 = implicit_mg_lists[M.c_inc_ptr + c + 1u];
        for (var k = implicit_mg_lists[M.c_inc_ptr + c]; k < k1; k++) {
            let b = sym_at(M.c_edge + 2u * implicit_mg_lists[M.c_inc + 2u * k]);
            d = sym_add(d, b);
            implicit_mg_dense_block(c, implicit_mg_lists[M.c_inc + 2u * k + 1u], b, -1.0, dim);
        }
        implicit_mg_dense_block(c, c, d, 1.0, dim);
    }
    storageBarrier();
    for (var k = 0u; k < dim; k++) {
        let lkk = sqrt(implicit_mg_dense[k * dim + k]);
        storageBarrier();
        for (var i = k + 1u + lid; i < dim; i += WG) {
            implicit_mg_dense[i * dim + k] /= lkk;
        }
        if (lid == 0u) {
            implicit_mg_dense[k * dim + k] = lkk;
        }
        storageBarrier();
        for (var i = k + 1u + lid; i < dim; i += WG) {
            let lik = implicit_mg_dense[i * dim + k];
            for (var j = k + 1u; j <= i; j++) {
                implicit_mg_dense[i * dim + j] -= lik * implicit_mg_dense[j * dim + k];
            }
        }
        storageBarrier();
    }
}

// Level 0: b = the PCG's r, and x = ωD⁻¹b.
@compute @workgroup_size(WG)
fn implicit_mg_down(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (load_status(lid) != 0u) { return; }
    let i = gid.x;
    if (i >= M.rows) { return; }
    let b = cg_vectors[seg(SEG_R, i)].xyz;
    implicit_mg_store(M.b + i, b);
    implicit_mg_store(M.x + i, sym_mul(sym_at(M.f_dinv + 2u * i), b) * M.omega);
}

// b_c = Σ over c's members of the fine residual b − A x, and x_c = ωD_c⁻¹b_c (the coarse level's first
// sweep from zero).
@compute @workgroup_size(WG)
fn implicit_mg_restrict(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (load_status(lid) != 0u) { return; }
    let c = gid.x;
    if (c >= M.rows) { return; }
    var s = vec3<f32>(0.0);
    let m1 = implicit_mg_lists[M.mem_ptr + c + 1u];
    for (var k = implicit_mg_lists[M.mem_ptr + c]; k < m1; k++) {
        let i = implicit_mg_lists[M.mem + k];
        s += implicit_mg_load(M.b + i) - implicit_mg_apply(i, M.x);
    }
    implicit_mg_store(M.cb + c, s);
    implicit_mg_store(M.cx + c, sym_mul(sym_at(M.c_dinv + 2u * c), s) * M.omega);
}

// The last level: x = A⁻¹b by the factor of implicit_mg_factor (one workgroup: a forward and a backward
// substitution, a barrier per unknown).
@compute @workgroup_size(WG)
fn implicit_mg_coarse(@builtin(local_invocation_index) lid: u32) {
    if (load_status(lid) != 0u) { return; }
    let dim = 3u * M.nodes;
    for (var i = lid; i < M.nodes; i += WG) {
        let b = implicit_mg_load(M.b + i);
        implicit_mg_y[3u * i] = b.x;
        implicit_mg_y[3u * i + 1u] = b.y;
        implicit_mg_y[3u * i + 2u] = b.z;
    }
    workgroupBarrier();
    // L y = b: implicit_mg_z holds y
    for (var k = 0u; k < dim; k++) {
        let yk = implicit_mg_y[k] / implicit_mg_dense[k * dim + k];
        if (lid == 0u) {
            implicit_mg_z[k] = yk;
        }
        for (var i = k + 1u + lid; i < dim; i += WG) {
            implicit_mg_y[i] -= implicit_mg_dense[i * dim + k] * yk;
        }
        workgroupBarrier();
    }
    // Lᵀ x = y: implicit_mg_y holds x
    for (var kk = 0u; kk < dim; kk++) {
        let k = dim - 1u - kk;
        let xk = implicit_mg_z[k] / implicit_mg_dense[k * dim + k];
        if (lid == 0u) {
            implicit_mg_y[k] = xk;
        }
        for (var i = lid; i < k; i += WG) {
            implicit_mg_z[i] -= implicit_mg_dense[k * dim + i] * xk;
        }
        workgroupBarrier();
    }
    for (var i = lid; i < M.nodes; i += WG) {
        implicit_mg_store(M.x + i, vec3<f32>(implicit_mg_y[3u * i], implicit_mg_y[3u * i + 1u], implicit_mg_y[3u * i + 2u]));
    }
}

// t = x + α x_c[agg(i)] (the over-corrected coarse correction; a pinned particle keeps t = x).
@compute @workgroup_size(WG)
fn implicit_mg_up(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (load_status(lid) != 0u) { return; }
    let i = gid.x;
    if (i >= M.rows) { return; }
    var t = implicit_mg_load(M.x + i);
    let c = implicit_mg_lists[M.agg + i];
    if (c != IMPLICIT_MG_NONE) {
        t += implicit_mg_load(M.cx + c) * M.alpha;
    }
    implicit_mg_store(M.t + i, t);
}

// x = t + ωD⁻¹(b − A t) of row i, stored at M.x (implicit_mg_post and implicit_mg_post_smooth).
fn post_smooth(i: u32) -> vec3<f32> {
    let b = implicit_mg_load(M.b + i);
    let x = implicit_mg_load(M.t + i) + sym_mul(sym_at(M.f_dinv + 2u * i), b - implicit_mg_apply(i, M.t)) * M.omega;
    implicit_mg_store(M.x + i, x);
    return x;
}

// On level 0 (M.slot < 2): the partials of r·z = b·x into slot M.slot, keeping the (r·r, b·b) that
// pcg_begin or pcg_update wrote there (the same workgroups).
fn post_partials(lid: u32, wid: u32, rz: f32) {
    let t = wg_reduce(lid, vec4<f32>(rz, 0.0, 0.0, 0.0));
    if (lid == 0u) {
        let k = M.slot * M.groups + wid;
        let old = partials[k];
        partials[k] = vec4<f32>(t.x, old.y, old.z, old.w);
    }
}

// x = t + ωD⁻¹(b − A t); on level 0 (M.slot < 2) also z = x in the PCG's vectors and the partials of
// r·z = b·x into slot M.slot.
@compute @workgroup_size(WG)
fn implicit_mg_post(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    if (load_status(lid) != 0u) { return; }
    let i = gid.x;
    var rz = 0.0;
    if (i < M.rows) {
        let x = post_smooth(i);
        if (M.slot < 2u) {
            cg_vectors[seg(SEG_Z, i)] = vec4<f32>(x, 0.0);
        }
        rz = dot(implicit_mg_load(M.b + i), x);
    }
    if (M.slot < 2u) {
        post_partials(lid, wid.x, rz);
    }
}

// implicit_mg_post in two dispatches, for a device that allows 8 storage buffers per shader stage (WebGPU's
// default): implicit_mg_post binds 9. The smoothing (which runs whatever the solve's status: it writes only
// the V-cycle's own vectors) ...
@compute @workgroup_size(WG)
fn implicit_mg_post_smooth(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < M.rows) {
        post_smooth(gid.x);
    }
}

// ... then, on level 0 only, z = x and the partials of r·z: the same numbers as implicit_mg_post's.
@compute @workgroup_size(WG)
fn implicit_mg_post_tail(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    if (load_status(lid) != 0u) { return; }
    let i = gid.x;
    var rz = 0.0;
    if (i < M.rows) {
        let x = implicit_mg_load(M.x + i);
        cg_vectors[seg(SEG_Z, i)] = vec4<f32>(x, 0.0);
        rz = dot(implicit_mg_load(M.b + i), x);
    }
    post_partials(lid, wid.x, rz);
}
