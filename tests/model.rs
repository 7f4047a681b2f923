//! Model builders, validation, OBJ import, CSR incidence lists and the scene registry (no GPU).

use springsim::error::{Error, Value};
use springsim::model::{self, Forces, Incidence, Model, Spring};
use springsim::scene::{self, SceneOptions, SCENES};
use std::collections::HashSet;
use std::path::PathBuf;

// ---------------------------------------------------------------------------------------------
// helpers

fn dist(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Unordered endpoint pairs; panics if a pair appears twice (no builder should duplicate a spring).
fn unique_pairs(m: &Model) -> HashSet<(u32, u32)> {
    let mut set = HashSet::new();
    for (i, s) in m.springs.iter().enumerate() {
        assert_ne!(s.a, s.b, "spring {i} joins particle {} to itself", s.a);
        let key = (s.a.min(s.b), s.a.max(s.b));
        assert!(set.insert(key), "spring {i} duplicates the pair {key:?}");
    }
    set
}

fn pinned_indices(m: &Model) -> Vec<usize> {
    (0..m.n_particles()).filter(|&i| m.pinned[i]).collect()
}

/// Every spring's rest length equals the initial distance of its endpoints.
fn assert_rest_lengths(m: &Model) {
    for (i, s) in m.springs.iter().enumerate() {
        let d = dist(&m.positions[s.a as usize], &m.positions[s.b as usize]);
        assert!((s.rest - d).abs() <= 1e-12 * d.max(1.0), "spring {i}: rest {} but distance {d}", s.rest);
    }
}

fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: {a} vs {b} (tol {tol})");
}

