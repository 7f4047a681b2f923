//! Newton's method on Liu et al. 2013 eq. 8, g(x) = ½(x − y)ᵀM̃(x − y) + h²E(x): the reference that
//! local/global converges to (Liu §5 run it "with a line search scheme and diagonal Hessian correction in
//! the case of indefinite matrices [Martin et al. 2011]"). CPU, f64.
//!
//! Each iteration solves H p = −∇g with the exact Hessian H = M(1 + h d₀ + h² s) + h² Σₛ Kₛ,
//! Kₛ = kₛ[n̂n̂ᵀ + (1 − rₛ/l)(I − n̂n̂ᵀ)] (the Hessian of eq. 9), by faer's sparse Cholesky of the 3m×3m
//! matrix of the free particles (symbolic once, numeric every iteration). When a compressed spring makes
//! H indefinite the factorisation fails and λM is added (the diagonal correction, adapted as in
//! Levenberg-Marquardt, see [`Newton::iterate`]). A backtracking line search (Armijo, c = 1e-4) on g keeps
//! every iteration a descent.
//!
//! Measured on the 81×81 curtain (h = 1/30): from y, Newton reaches ‖∇g‖/‖∇g(y)‖ = 5e-12 in 24 iterations
//! on frame 2 of the fall, where the cloth is still smooth. Once the falling cloth buckles (frame 5 on),
//! the exact Hessian is indefinite at every iterate, also from a 2000-iteration local/global start, and
//! the corrected iteration converges only linearly (1e-2 to 1e-3 after 40 iterations): compressed springs
//! give the energy negative curvature across the spring, and g has many nearby minima.
//! ∇g is −[`local_global_residual`] with the local step taken at x (eq. 7), so Newton and local/global share the
//! objective exactly.

use super::contact::{HELD_CHOLESKY_ITERATIONS, HELD_CHOLESKY_TOL};
use super::forces::EPS_LEN;
use super::local_global::{
    free_rows, local_global_energy, local_global_inertia, local_global_local, local_global_residual, LocalGlobalParams,
};
use super::sparse::SpdFactor;
use super::{CpuModel, V3};
use crate::error::{Error, Result};
use crate::linalg::cg::{pcg_solve_with, CgWork};
use crate::reference::contact::{contact_filter, contact_friction, local_global_contact, Contact};

/// What a Newton step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NewtonReport {
    /// Newton iterations taken.
    pub iterations: usize,
    /// ‖∇g(x)‖/‖∇g(y)‖ at the result.
    pub residual: f64,
    /// Iterations whose Hessian needed the diagonal correction.
    pub corrected: usize,
}

/// Newton's method for one model: the Hessian's pattern and factor, and the working vectors.
#[derive(Debug)]
pub struct Newton {
    /// The step's constants.
    pub params: LocalGlobalParams,
    row: Vec<u32>,
    free: Vec<u32>,
    /// Springs with both ends free: their off-diagonal 3×3 blocks follow the diagonal blocks' values.
    coupled: Vec<u32>,
    factor: SpdFactor,
    values: Vec<f64>,
    rhs: faer::Mat<f64>,
    y: Vec<V3>,
    d: Vec<V3>,
    grad: Vec<V3>,
    dir: Vec<V3>,
    trial: Vec<V3>,
    lambda: f64,
    mass_scale: f64,
    /// The springs' Hessian blocks h²Kₛ of the last factorisation (the filtered solve's operator).
    blocks: Vec<nalgebra::Matrix3<f64>>,
    /// The contacts held through the iterations (n with colliders, none without:
    /// [`crate::reference::contact`], as local/global holds them).
    contacts: Vec<Contact>,
    cg: CgWork,
}

/// z = (H + λM)⁻¹ b on the free particles by the factor (3 rows each, one column through `rhs`), bᵢ
/// from `b(i)`; 0 on the pinned ones.
fn solve_factor(factor: &mut SpdFactor, rhs: &mut faer::Mat<f64>, free: &[u32], b: impl Fn(usize) -> V3, z: &mut [V3]) -> Result<()> {
    for (r, &i) in free.iter().enumerate() {
        let v = b(i as usize);
        (rhs[(3 * r, 0)], rhs[(3 * r + 1, 0)], rhs[(3 * r + 2, 0)]) = (v.x, v.y, v.z);
    }
    factor.solve_in_place(rhs.as_mut())?;
    z.iter_mut().for_each(|a| *a = V3::zeros());
    for (r, &i) in free.iter().enumerate() {
        z[i as usize] = V3::new(rhs[(3 * r, 0)], rhs[(3 * r + 1, 0)], rhs[(3 * r + 2, 0)]);
    }
    Ok(())
}

