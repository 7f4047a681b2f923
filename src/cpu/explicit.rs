//! Explicit integrators in f64: the CPU twins of `shaders/explicit.wgsl`.
//!
//! Each step reads the state (x, v) and writes (x_out, v_out); the GPU ping-pongs the same way.

use super::forces::{accelerations, StepParams};
use super::{CpuModel, Scratch, V3};

/// Explicit Euler (slides; Shinya eq. 10-11): x' = x + h v, v' = v + h a(x, v).
pub fn euler_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    accelerations(m, p, x, v, &mut s.a1, &mut s.spring_f);
    let h = p.h;
    for i in 0..m.n {
        x_out[i] = x[i] + v[i] * h;
        v_out[i] = v[i] + s.a1[i] * h;
    }
}

/// Symplectic Euler: v' = v + h a(x, v), x' = x + h v'.
pub fn symplectic_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    accelerations(m, p, x, v, &mut s.a1, &mut s.spring_f);
    let h = p.h;
    for i in 0..m.n {
        let vn = v[i] + s.a1[i] * h;
        v_out[i] = vn;
        x_out[i] = x[i] + vn * h;
    }
}

/// The midpoint method (slides; Shinya eq. 18): a half Euler step to (x_m, v_m), then a full step from
/// (x, v) with the derivative there.
pub fn midpoint_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let h = p.h;
    accelerations(m, p, x, v, &mut s.a1, &mut s.spring_f);
    for i in 0..m.n {
        s.xt[i] = x[i] + v[i] * (0.5 * h);
        s.vt[i] = v[i] + s.a1[i] * (0.5 * h);
    }
    accelerations(m, p, &s.xt, &s.vt, &mut s.a2, &mut s.spring_f);
    for i in 0..m.n {
        x_out[i] = x[i] + s.vt[i] * h;
        v_out[i] = v[i] + s.a2[i] * h;
    }
}

/// Classic fourth-order Runge-Kutta (Shinya eq. 19) on w = (x, v), ẇ = (v, a(x, v)).
pub fn rk4_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let h = p.h;
    let n = m.n;
    // k1 at (x, v)
    accelerations(m, p, x, v, &mut s.a1, &mut s.spring_f);
    for i in 0..n {
        s.acc_x[i] = v[i];
        s.acc_v[i] = s.a1[i];
        s.xt[i] = x[i] + v[i] * (0.5 * h);
        s.vt[i] = v[i] + s.a1[i] * (0.5 * h);
    }
    // k2 at (xt, vt)
    accelerations(m, p, &s.xt, &s.vt, &mut s.a1, &mut s.spring_f);
    for i in 0..n {
        s.acc_x[i] += s.vt[i] * 2.0;
        s.acc_v[i] += s.a1[i] * 2.0;
        s.xt2[i] = x[i] + s.vt[i] * (0.5 * h);
        s.vt2[i] = v[i] + s.a1[i] * (0.5 * h);
    }
    // k3 at (xt2, vt2)
    accelerations(m, p, &s.xt2, &s.vt2, &mut s.a1, &mut s.spring_f);
    for i in 0..n {
        s.acc_x[i] += s.vt2[i] * 2.0;
        s.acc_v[i] += s.a1[i] * 2.0;
        s.xt[i] = x[i] + s.vt2[i] * h;
        s.vt[i] = v[i] + s.a1[i] * h;
    }
    // k4 at (xt, vt)
    accelerations(m, p, &s.xt, &s.vt, &mut s.a1, &mut s.spring_f);
    for i in 0..n {
        x_out[i] = x[i] + (s.acc_x[i] + s.vt[i]) * (h / 6.0);
        v_out[i] = v[i] + (s.acc_v[i] + s.a1[i]) * (h / 6.0);
    }
}
