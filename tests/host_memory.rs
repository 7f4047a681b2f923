//! Host memory of a GPU run (issue #15 item 4): the program's own heap, counted by a global allocator,
//! beyond the model it was given, while a GPU simulator for the 128² cloth is built, prepares its global
//! solver, steps a frame and reads its state back. The bound is 512 B a particle at the peak, for every
//! method and preconditioner, the multigrid hierarchies' builds included (they are built on the host in
//! f64 and uploaded in f32: the finest level is never stored in f64, see `linalg::global_mg` and
//! `linalg::spring_levels`; Chebyshev + multigrid's ρ is estimated by the V-cycle on that hierarchy,
//! `GlobalMg::rho`). Measured peaks at 128² (lavapipe): local/global cg + multigrid 464, implicit Euler +
//! multigrid 403, local/global chebyshev + multigrid 470 (742 while ρ ran on the stored f64 hierarchy;
//! 767 with it built alongside, the check broken on purpose). A counting allocator sees only what Rust
//! allocates: the driver's memory (on lavapipe, the "GPU" buffers live in host memory) goes through its
//! C allocator and is not counted, which is the point: that is the device's memory, not the program's.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use springsim::method::{GlobalSolve, Preconditioner};
use springsim::stepping::GpuSimulator;
use springsim::{Method, Simulator, StepSettings};

/// The system allocator, counting the bytes held now and their peak.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds GlobalAlloc's
// contract; the counters are plain atomics and never touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = HELD.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let now = HELD.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        HELD.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by `System` with `layout`; the caller guarantees `new_size`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = HELD.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                HELD.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The tests share the counters: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Bytes held now; the peak starts again from them.
fn reset_peak() -> usize {
    let now = HELD.load(Relaxed);
    PEAK.store(now, Relaxed);
    now
}

/// The bound of issue #15 item 4: host bytes a particle beyond the model.
const BOUND: f64 = 512.0;

/// The cloth's side: 128² = 16 384 particles, 97 794 springs.
const SIDE: usize = 128;

/// What a GPU run held beyond its model, B per particle.
#[derive(Debug)]
struct Heap {
    /// The model's own heap.
    model: f64,
    /// The peak while the simulator was built and its global solver prepared.
    build: f64,
    /// The peak over the whole run (build, one frame, the state read back).
    peak: f64,
    /// Held at the end, the simulator and the read-back state alive.
    kept: f64,
    /// Whether the run's solver is preconditioned by a multigrid hierarchy.
    multigrid: bool,
}

/// Builds a GPU simulator for the `side`² cloth, prepares local/global's solver, steps a frame and
/// reads the state back, counting the heap from just after the model was built.
fn measure(ctx: &springsim::gpu::GpuContext, side: usize, method: Method, settings: StepSettings) -> Heap {
    let before = reset_peak();
    let model = springsim::model::cloth(side, None).unwrap();
    let n = model.n_particles();
    let per = |b: usize| b as f64 / n as f64;
    let base = reset_peak();
    let mut sim = GpuSimulator::new(&ctx.device, &ctx.queue, &model, method, settings).unwrap();
    sim.probe().prepare_local_global().unwrap();
    let build = per(PEAK.load(Relaxed) - base);
    sim.step_frame().unwrap();
    let (x, v) = sim.read_state().unwrap();
    assert!(x.iter().chain(&v).all(|p| p.iter().all(|c| c.is_finite())), "the frame is not finite");
    let (peak, kept) = (per(PEAK.load(Relaxed) - base), per(HELD.load(Relaxed) - base));
    let multigrid = sim.probe().frame_shape().multigrid.is_some();
    let heap = Heap { model: per(base - before), build, peak, kept, multigrid };
    drop((x, v, sim, model));
    heap
}

fn lg(preconditioner: Preconditioner) -> StepSettings {
    StepSettings { global: GlobalSolve::Cg, preconditioner, ..StepSettings::default() }
}

/// The device's own start-up (the first pipelines, its caches) before anything is measured.
fn warm(ctx: &springsim::gpu::GpuContext) {
    let _ = measure(ctx, 16, Method::SymplecticEuler, StepSettings::default());
    let _ = measure(ctx, 16, Method::LocalGlobal, lg(Preconditioner::Multigrid));
}

#[test]
fn a_gpu_run_holds_at_most_half_a_kilobyte_a_particle_beyond_the_model() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ctx) = common::gpu() else { return };
    warm(&ctx);
    let implicit = |preconditioner| StepSettings { preconditioner, ..StepSettings::default() };
    let cheb = |preconditioner| StepSettings { global: GlobalSolve::Chebyshev, preconditioner, ..StepSettings::default() };
    for (method, settings, name, multigrid) in [
        (Method::SymplecticEuler, StepSettings::default(), "symplectic Euler", false),
        (Method::ImplicitEuler, implicit(Preconditioner::Jacobi), "implicit Euler + jacobi", false),
        (Method::LocalGlobal, lg(Preconditioner::Jacobi), "local/global cg + jacobi", false),
        (Method::LocalGlobal, lg(Preconditioner::Multigrid), "local/global cg + multigrid", true),
        (Method::ImplicitEuler, implicit(Preconditioner::Multigrid), "implicit Euler + multigrid", true),
        (Method::LocalGlobal, cheb(Preconditioner::Multigrid), "local/global chebyshev + multigrid", true),
    ] {
        let h = measure(&ctx, SIDE, method, settings);
        println!("{name} at {SIDE}²: {h:?} (B per particle)");
        assert!(h.model > 200.0, "the model's own heap was counted ({:.0} B per particle)", h.model);
        assert_eq!(h.multigrid, multigrid, "{name}: preconditioned by a multigrid hierarchy");
        assert!(
            h.peak <= BOUND,
            "{name} at {SIDE}²: the heap peaked at {:.0} B per particle beyond the model (build {:.0}, kept {:.0}): over {BOUND}",
            h.peak,
            h.build,
            h.kept
        );
    }
}

/// The CPU engine's f64 multigrid hierarchy of the 128² cloth's global matrix, every level stored: (its build's peak, what it
/// keeps), B per particle.
fn hierarchy() -> (f64, f64) {
    let model = springsim::model::cloth(SIDE, None).unwrap();
    let cm = springsim::reference::model::CpuModel::new(&model).unwrap();
    let params = springsim::reference::local_global::LocalGlobalParams::new(&cm, 1.0 / 60.0);
    let n = cm.n as f64;
    let base = reset_peak();
    let mg = springsim::linalg::multigrid::Multigrid::for_global(&cm, &params).unwrap();
    let kept = (HELD.load(Relaxed) - base) as f64 / n;
    let peak = (PEAK.load(Relaxed) - base) as f64 / n;
    assert!(mg.sizes().len() > 1, "a hierarchy of one level");
    (peak, kept)
}

#[test]
fn the_multigrid_build_holds_little_beyond_its_hierarchy() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (peak, kept) = hierarchy();
    println!("multigrid hierarchy of the {SIDE}² cloth: peak {peak:.0}, kept {kept:.0} B per particle");
    // the Galerkin product R·(A·P) without A·P held, the build's temporaries dropped before it
    assert!(peak <= 1.1 * kept, "the build peaked at {peak:.0} B per particle for a hierarchy of {kept:.0}");
}