/// (H + λM) u for the free particles: mᵢ·`mass_diag` uᵢ plus each spring's block h²Kₛ times the
/// difference of its free ends' u (pinned ends 0); 0 on a pinned row.
fn hessian_apply(m: &CpuModel, row: &[u32], blocks: &[nalgebra::Matrix3<f64>], mass_diag: f64, u: &[V3], out: &mut [V3]) {
    let free = |i: usize| row[i] != u32::MAX;
    for i in 0..m.n {
        out[i] = if free(i) { u[i] * (m.mass[i] * mass_diag) } else { V3::zeros() };
    }
    for (s, k) in blocks.iter().enumerate() {
        let (a, b) = (m.end_a[s] as usize, m.end_b[s] as usize);
        let ua = if free(a) { u[a] } else { V3::zeros() };
        let ub = if free(b) { u[b] } else { V3::zeros() };
        let d = k * (ua - ub);
        if free(a) {
            out[a] += d;
        }
        if free(b) {
            out[b] -= d;
        }
    }
}

/// The lower-triangle entries of a 3×3 diagonal block, in the order of [`Newton`]'s values.
const DIAG_ENTRIES: [(usize, usize); 6] = [(0, 0), (1, 0), (2, 0), (1, 1), (2, 1), (2, 2)];

/// The spring's Hessian block Kₛ (eq. 9's second derivative) at x; coincident ends give kI (a guard).
/// `project`: its transverse term k(1 − r/l)(I − n̂n̂ᵀ) clamped at zero for a compressed spring, which
/// makes the block positive semi-definite (the per-spring definiteness fix).
pub fn spring_hessian(m: &CpuModel, s: usize, x: &[V3], project: bool) -> nalgebra::Matrix3<f64> {
    let d = x[m.end_a[s] as usize] - x[m.end_b[s] as usize];
    let l = d.norm();
    let k = m.k[s];
    if l <= EPS_LEN {
        return nalgebra::Matrix3::identity() * k;
    }
    let u = d / l;
    let mut c = 1.0 - m.rest[s] / l;
    if project {
        c = c.max(0.0);
    }
    let uu = u * u.transpose();
    (uu + (nalgebra::Matrix3::identity() - uu) * c) * k
}

impl Newton {
    /// The Hessian's pattern and its symbolic analysis for steps of size h.
    pub fn new(m: &CpuModel, h: f64) -> Result<Self> {
        let (row, free) = free_rows(m);
        let mut pairs = Vec::new();
        for r in 0..free.len() {
            for (a, b) in DIAG_ENTRIES {
                pairs.push((3 * r + a, 3 * r + b));
            }
        }
        let mut coupled = Vec::new();
        for s in 0..m.end_a.len() {
            let (ra, rb) = (row[m.end_a[s] as usize], row[m.end_b[s] as usize]);
            if ra != u32::MAX && rb != u32::MAX && ra != rb {
                coupled.push(s as u32);
                let (hi, lo) = (ra.max(rb) as usize, ra.min(rb) as usize);
                for a in 0..3 {
                    for b in 0..3 {
                        pairs.push((3 * hi + a, 3 * lo + b));
                    }
                }
            }
        }
        let nf = free.len();
        let factor = SpdFactor::new(3 * nf, &pairs, 1, "the Newton Hessian")?;
        let z = vec![V3::zeros(); m.n];
        Ok(Newton {
            params: LocalGlobalParams::new(m, h),
            row,
            free,
            coupled,
            factor,
            values: vec![0.0; pairs.len()],
            rhs: faer::Mat::zeros(3 * nf, 1),
            y: z.clone(),
            d: vec![V3::zeros(); m.end_a.len()],
            grad: z.clone(),
            dir: z.clone(),
            trial: z,
            lambda: 0.0,
            mass_scale: m.mass.iter().sum::<f64>() / m.n.max(1) as f64,
            blocks: vec![nalgebra::Matrix3::zeros(); m.end_a.len()],
            contacts: if m.colliders.is_empty() && m.self_collision.is_none() { Vec::new() } else { vec![Contact::NONE; m.n] },
            cg: CgWork::default(),
        })
    }

