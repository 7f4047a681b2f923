//! Scene files (`scenes/*.ron`, `springsim::scene_file`) and the commands that take them: `scene
//! print`, `--scene-file`, `run` with its OBJ and PLY frames, frames.csv, the plots and `--force`.

mod common;

use springsim::error::Error;
use springsim::method::{GlobalSolve, Method, StepSettings};
use springsim::model::{self, Collider, Model};
use springsim::scene::{self, SceneOptions, SCENES};
use springsim::scene_file::{Scene, SceneFile};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn springsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_springsim")).args(args).output().expect("run springsim")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8 output")
}

fn temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_nanos();
    let dir = std::env::temp_dir().join(format!("springsim-scene-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes")
}

fn ron_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(scenes_dir())
        .expect("scenes/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    v.sort();
    v
}

fn parse(text: &str) -> SceneFile {
    Scene::parse(text, Path::new("test.ron")).unwrap_or_else(|e| panic!("{e}\n{text}")).file
}

/// A failed run: non-zero exit, one line on stderr naming every `needles`, no panic, nothing on stdout.
fn assert_one_line(out: &Output, needles: &[&str]) {
    let stderr = text(&out.stderr);
    assert!(out.status.code().is_some_and(|c| c != 0), "exit {:?}; stderr: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "stderr is one line: {stderr:?}");
    for n in needles {
        assert!(stderr.contains(n), "stderr '{}' does not mention {n}", stderr.trim());
    }
    assert!(text(&out.stdout).is_empty(), "stdout: {}", text(&out.stdout));
}

// ---------------------------------------------------------------------------------------------
// the built-in files

#[test]
fn every_scene_ships_as_a_file_and_every_file_is_a_scene() {
    let mut files: Vec<String> = ron_files().iter().map(|p| p.file_stem().expect("stem").to_string_lossy().into_owned()).collect();
    files.sort();
    let names: Vec<String> = SCENES.iter().map(|s| s.name.to_string()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(files, sorted);
    for info in SCENES {
        let on_disk = std::fs::read_to_string(scenes_dir().join(format!("{}.ron", info.name))).expect("read");
        assert_eq!(info.text, on_disk, "{} is embedded as shipped", info.name);
        let sc = info.scene().unwrap_or_else(|e| panic!("{}: {e}", info.name));
        assert_eq!(sc.file.model.builder, info.name, "each built-in file names its own builder");
        assert!(!info.about().is_empty());
    }
    assert_eq!(SCENES.iter().find(|s| s.name == "curtain").map(|s| s.default_size()), Some(81));
    assert_eq!(SCENES.iter().find(|s| s.name == "mesh").map(|s| s.default_size()), Some(0));
}

/// Loading each file and printing it again gives the same scene (compared parsed, not as text).
#[test]
fn every_file_round_trips_through_print() {
    for path in ron_files() {
        let sc = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let printed = sc.file.to_ron().expect("to_ron");
        assert_eq!(parse(&printed), sc.file, "{}:\n{printed}", path.display());
        // and a scene with every part given
        let mut full = sc.file.clone();
        full.material.mass = Some(2.5);
        full.material.damping = Some(0.1);
        full.material.damping_time = None; // k_d given outright replaces the file's β (not both)
        full.pins = vec![0, 1];
        full.colliders = vec![Collider::ground(-2.0, 0.3), Collider::aabb([0.0; 3], [1.0, 0.5, 0.25], 0.01, 0.2)];
        full.forces.central = Some(springsim::scene_file::Central { center: [0.0, 1.0, 0.0], strength: 4.0 });
        full.method.global = Some(GlobalSolve::Cg);
        full.method.cg_iterations = Some(40);
        full.camera = Some(springsim::scene_file::CameraSpec { eye: [0.0, 1.0, 3.0], target: [0.0; 3] });
        assert_eq!(parse(&full.to_ron().expect("to_ron")), full);
    }
}

/// The builder's model with every spring's k_d = β·k (a scene file's `material: (damping_time: β)`).
fn damped(mut m: Model, beta: f64) -> Model {
    for s in &mut m.springs {
        s.kd = beta * s.k;
    }
    m
}

/// The files restate the builders' forces and add nothing but the curtain's damping (`material:
/// (damping_time: β)` and the air's drag, `forces: (drag: d₀)`) and the cloths' bending (`material:
/// (bending: B)`): the registry builds what the builders do.
#[test]
fn the_files_build_the_builders_models() {
    let beta = |name: &str| {
        let b = scene::load(name).expect(name).file.material.damping_time;
        assert!(b.is_some_and(|b| b > 0.0), "{name} is damped");
        b.unwrap_or(0.0)
    };
    let bent = |name: &str, mut m: Model| {
        let b = scene::load(name).expect(name).file.material.bending;
        assert!(b.is_some_and(|b| b > 0.0), "{name} bends");
        model::add_bending(&mut m, b.unwrap_or(0.0)).expect("bending");
        m
    };
    let expected: Vec<(&str, Model)> = vec![
        ("curtain", {
            let mut m = damped(model::curtain(81, None).expect("curtain"), beta("curtain"));
            m.forces.drag = scene::load("curtain").expect("curtain").file.forces.drag.unwrap_or(0.0);
            assert!(m.forces.drag > 0.0, "the curtain has the air's drag");
            m
        }),
        ("cloth", model::cloth(81, None).expect("cloth")),
        ("rope", model::rope(32, None).expect("rope")),
        ("hair", model::hair(24, None).expect("hair")),
        ("slinky", model::slinky(64, 20.0, 0.2, 0.5).expect("slinky")),
        ("jelly", model::jelly(8, None).expect("jelly")),
        ("flag", bent("flag", scene::flag(41, None).expect("flag"))),
        ("drape", bent("drape", scene::drape(41, None).expect("drape"))),
        ("drape-sphere", bent("drape-sphere", model::drape_sphere(41, None).expect("drape-sphere"))),
        ("folds", model::folds(24, None).expect("folds")),
        ("flag-gusts", bent("flag-gusts", scene::flag_gusts(41, None).expect("flag-gusts"))),
        ("vortex", scene::vortex(24, None).expect("vortex")),
    ];
    for (name, m) in expected {
        assert_eq!(scene::build(name, &SceneOptions::default()).expect(name), m, "{name}");
    }
    let orbit = scene::build("orbit", &SceneOptions { stiffness: Some(9.0), ..Default::default() }).expect("orbit");
    assert_eq!(orbit.forces.central, Some(([0.0; 3], 9.0)), "orbit's stiffness is its field's strength");
    assert_eq!(orbit.forces.gravity, [0.0; 3]);
    // the same through the file's path
    let path = scenes_dir().join("flag.ron");
    assert_eq!(
        scene::build(&path.display().to_string(), &SceneOptions::default()).expect("flag.ron"),
        bent("flag", scene::flag(41, None).expect("flag"))
    );
}

#[test]
fn the_mesh_example_loads_its_obj_next_to_it() {
    let path = scenes_dir().join("mesh.ron");
    let m = scene::build(&path.display().to_string(), &SceneOptions::default()).expect("mesh.ron");
    assert_eq!((m.n_particles(), m.triangles.len()), (30, 40));
    let pinned: Vec<f64> = (0..m.n_particles()).filter(|&i| m.pinned[i]).map(|i| m.positions[i][1]).collect();
    assert_eq!(pinned, vec![0.42f32 as f64; 2], "the two raised top corners (tobj reads f32)");
    // the registry's `mesh` still needs --mesh
    let e = scene::build("mesh", &SceneOptions::default()).unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { name, .. } if name == "mesh"), "{e:?}");
}

