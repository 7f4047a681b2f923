//! WGSL checks with naga (no GPU): every kernel parses and validates, the shared structs have the
//! Rust twins' sizes and field offsets, and every entry point uses the one workgroup size.

use naga::proc::Layouter;
use naga::valid::{Capabilities, ValidationFlags, Validator};
use naga::{Module, ShaderStage, TypeInner};
use springsim::gpu::base::layout::{
    compose, kernel_wgsl, CgPass, CollideInfo, GpuCollider, GpuNbr, GpuParams, ImplicitMgPass, ImplicitParams, LeuPass, LocalGlobalConsts,
    LocalGlobalPass, MgPass, SelfInfo, KERNEL_WGSL, SHARED_WGSL, WORKGROUP_SIZE,
};
use std::mem::{offset_of, size_of};

/// Parses and validates `src`, panicking with naga's rendered diagnostic on failure.
fn parse_and_validate(name: &str, src: &str) -> Module {
    let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{name}: WGSL parse error:\n{}", e.emit_to_string(src)));
    let mut validator = Validator::new(ValidationFlags::all(), Capabilities::default());
    if let Err(e) = validator.validate(&module) {
        panic!("{name}: naga validation error:\n{}", e.emit_to_string(src));
    }
    module
}

/// The size of the struct named `ty` (by both the Layouter and `TypeInner::size`, which must agree)
/// and its members' (name, offset).
fn struct_layout(module: &Module, ty: &str) -> Option<(u32, Vec<(String, u32)>)> {
    let (handle, t) = module.types.iter().find(|(_, t)| t.name.as_deref() == Some(ty))?;
    let TypeInner::Struct { members, span } = &t.inner else {
        panic!("{ty} is not a struct");
    };
    let mut layouter = Layouter::default();
    layouter.update(module.to_ctx()).expect("layout");
    let size = layouter[handle].size;
    assert_eq!(size, t.inner.size(module.to_ctx()), "{ty}: Layouter and TypeInner::size disagree");
    assert_eq!(size, *span, "{ty}: span");
    let members = members.iter().map(|m| (m.name.clone().unwrap_or_default(), m.offset)).collect();
    Some((size, members))
}

fn offset_of_member(members: &[(String, u32)], ty: &str, name: &str) -> u32 {
    members.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("{ty} has no member {name}")).1
}

fn check_params(module: &Module, file: &str) {
    let (size, m) = struct_layout(module, "Params").unwrap_or_else(|| panic!("{file}: no struct Params"));
    assert_eq!(size as usize, size_of::<GpuParams>(), "{file}: Params size vs GpuParams");
    for (name, off) in [
        ("gravity", offset_of!(GpuParams, gravity)),
        ("wind", offset_of!(GpuParams, wind)),
        ("center", offset_of!(GpuParams, center)),
        ("n_particles", offset_of!(GpuParams, n_particles)),
        ("n_springs", offset_of!(GpuParams, n_springs)),
        ("h", offset_of!(GpuParams, h)),
        ("alpha", offset_of!(GpuParams, alpha)),
        ("cursor", offset_of!(GpuParams, cursor)),
        ("cursor_particle", offset_of!(GpuParams, cursor_particle)),
        ("cursor_damping", offset_of!(GpuParams, cursor_damping)),
        ("_pad0", offset_of!(GpuParams, _pad)),
        ("_pad1", offset_of!(GpuParams, _pad) + 4),
        ("aero_base", offset_of!(GpuParams, aero_base)),
        ("aero_gust", offset_of!(GpuParams, aero_gust)),
        ("time", offset_of!(GpuParams, time)),
        ("n_fields", offset_of!(GpuParams, n_fields)),
        ("_pad2", offset_of!(GpuParams, _pad2)),
        ("_pad3", offset_of!(GpuParams, _pad2) + 4),
        ("fields", offset_of!(GpuParams, fields)),
    ] {
        assert_eq!(offset_of_member(&m, "Params", name) as usize, off, "{file}: Params.{name} offset");
    }
    assert_eq!(m.len(), 19, "{file}: Params has exactly the GpuParams fields");
}

