//! Aggregation multigrid for Baraff–Witkin's implicit Euler system (the preconditioner of its CG), in
//! f64.
//!
//! # Why
//! Jacobi-PCG needs O(h√k₀) iterations per step (Shinya §5), and k₀ grows with the square of a cloth's
//! resolution: on the 512² cloth h√k₀ ≈ 4300 at h = 1/30 s, and a step solved to a loose residual lets
//! the low-frequency stretch that Jacobi cannot reach pile up (strain 0.97 after 30 frames with
//! Jacobi-PCG, 0.169 with this multigrid). A multigrid V-cycle treats that smooth error on coarse levels.
//!
//! # The system as a spring network, on every level
//! The implicit system A = M(1 + h d₀ + h² s) + Σ_s B_s ⊗ (eᵢ − eⱼ)(eᵢ − eⱼ)ᵀ (Kauppila §2.2, §4.1;
//! [`crate::cpu::implicit`]) is a network of nodes with a diagonal block and edges with a symmetric 3×3
//! block B. Plain (unsmoothed) aggregation keeps that form: with P the 0/1 map of each node to its
//! aggregate (⊗ I₃), the Galerkin matrix PᵀAP is again such a network:
//! - a node's block is the sum of its members' blocks, plus the blocks of the edges from a member to a
//!   pinned particle (a pinned end is held, so such an edge only adds to the free end's diagonal);
//! - an edge between two aggregates carries the sum of the blocks of the fine edges between them;
//! - an edge inside an aggregate drops out (its +B, +B, −B, −B cancel).
//!
//! So the coarse matrices of a step are sums of the fine blocks over lists fixed by the model: the
//! aggregates are chosen once (greedy aggregation of the spring graph, [`super::multigrid::aggregate`]),
//! and each step only re-sums blocks. No sparse products, no atomics, and every level's A·x is the same
//! gather over an incidence list as the fine one.
//!
//! # The V(ν,ν)-cycle, `z = B r` (symmetric positive definite, so it preconditions CG)
//! On level l with right-hand side b: ν damped block-Jacobi sweeps from 0 (x = ω D⁻¹ b, then
//! x += ω D⁻¹ (b − A x)), the residual restricted by summing over each aggregate, the coarser level's
//! result added back to each member scaled by [`SpringMg::alpha`] (over-correction, which plain
//! aggregation wants: Vaněk, Brezina & Tůma 1999), and ν sweeps more. The last level is solved by a dense
//! Cholesky factor of its blocks. Since A ⪯ 2D (each edge's [B −B; −B B] ⪯ 2 diag(B, B)), ω = 2/3 damps
//! every mode.

use super::for_each_particle;
pub use super::spring_levels::{spring_order, COARSE_NODES, MAX_LEVELS};
use super::spring_levels::{Graph, SpringLevels};
use crate::error::{Error, Result};
use crate::reference::implicit::{sym_apply, Sym3};
use crate::reference::model::{CpuModel, V3};
use nalgebra::{DMatrix, DVector};

/// The coarse correction's scale: on one step of the 128² cloth, PCG to 1e-6 takes 50 iterations with
/// 1.0, 40 with 1.5 and 38 with 1.8 (one sweep each side); 1.5 keeps a margin below 2, where the
/// two-level cycle would stop being a contraction.
pub const ALPHA: f64 = 1.5;

/// A level's blocks for the current step.
#[derive(Clone, Debug, Default)]
struct Values {
    /// Per node: its own block (mass part and grounded edges).
    ground: Vec<Sym3>,
    /// Per edge: its block.
    edge: Vec<Sym3>,
    /// Per node: the inverse of its diagonal block (0 on pinned nodes).
    dinv: Vec<Sym3>,
}

/// The inverse of a symmetric positive definite block (0 when singular).
pub fn sym_inverse(b: &Sym3) -> Sym3 {
    let [xx, yy, zz, xy, xz, yz] = *b;
    let c = [yy * zz - yz * yz, xx * zz - xz * xz, xx * yy - xy * xy, xz * yz - xy * zz, xy * yz - xz * yy, xy * xz - xx * yz];
    let det = xx * c[0] + xy * c[3] + xz * c[4];
    if !(det.is_finite() && det > 0.0) {
        return [0.0; 6];
    }
    c.map(|v| v / det)
}

