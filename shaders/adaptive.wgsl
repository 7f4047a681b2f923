// Implicit Euler's adaptive step on the device (Kauppila §3.2.3; the host's twin is
// stepping::adaptive::AdaptiveStep driven by the stepping policy's adaptive frame). A frame is recorded
// once as a fixed number of trial slots; each slot is
//
//   adaptive_trial (one thread) → the trial step, gated → adaptive_judge (one thread) → adaptive_accept, gated
//
// adaptive_trial picks the trial's step h (the step in use, capped by what is left of the frame), writes
// it into Params.h (word PARAMS_H_WORD) for the step's kernels and writes the gate: the third word of each of the trial's
// indirect dispatch arguments, 1 while the frame has time left, 0 once it is full (zero workgroups).
// The trial step runs from state[0] into state[1], with the step's end, the strain check
// (implicit_strain raises cg_state[5]) and the energy check (signals.wgsl's signals_step_partial and
// signals_reduce into `energy`). adaptive_judge decides as AdaptiveStep::judge does: a step that
// strained a spring, whose solve stopped short of the retry residual (or broke down), or that gained
// energy beyond the external forces' work, is discarded
// and h halved, unless h is at the floor (h_plan/1024); an accepted step advances the frame's time and
// opens the accept gate, and after two accepted steps in a row h doubles again, never above the plan.
// adaptive_accept copies state[1] over state[0]. When the trial slots left are only enough for the
// steps that must still be taken at the planned h, the remaining steps are taken at the planned h and
// accepted as they are (counted in `forced`): the frame always ends at its time.

// Rust twin: gpu::methods::implicit::adaptive::AdaptiveConfig (written by the host with the plan).
struct AdaptiveConfig {
    planned: f32,        // the planned step h_plan (s)
    frame: f32,          // the frame's length (s)
    floor: f32,          // the smallest step still halved (h_plan/1024)
    retry_residual: f32, // a solve that ended above this relative residual is retaken with h/2
    slots: u32,          // trial slots recorded per frame
    gate_slots: u32,     // indirect argument slots of a trial (the accept gate follows them)
    n: u32,              // particles
    energy_check: u32,   // 1: a trial that gained energy is retaken (0 where some work has no bound)
    mass_g: f32,         // Σ m |g| (N): the energy scale's gravity term per metre of extent
    power0: f32,         // the drag against the wind's power bound (W)
    fields: f32,         // the force fields' power bound per unit of Σ m|v|: Σ|a| (m/s²)
    _pad1: u32,
}

// The words of `ad` (twin: gpu::methods::implicit::adaptive's AD_* constants). Kept between frames:
const AD_H: u32 = 0u;        // the step in use, f32 bits (0: the planned one)
const AD_GOOD: u32 = 1u;     // accepted steps since the last halving or doubling
// this frame's:
const AD_T: u32 = 2u;        // time reached in the frame (s), f32 bits
const AD_SLOT: u32 = 3u;     // trial slots used
const AD_GO: u32 = 4u;       // 1: the current trial runs
const AD_FORCING: u32 = 5u;  // 1: the current trial is accepted as it is
const AD_TRIAL_H: u32 = 6u;  // the current trial's step (s), f32 bits
// the frame's report, copied into the report slot from AD_ACCEPTED on:
const AD_ACCEPTED: u32 = 8u; // steps accepted
const AD_TRIALS: u32 = 9u;   // steps tried
const AD_FORCED: u32 = 10u;  // steps accepted strained or short because the trial slots ran out
const AD_LOG_LEN: u32 = 11u; // entries of the log
const AD_LOG: u32 = 12u;     // each step tried: its h (f32 bits), the sign bit set where it was discarded
override ADAPTIVE_LOG: u32 = 64u;
// The word of Params.h in the parameter block (twin: offset_of!(GpuParams, h) / 4).
override PARAMS_H_WORD: u32 = 14u;
// A frame whose time left is below this fraction of the frame is full (f32's rounding of the sum of steps).
const END_SLACK: f32 = 1e-5;
// The energy a trial may gain beyond the external forces' work, as a fraction of the energy scale
// (twin: method::STEP_ENERGY_SLACK).
override STEP_ENERGY_SLACK: f32 = 1e-6;

// Whether the trial gained energy beyond the external forces' most work over h (twin:
// reference::signals::StepEnergy::gain compared with STEP_ENERGY_SLACK); a trial that is not finite did.
fn gained_energy(h: f32) -> bool {
    if (C.energy_check == 0u) { return false; }
    let s = energy[0];
    let extent = length(energy[2].xyz + energy[3].xyz);
    let scale = max(C.mass_g * extent + s.w, 1e-30);
    let power = C.power0 + C.fields * energy[1].x;
    let gain = (s.x + s.y + s.z - power * h) / scale;
    // `!(x <= limit)` also catches NaN
    return energy[1].z != 0.0 || !(gain <= STEP_ENERGY_SLACK);
}