    /// Changes the step.
    pub fn set_h(&mut self, m: &CpuModel, h: f64) {
        self.params = LocalGlobalParams::new(m, h);
    }

    /// y of the current step.
    pub fn y(&self) -> &[V3] {
        &self.y
    }

    /// Starts a step from (q, v): y = q + hαv and x = y.
    pub fn begin(&mut self, m: &CpuModel, q: &[V3], v: &[V3], x: &mut [V3]) {
        local_global_inertia(m, &self.params, q, v, &mut self.y);
        x.copy_from_slice(&self.y);
        self.lambda = 0.0;
    }

    /// The working gradient ∇g of the last [`Newton::gradient`] call (a test hook: `tests/fd.rs` holds it
    /// to finite differences of eq. 8 written apart from the local/global code it is built from).
    pub fn last_gradient(&self) -> &[V3] {
        &self.grad
    }

    /// ∇g(x) (Liu eq. 7) into the working gradient; returns its norm.
    pub fn gradient(&mut self, m: &CpuModel, x: &[V3]) -> f64 {
        local_global_local(m, x, &mut self.d);
        local_global_residual(m, &self.params, &self.y, &self.d, x, &mut self.grad);
        let mut nn = 0.0;
        for g in self.grad.iter_mut() {
            *g = -*g;
            nn += g.norm_squared();
        }
        nn.sqrt()
    }

    /// Fills the Hessian's values at x with λM added (`project`: each spring's block made positive
    /// semi-definite instead of exact).
    fn hessian_values(&mut self, m: &CpuModel, x: &[V3], lambda: f64, project: bool) {
        let h2 = self.params.h * self.params.h;
        let nf = self.free.len();
        let mut diag = vec![nalgebra::Matrix3::<f64>::zeros(); nf];
        for (r, &i) in self.free.iter().enumerate() {
            diag[r] = nalgebra::Matrix3::identity() * (m.mass[i as usize] * (self.params.mass_diag + lambda / self.mass_scale));
        }
        for s in 0..m.end_a.len() {
            let (ra, rb) = (self.row[m.end_a[s] as usize], self.row[m.end_b[s] as usize]);
            if ra == u32::MAX && rb == u32::MAX {
                continue;
            }
            let k = spring_hessian(m, s, x, project) * h2;
            self.blocks[s] = k;
            if ra != u32::MAX {
                diag[ra as usize] += k;
            }
            if rb != u32::MAX {
                diag[rb as usize] += k;
            }
        }
        for (r, b) in diag.iter().enumerate() {
            for (t, (a, c)) in DIAG_ENTRIES.iter().enumerate() {
                self.values[6 * r + t] = b[(*a, *c)];
            }
        }
        let base = 6 * nf;
        for (c, &s) in self.coupled.iter().enumerate() {
            let k = spring_hessian(m, s as usize, x, project) * h2;
            for a in 0..3 {
                for b in 0..3 {
                    self.values[base + 9 * c + 3 * a + b] = -k[(a, b)];
                }
            }
        }
    }

    /// The direction p = −(H + λM)⁻¹∇g by the factor, into `dir`.
    fn direction(&mut self) -> Result<()> {
        let grad = &self.grad;
        solve_factor(&mut self.factor, &mut self.rhs, &self.free, |i| -grad[i], &mut self.dir)
    }

