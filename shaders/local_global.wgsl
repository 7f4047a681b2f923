// Liu et al. 2013, "Fast Simulation of Mass-Spring Systems" (§3-4): implicit Euler as the minimisation
// of eq. 14 by block coordinate descent, in f32 on corrections. The twin of cpu::local_global (same
// kernel names; the bindings follow the CPU functions' argument order: model, step constants, q and v,
// y, x, r). Composed in front of shaders/pcg.wgsl: `operator_apply` is the global matrix
// A = M(1 + h d₀ + h² s) + h² L of the free particles (eq. 12 and 14, pinned columns eliminated).
//
// One local/global iteration (Liu §4): local_global_local_residual (the local step fused with r = b − A xₖ per
// particle: each incident spring's d of eq. 10 formed where it is gathered, no d stored; it writes the
// PCG's right-hand side and Jacobi diagonal), a global solve of A δ = r (the PCG of pcg.wgsl,
// Chebyshev-Jacobi iterations local_global_chebyshev (Wang 2015, eq. 12), or the host's f64 Cholesky which uploads
// δ into the PCG's solution vector), then local_global_advance (xₖ₊₁ = xₖ + δ). Chebyshev-Jacobi's first iteration,
// which gathers nothing, is taken by local_global_local_residual, and its last by local_global_chebyshev_advance, which also
// advances x: a global step of b iterations is b − 1 dispatches. A step begins with local_global_inertia
// (y = q + hαv, x = y) and ends with local_global_velocity (v = (x − q)/h; pinned: x = q bit for bit, v = 0) and
// local_global_report.
//
// Buffers: `src` is the state at the start of the step (q, v), `dst` the iterate x at [0, n) (w = 1/m,
// 0 when pinned) with y at [n, 2n) during the step and the new velocities there after local_global_velocity.
// `local_global_rows` holds the rows of A as a sliced ELL table of vec4<u32> packets (gpu::methods::local_global::rows): the packet
// offsets of the nb blocks of WG particles and the table's end (u32 words, padded to whole packets), the
// stencil if any, then per block of G packets a particle (its longest incidence list, four slots a
// packet) three planes of G·WG packets, packet-major so that a workgroup's loads of one packet are
// consecutive: the other end j, k bits and the signed rest length (+rest when the particle is the
// spring's a, −rest when it is b) of each incident spring in CSR order; padding slots are (i, 0, 0). The
// stencil is such a block, every lane's row the one that a lattice's interior particles share up to a
// shift, with j − i for j; a block of particles that all have that row has the stencil's offset and no
// rows of its own. A thread reads four slots a load and issues their four gathers together. `local_global_work`
// holds the Chebyshev iterates (3 slots of n), the partial sums of ‖r‖² (two slots of G workgroups) and
// the report (‖r₀‖, ‖r_final‖, ratio, 0).

// Rust twin: gpu::base::layout::LocalGlobalConsts.
struct LocalGlobalConsts {
    fext: vec4<f32>,     // xyz: g + d₀ w + s c (per unit mass); w unused
    h: f32,              // step h
    alpha: f32,          // Liu §4.1's α = 1/(1 + h d₀)
    inertia: f32,        // 1 + h d₀
    mass_diag: f32,      // 1 + h d₀ + h² s
    n: u32,              // particles
    groups: u32,         // workgroups of a per-particle dispatch
    partials_base: u32,  // index in local_global_work of the ‖r‖² partials (2 slots of `groups`)
    stats_base: u32,     // index in local_global_work of the report
}

// Rust twin: gpu::base::layout::LocalGlobalPass. One per dispatch that needs it, at a dynamic offset.
struct LocalGlobalPass {
    k: u32,       // local_global_chebyshev: the iteration k
    omega: f32,   // local_global_chebyshev: ω_{k+1}
    slot: u32,    // local_global_local_residual: partials slot (0: first residual, 1: the final one, 2: none); local_global_advance: δ's slot (0..2 Chebyshev, 3 PCG/Cholesky)
    start: u32,   // local_global_local_residual: 1 to take the first Chebyshev-Jacobi iteration too (δ₁ = D⁻¹ r into slot 1)
}

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> L: LocalGlobalConsts;
@group(0) @binding(2) var<storage, read> local_global_rows: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> local_global_work: array<vec4<f32>>;
// The table's packets from SPLIT_VEC4 on (a placeholder where the first binding holds them all; the split
// size is src/gpu/base/alloc.rs split_bytes): tab.
@group(0) @binding(6) var<storage, read> local_global_rows_1: array<vec4<u32>>;
@group(2) @binding(0) var<storage, read> K: LocalGlobalPass;
// The contacts held through the global solves (twin: reference::contact; written by collide.wgsl's
// collide_positions): at i (n̂, state: < 0 none, ≥ 0 held, after the last residual the friction's
// speed loss), at n + i (the collider's velocity u, μ), at 2n + i (n̂·r of the step's residual, 1 when
// the last solve released it, 0, 0). A placeholder without colliders.
@group(0) @binding(7) var<storage, read_write> contacts: array<vec4<f32>>;

