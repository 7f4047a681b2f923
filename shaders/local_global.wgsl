// Liu et al. 2013, "Fast Simulation of Mass-Spring Systems" (§3-4): implicit Euler as the minimisation
// of eq. 14 by block coordinate descent, in f32 on corrections. The twin of cpu::local_global (same
// kernel names; the bindings follow the CPU functions' argument order: model, step constants, q and v,
// y, x, r). Composed in front of shaders/pcg.wgsl: `operator_apply` is the global matrix
// A = M(1 + h d₀ + h² s) + h² L of the free particles (eq. 12 and 14, pinned columns eliminated).
//
// One local/global iteration (Liu §4): lg_local_residual (the local step fused with r = b − A xₖ per
// particle: each incident spring's d of eq. 10 formed where it is gathered, no d stored; it writes the
// PCG's right-hand side and Jacobi diagonal), a global solve of A δ = r (the PCG of pcg.wgsl,
// Chebyshev-Jacobi iterations lg_chebyshev (Wang 2015, eq. 12), or the host's f64 Cholesky which uploads
// δ into the PCG's solution vector), then lg_advance (xₖ₊₁ = xₖ + δ). Chebyshev-Jacobi's first iteration,
// which gathers nothing, is taken by lg_local_residual, and its last by lg_chebyshev_advance, which also
// advances x: a global step of b iterations is b − 1 dispatches. A step begins with lg_inertia
// (y = q + hαv, x = y) and ends with lg_velocity (v = (x − q)/h; pinned: x = q bit for bit, v = 0) and
// lg_report.
//
// Buffers: `src` is the state at the start of the step (q, v), `dst` the iterate x at [0, n) (w = 1/m,
// 0 when pinned) with y at [n, 2n) during the step and the new velocities there after lg_velocity.
// `lg_rows` holds the rows of A as a sliced ELL table of vec4<u32> packets (gpu::methods::local_global::rows): the packet
// offsets of the nb blocks of WG particles and the table's end (u32 words, padded to whole packets), the
// stencil if any, then per block of G packets a particle (its longest incidence list, four slots a
// packet) three planes of G·WG packets, packet-major so that a workgroup's loads of one packet are
// consecutive: the other end j, k bits and the signed rest length (+rest when the particle is the
// spring's a, −rest when it is b) of each incident spring in CSR order; padding slots are (i, 0, 0). The
// stencil is such a block, every lane's row the one that a lattice's interior particles share up to a
// shift, with j − i for j; a block of particles that all have that row has the stencil's offset and no
// rows of its own. A thread reads four slots a load and issues their four gathers together. `lg_work`
// holds the Chebyshev iterates (3 slots of n), the partial sums of ‖r‖² (two slots of G workgroups) and
// the report (‖r₀‖, ‖r_final‖, ratio, 0).

// Rust twin: gpu::base::layout::LgConsts.
struct LgConsts {
    fext: vec4<f32>,     // xyz: g + d₀ w + s c (per unit mass); w unused
    h: f32,              // step h
    alpha: f32,          // Liu §4.1's α = 1/(1 + h d₀)
    inertia: f32,        // 1 + h d₀
    mass_diag: f32,      // 1 + h d₀ + h² s
    n: u32,              // particles
    groups: u32,         // workgroups of a per-particle dispatch
    partials_base: u32,  // index in lg_work of the ‖r‖² partials (2 slots of `groups`)
    stats_base: u32,     // index in lg_work of the report
}

// Rust twin: gpu::base::layout::LgPass. One per dispatch that needs it, at a dynamic offset.
struct LgPass {
    k: u32,       // lg_chebyshev: the iteration k
    omega: f32,   // lg_chebyshev: ω_{k+1}
    slot: u32,    // lg_local_residual: partials slot (0: first residual, 1: the final one, 2: none); lg_advance: δ's slot (0..2 Chebyshev, 3 PCG/Cholesky)
    start: u32,   // lg_local_residual: 1 to take the first Chebyshev-Jacobi iteration too (δ₁ = D⁻¹ r into slot 1)
}

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> L: LgConsts;
@group(0) @binding(2) var<storage, read> lg_rows: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> lg_work: array<vec4<f32>>;
// The table's packets from SPLIT_VEC4 on (a placeholder where the first binding holds them all; the split
// size is src/gpu/base/alloc.rs split_bytes): tab.
@group(0) @binding(6) var<storage, read> lg_rows_1: array<vec4<u32>>;
@group(2) @binding(0) var<storage, read> K: LgPass;

// TABLES_SPLIT: whether the table spans both bindings (set per pipeline from the buffer,
// gpu::base::specialize::split_constant); without it `tab` reads `lg_rows` alone, with no branch (lavapipe runs the
// loads of both sides). The default keeps the branch, right for any model.
override TABLES_SPLIT: bool = true;