    /// The direction with contacts held (as local/global holds them, [`crate::reference::contact`]):
    /// S (H + λM) S p = −S ∇g by PCG preconditioned by the factor (filtered), at most
    /// [`HELD_CHOLESKY_ITERATIONS`] iterations to [`HELD_CHOLESKY_TOL`]; then a contact whose
    /// n̂·(−∇g − (H + λM) p) > 0 is released (the surface would pull).
    fn held_direction(&mut self, m: &CpuModel) -> Result<()> {
        let mass_diag = self.params.mass_diag + self.lambda / self.mass_scale;
        let (blocks, contacts, free, row) = (&self.blocks, &self.contacts, &self.free, &self.row);
        let (factor, rhs) = (&mut self.factor, &mut self.rhs);
        let b: Vec<V3> = (0..m.n).map(|i| contact_filter(contacts, i, -self.grad[i])).collect();
        let (mut su, mut sr) = (Vec::new(), Vec::new());
        let apply = |u: &[V3], out: &mut [V3], su: &mut Vec<V3>| {
            su.clear();
            su.extend((0..m.n).map(|i| contact_filter(contacts, i, u[i])));
            hessian_apply(m, row, blocks, mass_diag, su, out);
            (0..m.n).for_each(|i| out[i] = contact_filter(contacts, i, out[i]));
        };
        self.dir.iter_mut().for_each(|d| *d = V3::zeros());
        pcg_solve_with(
            |u, out| apply(u, out, &mut su),
            |r, z| {
                sr.clear();
                sr.extend((0..m.n).map(|i| contact_filter(contacts, i, r[i])));
                // a failed solve leaves z zero; the PCG's breakdown check stops on it
                if solve_factor(factor, rhs, free, |i| sr[i], z).is_err() {
                    z.iter_mut().for_each(|a| *a = V3::zeros());
                }
                (0..m.n).for_each(|i| z[i] = contact_filter(contacts, i, z[i]));
            },
            &b,
            &mut self.dir,
            HELD_CHOLESKY_TOL,
            HELD_CHOLESKY_ITERATIONS,
            &mut self.cg,
        )?;
        let mut hp = vec![V3::zeros(); m.n];
        hessian_apply(m, row, blocks, mass_diag, &self.dir, &mut hp);
        for (i, c) in self.contacts.iter_mut().enumerate() {
            if c.held() && c.normal.dot(&(-self.grad[i] - hp[i])) > 0.0 {
                *c = Contact::NONE;
            }
        }
        Ok(())
    }

    /// One Newton iteration from x (the gradient must be current, see [`Newton::gradient`]): the direction
    /// p = −(H + λM)⁻¹∇g and a backtracking line search on g. λ is the diagonal correction: 0 while the
    /// exact Hessian is positive definite and the full step is taken; when the factorisation fails (a
    /// compressed spring makes H indefinite) λ grows fourfold from 1e-6·m̄ until it succeeds, after a cut
    /// step it grows fourfold, after a full step it shrinks fourfold (to 0 below 1e-9·m̄), as in
    /// Levenberg-Marquardt. Near a minimum H is positive definite and the iteration is Newton's.
    /// Returns whether H was corrected (λ > 0).
    #[allow(clippy::needless_range_loop)] // i indexes several arrays
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // the negated test also catches NaN
    pub fn iterate(&mut self, m: &CpuModel, x: &mut [V3]) -> Result<bool> {
        let mut tries = 0;
        loop {
            self.hessian_values(m, x, self.lambda, false);
            match self.factor.factor(&self.values, "the Newton Hessian") {
                Ok(()) => break,
                Err(e) => {
                    tries += 1;
                    if tries > 60 {
                        return Err(e);
                    }
                    self.lambda = if self.lambda == 0.0 { 1e-6 * self.mass_scale } else { self.lambda * 4.0 };
                }
            }
        }
        let corrected = self.lambda > 0.0;
        if self.contacts.iter().any(Contact::held) {
            self.held_direction(m)?;
        } else {
            self.direction()?;
        }
        let mut slope = 0.0;
        for (dir, g) in self.dir.iter().zip(&self.grad) {
            slope += dir.dot(g);
        }
        if !(slope < 0.0) {
            // at a minimum (or a direction that cannot descend): nothing to do
            return Ok(corrected);
        }
        let g0 = local_global_energy(m, &self.params, &self.y, x);
        let mut t = 1.0;
        for _ in 0..40 {
            for i in 0..m.n {
                self.trial[i] = x[i] + self.dir[i] * t;
            }
            let g = local_global_energy(m, &self.params, &self.y, &self.trial);
            if g <= g0 + 1e-4 * t * slope {
                x.copy_from_slice(&self.trial);
                if t == 1.0 {
                    self.lambda = if self.lambda < 1e-9 * self.mass_scale { 0.0 } else { self.lambda / 4.0 };
                } else {
                    self.lambda = if self.lambda == 0.0 { 1e-6 * self.mass_scale } else { self.lambda * 4.0 };
                }
                return Ok(corrected);
            }
            t *= 0.5;
        }
        // no decrease found along the direction (round-off at convergence): keep x
        Ok(corrected)
    }

