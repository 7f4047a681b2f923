//! The CPU engine: every method in f64 on the kernels of [`crate::reference`], run in parallel on rayon
//! (the global pool, or a pool of its own: [`CpuEngine::with_threads`]), with the sparse solvers of
//! [`crate::linalg`]. Users without a GPU run on it; the tests hold the GPU to it. Safe Rust except
//! [`fast`], the explicit methods' fused force kernel (its AVX loads and stores), and no thread outlives a
//! call except the pool's, which sleep between jobs.

pub mod collide;
pub mod contact;
pub mod explicit;
pub mod fast;
pub mod fields;
pub mod forces;
pub mod implicit;
pub mod leu;
pub mod local_global;
pub mod newton;
pub mod power;
pub mod self_collision;
pub mod strain_limit;
pub mod sweep;

use crate::error::{Bound, Error, Result};
use crate::method::{Method, StepPlan, StepSettings};
use crate::model::Model;
pub use crate::reference::model::{CpuModel, V3};

use crate::engine::{check_state_len, Engine, PassTally, StepsReport};
pub use crate::linalg::{multigrid, ordering, sparse};
use forces::StepParams;

/// Working memory of the CPU steps, allocated once.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// The spring forces of [`forces::accelerations`] (sized there on first use).
    pub(crate) spring_f: Vec<V3>,
    pub(crate) xt: Vec<V3>,
    pub(crate) vt: Vec<V3>,
    pub(crate) xt2: Vec<V3>,
    pub(crate) vt2: Vec<V3>,
    pub(crate) acc_x: Vec<V3>,
    pub(crate) acc_v: Vec<V3>,
    /// The explicit methods' fused kernel ([`fast`]): its plan (made on first use for the current
    /// thread count) and working memory; `None`: they run the plain reference passes.
    pub(crate) fast: Option<(fast::ForcePlan, fast::FastScratch)>,
}

impl Scratch {
    pub(crate) fn new(n: usize, springs: usize) -> Self {
        let z = vec![V3::zeros(); n];
        Scratch {
            spring_f: Vec::with_capacity(springs),
            xt: z.clone(),
            vt: z.clone(),
            xt2: z.clone(),
            vt2: z.clone(),
            acc_x: z.clone(),
            acc_v: z,
            fast: Some(Default::default()),
        }
    }
}

/// The engine's estimated bytes for `p` particles and `s` springs with `method` (checked before it
/// allocates): the f64 model, the state and its next copy (96 B a particle), the scratch vectors (144 B a
/// particle, 24 B a spring), and the method's own structures: implicit Euler's spring blocks and CG
/// vectors and its multigrid hierarchy (the default preconditioner: the fine level's edge and incidence
/// lists, block inverses and V-cycle vectors, the coarse levels' share, and the aggregation's scalar graph
/// while it is built: about 70 B a spring and 130 B a particle), LEU's linearization, local/global's spring directions, global matrix and vectors (its
/// Cholesky factor is checked apart, once its size is known), Newton's 3m×3m Hessian.
pub fn engine_bytes(p: u64, s: u64, method: Method) -> u64 {
    let base = crate::memory::cpu_model_bytes(p, s) + 96 * p + 144 * p + 24 * s;
    base + match method {
        Method::ImplicitEuler => 56 * s + 56 * p + 5 * 24 * p + 70 * s + 130 * p,
        Method::Leu => 96 * s + 96 * p,
        Method::LocalGlobal => 24 * s + 16 * (p + s) + 8 * 24 * p,
        Method::Newton => 9 * 8 * (p + 2 * s) + 8 * 24 * p,
        _ => 0,
    }
}

