//! Force evaluation in f64: the CPU twin of `shaders/shared/forces.wgsl`.
//!
//! [`accelerations`] computes each spring's force once ([`spring_force`]) and sums the forces on each
//! particle over its CSR incidence list, in list order (the GPU sums in the same order). The hot path
//! follows a [`ForcePlan`] built once per model:
//!
//! - The particles are cut into contiguous chunks, one per core (rayon's thread count), and each
//!   chunk into tasks of a few hundred particles. A task evaluates the springs whose lower endpoint
//!   lies in it, writing each force, signed, into the *slots* of its two endpoints (one slot per
//!   incidence entry), then sums its particles' slots in list order and hands each acceleration to a
//!   sink, which may apply an integrator update at once (the steps of [`super::explicit`] do). A
//!   spring that straddles two chunks is evaluated by both, each writing only its own side, so the
//!   chunks share nothing and one fork-join runs a whole evaluation.
//! - Slots are stored by groups of four consecutive particles, component-major, so the sums of four
//!   particles run in the four lanes of a vector; a particle with a shorter list than its group's
//!   longest has pad slots holding −0, the identity of IEEE addition. A chunk's groups take turns in
//!   a ring that is reused once a group has been summed, so the live slots stay in L2 (on the
//!   256×256 cloth, 0.4 MB per chunk instead of 19 MB in all).
//! - Within a task, springs from four consecutive particles to four consecutive particles whose slots
//!   form one row of a group (most springs of a grid) are evaluated together in AVX lanes with
//!   contiguous loads and stores; the others four at a time with gathered loads, then one by one.
//!
//! Every slot holds exactly `±spring_force` (the lanes do the scalar IEEE operations in the same
//! order, without contraction, and negation is exact), and `a − f = a + (−f)`, so the accelerations
//! are bit for bit those of the plain per-spring pass and gather, whatever the chunking, the vector
//! width or the threads. A [`Pacer`] picks per evaluation whether the chunks run on the calling thread
//! alone or together with a [`team`] of helper threads that spin between evaluations (a sleeping
//! thread takes tens of µs to wake on a virtual machine, rayon's fork-join from outside its pool
//! about 15 µs: a quarter of the work on the curtain), from measured times; the choice never changes
//! a result.

use super::{CpuModel, V3};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// Springs shorter than this have no direction: their force and Jacobian are taken as zero
/// (the GPU uses the same guard).
pub const EPS_LEN: f64 = 1e-9;

/// Springs per chunk at least, when [`ForcePlan::for_model`] picks the chunks: a chunk is then some
/// 25 µs of work or more, against the few µs of handing it to another thread (and each chunk
/// boundary evaluates a few hundred springs twice).
const MIN_CHUNK_SPRINGS: usize = 8192;

/// Chunks at most (the calling thread and up to 15 helpers).
const MAX_CHUNKS: usize = 16;

/// Particles per task: a task's slots and states stay in L1/L2 between its spring pass and its gather.
/// A multiple of [`LANES`].
const TASK_PARTICLES: usize = 256;

/// One evaluation in this many tries the mode the [`Pacer`] thinks slower.
const PACER_EXPLORE: u64 = 32;

/// Particles per group: the gather sums the slots of a group's particles in vector lanes.
const LANES: usize = 4;

/// f64 per slot row of a group: x, y and z of its [`LANES`] particles.
const ROW: usize = 3 * LANES;

/// Per-step parameters shared by every kernel: the step, Rayleigh α and the external forces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepParams {
    /// The step h (s).
    pub h: f64,
    /// Rayleigh α of D = d₀M + αK (Shinya eq. 28).
    pub alpha: f64,
}

/// The damping stiffness K_c·u of one spring: k[c·u + (1 − c)(n̂·u) n̂] with c = max(0, 1 − L/l),
/// the spring's stiffness block (Kauppila §2.2) with its transverse term clamped at zero so that the
/// Rayleigh term αK (Shinya eq. 28) never injects energy (Choi & Ko).
#[inline(always)]
pub fn kc_apply(k: f64, c: f64, n: V3, u: V3) -> V3 {
    let un = n.dot(&u);
    (u * c + n * ((1.0 - c) * un)) * k
}

/// The force of spring `s` on its endpoint `a` (the force on `b` is its negation):
/// Hooke's law, damping along the spring and the Rayleigh term −α K_c (v_a − v_b).
#[inline(always)]
pub fn spring_force(m: &CpuModel, alpha: f64, s: usize, x: &[V3], v: &[V3]) -> V3 {
    let (a, b) = (m.sa[s] as usize, m.sb[s] as usize);
    let d = x[a] - x[b];
    let l = d.norm();
    if l <= EPS_LEN {
        return V3::zeros();
    }
    let n = d / l;
    let u = v[a] - v[b];
    let un = n.dot(&u);
    let k = m.k[s];
    let mut f = n * (-(k * (l - m.rest[s]) + m.kd[s] * un));
    if alpha != 0.0 {
        let c = (1.0 - m.rest[s] / l).max(0.0);
        f -= kc_apply(k, c, n, u) * alpha;
    }
    f
}

/// Acceleration of a free particle from the external fields: g − d₀(v − wind) − s(x − c).
#[inline(always)]
pub fn external_accel(m: &CpuModel, x: V3, v: V3) -> V3 {
    let mut a = m.gravity - (v - m.wind) * m.drag;
    if m.central_strength != 0.0 {
        a -= (x - m.central_center) * m.central_strength;
    }
    a
}

/// The cursor spring's acceleration on particle `i` (zero unless `i` is the cursor's particle):
/// −c (x − target) − d v (see [`crate::sim::Cursor`]). The gather adds it to a free particle's
/// acceleration after the external fields, as `accel` in `shaders/shared/forces.wgsl` does.
#[inline(always)]
pub fn cursor_accel(m: &CpuModel, i: usize, x: V3, v: V3) -> Option<V3> {
    match &m.cursor {
        Some(c) if c.particle == i => Some((x - V3::from(c.target)) * c.stiffness + v * c.damping),
        _ => None,
    }
}

/// One spring evaluation: the spring's endpoints (times 3: f64 offsets into the states) and the
/// chunk-local f64 offsets of the x components of the slots its force (on `a`) and its negation (on
/// `b`) go to; y and z lie [`LANES`] and 2·[`LANES`] further. A side owned by another chunk writes
/// the chunk's spare slot instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SpringJob {
    a3: u32,
    b3: u32,
    ga: u32,
    gb: u32,
}

/// A task: particles `p0..p1` (groups `q0..q1` of its chunk) and the spring jobs `j0..j1` that
/// complete their slots. Jobs `j0..jr` come in runs of four: four springs from four consecutive
/// particles (the lanes of one slot row) to four consecutive particles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Task {
    p0: u32,
    p1: u32,
    q0: u32,
    q1: u32,
    j0: u32,
    jr: u32,
    j1: u32,
}

/// A group of [`LANES`] consecutive particles: its slots start at chunk-local f64 offset `base` and
/// hold `rows` rows of [`ROW`] values (row e: the e-th slots of the lanes, x then y then z); its pad
/// slots are `pads[d0..d1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Group {
    base: u32,
    rows: u32,
    d0: u32,
    d1: u32,
}

/// A chunk: particles `p0..p1`, tasks `t0..t1`, groups `q0..q1`, and its f64 range `f0..f1` in the
/// slot buffer (the ring of its groups' slots, then a spare slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    p0: u32,
    p1: u32,
    t0: u32,
    t1: u32,
    q0: u32,
    q1: u32,
    f0: u32,
    f1: u32,
}

/// The evaluation order of [`accelerations`] (see the module docs): chunks of particles (one per
/// core), split into tasks, and the slot layout: each particle's incidence list gets one slot per
/// entry, in list order, stored by groups of [`LANES`] particles; a particle with fewer entries than
/// the longest of its group has pad slots holding −0, the identity of IEEE addition.
///
/// Built from the springs, stiffnesses, rest lengths, damping and incidence lists of a [`CpuModel`]
/// ([`CpuModel::new`] builds it); rebuild it after changing those.
#[derive(Clone, Default, PartialEq)]
pub struct ForcePlan {
    n: usize,
    springs: usize,
    jobs: Vec<SpringJob>,
    /// k, L and k_d of each job's spring, in job order.
    k: Vec<f64>,
    rest: Vec<f64>,
    kd: Vec<f64>,
    tasks: Vec<Task>,
    groups: Vec<Group>,
    /// Chunk-local f64 offsets of the x components of the pad slots.
    pads: Vec<u32>,
    chunks: Vec<Chunk>,
    /// f64 length of the slot buffer.
    len: usize,
    pacer: Pacer,
}

