//! The kernels of Liu et al. 2013's local/global step (`shaders/local_global.wgsl`) in f64: the
//! constants of a step and the incidence entries' signs shared by the twins.

use super::model::CpuModel;

/// The constants of one step of size h.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LgParams {
    /// The step h (s).
    pub h: f64,
    /// Liu §4.1's drag factor α = 1/(1 + h d₀): y = q + h α v.
    pub alpha: f64,
    /// The inertia weight 1 + h d₀ (M̃ = (1 + h d₀) M).
    pub inertia: f64,
    /// The mass part of A's diagonal per unit mass: 1 + h d₀ + h² s.
    pub mass_diag: f64,
}

impl LgParams {
    /// The constants of `m` at step `h`.
    pub fn new(m: &CpuModel, h: f64) -> Self {
        let inertia = 1.0 + h * m.drag;
        LgParams { h, alpha: 1.0 / inertia, inertia, mass_diag: inertia + h * h * m.central_strength }
    }
}

/// The spring of incidence entry `e` (`2·spring + side`) and the sign of its term in J d: +1 when the
/// particle is the spring's `a`, −1 when it is `b`.
#[inline]
pub fn entry_spring(e: u32) -> (usize, f64) {
    ((e >> 1) as usize, if e & 1 == 0 { 1.0 } else { -1.0 })
}
