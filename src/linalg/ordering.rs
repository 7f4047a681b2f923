//! Fill-reducing orderings for the sparse Cholesky factor ([`super::sparse::SpdFactor`]).
//!
//! faer's default, approximate minimum degree (AMD), is a local greedy rule. A nested dissection (George
//! 1973) splits the graph by a small separator S into halves A and B, numbers A, then B, then S, and
//! recurses. On large cloths it has less fill than AMD (the 256×256 curtain: 7.07 M nonzeros in L
//! against 7.87 M); on the 81×81 curtain and on plain 8-neighbour grids AMD wins (468,918 against
//! 515,588 at 81×81), so [`super::sparse::SpdFactor`] runs both symbolic analyses and keeps the smaller
//! factor.
//!
//! The separators here are breadth-first level sets: every edge joins a level to itself or to the next,
//! so one level separates the levels before it from those after it. The graph alone decides them (no
//! coordinates), so they serve any model.

/// The adjacency of an n-vertex graph in compressed rows, self loops and duplicates removed.
struct Graph {
    start: Vec<usize>,
    adj: Vec<u32>,
}

impl Graph {
    fn new(n: usize, pairs: &[(usize, usize)]) -> Self {
        let mut deg = vec![0usize; n + 1];
        for &(a, b) in pairs {
            if a != b {
                deg[a] += 1;
                deg[b] += 1;
            }
        }
        let mut start = vec![0usize; n + 1];
        for i in 0..n {
            start[i + 1] = start[i] + deg[i];
        }
        let mut fill = start.clone();
        let mut adj = vec![0u32; start[n]];
        for &(a, b) in pairs {
            if a != b {
                adj[fill[a]] = b as u32;
                fill[a] += 1;
                adj[fill[b]] = a as u32;
                fill[b] += 1;
            }
        }
        // dedupe each row in place
        let mut out = 0;
        let mut new_start = vec![0usize; n + 1];
        for i in 0..n {
            let row = &mut adj[start[i]..start[i + 1]];
            row.sort_unstable();
            let mut last = u32::MAX;
            let (s, e) = (start[i], start[i + 1]);
            for k in s..e {
                let v = adj[k];
                if v != last {
                    adj[out] = v;
                    out += 1;
                    last = v;
                }
            }
            new_start[i + 1] = out;
        }
        adj.truncate(out);
        Graph { start: new_start, adj }
    }

    fn neighbours(&self, v: usize) -> &[u32] {
        &self.adj[self.start[v]..self.start[v + 1]]
    }
}

/// Subgraphs at or below this size are numbered as they are (their fill is small either way).
const LEAF: usize = 48;

struct Dissector<'g> {
    g: &'g Graph,
    /// The subgraph a vertex belongs to at the current step (a stamp), `u32::MAX` once numbered.
    stamp: Vec<u32>,
    next_stamp: u32,
    level: Vec<u32>,
    order: Vec<u32>,
    queue: Vec<u32>,
}