fn check_spring(module: &Module, file: &str) {
    let (size, m) = struct_layout(module, "Nbr").unwrap_or_else(|| panic!("{file}: no struct Nbr"));
    assert_eq!(size as usize, size_of::<GpuNbr>(), "{file}: Nbr size vs GpuNbr");
    for (name, off) in
        [("j", offset_of!(GpuNbr, j)), ("rest", offset_of!(GpuNbr, rest)), ("k", offset_of!(GpuNbr, k)), ("kd", offset_of!(GpuNbr, kd))]
    {
        assert_eq!(offset_of_member(&m, "Nbr", name) as usize, off, "{file}: Nbr.{name} offset");
    }
}

#[test]
fn kernels_parse_and_validate() {
    assert!(!KERNEL_WGSL.is_empty());
    for (file, src) in KERNEL_WGSL {
        let composed = compose(src);
        let module = parse_and_validate(file, &composed);
        assert!(!module.entry_points.is_empty(), "{file} has entry points");
    }
}

#[test]
fn common_wgsl_validates_alone() {
    let (file, src) = SHARED_WGSL[0];
    assert_eq!(file, "shared/common.wgsl");
    let on_disk = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/shared/common.wgsl")).unwrap();
    assert_eq!(src, on_disk, "SHARED_WGSL[0] is shaders/shared/common.wgsl");
    let full = format!("const WG: u32 = 64u;\n{on_disk}");
    let module = parse_and_validate("shared/common.wgsl", &full);
    check_params(&module, file);
    check_spring(&module, file);
}

