//! The interleaved three-column triangular solves on a supernodal Cholesky factor (L Lᵀ x = b, one
//! `[x, y, z, padding]` row per unknown) and their split over two threads: two sets of disjoint subtrees
//! of the elimination tree run at once (`rayon::join` over disjoint `split_at_mut` slices), the rest
//! (the "top") serially. Every row gets the same operations in the same order as in the one-thread
//! solve, so the result does not depend on the split, bit for bit. Generic over the scalar ([`Lane`]):
//! f64, or f32 on a rounded copy of the factor (half the bytes per solve; see
//! `crate::method::FactorPrecision`).

use std::ops::{Add, Div, Mul, Range, Sub};

/// The scalar of a solve: f64, or f32 for the single-precision factor (issue #15: the global step in
/// correction form, A δ = r with r formed in f64).
pub(super) trait Lane:
    Copy + Send + Sync + std::fmt::Debug + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
}

impl Lane for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
}

impl Lane for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
}

/// The supernodal factor as [`super::sparse::SpdFactor`] keeps it for the three-column solve.
pub(super) struct Factor3<'a, T> {
    /// Per supernode: first column, columns, pattern range in `row`, offset of its block in `val`
    /// (the columns × columns diagonal block column-major, then the pattern × columns rectangle below
    /// it row-major).
    pub sn: &'a [[u32; 5]],
    pub row: &'a [u32],
    pub val: &'a [T],
}

/// Solves of this dimension or less run on one thread (the fork costs more than it saves).
pub(super) const PARALLEL_SOLVE_MIN: usize = 2048;

/// How the triangular solves split over two threads. In a postordered elimination tree a subtree is a
/// contiguous range of supernodes (and of columns), and the rows its columns update are its own or its
/// ancestors'. The forward substitution runs the subtrees at once, each keeping its updates of the
/// ancestors (rows of the "top") in `deferred` (one slot per such pattern row); then, serially and in
/// increasing supernode order, those updates are added and the top supernodes solved: every row gets
/// its updates in the one-thread order. The backward substitution runs the top first, copies the top
/// rows each subtree reads into `deferred`, then runs the subtrees at once.
#[derive(Debug)]
pub(super) struct SolvePlan<T> {
    /// Per supernode: how many of its pattern rows lie inside its task's subtree (all of them for top
    /// supernodes).
    split: Vec<u32>,
    /// Per supernode (and one past the last): the first slot of its rows past `split` in `deferred`.
    deferred_at: Vec<u32>,
    /// The subtrees, in increasing order: (first supernode, last supernode, thread 0 or 1).
    tasks: Vec<(u32, u32, u8)>,
    /// Per supernode: whether it belongs to a subtree task.
    in_task: Vec<bool>,
    /// The deferred updates (forward) and copied top rows (backward).
    deferred: Vec<[T; 4]>,
    /// Each thread's scratch: the updates or gathered values of one supernode's pattern rows.
    scratch: [Vec<[T; 4]>; 2],
}

impl<T> Default for SolvePlan<T> {
    fn default() -> Self {
        SolvePlan {
            split: Vec::new(),
            deferred_at: Vec::new(),
            tasks: Vec::new(),
            in_task: Vec::new(),
            deferred: Vec::new(),
            scratch: [Vec::new(), Vec::new()],
        }
    }
}

impl<T: Lane> SolvePlan<T> {
    /// The plan for the supernodes `sn` (pattern rows in `row`) of an n×n factor: serial when n is
    /// below [`PARALLEL_SOLVE_MIN`], when rayon has one thread, or when no split pays.
    pub fn new(n: usize, sn: &[[u32; 5]], row: &[u32]) -> Self {
        Self::with_threads(n, sn, row, rayon::current_num_threads())
    }