fn unique_temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("springsim-test-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---------------------------------------------------------------------------------------------
// builders

#[test]
fn curtain_81_matches_liu_et_al() {
    let m = model::curtain(81, None).unwrap();
    m.validate().unwrap();
    assert_eq!(m.n_particles(), 6561);
    assert_eq!(m.springs.len(), 32158);
    // structural 2n(n-1) + bend 2n(n-2) + one diagonal per quad (n-1)^2
    let n = 81;
    assert_eq!(m.springs.len(), 2 * n * (n - 1) + 2 * n * (n - 2) + (n - 1) * (n - 1));
    assert!(m.springs.iter().all(|s| s.k == 1000.0), "every curtain spring has k = 1000");
    assert!(m.springs.iter().all(|s| s.kd == 0.0));
    assert_close(m.total_mass(), 1.0, 1e-12, "total mass");
    assert!(m.masses.iter().all(|&x| x == m.masses[0]), "equal masses");
    assert_eq!(pinned_indices(&m), vec![0, 80]);
    assert!(m.positions.iter().all(|p| p[1] == 0.0), "flat in the x-z plane");
    let (lo, hi) = m.bounds();
    assert_close(hi[0] - lo[0], 1.0, 1e-12, "x extent");
    assert_close(hi[2] - lo[2], 1.0, 1e-12, "z extent");
    assert_eq!(hi[1] - lo[1], 0.0);
    assert!(m.velocities.iter().all(|v| *v == [0.0; 3]));
    assert_eq!(m.forces.gravity, [0.0, -9.81, 0.0]);
    assert_eq!(m.triangles.len(), 2 * 80 * 80);
    unique_pairs(&m);
    assert_rest_lengths(&m);
    // the pinned corners are the two corners of the first row
    assert_close(dist(&m.positions[0], &m.positions[80]), 1.0, 1e-12, "pinned corners 1 m apart");
}

#[test]
fn curtain_stiffness_scales_with_resolution() {
    let m = model::curtain(41, None).unwrap();
    assert_eq!(model::curtain_stiffness(41), 1000.0 * 40.0 / 80.0);
    assert!(m.springs.iter().all(|s| s.k == 500.0), "k = 1000*40/80 at 41x41");
    assert_eq!(m.n_particles(), 41 * 41);
    assert_close(m.total_mass(), 1.0, 1e-12, "total mass at 41");
    assert_eq!(pinned_indices(&m), vec![0, 40]);

    let m = model::curtain(81, Some(250.0)).unwrap();
    assert!(m.springs.iter().all(|s| s.k == 250.0));
    assert_eq!(m.springs.len(), 32158);
}

#[test]
fn cloth_counts() {
    for n in [3usize, 4, 7, 16] {
        let m = model::cloth(n, None).unwrap();
        m.validate().unwrap();
        let structural = 2 * n * (n - 1);
        let shear = 2 * (n - 1) * (n - 1);
        let bend = 2 * n * (n - 2);
        assert_eq!(m.n_particles(), n * n, "n = {n}");
        assert_eq!(m.springs.len(), structural + shear + bend, "n = {n}");
        assert_close(m.total_mass(), 1.0, 1e-12, "cloth mass");
        assert_eq!(pinned_indices(&m), vec![0, n - 1]);
        assert!(m.springs.iter().all(|s| s.k == model::curtain_stiffness(n)));
        unique_pairs(&m);
        assert_rest_lengths(&m);
        // cloth = curtain + the other diagonal of every quad
        assert_eq!(m.springs.len() - model::curtain(n, None).unwrap().springs.len(), (n - 1) * (n - 1));
    }
}

#[test]
fn rope_counts() {
    for n in [3usize, 10, 32] {
        let m = model::rope(n, None).unwrap();
        m.validate().unwrap();
        assert_eq!(m.n_particles(), n);
        assert_eq!(m.springs.len(), (n - 1) + (n - 2));
        let k = 50.0 * (n - 1) as f64;
        assert_eq!(m.springs.iter().filter(|s| s.k == k).count(), n - 1, "edge springs");
        assert_eq!(m.springs.iter().filter(|s| s.k == k / 10.0).count(), n - 2, "bend springs");
        assert_close(m.total_mass(), 0.1, 1e-12, "rope mass");
        assert_eq!(pinned_indices(&m), vec![0]);
        let edge_len: f64 = m.springs.iter().filter(|s| s.k == k).map(|s| s.rest).sum();
        assert_close(edge_len, 1.0, 1e-12, "rope length");
        unique_pairs(&m);
        assert_rest_lengths(&m);
    }
    let m = model::rope(5, Some(7.0)).unwrap();
    assert_eq!(m.springs.iter().filter(|s| s.k == 7.0).count(), 4);
    assert_eq!(m.springs.iter().filter(|s| s.k == 0.7).count(), 3);
}

#[test]
fn hair_counts() {
    for n in [3usize, 8, 24] {
        let m = model::hair(n, None).unwrap();
        m.validate().unwrap();
        let strands = 16;
        assert_eq!(m.n_particles(), strands * n);
        assert_eq!(m.springs.len(), strands * ((n - 1) + (n - 2)));
        assert_eq!(pinned_indices(&m), (0..strands).map(|s| s * n).collect::<Vec<_>>(), "one root per strand");
        assert_close(m.total_mass(), strands as f64 * 0.002, 1e-12, "hair mass");
        let k = 20.0 * (n - 1) as f64;
        assert_eq!(m.springs.iter().filter(|s| s.k == k).count(), strands * (n - 1));
        assert_eq!(m.springs.iter().filter(|s| s.k == k / 4.0).count(), strands * (n - 2));
        // no spring crosses from one strand to another
        assert!(m.springs.iter().all(|s| s.a as usize / n == s.b as usize / n));
        // each strand is 0.3 m long
        for st in 0..strands {
            let len: f64 = m.springs.iter().filter(|s| s.k == k && s.a as usize / n == st).map(|s| s.rest).sum();
            assert_close(len, 0.3, 1e-9, &format!("length of strand {st} (n = {n})"));
        }
        unique_pairs(&m);
        assert_rest_lengths(&m);
    }
}

#[test]
fn slinky_counts() {
    for (n, k, mass, len) in [(1usize, 20.0, 0.2, 0.5), (4, 3.0, 1.0, 2.0), (64, 20.0, 0.2, 0.5)] {
        let m = model::slinky(n, k, mass, len).unwrap();
        m.validate().unwrap();
        assert_eq!(m.n_particles(), n + 1);
        assert_eq!(m.springs.len(), n);
        for s in &m.springs {
            assert_eq!(s.k, n as f64 * k, "k_i = n k");
            assert_close(s.rest, len / n as f64, 1e-12, "segment rest length");
            assert_eq!(s.b, s.a + 1, "springs in series");
        }
        for &mi in &m.masses {
            assert_close(mi, mass / (n + 1) as f64, 1e-15, "particle mass m/(n+1)");
        }
        assert_close(m.total_mass(), mass, 1e-12, "slinky mass");
        assert_eq!(pinned_indices(&m), vec![0], "only the top is pinned");
        assert!(m.positions.iter().all(|p| p[0] == 0.0 && p[2] == 0.0 && p[1] <= 0.0), "hangs along -y");
        // series stiffness of the n springs is the k we asked for
        let series = 1.0 / m.springs.iter().map(|s| 1.0 / s.k).sum::<f64>();
        assert_close(series, k, 1e-12 * k, "series stiffness");
    }
    assert!(matches!(model::slinky(0, 1.0, 1.0, 1.0), Err(Error::InvalidParameter { .. })));
    assert!(matches!(model::slinky(4, 1.0, 0.0, 1.0), Err(Error::InvalidParameter { ref name, .. }) if name == "mass"));
    assert!(matches!(model::slinky(4, 1.0, 1.0, f64::NAN), Err(Error::InvalidParameter { ref name, .. }) if name == "length"));
}

#[test]
fn jelly_counts() {
    for n in [2usize, 3, 5, 8] {
        let m = model::jelly(n, None).unwrap();
        m.validate().unwrap();
        assert_eq!(m.n_particles(), n * n * n);
        // brute force: every pair of lattice points whose offset is in {-1,0,1}^3 \ {0}
        let coord = |i: usize| ((i % n) as i64, ((i / n) % n) as i64, (i / (n * n)) as i64);
        let mut edges = 0;
        let mut faces = 0;
        let mut bodies = 0;
        for i in 0..n * n * n {
            for j in i + 1..n * n * n {
                let (a, b) = (coord(i), coord(j));
                let d = [(a.0 - b.0).abs(), (a.1 - b.1).abs(), (a.2 - b.2).abs()];
                if d.iter().all(|&c| c <= 1) {
                    match d.iter().sum::<i64>() {
                        1 => edges += 1,
                        2 => faces += 1,
                        3 => bodies += 1,
                        _ => unreachable!(),
                    }
                }
            }
        }
        // closed forms: edges 3n²(n−1); face diagonals 2 per square, 3n(n−1)² squares; body diagonals 4 per cell
        assert_eq!(edges, 3 * n * n * (n - 1));
        assert_eq!(faces, 6 * n * (n - 1) * (n - 1));
        assert_eq!(bodies, 4 * (n - 1) * (n - 1) * (n - 1));
        let expected = 3 * n * n * (n - 1) + 6 * n * (n - 1) * (n - 1) + 4 * (n - 1) * (n - 1) * (n - 1);
        assert_eq!(m.springs.len(), expected, "n = {n}");
        let pairs = unique_pairs(&m);
        assert_eq!(pairs.len(), expected);
        // and every spring is a lattice neighbour pair
        for &(a, b) in &pairs {
            let (p, q) = (coord(a as usize), coord(b as usize));
            assert!((p.0 - q.0).abs() <= 1 && (p.1 - q.1).abs() <= 1 && (p.2 - q.2).abs() <= 1);
        }
        assert_close(m.total_mass(), 1.0, 1e-12, "jelly mass");
        assert!(pinned_indices(&m).is_empty(), "the jelly is free");
        let (lo, hi) = m.bounds();
        for c in 0..3 {
            assert_close(hi[c] - lo[c], 0.3, 1e-12, "jelly side");
        }
        assert_rest_lengths(&m);
    }
    // n = 2: a single cube, every pair of its 8 corners
    assert_eq!(model::jelly(2, None).unwrap().springs.len(), 8 * 7 / 2);
}

#[test]
fn triangle_mesh_square() {
    let pos = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
    let m = model::triangle_mesh(pos, vec![[0, 1, 2], [0, 2, 3]], 2.0, 100.0, 10.0).unwrap();
    m.validate().unwrap();
    assert_eq!(m.n_particles(), 4);
    assert_eq!(m.springs.len(), 6);
    let edges: Vec<&Spring> = m.springs.iter().filter(|s| s.k == 100.0).collect();
    let bends: Vec<&Spring> = m.springs.iter().filter(|s| s.k == 10.0).collect();
    assert_eq!(edges.len(), 5);
    let edge_set: HashSet<(u32, u32)> = edges.iter().map(|s| (s.a.min(s.b), s.a.max(s.b))).collect();
    assert_eq!(edge_set, [(0, 1), (1, 2), (0, 2), (2, 3), (0, 3)].into_iter().collect());
    assert_eq!(bends.len(), 1);
    assert_eq!((bends[0].a.min(bends[0].b), bends[0].a.max(bends[0].b)), (1, 3));
    assert_close(bends[0].rest, 2f64.sqrt(), 1e-12, "bend rest length");
    assert_close(m.total_mass(), 2.0, 1e-12, "mesh mass");
    assert!(m.masses.iter().all(|&x| x == 0.5));
    assert!(pinned_indices(&m).is_empty());
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
}

#[test]
fn triangle_mesh_grid() {
    // 3x3 vertices, 2x2 quads, each split along its (r,c)-(r+1,c+1) diagonal: 8 triangles.
    let n = 3u32;
    let mut pos = Vec::new();
    for r in 0..n {
        for c in 0..n {
            pos.push([c as f64, r as f64, 0.0]);
        }
    }
    let mut tris = Vec::new();
    for r in 0..n - 1 {
        for c in 0..n - 1 {
            let i = r * n + c;
            tris.push([i, i + 1, i + n + 1]);
            tris.push([i, i + n + 1, i + n]);
        }
    }
    let m = model::triangle_mesh(pos, tris, 1.0, 5.0, 1.0).unwrap();
    m.validate().unwrap();
    // Edges: 2 per row x 3 rows + 2 per column x 3 columns + 4 diagonals = 16.
    // Boundary edges: 2 per side x 4 sides = 8, so 16 - 8 = 8 interior edges, each giving one bend spring.
    // V - E + F = 9 - 16 + 8 = 1 (a disc) checks the edge count.
    let edges = m.springs.iter().filter(|s| s.k == 5.0).count();
    let bends = m.springs.iter().filter(|s| s.k == 1.0).count();
    assert_eq!(edges, 16);
    assert_eq!(bends, 8);
    assert_eq!(m.springs.len(), 24);
    // none of the bend springs coincides with an edge
    unique_pairs(&m);
    // the bend springs, by hand: the 4 quads' anti-diagonals (across each diagonal edge), and
    // across the 4 interior axis edges
    let bend_set: HashSet<(u32, u32)> = m.springs.iter().filter(|s| s.k == 1.0).map(|s| (s.a.min(s.b), s.a.max(s.b))).collect();
    let expected: HashSet<(u32, u32)> = [(1, 3), (2, 4), (4, 6), (5, 7), (0, 5), (3, 8), (0, 7), (1, 8)].into_iter().collect();
    assert_eq!(bend_set, expected);
    assert_rest_lengths(&m);
}

#[test]
fn triangle_mesh_errors() {
    let pos = vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let e = model::triangle_mesh(pos.clone(), vec![[0, 1, 5]], 1.0, 1.0, 1.0).unwrap_err();
    assert!(matches!(e, Error::InvalidModel { .. }), "{e}");
    assert!(e.to_string().contains("triangles[0]") && e.to_string().contains('5'), "{e}");
    let e = model::triangle_mesh(Vec::new(), Vec::new(), 1.0, 1.0, 1.0).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
    let e = model::triangle_mesh(pos.clone(), vec![[0, 1, 2]], -1.0, 1.0, 1.0).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { ref name, .. } if name == "mass"), "{e}");
    let e = model::triangle_mesh(pos, vec![[0, 1, 2]], 1.0, -1.0, 1.0).unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { ref name, .. } if name == "stiffness"), "{e}");
}