#[test]
fn struct_layouts_match_rust() {
    let mut leu_seen = false;
    for (file, src) in KERNEL_WGSL {
        let module = parse_and_validate(file, &compose(src));
        check_params(&module, file);
        check_spring(&module, file);
        if file == "leu.wgsl" {
            let (size, m) = struct_layout(&module, "LeuPass").expect("leu.wgsl: no struct LeuPass");
            assert_eq!(size as usize, size_of::<LeuPass>(), "LeuPass size");
            assert_eq!(offset_of_member(&m, "LeuPass", "parity") as usize, offset_of!(LeuPass, parity));
            leu_seen = true;
        }
    }
    assert!(leu_seen, "leu.wgsl is among the kernels");
    // the implicit operator composed with the PCG: CgPass and ImplicitParams as in Rust
    let (file, src) = ("implicit.wgsl", kernel_wgsl("implicit.wgsl").expect("implicit.wgsl is a kernel file"));
    assert!(src.contains("fn pcg_matvec") && src.contains("fn operator_apply"), "implicit.wgsl is composed with pcg.wgsl");
    let module = parse_and_validate(file, &compose(src));
    let (size, m) = struct_layout(&module, "CgPass").expect("no struct CgPass");
    assert_eq!(size as usize, size_of::<CgPass>(), "CgPass size");
    for (name, off) in [
        ("n", offset_of!(CgPass, n)),
        ("groups", offset_of!(CgPass, groups)),
        ("parity", offset_of!(CgPass, parity)),
        ("tol2", offset_of!(CgPass, tol2)),
        ("warm", offset_of!(CgPass, warm)),
    ] {
        assert_eq!(offset_of_member(&m, "CgPass", name) as usize, off, "CgPass.{name} offset");
    }
    let (size, m) = struct_layout(&module, "ImplicitParams").expect("no struct ImplicitParams");
    assert_eq!(size as usize, size_of::<ImplicitParams>(), "ImplicitParams size");
    assert_eq!(offset_of_member(&m, "ImplicitParams", "exact") as usize, offset_of!(ImplicitParams, exact));
    assert_eq!(offset_of_member(&m, "ImplicitParams", "strain_limit") as usize, offset_of!(ImplicitParams, strain_limit));
    // the colliders' records and count
    let (file, src) = ("collide.wgsl", kernel_wgsl("collide.wgsl").expect("collide.wgsl is a kernel file"));
    let module = parse_and_validate(file, &compose(src));
    let (size, m) = struct_layout(&module, "Collider").expect("collide.wgsl: no struct Collider");
    assert_eq!(size as usize, size_of::<GpuCollider>(), "Collider size");
    for (name, off) in [
        ("kind", offset_of!(GpuCollider, kind)),
        ("friction", offset_of!(GpuCollider, friction)),
        ("thickness", offset_of!(GpuCollider, thickness)),
        ("a", offset_of!(GpuCollider, a)),
        ("b", offset_of!(GpuCollider, b)),
        ("c", offset_of!(GpuCollider, c)),
    ] {
        assert_eq!(offset_of_member(&m, "Collider", name) as usize, off, "Collider.{name} offset");
    }
    let (size, m) = struct_layout(&module, "CollideInfo").expect("collide.wgsl: no struct CollideInfo");
    assert_eq!(size as usize, size_of::<CollideInfo>(), "CollideInfo size");
    assert_eq!(offset_of_member(&m, "CollideInfo", "n_colliders") as usize, offset_of!(CollideInfo, n_colliders));
    assert_eq!(size_of::<CollideInfo>() % 16, 0);
    // the force gather is composed in only where the kernel binds its records
    assert!(!compose(src).contains("fn accel("), "collide.wgsl gets no force gather");
    assert!(compose(kernel_wgsl("explicit.wgsl").expect("explicit.wgsl")).contains("fn accel("), "explicit.wgsl gets the force gather");
    // Liu's local/global module, composed with the PCG: CgPass, LocalGlobalConsts and LocalGlobalPass as in Rust
    let (file, src) = ("local_global.wgsl", kernel_wgsl("local_global.wgsl").expect("local_global.wgsl is a kernel file"));
    assert!(src.contains("fn pcg_matvec") && src.contains("fn operator_apply"), "local_global.wgsl is composed with pcg.wgsl");
    let module = parse_and_validate(file, &compose(src));
    let (size, _) = struct_layout(&module, "CgPass").expect("no struct CgPass");
    assert_eq!(size as usize, size_of::<CgPass>(), "{file}: CgPass size");
    let (size, m) = struct_layout(&module, "LocalGlobalConsts").expect("no struct LocalGlobalConsts");
    assert_eq!(size as usize, size_of::<LocalGlobalConsts>(), "LocalGlobalConsts size");
    for (name, off) in [
        ("fext", offset_of!(LocalGlobalConsts, fext)),
        ("h", offset_of!(LocalGlobalConsts, h)),
        ("alpha", offset_of!(LocalGlobalConsts, alpha)),
        ("inertia", offset_of!(LocalGlobalConsts, inertia)),
        ("mass_diag", offset_of!(LocalGlobalConsts, mass_diag)),
        ("n", offset_of!(LocalGlobalConsts, n)),
        ("groups", offset_of!(LocalGlobalConsts, groups)),
        ("partials_base", offset_of!(LocalGlobalConsts, partials_base)),
        ("stats_base", offset_of!(LocalGlobalConsts, stats_base)),
    ] {
        assert_eq!(offset_of_member(&m, "LocalGlobalConsts", name) as usize, off, "LocalGlobalConsts.{name} offset");
    }
    assert_eq!(m.len(), 9, "LocalGlobalConsts has exactly the Rust fields");
    let (size, m) = struct_layout(&module, "LocalGlobalPass").expect("no struct LocalGlobalPass");
    assert_eq!(size as usize, size_of::<LocalGlobalPass>(), "LocalGlobalPass size");
    for (name, off) in [
        ("k", offset_of!(LocalGlobalPass, k)),
        ("omega", offset_of!(LocalGlobalPass, omega)),
        ("slot", offset_of!(LocalGlobalPass, slot)),
        ("start", offset_of!(LocalGlobalPass, start)),
    ] {
        assert_eq!(offset_of_member(&m, "LocalGlobalPass", name) as usize, off, "LocalGlobalPass.{name} offset");
    }
    // the kernels carry the CPU twins' names, and the file has every one the engine builds
    for ep in springsim::gpu::methods::local_global::LocalGlobalKernels::ENTRY_POINTS {
        assert!(module.entry_points.iter().any(|e| e.name == ep), "{file}: entry point {ep}");
    }
    // the multigrid V-cycle: MgPass as in Rust, field by field
    let (file, src) = ("multigrid.wgsl", kernel_wgsl("multigrid.wgsl").expect("multigrid.wgsl is a kernel file"));
    let module = parse_and_validate(file, &compose(src));
    let (size, m) = struct_layout(&module, "MgPass").expect("no struct MgPass");
    assert_eq!(size as usize, size_of::<MgPass>(), "MgPass size");
    for (name, off) in [
        ("rows", offset_of!(MgPass, rows)),
        ("m_ptr", offset_of!(MgPass, m_ptr)),
        ("m_col", offset_of!(MgPass, m_col)),
        ("m_val", offset_of!(MgPass, m_val)),
        ("wdinv", offset_of!(MgPass, wdinv)),
        ("b", offset_of!(MgPass, b)),
        ("x", offset_of!(MgPass, x)),
        ("t", offset_of!(MgPass, t)),
        ("other", offset_of!(MgPass, other)),
        ("cg_n", offset_of!(MgPass, cg_n)),
        ("slot", offset_of!(MgPass, slot)),
        ("groups", offset_of!(MgPass, groups)),
        ("gate", offset_of!(MgPass, gate)),
    ] {
        assert_eq!(offset_of_member(&m, "MgPass", name) as usize, off, "MgPass.{name} offset");
    }
    assert_eq!(size_of::<MgPass>() % 16, 0);
    for ep in ["mg_down", "mg_restrict", "mg_coarse", "mg_up", "mg_post"] {
        assert!(module.entry_points.iter().any(|e| e.name == ep), "{file}: entry point {ep}");
    }
    assert_eq!(size_of::<LocalGlobalConsts>() % 16, 0);
    assert_eq!(size_of::<LocalGlobalPass>() % 16, 0);
    assert_eq!(size_of::<CgPass>() % 16, 0);
    assert_eq!(size_of::<ImplicitParams>() % 16, 0);
    // Sizes the uniform/storage rules need: 16-byte multiples for the uniforms, 32 bytes per spring.
    assert_eq!(size_of::<GpuParams>() % 16, 0);
    assert_eq!(size_of::<LeuPass>() % 16, 0);
    assert_eq!(size_of::<GpuNbr>(), 16);
}