// ---------------------------------------------------------------------------------------------
// what a file gives

const ROPE: &str = r#"(
    model: (builder: "rope", size: 8, stiffness: 300.0),
    method: (name: "symplectic-euler"),
    frame_dt: 0.02,
    frames: 3,
)
"#;

#[test]
fn material_pins_colliders_and_forces_apply() {
    let text = r#"(
    about: "everything",
    model: (builder: "rope", size: 8, stiffness: 300.0),
    material: (mass: 0.5, damping: 0.02),
    pins: [7],
    colliders: [HalfSpace(normal: (0.0, 1.0, 0.0), offset: -1.0, friction: 0.2), Box(center: (0.0, -0.5, 0.0), half_extents: (0.1, 0.1, 0.1), thickness: 0.0, friction: 0.0)],
    forces: (gravity: (0.0, -1.62, 0.0), drag: 0.3, wind: (1.0, 0.0, 0.0), central: (center: (0.0, 1.0, 0.0), strength: 2.0)),
    method: (name: "local-global", global: "cg", global_iterations: 7, local_global_iterations: 4, divergence: "ignore"),
    frame_dt: 0.02,
    frames: 3,
    camera: (eye: (0.0, 0.0, 2.0), target: (0.0, 0.0, 0.0)),
)"#;
    let sc = Scene::parse(text, Path::new("everything.ron")).expect("parse");
    let m = sc.build(&SceneOptions::default()).expect("build");
    let base = model::rope(8, Some(300.0)).expect("rope");
    assert!((m.total_mass() - 0.5).abs() < 1e-12);
    assert!(m.springs.iter().all(|s| s.kd == 0.02 && s.k > 0.0));
    assert_eq!(m.springs.iter().map(|s| s.k).collect::<Vec<_>>(), base.springs.iter().map(|s| s.k).collect::<Vec<_>>());
    assert!(m.pinned[0] && m.pinned[7], "the builder's pin and the file's");
    assert_eq!(m.colliders.len(), 2);
    assert_eq!(m.colliders[1], Collider::aabb([0.0, -0.5, 0.0], [0.1; 3], 0.0, 0.0), "a box's rotation defaults to none");
    assert_eq!(m.forces.gravity, [0.0, -1.62, 0.0]);
    assert_eq!((m.forces.drag, m.forces.wind, m.forces.central), (0.3, [1.0, 0.0, 0.0], Some(([0.0, 1.0, 0.0], 2.0))));
    let s = sc.settings();
    assert_eq!((s.frame_dt, s.global, s.global_iterations, s.local_global_iterations), (0.02, GlobalSolve::Cg, 7, 4));
    assert_eq!(s.guard.policy, springsim::method::DivergencePolicy::Ignore);
    assert_eq!(sc.file.method.name, Method::LocalGlobal);
    // options given explicitly win over the file's
    let mut cli = StepSettings { local_global_iterations: 10, ..Default::default() };
    sc.file.method.apply(&mut cli, &|flag| flag == "local_global_iterations");
    assert_eq!((cli.local_global_iterations, cli.global_iterations), (10, 7));
    // and the scene's options over its model's parameters
    let m = sc.build(&SceneOptions { size: Some(5), stiffness: Some(50.0), mesh: None });
    assert!(matches!(&m, Err(Error::SceneFile { field, .. }) if field == "pins[0]"), "pin 7 of 5 particles: {m:?}");
}

