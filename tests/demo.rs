//! The windowed demo's headless proof: `springsim demo --frames N --screenshot out.png` for the curtain,
//! a rope, the jelly cube and the drape (a cloth falling onto the ground plane), run as the binary (winit needs the main thread). Under a display (CI runs
//! this file under Xvfb) the window opens and the screenshot is the window's pipelines drawn into an
//! offscreen target; without one the demo renders headless. Each test prints which mode ran.
//!
//! Checks: the image is not blank (the model, and the ground every scene now shows, cover a
//! reasonable share of pixels and the shading varies) and it changes between frame 1 and frame 120 (the model moved); the default 81x81 curtain
//! between frame 1 and frame 10 (lavapipe takes 1.6 s a frame on it). `--animation` writes a GIF of
//! the frames asked for, and refuses values that make no animation with one line.
#![cfg(feature = "viewer")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

struct Shot {
    rgba: Vec<u8>,
    w: usize,
    h: usize,
}

fn read_png(path: &Path) -> Shot {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("png")));
    let mut r = dec.read_info().expect("png header");
    let mut buf = vec![0; r.output_buffer_size().expect("png size")];
    let info = r.next_frame(&mut buf).expect("png frame");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    Shot { rgba: buf, w: info.width as usize, h: info.height as usize }
}

/// Runs the demo binary; `None` when there is no GPU and one is not required.
fn screenshot(scene: &str, extra: &[&str], frames: usize, tag: &str) -> Option<(Shot, String)> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let out = dir.join(format!("demo-{scene}-{tag}-{frames}.png"));
    let _ = std::fs::remove_file(&out);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_springsim"));
    cmd.args(["demo", "--scene", scene, "--frames", &frames.to_string(), "--screenshot"])
        .arg(&out)
        .args(["--width", "480", "--height", "360"])
        .args(extra);
    let t = std::time::Instant::now();
    let o = cmd.output().expect("running springsim");
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    eprintln!("{scene} {frames} frames ({:.1} s):\n{stdout}{stderr}", t.elapsed().as_secs_f64());
    if !o.status.success() {
        let no_gpu = stderr.contains("adapter") || stderr.contains("No display");
        if no_gpu && std::env::var("SPRINGSIM_REQUIRE_GPU").as_deref() != Ok("1") {
            common::skipped("no GPU");
            return None;
        }
        panic!("springsim demo failed: {stderr}");
    }
    let mode = if stdout.contains("window mode") { "window (Xvfb or a real display)" } else { "headless offscreen" };
    eprintln!("{scene}: screenshot mode: {mode}");
    Some((read_png(&out), mode.to_string()))
}

/// Share of pixels that differ from the background (the corner pixel), and the spread of their luminance.
fn coverage(s: &Shot) -> (f64, f64) {
    let bg = &s.rgba[0..3];
    let mut lum = Vec::new();
    for px in s.rgba.chunks_exact(4) {
        let diff = (0..3).map(|c| (px[c] as i32 - bg[c] as i32).abs()).max().unwrap();
        if diff > 12 {
            lum.push(0.2126 * px[0] as f64 + 0.7152 * px[1] as f64 + 0.0722 * px[2] as f64);
        }
    }
    let n = lum.len().max(1) as f64;
    let mean = lum.iter().sum::<f64>() / n;
    let sd = (lum.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / n).sqrt();
    (lum.len() as f64 / (s.w * s.h) as f64, sd)
}

fn changed(a: &Shot, b: &Shot) -> f64 {
    assert_eq!((a.w, a.h), (b.w, b.h));
    let n =
        a.rgba.chunks_exact(4).zip(b.rgba.chunks_exact(4)).filter(|(p, q)| (0..3).any(|c| (p[c] as i32 - q[c] as i32).abs() > 12)).count();
    n as f64 / (a.w * a.h) as f64
}

fn check(scene: &str, extra: &[&str], min_cover: f64, min_sd: f64, min_change: f64) {
    check_frames(scene, extra, 120, min_cover, min_sd, min_change)
}

/// [`check`] between frame 1 and frame `frames`.
fn check_frames(scene: &str, extra: &[&str], frames: usize, min_cover: f64, min_sd: f64, min_change: f64) {
    let Some((first, mode)) = screenshot(scene, extra, 1, "a") else {
        return;
    };
    let Some((last, _)) = screenshot(scene, extra, frames, "b") else {
        return;
    };
    let (cover, sd) = coverage(&last);
    let (cover1, _) = coverage(&first);
    let ch = changed(&first, &last);
    eprintln!(
        "{scene} [{mode}]: covers {:.2}% (frame 1: {:.2}%), luminance sd {sd:.1}, {:.2}% of pixels changed",
        100.0 * cover,
        100.0 * cover1,
        100.0 * ch
    );
    assert!(cover >= min_cover, "{scene}: covers only {:.3}% of the image", 100.0 * cover);
    assert!(cover <= 0.95, "{scene}: covers {:.1}%: the image is a flat fill", 100.0 * cover);
    assert!(sd >= min_sd, "{scene}: shading does not vary (luminance sd {sd:.2})");
    assert!(ch >= min_change, "{scene}: frame {frames} is the same as frame 1 ({:.3}% changed)", 100.0 * ch);
}

