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
    /// xyz: the cursor spring's target; w: its stiffness c (1/s²) (see [`crate::model::Cursor`]).
    pub cursor: [f32; 4],
    /// The particle on the cursor spring, [`CURSOR_NONE`] for none.
    pub cursor_particle: u32,
    /// The cursor spring's damping d (1/s).
    pub cursor_damping: f32,
    /// Padding to 96 bytes.
    pub _pad: [u32; 2],
    /// xyz: the aerodynamic wind's mean (m/s); w: its c = ½ρC_d (kg/m³) (see [`crate::model::AeroWind`]).
    pub aero_base: [f32; 4],
    /// xyz: the gust amplitude (m/s); w: the gust frequency (Hz).
    pub aero_gust: [f32; 4],
    /// The simulation time (s) at the start of the engine's current batch of steps (the gusts' t).
    pub time: f32,
    /// Point fields in `fields`.
    pub n_fields: u32,
    /// Padding.
    pub _pad2: [u32; 2],
    /// The point fields, four `vec4` each ([`pack_field`]).
    pub fields: [[f32; 4]; 4 * crate::model::MAX_FIELDS],
}

/// The four `vec4` of a point field in `Params.fields`: (centre, strength), (unit axis or 0, falloff
/// radius), (box min, falloff code), (box max, 1 with a box else 0).
pub fn pack_field(f: &crate::reference::fields::CpuField) -> [[f32; 4]; 4] {
    let v4 = |p: &nalgebra::Vector3<f64>, w: f64| [p.x as f32, p.y as f32, p.z as f32, w as f32];
    let (lo, hi, has) = match f.bounds {
        Some((lo, hi)) => (lo, hi, 1.0),
        None => (nalgebra::Vector3::zeros(), nalgebra::Vector3::zeros(), 0.0),
    };
    [v4(&f.center, f.strength), v4(&f.axis, f.radius), v4(&lo, f.falloff as f64), v4(&hi, has)]
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
    /// 1: the dot products' partials are summed by `pcg_reduce` ([`crate::gpu::base::options::PCG_REDUCE_FROM`]).
    pub reduced: u32,
    /// Particles per thread of `pcg_begin`, `pcg_matvec` and `pcg_update` (a workgroup covers WG·per_lane
    /// consecutive particles, lane-strided): [`PCG_PER_LANE`] without an external preconditioner, else 1.
    pub per_lane: u32,
    /// Padding to 32 bytes.
    pub _pad: u32,
}

/// Particles per thread of a Jacobi-preconditioned PCG's per-particle kernels ([`CgPass::per_lane`]):
/// a quarter of the workgroups, so a quarter of the dot products' partials. On lavapipe that took the
/// 256² implicit row's 20 `pcg_reduce` dispatches away (G = 256 < [`crate::gpu::base::options::PCG_REDUCE_FROM`])
/// and a quarter of the per-workgroup barriers: 143 → 110 ms a step. A
/// multigrid-preconditioned solve keeps 1: its V-cycle writes the r·z partials per particle workgroup.
pub const PCG_PER_LANE: u32 = 4;

/// `ImplicitParams` in `shaders/implicit.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ImplicitParams {
    /// 1: the exact spring Jacobian; 0: its transverse term clamped at zero.
    pub exact: u32,
    /// The adaptive step's strain limit.
    pub strain_limit: f32,
    /// The adaptive step's limit on a spring's length change within one step, as a fraction of L.
    pub step_limit: f32,
    /// Padding to 16 bytes.
    pub _pad: u32,
}

