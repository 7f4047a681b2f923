//! The embedding example's proof: runs the `embed` example binary (a host wgpu application with its own
//! window or offscreen target, camera, pipelines and scenery, which draws springsim's cloth from the
//! simulation's position buffer in its own render pass) with `--frames 60 --screenshot`, and checks the
//! picture: the host's green ground and the cloth's red both cover a stated share of it, and the cloth
//! hangs (it spans a good part of the picture's height, where the flat starting sheet is a thin band).
//!
//! The binary is `target/<profile>/examples/embed`, beside the `springsim` binary that Cargo names in
//! `CARGO_BIN_EXE_springsim`; `cargo test --all-targets` builds it, `cargo test --test embed` alone does
//! not (then run `cargo build --example embed` first). Under a display (CI runs the tests under Xvfb)
//! the example opens its window; without one it renders headless; the test prints which mode ran.
#![cfg(feature = "viewer")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn gpu_required() -> bool {
    std::env::var("SPRINGSIM_REQUIRE_GPU").as_deref() == Ok("1")
}

/// The example binary, built by Cargo into the `examples` folder beside the package's binary.
fn example_binary() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_BIN_EXE_springsim"));
    let path = bin.parent()?.join("examples").join(format!("embed{}", std::env::consts::EXE_SUFFIX));
    path.is_file().then_some(path)
}

struct Picture {
    rgba: Vec<u8>,
    width: usize,
    height: usize,
}

fn read_png(path: &Path) -> Picture {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("the screenshot")));
    let mut reader = decoder.read_info().expect("png header");
    let mut rgba = vec![0; reader.output_buffer_size().expect("png size")];
    let info = reader.next_frame(&mut rgba).expect("png frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    rgba.truncate(info.buffer_size());
    Picture { rgba, width: info.width as usize, height: info.height as usize }
}

/// Hue in degrees, saturation and value of an sRGB pixel.
fn hsv(px: &[u8]) -> (f64, f64, f64) {
    let [r, g, b] = [px[0], px[1], px[2]].map(|c| c as f64 / 255.0);
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let chroma = max - min;
    let hue = if chroma == 0.0 {
        0.0
    } else if max == r {
        60.0 * ((g - b) / chroma).rem_euclid(6.0)
    } else if max == g {
        60.0 * ((b - r) / chroma + 2.0)
    } else {
        60.0 * ((r - g) / chroma + 4.0)
    };
    (hue, if max > 0.0 { chroma / max } else { 0.0 }, max)
}

/// The cloth's pixels: saturated reds (hue within 25° of red); the ground's: saturated greens (80°-160°).
/// The box is blue and the background a near-black grey, so neither counts as either.
fn is_cloth(px: &[u8]) -> bool {
    let (h, s, v) = hsv(px);
    s > 0.45 && v > 0.12 && !(25.0..=335.0).contains(&h)
}

fn is_ground(px: &[u8]) -> bool {
    let (h, s, v) = hsv(px);
    s > 0.3 && v > 0.12 && (80.0..=160.0).contains(&h)
}

#[test]
fn embed_example_draws_its_ground_and_the_hanging_cloth() {
    let Some(binary) = example_binary() else {
        let msg = "the embed example binary is missing beside CARGO_BIN_EXE_springsim (examples/embed): \
                   run `cargo build --example embed` or `cargo test --all-targets`";
        assert!(!gpu_required(), "SPRINGSIM_REQUIRE_GPU=1 but {msg}");
        eprintln!("skipped: {msg}");
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embed-60.png");
    let _ = std::fs::remove_file(&out);
    let started = std::time::Instant::now();
    let run = Command::new(&binary)
        .args(["--frames", "60", "--size", "25", "--width", "480", "--height", "360", "--screenshot"])
        .arg(&out)
        .output()
        .expect("running the embed example");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    eprintln!("{} ({:.1} s):\n{stdout}{stderr}", binary.display(), started.elapsed().as_secs_f64());
    if !run.status.success() {
        if stderr.contains("no GPU adapter") && !gpu_required() {
            eprintln!("skipped: no GPU adapter");
            return;
        }
        panic!("the embed example failed: {stderr}");
    }
    let mode = if stdout.contains("window mode") { "window (Xvfb or a real display)" } else { "headless offscreen" };
    eprintln!("screenshot mode: {mode}");
    let picture = read_png(&out);
    assert_eq!((picture.width, picture.height), (480, 360), "the picture's size");
    let pixels = (picture.width * picture.height) as f64;
    let (mut cloth, mut ground) = (0usize, 0usize);
    let (mut top, mut bottom) = (usize::MAX, 0);
    for (i, px) in picture.rgba.chunks_exact(4).enumerate() {
        if is_cloth(px) {
            cloth += 1;
            top = top.min(i / picture.width);
            bottom = bottom.max(i / picture.width);
        } else if is_ground(px) {
            ground += 1;
        }
    }
    let (cloth_share, ground_share) = (cloth as f64 / pixels, ground as f64 / pixels);
    let cloth_height = if cloth > 0 { (bottom - top + 1) as f64 / picture.height as f64 } else { 0.0 };
    eprintln!(
        "[{mode}] cloth {:.1}% of the pixels, {:.1}% of the height; ground {:.1}% of the pixels",
        100.0 * cloth_share,
        100.0 * cloth_height,
        100.0 * ground_share
    );
    assert!(ground_share >= 0.15, "the host's ground covers only {:.2}% of the picture", 100.0 * ground_share);
    assert!(cloth_share >= 0.04, "the cloth covers only {:.2}% of the picture", 100.0 * cloth_share);
    assert!(cloth_height >= 0.3, "the cloth spans only {:.1}% of the picture's height: it does not hang", 100.0 * cloth_height);
    assert!(stdout.contains("lowest cloth point"), "the example's report line is missing");
}