#[test]
fn curtain_screenshot_is_drawn_and_moves() {
    // The curtain at 25x25 (k scaled to keep the material: Liu et al.'s 81x81 takes ~4 s a frame on
    // lavapipe, 8 minutes for 120 frames).
    check("curtain", &["--size", "25"], 0.05, 8.0, 0.02);
}

#[test]
fn default_curtain_screenshot_is_drawn_and_moves() {
    // Liu et al.'s 81x81 curtain as `springsim demo` shows it by default: 1.6 s a frame on lavapipe
    // (167 substeps of symplectic Euler; measured at load 4 on 2 cores), so 10 frames (about 20 s)
    // instead of 120 (over 3 minutes); a third of a second is enough for it to fall visibly. Measured
    // under Xvfb with the issue-16 framing: the cloth and the floor under it cover 67.0% at frame 10
    // (52.3% at frame 1; the floor alone is most of that, so the coverage says little: the change does),
    // 16.7% of the pixels change, luminance sd 13.9 (it was 6.9 for the sheet alone, hence 4, not 8).
    check_frames("curtain", &[], 10, 0.05, 4.0, 0.05);
}

#[test]
fn rope_screenshot_is_drawn_and_moves() {
    check("rope", &[], 0.002, 4.0, 0.001);
}

#[test]
fn jelly_screenshot_is_drawn_and_moves() {
    check("jelly", &["--size", "6"], 0.005, 4.0, 0.002);
}

#[test]
fn drape_screenshot_is_drawn_and_moves() {
    // The drape at 21x21: the cloth falls over its post onto the ground plane. The ground quad alone
    // covers some 60% of the image, so the coverage says little here: the change between frame 1 and
    // 120 (the falling cloth; measured 10.4% of the pixels under Xvfb) is the check that matters.
    check("drape", &["--size", "21"], 0.05, 8.0, 0.05);
}

/// What a pixel shows, by colour: the cloth (the red front or the blue back, saturated), the ground
/// (grey-green checks, unsaturated), a pin marker (the yellow core), or the background.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Px {
    Background,
    Cloth,
    Ground,
    Pin,
    Other,
}

fn classify(px: &[u8], bg: &[u8]) -> Px {
    let (r, g, b) = (px[0] as i32, px[1] as i32, px[2] as i32);
    if (0..3).all(|c| (px[c] as i32 - bg[c] as i32).abs() <= 12) {
        return Px::Background;
    }
    let spread = r.max(g).max(b) - r.min(g).min(b);
    if r > 235 && g > 215 && b < 190 {
        Px::Pin
    } else if (r > g + 25 && r > b + 25 && g <= b + 60) || b > r + 25 {
        Px::Cloth
    } else if spread <= 24 {
        Px::Ground
    } else {
        Px::Other
    }
}

/// Shares of the frame per [`Px`] kind, and the ground pixels' luminance spread (its checks).
fn census(s: &Shot) -> (f64, f64, usize, f64) {
    let bg = s.rgba[0..3].to_vec();
    let (mut cloth, mut pins, mut ground) = (0usize, 0usize, Vec::new());
    for px in s.rgba.chunks_exact(4) {
        match classify(px, &bg) {
            Px::Cloth => cloth += 1,
            Px::Pin => pins += 1,
            Px::Ground => ground.push(0.2126 * px[0] as f64 + 0.7152 * px[1] as f64 + 0.0722 * px[2] as f64),
            Px::Background | Px::Other => {}
        }
    }
    let n = (s.w * s.h) as f64;
    let mean = ground.iter().sum::<f64>() / ground.len().max(1) as f64;
    let sd = (ground.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / ground.len().max(1) as f64).sqrt();
    (cloth as f64 / n, ground.len() as f64 / n, pins, sd)
}