impl ForcePlan {
    /// Plans the evaluation of `m`'s springs in `chunks` chunks (at most [`MAX_CHUNKS`] and one per
    /// four particles), which run in parallel; the forces do not depend on the plan, only the speed.
    pub fn new(m: &CpuModel, chunks: usize) -> Self {
        let n = m.n;
        let ns = m.sa.len();
        let inc = &m.incidence;
        assert_eq!(inc.offsets.len(), n + 1, "incidence lists of another model");
        let deg = |i: usize| (inc.offsets[i + 1] - inc.offsets[i]) as usize;
        let total = inc.entries.len();
        let chunks = chunks.clamp(1, MAX_CHUNKS).min(n.div_ceil(LANES).max(1));
        // Chunk bounds: balance the incidence entries (the work is about proportional to them), on
        // group boundaries.
        let mut bounds = vec![0usize];
        for c in 1..chunks {
            let target = (total * c / chunks) as u32;
            let i = inc.offsets.partition_point(|&o| o < target).min(n) / LANES * LANES;
            bounds.push(i.max(*bounds.last().unwrap()));
        }
        bounds.push(n);
        bounds.dedup();
        let nchunks = bounds.len() - 1;
        let mut chunk_of = vec![0u32; n];
        for c in 0..nchunks {
            chunk_of[bounds[c]..bounds[c + 1]].iter_mut().for_each(|x| *x = c as u32);
        }
        // Tasks of every chunk.
        let (mut tasks, mut chunk_list) = (Vec::new(), Vec::new());
        let mut ngroups = 0;
        for c in 0..nchunks {
            let (p0, p1) = (bounds[c], bounds[c + 1]);
            let (t0, q0) = (tasks.len(), ngroups);
            for tp in (p0..p1).step_by(TASK_PARTICLES) {
                let tq = (tp + TASK_PARTICLES).min(p1);
                let q = |p: usize| (q0 + (p - p0).div_ceil(LANES)) as u32;
                tasks.push(Task { p0: tp as u32, p1: tq as u32, q0: q(tp), q1: q(tq), j0: 0, jr: 0, j1: 0 });
            }
            ngroups += (p1 - p0).div_ceil(LANES);
            let (t1, q1) = (tasks.len() as u32, ngroups as u32);
            chunk_list.push(Chunk { p0: p0 as u32, p1: p1 as u32, t0: t0 as u32, t1, q0: q0 as u32, q1, f0: 0, f1: 0 });
        }
        let layout = chunk_list.clone();
        let task_of = |i: usize| -> usize {
            let c = &layout[chunk_of[i] as usize];
            c.t0 as usize + (i - c.p0 as usize) / TASK_PARTICLES
        };
        let group_of = |i: usize| -> usize {
            let c = &layout[chunk_of[i] as usize];
            c.q0 as usize + (i - c.p0 as usize) / LANES
        };
        // The task of each spring evaluation (see below) and, per group, the first task that writes
        // one of its slots: its slots live from then until its gather.
        let writer = |p: usize, lo: usize| {
            if chunk_of[lo] == chunk_of[p] {
                task_of(lo)
            } else {
                layout[chunk_of[p] as usize].t0 as usize
            }
        };
        let mut group_task = Vec::with_capacity(ngroups);
        for c in &chunk_list {
            group_task.extend((c.p0 as usize..c.p1 as usize).step_by(LANES).map(task_of));
        }
        let mut first_write = group_task.clone();
        for (&a, &b) in m.sa.iter().zip(&m.sb) {
            let (a, b) = (a as usize, b as usize);
            if a >= n || b >= n {
                continue;
            }
            let lo = a.min(b);
            for p in [a, b] {
                let q = group_of(p);
                first_write[q] = first_write[q].min(writer(p, lo));
            }
        }
        // Slot layout: per chunk, the groups' rows are laid out in order in a ring, wrapping to its
        // start when a group does not fit before its end; a ring size is accepted when every row is
        // reused only by a group whose first write comes after the row's previous group was summed.
        // The smallest such power of two (or no wrapping at all) keeps the live slots in cache.
        let mut slot_of_entry = vec![0u32; total];
        let (mut groups, mut pads) = (Vec::with_capacity(ngroups), Vec::new());
        let mut f = 0usize;
        for ch in chunk_list.iter_mut() {
            let (p0, p1) = (ch.p0 as usize, ch.p1 as usize);
            let rows: Vec<usize> = (p0..p1).step_by(LANES).map(|g0| (g0..(g0 + LANES).min(p1)).map(deg).max().unwrap_or(0)).collect();
            let total_rows: usize = rows.iter().sum();
            let q0 = ch.q0 as usize;
            let mut ring = rows.iter().copied().max().unwrap_or(0).max(64).next_power_of_two();
            let bases = loop {
                if ring >= total_rows {
                    // no wrapping
                    let mut at = 0;
                    break rows
                        .iter()
                        .map(|&r| {
                            at += r;
                            at - r
                        })
                        .collect::<Vec<_>>();
                }
                let mut bases = Vec::with_capacity(rows.len());
                let mut owner = vec![usize::MAX; ring];
                let mut cursor = 0;
                let mut ok = true;
                for (i, &r) in rows.iter().enumerate() {
                    if cursor + r > ring {
                        cursor = 0;
                    }
                    for o in &mut owner[cursor..cursor + r] {
                        if *o != usize::MAX && group_task[q0 + *o] >= first_write[q0 + i] {
                            ok = false;
                        }
                        *o = i;
                    }
                    bases.push(cursor);
                    cursor += r;
                }
                if ok {
                    break bases;
                }
                ring *= 2;
            };
            let used = bases.iter().zip(&rows).map(|(b, r)| b + r).max().unwrap_or(0);
            for (i, (&base, &r)) in bases.iter().zip(&rows).enumerate() {
                let g0 = p0 + i * LANES;
                let d0 = pads.len();
                for lane in 0..(p1 - g0).min(LANES) {
                    let p = g0 + lane;
                    for e in 0..r {
                        let at = ((base + e) * ROW + lane) as u32;
                        if e < deg(p) {
                            slot_of_entry[inc.offsets[p] as usize + e] = at;
                        } else {
                            pads.push(at);
                        }
                    }
                }
                groups.push(Group { base: (base * ROW) as u32, rows: r as u32, d0: d0 as u32, d1: pads.len() as u32 });
            }
            let len = used * ROW + ROW; // the spare slot
            assert!(f + len < u32::MAX as usize, "model too large for the force plan");
            ch.f0 = f as u32;
            ch.f1 = (f + len) as u32;
            f += len;
        }
        // Slot of each spring side.
        let mut slot = vec![[u32::MAX; 2]; ns];
        for (pos, &e) in inc.entries.iter().enumerate() {
            slot[(e >> 1) as usize][(e & 1) as usize] = slot_of_entry[pos];
        }
        // Jobs per task: a spring goes to the task of its lower endpoint, and, when its upper endpoint
        // lies in another chunk, also to the first task of that chunk.
        let mut per_task: Vec<Vec<(usize, SpringJob)>> = vec![Vec::new(); tasks.len()];
        for (s, ((&a, &b), sl)) in m.sa.iter().zip(&m.sb).zip(&slot).enumerate() {
            let (a, b) = (a as usize, b as usize);
            if a >= n || b >= n || sl[0] == u32::MAX || sl[1] == u32::MAX {
                continue;
            }
            let (ca, cb) = (chunk_of[a] as usize, chunk_of[b] as usize);
            let job = |c: usize| {
                let ch = &chunk_list[c];
                let spare = ch.f1 - ch.f0 - ROW as u32;
                let side = |owner: usize, side: usize| if owner == c { sl[side] } else { spare };
                (s, SpringJob { a3: 3 * a as u32, b3: 3 * b as u32, ga: side(ca, 0), gb: side(cb, 1) })
            };
            let (lo, hi) = (a.min(b), a.max(b));
            let (c_lo, c_hi) = (chunk_of[lo] as usize, chunk_of[hi] as usize);
            per_task[task_of(lo)].push(job(c_lo));
            if c_hi != c_lo {
                per_task[chunk_list[c_hi].t0 as usize].push(job(c_hi));
            }
        }
        let mut jobs = Vec::with_capacity(ns + ns / 16);
        let (mut k, mut rest, mut kd) = (Vec::new(), Vec::new(), Vec::new());
        let is_run = |q: &[(usize, SpringJob)]| {
            let j0 = &q[0].1;
            (j0.ga as usize).is_multiple_of(LANES)
                && q.iter().enumerate().all(|(i, (_, j))| {
                    let i = i as u32;
                    j.a3 == j0.a3 + 3 * i && j.b3 == j0.b3 + 3 * i && j.ga == j0.ga + i
                })
        };
        for (t, list) in per_task.iter_mut().enumerate() {
            // By a-side slot: the springs of one slot row of a group come together.
            list.sort_unstable_by_key(|j| (j.1.ga, j.0));
            let (mut runs, mut rest_jobs) = (Vec::new(), Vec::new());
            let mut i = 0;
            while i < list.len() {
                if i + LANES <= list.len() && is_run(&list[i..i + LANES]) {
                    runs.extend_from_slice(&list[i..i + LANES]);
                    i += LANES;
                } else {
                    rest_jobs.push(list[i]);
                    i += 1;
                }
            }
            tasks[t].j0 = jobs.len() as u32;
            tasks[t].jr = (jobs.len() + runs.len()) as u32;
            for &(s, job) in runs.iter().chain(&rest_jobs) {
                jobs.push(job);
                k.push(m.k[s]);
                rest.push(m.rest[s]);
                kd.push(m.kd[s]);
            }
            tasks[t].j1 = jobs.len() as u32;
        }
        let plan =
            ForcePlan { n, springs: ns, jobs, k, rest, kd, tasks, groups, pads, chunks: chunk_list, len: f, pacer: Pacer::default() };
        plan.check();
        plan
    }

