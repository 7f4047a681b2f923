//! Liu et al. 2013, "Fast Simulation of Mass-Spring Systems": implicit Euler as the minimisation of
//! eq. 14 by block coordinate descent, in f64. The twins of `shaders/local_global.wgsl` (same names,
//! same argument order) and the CPU global solvers: the prefactored sparse Cholesky (faer), the
//! Jacobi-PCG on corrections and Chebyshev-accelerated Jacobi (Wang 2015).
//!
//! # The system, in the paper's notation
//! With y = qₙ + h·α·vₙ (§4.1, the damped inertia), the step minimises
//!
//! g(x, d) = ½ (1 + h d₀) (x − y)ᵀ M (x − y) + h² [ ½ Σₛ kₛ ‖x_a − x_b − dₛ‖² + ½ Σᵢ mᵢ s ‖xᵢ − c‖² − xᵀ f_ext ]
//!
//! over positions x and directions d with ‖dₛ‖ = rₛ (eq. 14 with its constant terms kept, so that
//! min_d g(x, d) = g(x) of eq. 8). The model's air drag d₀ enters as Liu's drag damping with
//! α = 1/(1 + h d₀), which is exactly implicit Euler of the drag force −m d₀ v: it scales the inertia
//! term by 1 + h d₀. f_ext = m (g + d₀ w) is gravity and the wind's push; the central field
//! −m s (x − c) is quadratic and goes into the matrix. Spring damping k_d is not a position force and
//! is not used (Liu consider Hookean springs only).
//!
//! - Local step (eq. 10 and the lemma): dₛ = rₛ (x_a − x_b)/‖x_a − x_b‖.
//! - Global step (∂g/∂x = 0): A x = M̃y + h² J d + h² (f_ext + m s c), A = M(1 + h d₀ + h² s) + h² L,
//!   L and J of eq. 12, so that (J d)ᵢ = Σ_{s: a = i} kₛ dₛ − Σ_{s: b = i} kₛ dₛ, a gather over the CSR
//!   incidence lists.
//! - Pinned particles are eliminated: their rows are not solved for and their columns move to the
//!   right-hand side, so A is the constant m×m matrix of the free particles (⊗ I₃).
//!
//! The GPU and the iterative CPU solvers work on corrections: r = b − A xₖ (all of it computed as one
//! gather, [`local_global_residual`]), A δ = r, x_{k+1} = xₖ + δ, so that the f32 GPU keeps the physics although
//! A has a condition number near 3e5 on a 256×256 curtain.

pub use super::contact::{cholesky_solve_held, HELD_CHOLESKY_ITERATIONS, HELD_CHOLESKY_TOL};
use super::contact::{filter, filtered_apply};
use super::forces::{EPS_LEN, MIN_PAR_LEN};
use super::sweep::{Rows, SpringSweep};
use super::{CpuModel, V3};
use crate::error::{Error, Result};
pub use crate::linalg::chebyshev::{
    chebyshev_omega, chebyshev_rho, chebyshev_rho_used, local_global_inv_diag, multigrid_rho, CHEBYSHEV_MARGIN, CHEBYSHEV_POWER_ITERATIONS,
    MULTIGRID_RHO_ITERATIONS,
};
pub use crate::linalg::global::{free_rows, GlobalCholesky};
use crate::linalg::multigrid::Multigrid;
use crate::linalg::{
    cg::{pcg_solve, pcg_solve_with, CgWork},
    for_each_particle,
};
use crate::method::{FactorPrecision, GlobalSolve, Method, Preconditioner};
use crate::reference::contact::{contact_friction, local_global_contact, local_global_release, Contact};
use crate::reference::local_global as kernel;
pub use crate::reference::local_global::{entry_spring, LocalGlobalParams};
use rayon::prelude::*;

/// The damped inertia y = q + h α v (Liu §4.1); pinned particles: y = q (`local_global_inertia` per particle).
pub fn local_global_inertia(m: &CpuModel, p: &LocalGlobalParams, q: &[V3], v: &[V3], y: &mut [V3]) {
    for_each_particle(&mut y[..m.n], |i| kernel::local_global_inertia(i, m, p, q, v));
}

/// The local step over every spring ([`kernel::local_global_local`], Liu eq. 10).
pub fn local_global_local(m: &CpuModel, x: &[V3], d: &mut [V3]) {
    for_each_particle(d, |s| kernel::local_global_local(s, m, x));
}

