//! Provot's strain limiting on the CPU engine: the reference kernel
//! [`crate::reference::strain_limit::strain_limit_first`] and
//! [`crate::reference::strain_limit::strain_limit_check`] (the twins of `shaders/strain_limit.wgsl`,
//! with the equations in their docs) run over the particles in parallel, ping-ponging between the state
//! and a scratch copy as the GPU does (a pass reads the scratch's old contents, the state two passes
//! back, for the acceleration), and stopping where [`crate::reference::strain_limit::strain_limit_all`]
//! stops.

use super::forces::MIN_PAR_LEN;
use super::{CpuModel, V3};
use crate::engine::PassTally;
pub use crate::reference::strain_limit::{strain_limit_check, strain_limit_first, strain_limit_pass, VelocityRule};
use rayon::prelude::*;

/// The scratch state the passes write into (sized on first use), and the method's velocity rule.
#[derive(Clone, Debug, Default)]
pub struct StrainScratch {
    x: Vec<V3>,
    v: Vec<V3>,
    /// How the velocities follow the positions ([`VelocityRule::of`] the method; the engine sets it
    /// with the method).
    pub rule: VelocityRule,
    /// Passes run and steps limited since the engine was built (the bench's passes per step).
    pub tally: PassTally,
}

impl StrainScratch {
    /// An empty scratch with the velocity rule `rule`.
    pub fn new(rule: VelocityRule) -> Self {
        StrainScratch { rule, ..Default::default() }
    }
}

/// The model's strain limiting (if any) on the state (x, v) after a step of size `h`, in place: Jacobi
/// passes, each over all particles in parallel from the previous pass' state, stopping as
/// [`crate::reference::strain_limit::strain_limit_all`] does; the passes run are added to the tally.
pub fn strain_limit(m: &CpuModel, h: f64, x: &mut Vec<V3>, v: &mut Vec<V3>, scratch: &mut StrainScratch) {
    let Some(sl) = m.strain_limit else { return };
    if h <= 0.0 {
        return;
    }
    let rule = scratch.rule;
    scratch.x.resize(x.len(), V3::zeros());
    scratch.v.resize(v.len(), V3::zeros());
    let mut run = sl.passes;
    for k in 0..sl.passes {
        let (sx, sv) = (&mut scratch.x[..m.n], &mut scratch.v[..m.n]);
        let (xs, vs) = (&x[..], &v[..]);
        let over = sx
            .par_iter_mut()
            .zip(sv.par_iter_mut())
            .with_min_len(MIN_PAR_LEN)
            .enumerate()
            .map(|(i, (xi, vi))| {
                let over;
                (*xi, *vi, over) = match k {
                    0 => strain_limit_first(i, m, h, &sl, rule, xs, vs),
                    // the scratch holds the state two passes back (swapped out after the pass before)
                    _ => strain_limit_check(i, m, h, &sl.for_pass(k), rule, (xs, vs), (*xi, *vi)),
                };
                over
            })
            .reduce(|| false, |a, b| a | b);
        if k % 2 == 0 && !over {
            run = k + 1;
            break;
        }
        std::mem::swap(x, &mut scratch.x);
        std::mem::swap(v, &mut scratch.v);
    }
    scratch.tally.passes += u64::from(run);
    scratch.tally.steps += 1;
    scratch.tally.most = scratch.tally.most.max(run);
}
