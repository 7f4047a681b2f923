//! Shinya's linearized explicit Euler (§4) in f64, whole-array: the engine's form of the kernels of
//! `shaders/leu.wgsl`, whose per-particle twins are in [`crate::reference::leu`].
//!
//! At a linearization point (x₀, v₀) we keep a₀ = M⁻¹f(x₀, v₀) and, per spring, the stiffness block
//! K_s = k[n̂n̂ᵀ + max(0, 1 − L/l)(I − n̂n̂ᵀ)] (the Jacobian −∂f/∂x of Kauppila §2.2 with its transverse
//! term clamped at zero, as Choi & Ko do: the exact block is indefinite for a compressed spring, and a
//! linearization held for h_nl then grows those modes; measured on the swinging curtain, the exact block
//! diverged and needed retries where the clamped one did not) and the damping block
//! D_s = αK_s + k_d n̂n̂ᵀ (−∂f/∂v). Between linearizations the force is eq. 34:
//! f = f₀ − K(x − x₀) − D(v − v₀), plus the linear drag, central field and cursor spring terms.

use super::forces::{accelerations, StepParams};
use super::{CpuModel, Scratch, V3};
use rayon::prelude::*;

pub use crate::reference::implicit::{sym_apply, Sym3};
use crate::reference::leu as kernel;
pub use crate::reference::leu::{leu_accel, spring_blocks, LeuBlock};

/// The linearization: (x₀, v₀, a₀) and the blocks of every incidence entry (the GPU's layout: each
/// endpoint keeps its own copy of its springs' blocks, see [`crate::reference::leu`]).
#[derive(Clone, Debug, Default)]
pub struct Linearization {
    /// x₀.
    pub x0: Vec<V3>,
    /// v₀.
    pub v0: Vec<V3>,
    /// a₀ = M⁻¹ f(x₀, v₀).
    pub a0: Vec<V3>,
    /// (K_s, D_s) per incidence entry (`m.incidence.entries`).
    pub blocks: Vec<LeuBlock>,
}

/// Step 1 of Shinya's procedure: evaluate f₀, K and D at (x, v). The numbers of the reference's
/// `leu_linearize` for every particle, with each spring's force evaluated once.
pub fn leu_linearize(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], lin: &mut Linearization, s: &mut Scratch) {
    lin.x0.clear();
    lin.x0.extend_from_slice(x);
    lin.v0.clear();
    lin.v0.extend_from_slice(v);
    lin.a0.resize(m.n, V3::zeros());
    accelerations(m, p, x, v, &mut lin.a0, &mut s.spring_f);
    // each spring's blocks for both of its entries (the same numbers from either end), in parallel
    lin.blocks.clear();
    lin.blocks.par_extend(m.incidence.entries.par_iter().map(|&e| spring_blocks(m, p.alpha, (e >> 1) as usize, x)));
}

/// Step 2.1-2.3: one Euler step with the linearized force (the reference's `leu_step` per particle).
/// Returns true when a speed exceeds `speed_limit` (Shinya's divergence check).
#[allow(clippy::too_many_arguments)] // the kernel's bindings, in order
pub fn leu_step(
    m: &CpuModel,
    p: &StepParams,
    lin: &Linearization,
    speed_limit: f64,
    x: &[V3],
    v: &[V3],
    x_out: &mut [V3],
    v_out: &mut [V3],
) -> bool {
    let mut diverged = false;
    for i in 0..m.n {
        let (x_new, v_new, too_fast) = kernel::leu_step(i, m, p.h, speed_limit, x, v, &lin.x0, &lin.v0, &lin.a0, &lin.blocks);
        (x_out[i], v_out[i]) = (x_new, v_new);
        diverged |= too_fast;
    }
    diverged
}

/// The retry after a divergence: discard the step, re-evaluate K and D at (x, v), and take the step
/// again from (x, v). With a fresh linearization the force at (x, v) is the exact one. The numbers of
/// the reference's `leu_fixup` for every particle (x' = x + h v, v' = v + h a₀).
#[allow(clippy::too_many_arguments)] // the kernel's bindings, in order
pub fn leu_fixup(
    m: &CpuModel,
    p: &StepParams,
    lin: &mut Linearization,
    x: &[V3],
    v: &[V3],
    x_out: &mut [V3],
    v_out: &mut [V3],
    s: &mut Scratch,
) {
    leu_linearize(m, p, x, v, lin, s);
    let h = p.h;
    for i in 0..m.n {
        x_out[i] = x[i] + v[i] * h;
        v_out[i] = v[i] + lin.a0[i] * h;
    }
}