/// One bad file: the error is an `Error::SceneFile` at `line` naming `field`, and its one line says so.
fn assert_bad(text: &str, line: usize, field: &str, what: &str) {
    let e = match Scene::parse(text, Path::new("bad.ron")).and_then(|sc| sc.build(&SceneOptions::default())) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    };
    let msg = e.to_string();
    match &e {
        Error::SceneFile { path, line: l, field: f, .. } => {
            assert_eq!((path.as_str(), *l, f.as_str()), ("bad.ron", line, field), "{msg}");
        }
        other => panic!("not a scene file error: {other:?}"),
    }
    assert_eq!(msg.lines().count(), 1, "{msg}");
    assert!(msg.starts_with(&format!("bad.ron:{line}:")), "{msg}");
    assert!(msg.contains(field) && msg.contains(what), "'{msg}' names {field} and {what}");
}

#[test]
fn bad_files_name_the_file_the_line_and_the_field() {
    let with = |from: &str, to: &str| {
        assert!(ROPE.contains(from), "{from}");
        ROPE.replace(from, to)
    };
    assert_bad(&with("    frames: 3,\n", ""), 5, "frames", "missing field");
    assert_bad(&with("frames: 3", "frames: \"three\""), 5, "frames", "integer");
    assert_bad(&with("frame_dt: 0.02", "frame_dt: true"), 4, "frame_dt", "float");
    assert_bad(&with("stiffness: 300.0", "stiffness: 300.0, colour: 1"), 2, "model.colour", "colour");
    assert_bad(&with("frames: 3,", "frames: 3,\n    speed: 2,"), 6, "speed", "speed");
    assert_bad(&with("\"rope\"", "\"ropes\""), 2, "model.builder", "unknown builder 'ropes'");
    assert_bad(&with("symplectic-euler", "symplectic"), 3, "method.name", "unknown method 'symplectic'");
    assert_bad(&with("(name: \"symplectic-euler\")", "(name: \"rk4\", global: \"lu\")"), 3, "method.global", "lu");
    assert_bad(
        &with("(name: \"symplectic-euler\")", "(name: \"rk4\", local_global_iterationz: 3)"),
        3,
        "method.local_global_iterationz",
        "local_global_iterationz",
    );
    assert_bad(&with("    method", "    material: (mass: -1.0),\n    method"), 3, "material.mass", "> 0");
    assert_bad(&with("    method", "    material: (\n        damping: -0.5,\n    ),\n    method"), 4, "material.damping", ">= 0");
    assert_bad(
        &with("    method", "    material: (\n        damping_time: -1e-4,\n    ),\n    method"),
        4,
        "material.damping_time",
        ">= 0",
    );
    assert_bad(
        &with("    method", "    material: (\n        damping: 0.1,\n        damping_time: 1e-4,\n    ),\n    method"),
        5,
        "material.damping_time",
        "not both",
    );
    assert_bad(&with("    method", "    material: (\n        bending: -0.01,\n    ),\n    method"), 4, "material.bending", ">= 0");
    // a rope has no triangles to bend across
    assert_bad(
        &with("    method", "    material: (\n        bending: 0.01,\n    ),\n    method"),
        4,
        "material.bending",
        "no interior triangle edges",
    );
    assert_bad(&with("    method", "    pins: [\n        1,\n        8,\n    ],\n    method"), 5, "pins[1]", "out of range");
    assert_bad(&with("    method", "    forces: (drag: -1.0),\n    method"), 3, "forces.drag", ">= 0");
    assert_bad(
        &with(
            "    method",
            "    colliders: [\n        Sphere(center: (0.0, 0.0, 0.0), radius: -1.0, thickness: 0.0, friction: 0.0),\n    ],\n    method",
        ),
        4,
        "colliders[0].radius",
        ">= 0",
    );
    assert_bad(&with("    method", "    self_collision: (thickness: -0.5),\n    method"), 3, "self_collision.thickness", "> 0");
    assert_bad(
        &with("    method", "    self_collision: (\n        thickness: 0.01,\n        cell: 0.0,\n    ),\n    method"),
        5,
        "self_collision.cell",
        "> 0",
    );
    // force fields (issue #17 item 4): a NaN strength, a negative falloff radius, an inverted box, a bad wind
    let field =
        |f: &str| with("    method", &format!("    forces: (\n        fields: [\n            {f},\n        ],\n    ),\n    method"));
    assert_bad(&field("(kind: Point, center: (0.0, 0.0, 0.0), strength: NaN, falloff: Constant)"), 5, "forces.fields[0].strength", "NaN");
    assert_bad(
        &field("(kind: Point, center: (0.0, 0.0, 0.0), strength: 1.0, falloff: Linear(radius: -2.0))"),
        5,
        "forces.fields[0].falloff.radius",
        "-2",
    );
    assert_bad(
        &field(
            "(kind: Point, center: (0.0, 0.0, 0.0), strength: 1.0, falloff: Constant, bounds: Some(((0.0, 0.0, 0.0), (1.0, -1.0, 1.0))))",
        ),
        5,
        "forces.fields[0].bounds",
        "inverted",
    );
    assert_bad(
        &field("(kind: Vortex(axis: (0.0, 0.0, 0.0)), center: (0.0, 0.0, 0.0), strength: 1.0, falloff: Constant)"),
        5,
        "forces.fields[0].axis",
        "non-zero",
    );
    assert_bad(
        &with("    method", "    forces: (\n        aero_wind: (base: (1.0, 0.0, 0.0), coefficient: -0.7),\n    ),\n    method"),
        4,
        "forces.aero_wind.coefficient",
        "-0.7",
    );
    assert_bad(&with("size: 8", "size: 2"), 2, "model.size", "at least 3");
    assert_bad(&with("(name: \"symplectic-euler\")", "(name: \"rk4\", substep_scale: -1.0)"), 3, "method.substep_scale", "> 0");
    assert_bad(&with("frames: 3", "frames: 0"), 5, "frames", ">= 1");
    assert_bad(&with("size: 8", "size: 8, obj: \"x.obj\""), 2, "model.obj", "only the mesh builder");
    // an OBJ that is not there, and one that does not parse
    assert_bad(
        &with("builder: \"rope\", size: 8, stiffness: 300.0", "builder: \"mesh\", obj: \"no-such-file.obj\""),
        2,
        "model.obj",
        "no-such-file.obj",
    );
    let dir = temp_dir("obj");
    std::fs::write(dir.join("broken.obj"), "v 1 2\nf 1 2 3 oops\n").expect("write");
    let text = with("builder: \"rope\", size: 8, stiffness: 300.0", "builder: \"mesh\", obj: \"broken.obj\"");
    let e = Scene::parse(&text, &dir.join("scene.ron")).and_then(|s| s.build(&SceneOptions::default())).unwrap_err();
    assert!(matches!(&e, Error::SceneFile { line: 2, field, .. } if field == "model.obj"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
    // the options' errors stay the library's usual ones
    let sc = Scene::parse(ROPE, Path::new("ok.ron")).expect("parse");
    let e = sc.build(&SceneOptions { size: Some(1), ..Default::default() }).unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { name, .. } if name == "size"), "{e:?}");
}