    /// The plan [`CpuModel::new`] uses: one chunk per rayon thread, at most one per
    /// [`MIN_CHUNK_SPRINGS`] springs.
    pub fn for_model(m: &CpuModel) -> Self {
        let chunks = rayon::current_num_threads().min(m.sa.len() / MIN_CHUNK_SPRINGS).max(1);
        ForcePlan::new(m, chunks)
    }

    /// Checks the invariants the unchecked kernels rely on: job endpoints `< n`, every slot written
    /// or read inside its chunk's range, chunks covering `0..n` and the slot buffer in order.
    fn check(&self) {
        let mut p = 0;
        let mut f = 0;
        for ch in &self.chunks {
            assert!(ch.p0 as usize == p && ch.p1 >= ch.p0 && ch.f0 as usize == f && ch.f1 > ch.f0);
            let len = (ch.f1 - ch.f0) as usize;
            for g in &self.groups[ch.q0 as usize..ch.q1 as usize] {
                assert!(g.base as usize + g.rows as usize * ROW + ROW <= len && g.d0 <= g.d1);
                for &d in &self.pads[g.d0 as usize..g.d1 as usize] {
                    assert!(d as usize + 2 * LANES < len);
                }
            }
            assert_eq!((ch.q1 - ch.q0) as usize, ((ch.p1 - ch.p0) as usize).div_ceil(LANES));
            for t in &self.tasks[ch.t0 as usize..ch.t1 as usize] {
                assert!(t.p0 >= ch.p0 && t.p1 <= ch.p1 && t.q0 >= ch.q0 && t.q1 <= ch.q1);
                assert!(t.j0 <= t.jr && t.jr <= t.j1 && ((t.jr - t.j0) as usize).is_multiple_of(LANES));
                for q in self.jobs[t.j0 as usize..t.jr as usize].chunks(LANES) {
                    for (i, j) in q.iter().enumerate() {
                        let i = i as u32;
                        assert!(j.a3 == q[0].a3 + 3 * i && j.b3 == q[0].b3 + 3 * i && j.ga == q[0].ga + i);
                    }
                }
                for j in &self.jobs[t.j0 as usize..t.j1 as usize] {
                    assert!((j.a3 as usize) < 3 * self.n && (j.b3 as usize) < 3 * self.n);
                    assert!(j.ga as usize + 2 * LANES < len && j.gb as usize + 2 * LANES < len);
                }
            }
            p = ch.p1 as usize;
            f = ch.f1 as usize;
        }
        assert!(p == self.n && f == self.len && self.k.len() == self.jobs.len());
        assert!(self.rest.len() == self.jobs.len() && self.kd.len() == self.jobs.len());
    }

    /// The particles per chunk (the chunks run in parallel).
    pub fn chunk_sizes(&self) -> Vec<usize> {
        self.chunks.iter().map(|c| (c.p1 - c.p0) as usize).collect()
    }

    /// Whether the plan fits the model (its particle and spring counts).
    fn fits(&self, m: &CpuModel) -> bool {
        self.n == m.n && self.springs == m.sa.len() && m.inv_mass.len() == m.n && !self.chunks.is_empty()
    }
}

impl std::fmt::Debug for ForcePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let runs: usize = self.tasks.iter().map(|t| (t.jr - t.j0) as usize).sum();
        f.debug_struct("ForcePlan")
            .field("particles", &self.n)
            .field("springs", &self.springs)
            .field("chunks", &self.chunk_sizes())
            .field("tasks", &self.tasks.len())
            .field("jobs", &self.jobs.len())
            .field("jobs_in_runs", &runs)
            .field("pads", &self.pads.len())
            .field("slot_f64", &self.len)
            .field("pacer", &self.pacer)
            .finish()
    }
}

/// Four particles' vectors by component: `self.0[k][lane]` (the gather's lanes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Soa4(pub(crate) [[f64; 4]; 3]);

impl Soa4 {
    const ZERO: Soa4 = Soa4([[0.0; 4]; 3]);

    /// All lanes `v`.
    #[inline(always)]
    fn splat(v: V3) -> Self {
        Soa4([[v.x; 4], [v.y; 4], [v.z; 4]])
    }
    /// Particles `i..i + 4` of `s`.
    #[inline(always)]
    fn load(s: &[V3], i: usize) -> Self {
        let s = &s[i..i + 4];
        let mut r = Soa4::ZERO;
        for (l, p) in s.iter().enumerate() {
            for k in 0..3 {
                r.0[k][l] = p[k];
            }
        }
        r
    }
    /// Writes particles `i..i + 4` of `s`.
    #[inline(always)]
    fn store(self, s: &mut [V3], i: usize) {
        for (l, p) in s[i..i + 4].iter_mut().enumerate() {
            *p = V3::new(self.0[0][l], self.0[1][l], self.0[2][l]);
        }
    }
    /// Lane l times `w[l]`.
    #[inline(always)]
    fn scale(self, w: [f64; 4]) -> Self {
        let mut r = self;
        for (rk, sk) in r.0.iter_mut().zip(&self.0) {
            for ((rl, &sl), &wl) in rk.iter_mut().zip(sk).zip(&w) {
                *rl = sl * wl;
            }
        }
        r
    }
}

impl std::ops::Add for Soa4 {
    type Output = Soa4;
    #[inline(always)]
    fn add(self, o: Soa4) -> Soa4 {
        let mut r = self;
        for k in 0..3 {
            for l in 0..4 {
                r.0[k][l] = self.0[k][l] + o.0[k][l];
            }
        }
        r
    }
}

impl std::ops::Sub for Soa4 {
    type Output = Soa4;
    #[inline(always)]
    fn sub(self, o: Soa4) -> Soa4 {
        let mut r = self;
        for k in 0..3 {
            for l in 0..4 {
                r.0[k][l] = self.0[k][l] - o.0[k][l];
            }
        }
        r
    }
}

impl std::ops::Mul<f64> for Soa4 {
    type Output = Soa4;
    #[inline(always)]
    fn mul(self, s: f64) -> Soa4 {
        let mut r = self;
        for k in 0..3 {
            for l in 0..4 {
                r.0[k][l] = self.0[k][l] * s;
            }
        }
        r
    }
}

/// A 3-vector or four of them in lanes: what an update rule computes with. The operations are the
/// same IEEE operations, component by component, either way.
pub(crate) trait Vector:
    Copy + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> + std::ops::Mul<f64, Output = Self>
{
}

impl Vector for V3 {}
impl Vector for Soa4 {}

/// An integrator update fused into the gather: from `I` inputs at a particle and its acceleration,
/// sets `O` outputs there (reading their old values when `READS_OUTS`).
pub(crate) trait Rule<const I: usize, const O: usize>: Copy + Send + Sync {
    /// Whether [`Rule::apply`] reads the old outputs.
    const READS_OUTS: bool;
    /// The update of one particle or four.
    fn apply<T: Vector>(&self, ins: [T; I], a: T, outs: &mut [T; O]);
}

