//! Provot's strain limiting in f64: the twin of `shaders/strain_limit.wgsl`, one particle at a time.
//!
//! Provot 1995 ("Deformation constraints in a mass-spring model to describe rigid cloth behavior",
//! §5; the reading list of `seeds/lecture-mass-spring-systems`): soft springs let cloth stretch far
//! more than real cloth ("super-elastic" behaviour), and stiffer springs need smaller steps. Instead,
//! after each step, every spring whose deformation rate (l − L)/L exceeds a critical τ is shortened
//! back to (1 + τ)L by moving its endpoints: both by half when both are free, only the free one when
//! the other is pinned. The velocities are adjusted with the positions.
//!
//! As a gather (no float atomics on the GPU), one Jacobi pass moves every particle at once from the
//! same old positions: for particle i with inverse mass wᵢ, over its incident springs s = (i, j) with
//! d = xᵢ − xⱼ, l = |d| > (1 + τ)L,
//!
//! Δxᵢ = −(ω/cᵢ) Σₛ wᵢ/(wᵢ + wⱼ) · (l − (1 + τ)L) · d/l,
//!
//! cᵢ the number of i's springs over the limit: the inverse-mass share generalises Provot's halves
//! (equal masses) and his pinned case (wⱼ = 0: the whole correction on i). The plain sum (no 1/cᵢ)
//! diverged on the curtain (a particle has up to 12 springs); the average (scaled by ω, default 1)
//! converges, but a Jacobi pass only carries a correction one spring further, so a hanging cloth needs
//! many passes. A pinned particle (w = 0) never moves.
//!
//! The passes are therefore accelerated ([`accelerate`], `StrainLimit::acceleration`): from pass
//! [`crate::model::STRAIN_ACCELERATION_AFTER`] on, a particle a pass moves goes to x′ + ω_c (x̂ − x′),
//! x̂ the pass's result and x′ its state two passes back, the stationary form of Wang 2015's Chebyshev
//! semi-iterative method. On the 81×81 soft curtain local/global needed 78 passes a step on average and
//! still ended steps at 0.120 with plain passes; accelerated, 27.4 passes and every step within 0.1001.
//!
//! The passes stop early: the first pass of each pair ([`strain_limit_first`], [`strain_limit_check`])
//! also reports whether a spring of the state it reads is stretched beyond τ(1 + tolerance); when none
//! is, that state is kept and the passes end ([`strain_limit_all`]). A step whose springs are within
//! the limit costs one pass; the methods with small steps need a few, the ones with large steps more
//! (a hanging cloth's correction travels one spring a pass).
//!
//! The velocities follow the positions by one of two rules ([`VelocityRule`], chosen by the method):
//! - [`VelocityRule::Displacement`], Δvᵢ = Δxᵢ/h: the velocity stays the step's displacement over h,
//!   right for the methods whose last position update uses the new velocity (symplectic Euler, the
//!   Runge–Kutta family, implicit Euler, local/global).
//! - [`VelocityRule::Rod`], Δvᵢ = −(ω/cᵢ) Σₛ wᵢ/(wᵢ + wⱼ) ((vᵢ − vⱼ)·d̂) d̂ over the same springs: the
//!   relative velocity along a spring at its limit is removed, as for an inextensible rod (the
//!   velocity form of strain limiting, Bridson, Fedkiw and Anderson 2002 §6). Explicit Euler and LEU
//!   use it. Their next position update uses this step's velocity, and with Shinya's stable step their
//!   Rayleigh damping is stable only together with the spring term (hαk₀ = h²k₀ ≈ 2.4 > 2 at the
//!   planned step): once the projection has taken the spring's elastic term away, the damping on the
//!   spring's relative velocity alone amplifies it, by 1 − hαk ≈ −1.4 a step, and by −2.4 with the
//!   Δx/h rule. Removing that relative velocity leaves the damping nothing to amplify. Measured on the
//!   21×21 soft curtain: both rules Δx/h and "no velocity change" overflow within two frames of the
//!   limit first acting; the rod rule runs 20 frames with speeds of 5–10 m/s, as symplectic Euler's.

use super::model::{CpuModel, V3};
use crate::method::Method;
use crate::model::StrainLimit;