#[test]
fn obj_seams_do_not_split_vertices() {
    let dir = unique_temp_dir("obj");
    let path = dir.join("seam.obj");
    // A unit square of two triangles whose texture has a seam along the shared diagonal 1-3:
    // v 1 and v 3 appear with different vt in the two faces.
    let obj = "\
# a quad with a texture seam
o quad
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
vt 0 0
vt 1 0
vt 1 1
vt 0 1
vt 0.5 0.5
vt 0.25 0.75
f 1/1 2/2 3/3
f 1/5 3/6 4/4
";
    std::fs::write(&path, obj).unwrap();
    let m = model::load_obj(&path, 1.0, 100.0, 10.0).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    m.validate().unwrap();
    assert_eq!(m.n_particles(), 4, "one particle per `v` line, not per (v, vt) pair");
    assert_eq!(m.triangles.len(), 2);
    // the two triangles share an edge, so there are 5 edge springs and 1 bending spring
    assert_eq!(m.springs.iter().filter(|s| s.k == 100.0).count(), 5);
    assert_eq!(m.springs.iter().filter(|s| s.k == 10.0).count(), 1);
    let mut ps: Vec<[f64; 3]> = m.positions.clone();
    ps.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(ps, vec![[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]);
    assert_close(m.total_mass(), 1.0, 1e-12, "obj mass");
}

#[test]
fn obj_missing_file() {
    let path = unique_temp_dir("missing").join("does-not-exist.obj");
    let e = model::load_obj(&path, 1.0, 1.0, 1.0).unwrap_err();
    match &e {
        Error::Mesh { path: p, .. } => assert_eq!(p, &path.display().to_string()),
        other => panic!("expected Error::Mesh, got {other:?}"),
    }
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

// ---------------------------------------------------------------------------------------------
// validation

/// 3 particles, 2 springs, 1 triangle, all valid.
fn small() -> Model {
    let mut m = Model::new(Forces { drag: 0.1, central: Some(([0.0; 3], 1.0)), ..Forces::default() });
    m.add_particle([0.0, 0.0, 0.0], 1.0);
    m.add_particle([1.0, 0.0, 0.0], 1.0);
    m.add_particle([0.0, 1.0, 0.0], 1.0);
    m.add_spring(0, 1, 10.0, 0.1);
    m.add_spring(1, 2, 10.0, 0.1);
    m.triangles.push([0, 1, 2]);
    m.pin(0);
    m
}

/// Breaks `small()` with `f` and checks the error is InvalidModel and its Display names every `needle`.
fn expect_invalid(what: &str, f: impl FnOnce(&mut Model), needles: &[&str]) {
    let mut m = small();
    f(&mut m);
    let e = m.validate().expect_err(what);
    assert!(matches!(e, Error::InvalidModel { .. }), "{what}: expected InvalidModel, got {e:?}");
    let s = e.to_string();
    for n in needles {
        assert!(s.contains(n), "{what}: error '{s}' does not mention '{n}'");
    }
}

#[test]
fn valid_model_validates() {
    small().validate().unwrap();
    Model::new(Forces::default()).validate().unwrap();
    // zero-k, zero-rest and zero-drag are allowed
    let mut m = small();
    m.springs[0].k = 0.0;
    m.springs[0].rest = 0.0;
    m.springs[0].kd = 0.0;
    m.forces.drag = 0.0;
    m.validate().unwrap();
}

#[test]
fn validate_positions_and_velocities() {
    expect_invalid("NaN position", |m| m.positions[2][1] = f64::NAN, &["particles[2].position", "NaN"]);
    expect_invalid("inf position", |m| m.positions[1][0] = f64::INFINITY, &["particles[1].position", "inf"]);
    expect_invalid("NaN velocity", |m| m.velocities[1][2] = f64::NAN, &["particles[1].velocity", "NaN"]);
    expect_invalid("-inf velocity", |m| m.velocities[2][0] = f64::NEG_INFINITY, &["particles[2].velocity", "-inf"]);
}

#[test]
fn validate_masses() {
    expect_invalid("zero mass", |m| m.masses[1] = 0.0, &["particles[1].mass", "= 0", "> 0"]);
    expect_invalid("negative mass", |m| m.masses[1] = -0.5, &["particles[1].mass", "-0.5"]);
    expect_invalid("NaN mass", |m| m.masses[2] = f64::NAN, &["particles[2].mass", "NaN", "finite"]);
    expect_invalid("inf mass", |m| m.masses[0] = f64::INFINITY, &["particles[0].mass", "inf"]);
}

#[test]
fn validate_spring_parameters() {
    expect_invalid("negative k", |m| m.springs[1].k = -3.0, &["springs[1].k", "-3"]);
    expect_invalid("negative kd", |m| m.springs[1].kd = -0.25, &["springs[1].kd", "-0.25"]);
    expect_invalid("negative rest", |m| m.springs[0].rest = -1.5, &["springs[0].rest", "-1.5"]);
    expect_invalid("NaN rest", |m| m.springs[1].rest = f64::NAN, &["springs[1].rest", "NaN"]);
    expect_invalid("inf k", |m| m.springs[0].k = f64::INFINITY, &["springs[0].k", "inf"]);
    expect_invalid("NaN k", |m| m.springs[1].k = f64::NAN, &["springs[1].k", "NaN"]);
    expect_invalid("NaN kd", |m| m.springs[1].kd = f64::NAN, &["springs[1].kd", "NaN"]);
}

#[test]
fn validate_spring_endpoints() {
    expect_invalid("a out of range", |m| m.springs[1].a = 9, &["springs[1].a", "9"]);
    expect_invalid("b out of range", |m| m.springs[0].b = 3, &["springs[0].b", "3", "out of range"]);
    expect_invalid("self spring", |m| m.springs[1].a = 2, &["springs[1].b", "2", "itself"]);
    // a spring in a model with no particles
    let mut m = Model::new(Forces::default());
    m.springs.push(Spring { a: 0, b: 1, rest: 1.0, k: 1.0, kd: 0.0 });
    let e = m.validate().unwrap_err();
    assert!(e.to_string().contains("springs[0].a") && e.to_string().contains("no particles"), "{e}");
}

#[test]
fn validate_array_lengths() {
    expect_invalid(
        "short velocities",
        |m| {
            m.velocities.pop();
        },
        &["velocities.len()", "2"],
    );
    expect_invalid("long masses", |m| m.masses.push(1.0), &["masses.len()", "4"]);
    expect_invalid("short pinned", |m| m.pinned.clear(), &["pinned.len()", "= 0"]);
}

#[test]
fn validate_forces() {
    expect_invalid("NaN gravity", |m| m.forces.gravity[1] = f64::NAN, &["forces.gravity", "NaN"]);
    expect_invalid("inf wind", |m| m.forces.wind[0] = f64::INFINITY, &["forces.wind", "inf"]);
    expect_invalid("negative drag", |m| m.forces.drag = -0.5, &["forces.drag", "-0.5"]);
    expect_invalid("NaN drag", |m| m.forces.drag = f64::NAN, &["forces.drag", "NaN"]);
    expect_invalid("NaN central centre", |m| m.forces.central = Some(([0.0, f64::NAN, 0.0], 1.0)), &["forces.central.center", "NaN"]);
    expect_invalid("negative central strength", |m| m.forces.central = Some(([0.0; 3], -2.0)), &["forces.central.strength", "-2"]);
}

#[test]
fn validate_triangles() {
    expect_invalid("triangle vertex out of range", |m| m.triangles.push([0, 2, 7]), &["triangles[1]", "7"]);
    expect_invalid("triangle vertex == n", |m| m.triangles[0][2] = 3, &["triangles[0]", "3"]);
}

#[test]
fn builder_parameter_errors() {
    let e = model::curtain(1, None).unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { name, value, .. } if name == "size" && *value == Value::UInt(1)), "{e:?}");
    assert!(e.to_string().contains("size") && e.to_string().contains('1'), "{e}");

    let e = model::curtain(81, Some(-1.0)).unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { name, value, .. } if name == "stiffness" && *value == Value::Float(-1.0)), "{e:?}");
    assert!(e.to_string().contains("stiffness"), "{e}");

    let e = model::curtain(81, Some(f64::NAN)).unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { name, value, .. } if name == "stiffness" && value.to_string() == "NaN"), "{e:?}");
    assert!(e.to_string().contains("stiffness") && e.to_string().contains("NaN"), "{e}");

    assert!(matches!(model::cloth(2, None), Err(Error::InvalidParameter { .. })));
    assert!(matches!(model::curtain(5000, None), Err(Error::InvalidParameter { .. })));
    assert!(matches!(model::rope(81, Some(f64::INFINITY)), Err(Error::InvalidParameter { .. })));
    assert!(matches!(model::jelly(1, None), Err(Error::InvalidParameter { .. })));
    assert!(matches!(model::jelly(129, None), Err(Error::InvalidParameter { .. })));
}

