//! Integration methods, their step settings and the step plan they run with (the plan itself is made by
//! [`crate::stepping::plan`], Shinya 2004 §3).

use crate::error::{Bound, Error, Result};

/// Implicit Euler's adaptive step: the smallest step, as a fraction of the planned one, that is still
/// halved (below it a step is accepted as it is, so a frame always ends); the host's
/// `stepping::adaptive` and the device's adaptive frame both read it.
pub const ADAPTIVE_MIN_FRACTION: f64 = 1.0 / 1024.0;

/// The energy a trial step of the adaptive implicit Euler may gain beyond the external forces' work, as a
/// fraction of the model's energy scale, before it is retaken with h/2: rounding only (the energy of a
/// 512² cloth sums 1.5 million springs). Judged by the stepping policy on the engine's
/// [`crate::engine::StepsReport::energy_gain`], and by the GPU's adaptive step on the device.
pub const STEP_ENERGY_SLACK: f64 = 1e-6;

/// An integration method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Explicit (forward) Euler: x' = x + h v, v' = v + h a(x, v) (slides; Shinya eq. 10-11).
    ExplicitEuler,
    /// Symplectic (semi-implicit) Euler: v' = v + h a(x, v), x' = x + h v'.
    SymplecticEuler,
    /// The midpoint method, second-order Runge-Kutta (slides; Shinya eq. 18).
    Midpoint,
    /// Classic fourth-order Runge-Kutta (Shinya eq. 19).
    Rk4,
    /// Shinya's linearized explicit Euler (§4, eq. 34): K and D evaluated every h_nl, the force
    /// f = f₀ − K(x − x₀) − D(v − v₀) in between, a divergence check that discards the step.
    Leu,
    /// Implicit (backward) Euler, linearized once per step as Baraff & Witkin do (Kauppila §2.1, eq. 6):
    /// (M − h ∂f/∂v − h² ∂f/∂x) Δv = h (f₀ + h ∂f/∂x v₀), then x' = x + h (v₀ + Δv). The system is
    /// solved matrix-free by Jacobi-preconditioned CG (Kauppila §3.2.2, §4.2), or exactly by a block
    /// Thomas solve on chains (Witkin/Baraff/Kass §7.2, `GlobalSolve::Tridiagonal`, CPU only).
    ImplicitEuler,
    /// Liu et al. 2013 "fast mass-springs": implicit Euler as the minimisation of eq. 14 over positions x
    /// and spring directions d by block coordinate descent (§4), `local_global_iterations` local/global iterations
    /// per step from x = y. Local step: dᵢ = rᵢ(p₁ − p₂)/‖p₁ − p₂‖ (eq. 10); global step: (M̃ + h²L)x =
    /// M̃y + h²Jd + h²f_ext with the constant matrix solved by a prefactored Cholesky (CPU, faer), Jacobi-PCG
    /// or Chebyshev-accelerated Jacobi (Wang 2015) ([`GlobalSolve`]). Springs are Hookean; k_d is not used.
    LocalGlobal,
    /// Newton's method on Liu's eq. 8 (optimization implicit Euler) with a backtracking line search and a
    /// diagonal shift when the Hessian is indefinite (Martin et al. 2011, as Liu §5 runs it): the reference
    /// that local/global converges to. CPU only.
    Newton,
}

impl Method {
    /// Every method, in CLI order.
    pub const ALL: [Method; 8] = [
        Method::ExplicitEuler,
        Method::SymplecticEuler,
        Method::Midpoint,
        Method::Rk4,
        Method::Leu,
        Method::ImplicitEuler,
        Method::LocalGlobal,
        Method::Newton,
    ];

    /// The explicit methods (every method that solves no linear system): their GPU and CPU runs
    /// take the same arithmetic path, so they are compared step for step.
    pub const EXPLICIT: [Method; 5] = [Method::ExplicitEuler, Method::SymplecticEuler, Method::Midpoint, Method::Rk4, Method::Leu];