#[test]
fn every_entry_point_uses_the_workgroup_size() {
    let mut count = 0;
    for (file, src) in KERNEL_WGSL {
        let module = parse_and_validate(file, &compose(src));
        for ep in &module.entry_points {
            assert_eq!(ep.stage, ShaderStage::Compute, "{file}: {} is a compute entry point", ep.name);
            assert_eq!(ep.workgroup_size, [WORKGROUP_SIZE, 1, 1], "{file}: @workgroup_size of {} must be WORKGROUP_SIZE", ep.name);
            assert!(ep.workgroup_size_overrides.is_none(), "{file}: {} uses an override", ep.name);
            count += 1;
        }
        // every @compute in the source became an entry point
        assert_eq!(src.matches("@compute").count(), module.entry_points.len(), "{file}: entry point count");
    }
    assert!(count > 0);
}

/// The kernels' parameter blocks: no uniform buffer anywhere in the engine's WGSL (`gpu::base::pipelines::params`
/// says why: lavapipe compiles a shader variant per dispatch from the uniform words its branches read,
/// and keeps every one); every struct-typed global, a parameter block, is read-only storage.
fn uniform_globals(module: &Module) -> Vec<String> {
    module
        .global_variables
        .iter()
        .filter(|(_, g)| g.space == naga::AddressSpace::Uniform)
        .map(|(_, g)| g.name.clone().unwrap_or_default())
        .collect()
}