/// `Collider` in `shaders/collide.wgsl`: one obstacle (see [`crate::model::Collider`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCollider {
    /// The shape: [`COLLIDER_HALF_SPACE`], [`COLLIDER_SPHERE`], [`COLLIDER_CAPSULE`] or [`COLLIDER_BOX`].
    pub kind: u32,
    /// Coulomb μ.
    pub friction: f32,
    /// The skin thickness t (0 for the half-space).
    pub thickness: f32,
    /// Padding to 16 bytes.
    pub _pad: u32,
    /// Half-space: xyz the unit normal, w the offset; sphere: centre, radius; capsule: end a, radius;
    /// box: centre, unused.
    pub a: [f32; 4],
    /// Capsule: end b; box: the half-extents; unused by the others.
    pub b: [f32; 4],
    /// Box: the unit quaternion (x, y, z, w); unused by the others.
    pub c: [f32; 4],
    /// xyz: the collider's velocity (m/s) at the step's end (0 for a static one); w unused.
    pub u: [f32; 4],
}

/// `GpuCollider::kind` of a half-space (`COLLIDER_HALF_SPACE` in WGSL).
pub const COLLIDER_HALF_SPACE: u32 = 0;
/// `GpuCollider::kind` of a sphere (`COLLIDER_SPHERE` in WGSL).
pub const COLLIDER_SPHERE: u32 = 1;
/// `GpuCollider::kind` of a capsule (`COLLIDER_CAPSULE` in WGSL).
pub const COLLIDER_CAPSULE: u32 = 2;
/// `GpuCollider::kind` of an oriented box (`COLLIDER_BOX` in WGSL).
pub const COLLIDER_BOX: u32 = 3;

/// `CollideInfo` in `shaders/collide.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CollideInfo {
    /// Colliders in the buffer.
    pub n_colliders: u32,
    /// Moving pinned particles (`move_pins` threads).
    pub n_pins: u32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 2],
}

/// `MovingPin` in `shaders/collide.wgsl`: a pinned particle that follows a path.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMovingPin {
    /// xyz: its position in the model (the rest placement its path's offset is added to).
    pub rest: [f32; 4],
    /// x: the particle; y: its path (the motion's index); z, w unused.
    pub ids: [u32; 4],
}

/// `SelfInfo` in `shaders/self_collision.wgsl`: the self-collision's thickness, hash cell and table.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SelfInfo {
    /// The thickness t (m).
    pub thickness: f32,
    /// 1/s, the hash cell edge's inverse (1/m).
    pub inv_cell: f32,
    /// Buckets T (a multiple of [`WORKGROUP_SIZE`]).
    pub table: u32,
    /// T / [`WORKGROUP_SIZE`]: the scan's blocks.
    pub n_blocks: u32,
}

/// `StrainLimitInfo` in `shaders/strain_limit.wgsl`: the constants of Provot's strain limiting
/// ([`crate::model::StrainLimit`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct StrainLimitInfo {
    /// τ, the largest strain kept.
    pub limit: f32,
    /// ω, the relaxation of a pass.
    pub relaxation: f32,
    /// 1: the rod velocity rule, 0: Δv = Δx/h
    /// ([`crate::reference::strain_limit::VelocityRule::rod_flag`]).
    pub rod: u32,
    /// τ(1 + tolerance) ([`crate::model::StrainLimit::stop_stretch`]): a check pass that finds a spring
    /// stretched beyond it lets the passes go on.
    pub stop: f32,
    /// ω_c, the acceleration of the passes after the first ([`crate::model::StrainLimit::acceleration`]).
    pub acceleration: f32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 3],
}

/// `LocalGlobalConsts` in `shaders/local_global.wgsl`: the constants of a local/global step (Liu et al. 2013, eq. 14)
/// and the bases of its tables.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LocalGlobalConsts {
    /// xyz: f_ext per unit mass, g + d₀ w + s c; w unused.
    pub fext: [f32; 4],
    /// The step h.
    pub h: f32,
    /// Liu §4.1's α = 1/(1 + h d₀).
    pub alpha: f32,
    /// 1 + h d₀.
    pub inertia: f32,
    /// 1 + h d₀ + h² s.
    pub mass_diag: f32,
    /// Particles.
    pub n: u32,
    /// Workgroups of a per-particle dispatch.
    pub groups: u32,
    /// Index in `local_global_work` of the ‖r‖² partials.
    pub partials_base: u32,
    /// Index in `local_global_work` of the report.
    pub stats_base: u32,
}

