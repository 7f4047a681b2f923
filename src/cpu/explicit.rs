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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::explicit as kernel;

    /// A jittered, moving state of the 21×21 curtain with a cursor, and its laid-out model.
    fn setup(n: usize) -> (CpuModel, Vec<V3>, Vec<V3>) {
        let model = crate::model::curtain(n, None).unwrap();
        let mut cm = CpuModel::new(&model).unwrap();
        cm.cursor = Some(crate::model::Cursor { particle: 7, target: [0.1, -0.2, 0.3], stiffness: 1.7e3, damping: 3.1 });
        let x: Vec<V3> = model.positions.iter().enumerate().map(|(i, p)| V3::from(*p) + V3::new(1e-3 * (i % 7) as f64, 0.0, 0.0)).collect();
        let v: Vec<V3> = (0..cm.n)
            .map(|i| if cm.inv_mass[i] == 0.0 { V3::zeros() } else { V3::new(0.01 * (i % 5) as f64, -0.02, 0.003 * (i % 3) as f64) })
            .collect();
        (cm, x, v)
    }

    /// Every explicit step of the engine equals, bit for bit, the reference kernels run one particle at a
    /// time in the GPU's dispatch order, on one thread and on several.
    #[test]
    fn the_engine_steps_are_the_reference_kernels_bit_for_bit() {
        for n in [21, 71] {
            let (cm, x, v) = setup(n);
            let p = StepParams { h: 2e-4, alpha: 1.3e-4 };
            let np = cm.n;
            let all = |f: &dyn Fn(usize) -> (V3, V3)| -> (Vec<V3>, Vec<V3>) { (0..np).map(f).unzip() };
            // the reference, kernel by kernel
            let euler = all(&|i| kernel::euler_step(i, &cm, &p, &x, &v));
            let symplectic = all(&|i| kernel::symplectic_step(i, &cm, &p, &x, &v));
            let (xm, vm) = all(&|i| kernel::midpoint_stage1(i, &cm, &p, &x, &v, &x, &v));
            let midpoint = all(&|i| kernel::midpoint_stage2(i, &cm, &p, &xm, &vm, &x, &v));
            let (s1, a1): (Vec<_>, Vec<_>) = (0..np).map(|i| kernel::rk4_stage1(i, &cm, &p, &x, &v, &x, &v)).unzip();
            let (x1, v1): (Vec<V3>, Vec<V3>) = s1.into_iter().unzip();
            let (s2, a2): (Vec<_>, Vec<_>) = (0..np).map(|i| kernel::rk4_stage2(i, &cm, &p, &x1, &v1, &x, &v, a1[i])).unzip();
            let (x2, v2): (Vec<V3>, Vec<V3>) = s2.into_iter().unzip();
            let (s3, a3): (Vec<_>, Vec<_>) = (0..np).map(|i| kernel::rk4_stage3(i, &cm, &p, &x2, &v2, &x, &v, a2[i])).unzip();
            let (x3, v3): (Vec<V3>, Vec<V3>) = s3.into_iter().unzip();
            let rk4 = all(&|i| kernel::rk4_stage4(i, &cm, &p, &x3, &v3, &x, &v, a3[i]));
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                type States = (Vec<V3>, Vec<V3>);
                type Step = fn(&CpuModel, &StepParams, &[V3], &[V3], &mut [V3], &mut [V3], &mut Scratch);
                let steps: [(&str, Step, &States); 4] = [
                    ("euler", euler_step, &euler),
                    ("symplectic", symplectic_step, &symplectic),
                    ("midpoint", midpoint_step, &midpoint),
                    ("rk4", rk4_step, &rk4),
                ];
                for (name, step, want) in steps {
                    let mut s = Scratch::new(np, cm.sa.len());
                    let (mut xo, mut vo) = (vec![V3::zeros(); np], vec![V3::zeros(); np]);
                    pool.install(|| step(&cm, &p, &x, &v, &mut xo, &mut vo, &mut s));
                    assert!(
                        xo == want.0 && vo == want.1,
                        "{name}, {n}×{n}, {threads} threads: the engine differs from the reference kernels"
                    );
                }
            }
        }
    }
}
