//! The structure of the implicit multigrid's hierarchy ([`super::spring_mg`]), fixed per model: the
//! greedy aggregation of each level's spring graph ([`super::aggregation::aggregate`] of its scalar
//! graph, read a row at a time), the lists by which a level sums into the next and the coarse levels'
//! graphs ([`SpringLevels`]). The CPU engine builds it from its fine graph (`SpringLevels::build`); the
//! GPU, which uploads only these lists, from the model's springs without a fine graph stored
//! ([`SpringLevels::for_model`]): the same lists either way.

use super::aggregation::{aggregate, merge_row, Rows};
use crate::reference::local_global::entry_spring;
use crate::reference::model::CpuModel;
use std::cell::RefCell;
use std::collections::HashMap;

/// Coarsening stops once a level has at most this many nodes; that level is solved densely.
pub const COARSE_NODES: usize = 128;
/// The most levels of a hierarchy.
pub const MAX_LEVELS: usize = 12;

/// The model's springs in the order of the hierarchy's fine edges: sorted by (lower end, upper end,
/// index), the order of the CPU engine's spring sweep (`crate::cpu::sweep::SpringSweep`, which a test
/// there holds to this), so that both engines aggregate the same graph the same way.
pub fn spring_order(m: &CpuModel) -> Vec<u32> {
    let ends_of = |s: u32| {
        let (a, b) = (m.end_a[s as usize], m.end_b[s as usize]);
        [a.min(b), a.max(b)]
    };
    let mut spring: Vec<u32> = (0..m.end_a.len() as u32).collect();
    spring.sort_by_key(|&s| (ends_of(s), s));
    spring
}

/// No aggregate (a pinned node), no coarse edge.
pub(crate) const NONE: u32 = u32::MAX;

/// The structure of one level: its nodes and edges (fixed per model).
#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    /// Nodes.
    pub(crate) n: usize,
    /// Per edge, its ends.
    pub(crate) ends: Vec<[u32; 2]>,
    /// Per node and one more, offsets into `inc`.
    pub(crate) inc_ptr: Vec<u32>,
    /// (edge, other end), grouped by node.
    pub(crate) inc: Vec<[u32; 2]>,
    /// Whether a node is free (level 0: not pinned; coarse levels: all).
    pub(crate) live: Vec<bool>,
}

impl Graph {
    /// The graph of `n` nodes and edges `ends`, `live` saying which nodes are free.
    pub(crate) fn new(n: usize, ends: Vec<[u32; 2]>, live: Vec<bool>) -> Graph {
        let mut ptr = vec![0u32; n + 1];
        for &[a, b] in &ends {
            ptr[a as usize + 1] += 1;
            ptr[b as usize + 1] += 1;
        }
        for i in 0..n {
            ptr[i + 1] += ptr[i];
        }
        let mut fill = ptr.clone();
        let mut inc = vec![[0u32; 2]; ptr[n] as usize];
        for (e, &[a, b]) in ends.iter().enumerate() {
            for (p, q) in [(a, b), (b, a)] {
                inc[fill[p as usize] as usize] = [e as u32, q];
                fill[p as usize] += 1;
            }
        }
        Graph { n, ends, inc_ptr: ptr, inc, live }
    }

    /// Node i's (edge, other end) pairs, in increasing edges.
    pub(crate) fn incident(&self, i: usize) -> &[[u32; 2]] {
        &self.inc[self.inc_ptr[i] as usize..self.inc_ptr[i + 1] as usize]
    }
}

/// Lists in compressed rows: `of(i)` is `src[ptr[i]..ptr[i + 1]]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lists {
    /// Per row and one more, offsets into `src`.
    pub(crate) ptr: Vec<u32>,
    /// The lists' entries.
    pub(crate) src: Vec<u32>,
}

impl Lists {
    /// The lists of (row, entry) `keys`, each row's entries in the keys' order.
    pub(crate) fn from_keys(rows: usize, keys: impl Iterator<Item = (u32, u32)> + Clone) -> Lists {
        let mut ptr = vec![0u32; rows + 1];
        for (r, _) in keys.clone() {
            ptr[r as usize + 1] += 1;
        }
        for i in 0..rows {
            ptr[i + 1] += ptr[i];
        }
        let mut fill = ptr.clone();
        let mut src = vec![0u32; ptr[rows] as usize];
        for (r, s) in keys {
            src[fill[r as usize] as usize] = s;
            fill[r as usize] += 1;
        }
        Lists { ptr, src }
    }

