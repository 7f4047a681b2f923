//! The demo's `--animation FILE.gif`: every K-th frame of the headless run (the same pipelines as the
//! window, drawn offscreen) written as a looping GIF, so that every Markdown renderer animates it.
//!
//! - [`Plan`]: which simulation frames become GIF frames, checked before any adapter is sought.
//! - [`GifWriter`]: the encoder. Each frame is quantized to its own 256-colour palette (NeuQuant, the
//!   `gif` crate's `Frame::from_rgba_speed`); after the first, only the rectangle that changed since
//!   the previous frame is stored (the ground and the background stay put), which keeps a few seconds
//!   of a 480×360 cloth under a couple of megabytes.

use super::DemoArgs;
use anyhow::{Context, Result};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// Which frames of a headless run go into the animation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// Simulation frames run in all.
    pub frames: usize,
    /// GIF frames.
    pub gif_frames: usize,
    /// Every K-th simulation frame becomes a GIF frame.
    pub every: usize,
}

impl Plan {
    /// The animation `args` ask for (`None` without `--animation`), checked: at least one GIF frame, K
    /// at least 1, an image no larger than GIF's 65535 pixels a side, and `--frames` (when given) at
    /// least N·K. Without `--frames` the run is N·K frames long, so the animation starts at frame 1;
    /// with it, the animation is the run's last N·K frames (the scene can settle first).
    pub fn from_args(args: &DemoArgs) -> crate::Result<Option<Plan>> {
        if args.animation.is_none() {
            return Ok(None);
        }
        let (n, k) = (args.animation_frames, args.animation_every);
        if n == 0 {
            return Err(crate::Error::param("animation_frames", n, "must be >= 1"));
        }
        if k == 0 {
            return Err(crate::Error::param("animation_every", k, "must be >= 1"));
        }
        for (name, v) in [("width", args.width), ("height", args.height)] {
            if v > u32::from(u16::MAX) {
                return Err(crate::Error::param(name, v, "must be <= 65535 for a GIF (--animation)"));
            }
        }
        let span = n.checked_mul(k).ok_or_else(|| crate::Error::param("animation_frames", n, "times animation_every overflows"))?;
        let frames = args.frames.unwrap_or(span);
        if frames < span {
            return Err(crate::Error::param(
                "frames",
                frames,
                format!("must be >= animation_frames x animation_every = {n} x {k} = {span} with --animation"),
            ));
        }
        Ok(Some(Plan { frames, gif_frames: n, every: k }))
    }

    /// Whether simulation frame `f` (0-based) is a GIF frame: the last of each block of K among the
    /// run's last N·K frames (the run's last frame is the GIF's last).
    pub fn takes(&self, f: usize) -> bool {
        let first = self.frames - self.gif_frames * self.every;
        f >= first && f < self.frames && (f + 1 - first).is_multiple_of(self.every)
    }
}

/// A looping GIF written frame by frame.
pub struct GifWriter {
    enc: gif::Encoder<BufWriter<File>>,
    w: u16,
    h: u16,
    /// Simulated seconds between two GIF frames (K · frame_dt).
    period: f64,
    /// The previous frame's pixels (RGBA8), for the changed rectangle.
    prev: Option<Vec<u8>>,
    /// Frames written.
    written: usize,
}

/// NeuQuant's sampling step (1: every pixel, best; 30: fastest): 10 is the `gif` crate's suggestion.
const QUANT_SPEED: i32 = 10;

impl GifWriter {
    /// Creates `path` for `w`×`h` frames that are `period` simulated seconds apart, looping forever.
    pub fn create(path: &Path, w: u32, h: u32, period: f64) -> Result<Self> {
        let (w, h) = (u16::try_from(w).context("GIF width")?, u16::try_from(h).context("GIF height")?);
        let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut enc = gif::Encoder::new(BufWriter::new(file), w, h, &[]).context("GIF header")?;
        enc.set_repeat(gif::Repeat::Infinite).context("GIF loop")?;
        Ok(GifWriter { enc, w, h, period, prev: None, written: 0 })
    }

    /// The delay after frame `i` in hundredths of a second, rounded so that the delays add up to the
    /// simulated time (no drift); at least 2 (browsers slow 0 and 1 down to 10).
    fn delay(&self, i: usize) -> u16 {
        let cs = |j: usize| (j as f64 * self.period * 100.0).round() as i64;
        (cs(i + 1) - cs(i)).clamp(2, i64::from(u16::MAX)) as u16
    }