impl Dissector<'_> {
    /// Breadth-first levels from `root` within the vertices stamped `s`; returns the vertices in BFS order
    /// (in `self.queue`) and the last level.
    fn bfs(&mut self, root: u32, s: u32) -> u32 {
        self.queue.clear();
        self.queue.push(root);
        self.level[root as usize] = 0;
        // unvisited vertices have level u32::MAX (clear_levels restores that after each use)
        let mut head = 0;
        let mut last = 0;
        while head < self.queue.len() {
            let v = self.queue[head] as usize;
            head += 1;
            let lv = self.level[v];
            last = lv;
            for &w in self.g.neighbours(v) {
                let w = w as usize;
                if self.stamp[w] == s && self.level[w] == u32::MAX {
                    self.level[w] = lv + 1;
                    self.queue.push(w as u32);
                }
            }
        }
        last
    }

    fn clear_levels(&mut self) {
        for &v in &self.queue {
            self.level[v as usize] = u32::MAX;
        }
    }

    /// Numbers the vertices `set` (all stamped `s`): each connected component separately, a component by
    /// nested dissection.
    fn dissect(&mut self, set: Vec<u32>, s: u32) {
        if set.len() <= LEAF {
            for &v in &set {
                self.stamp[v as usize] = u32::MAX;
                self.order.push(v);
            }
            return;
        }
        // a pseudo-peripheral root: repeat BFS from the farthest vertex of least degree while the
        // eccentricity grows (Gibbs, Poole and Stockmeyer)
        let mut ecc = self.bfs(set[0], s);
        if self.queue.len() < set.len() {
            // disconnected: split off this component and do the rest separately
            let comp = self.queue.clone();
            self.clear_levels();
            let cs = self.fresh_stamp(&comp);
            let rest: Vec<u32> = set.into_iter().filter(|&v| self.stamp[v as usize] == s).collect();
            self.dissect(comp, cs);
            self.dissect(rest, s);
            return;
        }
        for _ in 0..4 {
            let Some(far) =
                self.queue.iter().copied().filter(|&v| self.level[v as usize] == ecc).min_by_key(|&v| self.g.neighbours(v as usize).len())
            else {
                break;
            };
            self.clear_levels();
            let e = self.bfs(far, s);
            // the levels in hand are now those from `far`; stop once the eccentricity stops growing
            let grew = e > ecc;
            ecc = e;
            if !grew {
                break;
            }
        }
        if ecc < 2 {
            // too dense to split by a level: number it as it is
            self.clear_levels();
            for &v in &set {
                self.stamp[v as usize] = u32::MAX;
                self.order.push(v);
            }
            return;
        }
        // the level counts, and the separating level: the smallest in the balanced middle
        let mut count = vec![0usize; ecc as usize + 1];
        for &v in &self.queue {
            count[self.level[v as usize] as usize] += 1;
        }
        let n = set.len();
        let mut before = 0usize;
        let mut best: Option<(usize, u32)> = None;
        let mut median = 1u32;
        for l in 0..=ecc {
            let c = count[l as usize];
            if l >= 1 && l < ecc {
                if before * 2 <= n {
                    median = l;
                }
                let after = n - before - c;
                if before * 10 >= n * 3 && after * 10 >= n * 3 && best.is_none_or(|(bc, _)| c < bc) {
                    best = Some((c, l));
                }
            }
            before += c;
        }
        let sep_level = best.map_or(median, |(_, l)| l);
        let (mut a, mut b, mut sep) = (Vec::new(), Vec::new(), Vec::new());
        for &v in &self.queue {
            let l = self.level[v as usize];
            match l.cmp(&sep_level) {
                std::cmp::Ordering::Less => a.push(v),
                std::cmp::Ordering::Greater => b.push(v),
                std::cmp::Ordering::Equal => sep.push(v),
            }
        }
        self.clear_levels();
        for &v in &sep {
            self.stamp[v as usize] = u32::MAX;
        }
        let sa = self.fresh_stamp(&a);
        let sb = self.fresh_stamp(&b);
        self.dissect(a, sa);
        self.dissect(b, sb);
        self.order.extend_from_slice(&sep);
    }

    fn fresh_stamp(&mut self, set: &[u32]) -> u32 {
        let s = self.next_stamp;
        self.next_stamp += 1;
        for &v in set {
            self.stamp[v as usize] = s;
        }
        s
    }
}

/// A nested-dissection ordering of the n×n symmetric pattern `pairs` (either triangle; the diagonal and
/// duplicates are ignored): `fwd[new] = old`. Every vertex appears once.
pub fn nested_dissection(n: usize, pairs: &[(usize, usize)]) -> Vec<u32> {
    let g = Graph::new(n, pairs);
    let mut d = Dissector {
        g: &g,
        stamp: vec![0; n],
        next_stamp: 1,
        level: vec![u32::MAX; n],
        order: Vec::with_capacity(n),
        queue: Vec::with_capacity(n),
    };
    d.dissect((0..n as u32).collect(), 0);
    d.order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(w: usize) -> Vec<(usize, usize)> {
        let mut p = Vec::new();
        for i in 0..w {
            for j in 0..w {
                let v = i * w + j;
                if j + 1 < w {
                    p.push((v, v + 1));
                }
                if i + 1 < w {
                    p.push((v, v + w));
                }
            }
        }
        p
    }

    #[test]
    fn is_a_permutation() {
        for (n, pairs) in [(1, vec![]), (5, vec![(0, 1), (3, 4)]), (400, grid(20)), (2500, grid(50))] {
            let fwd = nested_dissection(n, &pairs);
            let mut seen = vec![false; n];
            for &v in &fwd {
                assert!(!seen[v as usize], "vertex {v} twice");
                seen[v as usize] = true;
            }
            assert_eq!(fwd.len(), n);
        }
    }
}