    /// [`SolvePlan::new`] for `threads` threads (one: serial).
    #[allow(clippy::needless_range_loop)] // s indexes the supernodes and their split
    pub fn with_threads(n: usize, sn: &[[u32; 5]], row: &[u32], threads: usize) -> Self {
        let ns = sn.len();
        let largest = sn.iter().map(|s| (s[3] - s[2]) as usize).max().unwrap_or(0);
        let mut plan = SolvePlan {
            split: sn.iter().map(|s| s[3] - s[2]).collect(),
            deferred_at: vec![0; ns + 1],
            in_task: vec![false; ns],
            scratch: [vec![[T::ZERO; 4]; largest], Vec::new()],
            tasks: Vec::new(),
            deferred: Vec::new(),
        };
        if n < PARALLEL_SOLVE_MIN || threads < 2 {
            return plan;
        }
        let Some(roots) = split_subtrees(n, sn, row) else { return plan };
        let mut work = [0.0f64; 2];
        for (first, root, w) in roots {
            let k = if work[0] <= work[1] { 0 } else { 1 };
            work[k] += w;
            plan.tasks.push((first as u32, root as u32, k as u8));
            let limit = sn[root][0] + sn[root][1];
            for s in first..=root {
                plan.in_task[s] = true;
                let [_, _, p0, p1, _] = sn[s];
                plan.split[s] = row[p0 as usize..p1 as usize].iter().take_while(|&&i| i < limit).count() as u32;
            }
        }
        plan.tasks.sort_unstable();
        for s in 0..ns {
            plan.deferred_at[s + 1] = plan.deferred_at[s] + (sn[s][3] - sn[s][2]) - plan.split[s];
        }
        plan.deferred = vec![[T::ZERO; 4]; plan.deferred_at[ns] as usize];
        plan.scratch[1] = vec![[T::ZERO; 4]; largest];
        plan
    }

    /// Whether the solve runs on two threads.
    #[cfg(test)]
    pub fn is_parallel(&self) -> bool {
        !self.tasks.is_empty()
    }

    /// Solves L Lᵀ x = b in place (`x` holds b on entry; n rows).
    pub fn solve(&mut self, f: &Factor3<'_, T>, x: &mut [[T; 4]]) {
        let ns = f.sn.len();
        let SolvePlan { split, deferred_at, tasks, in_task, deferred, scratch } = self;
        let [scratch0, scratch1] = scratch;
        let at = Slots { split, deferred_at };
        if tasks.is_empty() {
            let mut part = Part { sns: 0..ns, x, x0: 0, deferred: &mut [], d0: 0 };
            part.forward(f, &at, scratch0);
            part.backward(f, &at, scratch0);
            return;
        }
        // forward: the subtrees at once, then the deferred updates and the top in increasing order
        {
            let [mut parts0, mut parts1] = parts(f, &at, tasks, x, deferred);
            rayon::join(
                || parts0.iter_mut().for_each(|p| p.forward(f, &at, scratch0)),
                || parts1.iter_mut().for_each(|p| p.forward(f, &at, scratch1)),
            );
        }
        for s in 0..ns {
            let [_, _, p0, p1, _] = f.sn[s];
            let pat = &f.row[p0 as usize..p1 as usize];
            if in_task[s] {
                let d = &deferred[at.range(s)];
                for (&i, &u) in pat[split[s] as usize..].iter().zip(d) {
                    x[i as usize] = add(x[i as usize], u);
                }
            } else {
                Part { sns: s..s + 1, x: &mut *x, x0: 0, deferred: &mut [], d0: 0 }.forward(f, &at, scratch0);
            }
        }
        // backward: the top in decreasing order, the top rows the subtrees read, then the subtrees at once
        for s in (0..ns).rev().filter(|&s| !in_task[s]) {
            Part { sns: s..s + 1, x: &mut *x, x0: 0, deferred: &mut [], d0: 0 }.backward(f, &at, scratch0);
        }
        for s in (0..ns).filter(|&s| in_task[s]) {
            let [_, _, p0, p1, _] = f.sn[s];
            let pat = &f.row[p0 as usize..p1 as usize];
            for (&i, d) in pat[split[s] as usize..].iter().zip(&mut deferred[at.range(s)]) {
                *d = x[i as usize];
            }
        }
        let [mut parts0, mut parts1] = parts(f, &at, tasks, x, deferred);
        rayon::join(
            || parts0.iter_mut().for_each(|p| p.backward(f, &at, scratch0)),
            || parts1.iter_mut().for_each(|p| p.backward(f, &at, scratch1)),
        );
    }
}