/// How a pass changes the velocities with the positions (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VelocityRule {
    /// Δvᵢ = Δxᵢ/h.
    #[default]
    Displacement,
    /// The relative velocity along every spring at its limit removed (an inextensible rod).
    Rod,
}

impl VelocityRule {
    /// The rule of `method`: [`VelocityRule::Rod`] for explicit Euler and LEU, whose next position
    /// update uses the velocity of this step; [`VelocityRule::Displacement`] for the others.
    pub fn of(method: Method) -> Self {
        match method {
            Method::ExplicitEuler | Method::Leu => VelocityRule::Rod,
            _ => VelocityRule::Displacement,
        }
    }

    /// The rule as the WGSL parameter block's `rod` flag.
    pub fn rod_flag(self) -> u32 {
        u32::from(self == VelocityRule::Rod)
    }
}

/// Springs shorter than this have no direction and are never corrected (as `EPS_LEN` in WGSL).
pub const EPS_LEN: f64 = 1e-9;

/// The state a pass's output buffer holds for particle i before the pass writes it: the state two
/// passes back, which the acceleration extrapolates from (see [`accelerate`]).
pub type Prev = (V3, V3);

/// `strain_limit_pass`: one pass for particle i after the first, reading the state (x, v) and
/// returning its new (xᵢ, vᵢ): the Jacobi pass of the module docs, accelerated from `prev` (the state two
/// passes back, [`accelerate`]); `h` is the step the displacement rule divides by, `rule` the velocity
/// rule.
pub fn strain_limit_pass(i: usize, m: &CpuModel, h: f64, sl: &StrainLimit, rule: VelocityRule, xv: (&[V3], &[V3]), prev: Prev) -> (V3, V3) {
    let (xi, vi, _) = strain_limit_check(i, m, h, sl, rule, xv, prev);
    (xi, vi)
}

/// `strain_limit_check`: the pass of [`strain_limit_pass`] for particle i, and whether one of i's
/// springs is stretched beyond the stopping threshold in the state it reads, (l − L)/L >
/// [`StrainLimit::stop_stretch`] = τ(1 + tolerance). The first pass of every pair runs this; when no
/// particle of the state reports a spring beyond it, the passes stop and keep the state read
/// ([`strain_limit_all`]).
pub fn strain_limit_check(
    i: usize,
    m: &CpuModel,
    h: f64,
    sl: &StrainLimit,
    rule: VelocityRule,
    xv: (&[V3], &[V3]),
    prev: Prev,
) -> (V3, V3, bool) {
    let (x, v) = xv;
    let (xh, vh, over, active) = project(i, m, h, sl, rule, x, v);
    if !active {
        return (xh, vh, over);
    }
    let (xa, va) = accelerate(sl, rule, (xh, vh), prev);
    (xa, va, over)
}

/// `strain_limit_first`: a step's first pass for particle i, the Jacobi pass of the module docs (nothing to
/// accelerate from yet) with the check of [`strain_limit_check`]. The GPU's kernel also starts the
/// step's tally of passes run, which the CPU engine keeps on the host.
pub fn strain_limit_first(i: usize, m: &CpuModel, h: f64, sl: &StrainLimit, rule: VelocityRule, x: &[V3], v: &[V3]) -> (V3, V3, bool) {
    let (xh, vh, over, _) = project(i, m, h, sl, rule, x, v);
    (xh, vh, over)
}

/// One Jacobi pass for particle i (the module docs' Δxᵢ and the velocity rule): its new (xᵢ, vᵢ), whether
/// one of its springs is beyond the stopping threshold, and whether one is beyond the limit at all (the
/// particle is *active*: the pass moved it).
fn project(i: usize, m: &CpuModel, h: f64, sl: &StrainLimit, rule: VelocityRule, x: &[V3], v: &[V3]) -> (V3, V3, bool, bool) {
    let wi = m.inv_mass[i];
    if wi == 0.0 {
        return (x[i], v[i], false, false);
    }
    let xi = x[i];
    let mut dx = V3::zeros();
    let mut dv = V3::zeros();
    let mut count = 0u32;
    let mut over = false;
    for &e in m.incidence.of(i) {
        let s = (e >> 1) as usize;
        let j = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] } as usize;
        let d = xi - x[j];
        let l = d.norm();
        let target = (1.0 + sl.limit) * m.rest[s];
        // a zero-rest-length spring (a bending term) has no length to limit
        if m.rest[s] > 0.0 && l > target && l > EPS_LEN {
            over |= l > (1.0 + sl.stop_stretch()) * m.rest[s];
            let wj = m.inv_mass[j];
            let share = wi / (wi + wj);
            dx -= d * (share * (l - target) / l);
            let n = d / l;
            dv -= n * (share * (v[i] - v[j]).dot(&n));
            count += 1;
        }
    }
    if count == 0 {
        return (xi, v[i], false, false);
    }
    let scale = sl.relaxation / count as f64;
    dx *= scale;
    match rule {
        VelocityRule::Displacement => (xi + dx, v[i] + dx / h, over, true),
        VelocityRule::Rod => (xi + dx, v[i] + dv * scale, over, true),
    }
}

