//! Scripted motion (issue #17 items 1 and 5): a collider or a set of pinned particles moved along a
//! keyframed path, e.g. a sphere swept through a hanging cloth or a curtain's top row on a moving rail.
//!
//! A [`Path`] is a list of keyframes (time, offset): the displacement from where the thing was placed
//! in the model, interpolated linearly between keys (so the velocity is constant between keys and is
//! the one the contact response and the spring damping see), held at the first key before it and at
//! the last after it, or repeated with the keys' period when `repeat` is set. The offset at time t is
//! [`Path::offset`]; its velocity [`Path::velocity`]. Both engines evaluate it in f64 on the host, at the
//! end time of every step (the GPU receives the placed records per step; see
//! `crate::gpu::GpuEngine::prepare_frame`).
//!
//! In a scene file: `motions: [(target: Collider(0), path: (keys: [(0.0, (0.0, 0.0, 0.0)), (2.0, (1.0,
//! 0.0, 0.0))]))]`, or `target: AllPins` for every pinned particle, `target: Pins([0, 1, 2])` for some.

use super::bad;
use crate::error::{Bound, Error, Result};

/// A keyframed translation: offsets from the rest placement at increasing times.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Path {
    /// (time (s), offset (m)) pairs with strictly increasing times; at least one.
    pub keys: Vec<(f64, [f64; 3])>,
    /// Repeat the keys with period (last time − first time) instead of holding the last key.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeat: bool,
}

/// What a [`Motion`] moves.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum MotionTarget {
    /// The model's collider of this index (its shape translated; its rotation is kept).
    Collider(usize),
    /// Every particle pinned in the model.
    AllPins,
    /// These pinned particles.
    Pins(Vec<u32>),
}

/// A target moved along a path.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Motion {
    /// What moves.
    pub target: MotionTarget,
    /// How it moves.
    pub path: Path,
}

impl Path {
    /// A path that moves at constant velocity `v` (m/s) from time 0 to `t_end`, then stops.
    pub fn linear(v: [f64; 3], t_end: f64) -> Path {
        Path { keys: vec![(0.0, [0.0; 3]), (t_end, v.map(|c| c * t_end))], repeat: false }
    }

    /// The time within the keys' span that `t` maps to (repeat: modulo the period).
    fn local_time(&self, t: f64) -> f64 {
        let (t0, t1) = (self.keys[0].0, self.keys[self.keys.len() - 1].0);
        if self.repeat && t1 > t0 && t > t1 {
            t0 + (t - t0).rem_euclid(t1 - t0)
        } else {
            t
        }
    }

    /// The segment [k, k + 1] that holds `t`, or `None` before the first or after the last key.
    fn segment(&self, t: f64) -> Option<usize> {
        let k = self.keys.partition_point(|&(tk, _)| tk <= t);
        (k >= 1 && k < self.keys.len()).then(|| k - 1)
    }

    /// The offset (m) at time `t` (s): linear between keys, the first key's before them, the last key's
    /// after them (unless repeated).
    pub fn offset(&self, t: f64) -> [f64; 3] {
        let Some(last) = self.keys.last() else { return [0.0; 3] };
        let t = self.local_time(t);
        match self.segment(t) {
            Some(k) => {
                let ((ta, a), (tb, b)) = (self.keys[k], self.keys[k + 1]);
                let s = (t - ta) / (tb - ta);
                [0, 1, 2].map(|c| a[c] + (b[c] - a[c]) * s)
            }
            None if t < self.keys[0].0 => self.keys[0].1,
            None => last.1,
        }
    }

    /// The velocity (m/s) at time `t`: the slope of the segment that holds t, zero outside the keys
    /// (a repeated path's jump back from the last key to the first is a teleport, not a velocity).
    pub fn velocity(&self, t: f64) -> [f64; 3] {
        let t = self.local_time(t);
        match self.segment(t) {
            Some(k) => {
                let ((ta, a), (tb, b)) = (self.keys[k], self.keys[k + 1]);
                [0, 1, 2].map(|c| (b[c] - a[c]) / (tb - ta))
            }
            None => [0.0; 3],
        }
    }

    /// Checks the keys: at least one, finite, times strictly increasing. `field` names the path.
    pub(crate) fn validate(&self, field: &str) -> Result<()> {
        if self.keys.is_empty() {
            return Err(Error::model(format!("{field}.keys"), "[]", Bound::min_count(1).worded("needs at least one key")));
        }
        for (k, &(t, off)) in self.keys.iter().enumerate() {
            if !t.is_finite() {
                return Err(bad(format!("{field}.keys[{k}].time"), t, Bound::Finite));
            }
            super::check_vec(&format!("{field}.keys[{k}].offset"), &off)?;
            if k > 0 && t <= self.keys[k - 1].0 {
                return Err(bad(
                    format!("{field}.keys[{k}].time"),
                    t,
                    Bound::Other("key times must increase strictly (out of order)".into()),
                ));
            }
        }
        Ok(())
    }
}

impl Motion {
    /// Checks the motion against a model with `n_colliders` colliders and the `pinned` flags: the target
    /// exists (a `Pins` target's particles are pinned) and the path is well formed.
    pub(crate) fn validate(&self, m: usize, n_colliders: usize, pinned: &[bool]) -> Result<()> {
        let field = format!("motions[{m}]");
        match &self.target {
            MotionTarget::Collider(c) if *c >= n_colliders => {
                return Err(Error::invalid(
                    &format!("{field}.target"),
                    format!("Collider({c})"),
                    Bound::Index { len: n_colliders as u64, rule: "no such collider (the model has {})" },
                ));
            }
            MotionTarget::Pins(ps) => {
                for (k, &p) in ps.iter().enumerate() {
                    if !pinned.get(p as usize).copied().unwrap_or(false) {
                        return Err(Error::invalid(
                            &format!("{field}.target.Pins[{k}]"),
                            p,
                            Bound::Other("must be a pinned particle of the model (moving pins move pinned particles)".into()),
                        ));
                    }
                }
            }
            _ => {}
        }
        self.path.validate(&format!("{field}.path"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_interpolate_hold_and_repeat() {
        let p = Path { keys: vec![(1.0, [0.0; 3]), (3.0, [2.0, 0.0, -4.0])], repeat: false };
        assert_eq!(p.offset(0.0), [0.0; 3]);
        assert_eq!(p.offset(2.0), [1.0, 0.0, -2.0]);
        assert_eq!(p.velocity(2.0), [1.0, 0.0, -2.0]);
        assert_eq!(p.offset(9.0), [2.0, 0.0, -4.0]);
        assert_eq!(p.velocity(9.0), [0.0; 3]);
        let r = Path { repeat: true, ..p.clone() };
        assert_eq!(r.offset(4.0), [1.0, 0.0, -2.0]);
        assert_eq!(r.velocity(4.5), [1.0, 0.0, -2.0]);
        let bad = Path { keys: vec![(1.0, [0.0; 3]), (1.0, [1.0; 3])], repeat: false };
        let e = bad.validate("motions[0].path").unwrap_err().to_string();
        assert!(e.contains("motions[0].path.keys[1].time") && e.contains("out of order"), "{e}");
    }
}