/// The subtrees that split the solve best, as (first supernode, root, work), or `None` when a split
/// does not pay (estimated time above 80% of the serial one) or the tree is not postordered. Splits
/// the heaviest subtree while that lowers the estimate: the top plus the larger thread's share.
fn split_subtrees(n: usize, sn: &[[u32; 5]], row: &[u32]) -> Option<Vec<(usize, usize, f64)>> {
    let ns = sn.len();
    // the supernodal elimination tree: parent = the supernode of the first pattern row
    let mut sn_of_col = vec![0u32; n];
    for (s, &[start, nc, ..]) in sn.iter().enumerate() {
        sn_of_col[start as usize..(start + nc) as usize].fill(s as u32);
    }
    let parent: Vec<u32> =
        sn.iter().map(|&[_, _, p0, p1, _]| if p1 > p0 { sn_of_col[row[p0 as usize] as usize] } else { u32::MAX }).collect();
    let mut first: Vec<usize> = (0..ns).collect();
    let mut count = vec![1usize; ns];
    let mut work: Vec<f64> = sn.iter().map(|&[_, nc, p0, p1, _]| (nc as f64) * (nc + p1 - p0) as f64).collect();
    let mut children = vec![Vec::new(); ns];
    for s in 0..ns {
        let p = parent[s];
        if p != u32::MAX {
            let p = p as usize;
            if p <= s {
                return None;
            }
            first[p] = first[p].min(first[s]);
            count[p] += count[s];
            work[p] += work[s];
            children[p].push(s);
        }
    }
    let total: f64 = (0..ns).filter(|&s| parent[s] == u32::MAX).map(|s| work[s]).sum();
    let contiguous = |s: usize| count[s] == s - first[s] + 1;
    let mut candidates: Vec<usize> = (0..ns).filter(|&s| parent[s] == u32::MAX).collect();
    let mut best: Option<(f64, Vec<usize>)> = None;
    for _ in 0..64 {
        candidates.sort_by(|&a, &b| work[b].total_cmp(&work[a]));
        let mut bins = [0.0f64; 2];
        for &s in &candidates {
            let k = if bins[0] <= bins[1] { 0 } else { 1 };
            bins[k] += work[s];
        }
        let cost = (total - bins[0] - bins[1]) + bins[0].max(bins[1]);
        if candidates.iter().all(|&s| contiguous(s)) && best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, candidates.clone()));
        }
        // split the heaviest candidate that has children
        let Some(pos) = candidates.iter().position(|&s| !children[s].is_empty()) else { break };
        let s = candidates.remove(pos);
        candidates.extend_from_slice(&children[s]);
    }
    let (cost, mut roots) = best?;
    if cost > 0.8 * total {
        return None;
    }
    // the same heaviest-first order as the estimate, so that the threads get its shares
    roots.sort_by(|&a, &b| work[b].total_cmp(&work[a]));
    Some(roots.into_iter().map(|r| (first[r], r, work[r])).collect())
}

/// Per supernode, where its rows past the split live in `deferred`.
struct Slots<'a> {
    split: &'a [u32],
    deferred_at: &'a [u32],
}

impl Slots<'_> {
    fn range(&self, s: usize) -> Range<usize> {
        self.deferred_at[s] as usize..self.deferred_at[s + 1] as usize
    }
}

/// A run of supernodes `sns` with the rows of its columns, `x` (from row `x0`), and the slots of its
/// deferred rows (from slot `d0`).
struct Part<'x, T> {
    sns: Range<usize>,
    x: &'x mut [[T; 4]],
    x0: usize,
    deferred: &'x mut [[T; 4]],
    d0: usize,
}

