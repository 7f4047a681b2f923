//! Explicit integrators in f64: the CPU twins of `shaders/explicit.wgsl`.
//!
//! Each step reads the state (x, v) and writes (x_out, v_out); the GPU ping-pongs the same way.
//! The per-particle updates run inside the force gather (see [`super::forces`]), on each particle
//! as soon as its acceleration is summed; each [`Rule`] below is the body of the plain loop over the
//! particles, with the same arithmetic.

use super::forces::{accelerations_into, Fused, Rule, StepParams, Vector};
use super::{CpuModel, Scratch, V3};

/// x' = x + h v, v' = v + h a.
#[derive(Clone, Copy)]
struct Euler(f64);

impl Rule<2, 2> for Euler {
    const READS_OUTS: bool = false;
    #[inline(always)]
    fn apply<T: Vector>(&self, [x, v]: [T; 2], a: T, [xo, vo]: &mut [T; 2]) {
        *xo = x + v * self.0;
        *vo = v + a * self.0;
    }
}

/// v' = v + h a, x' = x + h v'.
#[derive(Clone, Copy)]
struct Symplectic(f64);

impl Rule<2, 2> for Symplectic {
    const READS_OUTS: bool = false;
    #[inline(always)]
    fn apply<T: Vector>(&self, [x, v]: [T; 2], a: T, [xo, vo]: &mut [T; 2]) {
        let vn = v + a * self.0;
        *vo = vn;
        *xo = x + vn * self.0;
    }
}

/// x' = x + h v_m, v' = v + h a (midpoint, second stage; inputs x, v, v_m).
#[derive(Clone, Copy)]
struct MidpointFinal(f64);

impl Rule<3, 2> for MidpointFinal {
    const READS_OUTS: bool = false;
    #[inline(always)]
    fn apply<T: Vector>(&self, [x, v, vm]: [T; 3], a: T, [xo, vo]: &mut [T; 2]) {
        *xo = x + vm * self.0;
        *vo = v + a * self.0;
    }
}

/// RK4 first stage: acc = k1 = (v, a), (x_t, v_t) = w + h/2 k1. Inputs x, v; outputs acc_x, acc_v,
/// x_t, v_t.
#[derive(Clone, Copy)]
struct Rk4First(f64);

impl Rule<2, 4> for Rk4First {
    const READS_OUTS: bool = false;
    #[inline(always)]
    fn apply<T: Vector>(&self, [x, v]: [T; 2], a: T, [ax, av, xo, vo]: &mut [T; 4]) {
        *ax = v;
        *av = a;
        *xo = x + v * self.0;
        *vo = v + a * self.0;
    }
}

/// RK4 middle stages: acc += 2 (v_s, a), (x_t, v_t) = w + h_t (v_s, a). Inputs x, v, v_s; outputs
/// acc_x, acc_v, x_t, v_t.
#[derive(Clone, Copy)]
struct Rk4Stage(f64);

impl Rule<3, 4> for Rk4Stage {
    const READS_OUTS: bool = true;
    #[inline(always)]
    fn apply<T: Vector>(&self, [x, v, vs]: [T; 3], a: T, [ax, av, xo, vo]: &mut [T; 4]) {
        *ax = *ax + vs * 2.0;
        *av = *av + a * 2.0;
        *xo = x + vs * self.0;
        *vo = v + a * self.0;
    }
}

/// RK4 end: w' = w + h/6 (acc + k4). Inputs x, v, v_s, acc_x, acc_v.
#[derive(Clone, Copy)]
struct Rk4Final(f64);

impl Rule<5, 2> for Rk4Final {
    const READS_OUTS: bool = false;
    #[inline(always)]
    fn apply<T: Vector>(&self, [x, v, vs, ax, av]: [T; 5], a: T, [xo, vo]: &mut [T; 2]) {
        *xo = x + (ax + vs) * (self.0 / 6.0);
        *vo = v + (av + a) * (self.0 / 6.0);
    }
}

/// Explicit Euler (slides; Shinya eq. 10-11): x' = x + h v, v' = v + h a(x, v).
pub fn euler_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let sink = Fused::new(m.n, [x, v], [x_out, v_out], Euler(p.h));
    accelerations_into(m, p, x, v, &mut s.spring_f, sink);
}

/// Symplectic Euler: v' = v + h a(x, v), x' = x + h v'.
pub fn symplectic_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let sink = Fused::new(m.n, [x, v], [x_out, v_out], Symplectic(p.h));
    accelerations_into(m, p, x, v, &mut s.spring_f, sink);
}

/// The midpoint method (slides; Shinya eq. 18): a half Euler step to (x_m, v_m), then a full step from
/// (x, v) with the derivative there.
pub fn midpoint_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let h = p.h;
    let Scratch { spring_f, xt, vt, .. } = s;
    // x_m = x + h/2 v, v_m = v + h/2 a(x, v)
    let sink = Fused::new(m.n, [x, v], [&mut xt[..], &mut vt[..]], Euler(0.5 * h));
    accelerations_into(m, p, x, v, spring_f, sink);
    // x' = x + h v_m, v' = v + h a(x_m, v_m)
    let sink = Fused::new(m.n, [x, v, vt], [x_out, v_out], MidpointFinal(h));
    accelerations_into(m, p, xt, vt, spring_f, sink);
}

/// Classic fourth-order Runge-Kutta (Shinya eq. 19) on w = (x, v), ẇ = (v, a(x, v)).
pub fn rk4_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let (h, n) = (p.h, m.n);
    let Scratch { spring_f, xt, vt, xt2, vt2, acc_x, acc_v, .. } = s;
    // k1 at (x, v): acc = k1, (xt, vt) = w + h/2 k1
    let sink = Fused::new(n, [x, v], [&mut acc_x[..], &mut acc_v[..], &mut xt[..], &mut vt[..]], Rk4First(0.5 * h));
    accelerations_into(m, p, x, v, spring_f, sink);
    // k2 at (xt, vt): acc += 2 k2, (xt2, vt2) = w + h/2 k2
    let sink = Fused::new(n, [x, v, vt], [&mut acc_x[..], &mut acc_v[..], &mut xt2[..], &mut vt2[..]], Rk4Stage(0.5 * h));
    accelerations_into(m, p, xt, vt, spring_f, sink);
    // k3 at (xt2, vt2): acc += 2 k3, (xt, vt) = w + h k3
    let sink = Fused::new(n, [x, v, vt2], [&mut acc_x[..], &mut acc_v[..], &mut xt[..], &mut vt[..]], Rk4Stage(h));
    accelerations_into(m, p, xt2, vt2, spring_f, sink);
    // k4 at (xt, vt): w' = w + h/6 (k1 + 2 k2 + 2 k3 + k4)
    let sink = Fused::new(n, [x, v, vt, acc_x, acc_v], [x_out, v_out], Rk4Final(h));
    accelerations_into(m, p, xt, vt, spring_f, sink);
}