/// The global step's residual at xₖ for every particle ([`kernel::local_global_residual`], Liu eq. 14).
pub fn local_global_residual(m: &CpuModel, p: &LocalGlobalParams, y: &[V3], d: &[V3], x: &[V3], r: &mut [V3]) {
    for_each_particle(r, |i| kernel::local_global_residual(i, m, p, y, d, x));
}

/// [`local_global_local`] followed by [`local_global_residual`], fused into one sweep over the springs ([`SpringSweep`]; the
/// CPU's own path, the GPU's fuses them per particle, [`kernel::local_global_local_residual`]): each spring's direction dₛ (eq. 10) is formed once and
/// its term kₛ (dₛ − (x_lo − x_hi)) added at its lower end and subtracted at its upper one, so no d is
/// stored and gathered. The sums run in sorted spring order instead of incidence order, so r agrees
/// with the two-pass twin to rounding.
pub fn local_global_local_residual(m: &CpuModel, p: &LocalGlobalParams, sw: &SpringSweep, y: &[V3], x: &[V3], r: &mut [V3]) {
    assert!(
        sw.fits(m) && y.len() == m.n && x.len() == m.n && r.len() == m.n,
        "local_global_local_residual: vectors or plan of another model"
    );
    let fext = m.gravity + m.wind * m.drag + m.central_center * m.central_strength;
    let ctx = LocalResidual { m, p, sw, y, x, fext };
    let jobs = sw.particle_rows(r);
    sw.run(jobs, |c, out| local_residual_chunk(&ctx, c, out));
}

/// What a chunk of [`local_global_local_residual`] reads and writes.
struct LocalResidual<'a> {
    m: &'a CpuModel,
    p: &'a LocalGlobalParams,
    sw: &'a SpringSweep,
    y: &'a [V3],
    x: &'a [V3],
    fext: V3,
}

/// One chunk of [`local_global_local_residual`]: writes the rows of its own particles only.
#[inline(always)]
fn local_residual_chunk(ctx: &LocalResidual<'_>, &[p0, p1, _, _, c0, c1]: &[u32; 6], mut out: Rows<'_, V3>) {
    let LocalResidual { m, p, sw, y, x, fext } = *ctx;
    let h2 = p.h * p.h;
    for i in p0 as usize..p1 as usize {
        let mi = m.mass[i];
        out[i] = y[i] * (mi * p.inertia) + fext * (mi * h2) - x[i] * (mi * p.mass_diag);
    }
    // h² kₛ (dₛ − (x_lo − x_hi)), with dₛ oriented lo → hi (the guard's (L, 0, 0) is a → b)
    let term = |k: usize| {
        let [lo, hi] = sw.ends[k];
        let [ks, rest, _] = sw.par[k];
        let e = x[lo as usize] - x[hi as usize];
        let l = e.norm();
        let d = if l > EPS_LEN {
            e * (rest / l)
        } else if sw.lo_is_a[k] {
            V3::new(rest, 0.0, 0.0)
        } else {
            V3::new(-rest, 0.0, 0.0)
        };
        (lo as usize, hi as usize, (d - e) * (ks * h2))
    };
    for &k in &sw.cross[c0 as usize..c1 as usize] {
        let (_, hi, t) = term(k as usize);
        out[hi] -= t;
    }
    for i in p0 as usize..p1 as usize {
        // the springs with lower end i; rᵢ in a register, as no other spring adds to it now
        let mut ri = out[i];
        for k in sw.lo_first[i] as usize..sw.lo_first[i + 1] as usize {
            let (_, hi, t) = term(k);
            ri += t;
            if hi < p1 as usize {
                out[hi] -= t;
            }
        }
        out[i] = if m.inv_mass[i] == 0.0 { V3::zeros() } else { ri };
    }
}

/// The global matrix times u, for the free particles: (A u)ᵢ = mᵢ(1 + h d₀ + h² s) uᵢ + h² Σₑ kₑ (uᵢ − uⱼ),
/// with uⱼ = 0 for pinned j (their columns are eliminated); 0 on pinned rows ([`kernel::local_global_apply`] per
/// particle). The operator of the corrections' PCG and Chebyshev iterations.
pub fn local_global_apply(m: &CpuModel, p: &LocalGlobalParams, u: &[V3], out: &mut [V3]) {
    for_each_particle(out, |i| kernel::local_global_apply(i, m, p, u));
}

