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
        let ns = m.end_a.len();
        let mut spring: Vec<u32> = (0..ns as u32).collect();
        let ends_of = |s: u32| {
            let (a, b) = (m.end_a[s as usize], m.end_b[s as usize]);
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
        let lo_is_a = spring.iter().map(|&s| m.end_a[s as usize] <= m.end_b[s as usize]).collect();
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

    /// The plan for `m` with one chunk per rayon worker from the per-particle passes threshold
    /// (`linalg::PAR_N`) up; one chunk below it, where the fork costs more than it saves.
    pub fn for_model(m: &CpuModel) -> Self {
        let par_n = crate::linalg::PAR_N;
        Self::new(m, if m.n >= par_n { rayon::current_num_threads() } else { 1 })
    }

    /// Whether this plan is for `m` (its particle and spring counts).
    pub(crate) fn fits(&self, m: &CpuModel) -> bool {
        self.spring.len() == m.end_a.len() && self.chunks.last().map_or(m.n == 0, |c| c[1] as usize == m.n)
    }

    /// The spring at sorted position k.
    pub fn spring(&self, k: usize) -> usize {
        self.spring[k] as usize
    }

    /// Cuts a per-particle array into the chunks' rows (chunk c gets particles [p0, p1)).
    pub(crate) fn particle_rows<'a, T>(&self, all: &'a mut [T]) -> Vec<Rows<'a, T>> {
        split(all, self.chunks.iter().map(|c| (c[0] as usize, c[1] as usize)))
    }

    /// Cuts a per-sorted-spring array into the chunks' own springs (chunk c gets [k0, k1)).
    pub(crate) fn spring_rows<'a, T>(&self, all: &'a mut [T]) -> Vec<Rows<'a, T>> {
        split(all, self.chunks.iter().map(|c| (c[2] as usize, c[3] as usize)))
    }

    /// Runs `f(chunk, job)` for every chunk with its job (what it may write, e.g. its [`Rows`]), on the
    /// rayon pool when there are several chunks.
    pub(crate) fn run<J: Send>(&self, jobs: Vec<J>, f: impl Fn(&[u32; 6], J) + Sync) {
        assert_eq!(jobs.len(), self.chunks.len(), "one job per chunk");
        if self.chunks.len() == 1 {
            jobs.into_iter().for_each(|j| f(&self.chunks[0], j));
        } else {
            use rayon::prelude::*;
            jobs.into_par_iter().zip(self.chunks.par_iter()).for_each(|(j, c)| f(c, j));
        }
    }
}

/// A chunk's rows of an array, indexed by their index in the whole array.
pub(crate) struct Rows<'a, T> {
    first: usize,
    rows: &'a mut [T],
}

impl<T> std::ops::Index<usize> for Rows<'_, T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &self.rows[i - self.first]
    }
}

impl<T> std::ops::IndexMut<usize> for Rows<'_, T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.rows[i - self.first]
    }
}

/// Cuts `all` into the consecutive ranges `[r0, r1)` (which must tile a prefix of it, in order).
fn split<T>(mut all: &mut [T], ranges: impl Iterator<Item = (usize, usize)>) -> Vec<Rows<'_, T>> {
    let mut at = 0;
    let mut out = Vec::new();
    for (r0, r1) in ranges {
        assert_eq!(r0, at, "the chunks tile the array");
        let (head, tail) = std::mem::take(&mut all).split_at_mut(r1 - r0);
        out.push(Rows { first: r0, rows: head });
        all = tail;
        at = r1;
    }
    out
}

#[cfg(test)]
mod order_tests {
    use super::SpringSweep;
    use crate::linalg::spring_mg::spring_order;
    use crate::reference::model::CpuModel;

    /// The GPU's implicit multigrid takes the fine edges in `spring_order`; the CPU's in its sweep's
    /// order: they must be one order for both engines to build the same hierarchy.
    #[test]
    fn the_sweep_order_is_the_multigrid_spring_order() {
        let model = crate::model::cloth(9, None).unwrap();
        let m = CpuModel::new(&model).unwrap();
        for chunks in [1, 3] {
            assert_eq!(SpringSweep::new(&m, chunks).spring, spring_order(&m), "{chunks} chunks");
        }
    }
}