// ---------------------------------------------------------------------------------------------
// CSR incidence

/// A deterministic pseudo-random spring set on `n` particles (a 64-bit LCG).
fn random_springs(n: u32, count: usize, seed: u64) -> Vec<Spring> {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 33) as u32
    };
    let mut out = Vec::new();
    while out.len() < count {
        let a = next() % n;
        let b = next() % n;
        if a != b {
            out.push(Spring { a, b, rest: 1.0, k: 1.0, kd: 0.0 });
        }
    }
    out
}

fn check_incidence(n: usize, springs: &[Spring]) {
    let inc = Incidence::build(n, springs);
    assert_eq!(inc.offsets.len(), n + 1);
    assert_eq!(inc.offsets[0], 0);
    assert!(inc.offsets.windows(2).all(|w| w[0] <= w[1]), "offsets monotone");
    assert_eq!(inc.offsets[n] as usize, 2 * springs.len());
    assert_eq!(inc.entries.len(), 2 * springs.len());
    let mut seen = vec![[0u32; 2]; springs.len()];
    for i in 0..n {
        let list = inc.of(i);
        assert_eq!(list.len() as u32, inc.offsets[i + 1] - inc.offsets[i]);
        // the degree is the number of springs touching i
        let degree = springs.iter().filter(|s| s.a as usize == i).count() + springs.iter().filter(|s| s.b as usize == i).count();
        assert_eq!(list.len(), degree, "degree of {i}");
        for (j, &e) in list.iter().enumerate() {
            let (si, side) = ((e >> 1) as usize, e & 1);
            let s = springs[si];
            let end = if side == 0 { s.a } else { s.b };
            assert_eq!(end as usize, i, "entry {e} of particle {i}: spring {si} side {side} is particle {end}");
            seen[si][side as usize] += 1;
            if j > 0 {
                assert!(list[j - 1] >> 1 <= e >> 1, "springs in increasing order within particle {i}");
            }
        }
    }
    for (si, c) in seen.iter().enumerate() {
        assert_eq!(*c, [1, 1], "spring {si} appears once per side");
    }
}