    /// Whether the method solves a linear system each step (and so takes the frame step, not Shinya's).
    pub fn is_implicit(self) -> bool {
        matches!(self, Method::ImplicitEuler | Method::LocalGlobal | Method::Newton)
    }

    /// Whether Shinya's Rayleigh damping applies to the method (its α, `stepping::plan::rayleigh_alpha`,
    /// is positive for small steps): explicit Euler, midpoint, LEU and RK4.
    pub fn has_rayleigh(self) -> bool {
        matches!(self, Method::ExplicitEuler | Method::Midpoint | Method::Leu | Method::Rk4)
    }

    /// Whether the GPU runs the method (Newton is a CPU reference).
    pub fn on_gpu(self) -> bool {
        self != Method::Newton
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Method::ExplicitEuler => "explicit-euler",
            Method::SymplecticEuler => "symplectic-euler",
            Method::Midpoint => "midpoint",
            Method::Rk4 => "rk4",
            Method::Leu => "leu",
            Method::ImplicitEuler => "implicit-euler",
            Method::LocalGlobal => "local-global",
            Method::Newton => "newton",
        }
    }

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Result<Method> {
        Method::ALL
            .iter()
            .copied()
            .find(|m| m.name() == s)
            .ok_or_else(|| Error::UnknownMethod(s.to_string(), Method::ALL.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")))
    }

    /// Force evaluations per step.
    pub fn stages(self) -> usize {
        match self {
            Method::Midpoint => 2,
            Method::Rk4 => 4,
            _ => 1,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the linear system of implicit Euler, or the global step of local/global, is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalSolve {
    /// The method's own default: `cg` for implicit Euler, `cholesky` for local/global.
    Auto,
    /// Jacobi-preconditioned conjugate gradients (CPU and GPU). For local/global it solves for the
    /// correction δ = x − x_k against the residual (so that f32 keeps the physics), with a fixed budget of
    /// `global_iterations`.
    Cg,
    /// The exact block-tridiagonal (Thomas) solve of Witkin/Baraff/Kass §7.2, CPU only, for chains:
    /// models whose springs join particles at most [`crate::cpu::implicit::MAX_CHAIN_BAND`] indices
    /// apart (a rope or hair with skip-one bend springs, the slinky).
    Tridiagonal,
    /// Local/global: the m×m matrix M̃ + h²L of the free particles factored once by faer's sparse
    /// Cholesky in f64 (symbolic once, numeric when h, masses, stiffness, pins or topology change) and
    /// solved for x, y and z as three right-hand-side columns (Liu §4). On the CPU; the GPU simulator runs
    /// the local step and the right-hand side on the GPU and transfers one vector each way per iteration.
    Cholesky,
    /// Local/global: Jacobi iterations on the global system with Chebyshev weights (Wang 2015, eq. 12),
    /// the spectral radius of the Jacobi iteration matrix estimated once by power iteration; a budget of
    /// `global_iterations` per global step, on corrections like `Cg`.
    Chebyshev,
}

impl GlobalSolve {
    /// Every name, for messages.
    pub const NAMES: &'static str = "auto, cg, tridiagonal, cholesky, chebyshev";

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Result<GlobalSolve> {
        match s {
            "auto" => Ok(GlobalSolve::Auto),
            "cg" => Ok(GlobalSolve::Cg),
            "tridiagonal" => Ok(GlobalSolve::Tridiagonal),
            "cholesky" => Ok(GlobalSolve::Cholesky),
            "chebyshev" => Ok(GlobalSolve::Chebyshev),
            _ => Err(Error::invalid("global", s, Bound::one_of(GlobalSolve::NAMES))),
        }
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            GlobalSolve::Auto => "auto",
            GlobalSolve::Cg => "cg",
            GlobalSolve::Tridiagonal => "tridiagonal",
            GlobalSolve::Cholesky => "cholesky",
            GlobalSolve::Chebyshev => "chebyshev",
        }
    }

    /// The solver `method` uses with this setting: `Auto` resolved; an error when the method has no such
    /// solver (implicit Euler: cg, tridiagonal; local/global: cholesky, cg, chebyshev).
    pub fn resolve(self, method: Method) -> Result<GlobalSolve> {
        use GlobalSolve::*;
        match (method, self) {
            (Method::LocalGlobal, Auto) => Ok(Cholesky),
            (Method::LocalGlobal, Cholesky | Cg | Chebyshev) => Ok(self),
            (Method::LocalGlobal, Tridiagonal) => {
                Err(Error::invalid("global", self.name(), Bound::Unsupported("local-global takes cholesky, cg or chebyshev".into())))
            }
            (Method::ImplicitEuler, Auto) => Ok(Cg),
            (Method::ImplicitEuler, Cg | Tridiagonal) => Ok(self),
            (Method::ImplicitEuler, _) => {
                Err(Error::invalid("global", self.name(), Bound::Unsupported("implicit-euler takes cg or tridiagonal".into())))
            }
            // the explicit methods and Newton solve nothing the setting chooses
            (_, s) => Ok(s),
        }
    }
}

/// The precision of the triangular solves of the `cholesky` global step (local/global, on the CPU and in
/// the GPU's host-driven frame). The global step solves A δ = r for the correction δ with the residual r
/// formed in f64 (Liu eq. 14 in correction form), so a single-precision factor changes δ by about 1e-7 of
/// itself: far below the error of 10 local/global iterations (eq. 15). Measured on a 2-core VM (CPU time
/// on one core): the solves 1.36× faster on the 81×81 curtain and 1.8× on the 256×256 cloth (half the
/// bytes per solve).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FactorPrecision {
    /// An f32 copy of the f64 factor, rounded once per factorisation (the default).
    #[default]
    F32,
    /// The f64 factor: the reference.
    F64,
}

impl FactorPrecision {
    /// Every name, for messages.
    pub const NAMES: &'static str = "f32, f64";

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Result<FactorPrecision> {
        match s {
            "f32" => Ok(FactorPrecision::F32),
            "f64" => Ok(FactorPrecision::F64),
            _ => Err(Error::invalid("factor-precision", s, Bound::one_of(FactorPrecision::NAMES))),
        }
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            FactorPrecision::F32 => "f32",
            FactorPrecision::F64 => "f64",
        }
    }
}

/// The preconditioner of the CG solves: local/global's iterative global steps (`cg`, `chebyshev`) and
/// implicit Euler's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preconditioner {
    /// Jacobi for local/global; multigrid for implicit Euler, on both backends. See
    /// [`Preconditioner::resolve`].
    #[default]
    Auto,
    /// 1/A_ii (Kauppila §4.2): free to build and to apply; slow on large, stiff cloth (the global
    /// matrix of a 256×256 curtain has a condition number near 3e5).
    Jacobi,
    /// A multigrid V-cycle: for local/global's constant matrix the smoothed-aggregation hierarchy
    /// ([`crate::linalg::multigrid`]), built once per h; for implicit Euler's matrix, which changes every
    /// step, the aggregation hierarchy of [`crate::linalg::spring_mg`], whose blocks are re-summed each
    /// step. Several times the work of a Jacobi iteration, far fewer iterations.
    Multigrid,
}

