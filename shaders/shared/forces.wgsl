// The per-particle force gather over the CSR incidence lists: the twin of cpu::forces.
// Needs, in the including kernel: P (Params), csr (the n + 1 CSR offsets), nbr (one Nbr per incidence
// entry, in CSR order) and src (a state: positions at [0, n) with w = 1/m, 0 when pinned; velocities
// at [n, 2n)).

// K_c·u of a spring: k[c·u + (1 − c)(n̂·u) n̂] (twin: cpu::forces::kc_apply).
fn kc_apply(k: f32, c: f32, n: vec3<f32>, u: vec3<f32>) -> vec3<f32> {
    let un = dot(n, u);
    return (u * c + n * ((1.0 - c) * un)) * k;
}

// External acceleration of a free particle: g − d0 (v − wind) − s (x − c).
fn external_accel(x: vec3<f32>, v: vec3<f32>) -> vec3<f32> {
    var a = P.gravity.xyz - (v - P.wind.xyz) * P.gravity.w;
    if (P.wind.w != 0.0) {
        a -= (x - P.center.xyz) * P.wind.w;
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
        let s = nbr[e];
        let j = s.j;
        let d = xi - src[j].xyz;
        let l = length(d);
        if (l > EPS_LEN) {
            let dir = d / l;
            var fs = s.k * (l - s.rest);
            // The neighbour's velocity is read only when something damps (it is a second gather).
            if (s.kd != 0.0 || P.alpha != 0.0) {
                let u = vi - src[n + j].xyz;
                let un = dot(dir, u);
                fs += s.kd * un;
                if (P.alpha != 0.0) {
                    let c = max(0.0, 1.0 - s.rest / l);
                    f -= kc_apply(s.k, c, dir, u) * P.alpha;
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