#[test]
fn curtain_after_90_frames_fills_a_fifth_of_the_frame_over_the_ground() {
    // Issue #16: the demo's first view frames the curtain's whole motion (its rest shape and where
    // gravity takes it, viewer::framing), so after 90 frames (3 s: the cloth has fallen and swings
    // back up towards the camera) it covers at least a fifth of the frame, over a visible ground grid,
    // with its two pins marked. The curtain at 41x41 (the same 1 m cloth and material; 81x81 takes 90
    // x 1.6 s on lavapipe), 480x360 (the 960x720 frame's shape). Measured under Xvfb: cloth 31.3%,
    // ground 43.7%, 71 marker pixels (the old framing of the starting pose: cloth 2.8%, no ground).
    let Some((shot, mode)) = screenshot("curtain", &["--size", "41"], 90, "framing") else {
        return;
    };
    let (cloth, ground, pins, sd) = census(&shot);
    eprintln!(
        "curtain [{mode}] at frame 90: cloth {:.1}%, ground {:.1}% (luminance sd {sd:.1}), {pins} pin-marker pixels",
        100.0 * cloth,
        100.0 * ground
    );
    assert!(cloth >= 0.20, "the cloth covers {:.1}% of the frame (at least 20% wanted)", 100.0 * cloth);
    assert!(ground >= 0.05, "the ground grid covers {:.1}% of the frame", 100.0 * ground);
    assert!(sd >= 2.0, "the ground shows no checks (luminance sd {sd:.2})");
    assert!(pins >= 20, "the pins are not marked ({pins} marker pixels)");
}

/// `--animation FILE.gif --animation-frames 4 --animation-every 2` on a rope at 160x120: a GIF of that
/// size with exactly 4 frames, the first the whole image and the later ones inside it, whose delays add
/// up to the 8 simulated frames (8 x 1/30 s = 27 hundredths), and in which the rope moves.
#[test]
fn animation_writes_a_gif_of_the_frames_asked() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let out = dir.join("demo-rope-animation.gif");
    let _ = std::fs::remove_file(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_springsim"))
        .args(["demo", "--scene", "rope", "--headless", "--width", "160", "--height", "120"])
        .arg("--animation")
        .arg(&out)
        .args(["--animation-frames", "4", "--animation-every", "2"])
        .output()
        .expect("running springsim");
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    eprintln!("{stdout}{stderr}");
    if !o.status.success() {
        if stderr.contains("adapter") && std::env::var("SPRINGSIM_REQUIRE_GPU").as_deref() != Ok("1") {
            common::skipped("no GPU");
            return;
        }
        panic!("springsim demo --animation failed: {stderr}");
    }
    assert!(stdout.contains("4 GIF frames"), "{stdout}");
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::Indexed);
    let mut dec = opts.read_info(std::fs::File::open(&out).expect("the GIF was written")).expect("a GIF header");
    assert_eq!((dec.width(), dec.height()), (160, 120));
    let mut rects = Vec::new();
    let mut delay = 0u32;
    while let Some(f) = dec.read_next_frame().expect("a GIF frame") {
        assert!(u32::from(f.left) + u32::from(f.width) <= 160 && u32::from(f.top) + u32::from(f.height) <= 120, "frame outside the image");
        assert_eq!(f.buffer.len(), usize::from(f.width) * usize::from(f.height), "frame's pixels");
        rects.push((f.left, f.top, f.width, f.height));
        delay += u32::from(f.delay);
    }
    assert_eq!(rects.len(), 4, "GIF frames: {rects:?}");
    assert_eq!(rects[0], (0, 0, 160, 120), "the first frame is the whole image");
    assert!(rects[1..].iter().any(|r| u32::from(r.2) * u32::from(r.3) > 1), "the rope does not move: {rects:?}");
    assert_eq!(delay, 27, "the delays add up to 8 frames of 1/30 s");
}

/// `--animation-frames 0` and `--animation-every 0` are one line naming the field, exit status 2, no
/// file, before any adapter is sought (as the demo's other option errors); so is a `--frames` shorter
/// than the animation.
#[test]
fn animation_values_that_make_no_gif_are_one_line_errors() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("demo-refused.gif");
    for (extra, field) in [
        (&["--animation-frames", "0"][..], "animation_frames = 0"),
        (&["--animation-every", "0"][..], "animation_every = 0"),
        (&["--animation-frames", "-3"][..], "animation_frames = -3"),
        (&["--animation-frames", "5", "--frames", "4"][..], "frames = 4"),
    ] {
        let _ = std::fs::remove_file(&out);
        let o = Command::new(env!("CARGO_BIN_EXE_springsim"))
            .args(["demo", "--scene", "rope", "--headless", "--animation"])
            .arg(&out)
            .args(extra)
            .output()
            .expect("running springsim");
        let stderr = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{extra:?}: stderr is one line: {stderr:?}");
        assert!(lines[0].contains(field), "{extra:?}: '{}' does not name {field}", lines[0]);
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "{extra:?}: a GIF was written");
    }
}