/// The terms of g shared by eq. 8 and eq. 14: the inertia and the external and field potentials of the
/// free particles.
fn inertia_and_fields(m: &CpuModel, p: &LocalGlobalParams, y: &[V3], x: &[V3]) -> f64 {
    let h2 = p.h * p.h;
    let g = m.gravity + m.wind * m.drag;
    let mut e = 0.0;
    for i in 0..m.n {
        if m.inv_mass[i] == 0.0 {
            continue;
        }
        let mi = m.mass[i];
        e += 0.5 * p.inertia * mi * (x[i] - y[i]).norm_squared();
        e += h2 * mi * (0.5 * m.central_strength * (x[i] - m.central_center).norm_squared() - g.dot(&x[i]));
    }
    e
}

/// g(x, d) of Liu eq. 14 (with the constant terms, see the module notes): block coordinate descent never
/// increases it.
pub fn local_global_objective(m: &CpuModel, p: &LocalGlobalParams, y: &[V3], x: &[V3], d: &[V3]) -> f64 {
    let mut e = 0.0;
    for s in 0..m.end_a.len() {
        e += 0.5 * m.k[s] * (x[m.end_a[s] as usize] - x[m.end_b[s] as usize] - d[s]).norm_squared();
    }
    inertia_and_fields(m, p, y, x) + p.h * p.h * e
}

/// g(x) of Liu eq. 8: ½(x − y)ᵀM̃(x − y) + h² E(x), E with the Hookean spring potential of eq. 9.
pub fn local_global_energy(m: &CpuModel, p: &LocalGlobalParams, y: &[V3], x: &[V3]) -> f64 {
    let mut e = 0.0;
    for s in 0..m.end_a.len() {
        let l = (x[m.end_a[s] as usize] - x[m.end_b[s] as usize]).norm();
        e += 0.5 * m.k[s] * (l - m.rest[s]).powi(2);
    }
    inertia_and_fields(m, p, y, x) + p.h * p.h * e
}

/// Liu eq. 15: the relative error (g(xᵢ) − g(x*))/(g(x₀) − g(x*)).
pub fn relative_error(g_i: f64, g_star: f64, g_0: f64) -> f64 {
    let den = g_0 - g_star;
    if den > 0.0 {
        (g_i - g_star) / den
    } else {
        0.0
    }
}

/// Working vectors of [`chebyshev_solve`].
#[derive(Clone, Debug, Default)]
pub struct ChebyshevWork {
    prev: Vec<V3>,
    next: Vec<V3>,
    ad: Vec<V3>,
    z: Vec<V3>,
}

impl ChebyshevWork {
    /// The start of a solve of n unknowns: δ = δ₋₁ = 0.
    fn start(&mut self, n: usize, delta: &mut [V3]) {
        self.prev.clear();
        self.prev.resize(n, V3::zeros());
        self.next.resize(n, V3::zeros());
        delta.iter_mut().for_each(|a| *a = V3::zeros());
    }

    /// After an iteration wrote δ_{k+1} into `next`: δ_{k−1} ← δₖ, δₖ ← δ_{k+1}.
    fn rotate(&mut self, delta: &mut [V3]) {
        std::mem::swap(&mut self.prev, &mut self.next);
        self.prev.swap_with_slice(delta);
    }
}

