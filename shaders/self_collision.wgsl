// Self-collision (twin: reference::self_collision, where the scheme and its sources are): a uniform
// spatial hash of the particles rebuilt each pass by a counting sort (u32 atomics only), then one
// Jacobi repulsion pass: every particle pushed away from the unjoined particles closer than the
// thickness, by its inverse-mass share, the pair's approach removed, averaged over its contacts.
//
// Dispatch order per pass: sc_count (n), sc_scan_blocks (T), sc_scan_sums (1 workgroup),
// sc_add_sums (T), sc_scatter (n), sc_sort (T), sc_repulse (n), sc_apply (n). The scatter's atomics
// place a bucket's particles in any order; sc_sort puts each bucket in increasing index order, so
// every later result is independent of the scheduling (bitwise deterministic). The scatter counts
// each bucket back down to zero, so `counts` is all zero at the start of every pass (the buffer is
// created zeroed).

// Rust twin: gpu::base::layout::SelfInfo.
struct SelfInfo {
    thickness: f32,  // t (m)
    inv_cell: f32,   // 1/s (1/m)
    table: u32,      // buckets T (a power of two, a multiple of WG)
    n_blocks: u32,   // T / WG
}

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read_write> state: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> links: array<Nbr>;
@group(0) @binding(3) var<storage, read> csr: array<u32>;
@group(0) @binding(4) var<storage, read> S: SelfInfo;
@group(0) @binding(5) var<storage, read_write> counts: array<atomic<u32>>;
// [start (T + 1) | block sums (T / WG) | each particle's bucket (n) | the particles by bucket (n)]
@group(0) @binding(6) var<storage, read_write> hash: array<u32>;
// the repulsion's output: positions at [0, n), velocities at [n, 2n)
@group(0) @binding(7) var<storage, read_write> out: array<vec4<f32>>;
// The incidence records from SPLIT_VEC4 on (a placeholder when `links` holds them all): links_at.
@group(0) @binding(8) var<storage, read> links_1: array<Nbr>;

// The other end j of incidence record e (the table split at SPLIT_VEC4 records, src/gpu/base/alloc.rs).
fn links_at(e: u32) -> u32 {
    if (e < SPLIT_VEC4) {
        return links[e].j;
    }
    return links_1[e - SPLIT_VEC4].j;
}

const PRIME_X: u32 = 73856093u;
const PRIME_Y: u32 = 19349663u;
const PRIME_Z: u32 = 83492791u;

var<workgroup> scan: array<u32, WG>;

fn blocks_base() -> u32 { return S.table + 1u; }
fn bucket_base() -> u32 { return S.table + 1u + S.n_blocks; }
fn sorted_base() -> u32 { return S.table + 1u + S.n_blocks + P.n_particles; }

// The cell of x (twin: reference::self_collision::sc_cell).
fn sc_cell(x: vec3<f32>) -> vec3<i32> {
    return vec3<i32>(floor(x * S.inv_cell));
}

// The bucket of cell c (twin: sc_hash).
fn sc_hash(c: vec3<i32>) -> u32 {
    let h = (bitcast<u32>(c.x) * PRIME_X) ^ (bitcast<u32>(c.y) * PRIME_Y) ^ (bitcast<u32>(c.z) * PRIME_Z);
    return h & (S.table - 1u);  // T is a power of two: h mod T
}

@compute @workgroup_size(WG)
fn sc_count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n_particles) { return; }
    let h = sc_hash(sc_cell(state[i].xyz));
    hash[bucket_base() + i] = h;
    atomicAdd(&counts[h], 1u);
}

// The inclusive scan of `scan` over the workgroup (Hillis–Steele), in place.
fn wg_scan(lid: u32) {
    for (var off = 1u; off < WG; off = off * 2u) {
        var add = 0u;
        if (lid >= off) {
            add = scan[lid - off];
        }
        workgroupBarrier();
        scan[lid] += add;
        workgroupBarrier();
    }
}

// Each block of WG buckets: the exclusive prefix sums of its counts into start, its total into the block sums.
@compute @workgroup_size(WG)
fn sc_scan_blocks(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
                  @builtin(workgroup_id) wid: vec3<u32>) {
    let lid = lid3.x;
    let h = gid.x;  // T is a multiple of WG: every thread has a bucket
    let c = atomicLoad(&counts[h]);
    scan[lid] = c;
    workgroupBarrier();
    wg_scan(lid);
    hash[h] = scan[lid] - c;
    if (lid == WG - 1u) {
        hash[blocks_base() + wid.x] = scan[lid];
    }
}

