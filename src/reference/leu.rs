//! Shinya's linearized explicit Euler (§4) in f64: one function per kernel of `shaders/leu.wgsl`
//! (`leu_linearize`, `leu_step`, `leu_fixup`), per particle, gathering over its CSR incidence list.
//!
//! At a linearization point (x₀, v₀) a particle keeps a₀ = M⁻¹f(x₀, v₀) and, per incident spring, the
//! stiffness block K_s = k[n̂n̂ᵀ + max(0, 1 − L/l)(I − n̂n̂ᵀ)] (−∂f/∂x, Kauppila §2.2, its transverse term
//! clamped at zero as Choi & Ko do) and the damping block D_s = αK_s + k_d n̂n̂ᵀ (−∂f/∂v, with Rayleigh
//! damping D = d₀M + αK, Shinya eq. 28). Between linearizations the force is Shinya's eq. 34,
//! f = f₀ − K(x − x₀) − D(v − v₀), plus the linear drag, central field and cursor spring terms.
//!
//! Like the GPU, each endpoint keeps its own copy of its springs' blocks, one [`LeuBlock`] per incidence
//! entry (seen from either end n̂ only changes sign, so both copies are the same numbers).

use super::forces::{accel, StepParams, EPS_LEN};
use super::implicit::{sym_apply, Sym3};
use super::model::{CpuModel, V3};

/// The blocks (K_s, D_s) of one incidence entry.
pub type LeuBlock = (Sym3, Sym3);

/// The blocks (K_s, D_s) of spring `s` at positions x (zero for a spring shorter than [`EPS_LEN`]).
pub fn spring_blocks(m: &CpuModel, alpha: f64, s: usize, x: &[V3]) -> LeuBlock {
    let d = x[m.end_a[s] as usize] - x[m.end_b[s] as usize];
    let l = d.norm();
    if l <= EPS_LEN {
        return ([0.0; 6], [0.0; 6]);
    }
    let n = d / l;
    let k = m.k[s];
    let c = (1.0 - m.rest[s] / l).max(0.0);
    let outer = [n.x * n.x, n.y * n.y, n.z * n.z, n.x * n.y, n.x * n.z, n.y * n.z];
    let eye = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0];
    let mut kb = [0.0; 6];
    let mut db = [0.0; 6];
    for j in 0..6 {
        kb[j] = k * (outer[j] + c * (eye[j] - outer[j]));
        db[j] = alpha * k * (outer[j] + c * (eye[j] - outer[j])) + m.kd[s] * outer[j];
    }
    (kb, db)
}

/// `leu_linearize`: step 1 of Shinya's procedure for particle `i` at (x, v). The GPU stores x₀ᵢ = xᵢ and
/// v₀ᵢ = vᵢ; this writes the blocks of the particle's springs into `blocks` (its own incidence entries,
/// in list order) and returns a₀ᵢ = (M⁻¹f(x, v))ᵢ.
pub fn leu_linearize(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], blocks: &mut [LeuBlock]) -> V3 {
    for (b, &e) in blocks.iter_mut().zip(m.incidence.of(i)) {
        *b = spring_blocks(m, p.alpha, (e >> 1) as usize, x);
    }
    accel(m, p.alpha, i, x, v)
}

/// The linearized acceleration of eq. 34 at (x, v) for particle `i`:
/// a₀ᵢ + M⁻¹[−Σ K_s(Δxᵢ − Δxⱼ) − Σ D_s(Δvᵢ − Δvⱼ)] − d₀Δvᵢ − sΔxᵢ (− cΔxᵢ − dΔvᵢ on the cursor's
/// particle), Δ the change since the linearization; `blocks` holds every incidence entry's blocks.
#[allow(clippy::too_many_arguments)] // the kernel's bindings, in order
pub fn leu_accel(i: usize, m: &CpuModel, x: &[V3], v: &[V3], x0: &[V3], v0: &[V3], a0: &[V3], blocks: &[LeuBlock]) -> V3 {
    let w = m.inv_mass[i];
    if w == 0.0 {
        return V3::zeros();
    }
    let dxi = x[i] - x0[i];
    let dvi = v[i] - v0[i];
    let mut f = V3::zeros();
    let (first, last) = (m.incidence.offsets[i] as usize, m.incidence.offsets[i + 1] as usize);
    for (&e, (kb, db)) in m.incidence.of(i).iter().zip(&blocks[first..last]) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let ddx = dxi - (x[j] - x0[j]);
        let ddv = dvi - (v[j] - v0[j]);
        f -= sym_apply(kb, ddx) + sym_apply(db, ddv);
    }
    let mut a = a0[i] + f * w - dvi * m.drag;
    if m.central_strength != 0.0 {
        a -= dxi * m.central_strength;
    }
    // the cursor spring is linear: its change since the linearization is exact
    if let Some(c) = m.cursor.filter(|c| c.particle == i) {
        a -= dxi * c.stiffness + dvi * c.damping;
    }
    a
}

/// `leu_step`: Shinya's steps 2.1-2.3 for particle `i`, an explicit Euler step with the linearized force
/// of eq. 34: x' = x + h v, v' = v + h a. Returns (x', v', diverged), diverged when |v'| exceeds
/// `speed_limit` (Shinya's divergence check; a NaN speed counts).
#[allow(clippy::neg_cmp_op_on_partial_ord, clippy::too_many_arguments)] // `!(s² ≤ lim²)` also catches NaN; the bindings
pub fn leu_step(
    i: usize,
    m: &CpuModel,
    h: f64,
    speed_limit: f64,
    x: &[V3],
    v: &[V3],
    x0: &[V3],
    v0: &[V3],
    a0: &[V3],
    blocks: &[LeuBlock],
) -> (V3, V3, bool) {
    let a = leu_accel(i, m, x, v, x0, v0, a0, blocks);
    let (x_new, v_new) = (x[i] + v[i] * h, v[i] + a * h);
    (x_new, v_new, !(v_new.norm_squared() <= speed_limit * speed_limit))
}

/// `leu_fixup`: the retry after a divergence for particle `i`. The step is discarded, K and D are
/// re-evaluated at (x, v) ([`leu_linearize`], into `blocks`, the particle's own entries) and the step is
/// taken again from (x, v), where the fresh linearization's force is the exact one: x' = x + h v,
/// v' = v + h a₀. Returns (x', v', a₀).
pub fn leu_fixup(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], blocks: &mut [LeuBlock]) -> (V3, V3, V3) {
    let a0 = leu_linearize(i, m, p, x, v, blocks);
    (x[i] + v[i] * p.h, v[i] + a0 * p.h, a0)
}