/// The solver must suit the method, and the tridiagonal solve needs a chain: an error at construction
/// otherwise.
fn check_cpu_settings(m: &CpuModel, method: Method, s: &StepSettings) -> Result<()> {
    s.global.resolve(method)?;
    s.preconditioner.check(method, s.global)?;
    if method == Method::ImplicitEuler && s.global == crate::method::GlobalSolve::Tridiagonal {
        let w = implicit::chain_band(m);
        if w > implicit::MAX_CHAIN_BAND {
            return Err(Error::invalid(
                "global",
                "tridiagonal",
                Bound::Unsupported(format!(
                    "the tridiagonal solve needs a chain (springs at most {} indices apart); this model's springs span {w} (use --global cg)",
                    implicit::MAX_CHAIN_BAND
                )),
            ));
        }
    }
    Ok(())
}

/// The CPU simulator: the f64 reference of every method.
pub struct CpuEngine {
    model: CpuModel,
    method: Method,
    settings: StepSettings,
    plan: StepPlan,
    /// Positions.
    pub x: Vec<V3>,
    /// Velocities.
    pub v: Vec<V3>,
    x_next: Vec<V3>,
    v_next: Vec<V3>,
    scratch: Scratch,
    /// Strain limiting's scratch state.
    strain: strain_limit::StrainScratch,
    lin: leu::Linearization,
    steps_since_lin: usize,
    leu_retries: usize,
    imp: implicit::ImplicitScratch,
    /// Implicit: the last step's solve, and the iterations summed since the last frame report.
    last_cg: implicit::CgReport,
    cg_iterations: usize,
    /// Implicit: a solver failure of `step`, returned by the next `step_frame`.
    solver_error: Option<Error>,
    /// Local/global: the solver (built on first use, rebuilt when the pins change).
    local_global: Option<local_global::LocalGlobal>,
    /// Newton: the solver (built on first use, rebuilt when the pins change).
    newton: Option<newton::Newton>,
    /// Local/global and Newton: the last step's ‖∇g‖/‖∇g(y)‖.
    last_residual: f64,
    /// The cursor spring (applied by the explicit methods only: `model.cursor` mirrors it for them).
    cursor: Option<crate::model::Cursor>,
    /// The thread pool the parallel passes run on ([`CpuEngine::with_threads`]); `None`: rayon's
    /// global pool.
    pool: Option<std::sync::Arc<rayon::ThreadPool>>,
    /// Simulated time (s): the end of the last accepted step (moving colliders and pins follow it;
    /// [`CpuModel::time`] holds the start of the current batch, for the gusts).
    time: f64,
    /// The adaptive step's pending trial step (s), added to the time when it is accepted.
    trial_h: f64,
    /// The time at the divergence guard's checkpoint.
    checkpoint_time: f64,
    /// The velocities after the aerodynamic wind's impulse of the current step (see [`fields`]).
    kick_v: Vec<V3>,
}

impl CpuEngine {
    /// Builds the engine. It steps once the stepping policy has given it a plan
    /// ([`Engine::set_plan`]); `springsim::CpuEngine::new` does both.
    pub fn new(model: &Model, method: Method, settings: StepSettings) -> Result<Self> {
        settings.validate()?;
        let (p, s) = (model.n_particles() as u64, model.springs.len() as u64);
        crate::memory::check(&format!("the CPU engine's {} for {p} particles and {s} springs", method.name()), engine_bytes(p, s, method))?;
        let cm = CpuModel::new(model)?;
        check_cpu_settings(&cm, method, &settings)?;
        let x: Vec<V3> = model.positions.iter().map(|p| V3::from(*p)).collect();
        let v: Vec<V3> = model.velocities.iter().zip(&model.pinned).map(|(v, &p)| if p { V3::zeros() } else { V3::from(*v) }).collect();
        let n = cm.n;
        let scratch = Scratch::new(n, cm.end_a.len());
        Ok(CpuEngine {
            x_next: x.clone(),
            v_next: v.clone(),
            x,
            v,
            model: cm,
            method,
            settings,
            plan: StepPlan::default(),
            scratch,
            strain: strain_limit::StrainScratch::new(strain_limit::VelocityRule::of(method)),
            lin: leu::Linearization::default(),
            steps_since_lin: usize::MAX,
            leu_retries: 0,
            imp: implicit::ImplicitScratch::default(),
            last_cg: implicit::CgReport::default(),
            cg_iterations: 0,
            solver_error: None,
            local_global: None,
            newton: None,
            last_residual: 0.0,
            cursor: None,
            pool: None,
            time: 0.0,
            trial_h: 0.0,
            checkpoint_time: 0.0,
            kick_v: Vec::new(),
        })
    }