// HELD_CONTACTS: the model has colliders (set per pipeline); without it nothing below reads `contacts`.
override HELD_CONTACTS: bool = false;

// S v at particle i: v without its part along a held contact's normal (twin: reference::contact::contact_filter).
fn contact_filter(i: u32, v: vec3<f32>) -> vec3<f32> {
    if (HELD_CONTACTS) {
        let c = contacts[i];
        if (c.w >= 0.0) {
            return v - c.xyz * dot(c.xyz, v);
        }
    }
    return v;
}

// TABLES_SPLIT: whether the table spans both bindings (set per pipeline from the buffer,
// gpu::base::specialize::split_constant); without it `tab` reads `local_global_rows` alone, with no branch (lavapipe runs the
// loads of both sides). The default keeps the branch, right for any model.
override TABLES_SPLIT: bool = true;

// Packet k of the table (`local_global_rows` then `local_global_rows_1`).
fn tab(k: u32) -> vec4<u32> {
    if (!TABLES_SPLIT) {
        return local_global_rows[k];
    }
    if (k < SPLIT_VEC4) {
        return local_global_rows[k];
    }
    return local_global_rows_1[k - SPLIT_VEC4];
}

// Word k of the table's header.
fn tab_word(k: u32) -> u32 {
    return tab(k / 4u)[k % 4u];
}

// LOCAL_GLOBAL_PACKETS: every block has this many packets a particle (a uniform table, set per pipeline from
// gpu::methods::local_global::rows::LocalGlobalRows::uniform_packets): a row is then found by arithmetic, or from one header word where
// there is a stencil, and the loops over its packets have a constant count, so that all of a row's loads
// can be issued at once. 0: the widths per block, from the header.
override LOCAL_GLOBAL_PACKETS: u32 = 0u;
// LOCAL_GLOBAL_STENCIL: the blocks whose offset is the stencil's (right after the header) read it, its j words
// j − i (gpu::methods::local_global::rows; only in a uniform table).
override LOCAL_GLOBAL_STENCIL: bool = false;

// Particle i's row: packet g of plane p at first + g·WG + p·plane; its j are the packet's words + base.
// Twin: gpu::methods::local_global::rows::Row.
struct LocalGlobalRow {
    first: u32,
    packets: u32,
    plane: u32,
    base: u32,
}

// The packets of a row (the constant LOCAL_GLOBAL_PACKETS of a uniform table).
fn local_global_packets(row: LocalGlobalRow) -> u32 {
    if (LOCAL_GLOBAL_PACKETS != 0u) {
        return LOCAL_GLOBAL_PACKETS;
    }
    return row.packets;
}

// The packets between a row's planes (a constant in a uniform table).
fn local_global_plane(row: LocalGlobalRow) -> u32 {
    if (LOCAL_GLOBAL_PACKETS != 0u) {
        return LOCAL_GLOBAL_PACKETS * WG;
    }
    return row.plane;
}

// Particle i's row in the sliced ELL table (the stencil's, with base i, for a block that reads it). Twin:
// gpu::methods::local_global::rows::LocalGlobalRows::row.
fn local_global_row(i: u32) -> LocalGlobalRow {
    let b = i / WG;
    let header = ((L.n + WG - 1u) / WG + 4u) / 4u;
    if (LOCAL_GLOBAL_PACKETS != 0u) {
        if (!LOCAL_GLOBAL_STENCIL) {
            return LocalGlobalRow(header + b * 3u * LOCAL_GLOBAL_PACKETS * WG + i % WG, LOCAL_GLOBAL_PACKETS, LOCAL_GLOBAL_PACKETS * WG, 0u);
        }
        let o = tab_word(b);
        return LocalGlobalRow(o + i % WG, LOCAL_GLOBAL_PACKETS, LOCAL_GLOBAL_PACKETS * WG, select(0u, i, o == header));
    }
    let o = tab_word(b);
    let plane = (tab_word(b + 1u) - o) / 3u;
    return LocalGlobalRow(o + i % WG, plane / WG, plane, 0u);
}

