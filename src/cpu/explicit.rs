//! The explicit integrators on the CPU engine: the kernels of [`crate::reference::explicit`] (the twins
//! of `shaders/explicit.wgsl`) run over all particles in parallel.
//!
//! Each step reads the state (x, v) and writes (x_out, v_out); the GPU ping-pongs the same way. Each
//! derivative evaluation computes the spring forces once ([`spring_forces`]) and then, per particle,
//! gathers its acceleration ([`gather`], bit for bit the reference's `accel`) and applies the
//! reference kernel's update body ([`euler_update`] and friends) at once.

use super::fast::{FastScratch, ForcePlan};
use super::forces::{gather, spring_forces, StepParams, MIN_PAR_LEN};
use super::{CpuModel, Scratch, V3};
use crate::reference::explicit::{euler_update, rk4_accumulate, rk4_finish, symplectic_update, State};
use rayon::prelude::*;

/// The state (x, v) a derivative is taken at.
type At<'a> = (&'a [V3], &'a [V3]);

/// For every particle i: aᵢ = M⁻¹f(x, v) at `at`, then `f(i, aᵢ, outs[..][i])`. With `fast` the fused
/// kernel of [`super::fast`] runs (its plan made or remade for the current pool's thread count);
/// without it, the plain passes: every spring's force ([`spring_forces`] into `spring_f`), then per
/// particle the gather. Both give the reference's `accel` bit for bit.
fn derive<const K: usize>(
    m: &CpuModel,
    alpha: f64,
    at: At<'_>,
    (spring_f, fast): (&mut Vec<V3>, &mut Option<(ForcePlan, FastScratch)>),
    outs: [&mut [V3]; K],
    f: impl Fn(usize, V3, [&mut V3; K]) + Sync,
) {
    let (x, v) = at;
    if let Some((plan, scratch)) = fast {
        let threads = rayon::current_num_threads();
        if !plan.fits(m, threads) {
            *plan = ForcePlan::new(m, threads);
        }
        return plan.for_each_accel(scratch, m, alpha, at, outs, f);
    }
    spring_forces(m, alpha, x, v, spring_f);
    let sf = &spring_f[..];
    let n = m.n;
    let mut rest = outs.map(|o| &mut o[..n]);
    let mut pieces = Vec::with_capacity(n.div_ceil(MIN_PAR_LEN));
    let mut lo = 0;
    while lo < n {
        let len = MIN_PAR_LEN.min(n - lo);
        let piece = rest.each_mut().map(|r| {
            let (head, tail) = std::mem::take(r).split_at_mut(len);
            *r = tail;
            head
        });
        pieces.push((lo, piece));
        lo += len;
    }
    let task = |(lo, mut piece): (usize, [&mut [V3]; K])| {
        for j in 0..piece[0].len() {
            let i = lo + j;
            f(i, gather(m, sf, i, x, v), piece.each_mut().map(|o| &mut o[j]));
        }
    };
    if pieces.len() < 2 {
        pieces.into_iter().for_each(task);
    } else {
        pieces.into_par_iter().for_each(task);
    }
}

/// Stores a particle's state.
#[inline(always)]
fn put([x, v]: [&mut V3; 2], s: State) {
    (*x, *v) = s;
}

/// Explicit Euler (slides; Shinya eq. 10-11): x' = x + h v, v' = v + h a(x, v) (`euler_step`).
pub fn euler_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let Scratch { spring_f, fast, .. } = s;
    derive(m, p.alpha, (x, v), (spring_f, fast), [x_out, v_out], |i, a, o| put(o, euler_update(x[i], v[i], v[i], a, p.h)));
}

/// Symplectic Euler: v' = v + h a(x, v), x' = x + h v' (`symplectic_step`).
pub fn symplectic_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let Scratch { spring_f, fast, .. } = s;
    derive(m, p.alpha, (x, v), (spring_f, fast), [x_out, v_out], |i, a, o| put(o, symplectic_update(x[i], v[i], a, p.h)));
}