impl Preconditioner {
    /// Every name, for messages.
    pub const NAMES: &'static str = "auto, jacobi, multigrid";

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Result<Preconditioner> {
        match s {
            "auto" => Ok(Preconditioner::Auto),
            "jacobi" => Ok(Preconditioner::Jacobi),
            "multigrid" => Ok(Preconditioner::Multigrid),
            _ => Err(Error::invalid("preconditioner", s, Bound::one_of(Preconditioner::NAMES))),
        }
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Preconditioner::Auto => "auto",
            Preconditioner::Jacobi => "jacobi",
            Preconditioner::Multigrid => "multigrid",
        }
    }

    /// The preconditioner `auto` stands for with `method` (the one rule of both backends): multigrid for
    /// implicit Euler, whose Jacobi-PCG needs O(h√k₀) iterations (Shinya §5) and leaves fine cloth
    /// stretched, Jacobi otherwise. Any other choice stands for itself. (The GPU backend's implicit
    /// multigrid falls back to Jacobi on a model too small to coarsen.)
    pub fn resolve(self, method: Method) -> Preconditioner {
        match (self, method) {
            (Preconditioner::Auto, Method::ImplicitEuler) => Preconditioner::Multigrid,
            (Preconditioner::Auto, _) => Preconditioner::Jacobi,
            (p, _) => p,
        }
    }

    /// An error unless this preconditioner fits the method and its solver setting: multigrid
    /// preconditions local/global's iterative global steps (`cg`, and `chebyshev`, whose iteration it
    /// becomes) and implicit Euler's CG; not Cholesky. The methods without a linear solve ignore it, as
    /// they ignore `global`.
    pub fn check(self, method: Method, global: GlobalSolve) -> Result<()> {
        let fits = match (self, method) {
            (Preconditioner::Jacobi | Preconditioner::Auto, _) => true,
            (Preconditioner::Multigrid, Method::LocalGlobal) => matches!(global.resolve(method)?, GlobalSolve::Cg | GlobalSolve::Chebyshev),
            (Preconditioner::Multigrid, _) => true,
        };
        if fits {
            Ok(())
        } else {
            Err(Error::invalid(
                "preconditioner",
                self.name(),
                Bound::Unsupported(format!(
                    "multigrid preconditions local-global with --global cg or chebyshev only (here: {} with {})",
                    method.name(),
                    global.name()
                )),
            ))
        }
    }
}