// The damped inertia y = q + h α v (Liu §4.1) plus h²α a_fields(q), and x = y to start from; pinned:
// y = x = q (bit for bit).
@compute @workgroup_size(WG)
fn local_global_inertia(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    let q = src[i];
    if (HELD_CONTACTS) {
        contacts[i] = vec4<f32>(0.0, 0.0, 0.0, -1.0);
    }
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
// Jacobi inverse diagonal 1/A_ii in its w (read by local_global_chebyshev) and in D (the PCG's), zeroes the
// Chebyshev iterates δ₀ = δ₋₁ = 0, and the partial sums of ‖r‖² into slot K.slot (none for slot 2).
// With K.start it takes the first Chebyshev-Jacobi iteration instead of writing D and δ₋₁, which that
// solve does not read: from δ₀ = 0 with ω₁ = 1, local_global_chebyshev's δ₁ = D⁻¹ r (twin:
// reference::local_global::local_global_chebyshev_start) into slot 1.
// Twin: reference::local_global::local_global_local_residual.
@compute @workgroup_size(WG)
fn local_global_local_residual(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    let n = L.n;
    var rr = 0.0;
    if (i < n) {
        let xi4 = dst[i];
        local_global_work[i] = vec4<f32>(0.0);
        // δ₋₁: a started solve's first sweep reads δ₀ and δ₁ alone, and writes this slot
        if (K.start == 0u) {
            local_global_work[2u * n + i] = vec4<f32>(0.0);
        }
        if (xi4.w == 0.0) {
            pcg_set_rhs(i, vec3<f32>(0.0), vec3<f32>(0.0));
            if (K.start != 0u) {
                local_global_work[n + i] = vec4<f32>(0.0);
            }
        } else {
            let h2 = L.h * L.h;
            let mi = 1.0 / xi4.w;
            let xi = xi4.xyz;
            var acc = vec3<f32>(0.0);
            var ksum = 0.0;
            let row = local_global_row(i);
            for (var g = 0u; g < local_global_packets(row); g++) {
                let e = row.first + g * WG;
                let j = tab(e) + vec4<u32>(row.base);
                let k = bitcast<vec4<f32>>(tab(e + local_global_plane(row)));
                let rest = bitcast<vec4<f32>>(tab(e + 2u * local_global_plane(row)));
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
            var r = (dst[n + i].xyz - xi) * (mi * L.inertia) - xi * (mi * s) + (acc + L.fext.xyz * mi) * h2;
            // a held contact (twin: reference::contact::local_global_contact): released if the last
            // solve said so, else r filtered with n̂·r kept; at the last residual (slot 1) released if
            // n̂·r > 0, else the friction's speed loss μ Δv_n into its state
            if (HELD_CONTACTS) {
                let c = contacts[i];
                if (c.w >= 0.0) {
                    let rn = dot(c.xyz, r);
                    if (contacts[2u * n + i].y != 0.0 || (K.slot == 1u && rn > 0.0)) {
                        contacts[i] = vec4<f32>(c.xyz, -1.0);
                    } else {
                        if (K.slot == 1u) {
                            contacts[i] = vec4<f32>(c.xyz, contacts[n + i].w * (-rn) * xi4.w / L.h);
                        }
                        contacts[2u * n + i] = vec4<f32>(rn, 0.0, 0.0, 0.0);
                        r -= c.xyz * rn;
                    }
                }
            }
            let inv_diag = 1.0 / (mi * L.mass_diag + h2 * ksum);
            // pcg_set_rhs, with D⁻¹ also in r's w (Chebyshev-Jacobi's, which needs no D: a started solve
            // writes δ₁ instead)
            cg_vectors[seg(SEG_R, i)] = vec4<f32>(r, inv_diag);
            if (K.start != 0u) {
                local_global_work[n + i] = vec4<f32>(r * inv_diag, 0.0);
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
            local_global_work[L.partials_base + K.slot * L.groups + wid.x] = t;
        }
    }
}

// (A u)_i = m_i (1 + h d₀ + h² s) u_i + h² Σ_e k_e (u_i − u_j) (twin: cpu::local_global::local_global_apply), with u_j
// from the PCG's direction (slot 3) or Chebyshev slot `slot`. Pinned rows are 0; the pinned columns are
// eliminated because every iterate is 0 on pinned particles (their right-hand side and inverse diagonal
// are 0 and the solves start from 0).
fn local_global_apply(i: u32, u_i: vec3<f32>, slot: u32) -> vec3<f32> {
    let w = dst[i].w;
    if (w == 0.0) {
        return vec3<f32>(0.0);
    }
    var acc = vec3<f32>(0.0);
    let row = local_global_row(i);
    for (var g = 0u; g < local_global_packets(row); g++) {
        let e = row.first + g * WG;
        let j = tab(e) + vec4<u32>(row.base);
        let k = bitcast<vec4<f32>>(tab(e + local_global_plane(row)));
        for (var c = 0u; c < 4u; c += 1u) {
            var u_j: vec3<f32>;
            if (slot == 3u) {
                u_j = pcg_dir(j[c]);
            } else if (slot == 4u) {
                u_j = pcg_solution(j[c]);
            } else {
                u_j = local_global_work[slot * L.n + j[c]].xyz;
            }
            u_j = contact_filter(j[c], u_j);
            acc += (u_i - u_j) * k[c];
        }
    }
    return u_i * (L.mass_diag / w) + acc * (L.h * L.h);
}

// The PCG's operator: the global matrix times its search direction, S A S p with contacts held
// (twin: cpu::local_global's filtered_apply).
fn operator_apply(i: u32, p_i: vec3<f32>) -> vec3<f32> {
    return contact_filter(i, local_global_apply(i, contact_filter(i, p_i), 3u));
}

// One Chebyshev-accelerated Jacobi iteration on A δ = r (Wang 2015, eq. 12; twin:
// reference::local_global::local_global_chebyshev): δ̂ = δ_k + D⁻¹(r − A δ_k), formed as the Jacobi sweep
// δ̂_i = D⁻¹_i (r_i + h² Σ_e k_e δ_k,j) (A's off-diagonal gathered, the diagonal cancelled: no read of δ_k,i
// or of the state), δ_{k+1} = ω_{k+1}(δ̂ − δ_{k−1}) + δ_{k−1}, with δ_k in slot k mod 3, δ_{k−1} in slot
// (k + 2) mod 3 and δ_{k+1} written to slot (k + 1) mod 3. D⁻¹ is r's w (local_global_local_residual), 0 when pinned.
// δ_{k+1,i} of one Chebyshev-Jacobi iteration (local_global_chebyshev's body).
fn cheb_sweep(i: u32, n: u32) -> vec3<f32> {
    let cur = (K.k % 3u) * n;
    let prev = local_global_work[((K.k + 2u) % 3u) * n + i].xyz;
    var acc = vec3<f32>(0.0);
    let row = local_global_row(i);
    for (var g = 0u; g < local_global_packets(row); g++) {
        let e = row.first + g * WG;
        let j = tab(e) + vec4<u32>(cur + row.base);
        let k = bitcast<vec4<f32>>(tab(e + local_global_plane(row)));
        acc += local_global_work[j.x].xyz * k.x + local_global_work[j.y].xyz * k.y + local_global_work[j.z].xyz * k.z + local_global_work[j.w].xyz * k.w;
    }
    let rd = cg_vectors[seg(SEG_R, i)];
    let hat = contact_filter(i, (rd.xyz + acc * (L.h * L.h)) * rd.w);
    return (hat - prev) * K.omega + prev;
}

@compute @workgroup_size(WG)
fn local_global_chebyshev(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    local_global_work[((K.k + 1u) % 3u) * n + i] = vec4<f32>(cheb_sweep(i, n), 0.0);
}

// The last Chebyshev-Jacobi iteration of a global step fused with local_global_advance: x_{k+1} = x_k + δ_{k+1}
// (the sweep reads no x, so x is written in place; a pinned particle is not touched, and its δ is 0).
// δ_{k+1} is not stored: nothing reads it. Twin: reference::local_global::local_global_chebyshev_advance.
@compute @workgroup_size(WG)
fn local_global_chebyshev_advance(@builtin(global_invocation_id) gid: vec3<u32>) {
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
fn local_global_cheb_residual(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= L.n) { return; }
    let cur = K.k % 3u;
    let ad = local_global_apply(i, local_global_work[cur * L.n + i].xyz, cur);
    cg_vectors[seg(SEG_P, i)] = vec4<f32>(cg_vectors[seg(SEG_R, i)].xyz - ad, 0.0);
}

// Second half, after the V-cycle left z = B s in the PCG's z: δ̂ = δ_k + z, δ_{k+1} = ω_{k+1}(δ̂ − δ_{k−1})
// + δ_{k−1}, in the slots of local_global_chebyshev.
@compute @workgroup_size(WG)
fn local_global_cheb_combine(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    let dk = local_global_work[(K.k % 3u) * n + i].xyz;
    let prev = local_global_work[((K.k + 2u) % 3u) * n + i].xyz;
    let hat = dk + contact_filter(i, cg_vectors[seg(SEG_Z, i)].xyz);
    local_global_work[((K.k + 1u) % 3u) * n + i] = vec4<f32>((hat - prev) * K.omega + prev, 0.0);
}

// x_{k+1} = x_k + δ, δ from Chebyshev slot K.slot or (3) the PCG's solution, which the Cholesky path
// uploads into. Pinned particles are not touched.
@compute @workgroup_size(WG)
fn local_global_advance(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= L.n) { return; }
    let x = dst[i];
    if (x.w == 0.0) { return; }
    var delta: vec3<f32>;
    if (K.slot == 3u) {
        delta = pcg_solution(i);
    } else {
        delta = local_global_work[K.slot * L.n + i].xyz;
    }
    // a held contact: δ filtered, and marked for release if n̂·(r − A δ) > 0 (twin:
    // reference::contact::local_global_release; the state itself changes in the next residual, so
    // that every thread here filters its neighbours' δ alike)
    if (HELD_CONTACTS) {
        let c = contacts[i];
        if (c.w >= 0.0) {
            delta = contact_filter(i, delta);
            let ad = local_global_apply(i, delta, select(K.slot, 4u, K.slot == 3u));
            if (contacts[2u * L.n + i].x - dot(c.xyz, ad) > 0.0) {
                contacts[2u * L.n + i] = vec4<f32>(contacts[2u * L.n + i].x, 1.0, 0.0, 0.0);
            }
        }
    }
    dst[i] = vec4<f32>(x.xyz + delta, x.w);
}

// The end of a step (Liu §4, implicit Euler): v = (x − q)/h; pinned particles: x = q bit for bit, v = 0.
@compute @workgroup_size(WG)
fn local_global_velocity(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = L.n;
    if (i >= n) { return; }
    let q = src[i];
    if (q.w == 0.0) {
        dst[i] = q;
        dst[n + i] = vec4<f32>(0.0);
        return;
    }
    var v = (dst[i].xyz - q.xyz) / L.h;
    // a held contact (twin: reference::contact::contact_friction): relative to the collider, the inward
    // normal velocity removed and the tangential one reduced by μ Δv_n, clamped at zero
    if (HELD_CONTACTS) {
        let c = contacts[i];
        if (c.w >= 0.0) {
            let u = contacts[n + i].xyz;
            let rel = v - u;
            let vn = dot(c.xyz, rel);
            var vt = rel - c.xyz * vn;
            let t = length(vt);
            if (t > 0.0) {
                vt *= max(1.0 - c.w / t, 0.0);
            }
            v = u + c.xyz * max(vn, 0.0) + vt;
        }
    }
    dst[n + i] = vec4<f32>(v, 0.0);
}

// One workgroup: ‖r₀‖ = ‖∇g(y)‖ (the first residual of the step, slot 0), ‖r‖ = ‖∇g(x)‖ (the last one, slot 1,
// with the local step refreshed at the final x) and their ratio, the CPU's LocalGlobalReport::residual (eq. 7).
@compute @workgroup_size(WG)
fn local_global_report(@builtin(local_invocation_index) lid: u32) {
    var s = vec4<f32>(0.0);
    for (var g = lid; g < L.groups; g += WG) {
        s += vec4<f32>(local_global_work[L.partials_base + g].x, local_global_work[L.partials_base + L.groups + g].x, 0.0, 0.0);
    }
    let t = wg_reduce(lid, s);
    if (lid == 0u) {
        let r0 = sqrt(t.x);
        let r1 = sqrt(t.y);
        var ratio = 0.0;
        if (r0 > 0.0) {
            ratio = r1 / r0;
        }
        local_global_work[L.stats_base] = vec4<f32>(r0, r1, ratio, 0.0);
    }
}