    /// Row i's list.
    pub(crate) fn of(&self, i: usize) -> &[u32] {
        &self.src[self.ptr[i] as usize..self.ptr[i + 1] as usize]
    }
}

/// How one level sums into the next (fixed per model).
#[derive(Clone, Debug, Default)]
pub(crate) struct Link {
    /// Fine node → its aggregate (`NONE` for a pinned node).
    pub(crate) agg: Vec<u32>,
    /// Per coarse node: its members.
    pub(crate) members: Lists,
    /// Per coarse node: the fine edges from a member to a pinned node.
    pub(crate) grounded: Lists,
    /// Per coarse edge: the fine edges it sums.
    pub(crate) edges: Lists,
}

/// A level's spring graph as the coarsening reads it.
trait Edges {
    /// Nodes.
    fn nodes(&self) -> usize;
    /// Edges.
    fn edges(&self) -> usize;
    /// Whether node i is free.
    fn live(&self, i: usize) -> bool;
    /// Edge e's ends.
    fn ends(&self, e: usize) -> [u32; 2];
    /// Edge e's weight.
    fn weight(&self, e: usize) -> f64;
    /// Node i's edges in increasing order into `out` (cleared first): (weight, other end).
    fn incident_into(&self, i: usize, out: &mut Vec<(f64, u32)>);
}

/// A stored graph and its edges' weights.
struct Weighted<'a> {
    g: &'a Graph,
    w: &'a [f64],
}

impl Edges for Weighted<'_> {
    fn nodes(&self) -> usize {
        self.g.n
    }
    fn edges(&self) -> usize {
        self.g.ends.len()
    }
    fn live(&self, i: usize) -> bool {
        self.g.live[i]
    }
    fn ends(&self, e: usize) -> [u32; 2] {
        self.g.ends[e]
    }
    fn weight(&self, e: usize) -> f64 {
        self.w[e]
    }
    fn incident_into(&self, i: usize, out: &mut Vec<(f64, u32)>) {
        out.clear();
        out.extend(self.g.incident(i).iter().map(|&[e, o]| (self.w[e as usize], o)));
    }
}

/// The model's springs in [`spring_order`] weighted by their k, each edge's ends as (lower, upper): the
/// graph [`super::spring_mg::SpringMg::for_model`] builds, read from the model (4 B a spring for the
/// order instead of 24 for a stored graph).
struct ModelEdges<'a> {
    m: &'a CpuModel,
    order: Vec<u32>,
}

impl ModelEdges<'_> {
    fn ends_of(&self, s: usize) -> [u32; 2] {
        let (a, b) = (self.m.end_a[s], self.m.end_b[s]);
        [a.min(b), a.max(b)]
    }
}

impl Edges for ModelEdges<'_> {
    fn nodes(&self) -> usize {
        self.m.n
    }
    fn edges(&self) -> usize {
        self.order.len()
    }
    fn live(&self, i: usize) -> bool {
        self.m.inv_mass[i] != 0.0
    }
    fn ends(&self, e: usize) -> [u32; 2] {
        self.ends_of(self.order[e] as usize)
    }
    fn weight(&self, e: usize) -> f64 {
        self.m.k[self.order[e] as usize]
    }
    fn incident_into(&self, i: usize, out: &mut Vec<(f64, u32)>) {
        // the springs at i in the order of their edges: by (lower end, upper end, spring)
        let mut springs: Vec<(u32, u32, u32)> = self
            .m
            .incidence
            .of(i)
            .iter()
            .map(|&x| {
                let s = entry_spring(x).0;
                let [a, b] = self.ends_of(s);
                (a, b, s as u32)
            })
            .collect();
        springs.sort_unstable();
        out.clear();
        out.extend(springs.iter().map(|&(a, b, s)| (self.m.k[s as usize], if a as usize == i { b } else { a })));
    }
}