    /// Runs the parallel passes on a pool of `threads` threads of its own (1: everything on the calling
    /// thread's pool worker) instead of rayon's global pool. The pool's threads sleep between jobs and
    /// end when the simulator is dropped.
    pub fn with_threads(mut self, threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(Error::invalid("threads", threads, Bound::min_count(1)));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("springsim-cpu-{i}"))
            .build()
            .map_err(|e| Error::invalid("threads", threads, Bound::Other(format!("the thread pool could not be started: {e}"))))?;
        self.pool = Some(std::sync::Arc::new(pool));
        Ok(self)
    }

    /// Whether the explicit methods run the fused force kernel of [`fast`] (the default: bit for bit the
    /// same results, faster) or the plain reference passes (`false`; for comparisons and benchmarks).
    pub fn set_fast_kernel(&mut self, on: bool) {
        self.scratch.fast = on.then(Default::default);
    }

    /// The threads the parallel passes run on.
    pub fn threads(&self) -> usize {
        self.pool.as_ref().map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
    }

    /// Runs `f` on this simulator on a worker of its pool (of rayon's global pool when it has none), so
    /// that the many short parallel passes of a frame fork from inside the pool: entering a pool from
    /// outside blocks the caller until a sleeping worker wakes, which on a loaded machine costs more
    /// than a pass over the curtain.
    fn in_pool<R: Send>(&mut self, f: impl FnOnce(&mut Self) -> R + Send) -> R {
        match self.pool.clone() {
            Some(pool) => pool.install(|| f(self)),
            None => rayon::scope(|_| f(self)),
        }
    }

    /// Simulated time (s): the end of the last accepted step.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The laid-out model.
    pub fn model(&self) -> &CpuModel {
        &self.model
    }

    /// The step parameters of the current plan.
    pub fn step_params(&self) -> StepParams {
        StepParams { h: self.plan.h, alpha: self.plan.alpha }
    }

    /// The implicit step's options from the settings.
    pub fn implicit_options(&self) -> implicit::ImplicitOptions {
        implicit::ImplicitOptions {
            exact_jacobian: self.settings.exact_jacobian,
            tol: self.settings.cg_tolerance,
            max_iter: self.settings.cg_max_iterations,
            tridiagonal: self.settings.global == crate::method::GlobalSolve::Tridiagonal,
            warm_start: self.settings.cg_warm_start,
            multigrid: self.settings.preconditioner.resolve(crate::method::Method::ImplicitEuler)
                == crate::method::Preconditioner::Multigrid,
        }
    }

    /// Implicit Euler: one step of size h from the current state; on success the state advances and the
    /// solve is returned. On failure the state is unchanged.
    pub fn implicit_step_h(&mut self, h: f64) -> Result<implicit::CgReport> {
        let o = self.implicit_options();
        let v_in = if fields::wind_kick(&self.model, h, &self.x, &self.v, &mut self.kick_v) { &self.kick_v } else { &self.v };
        let rep = implicit::implicit_step(&self.model, h, &o, &self.x, v_in, &mut self.x_next, &mut self.v_next, &mut self.imp)?;
        std::mem::swap(&mut self.x, &mut self.x_next);
        std::mem::swap(&mut self.v, &mut self.v_next);
        collide::finish_step(&mut self.model, self.time + h, h, &mut self.x, &mut self.v, &mut self.strain);
        self.time += h;
        self.last_cg = rep;
        self.cg_iterations += rep.iterations;
        Ok(rep)
    }

    /// Implicit Euler: the last step's system and Δv (for checks).
    pub fn implicit_scratch(&self) -> &implicit::ImplicitScratch {
        &self.imp
    }

    /// Implicit Euler's trial step of size `h` for the adaptive step (Kauppila §3.2.3): the new state goes
    /// to the engine's second buffer, the current one stays until [`Engine::accept_trial`].
    fn try_implicit_step(&mut self, h: f64) -> Result<StepsReport> {
        let o = self.implicit_options();
        self.model.time = self.time;
        let v_in = if fields::wind_kick(&self.model, h, &self.x, &self.v, &mut self.kick_v) { &self.kick_v } else { &self.v };
        let rep = implicit::implicit_step(&self.model, h, &o, &self.x, v_in, &mut self.x_next, &mut self.v_next, &mut self.imp)?;
        self.last_cg = rep;
        collide::finish_step(&mut self.model, self.time + h, h, &mut self.x_next, &mut self.v_next, &mut self.strain);
        self.trial_h = h;
        let strained = implicit::strained(&self.model, self.settings.strain_limit, self.settings.step_strain_limit, &self.x, &self.x_next);
        // the cursor's spring does work no bound covers: no energy judgement while it acts
        let energy_gain = (self.model.cursor.is_none() && !self.model.unbounded_work()).then(|| {
            crate::reference::signals::step_energy(&self.model, &self.x, &self.v, &self.x_next, &self.v_next).gain(&self.model, h)
        });
        Ok(StepsReport { iterations: rep.iterations, residual: rep.residual, strained, energy_gain, ..Default::default() })
    }

    /// Local/global: the solver for steps of size h, built or refactored when needed.
    pub fn local_global(&mut self, h: f64) -> Result<&mut local_global::LocalGlobal> {
        let s = &self.settings;
        let fresh = match &self.local_global {
            Some(lg) => lg.global() != s.global.resolve(Method::LocalGlobal)?,
            None => true,
        };
        if fresh {
            self.local_global = Some(local_global::LocalGlobal::new(&self.model, h, s.global, s.cg_tolerance, s.global_iterations)?);
        }
        let lg = self.local_global.as_mut().ok_or_else(|| Error::internal_solver("local/global solver missing"))?;
        lg.set_h(&self.model, h)?;
        lg.set_preconditioner(&self.model, s.preconditioner)?;
        lg.set_factor_precision(s.factor_precision);
        lg.tol = s.cg_tolerance;
        lg.budget = s.global_iterations;
        Ok(lg)
    }

    /// Newton: the solver for steps of size h, built when needed.
    pub fn newton(&mut self, h: f64) -> Result<&mut newton::Newton> {
        if self.newton.is_none() {
            self.newton = Some(newton::Newton::new(&self.model, h)?);
        }
        let nt = self.newton.as_mut().ok_or_else(|| Error::internal_solver("Newton solver missing"))?;
        nt.set_h(&self.model, h);
        Ok(nt)
    }

    /// Local/global or Newton: one step of size h; the state advances on success and stays on failure.
    /// Returns the solver iterations (the global solver's for local/global, Newton's for Newton).
    fn solver_step(&mut self, h: f64) -> Result<usize> {
        let (iters, max_it, tol) = (self.settings.local_global_iterations, self.settings.newton_iterations, self.settings.newton_tolerance);
        if self.model.has_motion() {
            // local/global projects every iteration onto the colliders where they are at the step's end
            self.model.place(self.time + h);
        }
        let kicked = fields::wind_kick(&self.model, h, &self.x, &self.v, &mut self.kick_v);
        let its = if self.method == Method::Newton {
            self.newton(h)?;
            let nt = self.newton.as_mut().ok_or_else(|| Error::internal_solver("Newton solver missing"))?;
            let v_in = if kicked { &self.kick_v } else { &self.v };
            let rep = nt.step(&self.model, max_it, tol, &self.x, v_in, &mut self.x_next, &mut self.v_next)?;
            self.last_residual = rep.residual;
            rep.iterations
        } else {
            self.local_global(h)?;
            let lg = self.local_global.as_mut().ok_or_else(|| Error::internal_solver("local/global solver missing"))?;
            let v_in = if kicked { &self.kick_v } else { &self.v };
            let rep = lg.step(&self.model, iters, &self.x, v_in, &mut self.x_next, &mut self.v_next)?;
            self.last_residual = rep.residual;
            rep.solver_iterations
        };
        std::mem::swap(&mut self.x, &mut self.x_next);
        std::mem::swap(&mut self.v, &mut self.v_next);
        // the velocity response after the step (local/global also projected x after every iteration)
        collide::finish_step(&mut self.model, self.time + h, h, &mut self.x, &mut self.v, &mut self.strain);
        self.time += h;
        Ok(its)
    }

    /// One step of the current method with the current plan.
    pub fn step(&mut self) {
        self.model.time = self.time;
        self.in_pool(|s| s.substep())
    }

    /// The body of [`CpuEngine::step`].
    fn substep(&mut self) {
        let p = self.step_params();
        let kicked = !matches!(self.method, Method::ImplicitEuler | Method::LocalGlobal | Method::Newton)
            && fields::wind_kick(&self.model, p.h, &self.x, &self.v, &mut self.kick_v);
        let m = &self.model;
        let s = &mut self.scratch;
        let v_in = if kicked { &self.kick_v } else { &self.v };
        match self.method {
            Method::ExplicitEuler => explicit::euler_step(m, &p, &self.x, v_in, &mut self.x_next, &mut self.v_next, s),
            Method::SymplecticEuler => explicit::symplectic_step(m, &p, &self.x, v_in, &mut self.x_next, &mut self.v_next, s),
            Method::Midpoint => explicit::midpoint_step(m, &p, &self.x, v_in, &mut self.x_next, &mut self.v_next, s),
            Method::Rk4 => explicit::rk4_step(m, &p, &self.x, v_in, &mut self.x_next, &mut self.v_next, s),
            Method::Leu => {
                if self.steps_since_lin >= self.plan.relinearize_every {
                    leu::leu_linearize(m, &p, &self.x, v_in, &mut self.lin, s);
                    self.steps_since_lin = 0;
                }
                let diverged =
                    leu::leu_step(m, &p, &self.lin, self.settings.speed_limit, &self.x, v_in, &mut self.x_next, &mut self.v_next);
                if diverged {
                    leu::leu_fixup(m, &p, &mut self.lin, &self.x, v_in, &mut self.x_next, &mut self.v_next, s);
                    self.steps_since_lin = 0;
                    self.leu_retries += 1;
                }
                self.steps_since_lin += 1;
            }
            Method::ImplicitEuler => {
                // the state is swapped inside; a failure leaves it unchanged and is reported by step_frame
                if let Err(e) = self.implicit_step_h(p.h) {
                    self.solver_error = Some(e);
                }
                return;
            }
            Method::LocalGlobal | Method::Newton => {
                match self.solver_step(p.h) {
                    Ok(its) => self.cg_iterations += its,
                    Err(e) => self.solver_error = Some(e),
                }
                return;
            }
        }
        std::mem::swap(&mut self.x, &mut self.x_next);
        std::mem::swap(&mut self.v, &mut self.v_next);
        collide::finish_step(&mut self.model, self.time + p.h, p.h, &mut self.x, &mut self.v, &mut self.strain);
        self.time += p.h;
    }

    // --- viewer additions (interaction): keep this block together ---

    /// Overwrites one particle's position and velocity and pins or frees it (1/m or 0): the CPU twin of
    /// the GPU engine's (see [`crate::Simulator::set_particle`]).
    pub fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        let n = self.model.n;
        if i >= n {
            return Err(Error::invalid("particle", i, Bound::index(n)));
        }
        let pin_changed = (self.model.inv_mass[i] == 0.0) != pinned;
        self.model.inv_mass[i] = if pinned { 0.0 } else { 1.0 / self.model.mass[i] };
        self.x[i] = V3::from(x);
        self.v[i] = if pinned { V3::zeros() } else { V3::from(v) };
        self.steps_since_lin = usize::MAX;
        if pin_changed {
            // the free set changed, and the global matrix and the Hessian's pattern with it (moving a pinned
            // particle only moves the right-hand side)
            self.local_global = None;
            self.newton = None;
        }
        Ok(())
    }

    /// Whether particle `i` is pinned now (1/m = 0).
    pub fn is_pinned(&self, i: usize) -> bool {
        self.model.inv_mass.get(i).is_some_and(|&w| w == 0.0)
    }

    /// Sets or clears the cursor spring (the explicit methods' mouse drag, [`crate::model::Cursor`]):
    /// the CPU twin of the GPU engine's (see [`crate::Simulator::set_cursor`]). The implicit methods keep it but do not
    /// apply it (they drag by a position constraint, `set_particle`). Takes effect at the next step.
    pub fn set_cursor(&mut self, cursor: Option<crate::model::Cursor>) -> Result<()> {
        if let Some(c) = &cursor {
            c.validate(self.model.n)?;
        }
        self.cursor = cursor;
        self.model.cursor = if self.method.is_implicit() { None } else { cursor };
        self.steps_since_lin = usize::MAX;
        Ok(())
    }

    /// The cursor spring set by [`CpuEngine::set_cursor`].
    pub fn cursor(&self) -> Option<crate::model::Cursor> {
        self.cursor
    }

    // --- end of viewer additions ---

    /// LEU divergence retries so far.
    pub fn leu_retries(&self) -> usize {
        self.leu_retries
    }
}