#[test]
fn parameter_blocks_are_read_only_storage() {
    for (file, src) in KERNEL_WGSL {
        let module = parse_and_validate(file, &compose(src));
        assert_eq!(uniform_globals(&module), Vec::<String>::new(), "{file}: uniform bindings");
        // the parameter blocks are there, as read-only storage
        let params: Vec<_> = module
            .global_variables
            .iter()
            .filter(|(_, g)| matches!(module.types[g.ty].inner, TypeInner::Struct { .. }))
            .map(|(_, g)| (g.name.clone().unwrap_or_default(), g.space))
            .collect();
        assert!(!params.is_empty(), "{file}: no parameter block");
        for (name, space) in params {
            assert_eq!(space, naga::AddressSpace::Storage { access: naga::StorageAccess::LOAD }, "{file}: {name}");
        }
    }
    // the check sees a uniform binding
    let src = kernel_wgsl("explicit.wgsl").expect("explicit.wgsl");
    let module = parse_and_validate("explicit.wgsl", &compose(&src.replace("var<storage, read> P: Params", "var<uniform> P: Params")));
    assert_eq!(uniform_globals(&module), vec!["P".to_string()]);
}

/// The checks above can fail: a kernel with a hard-coded size, or a struct with a different layout,
/// is seen as different by naga.
#[test]
fn checks_detect_mismatches() {
    let (file, src) = ("explicit.wgsl", kernel_wgsl("explicit.wgsl").expect("explicit.wgsl"));
    let bad = compose(&src.replace("@workgroup_size(WG)", "@workgroup_size(32)"));
    let module = parse_and_validate(file, &bad);
    assert!(module.entry_points.iter().all(|ep| ep.workgroup_size == [32, 1, 1]));

    let grown = format!("const WG: u32 = 64u;\n{}", SHARED_WGSL[0].1.replace("    kd: f32,\n", "    kd: f32,\n    extra: vec4<f32>,\n"));
    let module = parse_and_validate("grown common.wgsl", &grown);
    let (size, _) = struct_layout(&module, "Nbr").unwrap();
    assert_ne!(size as usize, size_of::<GpuNbr>());

    let broken = compose(&src.replace("@compute", "@compute @compute"));
    assert!(naga::front::wgsl::parse_str(&broken).is_err(), "a malformed kernel does not parse");
}

/// Self-collision's kernel file validates, binds no force gather, and its `SelfInfo` has the Rust twin's layout.
#[test]
fn self_collision_layout_matches_rust() {
    let (file, src) = ("self_collision.wgsl", kernel_wgsl("self_collision.wgsl").expect("self_collision.wgsl is a kernel file"));
    let module = parse_and_validate(file, &compose(src));
    assert!(!compose(src).contains("fn accel("), "self_collision.wgsl gets no force gather");
    let (size, m) = struct_layout(&module, "SelfInfo").expect("self_collision.wgsl: no struct SelfInfo");
    assert_eq!(size as usize, size_of::<SelfInfo>(), "SelfInfo size");
    for (name, off) in [
        ("thickness", offset_of!(SelfInfo, thickness)),
        ("inv_cell", offset_of!(SelfInfo, inv_cell)),
        ("table", offset_of!(SelfInfo, table)),
        ("n_blocks", offset_of!(SelfInfo, n_blocks)),
    ] {
        assert_eq!(offset_of_member(&m, "SelfInfo", name) as usize, off, "SelfInfo.{name} offset");
    }
    let names: Vec<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
    for k in springsim::gpu::step_end::self_collision::SELF_COLLISION_KERNELS {
        assert!(names.contains(&k), "{file}: entry point {k}");
    }
}

