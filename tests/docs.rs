//! The guide's two reference tables against the code. `docs/guide/bench-record.md`: every key of every
//! record `springsim bench --format json` writes (over runs chosen so that the optional keys appear) is
//! a row of the table, and every row is a key some record has. `docs/guide/scene-files.md`: every field
//! of a scene file, found by serializing a `SceneFile` with every optional field and every enum variant
//! given, is a row, and every row is a field.
//!
//! A key is the path of field names joined by `.`; a list's elements add nothing to the path, an enum
//! variant with fields is a step of it (`colliders.Sphere.radius`), and the bench record's `phases`, a
//! map from a phase's name to its figures, is written `phases.<phase>.…`. A bench row marked `†` after
//! its key is a key that only some adapters or rare events produce: it must be documented when a record
//! has it, but no run here is required to produce it.

mod common;

use serde_json::Value;
use springsim::method::{DivergencePolicy, FactorPrecision, GlobalSolve, Preconditioner};
use springsim::model::{AeroWind, Collider, Falloff, Field, FieldKind, Motion, MotionTarget, Path, SelfCollision, StrainLimit};
use springsim::scene_file::{CameraSpec, Central, ForcesSpec, Material, MethodSpec, ModelSpec, SceneFile};
use springsim::Method;
use std::collections::BTreeSet;
use std::process::Command;

/// The placeholder for a phase's name in the bench record's keys.
const PHASE: &str = "<phase>";

/// A row of a reference table: its key and whether it is marked `†` (documented, not required).
#[derive(Debug)]
struct Row {
    key: String,
    optional: bool,
}

/// The rows of the first Markdown table in `page` whose header's first cell is `key`: the text between
/// the backticks of each row's first cell.
fn table(page: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(format!("{}/{page}", env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|e| panic!("{page}: {e}"));
    let mut lines = text.lines().skip_while(|l| !l.starts_with("| key |"));
    assert!(lines.next().is_some(), "{page} has no table whose first column is `key`");
    let rows: Vec<Row> = lines
        .skip(1) // the |---| line
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cell = l.split('|').nth(1).unwrap_or("").trim();
            let key = cell
                .strip_prefix('`')
                .and_then(|c| c.split('`').next())
                .unwrap_or_else(|| panic!("{page}: a row's key is not in backticks: {l}"));
            Row { key: key.to_string(), optional: cell.ends_with('†') }
        })
        .collect();
    let mut seen = BTreeSet::new();
    for r in &rows {
        assert!(seen.insert(&r.key), "{page}: `{}` has two rows", r.key);
    }
    rows
}

/// Every key of `v` under `prefix` (see the module's doc); `map` names the maps whose keys stand for a
/// name, with the placeholder each key becomes and the names it may take.
fn keys(v: &Value, prefix: &str, map: Option<(&str, &str, &[&str])>, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(fields) => {
            for (k, x) in fields {
                let step = match map {
                    Some((at, placeholder, names)) if at == prefix => {
                        assert!(names.contains(&k.as_str()), "`{prefix}` has `{k}`, not one of {names:?}");
                        placeholder
                    }
                    _ => k.as_str(),
                };
                let path = if prefix.is_empty() { step.to_string() } else { format!("{prefix}.{step}") };
                keys(x, &path, map, out);
                out.insert(path);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| keys(x, prefix, map, out)),
        _ => {}
    }
}

/// Both directions: every key is a row, and every row not marked optional is a key (with `rows_too`).
fn check(page: &str, what: &str, found: &BTreeSet<String>, rows_too: bool) {
    let rows = table(page);
    let documented: BTreeSet<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    let missing: Vec<&String> = found.iter().filter(|k| !documented.contains(k.as_str())).collect();
    assert!(missing.is_empty(), "{what} {missing:?} have no row in {page}'s table: add a row for each (key in backticks, unit, meaning)");
    if rows_too {
        let stale: Vec<&str> = rows.iter().filter(|r| !r.optional && !found.contains(&r.key)).map(|r| r.key.as_str()).collect();
        assert!(
            stale.is_empty(),
            "rows {stale:?} of {page}'s table are not {what} (renamed or removed? or mark a key only some runs have with `†`)"
        );
    }
}

