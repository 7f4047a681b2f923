//! The CPU engine's force evaluation: the forces of [`crate::reference::forces`] (re-exported here, where
//! the rest of the crate has always found them), evaluated in parallel on rayon.
//!
//! [`accelerations`] runs in two passes: each spring's force once ([`spring_force`], one pass over the
//! springs), then per particle the sum over its CSR incidence list in list order ([`gather`]). Every
//! sum is the one of the reference's per-particle [`accel`] (which evaluates each spring at both ends,
//! as the GPU does: the force on b is exactly the negation of the force on a), so the accelerations are
//! bit for bit the reference's, whatever the threads.

use super::{CpuModel, V3};
use rayon::prelude::*;

pub use crate::reference::forces::{
    accel, cursor_accel, energy, external_accel, kc_apply, max_strain, momentum, spring_force, StepParams, EPS_LEN,
};

/// Items per rayon task at least in the force passes (below that, splitting costs more than it saves).
pub(crate) const MIN_PAR_LEN: usize = 2048;

/// `sf[s]` = the force of spring s on its end a ([`spring_force`]), for every spring.
pub fn spring_forces(m: &CpuModel, alpha: f64, x: &[V3], v: &[V3], sf: &mut Vec<V3>) {
    sf.resize(m.end_a.len(), V3::zeros());
    if sf.len() < 2 * MIN_PAR_LEN {
        sf.iter_mut().enumerate().for_each(|(s, f)| *f = spring_force(m, alpha, s, x, v));
    } else {
        sf.par_iter_mut().with_min_len(MIN_PAR_LEN).enumerate().for_each(|(s, f)| *f = spring_force(m, alpha, s, x, v));
    }
}

/// The acceleration of particle `i` from the spring forces `sf` of [`spring_forces`]: the sum of the
/// reference's [`accel`], with each spring's force read instead of evaluated.
#[inline(always)]
pub fn gather(m: &CpuModel, sf: &[V3], i: usize, x: &[V3], v: &[V3]) -> V3 {
    let w = m.inv_mass[i];
    if w == 0.0 {
        return V3::zeros();
    }
    let mut f = V3::zeros();
    for &e in m.incidence.of(i) {
        let fs = sf[(e >> 1) as usize];
        if e & 1 == 0 {
            f += fs;
        } else {
            f -= fs;
        }
    }
    let a = f * w + external_accel(m, x[i], v[i]);
    match cursor_accel(m, i, x[i], v[i]) {
        Some(c) => a - c,
        None => a,
    }
}

/// `f(i, out_i)` for every particle i, in parallel for large models.
pub(crate) fn for_each_particle_mut<T: Send>(out: &mut [T], f: impl Fn(usize, &mut T) + Sync) {
    if out.len() < 2 * MIN_PAR_LEN {
        out.iter_mut().enumerate().for_each(|(i, o)| f(i, o));
    } else {
        out.par_iter_mut().with_min_len(MIN_PAR_LEN).enumerate().for_each(|(i, o)| f(i, o));
    }
}