/// Each thread's subtrees, with disjoint slices of `x` (their columns) and of `deferred`.
fn parts<'x, T>(
    f: &Factor3<'_, T>,
    at: &Slots<'_>,
    tasks: &[(u32, u32, u8)],
    x: &'x mut [[T; 4]],
    deferred: &'x mut [[T; 4]],
) -> [Vec<Part<'x, T>>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    let (mut x_rest, mut x_at) = (x, 0);
    let (mut d_rest, mut d_at) = (deferred, 0);
    for &(first, last, thread) in tasks {
        let (first, last) = (first as usize, last as usize);
        let (c0, c1) = (f.sn[first][0] as usize, (f.sn[last][0] + f.sn[last][1]) as usize);
        let (_, tail) = std::mem::take(&mut x_rest).split_at_mut(c0 - x_at);
        let (xs, tail) = tail.split_at_mut(c1 - c0);
        (x_rest, x_at) = (tail, c1);
        let (d0, d1) = (at.deferred_at[first] as usize, at.deferred_at[last + 1] as usize);
        let (_, tail) = std::mem::take(&mut d_rest).split_at_mut(d0 - d_at);
        let (ds, tail) = tail.split_at_mut(d1 - d0);
        (d_rest, d_at) = (tail, d1);
        out[thread as usize].push(Part { sns: first..last + 1, x: xs, x0: c0, deferred: ds, d0 });
    }
    out
}

impl<T: Lane> Part<'_, T> {
    /// L y = b over the supernodes, in increasing order: the diagonal block by columns, then each pattern
    /// row's update (one dot product with the block's solved rows), added to its row when inside the part
    /// and put in its slot otherwise. The padding lane stays 0.
    fn forward(&mut self, f: &Factor3<'_, T>, at: &Slots<'_>, scratch: &mut [[T; 4]]) {
        for s in self.sns.clone() {
            let [start, nc, p0, p1, off] = f.sn[s];
            let (start, nc, off) = (start as usize - self.x0, nc as usize, off as usize);
            let pat = &f.row[p0 as usize..p1 as usize];
            let diag = &f.val[off..off + nc * nc];
            let rect = &f.val[off + nc * nc..off + nc * (nc + pat.len())];
            let updates = &mut scratch[..pat.len()];
            forward_supernode(diag, rect, &mut self.x[start..start + nc], updates);
            let split = at.split[s] as usize;
            for (&i, &u) in pat[..split].iter().zip(&*updates) {
                let i = i as usize - self.x0;
                self.x[i] = add(self.x[i], u);
            }
            if split < pat.len() {
                self.deferred[at.range(s).start - self.d0..][..pat.len() - split].copy_from_slice(&updates[split..]);
            }
        }
    }

    /// Lᵀ x = y over the supernodes, in decreasing order: the pattern rows' final values gathered (from
    /// the part or its slots), then the rectangle's rows and the diagonal block by columns.
    fn backward(&mut self, f: &Factor3<'_, T>, at: &Slots<'_>, scratch: &mut [[T; 4]]) {
        for s in self.sns.clone().rev() {
            let [start, nc, p0, p1, off] = f.sn[s];
            let (start, nc, off) = (start as usize - self.x0, nc as usize, off as usize);
            let pat = &f.row[p0 as usize..p1 as usize];
            let diag = &f.val[off..off + nc * nc];
            let rect = &f.val[off + nc * nc..off + nc * (nc + pat.len())];
            let split = at.split[s] as usize;
            let gathered = &mut scratch[..pat.len()];
            for (g, &i) in gathered.iter_mut().zip(&pat[..split]) {
                *g = self.x[i as usize - self.x0];
            }
            if split < pat.len() {
                gathered[split..].copy_from_slice(&self.deferred[at.range(s).start - self.d0..][..pat.len() - split]);
            }
            backward_supernode(diag, rect, gathered, &mut self.x[start..start + nc]);
        }
    }
}