/// `LocalGlobalPass` in `shaders/local_global.wgsl`: the per-dispatch values, one per dynamic offset.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LocalGlobalPass {
    /// `local_global_chebyshev`: the iteration k.
    pub k: u32,
    /// `local_global_chebyshev`: ω_{k+1} (Wang 2015, eq. 12).
    pub omega: f32,
    /// `local_global_local_residual`: the partials slot (0 first iteration, 1 later, 2 none); `local_global_advance`: δ's slot
    /// (0..2 Chebyshev, 3 the PCG's solution).
    pub slot: u32,
    /// `local_global_local_residual`: 1 to take the first Chebyshev-Jacobi iteration too (δ₁ = D⁻¹ r into slot 1,
    /// [`crate::reference::local_global::local_global_chebyshev_start`]).
    pub start: u32,
}

/// `MgPass` in `shaders/multigrid.wgsl`: one multigrid dispatch (level, kernel), one per dynamic offset.
/// Matrix fields are word offsets into the hierarchy's `mat` buffer; vector fields are indices in the
/// joint space of the PCG's `cg_vectors` (below `cg_n`) and the coarse levels' `mgv`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct MgPass {
    /// Rows of the dispatch.
    pub rows: u32,
    /// The dispatch's matrix: CSR offsets (relative to its columns).
    pub m_ptr: u32,
    /// Its columns.
    pub m_col: u32,
    /// Its values (f32 bits).
    pub m_val: u32,
    /// ω/a_ii per row (f32 bits).
    pub wdinv: u32,
    /// The level's right-hand side b.
    pub b: u32,
    /// The level's iterate x (its result).
    pub x: u32,
    /// The level's temporary t.
    pub t: u32,
    /// `mg_restrict`: the next level's b; `mg_up`: the next level's x.
    pub other: u32,
    /// Vectors below this index are in `cg_vectors` (7 n: the PCG's).
    pub cg_n: u32,
    /// `mg_post` on level 0: the partials slot of r·z (0 or 1); 2: none.
    pub slot: u32,
    /// The PCG's workgroups (partials per slot).
    pub groups: u32,
    /// 1: a no-op once the PCG has stopped; 0: always run (Chebyshev).
    pub gate: u32,
    /// Padding to 64 bytes.
    pub _pad: [u32; 3],
}