/// The midpoint method (slides; Shinya eq. 18): a half Euler step to (x_m, v_m) (`midpoint_stage1`),
/// then a full step from (x, v) with the derivative there (`midpoint_stage2`).
pub fn midpoint_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let h = p.h;
    let Scratch { spring_f, fast, xt, vt, .. } = s;
    // x_m = x + h/2 v, v_m = v + h/2 a(x, v)
    derive(m, p.alpha, (x, v), (spring_f, fast), [xt, vt], |i, a, o| put(o, euler_update(x[i], v[i], v[i], a, 0.5 * h)));
    // x' = x + h v_m, v' = v + h a(x_m, v_m)
    let (xm, vm) = (&xt[..], &vt[..]);
    derive(m, p.alpha, (xm, vm), (spring_f, fast), [x_out, v_out], |i, a, o| put(o, euler_update(x[i], v[i], vm[i], a, h)));
}

/// Classic fourth-order Runge-Kutta (Shinya eq. 19) on w = (x, v), ẇ = (v, a(x, v)): `rk4_stage1` to
/// `rk4_stage4`.
pub fn rk4_step(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x_out: &mut [V3], v_out: &mut [V3], s: &mut Scratch) {
    let h = p.h;
    let Scratch { spring_f, fast, xt, vt, xt2, vt2, acc_x, acc_v } = s;
    let work = (spring_f, fast);
    // k1 at (x, v): acc = k1, (xt, vt) = w + h/2 k1
    derive(m, p.alpha, (x, v), (&mut *work.0, &mut *work.1), [xt, vt, acc_x, acc_v], |i, a, [xo, vo, ax, av]| {
        put([xo, vo], euler_update(x[i], v[i], v[i], a, 0.5 * h));
        put([ax, av], (v[i], a));
    });
    // k2 at (xt, vt): acc += 2 k2, (xt2, vt2) = w + h/2 k2
    rk4_middle(m, p, 0.5 * h, [x, v, xt, vt], [xt2, vt2, acc_x, acc_v], (&mut *work.0, &mut *work.1));
    // k3 at (xt2, vt2): acc += 2 k3, (xt, vt) = w + h k3
    rk4_middle(m, p, h, [x, v, xt2, vt2], [xt, vt, acc_x, acc_v], (&mut *work.0, &mut *work.1));
    // k4 at (xt, vt): w' = w + h/6 (k1 + 2 k2 + 2 k3 + k4)
    let (xs, vs, ax, av) = (&xt[..], &vt[..], &acc_x[..], &acc_v[..]);
    derive(m, p.alpha, (xs, vs), work, [x_out, v_out], |i, a, o| put(o, rk4_finish(x[i], v[i], (ax[i], av[i]), vs[i], a, h)));
}

/// The working memory of [`derive`].
type Work<'a> = (&'a mut Vec<V3>, &'a mut Option<(ForcePlan, FastScratch)>);

/// RK4 stages 2 and 3 (`rk4_stage2`, `rk4_stage3`): the derivative at (xs, vs), acc += 2 k, and the
/// state w₀ + hs k into (xo, vo).
fn rk4_middle(m: &CpuModel, p: &StepParams, hs: f64, [x, v, xs, vs]: [&[V3]; 4], outs: [&mut [V3]; 4], work: Work<'_>) {
    derive(m, p.alpha, (xs, vs), work, outs, |i, a, [xo, vo, ax, av]| {
        put([xo, vo], euler_update(x[i], v[i], vs[i], a, hs));
        let acc = rk4_accumulate((*ax, *av), vs[i], a);
        put([ax, av], acc);
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
    /// time in the GPU's dispatch order, on one thread and on several, with the fused kernel of
    /// [`super::super::fast`] and with the plain passes.
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
                for ((name, step, want), fast) in steps.into_iter().flat_map(|s| [(s, false), (s, true)]) {
                    let mut s = Scratch::new(np, cm.end_a.len());
                    if !fast {
                        s.fast = None;
                    }
                    let (mut xo, mut vo) = (vec![V3::zeros(); np], vec![V3::zeros(); np]);
                    pool.install(|| step(&cm, &p, &x, &v, &mut xo, &mut vo, &mut s));
                    assert!(
                        xo == want.0 && vo == want.1,
                        "{name}, {n}×{n}, {threads} threads, fused kernel {fast}: the engine differs from the reference kernels"
                    );
                }
            }
        }
    }
}
