// Smoothed-aggregation multigrid (Vaněk, Mandel & Brezina 1996): one V(1,1)-cycle z = B r as the PCG's
// preconditioner for Liu's constant global matrix. The twin of cpu::multigrid::Multigrid::apply, kernel
// for kernel (same phases, same order of the sums within a row).
//
// Per level l (finest first), with that level's right-hand side b, iterate x and temporary t:
//   mg_down      x = ωD⁻¹b, t = b − A(ωD⁻¹b)           (rows of l)
//   mg_restrict  b_{l+1} = R t                          (rows of l + 1)
// then on the last level
//   mg_coarse    x = A⁻¹b by its inverse (a CSR matrix) (rows of the last level)
// and back up
//   mg_up        t = x + P x_{l+1}                       (rows of l)
//   mg_post      x = t + ωD⁻¹(b − A t)                   (rows of l)
// Level 0 works in the PCG's vectors: b = r, x = z (the result), t = Ap (free between pcg_update and the
// next pcg_matvec). On level 0, mg_post also writes the partial sums of r·z into the PCG's slot, keeping
// the (r·r, b·b) that pcg_begin or pcg_update wrote there (the same workgroups, so the same partials).
// Once the PCG has stopped (status word ≠ 0) every kernel is a no-op. For Chebyshev (no PCG, MgPass.gate
// = 0) level 0's b is the PCG's p0 instead (local_global_cheb_residual writes s = r − Aδ there) and no partials are
// written.
//
// Matrices live in `mat` as words: CSR offsets (rows + 1, relative to the column array), columns, and
// values as f32 bits (the last level's inverse too). Vectors are addressed in one index space:
// below MgPass.cg_n in the PCG's `cg_vectors`, the coarser levels' vectors above it in `mgv`.

// Rust twin: gpu::base::layout::MgPass. One per dispatch, at a dynamic offset.
struct MgPass {
    rows: u32,    // rows of this dispatch
    m_ptr: u32,   // the dispatch's matrix (A; R for mg_restrict; P for mg_up; A⁻¹ for mg_coarse): offsets
    m_col: u32,   // its columns
    m_val: u32,   // its values (f32 bits)
    wdinv: u32,   // ω/a_ii per row (f32 bits)
    b: u32,       // this level's b
    x: u32,       // this level's x
    t: u32,       // this level's t
    other: u32,   // mg_restrict: b of the next level (written); mg_up: x of the next level (read)
    cg_n: u32,    // vectors below this index are in cg_vectors
    slot: u32,    // mg_post on level 0: the partials slot of r·z; 2: none
    groups: u32,  // the PCG's workgroups (partials per slot)
    gate: u32,    // 1: a no-op once the PCG has stopped (preconditioning the PCG); 0: always (Chebyshev)
    _pad1: u32,
    _pad2: u32,
    _pad3: u32,
}

@group(0) @binding(0) var<storage, read> mat: array<u32>;
@group(0) @binding(1) var<storage, read_write> cg_vectors: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> mgv: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> cg_state: array<atomic<u32>, 8>;
@group(1) @binding(0) var<storage, read> M: MgPass;
// The matrix words from 4·SPLIT_VEC4 on (a placeholder when `mat` holds them all; the split size is
// src/gpu/base/alloc.rs split_bytes): mat_at.
@group(0) @binding(5) var<storage, read> mat_1: array<u32>;

// Word k of the matrices (`mat` then `mat_1`).
fn mat_at(k: u32) -> u32 {
    if (k < 4u * SPLIT_VEC4) {
        return mat[k];
    }
    return mat_1[k - 4u * SPLIT_VEC4];
}

var<workgroup> wg_status: u32;

fn vload(k: u32) -> vec3<f32> {
    if (k < M.cg_n) {
        return cg_vectors[k].xyz;
    }
    return mgv[k - M.cg_n].xyz;
}

fn vstore(k: u32, v: vec3<f32>) {
    if (k < M.cg_n) {
        cg_vectors[k] = vec4<f32>(v, 0.0);
    } else {
        mgv[k - M.cg_n] = vec4<f32>(v, 0.0);
    }
}