/// Receives the accelerations of a chunk's particles, in order: `local` is the index within the
/// chunk's particles and `i` the global one.
pub(crate) trait Sink: Send + Sized {
    /// Splits into the sinks of particles `..at` and `at..` (local indices).
    fn split(self, at: usize) -> (Self, Self);
    /// Takes particle `i`'s acceleration.
    fn put(&mut self, local: usize, i: usize, a: V3);
    /// Takes the accelerations of particles `i..i + 4`.
    fn put4(&mut self, local: usize, i: usize, a: Soa4);
}

/// Stores the accelerations.
struct Store<'a>(&'a mut [V3]);

impl Sink for Store<'_> {
    fn split(self, at: usize) -> (Self, Self) {
        let (l, r) = self.0.split_at_mut(at);
        (Store(l), Store(r))
    }
    #[inline(always)]
    fn put(&mut self, local: usize, _i: usize, a: V3) {
        self.0[local] = a;
    }
    #[inline(always)]
    fn put4(&mut self, local: usize, _i: usize, a: Soa4) {
        a.store(self.0, local);
    }
}

/// Applies a [`Rule`] to each particle as its acceleration arrives.
pub(crate) struct Fused<'a, R, const I: usize, const O: usize> {
    ins: [&'a [V3]; I],
    outs: [&'a mut [V3]; O],
    rule: R,
}

impl<'a, R: Rule<I, O>, const I: usize, const O: usize> Fused<'a, R, I, O> {
    /// The sink of particles `0..n`: inputs `ins`, outputs `outs`.
    pub(crate) fn new(n: usize, ins: [&'a [V3]; I], outs: [&'a mut [V3]; O], rule: R) -> Self {
        let ins = ins.map(|s| &s[..n]);
        let outs = outs.map(|o| &mut o[..n]);
        Fused { ins, outs, rule }
    }
}

impl<R: Rule<I, O>, const I: usize, const O: usize> Sink for Fused<'_, R, I, O> {
    fn split(self, at: usize) -> (Self, Self) {
        let mut left = self.outs;
        let mut right: [&mut [V3]; O] = std::array::from_fn(|_| Default::default());
        for (l, r) in left.iter_mut().zip(right.iter_mut()) {
            let (a, b) = std::mem::take(l).split_at_mut(at);
            *l = a;
            *r = b;
        }
        (Fused { ins: self.ins, outs: left, rule: self.rule }, Fused { ins: self.ins, outs: right, rule: self.rule })
    }
    #[inline(always)]
    fn put(&mut self, local: usize, i: usize, a: V3) {
        let mut ins = [V3::zeros(); I];
        for (v, s) in ins.iter_mut().zip(&self.ins) {
            *v = s[i];
        }
        let mut outs = [V3::zeros(); O];
        if R::READS_OUTS {
            for (v, o) in outs.iter_mut().zip(&self.outs) {
                *v = o[local];
            }
        }
        self.rule.apply(ins, a, &mut outs);
        for (o, v) in self.outs.iter_mut().zip(outs) {
            o[local] = v;
        }
    }
    #[inline(always)]
    fn put4(&mut self, local: usize, i: usize, a: Soa4) {
        let mut ins = [Soa4::ZERO; I];
        for (v, s) in ins.iter_mut().zip(&self.ins) {
            *v = Soa4::load(s, i);
        }
        let mut outs = [Soa4::ZERO; O];
        if R::READS_OUTS {
            for (v, o) in outs.iter_mut().zip(&self.outs) {
                *v = Soa4::load(o, local);
            }
        }
        self.rule.apply(ins, a, &mut outs);
        for (o, v) in self.outs.iter_mut().zip(outs) {
            v.store(o, local);
        }
    }
}

/// The force of one spring job (the arithmetic of [`spring_force`], term by term), written to its
/// two slots.
///
/// # Safety
/// `x` and `v` hold `job.a3 + 3` and `job.b3 + 3` values, `g` holds `job.ga + 2·LANES + 1` and
/// `job.gb + 2·LANES + 1` (the plan's invariants, see [`ForcePlan::check`]).
#[inline(always)]
unsafe fn eval_job<const RAYLEIGH: bool>(alpha: f64, job: &SpringJob, [k, rest, kd]: [f64; 3], x: *const f64, v: *const f64, g: *mut f64) {
    let (xa, xb) = (x.add(job.a3 as usize), x.add(job.b3 as usize));
    let (dx, dy, dz) = (*xa - *xb, *xa.add(1) - *xb.add(1), *xa.add(2) - *xb.add(2));
    let l = (dx * dx + dy * dy + dz * dz).sqrt();
    let f = if l <= EPS_LEN {
        [0.0; 3]
    } else {
        let (nx, ny, nz) = (dx / l, dy / l, dz / l);
        let (va, vb) = (v.add(job.a3 as usize), v.add(job.b3 as usize));
        let (ux, uy, uz) = (*va - *vb, *va.add(1) - *vb.add(1), *va.add(2) - *vb.add(2));
        let un = nx * ux + ny * uy + nz * uz;
        let t = -(k * (l - rest) + kd * un);
        let (mut fx, mut fy, mut fz) = (nx * t, ny * t, nz * t);
        if RAYLEIGH {
            // f −= kc_apply(k, c, n, u) · α
            let c = (1.0 - rest / l).max(0.0);
            let w = (1.0 - c) * un;
            fx -= (ux * c + nx * w) * k * alpha;
            fy -= (uy * c + ny * w) * k * alpha;
            fz -= (uz * c + nz * w) * k * alpha;
        }
        [fx, fy, fz]
    };
    let (pa, pb) = (g.add(job.ga as usize), g.add(job.gb as usize));
    for (c, fc) in f.into_iter().enumerate() {
        *pa.add(c * LANES) = fc;
        *pb.add(c * LANES) = -fc;
    }
}

/// The AVX kernels: four spring jobs, or four particles' sums, in vector lanes. Every lane does the
/// IEEE operations of the scalar code in the same order (no contraction), so the results are those
/// of the scalar path bit for bit.
#[cfg(target_arch = "x86_64")]
mod avx {
    use super::{SpringJob, EPS_LEN, LANES};
    use std::arch::x86_64::*;

    /// (x_a − x_b) as (xy, z) of one job.
    #[inline(always)]
    unsafe fn diff(p: *const f64, a3: u32, b3: u32) -> (__m128d, __m128d) {
        let (pa, pb) = (p.add(a3 as usize), p.add(b3 as usize));
        (_mm_sub_pd(_mm_loadu_pd(pa), _mm_loadu_pd(pb)), _mm_sub_sd(_mm_load_sd(pa.add(2)), _mm_load_sd(pb.add(2))))
    }