#[test]
fn generated_broken_files_never_panic() {
    // every prefix of a full file: ron's error at each cut, located without a panic
    let text = std::fs::read_to_string(scenes_dir().join("flag.ron")).expect("flag.ron");
    for (i, _) in text.char_indices() {
        if let Err(e) = Scene::parse(&text[..i], Path::new("cut.ron")) {
            assert!(matches!(e, Error::SceneFile { .. }), "{e:?}");
            assert_eq!(e.to_string().lines().count(), 1);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the command line

#[test]
fn scene_print_writes_the_files() {
    for info in SCENES {
        let out = springsim(&["scene", "print", info.name]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(parse(&text(&out.stdout)), info.scene().expect("scene").file, "{}", info.name);
    }
    for path in ron_files() {
        let out = springsim(&["scene", "print", &path.display().to_string()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(parse(&text(&out.stdout)), Scene::load(&path).expect("load").file, "{}", path.display());
    }
    let out = springsim(&["scene", "list"]);
    let list = text(&out.stdout);
    assert!(SCENES.iter().all(|s| list.contains(s.name)), "{list}");
    assert_one_line(&springsim(&["scene", "print", "no-such"]), &["unknown scene 'no-such'"]);
}

#[test]
fn bad_files_on_the_command_line_are_one_line() {
    let dir = temp_dir("bad");
    let cases: &[(&str, &str, &str, &str)] = &[
        ("missing", "    frames: 3,\n", "", ":5:"),
        ("type", "frames: 3", "frames: -3", ":5:"),
        ("unknown", "frames: 3,", "frames: 3, fps: 30,", ":5:"),
        ("builder", "\"rope\"", "\"cord\"", ":2:"),
        ("method", "symplectic-euler", "euler", ":3:"),
        ("mass", "    method", "    material: (mass: -0.1),\n    method", ":3:"),
        ("pin", "    method", "    pins: [99],\n    method", ":3:"),
        ("obj", "builder: \"rope\", size: 8, stiffness: 300.0", "builder: \"mesh\", obj: \"gone.obj\"", ":2:"),
    ];
    let fields = ["frames", "frames", "fps", "model.builder", "method.name", "material.mass", "pins[0]", "model.obj"];
    for ((name, from, to, line), field) in cases.iter().zip(fields) {
        let path = dir.join(format!("{name}.ron"));
        std::fs::write(&path, ROPE.replace(from, to)).expect("write");
        let p = path.display().to_string();
        let out_dir = dir.join(format!("out-{name}")).display().to_string();
        assert_one_line(&springsim(&["run", &p, "--backend", "cpu", "--out", &out_dir]), &[&p, line, field]);
        assert_one_line(&springsim(&["bench", "--scene-file", &p, "--backend", "cpu"]), &[&p, line, field]);
        assert!(!Path::new(&out_dir).exists(), "nothing written for a bad file");
    }
    let gone = dir.join("gone.ron").display().to_string();
    assert_one_line(&springsim(&["run", &gone, "--backend", "cpu", "--out", "unused"]), &[&gone]);
    assert_one_line(&springsim(&["bench", "--scene-file", "scene.txt", "--backend", "cpu"]), &["scene.txt", ".ron"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_takes_a_files_method_settings_under_explicit_options() {
    let dir = temp_dir("bench");
    let path = dir.join("rk4.ron");
    std::fs::write(&path, ROPE.replace("(name: \"symplectic-euler\")", "(name: \"rk4\", substep_scale: 0.5)")).expect("write");
    let p = path.display().to_string();
    let record = |args: &[&str]| -> serde_json::Value {
        let out = springsim(args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_str(text(&out.stdout).trim()).expect("one JSON record")
    };
    let v = record(&["bench", "--scene-file", &p, "--backend", "cpu"]);
    assert_eq!((v["method"].as_str(), v["frames"].as_u64(), v["particles"].as_u64()), (Some("rk4"), Some(3), Some(8)));
    assert!((v["frame_dt"].as_f64().expect("frame_dt") - 0.02).abs() < 1e-15);
    let (h, h_max) = (v["h"].as_f64().expect("h"), v["h_max"].as_f64().expect("h_max"));
    assert!(h <= 0.5 * h_max * (1.0 + 1e-9), "substep_scale 0.5: h {h} h_max {h_max}");
    // --scene FILE.ron is the same; explicit options override the file
    let v = record(&["bench", "--scene", &p, "--backend", "cpu", "--method", "midpoint", "--frames", "2", "--size", "6"]);
    assert_eq!((v["method"].as_str(), v["frames"].as_u64(), v["particles"].as_u64()), (Some("midpoint"), Some(2), Some(6)));
    let _ = std::fs::remove_dir_all(&dir);
}

fn header_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    header.lines().find_map(|l| l.strip_prefix(key)).map(str::trim)
}

#[test]
fn run_writes_obj_frames_that_read_back() {
    let dir = temp_dir("obj");
    let out = dir.join("d");
    let o = out.display().to_string();
    let scene = scenes_dir().join("curtain.ron").display().to_string();
    let r = springsim(&["run", &scene, "--frames", "30", "--out", &o, "--format", "obj", "--backend", "cpu"]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    eprintln!("{}", text(&r.stdout).trim());
    let m = scene::build("curtain", &SceneOptions::default()).expect("curtain");
    let mut names: Vec<String> =
        std::fs::read_dir(&out).expect("out").map(|e| e.expect("e").file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let expected: Vec<String> = (1..=30).map(|k| format!("frame_{k:04}.obj")).chain(["frames.csv".to_string()]).collect();
    assert_eq!(names, expected);
    let opts = tobj::LoadOptions { triangulate: false, single_index: false, ..Default::default() };
    let mut min_ys = Vec::new();
    for k in [1, 15, 30] {
        let (models, _) = tobj::load_obj(out.join(format!("frame_{k:04}.obj")), &opts).expect("tobj");
        assert_eq!(models.len(), 1);
        let mesh = &models[0].mesh;
        assert_eq!(mesh.positions.len(), 3 * m.n_particles());
        assert_eq!(mesh.indices.len(), 3 * m.triangles.len());
        // tobj numbers the vertices in the order the faces use them: compare the corners' positions
        // with the file's own `v` lines, in the model's order
        let file = std::fs::read_to_string(out.join(format!("frame_{k:04}.obj"))).expect("read");
        let v: Vec<[f32; 3]> = file
            .lines()
            .filter_map(|l| l.strip_prefix("v "))
            .map(|l| {
                let c: Vec<f32> = l.split(' ').map(|x| x.parse().expect("coordinate")).collect();
                [c[0], c[1], c[2]]
            })
            .collect();
        assert_eq!(v.len(), m.n_particles());
        for (t, tri) in m.triangles.iter().enumerate() {
            for c in 0..3 {
                let i = mesh.indices[3 * t + c] as usize;
                assert_eq!(&mesh.positions[3 * i..3 * i + 3], &v[tri[c] as usize], "frame {k}, face {t}");
            }
        }
        min_ys.push(mesh.positions.chunks(3).map(|p| p[1]).fold(f32::INFINITY, f32::min));
    }
    assert!(min_ys[0] > min_ys[1] && min_ys[2] < -0.1, "the curtain falls: lowest y at frames 1, 15, 30: {min_ys:?}");
    let csv = std::fs::read_to_string(out.join("frames.csv")).expect("csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "frame,time,energy,max_strain,residual,roughness_deg_median,roughness_deg_p90,roughness_deg_p99");
    assert_eq!(lines.len(), 31);
    for (k, l) in lines[1..].iter().enumerate() {
        let f: Vec<f64> = l.split(',').map(|x| x.parse().expect("number")).collect();
        assert_eq!(f.len(), 8);
        assert_eq!(f[0], (k + 1) as f64);
        assert!((f[1] - (k + 1) as f64 / 30.0).abs() < 1e-12);
        assert!(f[2].is_finite() && f[3].is_finite() && f[3] >= 0.0);
        // the roughness (°): ordered percentiles of an angle, and the curtain is not flat once it falls
        assert!(0.0 <= f[5] && f[5] <= f[6] && f[6] <= f[7] && f[7] <= 180.0, "frame {}: {l}", k + 1);
    }
    let last: Vec<f64> = lines[30].split(',').map(|x| x.parse().expect("number")).collect();
    assert!(last[7] > 0.0, "the fallen curtain has bent somewhere: {}", lines[30]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_writes_binary_ply_frames() {
    let dir = temp_dir("ply");
    let o = dir.join("d").display().to_string();
    let scene = scenes_dir().join("curtain.ron").display().to_string();
    let plot = dir.join("plots").display().to_string();
    let r = springsim(&["run", &scene, "--frames", "30", "--out", &o, "--format", "ply", "--backend", "cpu", "--plot", &plot]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let m = scene::build("curtain", &SceneOptions::default()).expect("curtain");
    let (n, f) = (m.n_particles(), m.triangles.len());
    for k in [1, 30] {
        let b = std::fs::read(dir.join("d").join(format!("frame_{k:04}.ply"))).expect("ply");
        let end = b.windows(11).position(|w| w == b"end_header\n").expect("end_header") + 11;
        let header = String::from_utf8(b[..end].to_vec()).expect("ascii header");
        let props: Vec<&str> = header.lines().filter_map(|l| l.strip_prefix("property ")).collect();
        assert!(header.starts_with("ply\nformat binary_little_endian 1.0\n"), "{header}");
        assert_eq!(header_value(&header, "element vertex"), Some(n.to_string().as_str()));
        assert_eq!(header_value(&header, "element face"), Some(f.to_string().as_str()));
        assert_eq!(
            props,
            ["float x", "float y", "float z", "float nx", "float ny", "float nz", "list uchar int vertex_indices"],
            "{header}"
        );
        let body = &b[end..];
        assert_eq!(body.len(), n * 24 + f * 13, "n x (6 floats) + f x (1 + 3 x 4 bytes)");
        let float = |i: usize| f32::from_le_bytes(body[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        for v in 0..n {
            let nrm = (float(6 * v + 3).powi(2) + float(6 * v + 4).powi(2) + float(6 * v + 5).powi(2)).sqrt();
            assert!((nrm - 1.0).abs() < 1e-4, "vertex {v}: |n| = {nrm}");
        }
        let faces = &body[n * 24..];
        for (t, tri) in m.triangles.iter().enumerate() {
            let rec = &faces[13 * t..13 * t + 13];
            assert_eq!(rec[0], 3);
            let idx: Vec<u32> = (0..3).map(|c| i32::from_le_bytes(rec[1 + 4 * c..5 + 4 * c].try_into().expect("4")) as u32).collect();
            assert_eq!(idx, tri.to_vec());
        }
    }
    for svg in ["energy.svg", "strain.svg"] {
        let s = std::fs::read_to_string(dir.join("plots").join(svg)).expect("svg");
        assert!(s.contains("<svg") && s.contains("polyline"), "{svg}");
    }
    // a strand has no faces and no normals
    let o2 = dir.join("rope").display().to_string();
    let r = springsim(&["run", "rope", "--frames", "2", "--out", &o2, "--format", "ply", "--backend", "cpu"]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let b = std::fs::read(dir.join("rope").join("frame_0002.ply")).expect("ply");
    let end = b.windows(11).position(|w| w == b"end_header\n").expect("end_header") + 11;
    assert!(!String::from_utf8_lossy(&b[..end]).contains("face"));
    assert_eq!(b.len() - end, 32 * 12);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_does_not_overwrite_without_force() {
    let dir = temp_dir("force");
    let o = dir.join("d").display().to_string();
    let args = ["run", "rope", "--frames", "2", "--out", &o, "--backend", "cpu"];
    assert!(springsim(&args).status.success());
    let first = dir.join("d").join("frame_0001.obj");
    let before = std::fs::read(&first).expect("frame 1");
    std::fs::write(&first, "stale").expect("write");
    let out = springsim(&args);
    assert_one_line(&out, &["frame_0001.obj", "--force"]);
    assert_eq!(std::fs::read(&first).expect("frame 1"), b"stale", "left alone");
    let mut forced = args.to_vec();
    forced.push("--force");
    assert!(springsim(&forced).status.success());
    assert_eq!(std::fs::read(&first).expect("frame 1"), before);
    // the first existing file is named, frames.csv included
    std::fs::remove_file(dir.join("d").join("frame_0001.obj")).expect("rm");
    std::fs::remove_file(dir.join("d").join("frame_0002.obj")).expect("rm");
    assert_one_line(&springsim(&args), &["frames.csv"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_on_the_gpu() {
    let dir = temp_dir("gpu");
    let o = dir.join("d").display().to_string();
    let out = springsim(&["run", "flag", "--size", "11", "--frames", "3", "--out", &o, "--format", "obj", "--backend", "gpu"]);
    if !out.status.success() && std::env::var("SPRINGSIM_REQUIRE_GPU").as_deref() != Ok("1") {
        common::skipped(&format!("no adapter: {}", text(&out.stderr).trim()));
        return;
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    let opts = tobj::LoadOptions::default();
    let (models, _) = tobj::load_obj(dir.join("d").join("frame_0003.obj"), &opts).expect("tobj");
    assert_eq!(models[0].mesh.positions.len(), 3 * 121);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "viewer")]
#[test]
fn demo_takes_a_scene_file() {
    let dir = temp_dir("demo");
    let path = dir.join("camera.ron");
    let file = ROPE.replace("frames: 3,", "frames: 3,\n    camera: (eye: (0.0, 0.0, 3.0), target: (0.0, -0.3, 0.0)),");
    std::fs::write(&path, file).expect("write");
    let png = dir.join("shot.png");
    let (p, s) = (path.display().to_string(), png.display().to_string());
    let out =
        springsim(&["demo", "--scene-file", &p, "--frames", "3", "--screenshot", &s, "--headless", "--width", "64", "--height", "48"]);
    if !out.status.success() && std::env::var("SPRINGSIM_REQUIRE_GPU").as_deref() != Ok("1") {
        common::skipped(&format!("no adapter: {}", text(&out.stderr).trim()));
        return;
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("camera.ron") || text(&out.stderr).contains("camera.ron"), "the scene is named");
    assert!(png.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `strain_limiting` (Provot's strain limiting, issue #17 item 3): applied to the model, defaults for
/// what is left out, and a bad limit, pass count, relaxation, tolerance or acceleration as a one-line
/// error at its line and field.
#[test]
fn strain_limiting_applies_and_bad_values_name_the_field() {
    let text = ROPE.replace("    method", "    strain_limiting: (limit: 0.05, passes: 7),\n    method");
    let m = Scene::parse(&text, Path::new("good.ron")).and_then(|sc| sc.build(&SceneOptions::default())).unwrap();
    let sl = m.strain_limit.expect("strain limiting applied");
    assert_eq!((sl.limit, sl.passes, sl.relaxation), (0.05, 7, springsim::model::DEFAULT_STRAIN_RELAXATION));
    assert_eq!(sl.tolerance, springsim::model::DEFAULT_STRAIN_TOLERANCE);
    let text = ROPE.replace("    method", "    strain_limiting: (limit: 0.05, tolerance: 0.01),\n    method");
    let m = Scene::parse(&text, Path::new("good.ron")).and_then(|sc| sc.build(&SceneOptions::default())).unwrap();
    assert_eq!(m.strain_limit.map(|sl| sl.tolerance), Some(0.01));
    let text = ROPE.replace("    method", "    strain_limiting: (limit: 0.05, acceleration: 1.0),\n    method");
    let m = Scene::parse(&text, Path::new("good.ron")).and_then(|sc| sc.build(&SceneOptions::default())).unwrap();
    assert_eq!(m.strain_limit.map(|sl| sl.acceleration), Some(1.0));
    let text = ROPE.replace("    method", "    strain_limiting: (limit: 0.2),\n    method");
    let m = Scene::parse(&text, Path::new("good.ron")).and_then(|sc| sc.build(&SceneOptions::default())).unwrap();
    assert_eq!(m.strain_limit, Some(springsim::model::StrainLimit::new(0.2)));
    let with = |to: &str| ROPE.replace("    method", &format!("    strain_limiting: ({to}),\n    method"));
    assert_bad(&with("limit: -0.1"), 3, "strain_limiting.limit", "> 0");
    assert_bad(&with("limit: 0.1, passes: 0"), 3, "strain_limiting.passes", ">= 1");
    assert_bad(&with("limit: 0.1, relaxation: 2.5"), 3, "strain_limiting.relaxation", "(0, 2)");
    assert_bad(&with("limit: 0.1, tolerance: -0.5"), 3, "strain_limiting.tolerance", ">= 0");
    assert_bad(&with("limit: 0.1, acceleration: 2.0"), 3, "strain_limiting.acceleration", "[1, 2)");
    assert_bad(&with("limit: 0.1, passez: 3"), 3, "strain_limiting.passez", "passez");
}