/// `strain_limit.wgsl` validates with the force gather composed in (it binds `nbr`), and its
/// `StrainLimitInfo` has the Rust twin's size and offsets.
#[test]
fn strain_limit_wgsl_validates_and_matches_rust() {
    use springsim::gpu::base::layout::StrainLimitInfo;
    let src = kernel_wgsl("strain_limit.wgsl").expect("strain_limit.wgsl is a kernel file");
    let composed = compose(src);
    assert!(composed.contains("fn accel("), "strain_limit.wgsl binds nbr: the gather is composed in");
    let module = parse_and_validate("strain_limit.wgsl", &composed);
    check_params(&module, "strain_limit.wgsl");
    let (size, m) = struct_layout(&module, "StrainLimitInfo").expect("strain_limit.wgsl: no struct StrainLimitInfo");
    assert_eq!(size as usize, size_of::<StrainLimitInfo>(), "StrainLimitInfo size");
    assert_eq!(offset_of_member(&m, "StrainLimitInfo", "limit") as usize, offset_of!(StrainLimitInfo, limit));
    assert_eq!(offset_of_member(&m, "StrainLimitInfo", "relaxation") as usize, offset_of!(StrainLimitInfo, relaxation));
    assert_eq!(offset_of_member(&m, "StrainLimitInfo", "rod") as usize, offset_of!(StrainLimitInfo, rod));
    assert_eq!(offset_of_member(&m, "StrainLimitInfo", "stop") as usize, offset_of!(StrainLimitInfo, stop));
    assert_eq!(offset_of_member(&m, "StrainLimitInfo", "acceleration") as usize, offset_of!(StrainLimitInfo, acceleration));
    assert_eq!(size_of::<StrainLimitInfo>() % 16, 0);
    for ep in ["strain_limit_first", "strain_limit_check", "strain_limit_pass", "strain_limit_copy"] {
        assert!(module.entry_points.iter().any(|e| e.name == ep), "no entry point {ep}");
    }
}

#[test]
fn wind_kernel_validates_without_the_force_gather() {
    let src = kernel_wgsl("wind.wgsl").expect("wind.wgsl is a kernel file");
    let module = parse_and_validate("wind.wgsl", &compose(src));
    assert!(module.entry_points.iter().any(|e| e.name == "wind_kick"), "wind.wgsl has wind_kick");
    assert!(!compose(src).contains("fn accel("), "wind.wgsl gets no force gather");
    check_params(&module, "wind.wgsl");
}