impl CpuEngine {
    /// `steps` steps of the plan's h (run inside the pool), and what the stepping policy needs to know.
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(v² ≤ lim²)` also catches NaN
    fn steps(&mut self, steps: usize) -> Result<StepsReport> {
        self.cg_iterations = 0;
        let h = self.plan.h;
        // the gusts are evaluated at the batch's start on both backends (the GPU writes Params.time per batch)
        self.model.time = self.time;
        match self.method {
            Method::ImplicitEuler => {
                for _ in 0..steps {
                    self.implicit_step_h(h)?;
                }
                return Ok(StepsReport { iterations: self.cg_iterations, residual: self.last_cg.residual, ..Default::default() });
            }
            Method::LocalGlobal | Method::Newton => {
                for _ in 0..steps {
                    self.cg_iterations += self.solver_step(h)?;
                }
                return Ok(StepsReport { iterations: self.cg_iterations, residual: self.last_residual, ..Default::default() });
            }
            _ => {}
        }
        for _ in 0..steps {
            self.substep();
        }
        if let Some(e) = self.solver_error.take() {
            return Err(e);
        }
        let mut report = StepsReport { leu_retries: self.leu_retries, ..Default::default() };
        if self.method != Method::Leu {
            // The explicit methods' divergence check, at the end of the steps (the GPU flags any step):
            // a speed over the limit, with the state still finite.
            let lim2 = self.settings.speed_limit.powi(2);
            let finite = self.x.iter().all(|p| p.iter().all(|c| c.is_finite()));
            report.speed_exceeded = finite && self.v.iter().any(|v| !(v.norm_squared() <= lim2));
        }
        Ok(report)
    }
}

impl Engine for CpuEngine {
    fn backend_name(&self) -> String {
        "cpu (f64)".to_string()
    }

    fn method(&self) -> Method {
        self.method
    }

    fn settings(&self) -> &StepSettings {
        &self.settings
    }

    fn set_settings(&mut self, settings: StepSettings) -> Result<()> {
        check_cpu_settings(&self.model, self.method, &settings)?;
        self.settings = settings;
        Ok(())
    }

    fn drag(&self) -> f64 {
        self.model.drag
    }

    fn spring_damping(&self) -> f64 {
        self.model.spring_damping()
    }

    fn set_method(&mut self, method: Method) -> Result<()> {
        check_cpu_settings(&self.model, method, &self.settings)?;
        self.method = method;
        self.strain.rule = strain_limit::VelocityRule::of(method);
        self.model.cursor = if method.is_implicit() { None } else { self.cursor };
        self.steps_since_lin = usize::MAX;
        Ok(())
    }

    fn stiffness_k0(&mut self) -> Result<f64> {
        Ok(self.in_pool(|s| power::power_k0(&s.model, &s.x, s.settings.power_iterations)))
    }

    fn set_plan(&mut self, plan: &StepPlan) -> Result<()> {
        self.plan = *plan;
        self.steps_since_lin = usize::MAX;
        Ok(())
    }

    fn take_steps(&mut self, steps: usize) -> Result<StepsReport> {
        self.in_pool(|s| s.steps(steps))
    }

    fn try_step(&mut self, h: f64) -> Result<StepsReport> {
        self.in_pool(|s| s.try_implicit_step(h))
    }

    fn accept_trial(&mut self) -> Result<()> {
        std::mem::swap(&mut self.x, &mut self.x_next);
        std::mem::swap(&mut self.v, &mut self.v_next);
        self.time += self.trial_h;
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<crate::engine::Checkpoint> {
        self.checkpoint_time = self.time;
        self.read_state().map(crate::engine::Checkpoint::Host)
    }

    fn rollback(&mut self, checkpoint: &crate::engine::Checkpoint) -> Result<()> {
        match checkpoint {
            crate::engine::Checkpoint::Host((x, v)) => {
                self.write_state(x, v)?;
                self.time = self.checkpoint_time;
                self.model.place(self.time);
                Ok(())
            }
            crate::engine::Checkpoint::Device => Err(Error::NoDeviceCheckpoint { engine: "the CPU engine" }),
        }
    }

    fn read_state(&mut self) -> Result<(Vec<[f64; 3]>, Vec<[f64; 3]>)> {
        Ok((self.x.iter().map(|p| [p.x, p.y, p.z]).collect(), self.v.iter().map(|p| [p.x, p.y, p.z]).collect()))
    }

    fn write_state(&mut self, x: &[[f64; 3]], v: &[[f64; 3]]) -> Result<()> {
        check_state_len(self.model.n, x, v)?;
        for i in 0..self.model.n {
            self.x[i] = V3::from(x[i]);
            self.v[i] = if self.model.inv_mass[i] == 0.0 { V3::zeros() } else { V3::from(v[i]) };
        }
        self.steps_since_lin = usize::MAX;
        Ok(())
    }

    fn signals(&mut self) -> Result<crate::engine::Signals> {
        Ok(crate::engine::Signals::of(&self.model, &self.x, &self.v))
    }

    fn time(&self) -> f64 {
        CpuEngine::time(self)
    }

    fn model(&self) -> &CpuModel {
        CpuEngine::model(self)
    }

    fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        CpuEngine::set_particle(self, i, x, v, pinned)
    }

    fn is_pinned(&self, i: usize) -> bool {
        CpuEngine::is_pinned(self, i)
    }

    fn set_cursor(&mut self, cursor: Option<crate::model::Cursor>) -> Result<()> {
        CpuEngine::set_cursor(self, cursor)
    }

    fn cursor(&self) -> Option<crate::model::Cursor> {
        CpuEngine::cursor(self)
    }

    fn strain_passes(&mut self) -> Result<Option<PassTally>> {
        Ok(self.model.strain_limit.map(|_| self.strain.tally))
    }
}