/// The second-order acceleration of an active particle's pass (Wang 2015, "A Chebyshev semi-iterative
/// approach for accelerating projective and position-based dynamics", eq. 9, with its weight held at
/// the limit ω_c = [`StrainLimit::acceleration`]): from the pass's result x̂ and the state two passes
/// back x′ (`prev`), x = x′ + ω_c (x̂ − x′). The displacement rule's velocity is extrapolated the
/// same way (v − x/h is the same in every pass' state, so Δv = Δx/h still holds over the passes); the
/// rod rule's is the pass's own. ω_c = 1 is the plain pass, bit for bit.
///
/// Only particles the pass moved are accelerated: a particle with no spring beyond the limit keeps its
/// state. Extrapolating it too (the semi-iterative method on every unknown) drifts the cloth, because
/// nothing pulls a slack spring back: measured on the 41×41 soft curtain with ω_c = 1.8, symplectic
/// Euler's springs reached 0.148 (the limit 0.1) and the cloth stopped falling.
pub fn accelerate(sl: &StrainLimit, rule: VelocityRule, pass: (V3, V3), prev: Prev) -> (V3, V3) {
    let w = sl.acceleration;
    if w == 1.0 {
        return pass;
    }
    let x = prev.0 + (pass.0 - prev.0) * w;
    match rule {
        VelocityRule::Displacement => (x, prev.1 + (pass.1 - prev.1) * w),
        VelocityRule::Rod => (x, pass.1),
    }
}

/// `strain_limit_copy`: particle i's state copied (the GPU's last step of an odd number of passes,
/// from its scratch buffer back into the state).
pub fn strain_limit_copy(i: usize, x: &[V3], v: &[V3]) -> (V3, V3) {
    (x[i], v[i])
}

/// The passes of `sl` over the whole state in place, sequentially (the CPU engine runs the same kernels
/// in parallel: [`crate::cpu::strain_limit`]); returns the passes run. Pass 0 runs
/// [`strain_limit_first`], pass k > 0 [`strain_limit_check`] on the state of pass k − 1, accelerated
/// from that of pass k − 2 from pass [`crate::model::STRAIN_ACCELERATION_AFTER`] on
/// ([`StrainLimit::for_pass`]; the GPU binds a parameter block without the acceleration before). An even k checks: when no particle
/// reports a spring beyond [`StrainLimit::stop_stretch`], its output is dropped and the passes end with
/// the state it read (it counts as run: the GPU ran it). At most `sl.passes` passes.
pub fn strain_limit_all(m: &CpuModel, h: f64, sl: &StrainLimit, rule: VelocityRule, x: &mut [V3], v: &mut [V3]) -> u32 {
    // the state two passes back, where the GPU's pass writes (its scratch and the state ping-pong)
    let (mut xp, mut vp) = (x.to_vec(), v.to_vec());
    for k in 0..sl.passes {
        let next: Vec<(V3, V3, bool)> = (0..m.n)
            .map(|i| match k {
                0 => strain_limit_first(i, m, h, sl, rule, x, v),
                _ => strain_limit_check(i, m, h, &sl.for_pass(k), rule, (x, v), (xp[i], vp[i])),
            })
            .collect();
        if k % 2 == 0 && !next.iter().any(|r| r.2) {
            return k + 1;
        }
        xp.copy_from_slice(x);
        vp.copy_from_slice(v);
        for (i, (xi, vi, _)) in next.into_iter().enumerate() {
            x[i] = xi;
            v[i] = vi;
        }
    }
    sl.passes
}
