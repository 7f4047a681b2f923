// Explicit integrators: explicit and symplectic Euler, midpoint and RK4 (twin: cpu::explicit).
// One thread per particle. Every kernel evaluates the derivative at `src` and writes `dst`;
// `base` is the state at the start of the step, `acc` the RK4 accumulator (x at [0,n), v at [n,2n)).

@group(0) @binding(0) var<storage, read> P: Params;
@group(0) @binding(1) var<storage, read> nbr: array<Nbr>;
@group(0) @binding(2) var<storage, read> csr: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> base: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> acc: array<vec4<f32>>;
// flags[3]: set when a speed exceeds the limit P.center.w (or is not finite); read after the frame,
// it makes the simulator recompute k0 (Shinya §5.3). flags[0..3] belong to the LEU kernels.
@group(0) @binding(7) var<storage, read_write> flags: array<atomic<u32>, 4>;
// The incidence records from SPLIT_VEC4 on (a placeholder when `nbr` holds them all): nbr_at.
@group(0) @binding(8) var<storage, read> nbr_1: array<Nbr>;

fn write_state(i: u32, x: vec3<f32>, v: vec3<f32>) {
    dst[i] = vec4<f32>(x, base[i].w);
    dst[P.n_particles + i] = vec4<f32>(v, 0.0);
    if (!(dot(v, v) <= P.center.w * P.center.w)) {
        atomicOr(&flags[3], 1u);
    }
}

// Explicit Euler (Shinya eq. 10-11): x' = x + h v, v' = v + h a.
@compute @workgroup_size(WG)
fn euler_step(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n_particles) { return; }
    let a = accel(i);
    write_state(i, src[i].xyz + src[P.n_particles + i].xyz * P.h, src[P.n_particles + i].xyz + a * P.h);
}

// Symplectic Euler: v' = v + h a, x' = x + h v'.
@compute @workgroup_size(WG)
fn symplectic_step(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n_particles) { return; }
    let a = accel(i);
    let v = src[P.n_particles + i].xyz + a * P.h;
    write_state(i, src[i].xyz + v * P.h, v);
}

// Midpoint, stage 1 (Shinya eq. 18): dst = base + (h/2) k1.
@compute @workgroup_size(WG)
fn midpoint_stage1(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n_particles) { return; }
    let a = accel(i);
    let hh = 0.5 * P.h;
    write_state(i, base[i].xyz + src[P.n_particles + i].xyz * hh, base[P.n_particles + i].xyz + a * hh);
}

// Midpoint, stage 2: dst = base + h k2, k2 the derivative at the midpoint `src`.
@compute @workgroup_size(WG)
fn midpoint_stage2(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.n_particles) { return; }
    let a = accel(i);
    write_state(i, base[i].xyz + src[P.n_particles + i].xyz * P.h, base[P.n_particles + i].xyz + a * P.h);
}

// RK4 (Shinya eq. 19), stage 1: acc = k1, dst = base + (h/2) k1.
@compute @workgroup_size(WG)
fn rk4_stage1(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let a = accel(i);
    let v = src[n + i].xyz;
    acc[i] = vec4<f32>(v, 0.0);
    acc[n + i] = vec4<f32>(a, 0.0);
    let hh = 0.5 * P.h;
    write_state(i, base[i].xyz + v * hh, base[n + i].xyz + a * hh);
}

// RK4, stage 2: acc += 2 k2, dst = base + (h/2) k2.
@compute @workgroup_size(WG)
fn rk4_stage2(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let a = accel(i);
    let v = src[n + i].xyz;
    acc[i] = vec4<f32>(acc[i].xyz + v * 2.0, 0.0);
    acc[n + i] = vec4<f32>(acc[n + i].xyz + a * 2.0, 0.0);
    let hh = 0.5 * P.h;
    write_state(i, base[i].xyz + v * hh, base[n + i].xyz + a * hh);
}

// RK4, stage 3: acc += 2 k3, dst = base + h k3.
@compute @workgroup_size(WG)
fn rk4_stage3(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let a = accel(i);
    let v = src[n + i].xyz;
    acc[i] = vec4<f32>(acc[i].xyz + v * 2.0, 0.0);
    acc[n + i] = vec4<f32>(acc[n + i].xyz + a * 2.0, 0.0);
    write_state(i, base[i].xyz + v * P.h, base[n + i].xyz + a * P.h);
}

// RK4, stage 4: dst = base + (h/6)(k1 + 2 k2 + 2 k3 + k4).
@compute @workgroup_size(WG)
fn rk4_stage4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = P.n_particles;
    if (i >= n) { return; }
    let a = accel(i);
    let v = src[n + i].xyz;
    let h6 = P.h / 6.0;
    write_state(i, base[i].xyz + (acc[i].xyz + v) * h6, base[n + i].xyz + (acc[n + i].xyz + a) * h6);
}