/// The JSON records of one `springsim bench` run (exit status 0, or 3 when `diverges`).
fn bench(args: &[&str], diverges: bool) -> Vec<Value> {
    let mut all = vec!["bench", "--format", "json"];
    all.extend_from_slice(args);
    let out = Command::new(env!("CARGO_BIN_EXE_springsim")).args(&all).output().expect("run springsim");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(if diverges { 3 } else { 0 }), "{all:?}: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let records: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    assert!(!records.is_empty(), "{all:?} wrote no record");
    records
}

#[test]
fn every_bench_record_key_is_in_the_guide_and_every_row_is_a_key() {
    let cpu: &[(&[&str], bool)] = &[
        // the plain records, and the frames stepped back to back
        (
            &[
                "--scene",
                "curtain",
                "--size",
                "9",
                "--method",
                "symplectic-euler,implicit-euler",
                "--backend",
                "cpu",
                "--frames",
                "2",
                "--sustained",
                "2",
            ],
            false,
        ),
        // a collider with a skin: `penetration`; self-collision: `self_gap`; strain limiting
        (&["--scene", "drape-sphere,folds", "--size", "9", "--backend", "cpu", "--frames", "1"], false),
        (&["--scene", "curtain", "--size", "9", "--backend", "cpu", "--frames", "1", "--strain-limiting", "0.1"], false),
        // a divergence reported (`diverged`) and one recovered from (`recoveries`, with LEU's interval)
        (
            &[
                "--scene",
                "curtain",
                "--size",
                "9",
                "--method",
                "explicit-euler",
                "--backend",
                "cpu",
                "--frames",
                "4",
                "--allow-unstable",
                "--substep-scale",
                "4",
            ],
            true,
        ),
        (
            &[
                "--scene",
                "curtain",
                "--size",
                "9",
                "--method",
                "explicit-euler,leu",
                "--backend",
                "cpu",
                "--frames",
                "4",
                "--allow-unstable",
                "--substep-scale",
                "4",
                "--leu-interval",
                "0.05",
                "--divergence",
                "recover",
            ],
            false,
        ),
    ];
    let mut found = BTreeSet::new();
    let phases: Vec<&str> = springsim::gpu::profiling::cost::Phase::ALL.iter().map(|p| p.name()).collect();
    let mut add = |records: Vec<Value>| records.iter().for_each(|r| keys(r, "", Some(("phases", PHASE, &phases)), &mut found));
    for (args, diverges) in cpu {
        add(bench(args, *diverges));
    }
    let gpu = common::gpu().is_some();
    if gpu {
        // the GPU's cost, per phase and per kernel; local/global's split and the `cholesky` path's transfers
        add(bench(&["--scene", "curtain", "--size", "9", "--backend", "gpu", "--frames", "2", "--timestamps", "--kernel-times"], false));
        add(bench(
            &[
                "--scene",
                "curtain",
                "--size",
                "9",
                "--method",
                "local-global",
                "--global",
                "cholesky",
                "--backend",
                "gpu",
                "--frames",
                "1",
                "--local-global-split",
                "1",
            ],
            false,
        ));
    }
    // without an adapter the GPU's keys cannot appear: only the first direction is checked
    check("docs/guide/bench-record.md", "bench record keys", &found, gpu);
}

/// Every variant of the enums a scene file holds: a new variant fails to compile here until it is
/// added to the scene below (and so to the check).
fn every_variant(c: &Collider, t: &MotionTarget, k: &FieldKind, f: &Falloff) {
    match c {
        Collider::HalfSpace { .. } | Collider::Sphere { .. } | Collider::Capsule { .. } | Collider::Box { .. } => {}
    }
    match t {
        MotionTarget::Collider(_) | MotionTarget::AllPins | MotionTarget::Pins(_) => {}
    }
    match k {
        FieldKind::Point | FieldKind::Vortex { .. } => {}
    }
    match f {
        Falloff::Constant | Falloff::InverseSquare { .. } | Falloff::Linear { .. } | Falloff::Smooth { .. } => {}
    }
}

