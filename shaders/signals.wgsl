// The divergence guard's signals of a state, reduced on the GPU so that a frame's report carries them
// without a read-back of the state (twin: reference::signals). No float atomics: each workgroup folds
// its threads' values in shared memory (a halving tree), `signals_reduce` folds the workgroups'.
//
// Four vec4 a workgroup in `partials`, and the result in `signals`:
//   [0]: (kinetic, gravity potential, central-field potential, spring energy) (J); the first three over
//        the free particles (w ≠ 0: a pinned particle's are constant between the user's edits), the
//        springs counted half from each end's incidence list;
//   [1]: (Σ m|v| over the free particles (kg m/s), the largest |l − L|/L over springs with L > 0,
//        1 when a coordinate is not finite else 0, the largest stretch (l − L)/L over them);
//   [2]: (largest x, y, z, 0) over all particles;
//   [3]: (−smallest x, y, z, 0).

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> nbr: array<Nbr>;
@group(0) @binding(2) var<storage, read> csr: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> signals: array<vec4<f32>, 4>;
// The incidence records from SPLIT_VEC4 on (a placeholder when `nbr` holds them all): nbr_at.
@group(0) @binding(6) var<storage, read> nbr_1: array<Nbr>;
// signals_step_partial only: the adaptive step's trial state (`src` is the state it started from).
@group(0) @binding(7) var<storage, read> trial: array<vec4<f32>>;

// A coordinate bound below which a value counts as finite (the comparison is false for NaN).
const SG_FINITE: f32 = 3.0e38;

var<workgroup> sg_sum: array<vec4<f32>, WG>;
// x summed, y z w the largest.
var<workgroup> sg_mix: array<vec4<f32>, WG>;
var<workgroup> sg_hi: array<vec4<f32>, WG>;
var<workgroup> sg_lo: array<vec4<f32>, WG>;

fn sg_store(lid: u32, sum: vec4<f32>, mix: vec4<f32>, hi: vec4<f32>, lo: vec4<f32>) {
    sg_sum[lid] = sum;
    sg_mix[lid] = mix;
    sg_hi[lid] = hi;
    sg_lo[lid] = lo;
}

// Folds the workgroup's values into entry 0 (a halving tree; the caller's lane 0 reads it).
fn sg_fold(lid: u32) {
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        workgroupBarrier();
        if (lid < s) {
            sg_sum[lid] += sg_sum[lid + s];
            let a = sg_mix[lid];
            let b = sg_mix[lid + s];
            sg_mix[lid] = vec4<f32>(a.x + b.x, max(a.yzw, b.yzw));
            sg_hi[lid] = max(sg_hi[lid], sg_hi[lid + s]);
            sg_lo[lid] = max(sg_lo[lid], sg_lo[lid + s]);
        }
    }
    workgroupBarrier();
}

// A workgroup's rows folded into partials[4 wid .. 4 wid + 4] (every thread calls it: the fold has
// barriers).
fn sg_partial(lid: u32, wid: u32, sum: vec4<f32>, mix: vec4<f32>, hi: vec4<f32>, lo: vec4<f32>) {
    sg_store(lid, sum, mix, hi, lo);
    sg_fold(lid);
    if (lid == 0u) {
        let g = 4u * wid;
        partials[g] = sg_sum[0];
        partials[g + 1u] = sg_mix[0];
        partials[g + 2u] = sg_hi[0];
        partials[g + 3u] = sg_lo[0];
    }
}

// One thread per particle: its energy terms, its springs' (half each) and its extent; one workgroup's
// fold into partials[4 wid .. 4 wid + 4].
@compute @workgroup_size(WG)
fn signals_partial(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    let n = P.n_particles;
    var sum = vec4<f32>(0.0);
    var mix = vec4<f32>(0.0, 0.0, 0.0, -SG_FINITE);
    var hi = vec4<f32>(-SG_FINITE);
    var lo = vec4<f32>(-SG_FINITE);
    if (i < n) {
        let xw = src[i];
        let x = xw.xyz;
        let v = src[n + i].xyz;
        let bound = vec3<f32>(SG_FINITE);
        if (!(all(abs(x) <= bound) && all(abs(v) <= bound))) {
            mix.z = 1.0;
        }
        hi = vec4<f32>(x, 0.0);
        lo = vec4<f32>(-x, 0.0);
        if (xw.w != 0.0) {
            let m = 1.0 / xw.w;
            sum.x = 0.5 * m * dot(v, v);
            sum.y = -m * dot(P.gravity.xyz, x);
            if (P.wind.w != 0.0) {
                let c = x - P.center.xyz;
                sum.z = 0.5 * m * P.wind.w * dot(c, c);
            }
            mix.x = m * length(v);
        }
        var spring = 0.0;
        var worst = 0.0;
        var stretch = -SG_FINITE;
        let e_end = csr[i + 1u];
        for (var e = csr[i]; e < e_end; e++) {
            let s = nbr_at(e);
            let d = length(x - src[s.j].xyz) - s.rest;
            spring += 0.25 * s.k * d * d;
            if (s.rest > 0.0) {
                worst = max(worst, abs(d) / s.rest);
                stretch = max(stretch, d / s.rest);
            }
        }
        sum.w = spring;
        mix.y = worst;
        mix.w = stretch;
    }
    sg_partial(lid, wid.x, sum, mix, hi, lo);
}

