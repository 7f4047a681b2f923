// Shared structs and constants. `const WG: u32` (the workgroup size) is prepended by
// src/gpu/base/layout.rs, the one source of truth; the struct layouts are checked against the Rust
// structs there by a naga test.

// Per-run parameters (a read-only storage block: gpu::base::pipelines::params says why not uniform). Rust twin: gpu::base::layout::GpuParams.
struct Params {
    gravity: vec4<f32>,   // xyz: g (m/s²); w: air drag d0 (1/s)
    wind: vec4<f32>,      // xyz: wind velocity (m/s); w: central field strength s (1/s²)
    center: vec4<f32>,    // xyz: central field centre (m); w: LEU speed limit (m/s)
    n_particles: u32,
    n_springs: u32,
    h: f32,               // step (s)
    alpha: f32,           // Rayleigh alpha (s), Shinya eq. 28
    cursor: vec4<f32>,    // xyz: the cursor spring's target (m); w: its stiffness c (1/s²)
    cursor_particle: u32, // the particle on the cursor spring; CURSOR_NONE: no cursor
    cursor_damping: f32,  // the cursor spring's damping d (1/s)
    _pad0: u32,
    _pad1: u32,
    aero_base: vec4<f32>, // xyz: the aerodynamic wind's mean (m/s); w: c = ½ρC_d (kg/m³) (model::AeroWind)
    aero_gust: vec4<f32>, // xyz: its gust amplitude (m/s); w: the gust frequency f (Hz)
    time: f32,            // simulation time (s) at the start of the engine's current batch of steps
    n_fields: u32,        // point fields in `fields` (at most MAX_FIELDS)
    _pad2: u32,
    _pad3: u32,
    // Point fields, four vec4 each (twin: gpu::base::layout::pack_field): (centre, strength),
    // (unit axis or 0, falloff radius), (box min, falloff code), (box max, 1 with a box else 0).
    fields: array<vec4<f32>, 16>,
}

// The most point fields (twin: model::MAX_FIELDS).
const MAX_FIELDS: u32 = 4u;

// g(t) = 0.6 sin(2πft) + 0.4 sin(2π·2.17·ft + 1.1) (twin: model::gust_shape).
fn gust_shape(f: f32, t: f32) -> f32 {
    let p = 6.283185307179586 * f * t;
    return 0.6 * sin(p) + 0.4 * sin(2.17 * p + 1.1);
}

// `Params.cursor_particle` when no particle is on the cursor spring (twin: gpu::base::layout::CURSOR_NONE).
const CURSOR_NONE: u32 = 0xffffffffu;

// One CSR incidence entry as the particle that owns it sees it: the spring's other end j and the
// spring's constants, so that a gather reads one 16-byte record per spring and no spring table.
// Rust twin: gpu::base::layout::GpuNbr.
struct Nbr {
    j: u32,
    rest: f32,
    k: f32,
    kd: f32,
}

// Springs shorter than this have no direction; their force and Jacobian are zero (twin: cpu::forces::EPS_LEN).
const EPS_LEN: f32 = 1e-9;