fn sym_add(a: &mut Sym3, b: &Sym3) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// The aggregation multigrid hierarchy of one model's implicit system (see the module notes).
#[derive(Clone, Debug)]
pub struct SpringMg {
    /// Level 0: the model (its edges in the order of the system's blocks).
    fine: Graph,
    /// The coarse levels.
    levels: SpringLevels,
    /// Per coarse level (index l − 1): its blocks of this step.
    values: Vec<Values>,
    /// Level 0's inverse diagonal blocks of this step.
    dinv0: Vec<Sym3>,
    /// The last level's Cholesky factor (dense), when it is small enough (a stalled coarsening is
    /// smoothed instead).
    coarse: Option<nalgebra::Cholesky<f64, nalgebra::Dyn>>,
    /// Per level: (b, x, t).
    work: Vec<[Vec<V3>; 3]>,
    /// Damped Jacobi sweeps before and after the coarse correction.
    pub sweeps: usize,
    /// The Jacobi damping ω.
    pub omega: f64,
    /// The coarse correction's scale.
    pub alpha: f64,
}

/// What the fine level's operator is made of: a node's mass diagonal, the edges' blocks and the
/// product A·x.
pub trait FineSystem {
    /// m_i (1 + h d₀ + h² s), 0 on pinned particles.
    fn mass_diag(&self) -> &[f64];
    /// The blocks of the fine edges, in the order of the `ends` the hierarchy was built with.
    fn blocks(&self) -> &[Sym3];
    /// out = A x (pinned rows zero).
    fn apply(&self, x: &[V3], out: &mut [V3]);
}

impl SpringMg {
    /// The hierarchy of `m`'s springs in [`spring_order`], weighted by their k: what the CPU engine
    /// builds from its sweep, for an engine without one (the GPU's).
    pub fn for_model(m: &CpuModel) -> Result<SpringMg> {
        let order = spring_order(m);
        let ends: Vec<[u32; 2]> = order
            .iter()
            .map(|&s| {
                let (a, b) = (m.end_a[s as usize], m.end_b[s as usize]);
                [a.min(b), a.max(b)]
            })
            .collect();
        let k: Vec<f64> = order.iter().map(|&s| m.k[s as usize]).collect();
        SpringMg::new(m, &ends, &k)
    }

    /// Builds the hierarchy for `m` whose fine edges are `ends` (in the order of the system's blocks),
    /// with edge weights `weights` (the springs' k) for the aggregation.
    pub fn new(m: &CpuModel, ends: &[[u32; 2]], weights: &[f64]) -> Result<SpringMg> {
        let live = (0..m.n).map(|i| m.inv_mass[i] != 0.0).collect();
        let fine = Graph::new(m.n, ends.to_vec(), live);
        let levels = SpringLevels::build(&fine, weights);
        let sizes = levels.sizes();
        let work = sizes.iter().map(|&n| [vec![V3::zeros(); n], vec![V3::zeros(); n], vec![V3::zeros(); n]]).collect();
        let values = levels
            .coarse
            .iter()
            .map(|g| Values { ground: vec![[0.0; 6]; g.n], edge: vec![[0.0; 6]; g.ends.len()], dinv: vec![[0.0; 6]; g.n] })
            .collect();
        Ok(SpringMg { dinv0: vec![[0.0; 6]; m.n], fine, levels, values, coarse: None, work, sweeps: 1, omega: 2.0 / 3.0, alpha: ALPHA })
    }

    /// Level l's graph.
    fn graph(&self, l: usize) -> &Graph {
        if l == 0 {
            &self.fine
        } else {
            &self.levels.coarse[l - 1]
        }
    }

    /// Whether this hierarchy is for a model of `n` particles and `edges` springs.
    pub fn fits(&self, n: usize, edges: usize) -> bool {
        self.fine.n == n && self.fine.ends.len() == edges
    }

    /// The number of levels (level 0 is the model).
    pub fn levels(&self) -> usize {
        self.levels.levels()
    }

    /// Level l's aggregation: each node's node on level l + 1 (`u32::MAX` for a pinned particle).
    pub fn aggregates(&self, l: usize) -> &[u32] {
        self.levels.aggregates(l)
    }

    /// Level l's matrix of the last [`SpringMg::update`], dense (3n × 3n; on level 0 the pinned rows and
    /// columns are zero): for checks on small models.
    pub fn level_matrix(&self, l: usize, sys: &impl FineSystem) -> DMatrix<f64> {
        let g = self.graph(l);
        if l > 0 {
            return dense_level(g, &self.values[l - 1]);
        }
        let md = sys.mass_diag();
        let v = Values { ground: md.iter().map(|&m| [m, m, m, 0.0, 0.0, 0.0]).collect(), edge: sys.blocks().to_vec(), dinv: Vec::new() };
        let mut a = dense_level(g, &v);
        for i in (0..g.n).filter(|&i| !g.live[i]) {
            a.rows_mut(3 * i, 3).fill(0.0);
            a.columns_mut(3 * i, 3).fill(0.0);
        }
        a
    }