    /// The 256-bit vector (lo, hi).
    #[inline(always)]
    unsafe fn join(lo: __m128d, hi: __m128d) -> __m256d {
        _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(lo), hi)
    }

    /// (x, y, z) lanes of four (xy, z) pairs.
    #[inline(always)]
    unsafe fn transpose(p: [(__m128d, __m128d); 4]) -> [__m256d; 3] {
        let x01 = _mm_unpacklo_pd(p[0].0, p[1].0);
        let y01 = _mm_unpackhi_pd(p[0].0, p[1].0);
        let x23 = _mm_unpacklo_pd(p[2].0, p[3].0);
        let y23 = _mm_unpackhi_pd(p[2].0, p[3].0);
        let z01 = _mm_unpacklo_pd(p[0].1, p[1].1);
        let z23 = _mm_unpacklo_pd(p[2].1, p[3].1);
        [join(x01, x23), join(y01, y23), join(z01, z23)]
    }

    /// Stores lane j of `f` at `g + off[j]`.
    #[inline(always)]
    unsafe fn scatter(g: *mut f64, off: [u32; 4], f: __m256d) {
        let (lo, hi) = (_mm256_castpd256_pd128(f), _mm256_extractf128_pd::<1>(f));
        _mm_storel_pd(g.add(off[0] as usize), lo);
        _mm_storeh_pd(g.add(off[1] as usize), lo);
        _mm_storel_pd(g.add(off[2] as usize), hi);
        _mm_storeh_pd(g.add(off[3] as usize), hi);
    }

    /// Jobs `jobs` (four at a time; the caller does the rest), with their k, L, k_d at `k`, `rest`,
    /// `kd`.
    ///
    /// # Safety
    /// The CPU has AVX; `k`, `rest`, `kd` hold `jobs.len()` values, and every job's offsets satisfy
    /// [`super::eval_job`]'s contract.
    #[target_feature(enable = "avx")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn eval_jobs<const RAYLEIGH: bool>(
        alpha: f64,
        jobs: &[SpringJob],
        k: *const f64,
        rest: *const f64,
        kd: *const f64,
        x: *const f64,
        v: *const f64,
        g: *mut f64,
    ) {
        let one = _mm256_set1_pd(1.0);
        let zero = _mm256_setzero_pd();
        let eps = _mm256_set1_pd(EPS_LEN);
        let sign = _mm256_set1_pd(-0.0);
        let alpha = _mm256_set1_pd(alpha);
        for (j, q) in jobs.chunks_exact(4).enumerate() {
            let d = transpose([diff(x, q[0].a3, q[0].b3), diff(x, q[1].a3, q[1].b3), diff(x, q[2].a3, q[2].b3), diff(x, q[3].a3, q[3].b3)]);
            let u = transpose([diff(v, q[0].a3, q[0].b3), diff(v, q[1].a3, q[1].b3), diff(v, q[2].a3, q[2].b3), diff(v, q[3].a3, q[3].b3)]);
            let k = _mm256_loadu_pd(k.add(4 * j));
            let rest = _mm256_loadu_pd(rest.add(4 * j));
            let kd = _mm256_loadu_pd(kd.add(4 * j));
            let l2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(d[0], d[0]), _mm256_mul_pd(d[1], d[1])), _mm256_mul_pd(d[2], d[2]));
            let l = _mm256_sqrt_pd(l2);
            let n = [_mm256_div_pd(d[0], l), _mm256_div_pd(d[1], l), _mm256_div_pd(d[2], l)];
            let un = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(n[0], u[0]), _mm256_mul_pd(n[1], u[1])), _mm256_mul_pd(n[2], u[2]));
            let t = _mm256_xor_pd(_mm256_add_pd(_mm256_mul_pd(k, _mm256_sub_pd(l, rest)), _mm256_mul_pd(kd, un)), sign);
            let mut f = [_mm256_mul_pd(n[0], t), _mm256_mul_pd(n[1], t), _mm256_mul_pd(n[2], t)];
            if RAYLEIGH {
                // max(x, 0) is 0 for a NaN x, as f64::max
                let c = _mm256_max_pd(_mm256_sub_pd(one, _mm256_div_pd(rest, l)), zero);
                let w = _mm256_mul_pd(_mm256_sub_pd(one, c), un);
                for i in 0..3 {
                    let kc = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(u[i], c), _mm256_mul_pd(n[i], w)), k);
                    f[i] = _mm256_sub_pd(f[i], _mm256_mul_pd(kc, alpha));
                }
            }
            // zero force where l <= EPS_LEN (a NaN length keeps its NaN force, as in the scalar path)
            let live = _mm256_cmp_pd::<_CMP_NLE_UQ>(l, eps);
            let (ga, gb) = ([q[0].ga, q[1].ga, q[2].ga, q[3].ga], [q[0].gb, q[1].gb, q[2].gb, q[3].gb]);
            for (i, fi) in f.into_iter().enumerate() {
                let fi = _mm256_and_pd(fi, live);
                let gi = g.add(i * LANES);
                scatter(gi, ga, fi);
                scatter(gi, gb, _mm256_xor_pd(fi, sign));
            }
        }
    }

    /// (x, y, z) lanes of four consecutive particles' coordinates, given as three rows
    /// (x0 y0 z0 x1), (y1 z1 x2 y2), (z2 x3 y3 z3).
    #[inline(always)]
    unsafe fn transpose_run(r: [__m256d; 3]) -> [__m256d; 3] {
        let p = _mm256_blend_pd::<0b1100>(r[0], r[1]); // x0 y0 x2 y2
        let q = _mm256_permute2f128_pd::<0x21>(r[0], r[2]); // z0 x1 z2 x3
        let s = _mm256_blend_pd::<0b1100>(r[1], r[2]); // y1 z1 y3 z3
        [_mm256_shuffle_pd::<0b1010>(p, q), _mm256_shuffle_pd::<0b0101>(p, s), _mm256_shuffle_pd::<0b1010>(q, s)]
    }

    /// (p_a − p_b) of a run: four consecutive particles from `a3` minus four from `b3`.
    #[inline(always)]
    unsafe fn diff_run(p: *const f64, a3: u32, b3: u32) -> [__m256d; 3] {
        let (pa, pb) = (p.add(a3 as usize), p.add(b3 as usize));
        transpose_run([
            _mm256_sub_pd(_mm256_loadu_pd(pa), _mm256_loadu_pd(pb)),
            _mm256_sub_pd(_mm256_loadu_pd(pa.add(4)), _mm256_loadu_pd(pb.add(4))),
            _mm256_sub_pd(_mm256_loadu_pd(pa.add(8)), _mm256_loadu_pd(pb.add(8))),
        ])
    }

    /// What the stages of [`eval_runs`] read and write.
    struct Runs<'a> {
        jobs: &'a [SpringJob],
        k: *const f64,
        rest: *const f64,
        kd: *const f64,
        x: *const f64,
        v: *const f64,
        g: *mut f64,
        alpha: __m256d,
    }

    /// Stage 1 of run j: d = x_a − x_b and the lengths l.
    #[inline(always)]
    unsafe fn run_lengths(r: &Runs, j: usize) -> ([__m256d; 3], __m256d) {
        let q = &r.jobs[4 * j];
        let d = diff_run(r.x, q.a3, q.b3);
        let l2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(d[0], d[0]), _mm256_mul_pd(d[1], d[1])), _mm256_mul_pd(d[2], d[2]));
        (d, _mm256_sqrt_pd(l2))
    }

    /// Stage 2 of run j: the directions n = d/l and (Rayleigh) c = max(0, 1 − L/l).
    #[inline(always)]
    unsafe fn run_directions<const RAYLEIGH: bool>(
        r: &Runs,
        j: usize,
        (d, l): ([__m256d; 3], __m256d),
    ) -> ([__m256d; 3], __m256d, __m256d) {
        let n = [_mm256_div_pd(d[0], l), _mm256_div_pd(d[1], l), _mm256_div_pd(d[2], l)];
        let c = if RAYLEIGH {
            // max(x, 0) is 0 for a NaN x, as f64::max
            let rest = _mm256_loadu_pd(r.rest.add(4 * j));
            _mm256_max_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), _mm256_div_pd(rest, l)), _mm256_setzero_pd())
        } else {
            _mm256_setzero_pd()
        };
        (n, l, c)
    }

    /// Stage 3 of run j: the forces, stored into the slots.
    #[inline(always)]
    unsafe fn run_forces<const RAYLEIGH: bool>(r: &Runs, j: usize, (n, l, c): ([__m256d; 3], __m256d, __m256d)) {
        let sign = _mm256_set1_pd(-0.0);
        let q = &r.jobs[4 * j..4 * j + 4];
        let u = diff_run(r.v, q[0].a3, q[0].b3);
        let k = _mm256_loadu_pd(r.k.add(4 * j));
        let rest = _mm256_loadu_pd(r.rest.add(4 * j));
        let kd = _mm256_loadu_pd(r.kd.add(4 * j));
        let un = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(n[0], u[0]), _mm256_mul_pd(n[1], u[1])), _mm256_mul_pd(n[2], u[2]));
        let t = _mm256_xor_pd(_mm256_add_pd(_mm256_mul_pd(k, _mm256_sub_pd(l, rest)), _mm256_mul_pd(kd, un)), sign);
        let mut f = [_mm256_mul_pd(n[0], t), _mm256_mul_pd(n[1], t), _mm256_mul_pd(n[2], t)];
        if RAYLEIGH {
            let w = _mm256_mul_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), c), un);
            for i in 0..3 {
                let kc = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(u[i], c), _mm256_mul_pd(n[i], w)), k);
                f[i] = _mm256_sub_pd(f[i], _mm256_mul_pd(kc, r.alpha));
            }
        }
        // zero force where l <= EPS_LEN (a NaN length keeps its NaN force, as in the scalar path)
        let live = _mm256_cmp_pd::<_CMP_NLE_UQ>(l, _mm256_set1_pd(EPS_LEN));
        let ga = r.g.add(q[0].ga as usize);
        let gb = [q[0].gb, q[1].gb, q[2].gb, q[3].gb];
        for (i, fi) in f.into_iter().enumerate() {
            let fi = _mm256_and_pd(fi, live);
            _mm256_storeu_pd(ga.add(i * LANES), fi);
            scatter(r.g.add(i * LANES), gb, _mm256_xor_pd(fi, sign));
        }
    }

    /// Runs of four jobs (see [`super::Task`]): lane i of each run is its job i.
    ///
    /// # Safety
    /// As [`eval_jobs`]; the jobs form runs.
    #[target_feature(enable = "avx")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn eval_runs<const RAYLEIGH: bool>(
        alpha: f64,
        jobs: &[SpringJob],
        k: *const f64,
        rest: *const f64,
        kd: *const f64,
        x: *const f64,
        v: *const f64,
        g: *mut f64,
    ) {
        let r = Runs { jobs, k, rest, kd, x, v, g, alpha: _mm256_set1_pd(alpha) };
        // Software-pipelined in three stages: lengths (square roots) of run j + 2, directions
        // (divisions) of run j + 1, and the rest of run j.
        let runs = jobs.len() / 4;
        if runs < 2 {
            if runs == 1 {
                run_forces::<RAYLEIGH>(&r, 0, run_directions::<RAYLEIGH>(&r, 0, run_lengths(&r, 0)));
            }
            return;
        }
        let mut b = run_directions::<RAYLEIGH>(&r, 0, run_lengths(&r, 0));
        let mut a = run_lengths(&r, 1);
        for j in 2..runs {
            let a2 = run_lengths(&r, j);
            let b2 = run_directions::<RAYLEIGH>(&r, j - 1, a);
            run_forces::<RAYLEIGH>(&r, j - 2, b);
            a = a2;
            b = b2;
        }
        let b2 = run_directions::<RAYLEIGH>(&r, runs - 1, a);
        run_forces::<RAYLEIGH>(&r, runs - 2, b);
        run_forces::<RAYLEIGH>(&r, runs - 1, b2);
    }

    /// The slot sums of a group's four particles: rows `0..rows` from `g` on, in order.
    ///
    /// # Safety
    /// The CPU has AVX; `g` holds `rows·ROW` values.
    #[inline(always)]
    pub(super) unsafe fn sum_group(g: *const f64, rows: usize) -> [[f64; 4]; 3] {
        let (mut fx, mut fy, mut fz) = (_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd());
        for e in 0..rows {
            let r = g.add(e * 3 * LANES);
            fx = _mm256_add_pd(fx, _mm256_loadu_pd(r));
            fy = _mm256_add_pd(fy, _mm256_loadu_pd(r.add(LANES)));
            fz = _mm256_add_pd(fz, _mm256_loadu_pd(r.add(2 * LANES)));
        }
        let mut out = [[0.0; 4]; 3];
        _mm256_storeu_pd(out[0].as_mut_ptr(), fx);
        _mm256_storeu_pd(out[1].as_mut_ptr(), fy);
        _mm256_storeu_pd(out[2].as_mut_ptr(), fz);
        out
    }

    /// [`super::run_chunk_body`] compiled with AVX.
    ///
    /// # Safety
    /// The CPU has AVX, and the contract of [`super::run_chunk_body`].
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn run_chunk<S: super::Sink, const RAYLEIGH: bool>(ctx: &super::Ctx, ch: &super::Chunk, g: &mut [f64], sink: &mut S) {
        super::run_chunk_body::<S, RAYLEIGH, true>(ctx, ch, g, sink)
    }
}