/// Accelerations a = M⁻¹ f(x, v) of every particle: per-spring forces, then a per-particle gather over
/// the CSR incidence lists (the GPU gathers in the same order). Pinned particles get zero.
/// `spring_f` is working memory.
pub fn accelerations(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], out: &mut [V3], spring_f: &mut Vec<V3>) {
    spring_forces(m, p.alpha, x, v, spring_f);
    let sf = &spring_f[..];
    for_each_particle_mut(&mut out[..m.n], |i, a| *a = gather(m, sf, i, x, v));
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{Forces, Model};

    /// A deterministic value in [-0.5, 0.5).
    fn hash(i: usize) -> f64 {
        let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h ^ (h >> 29)) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }

    /// The plain evaluation: every spring's force, then the gather over the incidence lists.
    fn reference(m: &CpuModel, alpha: f64, x: &[V3], v: &[V3]) -> Vec<V3> {
        let sf: Vec<V3> = (0..m.end_a.len()).map(|s| spring_force(m, alpha, s, x, v)).collect();
        (0..m.n)
            .map(|i| {
                let w = m.inv_mass[i];
                if w == 0.0 {
                    return V3::zeros();
                }
                let mut f = V3::zeros();
                for &e in m.incidence.of(i) {
                    let fs = sf[(e >> 1) as usize];
                    if e & 1 == 0 {
                        f += fs;
                    } else {
                        f -= fs;
                    }
                }
                let a = f * w + external_accel(m, x[i], v[i]);
                a - cursor_accel(m, i, x[i], v[i]).unwrap_or_else(V3::zeros)
            })
            .collect()
    }

    /// A jittered state of `model`.
    pub(crate) fn state(model: &Model) -> (Vec<V3>, Vec<V3>) {
        let x = model
            .positions
            .iter()
            .enumerate()
            .map(|(i, p)| V3::new(p[0] + 0.004 * hash(6 * i), p[1] + 0.004 * hash(6 * i + 1), p[2] + 0.004 * hash(6 * i + 2)))
            .collect();
        let v = (0..model.n_particles()).map(|i| V3::new(hash(6 * i + 3), hash(6 * i + 4), hash(6 * i + 5))).collect();
        (x, v)
    }

    /// Random springs between random particles, damping, wind, a central field, pins and a
    /// zero-length spring: the generic paths and chunk-straddling springs.
    pub(crate) fn tangle(n: usize) -> Model {
        let mut m =
            Model::new(Forces { gravity: [0.0, -9.81, 0.0], drag: 0.3, wind: [1.0, 0.0, 0.5], central: Some(([0.1, 0.2, 0.3], 2.0)) });
        for i in 0..n {
            m.add_particle([hash(3 * i), hash(3 * i + 1), hash(3 * i + 2)], 0.01 + 0.001 * (i % 7) as f64);
        }
        for s in 0..4 * n {
            let a = (hash(7 * s + 100) + 0.5) * n as f64;
            let b = (hash(7 * s + 101) + 0.5) * n as f64;
            let (a, b) = (a as u32 % n as u32, b as u32 % n as u32);
            if a != b {
                m.add_spring(a, b, 50.0 + (s % 5) as f64, 0.01 * (s % 3) as f64);
            }
        }
        m.springs[0].rest = 0.3;
        m.pin(3);
        m.pin(n / 2);
        m
    }

    /// `threads`: the rayon pool sizes to evaluate on.
    fn check(model: &Model, threads: &[usize]) {
        let mut cm = CpuModel::new(model).unwrap();
        let (x, mut v) = state(model);
        let pinned: Vec<usize> = (0..cm.n).filter(|&i| cm.inv_mass[i] == 0.0).collect();
        for &i in &pinned {
            v[i] = V3::zeros();
        }
        // no cursor; a cursor on a particle in a group of four, on the last one (a tail lane when n is
        // not a multiple of four) and on a pinned one (which it must not move)
        let cursors = [None, Some(5), Some(cm.n - 1), pinned.first().copied()]
            .map(|p| p.map(|particle| crate::model::Cursor { particle, target: [0.1, -0.2, 0.3], stiffness: 1.7e3, damping: 3.1 }));
        for (&c, cursor) in threads.iter().flat_map(|c| cursors.iter().map(move |k| (c, k))) {
            cm.cursor = *cursor;
            let pool = rayon::ThreadPoolBuilder::new().num_threads(c).build().unwrap();
            for alpha in [0.0, 1.3e-4] {
                let want = reference(&cm, alpha, &x, &v);
                if let Some(cu) = cursor {
                    // the reference applies it: a free particle's acceleration changes, a pinned one stays 0
                    cm.cursor = None;
                    let plain = reference(&cm, alpha, &x, &v);
                    cm.cursor = Some(*cu);
                    let i = cu.particle;
                    assert_eq!(want[i] == plain[i], cm.inv_mass[i] == 0.0, "cursor on {i}");
                    assert!((0..cm.n).all(|j| j == i || want[j] == plain[j]));
                }
                let p = StepParams { h: 1e-4, alpha };
                let mut scratch = Vec::new();
                let bits = |a: &[V3]| a.iter().map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]).collect::<Vec<_>>();
                // the reference kernel's per-particle gather (each spring evaluated at both ends)
                let per_particle: Vec<V3> = (0..cm.n).map(|i| accel(&cm, alpha, i, &x, &v)).collect();
                assert_eq!(bits(&per_particle), bits(&want), "reference accel, alpha {alpha}, cursor {cursor:?}");
                for _ in 0..4 {
                    let mut got = vec![V3::repeat(f64::NAN); cm.n];
                    pool.install(|| accelerations(&cm, &p, &x, &v, &mut got, &mut scratch));
                    assert_eq!(bits(&got), bits(&want), "threads {c}, alpha {alpha}, cursor {cursor:?}");
                }
            }
        }
    }

    #[test]
    fn accelerations_match_the_plain_gather_bit_for_bit() {
        check(&crate::model::curtain(41, None).unwrap(), &[1, 2, 3, 4]);
        check(&crate::model::cloth(33, None).unwrap(), &[1, 2, 5]);
        check(&tangle(1100), &[1, 2, 3]);
        check(&tangle(7), &[1, 2]);
    }

    #[test]
    fn concurrent_callers_share_the_pool_safely() {
        let model = crate::model::curtain(41, None).unwrap();
        let cm = CpuModel::new(&model).unwrap();
        let (x, v) = state(&model);
        let p = StepParams { h: 1e-4, alpha: 0.0 };
        let want = reference(&cm, 0.0, &x, &v);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let mut scratch = Vec::new();
                    for _ in 0..200 {
                        let mut got = vec![V3::zeros(); cm.n];
                        accelerations(&cm, &p, &x, &v, &mut got, &mut scratch);
                        assert_eq!(got, want);
                    }
                });
            }
        });
    }

    #[test]
    fn a_zero_length_spring_has_no_force() {
        let mut model = crate::model::curtain(9, None).unwrap();
        model.positions[40] = model.positions[41];
        let cm = CpuModel::new(&model).unwrap();
        let (x, v): (Vec<V3>, Vec<V3>) = (model.positions.iter().map(|p| V3::from(*p)).collect(), vec![V3::zeros(); cm.n]);
        let mut out = vec![V3::zeros(); cm.n];
        accelerations(&cm, &StepParams { h: 1e-3, alpha: 1e-3 }, &x, &v, &mut out, &mut Vec::new());
        assert_eq!(out, reference(&cm, 1e-3, &x, &v));
    }
}