/// The scalar graph of a level for the aggregation, a row at a time: −w on each edge between live
/// nodes, the sum of the weights on the diagonal (empty rows for dead nodes), parallel edges summed.
struct ScalarRows<'a, E> {
    g: &'a E,
    incident: RefCell<Vec<(f64, u32)>>,
}

impl<E: Edges> Rows for ScalarRows<'_, E> {
    fn rows(&self) -> usize {
        self.g.nodes()
    }

    fn row_into(&self, i: usize, row: &mut Vec<(u32, f64)>) {
        row.clear();
        if !self.g.live(i) {
            return;
        }
        let mut inc = self.incident.borrow_mut();
        self.g.incident_into(i, &mut inc);
        row.extend(inc.iter().filter(|&&(_, o)| self.g.live(o as usize)).map(|&(w, o)| (o, -w)));
        let d: f64 = inc.iter().map(|&(w, _)| w).sum();
        row.push((i as u32, d.max(f64::MIN_POSITIVE)));
        merge_row(row);
    }
}

/// The next level below `g`: the link, the coarse graph and its edge weights; `None` when `g` has at
/// most [`COARSE_NODES`] live nodes or its coarsening stalls.
fn next_level(g: &impl Edges) -> Option<(Link, Graph, Vec<f64>)> {
    let live = (0..g.nodes()).filter(|&i| g.live(i)).count();
    if live <= COARSE_NODES {
        return None;
    }
    let (agg, nc) = aggregate(&ScalarRows { g, incident: RefCell::new(Vec::new()) });
    if nc == 0 || nc as f64 > 0.85 * live as f64 {
        return None; // coarsening stalls
    }
    Some(coarsen(g, agg, nc))
}

/// The next level from an aggregation of `g`: the link, the coarse graph and its edge weights.
fn coarsen(g: &impl Edges, agg: Vec<u32>, nc: usize) -> (Link, Graph, Vec<f64>) {
    let mut ids: HashMap<(u32, u32), u32> = HashMap::new();
    let (mut cends, mut cw, mut ground_keys) = (Vec::new(), Vec::new(), Vec::new());
    // per fine edge, the coarse edge it sums into (NONE: none)
    let mut coarse_edge = vec![NONE; g.edges()];
    for (e, ce) in coarse_edge.iter_mut().enumerate() {
        let [a, b] = g.ends(e);
        let (ca, cb) = (agg[a as usize], agg[b as usize]);
        match (ca == NONE, cb == NONE) {
            (true, true) => {}
            (false, true) => ground_keys.push((ca, e as u32)),
            (true, false) => ground_keys.push((cb, e as u32)),
            (false, false) if ca == cb => {}
            (false, false) => {
                let key = (ca.min(cb), ca.max(cb));
                let id = *ids.entry(key).or_insert_with(|| {
                    cends.push([key.0, key.1]);
                    cw.push(0.0);
                    (cends.len() - 1) as u32
                });
                cw[id as usize] += g.weight(e);
                *ce = id;
            }
        }
    }
    drop(ids);
    let members = agg.iter().enumerate().filter(|(_, &c)| c != NONE).map(|(i, &c)| (c, i as u32));
    let edge_keys = coarse_edge.iter().enumerate().filter(|(_, &c)| c != NONE).map(|(e, &c)| (c, e as u32));
    let link = Link {
        members: Lists::from_keys(nc, members),
        grounded: Lists::from_keys(nc, ground_keys.iter().copied()),
        edges: Lists::from_keys(cends.len(), edge_keys),
        agg,
    };
    let coarse = Graph::new(nc, cends, vec![true; nc]);
    (link, coarse, cw)
}

/// The coarse levels of a spring hierarchy (level 0 is the fine graph, held by whoever built it): how
/// each level sums into the next and the coarse levels' graphs.
#[derive(Clone, Debug, Default)]
pub struct SpringLevels {
    /// Per level but the last: how it sums into the next.
    pub(crate) links: Vec<Link>,
    /// Levels 1 and coarser.
    pub(crate) coarse: Vec<Graph>,
    /// Level 0's nodes.
    fine_nodes: usize,
}

impl SpringLevels {
    /// The coarse levels below the fine graph `fine` with edge weights `w` (the springs' k).
    pub(crate) fn build(fine: &Graph, w: &[f64]) -> Self {
        SpringLevels::grow(&Weighted { g: fine, w })
    }