#[test]
fn incidence_random_springs() {
    for (n, count, seed) in [(13u32, 40usize, 1u64), (2, 5, 7), (50, 300, 12345), (7, 0, 3)] {
        check_incidence(n as usize, &random_springs(n, count, seed));
    }
    // a particle with no springs has an empty list
    let springs = vec![Spring { a: 0, b: 2, rest: 1.0, k: 1.0, kd: 0.0 }];
    let inc = Incidence::build(4, &springs);
    assert!(inc.of(1).is_empty() && inc.of(3).is_empty());
    assert_eq!(inc.of(0), &[0]);
    assert_eq!(inc.of(2), &[1]);
    // Model::incidence is the same thing
    let m = model::cloth(5, None).unwrap();
    assert_eq!(m.incidence(), Incidence::build(m.n_particles(), &m.springs));
    check_incidence(m.n_particles(), &m.springs);
}

#[test]
fn incidence_skips_out_of_range_springs() {
    let springs = vec![
        Spring { a: 0, b: 1, rest: 1.0, k: 1.0, kd: 0.0 },
        Spring { a: 1, b: 9, rest: 1.0, k: 1.0, kd: 0.0 },
        Spring { a: 2, b: 1, rest: 1.0, k: 1.0, kd: 0.0 },
    ];
    let inc = Incidence::build(3, &springs);
    assert_eq!(inc.offsets, vec![0, 1, 3, 4]);
    assert_eq!(inc.of(0), &[0]);
    assert_eq!(inc.of(1), &[1, 5]);
    assert_eq!(inc.of(2), &[4]);
}