/// `ImplicitMgPass` in `shaders/implicit_mg.wgsl`: one dispatch of implicit Euler's aggregation multigrid (a
/// level's block sums or a V-cycle kernel), one per dynamic offset. List fields are word offsets into
/// the hierarchy's `implicit_mg_lists`; block fields are `vec4` indices into `implicit_mg_vals` (two per block); vector
/// fields are `vec4` indices into `implicit_mg_vecs`. `f_*`
/// is the dispatch's (fine) level, `c_*` the next coarser one.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ImplicitMgPass {
    /// Rows of the dispatch.
    pub rows: u32,
    /// The fine level's index (0: the particles, whose operator is implicit Euler's own).
    pub level: u32,
    /// `implicit_mg_sum`: the coarse level's nodes (rows beyond are its edges); `implicit_mg_factor`, `implicit_mg_coarse`: the
    /// last level's nodes.
    pub nodes: u32,
    /// `implicit_mg_post` on level 0: the partials slot of r·z (0 or 1); 2: none.
    pub slot: u32,
    /// The PCG's workgroups (partials per slot).
    pub groups: u32,
    /// The fine level's b, x and t; the coarse level's b and x.
    pub b: u32,
    /// See `b`.
    pub x: u32,
    /// See `b`.
    pub t: u32,
    /// See `b`.
    pub cb: u32,
    /// See `b`.
    pub cx: u32,
    /// The fine level's incidence: offsets and (edge, other end) pairs (coarse levels only).
    pub f_inc_ptr: u32,
    /// See `f_inc_ptr`.
    pub f_inc: u32,
    /// The fine level's node blocks, edge blocks and inverse diagonal blocks.
    pub f_ground: u32,
    /// See `f_ground`.
    pub f_edge: u32,
    /// See `f_ground`.
    pub f_dinv: u32,
    /// Fine node → its aggregate (`u32::MAX`: pinned).
    pub agg: u32,
    /// Per coarse node its members (offsets, list).
    pub mem_ptr: u32,
    /// See `mem_ptr`.
    pub mem: u32,
    /// Per coarse node its grounded fine edges (offsets, list).
    pub gr_ptr: u32,
    /// See `gr_ptr`.
    pub gr: u32,
    /// Per coarse edge its fine edges (offsets, list).
    pub ed_ptr: u32,
    /// See `ed_ptr`.
    pub ed: u32,
    /// Level 0: per fine edge (spring, in the hierarchy's order) its incidence entry (where its block is).
    pub ent: u32,
    /// The coarse level's incidence (offsets, pairs) and its node, edge and inverse diagonal blocks.
    pub c_inc_ptr: u32,
    /// See `c_inc_ptr`.
    pub c_inc: u32,
    /// See `c_inc_ptr`.
    pub c_ground: u32,
    /// See `c_inc_ptr`.
    pub c_edge: u32,
    /// See `c_inc_ptr`.
    pub c_dinv: u32,
    /// The Jacobi damping ω.
    pub omega: f32,
    /// The coarse correction's scale α.
    pub alpha: f32,
    /// Padding to 128 bytes.
    pub _pad: [u32; 2],
}

/// Vectors of the GPU PCG, `n` `vec4<f32>` each, in the `cg_vectors` buffer: r, z, p0, p1, Ap, x, P⁻¹.
pub const CG_VECTORS: usize = 7;
/// Words of the PCG's `cg_state` buffer.
pub const CG_STATE_WORDS: usize = 8;

/// The shared WGSL files, in inclusion order.
pub const SHARED_WGSL: [(&str, &str); 4] = [
    ("shared/common.wgsl", include_str!("../../../shaders/shared/common.wgsl")),
    ("shared/forces.wgsl", include_str!("../../../shaders/shared/forces.wgsl")),
    ("shared/reduce.wgsl", include_str!("../../../shaders/shared/reduce.wgsl")),
    ("shared/fields.wgsl", include_str!("../../../shaders/shared/fields.wgsl")),
];

/// The kernel WGSL files, by name ([`kernel_wgsl`] looks one up).
///
/// The PCG (`shaders/pcg.wgsl`) is a solver without an operator: each linear system composes its
/// operator file in front of it (`implicit.wgsl` for implicit Euler, `local_global.wgsl` for Liu's global step).
pub const KERNEL_WGSL: [(&str, &str); 13] = [
    ("explicit.wgsl", include_str!("../../../shaders/explicit.wgsl")),
    ("leu.wgsl", include_str!("../../../shaders/leu.wgsl")),
    ("power.wgsl", include_str!("../../../shaders/power.wgsl")),
    ("implicit.wgsl", concat!(include_str!("../../../shaders/implicit.wgsl"), "\n", include_str!("../../../shaders/pcg.wgsl"))),
    (
        "implicit_mg.wgsl",
        concat!(
            include_str!("../../../shaders/implicit.wgsl"),
            "\n",
            include_str!("../../../shaders/pcg.wgsl"),
            "\n",
            include_str!("../../../shaders/implicit_mg.wgsl")
        ),
    ),
    ("collide.wgsl", include_str!("../../../shaders/collide.wgsl")),
    ("local_global.wgsl", concat!(include_str!("../../../shaders/local_global.wgsl"), "\n", include_str!("../../../shaders/pcg.wgsl"))),
    ("multigrid.wgsl", include_str!("../../../shaders/multigrid.wgsl")),
    ("self_collision.wgsl", include_str!("../../../shaders/self_collision.wgsl")),
    ("strain_limit.wgsl", include_str!("../../../shaders/strain_limit.wgsl")),
    ("wind.wgsl", include_str!("../../../shaders/wind.wgsl")),
    ("signals.wgsl", include_str!("../../../shaders/signals.wgsl")),
    ("adaptive.wgsl", include_str!("../../../shaders/adaptive.wgsl")),
];