/// How the step is chosen and the knobs of the explicit methods.
#[derive(Clone, Debug, PartialEq)]
pub struct StepSettings {
    /// The frame step (s): one `step_frame` advances the simulation this much.
    pub frame_dt: f64,
    /// h = substep_scale · h_max. Default 1/√F_safe with Shinya's safety factor F_safe = 1.5.
    pub substep_scale: f64,
    /// A fixed step instead of the stable one (the frame is then ⌈frame_dt / h⌉ steps of frame_dt / that).
    pub fixed_h: Option<f64>,
    /// Rayleigh damping D = d₀M + αK with Shinya's α (eq. 31, eq. 33). Off: only d₀ and spring damping.
    pub rayleigh: bool,
    /// LEU: the interval h_nl at which K and D are re-evaluated (s). Default 1 ms: Shinya's 10 ms suits a
    /// slowly draping cloth, but on the swinging curtain a linearization held for 1/300 s already gains
    /// energy (+0.33 J after 1 s, where explicit Euler loses 0.19 J) and 1/90 s gains 9.6 J. Finer models
    /// need less: the 512² cloth diverges with 1 ms (at frame 3 on the CPU) and not with 0.1 ms; the
    /// guard's `recover` halves it (`crate::stepping`).
    pub leu_interval: f64,
    /// A speed (m/s) above which a step counts as diverging (Shinya §4, step 2.3): LEU discards and
    /// retakes the step; after a frame with such a step every explicit method recomputes k₀ (§5.3).
    pub speed_limit: f64,
    /// Power iterations for k₀.
    pub power_iterations: usize,
    /// Implicit Euler: CG stops when ‖r‖ ≤ ε‖b‖ (relative residual of the unpreconditioned system).
    pub cg_tolerance: f64,
    /// Implicit Euler: the CG iteration budget per step (the GPU always records this many iterations;
    /// those after convergence are no-ops).
    pub cg_max_iterations: usize,
    /// Implicit Euler: start CG from the last step's Δv (a warm start) instead of zero. Off by default:
    /// measured on the 81×81 curtain at h = 1/30 (60 frames, CPU), a cold start with a 30-iteration budget
    /// stays bounded (max strain 0.18) while the warm start diverges (strain 117; with 10 iterations both
    /// fail, cold 8.3, warm 1.8e4): the truncated solve's error accumulates through the guess.
    pub cg_warm_start: bool,
    /// Implicit Euler and local/global: the linear solver.
    pub global: GlobalSolve,
    /// Local/global: local/global iterations per step (Liu §5: 10 is the best trade-off).
    pub local_global_iterations: usize,
    /// Local/global with `cg` or `chebyshev`: the iteration budget of each global step.
    pub global_iterations: usize,
    /// Local/global with `cg`: the preconditioner of the global step.
    pub preconditioner: Preconditioner,
    /// Local/global with `cholesky`: the precision of the triangular solves.
    pub factor_precision: FactorPrecision,
    /// Newton: the iteration limit per step (it stops earlier when ‖∇g‖ ≤ `newton_tolerance`·‖∇g(x₀)‖).
    pub newton_iterations: usize,
    /// Newton: the relative gradient norm at which it stops.
    pub newton_tolerance: f64,
    /// Implicit Euler: Kauppila §3.2.3's adaptive step (on by default): a step that leaves a spring
    /// strained beyond `strain_limit`, or that changes a spring's length by more than
    /// `step_strain_limit` of its rest length, is discarded and retaken with h/2; after two good steps h
    /// doubles again (never above the frame step). Off, every frame takes its planned steps as they come,
    /// and a linearized step of h = 1/30 s can stretch a fine cloth's springs several times over (the
    /// particles next to a pin fall h²g freely while the cloth is flat: the clamped Jacobian has no
    /// transverse stiffness at rest length).
    pub adaptive: bool,
    /// Implicit Euler: the strain |l − L|/L above which an adaptive step is discarded (default 1.0: a
    /// spring at twice its rest length; Kauppila's 10% as a total strain would keep a sagging cloth,
    /// whose springs hang at 15–20%, at the smallest step forever).
    pub strain_limit: f64,
    /// Implicit Euler: the change of a spring's length within one step, |l' − l|/L, above which an
    /// adaptive step is discarded (default 0.1: "no spring may deform more than 10% in a step", the rule
    /// of thumb Kauppila takes from Bridson et al. 2002).
    pub step_strain_limit: f64,
    /// Implicit Euler's adaptive step: a step whose CG ended with a relative residual above this is
    /// discarded and retaken with h/2 as well (default 0.1). The system's condition number grows as
    /// h²k₀ (Shinya §5.2), so on a fine, stiff cloth a fixed budget reaches only part way at h = 1/30 s,
    /// and a step that far from its solution stretches springs where the cloth is held. (0.01 held the
    /// 256×256 cloth's strain to 0.10 instead of 0.16 for 13× the CG iterations.)
    pub retry_residual: f64,
    /// Implicit Euler's adaptive step on the GPU's pipelined frame ([`crate::GpuSimulator::encode_frame`]):
    /// the frame is recorded once, with room for this many halvings (three trial slots each: the
    /// discarded step and the climb back, two steps at each halved h; default 4). A frame that needs
    /// more takes its remaining steps at the planned h, accepted as they are and counted in the frame's
    /// report ([`crate::FrameReport::forced_steps`]), and the frames recorded after that report get
    /// twice the room, up to four times this. The blocking `step_frame` halves without a bound (down
    /// to h/1024).
    pub max_frame_halvings: usize,
    /// Implicit Euler: use the exact spring Jacobian (Kauppila §2.2). Off (default): its transverse term
    /// k(1 − L/l)(I − n̂n̂ᵀ) is clamped at zero for compressed springs (Choi & Ko), which keeps the matrix
    /// symmetric positive definite; the exact one is indefinite for a compressed spring with large h²k/m
    /// and CG may then break down (reported as [`Error::CgBreakdown`]).
    pub exact_jacobian: bool,
    /// The explicit family: run with a step above Shinya's h_max (the plan refuses it otherwise, with
    /// [`Error::Unstable`]); the divergence guard then reports what happens.
    pub allow_unstable: bool,
    /// The divergence guard of the stepping policy ([`crate::stepping::guard`]).
    pub guard: GuardSettings,
}

