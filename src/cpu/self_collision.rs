//! Self-collision on the CPU engine: the reference kernels of [`crate::reference::self_collision`] (the
//! twin of `shaders/self_collision.wgsl`, the scheme in its docs), the repulsion run over the particles
//! in parallel. The hash is built sequentially (a counting sort: O(n), small beside the gather), so the
//! result is the reference's bit for bit.

use super::forces::MIN_PAR_LEN;
use super::{CpuModel, V3};
use crate::reference::self_collision::{sc_repulse, SpatialHash};
use rayon::prelude::*;

/// Every pass of the model's self-collision on the state (x, v), in place; nothing without it.
pub fn self_collide(m: &CpuModel, x: &mut [V3], v: &mut [V3]) {
    let Some(sc) = m.self_collision else { return };
    let n = m.n;
    let mut new = vec![(V3::zeros(), V3::zeros()); n];
    for _ in 0..sc.passes {
        let hash = SpatialHash::build(&x[..n], sc.cell_size());
        let (xs, vs) = (&x[..n], &v[..n]);
        new.par_iter_mut().with_min_len(MIN_PAR_LEN).enumerate().for_each(|(i, out)| {
            *out = sc_repulse(i, m, sc.thickness, &hash, xs, vs);
        });
        for (i, &(xi, vi)) in new.iter().enumerate() {
            x[i] = xi;
            v[i] = vi;
        }
    }
}
