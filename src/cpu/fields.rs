//! The aerodynamic wind's per-step pass on the CPU: [`crate::reference::fields::wind_kick`] over the
//! particles in parallel (the twin of `shaders/wind.wgsl`).

use super::{CpuModel, V3};
use rayon::prelude::*;

/// The velocities after the wind's impulse of a step h from (x, v), into `out` (sized here); positions
/// are unchanged. Nothing to do (and `false`) for a model without the wind.
pub fn wind_kick(m: &CpuModel, h: f64, x: &[V3], v: &[V3], out: &mut Vec<V3>) -> bool {
    if m.aero.is_none() {
        return false;
    }
    out.resize(m.n, V3::zeros());
    out.par_iter_mut().enumerate().with_min_len(1024).for_each(|(i, o)| *o = crate::reference::fields::wind_kick(i, m, h, x, v).1);
    true
}