    /// Level l's structure for an upload (fixed per model): its node count, and per node its
    /// incident (edge, other end) pairs in compressed rows (`inc_ptr`, `inc`), in the order the V-cycle
    /// sums them.
    pub fn level_lists(&self, l: usize) -> (usize, &[u32], &[[u32; 2]]) {
        let g = self.graph(l);
        (g.n, &g.inc_ptr, &g.inc)
    }

    /// Level l's edge count.
    pub fn level_edges(&self, l: usize) -> usize {
        self.graph(l).ends.len()
    }

    /// How level l sums into level l + 1 (fixed per model), each list in compressed rows `(ptr, src)`:
    /// per coarse node its members and its grounded fine edges (to a pinned particle), per coarse edge the
    /// fine edges it sums.
    pub fn link_lists(&self, l: usize) -> [(&[u32], &[u32]); 3] {
        self.levels.link_lists(l)
    }

    /// Whether [`SpringMg::update`] factors the last level (a dense Cholesky): there is a coarse level and
    /// the last one has at most 3 × [`COARSE_NODES`] nodes. Otherwise the V-cycle smooths there.
    pub fn factors_last_level(&self) -> bool {
        self.levels.factors_last_level()
    }

    /// The node count of each level.
    pub fn sizes(&self) -> Vec<usize> {
        self.levels.sizes()
    }

    /// Re-sums every level's blocks from the fine system of this step and factors the last level.
    pub fn update(&mut self, sys: &impl FineSystem) -> Result<()> {
        let (md, bb) = (sys.mass_diag(), sys.blocks());
        let g0 = &self.fine;
        for_each_particle(&mut self.dinv0, |i| {
            if !g0.live[i] {
                return [0.0; 6];
            }
            let mut d = [md[i], md[i], md[i], 0.0, 0.0, 0.0];
            g0.incident(i).iter().for_each(|&[e, _]| sym_add(&mut d, &bb[e as usize]));
            sym_inverse(&d)
        });
        for l in 0..self.levels.links.len() {
            let (done, rest) = self.values.split_at_mut(l);
            let prev = done.last();
            let fine_edge: &[Sym3] = prev.map_or(bb, |v| &v.edge);
            let fine_ground = |i: usize| -> Sym3 {
                match prev {
                    None => [md[i], md[i], md[i], 0.0, 0.0, 0.0],
                    Some(v) => v.ground[i],
                }
            };
            let link = &self.levels.links[l];
            let out = &mut rest[0];
            for_each_particle(&mut out.ground, |c| {
                let mut s = [0.0; 6];
                link.members.of(c).iter().for_each(|&i| sym_add(&mut s, &fine_ground(i as usize)));
                link.grounded.of(c).iter().for_each(|&e| sym_add(&mut s, &fine_edge[e as usize]));
                s
            });
            for_each_particle(&mut out.edge, |c| {
                let mut s = [0.0; 6];
                link.edges.of(c).iter().for_each(|&e| sym_add(&mut s, &fine_edge[e as usize]));
                s
            });
            let g = &self.levels.coarse[l];
            let (ground, edge) = (&out.ground, &out.edge);
            for_each_particle(&mut out.dinv, |i| {
                let mut d = ground[i];
                g.incident(i).iter().for_each(|&[e, _]| sym_add(&mut d, &edge[e as usize]));
                sym_inverse(&d)
            });
        }
        self.coarse = None;
        let last = self.levels() - 1;
        if self.factors_last_level() {
            let (g, v) = (self.graph(last), &self.values[last - 1]);
            let dense = dense_level(g, v);
            self.coarse = Some(dense.cholesky().ok_or_else(|| Error::NotPositiveDefinite {
                what: "the implicit multigrid's coarsest matrix".into(),
                pivot_row: None,
                hint: "",
            })?);
        }
        Ok(())
    }

    /// z = B r: one V-cycle (see the module notes); 0 on pinned particles.
    pub fn apply(&mut self, sys: &impl FineSystem, r: &[V3], z: &mut [V3]) {
        let mut work = std::mem::take(&mut self.work);
        work[0][0].copy_from_slice(r);
        self.cycle(0, sys, &mut work);
        z.copy_from_slice(&work[0][1]);
        self.work = work;
    }

    fn level_apply(&self, l: usize, sys: &impl FineSystem, x: &[V3], out: &mut [V3]) {
        if l == 0 {
            return sys.apply(x, out);
        }
        let (g, v) = (self.graph(l), &self.values[l - 1]);
        for_each_particle(out, |i| {
            let mut y = sym_apply(&v.ground[i], x[i]);
            for &[e, o] in g.incident(i) {
                y += sym_apply(&v.edge[e as usize], x[i] - x[o as usize]);
            }
            y
        });
    }