/// `iters` Jacobi iterations on A δ = r from δ = 0, with Chebyshev weights (Wang 2015): δ̂ = δₖ +
/// D⁻¹(r − A δₖ), δ_{k+1} = ω_{k+1}(δ̂ − δ_{k−1}) + δ_{k−1}, each iteration [`kernel::local_global_chebyshev`]'s
/// Jacobi sweep per particle, the first [`kernel::local_global_chebyshev_start`] (δ₁ = D⁻¹ r, the same value, with
/// no gather). These are the GPU's numbers; the preconditioned form of [`chebyshev_solve_with`] with
/// z = D⁻¹ s gives the same iterates to rounding. `rho` is the radius to build the weights for
/// ([`chebyshev_rho_used`]). Returns the relative residual ‖r − Aδ‖/‖r‖ of the result. Pinned entries
/// stay 0 (their inverse diagonal is 0).
#[allow(clippy::too_many_arguments)] // the solve's operator, preconditioner, bounds and work
pub fn chebyshev_solve(
    m: &CpuModel,
    p: &LocalGlobalParams,
    inv_diag: &[V3],
    r: &[V3],
    delta: &mut [V3],
    rho: f64,
    iters: usize,
    w: &mut ChebyshevWork,
) -> f64 {
    w.start(m.n, delta);
    let mut omega = 1.0;
    for k in 0..iters {
        omega = chebyshev_omega(k, rho, omega);
        let delta_k: &[V3] = delta;
        if k == 0 {
            // from δ₀ = δ₋₁ = 0 with ω₁ = 1 the sweep gathers nothing (the GPU's local_global_local_residual takes it)
            for_each_particle(&mut w.next, |i| kernel::local_global_chebyshev_start(i, r, inv_diag));
        } else {
            for_each_particle(&mut w.next, |i| kernel::local_global_chebyshev(i, m, p, omega, r, inv_diag, delta_k, &w.prev));
        }
        w.rotate(delta);
    }
    relative_residual(m, p, r, delta, &mut w.ad)
}

/// ‖r − Aδ‖/‖r‖ (0 when r = 0), with `ad` as room for Aδ.
fn relative_residual(m: &CpuModel, p: &LocalGlobalParams, r: &[V3], delta: &[V3], ad: &mut Vec<V3>) -> f64 {
    ad.resize(m.n, V3::zeros());
    local_global_apply(m, p, delta, ad);
    let rr: f64 = r.iter().map(|a| a.norm_squared()).sum();
    let res: f64 = r.iter().zip(ad.iter()).map(|(a, b)| (a - b).norm_squared()).sum();
    if rr > 0.0 {
        (res / rr).sqrt()
    } else {
        0.0
    }
}

/// The Jacobi preconditioner's product z = D⁻¹ s (`inv_diag` from [`local_global_inv_diag`]).
pub fn jacobi_apply(inv_diag: &[V3], s: &[V3], z: &mut [V3]) {
    for ((zi, si), di) in z.iter_mut().zip(s).zip(inv_diag) {
        *zi = si.component_mul(di);
    }
}

/// `iters` iterations of the preconditioned iteration δ̂ = δₖ + B(r − A δₖ) on A δ = r from δ = 0, with
/// Chebyshev weights (Wang 2015, eq. 12, with B in place of D⁻¹): δ_{k+1} = ω_{k+1}(δ̂ − δ_{k−1}) + δ_{k−1};
/// `precondition(s, z)` forms z = B s (the multigrid V-cycle), `rho` is the radius of I − BA to build
/// the weights for. [`kernel::local_global_cheb_residual`], the V-cycle and [`kernel::local_global_cheb_combine`] per
/// iteration, as on the GPU (with Jacobi, [`chebyshev_solve`] runs the fused [`kernel::local_global_chebyshev`] instead). Returns the relative residual ‖r − Aδ‖/‖r‖ of the result.
#[allow(clippy::too_many_arguments)]
pub fn chebyshev_solve_with(
    m: &CpuModel,
    p: &LocalGlobalParams,
    mut precondition: impl FnMut(&[V3], &mut [V3]),
    r: &[V3],
    delta: &mut [V3],
    rho: f64,
    iters: usize,
    w: &mut ChebyshevWork,
) -> f64 {
    let n = m.n;
    w.start(n, delta);
    w.ad.resize(n, V3::zeros());
    w.z.resize(n, V3::zeros());
    let mut omega = 1.0;
    for k in 0..iters {
        omega = chebyshev_omega(k, rho, omega);
        let delta_k: &[V3] = delta;
        for_each_particle(&mut w.ad, |i| kernel::local_global_cheb_residual(i, m, p, r, delta_k));
        precondition(&w.ad, &mut w.z);
        for_each_particle(&mut w.next, |i| kernel::local_global_cheb_combine(i, omega, delta_k, &w.prev, &w.z));
        w.rotate(delta);
    }
    relative_residual(m, p, r, delta, &mut w.ad)
}

/// What a local/global step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalGlobalReport {
    /// Local/global iterations.
    pub iterations: usize,
    /// Iterations of the global solver summed over them (CG or Chebyshev; one per Cholesky solve).
    pub solver_iterations: usize,
    /// ‖∇g(x)‖/‖∇g(y)‖ of eq. 7 at the result (the local step refreshed at x): how far the step is from
    /// the exact implicit Euler solution.
    pub residual: f64,
}

