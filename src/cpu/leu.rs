//! Shinya's linearized explicit Euler (§4) in f64: the CPU twin of `shaders/leu.wgsl`.
//!
//! At a linearization point (x₀, v₀) we keep a₀ = M⁻¹f(x₀, v₀) and, per spring, the stiffness block
//! K_s = k[n̂n̂ᵀ + max(0, 1 − L/l)(I − n̂n̂ᵀ)] (the Jacobian −∂f/∂x of Kauppila §2.2 with its transverse
//! term clamped at zero, as Choi & Ko do: the exact block is indefinite for a compressed spring, and a
//! linearization held for h_nl then grows those modes; measured on the swinging curtain, the exact block
//! diverged and needed retries where the clamped one did not) and the damping block
//! D_s = αK_s + k_d n̂n̂ᵀ (−∂f/∂v). Between linearizations the force is eq. 34:
//! f = f₀ − K(x − x₀) − D(v − v₀), plus the linear drag, central field and cursor spring terms.

use super::forces::{accelerations, StepParams, EPS_LEN};
use super::{CpuModel, Scratch, V3};

pub use crate::reference::implicit::{sym_apply, Sym3};

/// The blocks (K_s, D_s) of spring `s` at positions x.
pub fn spring_blocks(m: &CpuModel, alpha: f64, s: usize, x: &[V3]) -> (Sym3, Sym3) {
    let d = x[m.sa[s] as usize] - x[m.sb[s] as usize];
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

/// The linearization: (x₀, v₀, a₀) and the per-spring blocks.
#[derive(Clone, Debug, Default)]
pub struct Linearization {
    /// x₀.
    pub x0: Vec<V3>,
    /// v₀.
    pub v0: Vec<V3>,
    /// a₀ = M⁻¹ f(x₀, v₀).
    pub a0: Vec<V3>,
    /// K_s per spring.
    pub kb: Vec<Sym3>,
    /// D_s per spring.
    pub db: Vec<Sym3>,
}

/// Step 1 of Shinya's procedure: evaluate f₀, K and D at (x, v).
pub fn leu_linearize(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], lin: &mut Linearization, s: &mut Scratch) {
    lin.x0.clear();
    lin.x0.extend_from_slice(x);
    lin.v0.clear();
    lin.v0.extend_from_slice(v);
    lin.a0.resize(m.n, V3::zeros());
    accelerations(m, p, x, v, &mut lin.a0, &mut s.spring_f);
    lin.kb.resize(m.sa.len(), [0.0; 6]);
    lin.db.resize(m.sa.len(), [0.0; 6]);
    for sp in 0..m.sa.len() {
        let (kb, db) = spring_blocks(m, p.alpha, sp, x);
        lin.kb[sp] = kb;
        lin.db[sp] = db;
    }
}

/// The linearized acceleration of eq. 34 at (x, v).
#[allow(clippy::too_many_arguments)] // the kernel's bindings, in order
pub fn leu_accel(m: &CpuModel, lin: &Linearization, i: usize, x: &[V3], v: &[V3]) -> V3 {
    let w = m.inv_mass[i];
    if w == 0.0 {
        return V3::zeros();
    }
    let dxi = x[i] - lin.x0[i];
    let dvi = v[i] - lin.v0[i];
    let mut f = V3::zeros();
    for &e in m.incidence.of(i) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.sb[s] } else { m.sa[s] } as usize;
        let ddx = dxi - (x[j] - lin.x0[j]);
        let ddv = dvi - (v[j] - lin.v0[j]);
        f -= sym_apply(&lin.kb[s], ddx) + sym_apply(&lin.db[s], ddv);
    }
    let mut a = lin.a0[i] + f * w - dvi * m.drag;
    if m.central_strength != 0.0 {
        a -= dxi * m.central_strength;
    }
    // the cursor spring is linear: its change since the linearization is exact
    if let Some(c) = m.cursor.filter(|c| c.particle == i) {
        a -= dxi * c.stiffness + dvi * c.damping;
    }
    a
}

/// Step 2.1-2.3: one Euler step with the linearized force. Returns true when a speed exceeds
/// `speed_limit` (Shinya's divergence check).
#[allow(clippy::neg_cmp_op_on_partial_ord, clippy::too_many_arguments)] // `!(s² ≤ lim²)` also catches NaN; the kernel's bindings
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
    let h = p.h;
    let lim2 = speed_limit * speed_limit;
    let mut diverged = false;
    for i in 0..m.n {
        let a = leu_accel(m, lin, i, x, v);
        x_out[i] = x[i] + v[i] * h;
        v_out[i] = v[i] + a * h;
        let s2 = v_out[i].norm_squared();
        diverged |= !(s2 <= lim2);
    }
    diverged
}

/// The retry after a divergence: discard the step, re-evaluate K and D at (x, v), and take the step
/// again from (x, v). With a fresh linearization the force at (x, v) is the exact one.
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
