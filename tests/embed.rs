//! The embedding example's proof: runs the `embed` example binary (a host wgpu application with its own
//! window or offscreen target, camera, pipelines and scenery, which draws springsim's cloth from the
//! simulation's position buffer in its own render pass) with `--frames 60 --screenshot` and with
//! `--frames 1`, and checks the pictures: at frame 60 the host's green ground and the cloth's red both
//! cover a stated share of the picture, and the cloth's pixels are not those of frame 1 (the sheet
//! starts flat and swings down from its two pinned corners: the renderer draws the live buffer).
//!
//! The binary is `target/<profile>/examples/embed`, beside the `springsim` binary that Cargo names in
//! `CARGO_BIN_EXE_springsim`. `cargo test --all-targets` builds examples only as test harnesses and
//! `cargo test --test embed` not at all, so the test first runs `cargo build --example embed` with the
//! profile of that folder (a no-op when the binary is fresh). Under a display (CI runs the tests under
//! Xvfb) the example opens its window; without one it renders headless; the test prints which mode ran.
#![cfg(feature = "viewer")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn gpu_required() -> bool {
    std::env::var("SPRINGSIM_REQUIRE_GPU").as_deref() == Ok("1")
}

/// The example binary, `examples/embed` beside the package's binary, brought up to date by `cargo build
/// --example embed` (`$CARGO`, else `cargo` on the PATH) with the profile whose folder holds that binary
/// (`release`, else the `test` profile that `cargo test` builds into `debug`). `Err` when it is missing.
fn example_binary() -> Result<PathBuf, String> {
    let profile_dir = Path::new(env!("CARGO_BIN_EXE_springsim")).parent().ok_or("CARGO_BIN_EXE_springsim has no folder")?;
    let binary = profile_dir.join("examples").join(format!("embed{}", std::env::consts::EXE_SUFFIX));
    let profile = if profile_dir.ends_with("release") { "release" } else { "test" };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let started = std::time::Instant::now();
    match Command::new(&cargo).args(["build", "--example", "embed", "--profile", profile, "--manifest-path"]).arg(&manifest).output() {
        Ok(build) if build.status.success() => {
            eprintln!("cargo build --example embed --profile {profile}: {:.1} s", started.elapsed().as_secs_f64())
        }
        Ok(build) => panic!("cargo build --example embed --profile {profile} failed:\n{}", String::from_utf8_lossy(&build.stderr)),
        Err(e) => eprintln!("cannot run {} ({e}): using the example binary as it is", Path::new(&cargo).display()),
    }
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(format!("the embed example binary {} is missing: run `cargo build --example embed`", binary.display()))
    }
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

/// Runs the example for `frames` frames; `None` when it is skipped (no GPU or no binary, and none required).
fn screenshot(frames: usize) -> Option<(Picture, String, String)> {
    let binary = match example_binary() {
        Ok(binary) => binary,
        Err(msg) => {
            assert!(!gpu_required(), "SPRINGSIM_REQUIRE_GPU=1 but {msg}");
            common::skipped(&msg);
            return None;
        }
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("embed-{frames}.png"));
    let _ = std::fs::remove_file(&out);
    let started = std::time::Instant::now();
    let run = Command::new(&binary)
        .args(["--frames", &frames.to_string(), "--size", "25", "--width", "480", "--height", "360", "--screenshot"])
        .arg(&out)
        .output()
        .expect("running the embed example");
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    let stderr = String::from_utf8_lossy(&run.stderr);
    eprintln!("{} --frames {frames} ({:.1} s):\n{stdout}{stderr}", binary.display(), started.elapsed().as_secs_f64());
    if !run.status.success() {
        if stderr.contains("no GPU adapter") && !gpu_required() {
            common::skipped("no GPU adapter");
            return None;
        }
        panic!("the embed example failed: {stderr}");
    }
    let mode = if stdout.contains("window mode") { "window (Xvfb or a real display)" } else { "headless offscreen" };
    eprintln!("screenshot mode: {mode}");
    let picture = read_png(&out);
    assert_eq!((picture.width, picture.height), (480, 360), "the picture's size");
    Some((picture, mode.to_string(), stdout))
}

#[test]
fn embed_example_draws_its_ground_and_the_moving_cloth() {
    let Some((first, _, _)) = screenshot(1) else { return };
    let Some((last, mode, stdout)) = screenshot(60) else { return };
    let pixels = (last.width * last.height) as f64;
    let share = |picture: &Picture, test: fn(&[u8]) -> bool| picture.rgba.chunks_exact(4).filter(|px| test(px)).count() as f64 / pixels;
    let (cloth, ground) = (share(&last, is_cloth), share(&last, is_ground));
    let cloth_first = share(&first, is_cloth);
    let moved =
        first.rgba.chunks_exact(4).zip(last.rgba.chunks_exact(4)).filter(|(a, b)| is_cloth(a) != is_cloth(b)).count() as f64 / pixels;
    eprintln!(
        "[{mode}] frame 60: cloth {:.1}% of the pixels, ground {:.1}%; frame 1: cloth {:.1}%; cloth pixels that differ: {:.1}%",
        100.0 * cloth,
        100.0 * ground,
        100.0 * cloth_first,
        100.0 * moved
    );
    assert!(ground >= 0.15, "the host's ground covers only {:.2}% of the picture", 100.0 * ground);
    assert!(cloth >= 0.04, "the cloth covers only {:.2}% of the picture", 100.0 * cloth);
    assert!(cloth_first >= 0.02, "at frame 1 the cloth covers only {:.2}% of the picture", 100.0 * cloth_first);
    assert!(moved >= 0.03, "the cloth at frame 60 covers the pixels it covered at frame 1 ({:.2}% differ)", 100.0 * moved);
    let lowest: f64 = stdout
        .split("lowest cloth point y = ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|y| y.parse().ok())
        .expect("the example's report line names the lowest cloth point");
    assert!(lowest < -0.2, "the cloth has not fallen: its lowest point is at y = {lowest} m after 60 frames");
}