/// One supernode's forward step: its own rows `xs` solved with the diagonal block, and `updates[k]` =
/// −Σ_c R[k, c] xs[c] for each pattern row k, four rows at a time (four independent dot products share
/// each load of the solved block).
#[inline(always)]
fn forward_supernode<T: Lane>(diag: &[T], rect: &[T], xs: &mut [[T; 4]], updates: &mut [[T; 4]]) {
    let nc = xs.len();
    for c in 0..nc {
        let col = &diag[c * nc..(c + 1) * nc];
        let xj = scale(xs[c], T::ONE / col[c]);
        xs[c] = xj;
        for r in c + 1..nc {
            xs[r] = fnmadd(xs[r], col[r], xj);
        }
    }
    let np = updates.len();
    let mut k = 0;
    while k + 4 <= np {
        let mut a = [[T::ZERO; 4]; 4];
        let l = &rect[k * nc..(k + 4) * nc];
        for (c, &xc) in xs.iter().enumerate() {
            for u in 0..4 {
                a[u] = fnmadd(a[u], l[u * nc + c], xc);
            }
        }
        updates[k..k + 4].copy_from_slice(&a);
        k += 4;
    }
    for k in k..np {
        let l = &rect[k * nc..(k + 1) * nc];
        let mut a = [T::ZERO; 4];
        for (c, &xc) in xs.iter().enumerate() {
            a = fnmadd(a, l[c], xc);
        }
        updates[k] = a;
    }
}

/// The backward substitution's rectangle update of columns c0..c0 + B of one supernode:
/// xs_c −= Σₖ R[k, c] x_{pat k}, B running sums in registers over all pattern rows.
#[inline(always)]
fn backward_cols<T: Lane, const B: usize>(rect: &[T], nc: usize, c0: usize, gathered: &[[T; 4]], xs: &mut [[T; 4]]) {
    let mut a = [[T::ZERO; 4]; B];
    for (k, &xi) in gathered.iter().enumerate() {
        let l = &rect[k * nc + c0..k * nc + c0 + B];
        for u in 0..B {
            a[u] = fnmadd(a[u], l[u], xi);
        }
    }
    for u in 0..B {
        xs[c0 + u] = add(xs[c0 + u], a[u]);
    }
}

/// One supernode's backward step, with its pattern rows' final values `gathered`: the rectangle's rows
/// first (columns in register blocks of 8 and 4, the last few one at a time with four partial sums),
/// then the diagonal block by columns.
#[inline(always)]
fn backward_supernode<T: Lane>(diag: &[T], rect: &[T], gathered: &[[T; 4]], xs: &mut [[T; 4]]) {
    let nc = xs.len();
    let mut c0 = 0;
    while c0 + 8 <= nc {
        backward_cols::<T, 8>(rect, nc, c0, gathered, xs);
        c0 += 8;
    }
    if c0 + 4 <= nc {
        backward_cols::<T, 4>(rect, nc, c0, gathered, xs);
        c0 += 4;
    }
    for c in c0..nc {
        let mut a = [[T::ZERO; 4]; 4];
        let rows = gathered.chunks_exact(4);
        let k0 = gathered.len() - rows.remainder().len();
        for (q, r4) in rows.enumerate() {
            for u in 0..4 {
                a[u] = fnmadd(a[u], rect[(4 * q + u) * nc + c], r4[u]);
            }
        }
        for (k, &xi) in gathered.iter().enumerate().skip(k0) {
            a[0] = fnmadd(a[0], rect[k * nc + c], xi);
        }
        xs[c] = add(xs[c], add(add(a[0], a[1]), add(a[2], a[3])));
    }
    for c in (0..nc).rev() {
        let col = &diag[c * nc..(c + 1) * nc];
        let mut a = xs[c];
        for r in c + 1..nc {
            a = fnmadd(a, col[r], xs[r]);
        }
        xs[c] = scale(a, T::ONE / col[c]);
    }
}

/// a − l·x, lane by lane.
#[inline(always)]
fn fnmadd<T: Lane>(a: [T; 4], l: T, x: [T; 4]) -> [T; 4] {
    [a[0] - l * x[0], a[1] - l * x[1], a[2] - l * x[2], a[3] - l * x[3]]
}

/// a + b, lane by lane.
#[inline(always)]
fn add<T: Lane>(a: [T; 4], b: [T; 4]) -> [T; 4] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

/// a · s, lane by lane.
#[inline(always)]
fn scale<T: Lane>(a: [T; 4], s: T) -> [T; 4] {
    [a[0] * s, a[1] * s, a[2] * s, a[3] * s]
}