/// What the divergence guard does when a frame diverges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DivergencePolicy {
    /// Record the first divergence (its frame and cause) and go on stepping; the bench's default (its
    /// record says `diverged` and it exits with status 3).
    Report,
    /// Roll the state back to the last checkpoint, halve h and step again (Kauppila §3.2.3's adaptive step,
    /// Shinya §4's LEU rollback), recording it; the library's and the demo's default.
    #[default]
    Recover,
    /// No checks at all (no cost).
    Ignore,
}

impl DivergencePolicy {
    /// Every name, for messages.
    pub const NAMES: &'static str = "report, recover, ignore";

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Result<DivergencePolicy> {
        match s {
            "report" => Ok(DivergencePolicy::Report),
            "recover" => Ok(DivergencePolicy::Recover),
            "ignore" => Ok(DivergencePolicy::Ignore),
            _ => Err(Error::invalid("divergence", s, Bound::one_of(DivergencePolicy::NAMES))),
        }
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            DivergencePolicy::Report => "report",
            DivergencePolicy::Recover => "recover",
            DivergencePolicy::Ignore => "ignore",
        }
    }
}

/// The divergence guard's thresholds (see [`crate::stepping::guard`] for the rules).
#[derive(Clone, Debug, PartialEq)]
pub struct GuardSettings {
    /// What a divergence does.
    pub policy: DivergencePolicy,
    /// A strain |l − L|/L above which a frame has diverged. Default 2: a spring at three times its rest
    /// length (the scenes settle below 0.25; implicit Euler's first frames at h = 1/30 on the curtain reach
    /// 1.3 and recover; the ruined cloth showed 14.7).
    pub strain_limit: f64,
    /// The energy gain allowed beyond the external forces' work, as a fraction of the model's energy scale
    /// (Σ mᵢ|g| times the model's extent, plus its initial kinetic, spring and field energy), measured from
    /// the energy at the start. Default 0.1. Measured with every scene's defaults (60 frames, CPU), the
    /// rises beyond it are implicit Euler's first frames at h = 1/30 (curtain 20%, cloth 22%, drape 11%,
    /// hair 43%: the linearized step overshoots, strain 1.3 on the curtain) and explicit Euler and LEU on
    /// the orbit (spiralling out); every other method and scene stays within it. The curtain's
    /// warm-started CG gains 7 J, 50%.
    pub energy_tolerance: f64,
    /// A solver (implicit Euler's CG, Newton) whose final relative residual exceeds both its own tolerance
    /// and this limit has stopped short: the frame has diverged. Default 0.5 (the solve removed less than
    /// half of the initial residual); a budget-limited solve that converges part way is not a divergence.
    pub solver_residual_limit: f64,
    /// Check every this many frames; 0: the engine's default (every frame on the CPU, whose check reads
    /// nothing back; every 8 on the GPU, whose check reads the state back).
    pub every: usize,
    /// Recover: the most halvings of h before the divergence is an [`Error::Diverged`].
    pub max_halvings: u32,
}

