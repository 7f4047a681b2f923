// The per-particle force gather over the CSR incidence lists: the twin of cpu::forces.
// Needs, in the including kernel: P (Params), csr (the n + 1 CSR offsets), nbr and nbr_1 (one Nbr per
// incidence entry, in CSR order, split at SPLIT_VEC4: nbr_at) and src (a state: positions at [0, n) with w = 1/m, 0 when pinned; velocities
// at [n, 2n)).

// Pipeline-overridable constants, set per pipeline from the model and the method (gpu::base::specialize):
// SPRING_DAMPING false when no spring damps and the method has no Rayleigh term, EXTERNAL_FIELDS false
// when the model has no central and no point field. lavapipe runs the code of a branch that no
// invocation takes (masked SIMD), so a kernel compiled without the branch runs several times faster
// (the curtain's symplectic substep 2.47 → 0.75 ms there). The defaults keep every branch.
override SPRING_DAMPING: bool = true;
override EXTERNAL_FIELDS: bool = true;

// NBR_SPLIT: whether this model's incidence records span both bindings (set per pipeline from the
// state, gpu::base::specialize::split_constant). Without it nbr_at reads `nbr` alone: lavapipe runs the loads of
// both sides of the split's branch, and the force gather ran 19% slower for them (the 256² cloth). The
// default keeps the branch, right for any model.
override NBR_SPLIT: bool = true;

// Incidence record e. The table is split over two bindings at SPLIT_VEC4 records (the one split size,
// src/gpu/base/alloc.rs split_bytes): `nbr` holds [0, SPLIT_VEC4), `nbr_1` the rest (a placeholder when the
// table fits one binding).
fn nbr_at(e: u32) -> Nbr {
    if (!NBR_SPLIT) {
        return nbr[e];
    }
    if (e < SPLIT_VEC4) {
        return nbr[e];
    }
    return nbr_1[e - SPLIT_VEC4];
}

// K_c·u of a spring: k[c·u + (1 − c)(n̂·u) n̂] (twin: cpu::forces::kc_apply).
fn kc_apply(k: f32, c: f32, n: vec3<f32>, u: vec3<f32>) -> vec3<f32> {
    let un = dot(n, u);
    return (u * c + n * ((1.0 - c) * un)) * k;
}

// External acceleration of a free particle: g − d0 (v − wind) − s (x − c), plus the point fields.
fn external_accel(x: vec3<f32>, v: vec3<f32>) -> vec3<f32> {
    var a = P.gravity.xyz - (v - P.wind.xyz) * P.gravity.w;
    if (EXTERNAL_FIELDS) {
        if (P.wind.w != 0.0) {
            a -= (x - P.center.xyz) * P.wind.w;
        }
        if (P.n_fields != 0u) {
            a += field_accel(x);
        }
    }
    return a;
}

// Whether spring s damps: its k_d or the Rayleigh term (only then is the neighbour's velocity read).
fn spring_damps(s: Nbr) -> bool {
    return SPRING_DAMPING && (s.kd != 0.0 || P.alpha != 0.0);
}

// Adds to *f the force of spring s on its end i (dir = (x_i − x_j)/l, l = |x_i − x_j| > EPS_LEN):
// Hooke, and where spring_damps(s) the damping along the spring and the Rayleigh term −α K_c du for the
// relative velocity du = v_i − v_j.
fn add_spring_force(f: ptr<function, vec3<f32>>, s: Nbr, dir: vec3<f32>, l: f32, du: vec3<f32>) {
    var fs = s.k * (l - s.rest);
    if (spring_damps(s)) {
        fs += s.kd * dot(dir, du);
        if (P.alpha != 0.0) {
            let c = max(0.0, 1.0 - s.rest / l);
            *f -= kc_apply(s.k, c, dir, du) * P.alpha;
        }
    }
    *f -= dir * fs;
}

// a = M⁻¹ f + the external and cursor accelerations of a free particle i at (xi, vi) with w = 1/m, given
// the spring force f.
fn accel_from_springs(i: u32, xi: vec3<f32>, vi: vec3<f32>, w: f32, f: vec3<f32>) -> vec3<f32> {
    var a = f * w + external_accel(xi, vi);
    if (i == P.cursor_particle) {
        a -= (xi - P.cursor.xyz) * P.cursor.w + vi * P.cursor_damping;
    }
    return a;
}

// a = M⁻¹ f(x, v) of particle i at state `src`: Hooke springs, damping along the spring, the
// Rayleigh term −α K_c (v_i − v_j), the external fields and the cursor spring −c (x − target) − d v
// (twin: cpu::forces::accelerations, cpu::forces::cursor_accel).
fn accel(i: u32) -> vec3<f32> {
    let n = P.n_particles;
    let xi4 = src[i];
    let w = xi4.w;
    if (w == 0.0) {
        return vec3<f32>(0.0);
    }
    let xi = xi4.xyz;
    let vi = src[n + i].xyz;
    var f = vec3<f32>(0.0);
    let e_end = csr[i + 1u];
    for (var e = csr[i]; e < e_end; e++) {
        let s = nbr_at(e);
        let j = s.j;
        let d = xi - src[j].xyz;
        let l = length(d);
        if (l > EPS_LEN) {
            // add_spring_force and accel_from_springs written out (the same operations in the same
            // order): the gather calling them, with the pointer argument and a zeroed du, ran RK4's 512²
            // frame 19% slower on an NVIDIA H200 (558 against 468 ms of GPU time; symplectic Euler the
            // same either way).
            let dir = d / l;
            var fs = s.k * (l - s.rest);
            // The neighbour's velocity is read only when something damps (it is a second gather).
            if (SPRING_DAMPING) {
                if (s.kd != 0.0 || P.alpha != 0.0) {
                    let u = vi - src[n + j].xyz;
                    let un = dot(dir, u);
                    fs += s.kd * un;
                    if (P.alpha != 0.0) {
                        let c = max(0.0, 1.0 - s.rest / l);
                        f -= kc_apply(s.k, c, dir, u) * P.alpha;
                    }
                }
            }
            f -= dir * fs;
        }
    }
    var a = f * w + external_accel(xi, vi);
    if (i == P.cursor_particle) {
        a -= (xi - P.cursor.xyz) * P.cursor.w + vi * P.cursor_damping;
    }
    return a;
}
