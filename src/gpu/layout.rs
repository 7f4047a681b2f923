//! GPU-facing data layout and shader composition: the one source of truth for the workgroup size and
//! the structs shared with WGSL (checked against naga's layout by a test).

use bytemuck::{Pod, Zeroable};

/// Threads per workgroup of every kernel (prepended to each WGSL module as `const WG`).
pub const WORKGROUP_SIZE: u32 = 64;

/// `Params` in `shaders/shared/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuParams {
    /// xyz: gravity; w: air drag d₀.
    pub gravity: [f32; 4],
    /// xyz: wind; w: central field strength.
    pub wind: [f32; 4],
    /// xyz: central field centre; w: LEU speed limit.
    pub center: [f32; 4],
    /// Particles.
    pub n_particles: u32,
    /// Springs.
    pub n_springs: u32,
    /// Step h.
    pub h: f32,
    /// Rayleigh α.
    pub alpha: f32,
    /// xyz: the cursor spring's target; w: its stiffness c (1/s²) (see [`crate::sim::Cursor`]).
    pub cursor: [f32; 4],
    /// The particle on the cursor spring, [`CURSOR_NONE`] for none.
    pub cursor_particle: u32,
    /// The cursor spring's damping d (1/s).
    pub cursor_damping: f32,
    /// Padding to 96 bytes.
    pub _pad: [u32; 2],
}

/// `GpuParams::cursor_particle` when no particle is on the cursor spring (`CURSOR_NONE` in WGSL).
pub const CURSOR_NONE: u32 = u32::MAX;

/// `Nbr` in `shaders/shared/common.wgsl`: one CSR incidence entry, seen from the particle that owns it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuNbr {
    /// The spring's other endpoint.
    pub j: u32,
    /// Rest length.
    pub rest: f32,
    /// Stiffness.
    pub k: f32,
    /// Damping along the spring.
    pub kd: f32,
}

/// `LeuPass` in `shaders/leu.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LeuPass {
    /// Ping-pong parity of the step.
    pub parity: u32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 3],
}

/// `CgPass` in `shaders/pcg.wgsl`: one per iteration parity.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CgPass {
    /// Vector length (particles).
    pub n: u32,
    /// Workgroups of a per-particle dispatch (partials per slot).
    pub groups: u32,
    /// Iteration parity.
    pub parity: u32,
    /// ε², the squared relative tolerance.
    pub tol2: f32,
    /// 1: warm start from the last solve's x.
    pub warm: u32,
    /// Padding to 32 bytes.
    pub _pad: [u32; 3],
}

/// `ImplicitParams` in `shaders/implicit.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ImplicitParams {
    /// 1: the exact spring Jacobian; 0: its transverse term clamped at zero.
    pub exact: u32,
    /// The adaptive step's strain limit.
    pub strain_limit: f32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 2],
}

/// `Collider` in `shaders/collide.wgsl`: one obstacle (see [`crate::model::Collider`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCollider {
    /// The shape: [`COLLIDER_HALF_SPACE`].
    pub kind: u32,
    /// Coulomb μ.
    pub friction: f32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 2],
    /// Half-space: xyz the unit normal, w the offset.
    pub a: [f32; 4],
    /// Shape data the half-space does not use.
    pub b: [f32; 4],
}

/// `GpuCollider::kind` of a half-space (`COLLIDER_HALF_SPACE` in WGSL).
pub const COLLIDER_HALF_SPACE: u32 = 0;

/// `CollideInfo` in `shaders/collide.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CollideInfo {
    /// Colliders in the buffer.
    pub n_colliders: u32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 3],
}

/// Vectors of the GPU PCG, `n` `vec4<f32>` each, in the `cgv` buffer: r, z, p0, p1, Ap, x, P⁻¹.
pub const CG_VECTORS: usize = 7;
/// Words of the PCG's `cg_state` buffer.
pub const CG_STATE_WORDS: usize = 8;

/// The shared WGSL files, in inclusion order.
pub const SHARED_WGSL: [(&str, &str); 2] = [
    ("shared/common.wgsl", include_str!("../../shaders/shared/common.wgsl")),
    ("shared/forces.wgsl", include_str!("../../shaders/shared/forces.wgsl")),
];

/// The kernel WGSL files.
///
/// The PCG (`shaders/pcg.wgsl`) is a solver without an operator: each linear system composes its
/// operator file in front of it (`implicit.wgsl` for implicit Euler; Liu's global step the same way).
pub const KERNEL_WGSL: [(&str, &str); 5] = [
    ("explicit.wgsl", include_str!("../../shaders/explicit.wgsl")),
    ("leu.wgsl", include_str!("../../shaders/leu.wgsl")),
    ("power.wgsl", include_str!("../../shaders/power.wgsl")),
    ("implicit.wgsl", concat!(include_str!("../../shaders/implicit.wgsl"), "\n", include_str!("../../shaders/pcg.wgsl"))),
    ("collide.wgsl", include_str!("../../shaders/collide.wgsl")),
];

/// The index of the colliders' module in [`KERNEL_WGSL`].
pub const COLLIDE_WGSL: usize = 4;

/// The index of the implicit Euler module (its operator and the PCG) in [`KERNEL_WGSL`].
pub const IMPLICIT_WGSL: usize = 3;

/// A kernel file's full module source: the workgroup size, the shared structs, then the kernel file,
/// then the force gather (which refers to the kernel's bindings `nbr`, `csr` and `src`) when the
/// kernel binds the incidence records (`nbr`); a kernel without them (`collide.wgsl`) gets no gather.
pub fn compose(kernel: &str) -> String {
    let mut s = format!("const WG: u32 = {WORKGROUP_SIZE}u;\n");
    s.push_str(SHARED_WGSL[0].1);
    s.push('\n');
    s.push_str(kernel);
    if kernel.contains(" nbr: array<Nbr>") {
        s.push('\n');
        s.push_str(SHARED_WGSL[1].1);
    }
    s
}

/// Workgroups to cover `n` threads.
pub fn groups(n: usize) -> u32 {
    (n as u32).div_ceil(WORKGROUP_SIZE)
}
