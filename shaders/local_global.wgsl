// Liu et al. 2013, "Fast Simulation of Mass-Spring Systems" (§3-4): implicit Euler as the minimisation
// of eq. 14 by block coordinate descent, in f32 on corrections. The twin of cpu::local_global (same
// kernel names; the bindings follow the CPU functions' argument order: model, step constants, q and v,
// y, d, x, r). Composed in front of shaders/pcg.wgsl: `operator_apply` is the global matrix
// A = M(1 + h d₀ + h² s) + h² L of the free particles (eq. 12 and 14, pinned columns eliminated).
//
// One local/global iteration (Liu §4): lg_local (d per spring, eq. 10), lg_residual (r = b − A xₖ per
// particle, with J d gathered over the CSR incidence lists; it writes the PCG's right-hand side and
// Jacobi diagonal), a global solve of A δ = r (the PCG of pcg.wgsl, Chebyshev-Jacobi iterations
// lg_chebyshev (Wang 2015, eq. 12), or the host's f64 Cholesky which uploads δ into the PCG's solution
// vector), then lg_advance (xₖ₊₁ = xₖ + δ). A step begins with lg_inertia (y = q + hαv, x = y) and ends
// with lg_velocity (v = (x − q)/h; pinned: x = q bit for bit, v = 0) and lg_report.
//
// Buffers: `src` is the state at the start of the step (q, v), `dst` the iterate x at [0, n) (w = 1/m,
// 0 when pinned) with y at [n, 2n) during the step and the new velocities there after lg_velocity.
// `csr` holds the CSR offsets (n + 1) and then Liu's tables: the incidence entries 2·spring + side
// (the CPU's `Incidence::entries`) and the springs (a, b, rest bits, k bits), at the bases in `L`.
// `lg_work` holds the Chebyshev iterates (3 slots of n), the partial sums of ‖r‖² (two slots of G
// workgroups) and the report (‖r₀‖, ‖r_final‖, ratio, 0); `lg_dirs` holds d (one per spring).

// Rust twin: gpu::layout::LgConsts.
struct LgConsts {
    fext: vec4<f32>,     // xyz: g + d₀ w + s c (per unit mass); w unused
    h: f32,              // step h
    alpha: f32,          // Liu §4.1's α = 1/(1 + h d₀)
    inertia: f32,        // 1 + h d₀
    mass_diag: f32,      // 1 + h d₀ + h² s
    n: u32,              // particles
    n_springs: u32,      // springs
    groups: u32,         // workgroups of a per-particle dispatch
    entries_base: u32,   // index in csr of the incidence entries
    springs_base: u32,   // index in csr of the spring table (4 words per spring)
    d_base: u32,         // index in lg_dirs of d (0)
    partials_base: u32,  // index in lg_work of the ‖r‖² partials (2 slots of `groups`)
    stats_base: u32,     // index in lg_work of the report
}