/// The source of the kernel file `name` in [`KERNEL_WGSL`] (e.g. `"implicit.wgsl"`).
pub fn kernel_wgsl(name: &str) -> crate::error::Result<&'static str> {
    KERNEL_WGSL.iter().find(|(file, _)| *file == name).map(|(_, src)| *src).ok_or_else(|| {
        let known: Vec<&str> = KERNEL_WGSL.iter().map(|(file, _)| *file).collect();
        crate::error::Error::internal_gpu(format!("no kernel file {name} (known: {})", known.join(", ")))
    })
}

/// A kernel file's full module source: the workgroup size, the shared structs, then the kernel file,
/// then the force gather (which refers to the kernel's bindings `nbr`, `csr` and `src`) when the
/// kernel binds the incidence records (`nbr`); a kernel without them (`collide.wgsl`) gets no gather;
/// then the point fields (`shared/fields.wgsl`) with the gather or where the kernel calls `field_accel`;
/// then the workgroup reduction (`shared/reduce.wgsl`) when the kernel calls `wg_reduce`.
pub fn compose(kernel: &str) -> String {
    compose_split(kernel, crate::gpu::base::alloc::DEFAULT_SPLIT_BYTES)
}

/// [`compose`] for a device whose storage buffers are split at `split_bytes`
/// ([`crate::gpu::base::alloc::split_bytes`]): the module starts with `const SPLIT_VEC4` = `split_bytes` / 16, the
/// `vec4`s (or 16-byte records) per chunk of a split buffer (`4 * SPLIT_VEC4` for a `u32` array).
pub fn compose_split(kernel: &str, split_bytes: u64) -> String {
    let mut s = format!("const WG: u32 = {WORKGROUP_SIZE}u;\nconst SPLIT_VEC4: u32 = {}u;\n", split_bytes / 16);
    s.push_str(SHARED_WGSL[0].1);
    s.push('\n');
    s.push_str(kernel);
    let gather = kernel.contains(" nbr: array<Nbr>");
    if gather {
        s.push('\n');
        s.push_str(SHARED_WGSL[1].1);
    }
    if gather || kernel.contains("field_accel(") {
        s.push('\n');
        s.push_str(SHARED_WGSL[3].1);
    }
    if kernel.contains("wg_reduce(") {
        s.push('\n');
        s.push_str(SHARED_WGSL[2].1);
    }
    s
}

/// Workgroups to cover `n` threads.
pub fn groups(n: usize) -> u32 {
    (n as u32).div_ceil(WORKGROUP_SIZE)
}

/// The most workgroups of one dispatch dimension the engine uses (WebGPU's default
/// `max_compute_workgroups_per_dimension`, also lavapipe's).
pub const MAX_GROUPS_PER_DIM: u32 = 65535;

/// `count` workgroups as an (x, y) grid: (count, 1) when it fits one row of [`MAX_GROUPS_PER_DIM`],
/// else y = ⌈count / 65535⌉ full rows of 65535 (the kernel indexes `gid.x + gid.y·65535·WG` and
/// returns past its count).
pub fn grid(count: u32) -> (u32, u32) {
    if count <= MAX_GROUPS_PER_DIM {
        (count, 1)
    } else {
        (MAX_GROUPS_PER_DIM, count.div_ceil(MAX_GROUPS_PER_DIM))
    }
}
