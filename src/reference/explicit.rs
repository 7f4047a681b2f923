//! The explicit integrators in f64, one function per kernel of `shaders/explicit.wgsl`, same names.
//!
//! Each kernel is per particle: it takes the particle index `i`, then the bindings in order (the
//! model and step parameters for `P`, `nbr` and `csr`; the state `src` = (x, v) the derivative is taken
//! at; `base` = (x₀, v₀), the state at the start of the step; `acc`, the RK4 accumulator) and returns
//! the particle's new state (what the kernel writes to `dst`) and, for RK4, its new accumulator. The
//! update bodies are split out ([`euler_update`] and friends) so that the CPU engine, which sums the
//! accelerations in a separate pass, applies the very same arithmetic.

use super::forces::{accel, StepParams};
use super::model::{CpuModel, V3};

/// A particle's (x, v).
pub type State = (V3, V3);

/// x' = x₀ + h v, v' = v₀ + h a: the body of explicit Euler (Shinya eq. 10-11) and of the midpoint
/// stages (Shinya eq. 18), with `x0, v0` the base state and `v, a` the derivative.
#[inline(always)]
pub fn euler_update(x0: V3, v0: V3, v: V3, a: V3, h: f64) -> State {
    (x0 + v * h, v0 + a * h)
}

/// v' = v + h a, x' = x + h v': the body of symplectic Euler.
#[inline(always)]
pub fn symplectic_update(x: V3, v: V3, a: V3, h: f64) -> State {
    let vn = v + a * h;
    (x + vn * h, vn)
}

/// The RK4 accumulator after stages 2 and 3: acc + 2 (v, a).
#[inline(always)]
pub fn rk4_accumulate(acc: State, v: V3, a: V3) -> State {
    (acc.0 + v * 2.0, acc.1 + a * 2.0)
}

/// The RK4 end (Shinya eq. 19): w' = w₀ + h/6 (acc + k4), k4 = (v, a).
#[inline(always)]
pub fn rk4_finish(x0: V3, v0: V3, acc: State, v: V3, a: V3, h: f64) -> State {
    (x0 + (acc.0 + v) * (h / 6.0), v0 + (acc.1 + a) * (h / 6.0))
}

/// `euler_step`: explicit Euler (slides; Shinya eq. 10-11), x' = x + h v, v' = v + h a(x, v).
pub fn euler_step(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3]) -> State {
    let a = accel(m, p.alpha, i, x, v);
    euler_update(x[i], v[i], v[i], a, p.h)
}

/// `symplectic_step`: symplectic Euler, v' = v + h a(x, v), x' = x + h v'.
pub fn symplectic_step(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3]) -> State {
    let a = accel(m, p.alpha, i, x, v);
    symplectic_update(x[i], v[i], a, p.h)
}

/// `midpoint_stage1` (Shinya eq. 18): the midpoint state base + (h/2) k1, k1 the derivative at `src`
/// (the GPU passes base = src).
pub fn midpoint_stage1(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x0: &[V3], v0: &[V3]) -> State {
    let a = accel(m, p.alpha, i, x, v);
    euler_update(x0[i], v0[i], v[i], a, 0.5 * p.h)
}

/// `midpoint_stage2`: base + h k2, k2 the derivative at the midpoint `src`.
pub fn midpoint_stage2(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x0: &[V3], v0: &[V3]) -> State {
    let a = accel(m, p.alpha, i, x, v);
    euler_update(x0[i], v0[i], v[i], a, p.h)
}

/// `rk4_stage1` (Shinya eq. 19): acc = k1, dst = base + (h/2) k1. Returns (dst, acc).
pub fn rk4_stage1(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x0: &[V3], v0: &[V3]) -> (State, State) {
    let a = accel(m, p.alpha, i, x, v);
    (euler_update(x0[i], v0[i], v[i], a, 0.5 * p.h), (v[i], a))
}

/// `rk4_stage2`: acc += 2 k2, dst = base + (h/2) k2. Returns (dst, acc).
#[allow(clippy::too_many_arguments)]
pub fn rk4_stage2(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x0: &[V3], v0: &[V3], acc: State) -> (State, State) {
    let a = accel(m, p.alpha, i, x, v);
    (euler_update(x0[i], v0[i], v[i], a, 0.5 * p.h), rk4_accumulate(acc, v[i], a))
}

/// `rk4_stage3`: acc += 2 k3, dst = base + h k3. Returns (dst, acc).
#[allow(clippy::too_many_arguments)]
pub fn rk4_stage3(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x0: &[V3], v0: &[V3], acc: State) -> (State, State) {
    let a = accel(m, p.alpha, i, x, v);
    (euler_update(x0[i], v0[i], v[i], a, p.h), rk4_accumulate(acc, v[i], a))
}

/// `rk4_stage4`: dst = base + (h/6)(k1 + 2 k2 + 2 k3 + k4).
#[allow(clippy::too_many_arguments)]
pub fn rk4_stage4(i: usize, m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], x0: &[V3], v0: &[V3], acc: State) -> State {
    let a = accel(m, p.alpha, i, x, v);
    rk4_finish(x0[i], v0[i], acc, v[i], a, p.h)
}