impl Default for GuardSettings {
    fn default() -> Self {
        GuardSettings {
            policy: DivergencePolicy::Recover,
            strain_limit: 2.0,
            energy_tolerance: 0.1,
            solver_residual_limit: 0.5,
            every: 0,
            max_halvings: 10,
        }
    }
}

impl GuardSettings {
    /// Checks the thresholds; the error names the field.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [("guard.strain_limit", self.strain_limit), ("guard.solver_residual_limit", self.solver_residual_limit)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(name, v, Bound::Positive));
            }
        }
        if !(self.energy_tolerance.is_finite() && self.energy_tolerance >= 0.0) {
            return Err(Error::invalid("guard.energy_tolerance", self.energy_tolerance, Bound::NonNegative));
        }
        if self.every > 1_000_000 {
            return Err(Error::invalid("guard.every", self.every, Bound::int_range(0, 1_000_000)));
        }
        if self.max_halvings > 50 {
            return Err(Error::invalid("guard.max_halvings", self.max_halvings, Bound::int_range(0, 50)));
        }
        Ok(())
    }
}

/// Shinya's safety factor on k₀.
pub const F_SAFE: f64 = 1.5;

impl Default for StepSettings {
    fn default() -> Self {
        StepSettings {
            frame_dt: 1.0 / 30.0,
            substep_scale: 1.0 / F_SAFE.sqrt(),
            fixed_h: None,
            rayleigh: true,
            leu_interval: 1.0e-3,
            speed_limit: 50.0,
            power_iterations: 300,
            cg_tolerance: 1e-6,
            cg_max_iterations: 100,
            cg_warm_start: false,
            global: GlobalSolve::Auto,
            local_global_iterations: 10,
            global_iterations: 20,
            preconditioner: Preconditioner::Auto,
            factor_precision: FactorPrecision::F32,
            newton_iterations: 50,
            newton_tolerance: 1e-10,
            adaptive: true,
            strain_limit: 1.0,
            step_strain_limit: 0.1,
            retry_residual: 0.1,
            max_frame_halvings: 4,
            exact_jacobian: false,
            allow_unstable: false,
            guard: GuardSettings::default(),
        }
    }
}