// One workgroup: the block sums into their exclusive prefix sums (each thread a run of blocks), and
// start[T] = n.
@compute @workgroup_size(WG)
fn sc_scan_sums(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let per = (S.n_blocks + WG - 1u) / WG;
    let first = lid * per;
    let last = min(first + per, S.n_blocks);
    var sum = 0u;
    for (var b = first; b < last; b++) {
        sum += hash[blocks_base() + b];
    }
    scan[lid] = sum;
    workgroupBarrier();
    wg_scan(lid);
    var acc = scan[lid] - sum;
    for (var b = first; b < last; b++) {
        let s = hash[blocks_base() + b];
        hash[blocks_base() + b] = acc;
        acc += s;
    }
    if (lid == WG - 1u) {
        hash[S.table] = scan[lid];
    }
}

@compute @workgroup_size(WG)
fn sc_add_sums(@builtin(global_invocation_id) gid: vec3<u32>) {
    let h = gid.x;
    hash[h] += hash[blocks_base() + h / WG];
}

@compute @workgroup_size(WG)
fn sc_scatter(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n_particles) { return; }
    let h = hash[bucket_base() + i];
    let k = atomicSub(&counts[h], 1u) - 1u;
    hash[sorted_base() + hash[h] + k] = i;
}

// Each bucket's list into increasing particle order (insertion sort: the lists are short).
@compute @workgroup_size(WG)
fn sc_sort(@builtin(global_invocation_id) gid: vec3<u32>) {
    let h = gid.x;
    if (h >= S.table) { return; }
    let base = sorted_base();
    let s = base + hash[h];
    let e = base + hash[h + 1u];
    for (var a = s + 1u; a < e; a++) {
        let key = hash[a];
        var b = a;
        while (b > s && hash[b - 1u] > key) {
            hash[b] = hash[b - 1u];
            b -= 1u;
        }
        hash[b] = key;
    }
}

// Whether a spring joins i and j (twin: joined).
fn joined(i: u32, j: u32) -> bool {
    for (var e = csr[i]; e < csr[i + 1u]; e++) {
        if (links_at(e) == j) {
            return true;
        }
    }
    return false;
}

// Particle i's repulsion (twin: sc_repulse): the new state into `out`.
@compute @workgroup_size(WG)
fn sc_repulse(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let xw = state[i];
    let vi = state[n + i].xyz;
    let wi = xw.w;
    out[i] = xw;
    out[n + i] = vec4<f32>(vi, 0.0);
    if (wi == 0.0) { return; }
    let xi = xw.xyz;
    let t = S.thickness;
    let c = sc_cell(xi);
    let base = sorted_base();
    var dx = vec3<f32>(0.0);
    var dv = vec3<f32>(0.0);
    var contacts = 0u;
    for (var dz = -1; dz <= 1; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var ddx = -1; ddx <= 1; ddx++) {
                let cc = c + vec3<i32>(ddx, dy, dz);
                let h = sc_hash(cc);
                for (var s = hash[h]; s < hash[h + 1u]; s++) {
                    let j = hash[base + s];
                    if (j == i) { continue; }
                    let xj = state[j];
                    let d = xi - xj.xyz;
                    let d2 = dot(d, d);
                    // within the thickness, found in its own cell (once), and not joined
                    if (d2 >= t * t || any(sc_cell(xj.xyz) != cc) || joined(i, j)) { continue; }
                    let dist = sqrt(d2);
                    var nrm = vec3<f32>(0.0, select(-1.0, 1.0, i < j), 0.0);
                    if (dist > 0.0) {
                        nrm = d / dist;
                    }
                    let share = wi / (wi + xj.w);
                    dx += nrm * (share * (t - dist));
                    let u = dot(nrm, vi - state[n + j].xyz);
                    if (u < 0.0) {
                        dv -= nrm * (share * u);
                    }
                    contacts += 1u;
                }
            }
        }
    }
    if (contacts > 0u) {
        let cf = f32(contacts);
        out[i] = vec4<f32>(xi + dx / cf, wi);
        out[n + i] = vec4<f32>(vi + dv / cf, 0.0);
    }
}

@compute @workgroup_size(WG)
fn sc_apply(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    state[i] = out[i];
    state[n + i] = out[n + i];
}