/// A scene file with every field given (a struct literal: a new field fails to compile here until it
/// is given) and every enum variant used, none left at a value its serializer skips.
fn full_scene() -> SceneFile {
    let v = [0.1, 0.2, 0.3];
    let colliders = vec![
        Collider::HalfSpace { normal: [0.0, 1.0, 0.0], offset: -1.0, friction: 0.5 },
        Collider::Sphere { center: v, radius: 0.2, thickness: 0.01, friction: 0.5 },
        Collider::Capsule { a: v, b: [0.3, 0.2, 0.1], radius: 0.1, thickness: 0.01, friction: 0.5 },
        Collider::Box { center: v, half_extents: v, rotation: [0.0, 0.0, 0.0, 1.0], thickness: 0.01, friction: 0.5 },
    ];
    let path = Path { keys: vec![(0.0, [0.0; 3]), (1.0, v)], repeat: true };
    let motions: Vec<Motion> = [MotionTarget::Collider(0), MotionTarget::AllPins, MotionTarget::Pins(vec![0])]
        .into_iter()
        .map(|target| Motion { target, path: path.clone() })
        .collect();
    let falloffs =
        [Falloff::Constant, Falloff::InverseSquare { radius: 1.0 }, Falloff::Linear { radius: 1.0 }, Falloff::Smooth { radius: 1.0 }];
    let kinds = [FieldKind::Point, FieldKind::Vortex { axis: [0.0, 1.0, 0.0] }];
    let fields: Vec<Field> = falloffs
        .iter()
        .enumerate()
        .map(|(i, &falloff)| Field { kind: kinds[i % 2], center: v, strength: 1.0, falloff, bounds: Some(([-1.0; 3], [1.0; 3])) })
        .collect();
    for (i, f) in fields.iter().enumerate() {
        every_variant(&colliders[i], &motions[i % 3].target, &f.kind, &f.falloff);
    }
    SceneFile {
        about: "every field".into(),
        model: ModelSpec { builder: "mesh".into(), size: Some(9), stiffness: Some(100.0), obj: Some("banner.obj".into()) },
        material: Material { mass: Some(1.0), damping: None, damping_time: Some(2e-4), bending: Some(0.01) },
        pins: vec![0],
        colliders,
        motions,
        self_collision: Some(SelfCollision { thickness: 0.02, cell: Some(0.04), passes: 2 }),
        forces: ForcesSpec {
            gravity: Some([0.0, -9.81, 0.0]),
            drag: Some(0.5),
            wind: Some(v),
            central: Some(Central { center: v, strength: 1.0 }),
            fields,
            aero_wind: Some(AeroWind { base: v, gust: v, frequency: 0.7, coefficient: 0.7 }),
        },
        strain_limiting: Some(StrainLimit { limit: 0.1, passes: 64, relaxation: 1.0, tolerance: 1e-3, acceleration: 1.85 }),
        method: MethodSpec {
            name: Method::LocalGlobal,
            h: Some(0.01),
            substep_scale: Some(0.5),
            rayleigh: Some(true),
            leu_interval: Some(1e-3),
            speed_limit: Some(50.0),
            global: Some(GlobalSolve::Cg),
            local_global_iterations: Some(10),
            global_iterations: Some(20),
            preconditioner: Some(Preconditioner::Jacobi),
            factor_precision: Some(FactorPrecision::F64),
            newton_iterations: Some(10),
            cg_iterations: Some(100),
            cg_tolerance: Some(1e-6),
            cg_warm_start: Some(false),
            exact_jacobian: Some(false),
            adaptive: Some(true),
            strain_limit: Some(1.0),
            step_strain_limit: Some(0.1),
            retry_residual: Some(0.1),
            max_frame_halvings: Some(4),
            divergence: Some(DivergencePolicy::Report),
            guard_every: Some(8),
            allow_unstable: Some(false),
        },
        frame_dt: 1.0 / 30.0,
        frames: 60,
        camera: Some(CameraSpec { eye: [0.0, 0.5, 3.0], target: [0.0; 3] }),
    }
}

#[test]
fn every_scene_file_field_is_in_the_guide_and_every_row_is_a_field() {
    // the spring damping as k_d or as a time, not both: two valid files between them give every field
    let with_kd =
        SceneFile { material: Material { mass: Some(1.0), damping: Some(0.1), damping_time: None, bending: None }, ..full_scene() };
    let mut found = BTreeSet::new();
    for scene in [full_scene(), with_kd] {
        // the scene is a valid file: its RON parses back to it
        let ron = scene.to_ron().expect("to RON");
        let back = springsim::scene_file::Scene::parse(&ron, std::path::Path::new("every-field.ron")).expect("the full scene parses");
        assert_eq!(back.file, scene, "the full scene's RON reads back as itself:\n{ron}");
        keys(&serde_json::to_value(&scene).expect("serialize"), "", None, &mut found);
    }
    check("docs/guide/scene-files.md", "scene-file fields", &found, true);
}