/// Liu's block coordinate descent for one model: the global solver and every working vector, kept from
/// step to step (the Cholesky factor is refactored only when h changes).
#[derive(Debug)]
pub struct LocalGlobal {
    /// The step's constants.
    pub params: LocalGlobalParams,
    global: GlobalSolve,
    chol: Option<GlobalCholesky>,
    /// The order of the fused local step and residual of [`LocalGlobal::step`].
    sweep: SpringSweep,
    inv_diag: Vec<V3>,
    rho: f64,
    y: Vec<V3>,
    d: Vec<V3>,
    r: Vec<V3>,
    delta: Vec<V3>,
    cg: CgWork,
    cheb: ChebyshevWork,
    /// The contacts held through the step's global solves (n with colliders, none without:
    /// [`crate::reference::contact`]).
    contacts: Vec<Contact>,
    precond: Preconditioner,
    /// The precision of the `cholesky` solves.
    precision: FactorPrecision,
    /// The multigrid hierarchy of A, when `cg` is preconditioned by it.
    mg: Option<Multigrid>,
    /// The global solver's tolerance and budget (CG, Chebyshev).
    pub tol: f64,
    /// The budget of each CG or Chebyshev global step.
    pub budget: usize,
}

impl LocalGlobal {
    /// Prepares the solver `global` (cholesky, cg or chebyshev) for steps of size h: the factorisation,
    /// the preconditioner or the spectral radius.
    pub fn new(m: &CpuModel, h: f64, global: GlobalSolve, tol: f64, budget: usize) -> Result<Self> {
        let global = global.resolve(crate::method::Method::LocalGlobal)?;
        let params = LocalGlobalParams::new(m, h);
        let z = vec![V3::zeros(); m.n];
        let mut lg = LocalGlobal {
            params,
            global,
            chol: None,
            sweep: SpringSweep::for_model(m),
            inv_diag: z.clone(),
            rho: 0.0,
            y: z.clone(),
            d: vec![V3::zeros(); m.end_a.len()],
            r: z.clone(),
            delta: z,
            cg: CgWork::default(),
            cheb: ChebyshevWork::default(),
            contacts: if m.colliders.is_empty() { Vec::new() } else { vec![Contact::NONE; m.n] },
            precond: Preconditioner::Jacobi,
            precision: FactorPrecision::default(),
            mg: None,
            tol,
            budget,
        };
        lg.prepare(m)?;
        Ok(lg)
    }

    fn prepare(&mut self, m: &CpuModel) -> Result<()> {
        local_global_inv_diag(m, &self.params, &mut self.inv_diag);
        match self.global {
            GlobalSolve::Cholesky => match &mut self.chol {
                Some(c) => c.refactor(m, &self.params)?,
                None => {
                    let mut c = GlobalCholesky::new(m, &self.params)?;
                    c.set_single_precision(self.precision == FactorPrecision::F32);
                    self.chol = Some(c)
                }
            },
            GlobalSolve::Chebyshev if self.precond == Preconditioner::Jacobi => {
                self.rho = chebyshev_rho(m, &self.params, CHEBYSHEV_POWER_ITERATIONS)
            }
            _ => {}
        }
        self.mg = match self.precond {
            Preconditioner::Multigrid => Some(Multigrid::for_global(m, &self.params)?),
            Preconditioner::Jacobi | Preconditioner::Auto => None,
        };
        if let (GlobalSolve::Chebyshev, Some(mg)) = (self.global, self.mg.as_mut()) {
            self.rho = multigrid_rho(m, &self.params, mg, MULTIGRID_RHO_ITERATIONS);
        }
        Ok(())
    }

    /// Chooses the preconditioner of the `cg` global step (an error for multigrid with another solver);
    /// builds the multigrid hierarchy when it changes.
    pub fn set_preconditioner(&mut self, m: &CpuModel, precond: Preconditioner) -> Result<()> {
        let precond = precond.resolve(Method::LocalGlobal);
        precond.check(Method::LocalGlobal, self.global)?;
        if precond != self.precond {
            self.precond = precond;
            self.prepare(m)?;
        }
        Ok(())
    }