/// Whether the CPU has AVX (checked once, then cached by the standard library).
#[inline(always)]
pub(crate) fn has_avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// What every chunk reads.
pub(crate) struct Ctx<'a> {
    m: &'a CpuModel,
    plan: &'a ForcePlan,
    alpha: f64,
    x: &'a [V3],
    v: &'a [V3],
    /// Whether the vector kernels may run.
    vector: bool,
}

/// One chunk: the pads, then its tasks in order, each a spring pass then a gather into the sink.
///
/// # Safety
/// `g` is the chunk's range of the slot buffer; `ctx.x` and `ctx.v` hold `n` particles; with `AVX`,
/// the CPU has AVX.
#[inline(always)]
unsafe fn run_chunk_body<S: Sink, const RAYLEIGH: bool, const AVX: bool>(ctx: &Ctx, ch: &Chunk, g: &mut [f64], sink: &mut S) {
    let (m, plan) = (ctx.m, ctx.plan);
    let (x, v) = (ctx.x.as_ptr() as *const f64, ctx.v.as_ptr() as *const f64);
    let gp = g.as_mut_ptr();
    for t in &plan.tasks[ch.t0 as usize..ch.t1 as usize] {
        let (j0, jr, j1) = (t.j0 as usize, t.jr as usize, t.j1 as usize);
        let mut done = j0;
        #[cfg(target_arch = "x86_64")]
        if AVX {
            let (k, rest, kd) = (plan.k[j0..].as_ptr(), plan.rest[j0..].as_ptr(), plan.kd[j0..].as_ptr());
            avx::eval_runs::<RAYLEIGH>(ctx.alpha, &plan.jobs[j0..jr], k, rest, kd, x, v, gp);
            let quads = (j1 - jr) / 4 * 4;
            let (k, rest, kd) = (plan.k[jr..].as_ptr(), plan.rest[jr..].as_ptr(), plan.kd[jr..].as_ptr());
            avx::eval_jobs::<RAYLEIGH>(ctx.alpha, &plan.jobs[jr..jr + quads], k, rest, kd, x, v, gp);
            done = jr + quads;
        }
        for j in done..j1 {
            eval_job::<RAYLEIGH>(ctx.alpha, &plan.jobs[j], [plan.k[j], plan.rest[j], plan.kd[j]], x, v, gp);
        }
        for q in t.q0..t.q1 {
            let grp = &plan.groups[q as usize];
            for &d in &plan.pads[grp.d0 as usize..grp.d1 as usize] {
                for c in 0..3 {
                    *gp.add(d as usize + c * LANES) = -0.0;
                }
            }
            let rows = grp.rows as usize;
            let r = gp.add(grp.base as usize) as *const f64;
            let sums = if AVX {
                #[cfg(target_arch = "x86_64")]
                {
                    avx::sum_group(r, rows)
                }
                #[cfg(not(target_arch = "x86_64"))]
                unreachable!()
            } else {
                let mut f = [[0.0; 4]; 3];
                for e in 0..rows {
                    for (c, fc) in f.iter_mut().enumerate() {
                        for (lane, fl) in fc.iter_mut().enumerate() {
                            *fl += *r.add(e * ROW + c * LANES + lane);
                        }
                    }
                }
                f
            };
            let i0 = ch.p0 as usize + (q - ch.q0) as usize * LANES;
            let lanes = (ch.p1 as usize - i0).min(LANES);
            let local = i0 - ch.p0 as usize;
            if lanes == LANES {
                // a = f·w + g − d₀(v − wind) − s(x − c), lane by lane (external_accel), 0 if pinned
                let w: [f64; 4] = m.inv_mass[i0..i0 + 4].try_into().unwrap();
                let (x4, v4) = (Soa4::load(ctx.x, i0), Soa4::load(ctx.v, i0));
                let mut ext = Soa4::splat(m.gravity) - (v4 - Soa4::splat(m.wind)) * m.drag;
                if m.central_strength != 0.0 {
                    ext = ext - (x4 - Soa4::splat(m.central_center)) * m.central_strength;
                }
                let mut a = Soa4(sums).scale(w) + ext;
                if let Some(cu) = m.cursor.filter(|c| (i0..i0 + 4).contains(&c.particle)) {
                    let (i, l) = (cu.particle, cu.particle - i0);
                    if let Some(ac) = cursor_accel(m, i, ctx.x[i], ctx.v[i]) {
                        for (c, comp) in a.0.iter_mut().enumerate() {
                            comp[l] -= ac[c];
                        }
                    }
                }
                for (l, &wl) in w.iter().enumerate() {
                    if wl == 0.0 {
                        for c in a.0.iter_mut() {
                            c[l] = 0.0;
                        }
                    }
                }
                sink.put4(local, i0, a);
            } else {
                for (lane, i) in (i0..i0 + lanes).enumerate() {
                    let w = m.inv_mass[i];
                    let a = if w == 0.0 {
                        V3::zeros()
                    } else {
                        let a = V3::new(sums[0][lane], sums[1][lane], sums[2][lane]) * w + external_accel(m, ctx.x[i], ctx.v[i]);
                        match cursor_accel(m, i, ctx.x[i], ctx.v[i]) {
                            Some(ac) => a - ac,
                            None => a,
                        }
                    };
                    sink.put(local + lane, i, a);
                }
            }
        }
    }
}