// adaptive_accept binds the first three only (its own bind group: its dispatch reads `gate` as its
// indirect arguments, which a storage binding in the same dispatch would conflict with).
@group(0) @binding(0) var<storage, read> C: AdaptiveConfig;
@group(0) @binding(1) var<storage, read_write> state0: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> state1: array<vec4<f32>>;
// Params as words: the trial's step goes into Params.h
@group(0) @binding(3) var<storage, read_write> params_words: array<u32>;
// the PCG's status words (shaders/pcg.wgsl's cg_state): [0] status, [2] residual, [5] strained
@group(0) @binding(4) var<storage, read_write> cg_state: array<u32, 8>;
@group(0) @binding(5) var<storage, read_write> ad: array<u32>;
// indirect dispatch arguments, three words a slot: the trial's gate_slots slots, then the accept gate
@group(0) @binding(6) var<storage, read_write> gate: array<u32>;
// the trial's energy sums (shaders/signals.wgsl's signals_step_partial, reduced): [0] (Δ kinetic +
// central, Δ gravity, Δ spring, the start's positive energy), [1].x the start's Σ m|v|, [1].z 1 when
// the trial is not finite, [2] and [3] the start's extent
@group(0) @binding(7) var<storage, read> energy: array<vec4<f32>, 4>;

fn set_gate(first: u32, count: u32, go: u32) {
    for (var s = first; s < first + count; s++) {
        gate[3u * s + 2u] = go;
    }
}

fn adf(word: u32) -> f32 {
    return bitcast<f32>(ad[word]);
}

// Before a frame's first trial: the frame's time and report start at zero.
@compute @workgroup_size(WG)
fn adaptive_begin(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u) { return; }
    ad[AD_T] = bitcast<u32>(0.0);
    ad[AD_SLOT] = 0u;
    ad[AD_ACCEPTED] = 0u;
    ad[AD_TRIALS] = 0u;
    ad[AD_FORCED] = 0u;
    ad[AD_LOG_LEN] = 0u;
}

// Chooses the next trial (AdaptiveStep::next_h) and opens or closes the trial's gate.
@compute @workgroup_size(WG)
fn adaptive_trial(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u) { return; }
    let remaining = C.frame - adf(AD_T);
    let left = C.slots - min(ad[AD_SLOT], C.slots);
    ad[AD_SLOT] += 1u;
    var go = 0u;
    if (remaining > C.frame * END_SLACK) {
        go = 1u;
    }
    var h_use = adf(AD_H);
    if (!(h_use > 0.0) || h_use > C.planned) {
        h_use = C.planned;
        ad[AD_H] = bitcast<u32>(h_use);
    }
    var h = min(h_use, remaining);
    // the steps still to take at the planned step: once the slots left are no more, take them so
    let must = u32(max(ceil((remaining - C.frame * END_SLACK) / C.planned), 0.0));
    var forcing = 0u;
    if (left <= must) {
        forcing = 1u;
        h = min(C.planned, remaining);
    }
    ad[AD_GO] = go;
    ad[AD_FORCING] = forcing;
    ad[AD_TRIAL_H] = bitcast<u32>(h);
    cg_state[5] = 0u;
    if (go != 0u) {
        params_words[PARAMS_H_WORD] = bitcast<u32>(h);
    }
    set_gate(0u, C.gate_slots, go);
}

// Judges the trial (AdaptiveStep::judge with the stepping policy's retry rules) and opens the accept
// gate for an accepted one.
@compute @workgroup_size(WG)
fn adaptive_judge(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u) { return; }
    if (ad[AD_GO] == 0u) {
        set_gate(C.gate_slots, 1u, 0u);
        return;
    }
    let h = adf(AD_TRIAL_H);
    let residual = bitcast<f32>(cg_state[2]);
    // `!(x <= limit)` also catches NaN; status 2: the solve broke down
    let short = !(residual <= C.retry_residual) || cg_state[0] == 2u;
    let bad = cg_state[5] != 0u || short || gained_energy(h);
    var entry = bitcast<u32>(h);
    if (bad && h > C.floor && ad[AD_FORCING] == 0u) {
        ad[AD_H] = bitcast<u32>(h * 0.5);
        ad[AD_GOOD] = 0u;
        entry |= 0x80000000u;
        set_gate(C.gate_slots, 1u, 0u);
    } else {
        ad[AD_GOOD] += 1u;
        let h_use = adf(AD_H);
        if (ad[AD_GOOD] >= 2u && h_use < C.planned) {
            ad[AD_H] = bitcast<u32>(min(h_use * 2.0, C.planned));
            ad[AD_GOOD] = 0u;
        }
        ad[AD_T] = bitcast<u32>(adf(AD_T) + h);
        ad[AD_ACCEPTED] += 1u;
        if (bad) {
            ad[AD_FORCED] += ad[AD_FORCING];
        }
        set_gate(C.gate_slots, 1u, 1u);
    }
    if (ad[AD_LOG_LEN] < ADAPTIVE_LOG) {
        ad[AD_LOG + ad[AD_LOG_LEN]] = entry;
        ad[AD_LOG_LEN] += 1u;
    }
    ad[AD_TRIALS] += 1u;
}

// An accepted trial's state becomes the state: state[0] = state[1] (x then v, 2n vec4).
@compute @workgroup_size(WG)
fn adaptive_accept(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * 65535u * WG;
    if (i < 2u * C.n) {
        state0[i] = state1[i];
    }
}

// After the frame's last trial: Params.h is the planned step again.
@compute @workgroup_size(WG)
fn adaptive_end(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u) { return; }
    params_words[PARAMS_H_WORD] = bitcast<u32>(C.planned);
}