    /// The coarse levels of `m`'s springs in [`spring_order`] weighted by their k: those of
    /// [`super::spring_mg::SpringMg::for_model`], without its fine graph.
    pub fn for_model(m: &CpuModel) -> Self {
        SpringLevels::grow(&ModelEdges { m, order: spring_order(m) })
    }

    fn grow(fine: &impl Edges) -> Self {
        let (mut links, mut coarse, mut w) = (Vec::new(), Vec::<Graph>::new(), Vec::new());
        while 1 + coarse.len() < MAX_LEVELS {
            let next = match coarse.last() {
                None => next_level(fine),
                Some(g) => next_level(&Weighted { g, w: &w }),
            };
            let Some((link, g, wc)) = next else { break };
            links.push(link);
            coarse.push(g);
            w = wc;
        }
        SpringLevels { links, coarse, fine_nodes: fine.nodes() }
    }

    /// The number of levels (level 0 is the model).
    pub fn levels(&self) -> usize {
        1 + self.coarse.len()
    }

    /// The node count of each level.
    pub fn sizes(&self) -> Vec<usize> {
        std::iter::once(self.fine_nodes).chain(self.coarse.iter().map(|g| g.n)).collect()
    }

    /// Level l's aggregation: each node's node on level l + 1 (`u32::MAX` for a pinned particle).
    pub fn aggregates(&self, l: usize) -> &[u32] {
        &self.links[l].agg
    }

    /// How level l sums into level l + 1, each list in compressed rows `(ptr, src)`: per coarse node its
    /// members and its grounded fine edges (to a pinned particle), per coarse edge the fine edges it sums.
    pub fn link_lists(&self, l: usize) -> [(&[u32], &[u32]); 3] {
        let k = &self.links[l];
        [(&k.members.ptr, &k.members.src), (&k.grounded.ptr, &k.grounded.src), (&k.edges.ptr, &k.edges.src)]
    }

    /// Coarse level l's (l ≥ 1) structure for an upload: its node count, and per node its incident
    /// (edge, other end) pairs in compressed rows (`inc_ptr`, `inc`), in the order the V-cycle sums them.
    pub fn level_lists(&self, l: usize) -> (usize, &[u32], &[[u32; 2]]) {
        let g = &self.coarse[l - 1];
        (g.n, &g.inc_ptr, &g.inc)
    }

    /// Coarse level l's (l ≥ 1) edge count.
    pub fn level_edges(&self, l: usize) -> usize {
        self.coarse[l - 1].ends.len()
    }

    /// Whether the last level is factored (a dense Cholesky): there is a coarse level and the last one
    /// has at most 3 × [`COARSE_NODES`] nodes. Otherwise the V-cycle smooths there.
    pub fn factors_last_level(&self) -> bool {
        self.coarse.last().is_some_and(|g| g.n <= 3 * COARSE_NODES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::spring_mg::SpringMg;

    #[test]
    fn the_levels_from_the_model_are_those_of_the_fine_graph() {
        for side in [40, 64] {
            // at 40²: pins elsewhere, a parallel spring and one whose ends are given the other way round
            let model =
                if side == 40 { crate::linalg::irregular_cloth(side, true) } else { crate::model::cloth(side, None).expect("a cloth") };
            let m = CpuModel::new(&model).expect("laid out");
            let (lean, full) = (SpringLevels::for_model(&m), SpringMg::for_model(&m).expect("a hierarchy"));
            assert!(lean.levels() > 1, "a coarse level at {side}²");
            assert_eq!((lean.levels(), lean.sizes()), (full.levels(), full.sizes()));
            assert_eq!(lean.factors_last_level(), full.factors_last_level());
            for l in 0..lean.levels() - 1 {
                assert_eq!(lean.aggregates(l), full.aggregates(l), "level {l}'s aggregates");
                assert_eq!(lean.link_lists(l), full.link_lists(l), "level {l}'s links");
            }
            for l in 1..lean.levels() {
                assert_eq!(lean.level_lists(l), full.level_lists(l), "level {l}'s incidence");
                assert_eq!(lean.level_edges(l), full.level_edges(l));
            }
        }
    }
}