/// One chunk with the widest vectors the CPU has.
fn run_chunk<S: Sink, const RAYLEIGH: bool>(ctx: &Ctx, ch: &Chunk, g: &mut [f64], sink: &mut S) {
    assert!(g.len() == (ch.f1 - ch.f0) as usize && ctx.x.len() >= ctx.plan.n && ctx.v.len() >= ctx.plan.n);
    #[cfg(target_arch = "x86_64")]
    if ctx.vector && has_avx() {
        // SAFETY: the CPU has AVX; the lengths were checked above and the plan's invariants keep
        // every offset inside them.
        return unsafe { avx::run_chunk::<S, RAYLEIGH>(ctx, ch, g, sink) };
    }
    // SAFETY: as above.
    unsafe { run_chunk_body::<S, RAYLEIGH, false>(ctx, ch, g, sink) }
}

/// Runs chunks `cs` (consecutive) one after the other on the calling thread, splitting the slot
/// buffer and the sink along them.
fn run_chunks_sequential<S: Sink, const RAYLEIGH: bool>(ctx: &Ctx, cs: &[Chunk], g: &mut [f64], sink: S) {
    let (mut g, mut sink) = (g, Some(sink));
    for (i, ch) in cs.iter().enumerate() {
        let (gi, mut si) = if i + 1 < cs.len() {
            let (gi, gr) = std::mem::take(&mut g).split_at_mut((ch.f1 - ch.f0) as usize);
            g = gr;
            let (si, sr) = sink.take().expect("sink").split((ch.p1 - ch.p0) as usize);
            sink = Some(sr);
            (gi, si)
        } else {
            (std::mem::take(&mut g), sink.take().expect("sink"))
        };
        run_chunk::<S, RAYLEIGH>(ctx, ch, gi, &mut si);
    }
}

/// A chunk's share of an evaluation, run by whichever thread takes it first.
struct Share<'a, S> {
    work: Mutex<Option<(&'a Chunk, &'a mut [f64], S)>>,
}

/// Runs the chunks on the calling thread and the [`team`] together: chunk 0 here, chunk i on helper
/// i − 1, or here when that helper has not started it by the time this thread is free (or when the
/// team is busy with another caller).
fn run_chunks_team<S: Sink, const RAYLEIGH: bool>(ctx: &Ctx, cs: &[Chunk], g: &mut [f64], sink: S, team: &super::team::Team) {
    let mut shares = Vec::with_capacity(cs.len());
    let (mut g, mut sink) = (g, Some(sink));
    for (i, ch) in cs.iter().enumerate() {
        let (gi, si) = if i + 1 < cs.len() {
            let (gi, gr) = std::mem::take(&mut g).split_at_mut((ch.f1 - ch.f0) as usize);
            g = gr;
            let (si, sr) = sink.take().expect("sink").split((ch.p1 - ch.p0) as usize);
            sink = Some(sr);
            (gi, si)
        } else {
            (std::mem::take(&mut g), sink.take().expect("sink"))
        };
        shares.push(Share { work: Mutex::new(Some((ch, gi, si))) });
    }
    let run = |sh: &Share<S>| {
        let work = sh.work.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((ch, gi, mut si)) = work {
            run_chunk::<S, RAYLEIGH>(ctx, ch, gi, &mut si);
        }
    };
    let jobs: Vec<_> = shares.iter().map(|sh| move || run(sh)).collect();
    let refs: Vec<&(dyn Fn() + Sync)> = jobs.iter().map(|j| j as &(dyn Fn() + Sync)).collect();
    if team.run(&refs).is_none() {
        // the team is busy: everything here
        for job in &refs {
            job();
        }
    }
}

/// How an evaluation runs its chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// One after the other on the calling thread.
    Sequential = 0,
    /// On the calling thread and the helper [`team`] together ([`run_chunks_team`]).
    Team = 1,
}

const MODES: [Mode; 2] = [Mode::Sequential, Mode::Team];

/// Picks how each evaluation runs (see [`Mode`]) from running averages of the time each mode took,
/// trying the other one now and then: a helper costs a few µs when it is awake, tens of µs when it
/// must be woken, and a second core busy with other work can cost more than it saves. The forces do
/// not depend on the choice, only the speed.
#[derive(Debug, Default)]
struct Pacer {
    calls: AtomicU64,
    /// Running averages (ns) per mode, 0 before the first.
    avg: [AtomicU64; 2],
}

impl Clone for Pacer {
    fn clone(&self) -> Self {
        Pacer::default()
    }
}

impl PartialEq for Pacer {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Pacer {
    /// The mode of the next evaluation.
    fn mode(&self) -> Mode {
        let c = self.calls.fetch_add(1, Relaxed);
        let avg = [self.avg[0].load(Relaxed), self.avg[1].load(Relaxed)];
        if let Some(untried) = avg.iter().position(|&a| a == 0) {
            return MODES[untried];
        }
        if c % PACER_EXPLORE == PACER_EXPLORE - 1 {
            return MODES[(c / PACER_EXPLORE % MODES.len() as u64) as usize];
        }
        let best = (0..MODES.len()).min_by_key(|&i| avg[i]).unwrap_or(0);
        MODES[best]
    }
    /// Records an evaluation's time: the average follows a faster time at once (halfway) and a
    /// slower one slowly (an eighth, a sample counting at most four times the average), so that it
    /// tracks what the mode achieves rather than the odd preemption.
    fn record(&self, mode: Mode, ns: u64) {
        let avg = &self.avg[mode as usize];
        let old = avg.load(Relaxed);
        let new = match old {
            0 => ns,
            _ if ns < old => (old + ns) / 2,
            _ => (7 * old + ns.min(4 * old)) / 8,
        };
        avg.store(new.max(1), Relaxed);
    }
}

/// Views vectors as their coordinates.
fn flat_mut(v: &mut [V3]) -> &mut [f64] {
    const _: () = assert!(std::mem::size_of::<V3>() == 3 * std::mem::size_of::<f64>());
    const _: () = assert!(std::mem::align_of::<V3>() == std::mem::align_of::<f64>());
    // SAFETY: V3 (nalgebra's repr(C) Matrix over a repr(transparent) [[f64; 3]; 1]) is three
    // contiguous f64 (size and alignment checked above).
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut f64, 3 * v.len()) }
}

/// Evaluates a(x, v) of every particle into `sink`, using `scratch` as the slot buffer.
pub(crate) fn accelerations_into<S: Sink>(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], scratch: &mut Vec<V3>, sink: S) {
    accelerations_with(m, p, x, v, scratch, sink, true)
}

/// [`accelerations_into`], with the vector kernels only when `vector` (and the CPU has them).
fn accelerations_with<S: Sink>(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], scratch: &mut Vec<V3>, sink: S, vector: bool) {
    let plan = &m.force_plan;
    assert!(plan.fits(m), "the force plan does not fit the model: rebuild it with ForcePlan::new");
    assert!(x.len() >= m.n && v.len() >= m.n, "state shorter than the model");
    // The slot buffer, 32-byte aligned.
    let need = (plan.len + 3).div_ceil(3) + 1;
    if scratch.len() < need {
        scratch.resize(need, V3::zeros());
    }
    let flat = flat_mut(scratch);
    let skip = flat.as_ptr().align_offset(32).min(3);
    let g = &mut flat[skip..skip + plan.len];
    let ctx = Ctx { m, plan, alpha: p.alpha, x, v, vector };
    let cs = &plan.chunks[..];
    let threads = rayon::current_num_threads();
    let pool = cs.len() > 1 && threads > 1;
    let mode = if pool { plan.pacer.mode() } else { Mode::Sequential };
    let t = Instant::now();
    match (mode, p.alpha != 0.0) {
        (Mode::Sequential, true) => run_chunks_sequential::<S, true>(&ctx, cs, g, sink),
        (Mode::Sequential, false) => run_chunks_sequential::<S, false>(&ctx, cs, g, sink),
        (Mode::Team, true) => run_chunks_team::<S, true>(&ctx, cs, g, sink, super::team::shared()),
        (Mode::Team, false) => run_chunks_team::<S, false>(&ctx, cs, g, sink, super::team::shared()),
    }
    if pool {
        plan.pacer.record(mode, t.elapsed().as_nanos() as u64);
    }
}