/// Implicit Euler's multigrid (`implicit_mg.wgsl`: implicit.wgsl + pcg.wgsl + implicit_mg.wgsl) validates,
/// has its entry points, and its `ImplicitMgPass` is the Rust twin's, field by field.
#[test]
fn implicit_mg_wgsl_validates_and_matches_rust() {
    let (file, src) = ("implicit_mg.wgsl", kernel_wgsl("implicit_mg.wgsl").expect("implicit_mg.wgsl is a kernel file"));
    assert!(src.contains("fn operator_apply") && src.contains("fn pcg_matvec"), "composed after implicit.wgsl and pcg.wgsl");
    let module = parse_and_validate(file, &compose(src));
    let (size, m) = struct_layout(&module, "ImplicitMgPass").expect("no struct ImplicitMgPass");
    assert_eq!(size as usize, size_of::<ImplicitMgPass>(), "ImplicitMgPass size");
    assert_eq!(size_of::<ImplicitMgPass>(), 128);
    for (name, off) in [
        ("rows", offset_of!(ImplicitMgPass, rows)),
        ("level", offset_of!(ImplicitMgPass, level)),
        ("nodes", offset_of!(ImplicitMgPass, nodes)),
        ("slot", offset_of!(ImplicitMgPass, slot)),
        ("groups", offset_of!(ImplicitMgPass, groups)),
        ("b", offset_of!(ImplicitMgPass, b)),
        ("x", offset_of!(ImplicitMgPass, x)),
        ("t", offset_of!(ImplicitMgPass, t)),
        ("cb", offset_of!(ImplicitMgPass, cb)),
        ("cx", offset_of!(ImplicitMgPass, cx)),
        ("f_inc_ptr", offset_of!(ImplicitMgPass, f_inc_ptr)),
        ("f_inc", offset_of!(ImplicitMgPass, f_inc)),
        ("f_ground", offset_of!(ImplicitMgPass, f_ground)),
        ("f_edge", offset_of!(ImplicitMgPass, f_edge)),
        ("f_dinv", offset_of!(ImplicitMgPass, f_dinv)),
        ("agg", offset_of!(ImplicitMgPass, agg)),
        ("mem_ptr", offset_of!(ImplicitMgPass, mem_ptr)),
        ("mem", offset_of!(ImplicitMgPass, mem)),
        ("gr_ptr", offset_of!(ImplicitMgPass, gr_ptr)),
        ("gr", offset_of!(ImplicitMgPass, gr)),
        ("ed_ptr", offset_of!(ImplicitMgPass, ed_ptr)),
        ("ed", offset_of!(ImplicitMgPass, ed)),
        ("ent", offset_of!(ImplicitMgPass, ent)),
        ("c_inc_ptr", offset_of!(ImplicitMgPass, c_inc_ptr)),
        ("c_inc", offset_of!(ImplicitMgPass, c_inc)),
        ("c_ground", offset_of!(ImplicitMgPass, c_ground)),
        ("c_edge", offset_of!(ImplicitMgPass, c_edge)),
        ("c_dinv", offset_of!(ImplicitMgPass, c_dinv)),
        ("omega", offset_of!(ImplicitMgPass, omega)),
        ("alpha", offset_of!(ImplicitMgPass, alpha)),
        ("_pad0", offset_of!(ImplicitMgPass, _pad)),
        ("_pad1", offset_of!(ImplicitMgPass, _pad) + 4),
    ] {
        assert_eq!(offset_of_member(&m, "ImplicitMgPass", name) as usize, off, "ImplicitMgPass.{name} offset");
    }
    assert_eq!(m.len(), 32, "ImplicitMgPass has exactly the Rust fields");
    for ep in springsim::gpu::methods::implicit::multigrid::ImplicitMgKernels::ENTRY_POINTS {
        assert!(module.entry_points.iter().any(|e| e.name == ep), "{file}: entry point {ep}");
    }
}

/// The bindings each entry point uses, as `springsim::gpu::base::uses` scans them from the source (what
/// a per-kernel layout holds under WebGPU's default limits), are naga's own analysis of the module, for
/// every kernel file, with and without the unsplit tables' second halves, and with the parameter blocks
/// as uniforms (which naga also validates: their structs keep to the uniform layout rules).
#[test]
fn scanned_binding_uses_are_nagas() {
    use springsim::gpu::base::specialize::{drop_unsplit_parts, params_as_uniforms, SPLIT_PARTS};
    use springsim::gpu::base::uses::entry_point_uses;
    let unsplit: Vec<(&str, f64)> = SPLIT_PARTS.iter().map(|(c, _)| (*c, 0.0)).collect();
    let mut checked = 0;
    for (file, src) in KERNEL_WGSL {
        let unsplit_source = drop_unsplit_parts(&compose(src), &unsplit);
        let uniform_source = params_as_uniforms(&unsplit_source).0;
        for source in [compose(src), unsplit_source, uniform_source] {
            let module = parse_and_validate(file, &source);
            let info = Validator::new(ValidationFlags::all(), Capabilities::default()).validate(&module).unwrap();
            let scanned = entry_point_uses(&source);
            assert_eq!(scanned.len(), module.entry_points.len(), "{file}: entry points");
            for (i, ep) in module.entry_points.iter().enumerate() {
                let fi = info.get_entry_point(i);
                let naga: std::collections::BTreeSet<(u32, u32)> = module
                    .global_variables
                    .iter()
                    .filter(|(h, _)| !fi[*h].is_empty())
                    .filter_map(|(_, g)| g.binding.as_ref().map(|b| (b.group, b.binding)))
                    .collect();
                assert_eq!(scanned[&ep.name], naga, "{file}: {}", ep.name);
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} entry points");
}
