//! The explicit integrators on the CPU engine: the kernels of [`crate::reference::explicit`] (the twins
//! of `shaders/explicit.wgsl`) run over all particles in parallel.
//!
//! Each step reads the state (x, v) and writes (x_out, v_out); the GPU ping-pongs the same way. Each
//! derivative evaluation computes the spring forces once ([`spring_forces`]) and then, per particle,
//! gathers its acceleration ([`gather`], bit for bit the reference's `accel`) and applies the
//! reference kernel's update body ([`euler_update`] and friends) at once.

use super::forces::{gather, spring_forces, StepParams, MIN_PAR_LEN};
use super::{CpuModel, Scratch, V3};
use crate::reference::explicit::{euler_update, rk4_accumulate, rk4_finish, symplectic_update, State};
use rayon::prelude::*;

/// `f(i, out_a[i], out_b[i])` for every particle i < n, in parallel for large n.
fn each2(n: usize, a: &mut [V3], b: &mut [V3], f: impl Fn(usize, &mut V3, &mut V3) + Sync) {
    let (a, b) = (&mut a[..n], &mut b[..n]);
    if n < 2 * MIN_PAR_LEN {
        a.iter_mut().zip(b.iter_mut()).enumerate().for_each(|(i, (a, b))| f(i, a, b));
    } else {
        a.par_iter_mut().zip(b.par_iter_mut()).with_min_len(MIN_PAR_LEN).enumerate().for_each(|(i, (a, b))| f(i, a, b));
    }
}

/// [`each2`] over two pairs of outputs: the state and the RK4 accumulator.
fn each4(n: usize, [a, b, c, d]: [&mut [V3]; 4], f: impl Fn(usize, (&mut V3, &mut V3), (&mut V3, &mut V3)) + Sync) {
    let (a, b, c, d) = (&mut a[..n], &mut b[..n], &mut c[..n], &mut d[..n]);
    if n < 2 * MIN_PAR_LEN {
        a.iter_mut()
            .zip(b.iter_mut())
            .zip(c.iter_mut().zip(d.iter_mut()))
            .enumerate()
            .for_each(|(i, ((a, b), (c, d)))| f(i, (a, b), (c, d)));
    } else {
        a.par_iter_mut()
            .zip(b.par_iter_mut())
            .zip(c.par_iter_mut().zip(d.par_iter_mut()))
            .with_min_len(MIN_PAR_LEN)
            .enumerate()
            .for_each(|(i, ((a, b), (c, d)))| f(i, (a, b), (c, d)));
    }
}

/// Stores a particle's state.
#[inline(always)]
fn put((x, v): (&mut V3, &mut V3), s: State) {
    (*x, *v) = s;
}

/// Explicit Euler (slides; Shinya eq. 10-11): x' = x + h v, v' = v + h a(x, v) (`euler_step`).
pub fn euler_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    spring_forces(m, p.alpha, x, v, &mut s.spring_f);
    let sf = &s.spring_f[..];
    each2(m.n, x_out, v_out, |i, xo, vo| put((xo, vo), euler_update(x[i], v[i], v[i], gather(m, sf, i, x, v), p.h)));
}

/// Symplectic Euler: v' = v + h a(x, v), x' = x + h v' (`symplectic_step`).
pub fn symplectic_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    spring_forces(m, p.alpha, x, v, &mut s.spring_f);
    let sf = &s.spring_f[..];
    each2(m.n, x_out, v_out, |i, xo, vo| put((xo, vo), symplectic_update(x[i], v[i], gather(m, sf, i, x, v), p.h)));
}

/// The midpoint method (slides; Shinya eq. 18): a half Euler step to (x_m, v_m) (`midpoint_stage1`),
/// then a full step from (x, v) with the derivative there (`midpoint_stage2`).
pub fn midpoint_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let h = p.h;
    let Scratch { spring_f, xt, vt, .. } = s;
    // x_m = x + h/2 v, v_m = v + h/2 a(x, v)
    spring_forces(m, p.alpha, x, v, spring_f);
    let sf = &spring_f[..];
    each2(m.n, xt, vt, |i, xo, vo| put((xo, vo), euler_update(x[i], v[i], v[i], gather(m, sf, i, x, v), 0.5 * h)));
    // x' = x + h v_m, v' = v + h a(x_m, v_m)
    let (xm, vm) = (&xt[..], &vt[..]);
    spring_forces(m, p.alpha, xm, vm, spring_f);
    let sf = &spring_f[..];
    each2(m.n, x_out, v_out, |i, xo, vo| put((xo, vo), euler_update(x[i], v[i], vm[i], gather(m, sf, i, xm, vm), h)));
}

/// Classic fourth-order Runge-Kutta (Shinya eq. 19) on w = (x, v), ẇ = (v, a(x, v)): `rk4_stage1` to
/// `rk4_stage4`.
pub fn rk4_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let (h, n) = (p.h, m.n);
    let Scratch { spring_f, xt, vt, xt2, vt2, acc_x, acc_v, .. } = s;
    // k1 at (x, v): acc = k1, (xt, vt) = w + h/2 k1
    spring_forces(m, p.alpha, x, v, spring_f);
    let sf = &spring_f[..];
    each4(n, [xt, vt, acc_x, acc_v], |i, st, acc| {
        let a = gather(m, sf, i, x, v);
        put(st, euler_update(x[i], v[i], v[i], a, 0.5 * h));
        put(acc, (v[i], a));
    });
    // k2 at (xt, vt): acc += 2 k2, (xt2, vt2) = w + h/2 k2
    rk4_middle(m, p, 0.5 * h, [x, v, xt, vt], [xt2, vt2, acc_x, acc_v], spring_f);
    // k3 at (xt2, vt2): acc += 2 k3, (xt, vt) = w + h k3
    rk4_middle(m, p, h, [x, v, xt2, vt2], [xt, vt, acc_x, acc_v], spring_f);
    // k4 at (xt, vt): w' = w + h/6 (k1 + 2 k2 + 2 k3 + k4)
    let (xs, vs, ax, av) = (&xt[..], &vt[..], &acc_x[..], &acc_v[..]);
    spring_forces(m, p.alpha, xs, vs, spring_f);
    let sf = &spring_f[..];
    each2(n, x_out, v_out, |i, xo, vo| put((xo, vo), rk4_finish(x[i], v[i], (ax[i], av[i]), vs[i], gather(m, sf, i, xs, vs), h)));
}

/// RK4 stages 2 and 3 (`rk4_stage2`, `rk4_stage3`): the derivative at (xs, vs), acc += 2 k, and the
/// state w₀ + hs k into (xo, vo).
fn rk4_middle(m: &CpuModel, p: &StepParams, hs: f64, [x, v, xs, vs]: [&[V3]; 4], [xo, vo, ax, av]: [&mut [V3]; 4], spring_f: &mut Vec<V3>) {
    spring_forces(m, p.alpha, xs, vs, spring_f);
    let sf = &spring_f[..];
    each4(m.n, [xo, vo, ax, av], |i, st, (ax, av)| {
        let a = gather(m, sf, i, xs, vs);
        put(st, euler_update(x[i], v[i], vs[i], a, hs));
        let acc = rk4_accumulate((*ax, *av), vs[i], a);
        put((ax, av), acc);
    });
}