    fn dinv(&self, l: usize) -> &[Sym3] {
        if l == 0 {
            &self.dinv0
        } else {
            &self.values[l - 1].dinv
        }
    }

    /// `work[0][1]` = level l's V-cycle for the right-hand side `work[0][0]` (`work` from level l on).
    fn cycle(&self, l: usize, sys: &impl FineSystem, work: &mut [[Vec<V3>; 3]]) {
        let last = self.levels() - 1;
        let (here, below) = work.split_at_mut(1);
        let [b, x, t] = &mut here[0];
        if l == last {
            match (&self.coarse, l) {
                (Some(f), _) if l > 0 => {
                    let mut rhs = DVector::from_iterator(3 * b.len(), b.iter().flat_map(|v| [v.x, v.y, v.z]));
                    f.solve_mut(&mut rhs);
                    x.iter_mut().enumerate().for_each(|(i, xi)| *xi = V3::new(rhs[3 * i], rhs[3 * i + 1], rhs[3 * i + 2]));
                }
                _ => {
                    // no coarse level (a small model) or a stalled one: smoothing only
                    self.smooth(l, sys, b, x, t, 4 * self.sweeps.max(1), true);
                }
            }
            return;
        }
        self.smooth(l, sys, b, x, t, self.sweeps, true);
        // t = b − A x, summed over each aggregate
        self.level_apply(l, sys, x, t);
        t.iter_mut().zip(b.iter()).for_each(|(ti, bi)| *ti = bi - *ti);
        let link = &self.levels.links[l];
        let next = &mut below[0];
        for_each_particle(&mut next[0], |c| link.members.of(c).iter().map(|&i| t[i as usize]).sum());
        self.cycle(l + 1, sys, below);
        let zc = &below[0][1];
        let (alpha, g) = (self.alpha, self.graph(l));
        x.iter_mut().enumerate().for_each(|(i, xi)| {
            if g.live[i] {
                *xi += zc[link.agg[i] as usize] * alpha;
            }
        });
        self.smooth(l, sys, b, x, t, self.sweeps, false);
    }

    /// `sweeps` damped block-Jacobi sweeps on level l (from x = 0 when `from_zero`).
    #[allow(clippy::too_many_arguments)]
    fn smooth(&self, l: usize, sys: &impl FineSystem, b: &[V3], x: &mut [V3], t: &mut [V3], sweeps: usize, from_zero: bool) {
        let (dinv, w) = (self.dinv(l), self.omega);
        let mut left = sweeps;
        if from_zero {
            for_each_particle(x, |i| sym_apply(&dinv[i], b[i]) * w);
            left = left.saturating_sub(1);
        }
        for _ in 0..left {
            self.level_apply(l, sys, x, t);
            jacobi_update(x, t, b, dinv, w);
        }
    }
}

/// x += ω D⁻¹ (b − A x), with A x given in `ax`.
fn jacobi_update(x: &mut [V3], ax: &[V3], b: &[V3], dinv: &[Sym3], w: f64) {
    use rayon::prelude::*;
    let f = |(i, xi): (usize, &mut V3)| *xi += sym_apply(&dinv[i], b[i] - ax[i]) * w;
    if x.len() < super::PAR_N {
        x.iter_mut().enumerate().for_each(f);
    } else {
        x.par_iter_mut().with_min_len(super::PAR_N / 4).enumerate().for_each(f);
    }
}

/// A level's matrix, dense (3n × 3n).
fn dense_level(g: &Graph, v: &Values) -> DMatrix<f64> {
    let n = g.n;
    let mut a = DMatrix::<f64>::zeros(3 * n, 3 * n);
    let idx = [(0, 0, 0), (1, 1, 1), (2, 2, 2), (0, 1, 3), (0, 2, 4), (1, 2, 5)];
    let mut add = |i: usize, j: usize, b: &Sym3, s: f64| {
        for &(r, c, k) in &idx {
            a[(3 * i + r, 3 * j + c)] += s * b[k];
            if r != c {
                a[(3 * i + c, 3 * j + r)] += s * b[k];
            }
        }
    };
    for i in 0..n {
        add(i, i, &v.ground[i], 1.0);
    }
    for (e, &[p, q]) in g.ends.iter().enumerate() {
        let b = &v.edge[e];
        let (p, q) = (p as usize, q as usize);
        add(p, p, b, 1.0);
        add(q, q, b, 1.0);
        add(p, q, b, -1.0);
        add(q, p, b, -1.0);
    }
    a
}