/// Accelerations a = M⁻¹ f(x, v) of every particle: per-spring forces, then a per-particle gather over
/// the CSR incidence lists (the GPU gathers in the same order). Pinned particles get zero.
/// `spring_f` is working memory.
pub fn accelerations(m: &CpuModel, p: &StepParams, x: &[V3], v: &[V3], out: &mut [V3], spring_f: &mut Vec<V3>) {
    accelerations_into(m, p, x, v, spring_f, Store(&mut out[..m.n]));
}

/// Total energy: kinetic + spring potential + gravity + central field potential.
pub fn energy(m: &CpuModel, x: &[V3], v: &[V3]) -> f64 {
    let mut e = 0.0;
    for i in 0..m.n {
        let mass = m.mass[i];
        e += 0.5 * mass * v[i].norm_squared() - mass * m.gravity.dot(&x[i]);
        if m.central_strength != 0.0 {
            e += 0.5 * mass * m.central_strength * (x[i] - m.central_center).norm_squared();
        }
    }
    for s in 0..m.sa.len() {
        let l = (x[m.sa[s] as usize] - x[m.sb[s] as usize]).norm();
        e += 0.5 * m.k[s] * (l - m.rest[s]).powi(2);
    }
    e
}

/// Largest relative change of length |l − L|/L over the springs with L > 0.
pub fn max_strain(m: &CpuModel, x: &[V3]) -> f64 {
    let mut worst: f64 = 0.0;
    for s in 0..m.sa.len() {
        if m.rest[s] > 0.0 {
            let l = (x[m.sa[s] as usize] - x[m.sb[s] as usize]).norm();
            worst = worst.max((l - m.rest[s]).abs() / m.rest[s]);
        }
    }
    worst
}

/// Total momentum Σ mᵢvᵢ.
pub fn momentum(m: &CpuModel, v: &[V3]) -> V3 {
    (0..m.n).fold(V3::zeros(), |acc, i| acc + v[i] * m.mass[i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Forces, Model};

    /// A deterministic value in [-0.5, 0.5).
    fn hash(i: usize) -> f64 {
        let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h ^ (h >> 29)) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }

    /// The plain evaluation: every spring's force, then the gather over the incidence lists.
    fn reference(m: &CpuModel, alpha: f64, x: &[V3], v: &[V3]) -> Vec<V3> {
        let sf: Vec<V3> = (0..m.sa.len()).map(|s| spring_force(m, alpha, s, x, v)).collect();
        (0..m.n)
            .map(|i| {
                let w = m.inv_mass[i];
                if w == 0.0 {
                    return V3::zeros();
                }
                let mut f = V3::zeros();
                for &e in m.incidence.of(i) {
                    let fs = sf[(e >> 1) as usize];
                    if e & 1 == 0 {
                        f += fs;
                    } else {
                        f -= fs;
                    }
                }
                let a = f * w + external_accel(m, x[i], v[i]);
                a - cursor_accel(m, i, x[i], v[i]).unwrap_or_else(V3::zeros)
            })
            .collect()
    }

    /// A jittered state of `model`.
    fn state(model: &Model) -> (Vec<V3>, Vec<V3>) {
        let x = model
            .positions
            .iter()
            .enumerate()
            .map(|(i, p)| V3::new(p[0] + 0.004 * hash(6 * i), p[1] + 0.004 * hash(6 * i + 1), p[2] + 0.004 * hash(6 * i + 2)))
            .collect();
        let v = (0..model.n_particles()).map(|i| V3::new(hash(6 * i + 3), hash(6 * i + 4), hash(6 * i + 5))).collect();
        (x, v)
    }

    /// Random springs between random particles, damping, wind, a central field, pins and a
    /// zero-length spring: the generic paths and chunk-straddling springs.
    fn tangle(n: usize) -> Model {
        let mut m =
            Model::new(Forces { gravity: [0.0, -9.81, 0.0], drag: 0.3, wind: [1.0, 0.0, 0.5], central: Some(([0.1, 0.2, 0.3], 2.0)) });
        for i in 0..n {
            m.add_particle([hash(3 * i), hash(3 * i + 1), hash(3 * i + 2)], 0.01 + 0.001 * (i % 7) as f64);
        }
        for s in 0..4 * n {
            let a = (hash(7 * s + 100) + 0.5) * n as f64;
            let b = (hash(7 * s + 101) + 0.5) * n as f64;
            let (a, b) = (a as u32 % n as u32, b as u32 % n as u32);
            if a != b {
                m.add_spring(a, b, 50.0 + (s % 5) as f64, 0.01 * (s % 3) as f64);
            }
        }
        m.springs[0].rest = 0.3;
        m.pin(3);
        m.pin(n / 2);
        m
    }

    fn check(model: &Model, chunks: &[usize]) {
        let mut cm = CpuModel::new(model).unwrap();
        let (x, mut v) = state(model);
        let pinned: Vec<usize> = (0..cm.n).filter(|&i| cm.inv_mass[i] == 0.0).collect();
        for &i in &pinned {
            v[i] = V3::zeros();
        }
        // no cursor; a cursor on a particle in a group of four, on the last one (a tail lane when n is
        // not a multiple of four) and on a pinned one (which it must not move)
        let cursors = [None, Some(5), Some(cm.n - 1), pinned.first().copied()]
            .map(|p| p.map(|particle| crate::sim::Cursor { particle, target: [0.1, -0.2, 0.3], stiffness: 1.7e3, damping: 3.1 }));
        for (&c, cursor) in chunks.iter().flat_map(|c| cursors.iter().map(move |k| (c, k))) {
            cm.cursor = *cursor;
            cm.force_plan = ForcePlan::new(&cm, c);
            assert_eq!(cm.force_plan.chunk_sizes().len(), c);
            for alpha in [0.0, 1.3e-4] {
                let want = reference(&cm, alpha, &x, &v);
                if let Some(cu) = cursor {
                    // the reference applies it: a free particle's acceleration changes, a pinned one stays 0
                    cm.cursor = None;
                    let plain = reference(&cm, alpha, &x, &v);
                    cm.cursor = Some(*cu);
                    let i = cu.particle;
                    assert_eq!(want[i] == plain[i], cm.inv_mass[i] == 0.0, "cursor on {i}");
                    assert!((0..cm.n).all(|j| j == i || want[j] == plain[j]));
                }
                let p = StepParams { h: 1e-4, alpha };
                let mut scratch = Vec::new();
                let bits = |a: &[V3]| a.iter().map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]).collect::<Vec<_>>();
                // both paths, several times each (the pacer tries every mode)
                for vector in [true, false] {
                    for _ in 0..8 {
                        let mut got = vec![V3::repeat(f64::NAN); cm.n];
                        accelerations_with(&cm, &p, &x, &v, &mut scratch, Store(&mut got), vector);
                        assert_eq!(bits(&got), bits(&want), "chunks {c}, alpha {alpha}, vector {vector}, cursor {cursor:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn accelerations_match_the_plain_gather_bit_for_bit() {
        check(&crate::model::curtain(41, None).unwrap(), &[1, 2, 3, 4]);
        check(&crate::model::cloth(33, None).unwrap(), &[1, 2, 5]);
        check(&tangle(1100), &[1, 2, 3]);
        check(&tangle(7), &[1, 2]);
    }

    #[test]
    fn concurrent_callers_share_the_helpers_safely() {
        let model = crate::model::curtain(41, None).unwrap();
        let mut cm = CpuModel::new(&model).unwrap();
        cm.force_plan = ForcePlan::new(&cm, 2);
        let (x, v) = state(&model);
        let p = StepParams { h: 1e-4, alpha: 0.0 };
        let want = reference(&cm, 0.0, &x, &v);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let mut scratch = Vec::new();
                    for _ in 0..200 {
                        let mut got = vec![V3::zeros(); cm.n];
                        accelerations(&cm, &p, &x, &v, &mut got, &mut scratch);
                        assert_eq!(got, want);
                    }
                });
            }
        });
    }

    #[test]
    fn a_zero_length_spring_has_no_force() {
        let mut model = crate::model::curtain(9, None).unwrap();
        model.positions[40] = model.positions[41];
        let cm = CpuModel::new(&model).unwrap();
        let (x, v): (Vec<V3>, Vec<V3>) = (model.positions.iter().map(|p| V3::from(*p)).collect(), vec![V3::zeros(); cm.n]);
        let mut out = vec![V3::zeros(); cm.n];
        accelerations(&cm, &StepParams { h: 1e-3, alpha: 1e-3 }, &x, &v, &mut out, &mut Vec::new());
        assert_eq!(out, reference(&cm, 1e-3, &x, &v));
    }
}