    /// Newton iterations from the given x (after [`Newton::begin`] set y), at most `max_iter`, until
    /// ‖∇g(x)‖ ≤ `tol`·`g_ref` (pass ‖∇g(y)‖ for the relative measure of [`Newton::step`]). Liu §5
    /// recommend this after some local/global iterations when an exact solution is wanted.
    pub fn polish(&mut self, m: &CpuModel, x: &mut [V3], max_iter: usize, tol: f64, g_ref: f64) -> Result<NewtonReport> {
        let mut rep = NewtonReport::default();
        let mut g = self.gradient(m, x);
        while rep.iterations < max_iter && g > tol * g_ref && g_ref > 0.0 {
            rep.corrected += self.iterate(m, x)? as usize;
            rep.iterations += 1;
            g = self.gradient(m, x);
        }
        rep.residual = if g_ref > 0.0 { g / g_ref } else { 0.0 };
        Ok(rep)
    }

    /// One implicit Euler step by Newton's method from x = y: at most `max_iter` iterations, stopping when
    /// ‖∇g‖ ≤ tol·‖∇g(y)‖; writes positions and velocities (x − q)/h.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        m: &CpuModel,
        max_iter: usize,
        tol: f64,
        q: &[V3],
        v: &[V3],
        x_out: &mut [V3],
        v_out: &mut [V3],
    ) -> Result<NewtonReport> {
        self.begin(m, q, v, x_out);
        self.contacts.iter_mut().for_each(|c| *c = Contact::NONE);
        let g0 = self.gradient(m, x_out);
        let mut rep = NewtonReport::default();
        let mut g = g0;
        while rep.iterations < max_iter && g > tol * g0 && g0 > 0.0 {
            rep.corrected += self.iterate(m, x_out)? as usize;
            rep.iterations += 1;
            if m.self_collision.is_some() {
                // the iterate's layers pushed apart, each particle the repulsion moved held along its push
                let before = x_out[..m.n].to_vec();
                let mut v = vec![V3::zeros(); m.n];
                super::self_collision::self_collide(m, x_out, &mut v);
                for i in 0..m.n {
                    let d = x_out[i] - before[i];
                    if d.norm() > 0.0 {
                        self.contacts[i] = Contact { normal: d / d.norm(), state: 0.0, ..Contact::NONE };
                    }
                }
            }
            if !m.colliders.is_empty() {
                // as local/global: the iterate moved out of the colliders, the particles moved held on the
                // surface through the later iterations (reference::contact)
                super::collide::project(m, x_out, &mut self.contacts);
            }
            self.gradient(m, x_out);
            // the held normals' part of ∇g is the contacts' force, not a residual
            g = (0..m.n).map(|i| contact_filter(&self.contacts, i, self.grad[i]).norm_squared()).sum::<f64>().sqrt();
        }
        rep.residual = if g0 > 0.0 { g / g0 } else { 0.0 };
        let inv_h = 1.0 / self.params.h;
        for i in 0..m.n {
            if m.inv_mass[i] == 0.0 {
                x_out[i] = q[i];
                v_out[i] = V3::zeros();
            } else {
                v_out[i] = (x_out[i] - q[i]) * inv_h;
                if let Some(&c) = self.contacts.get(i) {
                    // friction from the held contact's impulse (the residual r = −∇g)
                    let (_, c) = local_global_contact(i, m, self.params.h, -self.grad[i], c, true);
                    v_out[i] = contact_friction(&c, v_out[i]);
                }
            }
        }
        if !x_out.iter().all(|p| p.iter().all(|c| c.is_finite())) {
            return Err(Error::NonFinite { what: "Newton".into(), quantity: "position" });
        }
        Ok(rep)
    }
}
