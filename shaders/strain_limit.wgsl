// Provot's strain limiting (twin: reference::strain_limit; Provot 1995 §5): after every step, Jacobi
// passes, one thread per particle gathering over its CSR incidence list (no float atomics). A pass
// reads the state `src` and writes `dst`: for each incident spring longer than (1 + τ)L, the correction
// that brings it back to (1 + τ)L shared by inverse mass (a pinned endpoint, w = 0, does not move),
// averaged over the springs over the limit and scaled by ω. The velocity follows the position by the
// method's rule: Δv = Δx/h, or (`rod`, explicit Euler and LEU) the relative velocity along each spring
// at its limit removed, shared and averaged the same way.
//
// A pass after the first with S.acceleration = ω_c ≠ 1 accelerates a particle it moves (Wang 2015's
// Chebyshev semi-iterative method at its limit weight): from the pass's result x̂ and what `dst` held,
// the state two passes back x', it goes to x' + ω_c (x̂ − x'), its velocity likewise under Δv = Δx/h.
// The host binds a uniform with ω_c = 1 to the first STRAIN_ACCELERATION_AFTER passes of a step and
// one with the model's ω_c to the rest.
//
// The passes ping-pong between the step's state buffer and a scratch state, in pairs: the first of a
// pair (`strain_limit_first` for the step's first, `strain_limit_check` after it) reads the state
// buffer and also checks it: when no spring of it is stretched beyond S.stop = τ(1 + tolerance), its
// last workgroup to finish raises `stopped`, and every pass recorded after it (and the copy back of an
// odd count) returns at once, leaving the state buffer as it was read. An odd count that did not stop
// ends with `strain_limit_copy` back. The passes run are tallied in `ctl` for the bench.

// Rust twin: gpu::base::layout::StrainLimitInfo.
struct StrainLimitInfo {
    limit: f32,      // τ
    relaxation: f32, // ω
    rod: u32,        // 1: the rod velocity rule, 0: Δv = Δx/h
    stop: f32,       // τ(1 + tolerance): a check pass that finds a spring beyond it lets the passes go on
    acceleration: f32, // ω_c: a particle the pass moves goes to x' + ω_c (x̂ − x'), x' what dst held
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// The words of `ctl` (Rust twin: gpu::step_end::strain_limit::CTL_*).
const CTL_DONE: u32 = 0u;    // workgroups of the running check pass that finished, and OVER
const CTL_STOPPED: u32 = 1u; // 1: the step's passes have stopped
const CTL_STEP: u32 = 2u;    // passes run in this step
const CTL_TOTAL: u32 = 3u;   // passes run, summed over the steps
const CTL_STEPS: u32 = 4u;   // steps limited
const CTL_MOST: u32 = 5u;    // the most passes of one step
const OVER: u32 = 0x80000000u;

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> csr: array<u32>;
@group(0) @binding(2) var<storage, read> nbr: array<Nbr>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> S: StrainLimitInfo;
// The incidence records from SPLIT_VEC4 on (a placeholder when `nbr` holds them all): nbr_at.
@group(0) @binding(6) var<storage, read> nbr_1: array<Nbr>;
@group(0) @binding(7) var<storage, read_write> ctl: array<atomic<u32>>;

var<workgroup> wg_over: atomic<u32>;
var<workgroup> wg_stopped: u32;

// Particle i's pass from `src` into `dst`; true when one of its springs is stretched beyond S.stop.
// `accel`: a pass after the first, whose `dst` holds the state two passes back (twin:
// reference::strain_limit::accelerate).
fn limit_particle(i: u32, accel: bool) -> bool {
    let n = P.n_particles;
    let xw = src[i];
    let v = src[n + i];
    let wi = xw.w;
    if (wi == 0.0) {
        dst[i] = xw;
        dst[n + i] = v;
        return false;
    }
    let xi = xw.xyz;
    var dx = vec3<f32>(0.0);
    var dv = vec3<f32>(0.0);
    var count = 0u;
    var over = false;
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let s = nbr_at(e);
        let xj = src[s.j];
        let d = xi - xj.xyz;
        let l = length(d);
        let target_len = (1.0 + S.limit) * s.rest;
        // a zero-rest-length spring (a bending term) has no length to limit
        if (s.rest > 0.0 && l > target_len && l > EPS_LEN) {
            over = over || l > (1.0 + S.stop) * s.rest;
            let share = wi / (wi + xj.w);
            dx -= d * (share * (l - target_len) / l);
            let u = d / l;
            dv -= u * (share * dot(v.xyz - src[n + s.j].xyz, u));
            count += 1u;
        }
    }
    if (count == 0u) {
        dst[i] = xw;
        dst[n + i] = v;
        return false;
    }
    let scale = S.relaxation / f32(count);
    dx *= scale;
    var x_new = xi + dx;
    var v_new = v.xyz + dx / P.h;
    if (S.rod != 0u) {
        v_new = v.xyz + dv * scale;
    }
    if (accel && S.acceleration != 1.0) {
        let xp = dst[i].xyz;
        x_new = xp + (x_new - xp) * S.acceleration;
        if (S.rod == 0u) {
            let vp = dst[n + i].xyz;
            v_new = vp + (v_new - vp) * S.acceleration;
        }
    }
    dst[i] = vec4<f32>(x_new, wi);
    dst[n + i] = vec4<f32>(v_new, v.w);
    return over;
}

