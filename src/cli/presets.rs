//! Bench presets: other projects' benchmarks set up on springsim's scenes, so that figures compare
//! with theirs directly.
//!
//! `warp-cloth` is NVIDIA Warp's cloth benchmark (`warp/examples/benchmarks/benchmark_cloth.py`): an
//! n×n grid for n = 32, 64 and 128, structural, both shear diagonals and skip-one bend springs, every
//! one k = 1000 N/m with damping k_d = 10 N·s/m along the spring, 0.1 kg per particle, the two corners
//! of the first row pinned, gravity 9.81 m/s², semi-implicit (symplectic) Euler with 16 substeps per
//! frame at 60 frames per second (h = 1/960 s), 60 frames. springsim's `cloth` builder is the same
//! grid, springs and pins (6n² − 10n + 2 springs, as Warp's) on 1 m × 1 m instead of Warp's 0.1 m
//! spacing; with gravity scaled by the spacing ratio, s = (1/(n − 1))/0.1, every length of the run is
//! Warp's times s (Hooke's and the damping force scale with lengths, the masses do not), so the strain,
//! the stable step and the frame's work are Warp's. That cloth is heavy for its springs (1.6 t at
//! 128²): it stretches past strain 2 within its second (peaks of about 2.5 at 32², 6.5 at 128²), which
//! the divergence guard would report as a divergence, so the preset turns the guard off
//! (`divergence: ignore`; `--divergence` overrides it) and the record's `finite` and `max_strain_peak`
//! tell what happened.

use anyhow::Result;
use springsim::error::Bound;
use springsim::scene_file::Scene;
use std::path::Path;

/// The presets `--preset` takes.
pub const PRESETS: &[&str] = &["warp-cloth"];

/// A preset: the scene it runs (at each size) and its sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Warp's cloth benchmark.
    WarpCloth,
}

/// Warp's particle spacing (m), mass per particle (kg), spring stiffness (N/m) and damping (N·s/m).
const WARP_SPACING: f64 = 0.1;
const WARP_MASS: f64 = 0.1;
const WARP_K: f64 = 1000.0;
const WARP_KD: f64 = 10.0;
/// Warp's frame rate, substeps per frame and frames (1 s).
const WARP_FPS: f64 = 60.0;
const WARP_SUBSTEPS: f64 = 16.0;
const WARP_FRAMES: usize = 60;

impl Preset {
    /// Parses a preset's name.
    pub fn parse(s: &str) -> springsim::Result<Preset> {
        match s {
            "warp-cloth" => Ok(Preset::WarpCloth),
            _ => Err(springsim::Error::invalid("preset", s, Bound::OneOf(PRESETS.iter().map(|p| p.to_string()).collect()))),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Preset::WarpCloth => "warp-cloth",
        }
    }

    /// The builder its scene uses (the record's `scene`).
    pub fn scene_name(self) -> &'static str {
        match self {
            Preset::WarpCloth => "cloth",
        }
    }

    /// The sizes it runs unless `--size` is given.
    pub fn sizes(self) -> Vec<usize> {
        match self {
            Preset::WarpCloth => vec![32, 64, 128],
        }
    }

    /// Its scene at size `n` (particles per side): a scene file's content, parsed as any other (so
    /// options given explicitly override its settings as they override a file's).
    pub fn scene(self, n: usize) -> Result<Scene> {
        match self {
            Preset::WarpCloth => {
                if n < 3 {
                    return Err(springsim::Error::invalid("size", n, Bound::min_count(3)).into());
                }
                let s = 1.0 / (n - 1) as f64 / WARP_SPACING;
                let text = format!(
                    "(\n    about: \"Warp's cloth benchmark at {n}x{n}, lengths scaled by {s:?}\",\n    model: (builder: \"cloth\", size: {n}, stiffness: {k:?}),\n    material: (mass: {mass:?}, damping: {kd:?}),\n    forces: (gravity: (0.0, {g:?}, 0.0), drag: 0.0),\n    method: (name: \"symplectic-euler\", h: {h:?}, rayleigh: false, divergence: \"ignore\"),\n    frame_dt: {dt:?},\n    frames: {frames},\n)\n",
                    k = WARP_K,
                    mass = WARP_MASS * (n * n) as f64,
                    kd = WARP_KD,
                    g = -9.81 * s,
                    h = 1.0 / WARP_FPS / WARP_SUBSTEPS,
                    dt = 1.0 / WARP_FPS,
                    frames = WARP_FRAMES,
                );
                Ok(Scene::parse(&text, Path::new(&format!("preset warp-cloth ({n}x{n})")))?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_cloth_is_warps_model() {
        let p = Preset::parse("warp-cloth").expect("known");
        assert_eq!(p.sizes(), [32, 64, 128]);
        for n in [32usize, 64] {
            let sc = p.scene(n).expect("scene");
            let m = sc.build(&Default::default()).expect("model");
            assert_eq!(m.n_particles(), n * n);
            // Warp's springs: 2n(n-1) structural, 2n(n-2) bend, 2(n-1)^2 shear
            assert_eq!(m.springs.len(), 6 * n * n - 10 * n + 2);
            assert!(m.springs.iter().all(|s| s.k == 1000.0 && s.kd == 10.0));
            assert!(m.masses.iter().all(|&w| (w - 0.1).abs() < 1e-12));
            assert_eq!(m.pinned.iter().filter(|&&p| p).count(), 2);
            assert!(m.pinned[0] && m.pinned[n - 1]);
            let st = sc.settings();
            assert_eq!((st.frame_dt, st.fixed_h), (1.0 / 60.0, Some(1.0 / 960.0)));
            assert_eq!(sc.file.frames, 60);
            assert_eq!(sc.file.method.name, springsim::Method::SymplecticEuler);
            assert_eq!(st.guard.policy, springsim::method::DivergencePolicy::Ignore);
            // gravity scaled with the spacing: g·s over the spacing is Warp's g over 0.1 m
            let spacing = 1.0 / (n - 1) as f64;
            assert!((m.forces.gravity[1] / spacing - (-9.81 / 0.1)).abs() < 1e-9);
        }
        assert!(Preset::parse("warp").is_err());
    }
}