    /// The precision of the `cholesky` global step's solves.
    pub fn set_factor_precision(&mut self, precision: FactorPrecision) {
        self.precision = precision;
        if let Some(c) = self.chol.as_mut() {
            c.set_single_precision(precision == FactorPrecision::F32);
        }
    }

    /// The preconditioner of the `cg` global step.
    pub fn preconditioner(&self) -> Preconditioner {
        self.precond
    }

    /// The multigrid hierarchy, when that is the preconditioner.
    pub fn multigrid(&self) -> Option<&Multigrid> {
        self.mg.as_ref()
    }

    /// Changes the step: refactors (numeric only) or re-estimates ρ.
    pub fn set_h(&mut self, m: &CpuModel, h: f64) -> Result<()> {
        if h != self.params.h {
            self.params = LocalGlobalParams::new(m, h);
            self.prepare(m)?;
        }
        Ok(())
    }

    /// The global solver in use.
    pub fn global(&self) -> GlobalSolve {
        self.global
    }

    /// Chebyshev: the estimated spectral radius of the iteration matrix (I − D⁻¹A with Jacobi, I − BA
    /// with the multigrid V-cycle B).
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// The Cholesky factor, when that is the solver.
    pub fn cholesky(&self) -> Option<&GlobalCholesky> {
        self.chol.as_ref()
    }

    /// y of the current step.
    pub fn y(&self) -> &[V3] {
        &self.y
    }

    /// The directions of the last [`LocalGlobal::local`] call ([`LocalGlobal::step`] fuses its local
    /// steps into the residual and keeps no d).
    pub fn d(&self) -> &[V3] {
        &self.d
    }

    /// Starts a step from (q, v): y = q + hαv, and x = y.
    pub fn begin(&mut self, m: &CpuModel, q: &[V3], v: &[V3], x: &mut [V3]) {
        local_global_inertia(m, &self.params, q, v, &mut self.y);
        x.copy_from_slice(&self.y);
    }

    /// The local step at x (Liu eq. 10).
    pub fn local(&mut self, m: &CpuModel, x: &[V3]) {
        local_global_local(m, x, &mut self.d);
    }

    /// The global step with the current d, on corrections: r = b − A x, A δ = r, x += δ. Returns the
    /// solver's iterations and ‖r‖ (the gradient norm of g(·, d) at the old x).
    pub fn global_step(&mut self, m: &CpuModel, x: &mut [V3]) -> Result<(usize, f64)> {
        local_global_residual(m, &self.params, &self.y, &self.d, x, &mut self.r);
        self.solve_residual(m, x)
    }

    /// The global step for the residual in `r`: A δ = r, x += δ.
    fn solve_residual(&mut self, m: &CpuModel, x: &mut [V3]) -> Result<(usize, f64)> {
        let rnorm = self.r.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt();
        let its = match self.global {
            GlobalSolve::Cholesky => {
                let chol = self.chol.as_mut().ok_or_else(|| Error::internal_solver("no Cholesky factor"))?;
                cholesky_solve_held(m, &self.params, chol, &self.contacts, &self.r, &mut self.delta, &mut self.cg)?
            }
            GlobalSolve::Chebyshev => {
                let (inv_diag, mut mg, contacts) = (&self.inv_diag, self.mg.as_mut(), &self.contacts);
                // the iterates stay filtered: δ̂ = δₖ + S B (r − A δₖ) (the GPU filters δ̂)
                let precondition = |s: &[V3], z: &mut [V3]| {
                    match mg.as_deref_mut() {
                        Some(mg) => mg.apply(s, z),
                        None => jacobi_apply(inv_diag, s, z),
                    }
                    filter(contacts, z);
                };
                let rho = chebyshev_rho_used(self.rho);
                chebyshev_solve_with(m, &self.params, precondition, &self.r, &mut self.delta, rho, self.budget, &mut self.cheb);
                self.budget
            }
            _ if self.mg.is_some() => {
                self.delta.iter_mut().for_each(|a| *a = V3::zeros());
                let (params, mg, contacts) = (&self.params, self.mg.as_mut().expect("checked"), &self.contacts);
                let mut su = Vec::new();
                let rep = pcg_solve_with(
                    |u, out| filtered_apply(m, params, contacts, u, out, &mut su),
                    |r, z| mg.apply(r, z),
                    &self.r,
                    &mut self.delta,
                    self.tol,
                    self.budget,
                    &mut self.cg,
                )?;
                rep.iterations
            }
            _ => {
                self.delta.iter_mut().for_each(|a| *a = V3::zeros());
                let (params, inv_diag, contacts) = (&self.params, &self.inv_diag, &self.contacts);
                let mut su = Vec::new();
                let rep = pcg_solve(
                    |u, out| filtered_apply(m, params, contacts, u, out, &mut su),
                    inv_diag,
                    &self.r,
                    &mut self.delta,
                    self.tol,
                    self.budget,
                    &mut self.cg,
                )?;
                rep.iterations
            }
        };
        filter(&self.contacts, &mut self.delta);
        let (params, delta) = (&self.params, &self.delta);
        self.contacts.par_iter_mut().with_min_len(MIN_PAR_LEN).enumerate().for_each(|(i, c)| {
            *c = local_global_release(i, m, params, *c, delta);
        });
        for i in 0..m.n {
            x[i] = kernel::local_global_advance(i, m, x, &self.delta);
        }
        Ok((its, rnorm))
    }