// Packet k of the table (`lg_rows` then `lg_rows_1`).
fn tab(k: u32) -> vec4<u32> {
    if (!TABLES_SPLIT) {
        return lg_rows[k];
    }
    if (k < SPLIT_VEC4) {
        return lg_rows[k];
    }
    return lg_rows_1[k - SPLIT_VEC4];
}

// Word k of the table's header.
fn tab_word(k: u32) -> u32 {
    return tab(k / 4u)[k % 4u];
}

// LG_PACKETS: every block has this many packets a particle (a uniform table, set per pipeline from
// gpu::methods::local_global::rows::LgRows::uniform_packets): a row is then found by arithmetic, or from one header word where
// there is a stencil, and the loops over its packets have a constant count, so that all of a row's loads
// can be issued at once. 0: the widths per block, from the header.
override LG_PACKETS: u32 = 0u;
// LG_STENCIL: the blocks whose offset is the stencil's (right after the header) read it, its j words
// j − i (gpu::methods::local_global::rows; only in a uniform table).
override LG_STENCIL: bool = false;

// Particle i's row: packet g of plane p at first + g·WG + p·plane; its j are the packet's words + base.
// Twin: gpu::methods::local_global::rows::Row.
struct LgRow {
    first: u32,
    packets: u32,
    plane: u32,
    base: u32,
}

// The packets of a row (the constant LG_PACKETS of a uniform table).
fn lg_packets(row: LgRow) -> u32 {
    if (LG_PACKETS != 0u) {
        return LG_PACKETS;
    }
    return row.packets;
}

// The packets between a row's planes (a constant in a uniform table).
fn lg_plane(row: LgRow) -> u32 {
    if (LG_PACKETS != 0u) {
        return LG_PACKETS * WG;
    }
    return row.plane;
}

