//! Passes over the springs sorted by their lower endpoint, in chunks that run at once and share
//! nothing: the CPU's way to evaluate each spring once and add its terms at both ends (Baraff–Witkin's
//! system and A·p in [`super::implicit`], Liu's local step and residual in [`super::local_global`]).

use super::CpuModel;

/// The CPU's per-spring passes (its own layout; the GPU gathers per particle over the CSR lists, without
/// scatter). The springs are sorted by their lower endpoint, so that a pass over them sweeps the
/// particles with a window of a few rows of a grid, and each spring is evaluated once where a gather
/// evaluates it at both ends: its term is added at lo and subtracted at hi (B_s (p_lo − p_hi) in A·p,
/// k_s (d_s − (x_lo − x_hi)) in Liu's residual).
///
/// The particles are cut into chunks, one per worker, which run at once and share nothing: a chunk
/// runs its *own* springs (lower end inside it), writing only the ends inside it, after its *cross*
/// springs (lower end in an earlier chunk, upper end inside it), writing their upper end. Each
/// particle's terms are therefore summed in sorted spring order whatever the chunks, and the results
/// are bit for bit the same on any number of threads.
#[derive(Clone, Debug, Default)]
pub struct SpringSweep {
    /// Per sorted position k: the spring.
    pub(crate) spring: Vec<u32>,
    /// Per sorted position: the lower and the upper endpoint.
    pub(crate) ends: Vec<[u32; 2]>,
    /// Per sorted position: whether the lower endpoint is the spring's a.
    pub(crate) lo_is_a: Vec<bool>,
    /// Per sorted position: the spring's k, L and k_d.
    pub(crate) par: Vec<[f64; 3]>,
    /// Per particle i and one more: the first sorted position whose lower end is ≥ i (the springs with
    /// lower end i are `lo_first[i]..lo_first[i + 1]`).
    pub(crate) lo_first: Vec<u32>,
    /// Per chunk: particles [p0, p1), own springs [k0, k1), cross springs `cross[c0..c1]`.
    pub(crate) chunks: Vec<[u32; 6]>,
    /// The cross springs of each chunk, as sorted positions in increasing order.
    pub(crate) cross: Vec<u32>,
}

impl SpringSweep {
    /// The plan for `m` with `chunks` chunks (balanced by springs).
    pub fn new(m: &CpuModel, chunks: usize) -> Self {
        let ns = m.sa.len();
        let mut spring: Vec<u32> = (0..ns as u32).collect();
        let ends_of = |s: u32| {
            let (a, b) = (m.sa[s as usize], m.sb[s as usize]);
            [a.min(b), a.max(b)]
        };
        spring.sort_by_key(|&s| (ends_of(s), s));
        let ends: Vec<[u32; 2]> = spring.iter().map(|&s| ends_of(s)).collect();
        let n = m.n as u32;
        let mut bounds = vec![0u32];
        for c in 1..chunks.max(1) {
            let p = ends.get(ns * c / chunks).map_or(n, |e| e[0]);
            bounds.push(p.max(*bounds.last().unwrap_or(&0)));
        }
        bounds.push(n);
        bounds.dedup();
        let first = |p: u32| ends.partition_point(|e| e[0] < p) as u32;
        let par = spring.iter().map(|&s| [m.k[s as usize], m.rest[s as usize], m.kd[s as usize]]).collect();
        let lo_is_a = spring.iter().map(|&s| m.sa[s as usize] <= m.sb[s as usize]).collect();
        let lo_first = (0..=n).map(first).collect();
        let mut sw = SpringSweep { spring, ends: Vec::new(), lo_is_a, par, lo_first, chunks: Vec::new(), cross: Vec::new() };
        for w in bounds.windows(2) {
            let (p0, p1) = (w[0], w[1]);
            let (k0, k1) = (first(p0), first(p1));
            let c0 = sw.cross.len() as u32;
            sw.cross.extend((0..k0).filter(|&k| (p0..p1).contains(&ends[k as usize][1])));
            sw.chunks.push([p0, p1, k0, k1, c0, sw.cross.len() as u32]);
        }
        sw.ends = ends;
        sw
    }

    /// The plan for `m` with one chunk per worker of the helper team from the per-particle passes
    /// threshold (`implicit::PAR_N`) up; one chunk below it, where the fork costs more than it saves.
    pub fn for_model(m: &CpuModel) -> Self {
        let par_n = super::implicit::PAR_N;
        Self::new(m, if m.n >= par_n { super::team::shared().len() + 1 } else { 1 })
    }

    /// Whether this plan is for `m` (its particle and spring counts).
    pub(crate) fn fits(&self, m: &CpuModel) -> bool {
        self.spring.len() == m.sa.len() && self.chunks.last().map_or(m.n == 0, |c| c[1] as usize == m.n)
    }

    /// The spring at sorted position k.
    pub fn spring(&self, k: usize) -> usize {
        self.spring[k] as usize
    }

    /// Runs `f(chunk)` for every chunk, on the helper team when there are several.
    pub(crate) fn run(&self, f: impl Fn(&[u32; 6]) + Sync) {
        match self.chunks.len() {
            0 => {}
            1 => f(&self.chunks[0]),
            _ => {
                let f = &f;
                let jobs: Vec<Box<dyn Fn() + Sync + '_>> =
                    self.chunks.iter().map(|c| Box::new(move || f(c)) as Box<dyn Fn() + Sync + '_>).collect();
                let refs: Vec<&(dyn Fn() + Sync)> = jobs.iter().map(|j| j.as_ref()).collect();
                super::team::run_all(&refs);
            }
        }
    }
}

/// An array written through a pointer by passes whose pieces (a sweep's chunks, a `by_blocks` pass's
/// blocks, a per-particle pass's pieces) each write their own indices: per-particle rows, per-spring
/// blocks, per-particle scalars.
pub(crate) struct Shared<T>(pub(crate) *mut T);
// SAFETY: only used by passes whose pieces write disjoint indices
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<T> {}

impl<T> Shared<T> {
    /// # Safety
    /// i is in bounds, and no other piece touches index i.
    #[inline(always)]
    pub(crate) unsafe fn at(self, i: usize) -> *mut T {
        self.0.add(i)
    }
}