// ---------------------------------------------------------------------------------------------
// scene registry

#[test]
fn every_scene_builds_and_validates() {
    let mut built = 0;
    for info in SCENES {
        if info.name == "mesh" {
            continue;
        }
        let m = scene::build(info.name, &SceneOptions::default()).unwrap_or_else(|e| panic!("scene {}: {e}", info.name));
        m.validate().unwrap_or_else(|e| panic!("scene {}: {e}", info.name));
        assert!(m.n_particles() > 0, "scene {} has particles", info.name);
        built += 1;
    }
    assert_eq!(built, SCENES.len() - 1);
    assert!(SCENES.iter().any(|s| s.name == "mesh"));
    // sizes and stiffness pass through
    let m = scene::build("rope", &SceneOptions { size: Some(5), stiffness: Some(3.0), mesh: None }).unwrap();
    assert_eq!(m.n_particles(), 5);
    assert_eq!(m.springs[0].k, 3.0);
    let m = scene::build("curtain", &SceneOptions::default()).unwrap();
    assert_eq!((m.n_particles(), m.springs.len()), (6561, 32158));
}

#[test]
fn unknown_scene_lists_known_names() {
    let e = scene::build("no-such-scene", &SceneOptions::default()).unwrap_err();
    assert!(matches!(&e, Error::UnknownScene(name, _) if name == "no-such-scene"), "{e:?}");
    let s = e.to_string();
    assert!(s.contains("no-such-scene"), "{s}");
    for info in SCENES {
        assert!(s.contains(info.name), "'{s}' does not list {}", info.name);
    }
}

