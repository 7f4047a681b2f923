//! The demo's batch paths: `springsim demo` itself ([`run`]: the window, or offscreen without a
//! display), the offscreen run of `--frames`/`--screenshot`/`--animation` ([`run_headless`]), and the
//! PNG writer.

use super::{animation, render, Demo, DemoArgs};
use crate::Simulator;
use anyhow::{Context, Result};
use std::time::Instant;

/// Runs `frames` frames offscreen (no window) and writes the last as a PNG: the headless path of
/// `--screenshot`; with `--animation`, every K-th of the last N·K frames goes into a GIF as well
/// ([`animation::Plan`]). Prints the frame split.
pub fn run_headless(args: &DemoArgs) -> Result<()> {
    let plan = animation::Plan::from_args(args)?;
    let ctx = crate::gpu::GpuContext::headless().context("no GPU adapter (try `springsim bench --backend cpu`)")?;
    let format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let samples = render::msaa_samples(&ctx.adapter, format);
    let name = ctx.adapter_name();
    let mut demo = Demo::new(ctx.device.clone(), ctx.queue.clone(), name, format, samples, args)?;
    let frames = plan.map_or(args.frames.unwrap_or(1), |p| p.frames);
    let (w, h) = (args.width, args.height);
    let mut gif = match (&args.animation, plan) {
        (Some(path), Some(p)) => Some(animation::GifWriter::create(path, w, h, p.every as f64 * demo.base_settings.frame_dt)?),
        _ => None,
    };
    let mut last = None;
    for f in 0..frames {
        let sim_ms = demo.simulate()?;
        // draw every frame as the window does (timed), into the offscreen target
        let t = Instant::now();
        demo.renderer.set_camera(&demo.queue, &demo.camera, w, h, &demo.draw);
        demo.renderer.set_collider_time(&demo.queue, demo.sim.time());
        let take = plan.is_some_and(|p| p.takes(f));
        let img = demo.renderer.capture(&demo.device, &demo.queue, &demo.sim, w, h, &demo.draw, take || f + 1 == frames)?;
        demo.record(sim_ms, t.elapsed().as_secs_f64() * 1e3);
        if let (true, Some(g)) = (take, gif.as_mut()) {
            g.push(&img)?;
        }
        last = Some(img);
    }
    demo.check()?;
    super::summary::report(&demo, "headless offscreen", frames);
    if let (Some(path), Some(img)) = (&args.screenshot, last) {
        write_png(path, w, h, &img)?;
        println!("springsim demo: wrote {} ({w}x{h}, headless offscreen target)", path.display());
    }
    if let (Some(path), Some(g), Some(p)) = (&args.animation, gif, plan) {
        let n = g.finish()?;
        println!(
            "springsim demo: wrote {} ({w}x{h}, {n} GIF frames, every {} of the last {} simulation frames, {:.2} s)",
            path.display(),
            p.every,
            p.gif_frames * p.every,
            (p.gif_frames * p.every) as f64 * demo.base_settings.frame_dt
        );
    }
    Ok(())
}

/// `springsim demo`: opens the window; with `--screenshot`/`--frames` and no display (or
/// `--headless`), runs offscreen instead; `--animation` always runs offscreen.
pub fn run(args: DemoArgs) -> Result<()> {
    // the animation's values are checked before any adapter or window is sought
    if animation::Plan::from_args(&args)?.is_some() {
        return run_headless(&args);
    }
    let batch = args.screenshot.is_some() || args.frames.is_some();
    let has_display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() || cfg!(any(windows, target_os = "macos"));
    if args.headless || (batch && !has_display) {
        if !args.headless {
            log::warn!("no display (DISPLAY/WAYLAND_DISPLAY unset): rendering offscreen");
        }
        return run_headless(&args);
    }
    match super::app::run_window(args.clone()) {
        Err(super::app::WindowError::NoDisplay(e)) if batch => {
            log::warn!("cannot open a window ({e}): rendering offscreen");
            run_headless(&args)
        }
        Err(super::app::WindowError::NoDisplay(e)) => {
            anyhow::bail!("no display to open the demo's window on ({e}); `springsim bench` runs headless")
        }
        Err(super::app::WindowError::Other(e)) => Err(e),
        Ok(()) => Ok(()),
    }
}

/// Writes RGBA8 pixels as a PNG.
pub fn write_png(path: &std::path::Path, w: u32, h: u32, rgba: &[u8]) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut wr = enc.write_header()?;
    wr.write_image_data(rgba)?;
    wr.finish()?;
    Ok(())
}