// The adaptive step's energy check (twin: reference::signals::signals_step_partial): one thread per
// particle over the trial step from `src` to `trial`, folded as signals_partial's rows are, then by
// signals_reduce:
//   [0]: (the change of the kinetic and central-field energy, of the gravity potential, of the spring
//        energy, the start's kinetic + central + spring energy) (J), each difference formed per particle
//        (a(b1 - b0)(b1 + b0)) before it is summed;
//   [1]: (the start's Σ m|v| over the free particles, 0, 1 when a trial coordinate is not finite, 0);
//   [2], [3]: the start's extent, as signals_partial's.
@compute @workgroup_size(WG)
fn signals_step_partial(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    let n = P.n_particles;
    var sum = vec4<f32>(0.0);
    var mix = vec4<f32>(0.0, 0.0, 0.0, 0.0);
    var hi = vec4<f32>(-SG_FINITE);
    var lo = vec4<f32>(-SG_FINITE);
    if (i < n) {
        let xw = src[i];
        let x0 = xw.xyz;
        let v0 = src[n + i].xyz;
        let x1 = trial[i].xyz;
        let v1 = trial[n + i].xyz;
        let bound = vec3<f32>(SG_FINITE);
        if (!(all(abs(x1) <= bound) && all(abs(v1) <= bound))) {
            mix.z = 1.0;
        }
        hi = vec4<f32>(x0, 0.0);
        lo = vec4<f32>(-x0, 0.0);
        if (xw.w != 0.0) {
            let m = 1.0 / xw.w;
            sum.x = 0.5 * m * dot(v1 - v0, v1 + v0);
            sum.y = -m * dot(P.gravity.xyz, x1 - x0);
            sum.w = 0.5 * m * dot(v0, v0);
            if (P.wind.w != 0.0) {
                let c0 = x0 - P.center.xyz;
                let c1 = x1 - P.center.xyz;
                sum.x += 0.5 * m * P.wind.w * dot(c1 - c0, c1 + c0);
                sum.w += 0.5 * m * P.wind.w * dot(c0, c0);
            }
            mix.x = m * length(v0);
        }
        var change = 0.0;
        var positive = 0.0;
        let e_end = csr[i + 1u];
        for (var e = csr[i]; e < e_end; e++) {
            let s = nbr_at(e);
            let d0 = length(x0 - src[s.j].xyz) - s.rest;
            let d1 = length(x1 - trial[s.j].xyz) - s.rest;
            change += 0.25 * s.k * (d1 - d0) * (d1 + d0);
            positive += 0.25 * s.k * d0 * d0;
        }
        sum.z = change;
        sum.w += positive;
    }
    sg_partial(lid, wid.x, sum, mix, hi, lo);
}

// One workgroup: folds the workgroups' partials of `signals_partial` into `signals`.
@compute @workgroup_size(WG)
fn signals_reduce(@builtin(local_invocation_index) lid: u32) {
    let groups = (P.n_particles + WG - 1u) / WG;
    var sum = vec4<f32>(0.0);
    var mix = vec4<f32>(0.0, 0.0, 0.0, -SG_FINITE);
    var hi = vec4<f32>(-SG_FINITE);
    var lo = vec4<f32>(-SG_FINITE);
    for (var g = lid; g < groups; g += WG) {
        sum += partials[4u * g];
        let b = partials[4u * g + 1u];
        mix = vec4<f32>(mix.x + b.x, max(mix.yzw, b.yzw));
        hi = max(hi, partials[4u * g + 2u]);
        lo = max(lo, partials[4u * g + 3u]);
    }
    sg_store(lid, sum, mix, hi, lo);
    sg_fold(lid);
    if (lid == 0u) {
        signals[0] = sg_sum[0];
        signals[1] = sg_mix[0];
        signals[2] = sg_hi[0];
        signals[3] = sg_lo[0];
    }
}