// Rust twin: gpu::layout::LgPass. One per dispatch that needs it, at a dynamic offset.
struct LgPass {
    k: u32,       // lg_chebyshev: the iteration k
    omega: f32,   // lg_chebyshev: ω_{k+1}
    slot: u32,    // lg_residual: partials slot (0: first residual, 1: the final one, 2: none); lg_advance: δ's slot (0..2 Chebyshev, 3 PCG/Cholesky)
    _pad: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<uniform> L: LgConsts;
@group(0) @binding(2) var<storage, read> nbr: array<Nbr>;
@group(0) @binding(3) var<storage, read> csr: array<u32>;
@group(0) @binding(4) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> lg_work: array<vec4<f32>>;
// The incidence records from SPLIT_VEC4 on and the tables from word 4·SPLIT_VEC4 on (placeholders where
// the first binding holds them all; the split size is src/gpu/alloc.rs split_bytes): nbr_at, tab.
@group(0) @binding(7) var<storage, read> nbr_1: array<Nbr>;
@group(0) @binding(8) var<storage, read> csr_1: array<u32>;
// The local step's directions d, one per spring (at L.d_base): a buffer of their own, so that lg_work
// keeps to 3n + 2·groups + 1 vec4 and each stays under the binding limit to 8.4 M springs.
@group(0) @binding(9) var<storage, read_write> lg_dirs: array<vec4<f32>>;
@group(2) @binding(0) var<uniform> K: LgPass;

// TABLES_SPLIT: whether the tables span both bindings (set per pipeline from the buffer,
// gpu::specialize::split_constant); without it `tab` reads `csr` alone, with no branch (lavapipe runs the
// loads of both sides). The default keeps the branch, right for any model.
override TABLES_SPLIT: bool = true;

// Word k of the tables (`csr` then `csr_1`).
fn tab(k: u32) -> u32 {
    if (!TABLES_SPLIT) {
        return csr[k];
    }
    if (k < 4u * SPLIT_VEC4) {
        return csr[k];
    }
    return csr_1[k - 4u * SPLIT_VEC4];
}

// The spring of incidence entry e and the sign of its term in J d (twin: cpu::local_global::entry_spring).
fn lg_entry(e: u32) -> vec2<u32> {
    let code = tab(L.entries_base + e);
    return vec2<u32>(code >> 1u, code & 1u);
}

// The damped inertia y = q + h α v (Liu §4.1) plus h²α a_fields(q), and x = y to start from; pinned:
// y = x = q (bit for bit).
@compute @workgroup_size(WG)
fn lg_inertia(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    let q = src[i];
    if (q.w == 0.0) {
        dst[i] = q;
        dst[n + i] = vec4<f32>(q.xyz, 0.0);
        return;
    }
    var y = q.xyz + src[n + i].xyz * (L.h * L.alpha);
    // the point fields' external force h² f_ext of Liu eq. 9, over the inertia weight (twin: fields_inertia)
    if (P.n_fields != 0u) {
        y += field_accel(q.xyz) * (L.h * L.h * L.alpha);
    }
    dst[i] = vec4<f32>(y, q.w);
    dst[n + i] = vec4<f32>(y, 0.0);
}

// The local step, one thread per spring (Liu eq. 10 and the lemma of §4): d_s = r_s (x_a − x_b)/‖x_a − x_b‖,
// r_s·(1, 0, 0) when the endpoints coincide.
@compute @workgroup_size(WG)
// Dispatched as rows of 65535 workgroups (gpu::layout::grid) when the springs need more than one.
fn lg_local(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x + gid.y * (65535u * WG);
    if (s >= L.n_springs) { return; }
    let base = L.springs_base + 4u * s;
    let a = tab(base);
    let b = tab(base + 1u);
    let rest = bitcast<f32>(tab(base + 2u));
    let p = dst[a].xyz - dst[b].xyz;
    let l = length(p);
    var d = vec3<f32>(rest, 0.0, 0.0);
    if (l > EPS_LEN) {
        d = p * (rest / l);
    }
    lg_dirs[L.d_base + s] = vec4<f32>(d, 0.0);
}

// The global step's residual at x (Liu eq. 14, ∂g/∂x = 0), per particle: for a free i
//   r_i = M̃_i y_i + h² [(J d)_i + m_i (g + d₀ w + s c)] − m_i (1 + h d₀ + h² s) x_i − h² Σ_e k_e (x_i − x_j),
// evaluated as m_i (1 + h d₀)(y_i − x_i) − h² m_i s x_i + h² [Σ_e k_e (±d_e − (x_i − x_j)) + m_i f_ext]
// (the same sum, without the cancellation of two large terms in f32); 0 for a pinned i. Writes r and the
// Jacobi inverse diagonal 1/A_ii for the global solve, zeroes the Chebyshev iterates δ₀ = δ₋₁ = 0, and
// the partial sums of ‖r‖² into slot K.slot (none for slot 2).
@compute @workgroup_size(WG)
fn lg_residual(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    let n = L.n;
    var rr = 0.0;
    if (i < n) {
        let xi4 = dst[i];
        lg_work[i] = vec4<f32>(0.0);
        lg_work[2u * n + i] = vec4<f32>(0.0);
        if (xi4.w == 0.0) {
            pcg_set_rhs(i, vec3<f32>(0.0), vec3<f32>(0.0));
        } else {
            let h2 = L.h * L.h;
            let mi = 1.0 / xi4.w;
            let xi = xi4.xyz;
            var acc = vec3<f32>(0.0);
            var ksum = 0.0;
            let e_end = tab(i + 1u);
            for (var e = tab(i); e < e_end; e++) {
                let nb = nbr_at(e);
                let se = lg_entry(e);
                var d = lg_dirs[L.d_base + se.x].xyz;
                if (se.y != 0u) {
                    d = -d;
                }
                acc += (d - (xi - dst[nb.j].xyz)) * nb.k;
                ksum += nb.k;
            }
            let s = L.mass_diag - L.inertia; // h² s
            let r = (dst[n + i].xyz - xi) * (mi * L.inertia) - xi * (mi * s) + (acc + L.fext.xyz * mi) * h2;
            pcg_set_rhs(i, r, vec3<f32>(1.0 / (mi * L.mass_diag + h2 * ksum)));
            rr = dot(r, r);
        }
    }
    // only the first and the last residual of a step are reported (K is uniform: so is this branch)
    if (K.slot < 2u) {
        let t = wg_reduce(lid, vec4<f32>(rr, 0.0, 0.0, 0.0));
        if (lid == 0u) {
            lg_work[L.partials_base + K.slot * L.groups + wid.x] = t;
        }
    }
}

// (A u)_i = m_i (1 + h d₀ + h² s) u_i + h² Σ_e k_e (u_i − u_j) (twin: cpu::local_global::lg_apply), with u_j
// from the PCG's direction (slot 3) or Chebyshev slot `slot`. Pinned rows are 0; the pinned columns are
// eliminated because every iterate is 0 on pinned particles (their right-hand side and inverse diagonal
// are 0 and the solves start from 0).
fn lg_apply(i: u32, u_i: vec3<f32>, slot: u32) -> vec3<f32> {
    let w = dst[i].w;
    if (w == 0.0) {
        return vec3<f32>(0.0);
    }
    var acc = vec3<f32>(0.0);
    let e_end = tab(i + 1u);
    for (var e = tab(i); e < e_end; e++) {
        let nb = nbr_at(e);
        var u_j: vec3<f32>;
        if (slot == 3u) {
            u_j = pcg_dir(nb.j);
        } else {
            u_j = lg_work[slot * L.n + nb.j].xyz;
        }
        acc += (u_i - u_j) * nb.k;
    }
    return u_i * (L.mass_diag / w) + acc * (L.h * L.h);
}

// The PCG's operator: the global matrix times its search direction.
fn operator_apply(i: u32, p_i: vec3<f32>) -> vec3<f32> {
    return lg_apply(i, p_i, 3u);
}

// One Chebyshev-accelerated Jacobi iteration on A δ = r (Wang 2015, eq. 12; twin: the loop body of
// cpu::local_global::chebyshev_solve): δ̂ = δ_k + D⁻¹(r − A δ_k), δ_{k+1} = ω_{k+1}(δ̂ − δ_{k−1}) + δ_{k−1},
// with δ_k in slot k mod 3, δ_{k−1} in slot (k + 2) mod 3 and δ_{k+1} written to slot (k + 1) mod 3.
@compute @workgroup_size(WG)
fn lg_chebyshev(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    let cur = K.k % 3u;
    let dk = lg_work[cur * n + i].xyz;
    let prev = lg_work[((K.k + 2u) % 3u) * n + i].xyz;
    let ad = lg_apply(i, dk, cur);
    let r = cg_vectors[seg(SEG_R, i)].xyz;
    let hat = dk + (r - ad) * cg_vectors[seg(SEG_D, i)].xyz;
    lg_work[((K.k + 1u) % 3u) * n + i] = vec4<f32>((hat - prev) * K.omega + prev, 0.0);
}

// Chebyshev on the multigrid-preconditioned iteration (twin: cpu::local_global::chebyshev_solve_with),
// first half: s = r − A δ_k into the PCG's p0 (unused by this solver), the V-cycle's right-hand side.
@compute @workgroup_size(WG)
fn lg_cheb_residual(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= L.n) { return; }
    let cur = K.k % 3u;
    let ad = lg_apply(i, lg_work[cur * L.n + i].xyz, cur);
    cg_vectors[seg(SEG_P, i)] = vec4<f32>(cg_vectors[seg(SEG_R, i)].xyz - ad, 0.0);
}