fn matf(k: u32) -> f32 {
    return bitcast<f32>(mat_at(k));
}

// Σ_j m_ij u_{base + j} over row i of the dispatch's matrix.
fn row_dot(i: u32, base: u32) -> vec3<f32> {
    var s = vec3<f32>(0.0);
    let e1 = mat_at(M.m_ptr + i + 1u);
    for (var e = mat_at(M.m_ptr + i); e < e1; e++) {
        s += vload(base + mat_at(M.m_col + e)) * matf(M.m_val + e);
    }
    return s;
}

// Whether the PCG this V-cycle preconditions has stopped (uniform in the workgroup); never for Chebyshev.
fn stopped(lid: u32) -> bool {
    if (M.gate == 0u) {
        return false;
    }
    if (lid == 0u) {
        wg_status = atomicLoad(&cg_state[0]);
    }
    return workgroupUniformLoad(&wg_status) != 0u;
}

// x = ωD⁻¹b, t = b − A(ωD⁻¹b).
@compute @workgroup_size(WG)
fn mg_down(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (stopped(lid)) { return; }
    let i = gid.x;
    if (i >= M.rows) { return; }
    let b = vload(M.b + i);
    var s = b;
    let e1 = mat_at(M.m_ptr + i + 1u);
    for (var e = mat_at(M.m_ptr + i); e < e1; e++) {
        let j = mat_at(M.m_col + e);
        s -= vload(M.b + j) * (matf(M.m_val + e) * matf(M.wdinv + j));
    }
    vstore(M.x + i, b * matf(M.wdinv + i));
    vstore(M.t + i, s);
}

// b_{l+1} = R t (rows of the next level).
@compute @workgroup_size(WG)
fn mg_restrict(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (stopped(lid)) { return; }
    let c = gid.x;
    if (c >= M.rows) { return; }
    vstore(M.other + c, row_dot(c, M.t));
}

// The last level: x = A⁻¹b by the inverse (dense over the live rows, stored as CSR; when the hierarchy has
// one level, this is level 0 and it writes the r·z partials like mg_post).
@compute @workgroup_size(WG)
fn mg_coarse(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    if (stopped(lid)) { return; }
    let i = gid.x;
    var rz = 0.0;
    if (i < M.rows) {
        rz = put_x(i, row_dot(i, M.b));
    }
    write_rz(lid, wid.x, rz);
}

// t = x + P x_{l+1}.
@compute @workgroup_size(WG)
fn mg_up(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (stopped(lid)) { return; }
    let i = gid.x;
    if (i >= M.rows) { return; }
    vstore(M.t + i, vload(M.x + i) + row_dot(i, M.other));
}

// x = t + ωD⁻¹(b − A t); on level 0 also the partials of r·z = b·x into slot M.slot.
@compute @workgroup_size(WG)
fn mg_post(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    if (stopped(lid)) { return; }
    let i = gid.x;
    var rz = 0.0;
    if (i < M.rows) {
        rz = put_x(i, vload(M.t + i) + (vload(M.b + i) - row_dot(i, M.t)) * matf(M.wdinv + i));
    }
    write_rz(lid, wid.x, rz);
}

// Stores the level's result x_i and returns b_i·x_i (r·z on level 0).
fn put_x(i: u32, x: vec3<f32>) -> f32 {
    vstore(M.x + i, x);
    return dot(vload(M.b + i), x);
}

// Level 0 (M.slot < 2): the workgroup's r·z into the PCG's partials slot, keeping its (r·r, b·b).
fn write_rz(lid: u32, wid: u32, rz: f32) {
    if (M.slot < 2u) {
        let t = wg_reduce(lid, vec4<f32>(rz, 0.0, 0.0, 0.0));
        if (lid == 0u) {
            let k = M.slot * M.groups + wid;
            let old = partials[k];
            partials[k] = vec4<f32>(t.x, old.y, old.z, old.w);
        }
    }
}