    /// The contact part of the fused local step and residual on `r` ([`local_global_contact`]): held
    /// contacts filtered or released; at the step's `last` residual, their friction.
    fn hold_contacts(&mut self, m: &CpuModel, last: bool) {
        let h = self.params.h;
        self.r.par_iter_mut().zip(self.contacts.par_iter_mut()).with_min_len(MIN_PAR_LEN).enumerate().for_each(|(i, (r, c))| {
            (*r, *c) = local_global_contact(i, m, h, *r, *c, last);
        });
    }

    /// ‖∇g(x)‖ (eq. 7): the global residual with the local step refreshed at x (fused, see
    /// [`local_global_local_residual`]; d is left as it was).
    pub fn gradient_norm(&mut self, m: &CpuModel, x: &[V3]) -> f64 {
        local_global_local_residual(m, &self.params, &self.sweep, &self.y, x, &mut self.r);
        self.r.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt()
    }

    /// One implicit Euler step by `iterations` local/global iterations from x = y (Liu §4): writes the new
    /// positions and the velocities (x − q)/h (0 for pinned particles).
    pub fn step(
        &mut self,
        m: &CpuModel,
        iterations: usize,
        q: &[V3],
        v: &[V3],
        x_out: &mut [V3],
        v_out: &mut [V3],
    ) -> Result<LocalGlobalReport> {
        self.begin(m, q, v, x_out);
        self.contacts.iter_mut().for_each(|c| *c = Contact::NONE);
        let mut rep = LocalGlobalReport { iterations, ..Default::default() };
        let mut g0 = 0.0;
        for k in 0..iterations {
            // the local step and the residual in one sweep (d is not kept)
            local_global_local_residual(m, &self.params, &self.sweep, &self.y, x_out, &mut self.r);
            self.hold_contacts(m, false);
            let (its, rnorm) = self.solve_residual(m, x_out)?;
            if k == 0 {
                g0 = rnorm;
            }
            rep.solver_iterations += its;
            if !m.colliders.is_empty() && k + 1 < iterations {
                // Liu §4.1: the iterate moved to its collision-free position after every iteration but
                // the last, and the particles moved held on the surface through the later global solves
                // (reference::contact); what the last solve pushes in gets the step-end response
                super::collide::project(m, x_out, &mut self.contacts);
            }
        }
        // ‖∇g(x)‖ with the local step refreshed at x, filtered at the held contacts, whose friction it sets
        local_global_local_residual(m, &self.params, &self.sweep, &self.y, x_out, &mut self.r);
        self.hold_contacts(m, true);
        let g = self.r.iter().map(|a| a.norm_squared()).sum::<f64>().sqrt();
        rep.residual = if g0 > 0.0 { g / g0 } else { 0.0 };
        for i in 0..m.n {
            let (x, v) = kernel::local_global_velocity(i, m, &self.params, q, x_out);
            (x_out[i], v_out[i]) = (x, self.contacts.get(i).map_or(v, |c| contact_friction(c, v)));
        }
        if !x_out.iter().all(|p| p.iter().all(|c| c.is_finite())) {
            return Err(Error::NonFinite { what: format!("local/global ({})", self.global.name()), quantity: "position" });
        }
        Ok(rep)
    }
}