// Particle i's row in the sliced ELL table (the stencil's, with base i, for a block that reads it). Twin:
// gpu::methods::local_global::rows::LgRows::row.
fn lg_row(i: u32) -> LgRow {
    let b = i / WG;
    let header = ((L.n + WG - 1u) / WG + 4u) / 4u;
    if (LG_PACKETS != 0u) {
        if (!LG_STENCIL) {
            return LgRow(header + b * 3u * LG_PACKETS * WG + i % WG, LG_PACKETS, LG_PACKETS * WG, 0u);
        }
        let o = tab_word(b);
        return LgRow(o + i % WG, LG_PACKETS, LG_PACKETS * WG, select(0u, i, o == header));
    }
    let o = tab_word(b);
    let plane = (tab_word(b + 1u) - o) / 3u;
    return LgRow(o + i % WG, plane / WG, plane, 0u);
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

// The local step fused with the global step's residual at x (Liu eq. 10 and 14, ∂g/∂x = 0), per particle:
// each incident spring's direction ±d_e = rest_e (x_i − x_j)/‖x_i − x_j‖ (eq. 10 and the lemma of §4; the
// sign of the table's rest when the ends coincide, so that d is r_s·(1, 0, 0) from a to b) is formed where
// it is gathered, and for a free i
//   r_i = M̃_i y_i + h² [(J d)_i + m_i (g + d₀ w + s c)] − m_i (1 + h d₀ + h² s) x_i − h² Σ_e k_e (x_i − x_j),
// evaluated as m_i (1 + h d₀)(y_i − x_i) − h² m_i s x_i + h² [Σ_e k_e (±d_e − (x_i − x_j)) + m_i f_ext]
// (the same sum, without the cancellation of two large terms in f32); 0 for a pinned i. Writes r with the
// Jacobi inverse diagonal 1/A_ii in its w (read by lg_chebyshev) and in D (the PCG's), zeroes the
// Chebyshev iterates δ₀ = δ₋₁ = 0, and the partial sums of ‖r‖² into slot K.slot (none for slot 2).
// With K.start it takes the first Chebyshev-Jacobi iteration instead of writing D and δ₋₁, which that
// solve does not read: from δ₀ = 0 with ω₁ = 1, lg_chebyshev's δ₁ = D⁻¹ r (twin:
// reference::local_global::lg_chebyshev_start) into slot 1.
// Twin: reference::local_global::lg_local_residual.
@compute @workgroup_size(WG)
fn lg_local_residual(
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
        // δ₋₁: a started solve's first sweep reads δ₀ and δ₁ alone, and writes this slot
        if (K.start == 0u) {
            lg_work[2u * n + i] = vec4<f32>(0.0);
        }
        if (xi4.w == 0.0) {
            pcg_set_rhs(i, vec3<f32>(0.0), vec3<f32>(0.0));
            if (K.start != 0u) {
                lg_work[n + i] = vec4<f32>(0.0);
            }
        } else {
            let h2 = L.h * L.h;
            let mi = 1.0 / xi4.w;
            let xi = xi4.xyz;
            var acc = vec3<f32>(0.0);
            var ksum = 0.0;
            let row = lg_row(i);
            for (var g = 0u; g < lg_packets(row); g++) {
                let e = row.first + g * WG;
                let j = tab(e) + vec4<u32>(row.base);
                let k = bitcast<vec4<f32>>(tab(e + lg_plane(row)));
                let rest = bitcast<vec4<f32>>(tab(e + 2u * lg_plane(row)));
                for (var c = 0u; c < 4u; c += 1u) {
                    let p = xi - dst[j[c]].xyz;
                    let l = length(p);
                    var d = vec3<f32>(rest[c], 0.0, 0.0);
                    if (l > EPS_LEN) {
                        d = p * (abs(rest[c]) / l);
                    }
                    acc += (d - p) * k[c];
                    ksum += k[c];
                }
            }
            let s = L.mass_diag - L.inertia; // h² s
            let r = (dst[n + i].xyz - xi) * (mi * L.inertia) - xi * (mi * s) + (acc + L.fext.xyz * mi) * h2;
            let inv_diag = 1.0 / (mi * L.mass_diag + h2 * ksum);
            // pcg_set_rhs, with D⁻¹ also in r's w (Chebyshev-Jacobi's, which needs no D: a started solve
            // writes δ₁ instead)
            cg_vectors[seg(SEG_R, i)] = vec4<f32>(r, inv_diag);
            if (K.start != 0u) {
                lg_work[n + i] = vec4<f32>(r * inv_diag, 0.0);
            } else {
                cg_vectors[seg(SEG_D, i)] = vec4<f32>(vec3<f32>(inv_diag), 0.0);
            }
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
    let row = lg_row(i);
    for (var g = 0u; g < lg_packets(row); g++) {
        let e = row.first + g * WG;
        let j = tab(e) + vec4<u32>(row.base);
        let k = bitcast<vec4<f32>>(tab(e + lg_plane(row)));
        for (var c = 0u; c < 4u; c += 1u) {
            var u_j: vec3<f32>;
            if (slot == 3u) {
                u_j = pcg_dir(j[c]);
            } else {
                u_j = lg_work[slot * L.n + j[c]].xyz;
            }
            acc += (u_i - u_j) * k[c];
        }
    }
    return u_i * (L.mass_diag / w) + acc * (L.h * L.h);
}

// The PCG's operator: the global matrix times its search direction.
fn operator_apply(i: u32, p_i: vec3<f32>) -> vec3<f32> {
    return lg_apply(i, p_i, 3u);
}

// One Chebyshev-accelerated Jacobi iteration on A δ = r (Wang 2015, eq. 12; twin:
// reference::local_global::lg_chebyshev): δ̂ = δ_k + D⁻¹(r − A δ_k), formed as the Jacobi sweep
// δ̂_i = D⁻¹_i (r_i + h² Σ_e k_e δ_k,j) (A's off-diagonal gathered, the diagonal cancelled: no read of δ_k,i
// or of the state), δ_{k+1} = ω_{k+1}(δ̂ − δ_{k−1}) + δ_{k−1}, with δ_k in slot k mod 3, δ_{k−1} in slot
// (k + 2) mod 3 and δ_{k+1} written to slot (k + 1) mod 3. D⁻¹ is r's w (lg_local_residual), 0 when pinned.
// δ_{k+1,i} of one Chebyshev-Jacobi iteration (lg_chebyshev's body).
fn cheb_sweep(i: u32, n: u32) -> vec3<f32> {
    let cur = (K.k % 3u) * n;
    let prev = lg_work[((K.k + 2u) % 3u) * n + i].xyz;
    var acc = vec3<f32>(0.0);
    let row = lg_row(i);
    for (var g = 0u; g < lg_packets(row); g++) {
        let e = row.first + g * WG;
        let j = tab(e) + vec4<u32>(cur + row.base);
        let k = bitcast<vec4<f32>>(tab(e + lg_plane(row)));
        acc += lg_work[j.x].xyz * k.x + lg_work[j.y].xyz * k.y + lg_work[j.z].xyz * k.z + lg_work[j.w].xyz * k.w;
    }
    let rd = cg_vectors[seg(SEG_R, i)];
    let hat = (rd.xyz + acc * (L.h * L.h)) * rd.w;
    return (hat - prev) * K.omega + prev;
}

@compute @workgroup_size(WG)
fn lg_chebyshev(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    lg_work[((K.k + 1u) % 3u) * n + i] = vec4<f32>(cheb_sweep(i, n), 0.0);
}

// The last Chebyshev-Jacobi iteration of a global step fused with lg_advance: x_{k+1} = x_k + δ_{k+1}
// (the sweep reads no x, so x is written in place; a pinned particle is not touched, and its δ is 0).
// δ_{k+1} is not stored: nothing reads it. Twin: reference::local_global::lg_chebyshev_advance.
@compute @workgroup_size(WG)
fn lg_chebyshev_advance(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    let delta = cheb_sweep(i, n);
    let x = dst[i];
    if (x.w == 0.0) { return; }
    dst[i] = vec4<f32>(x.xyz + delta, x.w);
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