impl StepSettings {
    /// Checks the settings; the error names the field.
    pub fn validate(&self) -> Result<()> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::invalid(name, v, Bound::Positive))
            }
        };
        pos("frame_dt", self.frame_dt)?;
        pos("substep_scale", self.substep_scale)?;
        pos("leu_interval", self.leu_interval)?;
        pos("speed_limit", self.speed_limit)?;
        if let Some(h) = self.fixed_h {
            pos("h", h)?;
        }
        pos("strain_limit", self.strain_limit)?;
        pos("step_strain_limit", self.step_strain_limit)?;
        pos("retry_residual", self.retry_residual)?;
        if !(self.cg_tolerance.is_finite() && self.cg_tolerance >= 0.0) {
            return Err(Error::invalid("cg_tolerance", self.cg_tolerance, Bound::NonNegative));
        }
        if self.cg_max_iterations == 0 || self.cg_max_iterations > 100_000 {
            return Err(Error::invalid("cg_max_iterations", self.cg_max_iterations, Bound::int_range(1, 100_000)));
        }
        if self.max_frame_halvings > 64 {
            return Err(Error::invalid("max_frame_halvings", self.max_frame_halvings, Bound::int_range(0, 64)));
        }
        for (name, v) in [
            ("local_global_iterations", self.local_global_iterations),
            ("global_iterations", self.global_iterations),
            ("newton_iterations", self.newton_iterations),
        ] {
            if v == 0 || v > 1_000_000 {
                return Err(Error::invalid(name, v, Bound::int_range(1, 1_000_000)));
            }
        }
        if !(self.newton_tolerance.is_finite() && self.newton_tolerance >= 0.0) {
            return Err(Error::invalid("newton_tolerance", self.newton_tolerance, Bound::NonNegative));
        }
        if self.power_iterations == 0 {
            return Err(Error::invalid("power_iterations", 0usize, Bound::at_least(1.0)));
        }
        self.guard.validate()
    }
}

/// The step plan: the stable step of Shinya §3 and what follows from it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepPlan {
    /// Largest eigenvalue of M⁻¹K (1/s²), by power iteration.
    pub k0: f64,
    /// The stability limit for the method (s).
    pub h_max: f64,
    /// The step taken (s).
    pub h: f64,
    /// Steps per frame.
    pub substeps: usize,
    /// The Rayleigh α (s) of D = d₀M + αK.
    pub alpha: f64,
    /// LEU: re-linearize every this many steps.
    pub relinearize_every: usize,
}