#[test]
fn mesh_scene_needs_a_path() {
    let e = scene::build("mesh", &SceneOptions::default()).unwrap_err();
    assert!(matches!(&e, Error::InvalidParameter { name, .. } if name == "mesh"), "{e:?}");
    assert!(e.to_string().contains("--mesh"), "{e}");
}

#[test]
fn mesh_scene_loads_and_pins_two_highest() {
    let dir = unique_temp_dir("scene");
    let path = dir.join("tri.obj");
    std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0.5 2 0\nf 1 2 3\nf 1 3 4\nf 4 3 5\n").unwrap();
    let m = scene::build("mesh", &SceneOptions { mesh: Some(path), ..Default::default() }).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    m.validate().unwrap();
    assert_eq!(m.n_particles(), 5);
    let pinned = pinned_indices(&m);
    assert_eq!(pinned.len(), 2);
    assert!(pinned.iter().any(|&i| m.positions[i][1] == 2.0), "the top vertex is pinned");
}

#[test]
fn closed_tetrahedron_gets_no_duplicate_bending_springs() {
    let pos = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let tris = vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
    let m = springsim::model::triangle_mesh(pos, tris, 1.0, 100.0, 10.0).unwrap();
    // 6 edges; every interior edge's opposite pair is itself an edge, so no bending spring
    assert_eq!(m.springs.len(), 6);
    let mut pairs: Vec<(u32, u32)> = m.springs.iter().map(|s| (s.a.min(s.b), s.a.max(s.b))).collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 6);
}