// Counts one pass into the step's tally (one thread of the dispatch).
fn tally_pass() {
    let step = atomicAdd(&ctl[CTL_STEP], 1u) + 1u;
    atomicAdd(&ctl[CTL_TOTAL], 1u);
    atomicMax(&ctl[CTL_MOST], step);
}

// A check pass (the body of strain_limit_first and strain_limit_check): the pass, the workgroup's OR
// of `over` into CTL_DONE with its arrival, and, in the last workgroup to arrive, `stopped` set when no
// workgroup saw a spring beyond S.stop (the same word carries the count and the flag, so the last
// arrival sees every flag: per-location coherence).
fn check_pass(i: u32, lid: u32, groups: u32, accel: bool) {
    var over = false;
    if (i < P.n_particles) {
        over = limit_particle(i, accel);
    }
    if (over) {
        atomicOr(&wg_over, 1u);
    }
    workgroupBarrier();
    if (lid == 0u) {
        if (atomicLoad(&wg_over) != 0u) {
            atomicOr(&ctl[CTL_DONE], OVER);
        }
        let before = atomicAdd(&ctl[CTL_DONE], 1u);
        if ((before & ~OVER) + 1u == groups) {
            let word = atomicExchange(&ctl[CTL_DONE], 0u);
            atomicStore(&ctl[CTL_STOPPED], select(1u, 0u, (word & OVER) != 0u));
        }
    }
}

// The step's first pass (always runs): its tally starts at 1, and a step is counted.
@compute @workgroup_size(WG)
fn strain_limit_first(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    if (gid.x == 0u) {
        atomicStore(&ctl[CTL_STEP], 1u);
        atomicAdd(&ctl[CTL_TOTAL], 1u);
        atomicAdd(&ctl[CTL_STEPS], 1u);
        atomicMax(&ctl[CTL_MOST], 1u);
    }
    check_pass(gid.x, lid, nwg.x, false);
}

// The first pass of a later pair: nothing once the passes have stopped.
@compute @workgroup_size(WG)
fn strain_limit_check(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    // read through the workgroup so that the early return stays uniform before check_pass's barrier
    if (lid == 0u) {
        wg_stopped = atomicLoad(&ctl[CTL_STOPPED]);
    }
    if (workgroupUniformLoad(&wg_stopped) != 0u) {
        return;
    }
    if (gid.x == 0u) {
        tally_pass();
    }
    check_pass(gid.x, lid, nwg.x, true);
}

// The second pass of a pair (scratch → state): nothing once the passes have stopped.
@compute @workgroup_size(WG)
fn strain_limit_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (atomicLoad(&ctl[CTL_STOPPED]) != 0u) {
        return;
    }
    if (gid.x == 0u) {
        tally_pass();
    }
    if (gid.x < P.n_particles) {
        _ = limit_particle(gid.x, true);
    }
}

// The copy back of an odd count whose last pass did not stop (not a pass: not tallied).
@compute @workgroup_size(WG)
fn strain_limit_copy(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (atomicLoad(&ctl[CTL_STOPPED]) != 0u) {
        return;
    }
    let n = P.n_particles;
    let i = gid.x;
    if (i >= n) { return; }
    dst[i] = src[i];
    dst[n + i] = src[n + i];
}