// Second half, after the V-cycle left z = B s in the PCG's z: δ̂ = δ_k + z, δ_{k+1} = ω_{k+1}(δ̂ − δ_{k−1})
// + δ_{k−1}, in the slots of lg_chebyshev.
@compute @workgroup_size(WG)
fn lg_cheb_combine(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    let dk = lg_work[(K.k % 3u) * n + i].xyz;
    let prev = lg_work[((K.k + 2u) % 3u) * n + i].xyz;
    let hat = dk + cg_vectors[seg(SEG_Z, i)].xyz;
    lg_work[((K.k + 1u) % 3u) * n + i] = vec4<f32>((hat - prev) * K.omega + prev, 0.0);
}

// x_{k+1} = x_k + δ, δ from Chebyshev slot K.slot or (3) the PCG's solution, which the Cholesky path
// uploads into. Pinned particles are not touched.
@compute @workgroup_size(WG)
fn lg_advance(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= L.n) { return; }
    let x = dst[i];
    if (x.w == 0.0) { return; }
    var delta: vec3<f32>;
    if (K.slot == 3u) {
        delta = pcg_solution(i);
    } else {
        delta = lg_work[K.slot * L.n + i].xyz;
    }
    dst[i] = vec4<f32>(x.xyz + delta, x.w);
}

// The end of a step (Liu §4, implicit Euler): v = (x − q)/h; pinned particles: x = q bit for bit, v = 0.
@compute @workgroup_size(WG)
fn lg_velocity(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    let q = src[i];
    if (q.w == 0.0) {
        dst[i] = q;
        dst[n + i] = vec4<f32>(0.0);
        return;
    }
    dst[n + i] = vec4<f32>((dst[i].xyz - q.xyz) / L.h, 0.0);
}

// One workgroup: ‖r₀‖ = ‖∇g(y)‖ (the first residual of the step, slot 0), ‖r‖ = ‖∇g(x)‖ (the last one, slot 1,
// with the local step refreshed at the final x) and their ratio, the CPU's LgReport::residual (eq. 7).
@compute @workgroup_size(WG)
fn lg_report(@builtin(local_invocation_index) lid: u32) {
    var s = vec4<f32>(0.0);
    for (var g = lid; g < L.groups; g += WG) {
        s += vec4<f32>(lg_work[L.partials_base + g].x, lg_work[L.partials_base + L.groups + g].x, 0.0, 0.0);
    }
    let t = wg_reduce(lid, s);
    if (lid == 0u) {
        let r0 = sqrt(t.x);
        let r1 = sqrt(t.y);
        var ratio = 0.0;
        if (r0 > 0.0) {
            ratio = r1 / r0;
        }
        lg_work[L.stats_base] = vec4<f32>(r0, r1, ratio, 0.0);
    }
}
