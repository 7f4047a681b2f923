//! Cloth that looks like cloth: the built-in curtain, with the damping its scene file gives, is smooth at
//! its grid's scale after three seconds under its default method, symplectic Euler. Roughness is the
//! angle between the normals of adjacent triangles (`springsim::reference::roughness`); an undamped
//! curtain keeps every grid-scale mode ringing and crumples like foil (a median of about 9°).

use springsim::reference::roughness::roughness;
use springsim::scene::{self, SceneOptions};
use springsim::stepping::CpuSimulator;
use springsim::Simulator;

/// The curtain scene (81×81, `scenes/curtain.ron`) under its own method and step, on the CPU, 90 frames
/// (3 s): the median angle between adjacent triangles is at most 3° and the 90th percentile at most 10°.
#[test]
fn the_curtain_is_smooth_after_90_frames() {
    let sc = scene::load("curtain").expect("curtain");
    let model = sc.build(&SceneOptions::default()).expect("model");
    let method = sc.file.method.name;
    let mut sim = CpuSimulator::new(&model, method, sc.settings()).expect("simulator");
    for _ in 0..90 {
        sim.step_frame().expect("frame");
    }
    let (x, _) = sim.read_state().expect("state");
    let r = roughness(&model.triangles, &x).expect("the curtain has triangles");
    eprintln!("curtain, {method}, frame 90: roughness {r:?}");
    assert!(r.median_deg <= 3.0, "median angle between adjacent triangles {:.2}° > 3°", r.median_deg);
    assert!(r.p90_deg <= 10.0, "90th percentile {:.2}° > 10°", r.p90_deg);
}