    /// Appends one frame (tightly packed RGBA8, `w`×`h`).
    pub fn push(&mut self, rgba: &[u8]) -> Result<()> {
        let (w, h) = (usize::from(self.w), usize::from(self.h));
        anyhow::ensure!(rgba.len() == w * h * 4, "GIF frame of {} bytes for {w}x{h}", rgba.len());
        // the rectangle that changed since the previous frame (all of it for the first)
        let (x0, y0, x1, y1) = match &self.prev {
            None => (0, 0, w, h),
            Some(prev) => changed_rect(prev, rgba, w, h).unwrap_or((0, 0, 1, 1)),
        };
        let mut sub = Vec::with_capacity((x1 - x0) * (y1 - y0) * 4);
        for y in y0..y1 {
            sub.extend_from_slice(&rgba[(y * w + x0) * 4..(y * w + x1) * 4]);
        }
        // x1 - x0 <= w and y1 - y0 <= h, both u16
        let mut frame = gif::Frame::from_rgba_speed((x1 - x0) as u16, (y1 - y0) as u16, &mut sub, QUANT_SPEED);
        frame.left = x0 as u16;
        frame.top = y0 as u16;
        frame.delay = self.delay(self.written);
        frame.dispose = gif::DisposalMethod::Keep;
        self.enc.write_frame(&frame).context("writing a GIF frame")?;
        self.prev = Some(rgba.to_vec());
        self.written += 1;
        Ok(())
    }

    /// Finishes the file; returns the frames written.
    pub fn finish(self) -> Result<usize> {
        let n = self.written;
        let mut out = self.enc.into_inner().context("finishing the GIF")?;
        std::io::Write::flush(&mut out).context("writing the GIF")?;
        Ok(n)
    }
}

/// The smallest rectangle (x0, y0, x1, y1), ends exclusive, holding every pixel that differs between
/// `a` and `b`; `None` when they are the same.
fn changed_rect(a: &[u8], b: &[u8], w: usize, h: usize) -> Option<(usize, usize, usize, usize)> {
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) * 4;
            if a[i..i + 3] != b[i..i + 3] {
                x0 = x0.min(x);
                x1 = x1.max(x + 1);
                y0 = y0.min(y);
                y1 = y1.max(y + 1);
            }
        }
    }
    (x1 > x0).then_some((x0, y0, x1, y1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(n: usize, k: usize, frames: Option<usize>) -> DemoArgs {
        DemoArgs { animation: Some("a.gif".into()), animation_frames: n, animation_every: k, frames, ..Default::default() }
    }

    #[test]
    fn plan_takes_every_kth_of_the_last_frames() {
        let p = Plan::from_args(&args(3, 2, Some(10))).unwrap().unwrap();
        let taken: Vec<usize> = (0..10).filter(|&f| p.takes(f)).collect();
        assert_eq!(taken, [5, 7, 9]);
        let p = Plan::from_args(&args(4, 1, None)).unwrap().unwrap();
        assert_eq!(p.frames, 4);
        assert_eq!((0..4).filter(|&f| p.takes(f)).count(), 4);
        assert!(Plan::from_args(&DemoArgs::default()).unwrap().is_none());
    }

    #[test]
    fn plan_refuses_what_makes_no_animation() {
        let msg = |a: &DemoArgs| Plan::from_args(a).unwrap_err().to_string();
        assert!(msg(&args(0, 1, None)).contains("animation_frames = 0"));
        assert!(msg(&args(2, 0, None)).contains("animation_every = 0"));
        assert!(msg(&args(5, 2, Some(9))).contains("frames = 9"));
        assert!(msg(&DemoArgs { width: 70_000, ..args(1, 1, None) }).contains("width = 70000"));
    }

    #[test]
    fn changed_rect_bounds_the_differences() {
        let (w, h) = (5, 4);
        let a = vec![0u8; w * h * 4];
        let mut b = a.clone();
        assert_eq!(changed_rect(&a, &b, w, h), None);
        b[(w + 1) * 4] = 9; // (1, 1)
        b[(3 * w + 3) * 4 + 2] = 9; // (3, 3)
        assert_eq!(changed_rect(&a, &b, w, h), Some((1, 1, 4, 4)));
    }
}
