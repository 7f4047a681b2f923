//! Self-collision in f64: the twin of `shaders/self_collision.wgsl`, one plain function per entry point.
//!
//! The approximate real-time scheme that Liu et al. 2013 (§5) use, after Müller et al. 2007
//! ("Position based dynamics", §4.4: particle–particle collision as a projection): after every step
//! each pair of particles that no spring joins and that lie closer than the thickness t is pushed apart.
//!
//! **The hash** (Teschner et al. 2003, "Optimized spatial hashing for collision detection of
//! deformable objects"): a particle at x lies in the cell c = ⌊x / s⌋ (s the cell edge, ≥ t), and the
//! cell goes to the bucket h(c) = (c_x·73856093 ⊕ c_y·19349663 ⊕ c_z·83492791) mod T, with u32
//! wrapping products, in a table of T = max(64, next power of two ≥ n) buckets (a fixed size: no
//! bounding box is needed, and distinct cells may share a bucket, which only costs distance tests).
//! The buckets are filled by a counting sort: count per bucket ([`sc_count`]), exclusive prefix sum
//! of the counts ([`sc_prefix`]; on the GPU a workgroup scan, the block sums' scan and their add), and
//! scatter ([`sc_scatter`]); each bucket's list is then in increasing particle order (`sc_sort` on
//! the GPU, where the scatter's atomics leave it in any order; here the scatter runs in index order
//! and the list is already sorted). Every result is therefore independent of the scheduling.
//!
//! **The repulsion** ([`sc_repulse`], one Jacobi pass over the state): particle i visits the 27 cells
//! around its own (in the order dz, dy, dx ∈ {−1, 0, 1}, dx fastest) and, in each cell's bucket, the
//! particles j ≠ i in increasing order with d = |xᵢ − xⱼ| < t whose own cell is the one visited (so
//! that a pair is met once, even where two of the cells share a bucket) and that no spring joins to i
//! (i's CSR incidence list). Each contact, with
//! n̂ = (xᵢ − xⱼ)/d, gives
//!
//! - a push of its share of the overlap: Δxᵢ = wᵢ/(wᵢ + wⱼ) · (t − d) n̂ (w = 1/m, 0 when pinned),
//! - an inelastic normal velocity: if the pair approaches (u = n̂·(vᵢ − vⱼ) < 0), Δvᵢ = −wᵢ/(wᵢ + wⱼ) · u n̂,
//!
//! and the particle moves by the average of its contacts' (Müller et al.'s constraint averaging,
//! which keeps a particle pressed by several others from being pushed several times over). A pinned
//! particle never moves. Passes per step repeat hash and repulsion
//! ([`crate::model::SelfCollision::passes`]). Two coincident particles take n̂ = +y for the lower index,
//! −y for the higher.
//!
//! **The checker** ([`self_gap`]): the smallest distance between two unjoined particles over t, found
//! through the same hash (pairs farther apart than the cell edge s may be missed, so the value is
//! capped at s/t).

use super::model::{CpuModel, V3};
use crate::model::SelfCollision;

/// The hash's primes (Teschner et al. 2003).
pub const HASH_PRIMES: [u32; 3] = [73856093, 19349663, 83492791];

/// Buckets of the hash table for n particles: max(64, the next power of two ≥ n) (a multiple of the
/// GPU's workgroup size, which the scan needs).
pub fn table_size(n: usize) -> usize {
    n.max(64).next_power_of_two()
}

/// The cell of position x: ⌊x · (1/s)⌋ per axis (saturating at the i32 range).
#[inline]
pub fn sc_cell(x: V3, inv_cell: f64) -> [i32; 3] {
    [(x.x * inv_cell).floor() as i32, (x.y * inv_cell).floor() as i32, (x.z * inv_cell).floor() as i32]
}

/// The bucket of cell c in a table of `table` buckets (a power of two: the mod is a mask).
#[inline]
pub fn sc_hash(c: [i32; 3], table: u32) -> u32 {
    let h = (c[0] as u32).wrapping_mul(HASH_PRIMES[0])
        ^ (c[1] as u32).wrapping_mul(HASH_PRIMES[1])
        ^ (c[2] as u32).wrapping_mul(HASH_PRIMES[2]);
    h & (table - 1)
}

/// The spatial hash of one state: per particle its bucket, per bucket its count and start, and the
/// particles sorted by bucket (within a bucket by index).
#[derive(Clone, Debug, PartialEq)]
pub struct SpatialHash {
    /// 1/s (the cell edge's inverse).
    pub inv_cell: f64,
    /// Buckets T.
    pub table: u32,
    /// Each particle's bucket.
    pub bucket: Vec<u32>,
    /// Particles per bucket.
    pub counts: Vec<u32>,
    /// The T + 1 exclusive prefix sums of `counts` (bucket h holds `sorted[start[h]..start[h+1]]`).
    pub start: Vec<u32>,
    /// The particles, by bucket, in increasing index within a bucket.
    pub sorted: Vec<u32>,
}

/// `sc_count`: particle i's bucket, whose count it adds one to.
#[inline]
pub fn sc_count(i: usize, x: &[V3], inv_cell: f64, table: u32) -> u32 {
    sc_hash(sc_cell(x[i], inv_cell), table)
}

/// `sc_scan_blocks`, `sc_scan_sums` and `sc_add_sums` together: the T + 1 exclusive prefix sums of the counts.
pub fn sc_prefix(counts: &[u32]) -> Vec<u32> {
    let mut start = Vec::with_capacity(counts.len() + 1);
    let mut acc = 0u32;
    start.push(0);
    for &c in counts {
        acc += c;
        start.push(acc);
    }
    start
}

/// `sc_scatter` (and `sc_sort`): the particles placed by bucket, in index order within each.
pub fn sc_scatter(bucket: &[u32], start: &[u32]) -> Vec<u32> {
    let mut fill: Vec<u32> = start[..start.len() - 1].to_vec();
    let mut sorted = vec![0u32; bucket.len()];
    for (i, &h) in bucket.iter().enumerate() {
        sorted[fill[h as usize] as usize] = i as u32;
        fill[h as usize] += 1;
    }
    sorted
}

impl SpatialHash {
    /// The hash of positions x with cell edge `cell`: the counting sort of the module docs.
    pub fn build(x: &[V3], cell: f64) -> Self {
        let inv_cell = 1.0 / cell;
        let table = table_size(x.len()) as u32;
        let bucket: Vec<u32> = (0..x.len()).map(|i| sc_count(i, x, inv_cell, table)).collect();
        let mut counts = vec![0u32; table as usize];
        for &h in &bucket {
            counts[h as usize] += 1;
        }
        let start = sc_prefix(&counts);
        let sorted = sc_scatter(&bucket, &start);
        SpatialHash { inv_cell, table, bucket, counts, start, sorted }
    }

    /// The particles in bucket h.
    #[inline]
    pub fn in_bucket(&self, h: u32) -> &[u32] {
        &self.sorted[self.start[h as usize] as usize..self.start[h as usize + 1] as usize]
    }

    /// The 27 cells around x's, in the visiting order of the module docs.
    pub fn around(&self, x: V3) -> [[i32; 3]; 27] {
        neighbour_cells(sc_cell(x, self.inv_cell))
    }
}

/// The 27 cells around cell c (dz, dy, dx ∈ {−1, 0, 1}, dx fastest).
#[inline]
pub fn neighbour_cells(c: [i32; 3]) -> [[i32; 3]; 27] {
    let mut out = [[0i32; 3]; 27];
    let mut k = 0;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                out[k] = [c[0].wrapping_add(dx), c[1].wrapping_add(dy), c[2].wrapping_add(dz)];
                k += 1;
            }
        }
    }
    out
}

/// Whether a spring joins particles i and j (over i's CSR incidence list).
#[inline]
pub fn joined(m: &CpuModel, i: usize, j: u32) -> bool {
    m.incidence.of(i).iter().any(|&e| {
        let s = (e >> 1) as usize;
        let other = if e & 1 == 0 { m.end_b[s] } else { m.end_a[s] };
        other == j
    })
}

/// `sc_repulse`: particle i's new (x, v) after one Jacobi repulsion pass with thickness `t` over the
/// state (x, v) hashed in `hash` (see the module docs). w = `m.inv_mass`.
pub fn sc_repulse(i: usize, m: &CpuModel, t: f64, hash: &SpatialHash, x: &[V3], v: &[V3]) -> (V3, V3) {
    let (xi, vi, wi) = (x[i], v[i], m.inv_mass[i]);
    if wi == 0.0 {
        return (xi, vi);
    }
    let mut dx = V3::zeros();
    let mut dv = V3::zeros();
    let mut contacts = 0u32;
    for cell in hash.around(xi) {
        for &j in hash.in_bucket(sc_hash(cell, hash.table)) {
            let ju = j as usize;
            if ju == i {
                continue;
            }
            let d = xi - x[ju];
            let d2 = d.dot(&d);
            if d2 >= t * t || sc_cell(x[ju], hash.inv_cell) != cell || joined(m, i, j) {
                continue;
            }
            let dist = d2.sqrt();
            let n = if dist > 0.0 {
                d / dist
            } else if i < ju {
                V3::new(0.0, 1.0, 0.0)
            } else {
                V3::new(0.0, -1.0, 0.0)
            };
            let share = wi / (wi + m.inv_mass[ju]);
            dx += n * (share * (t - dist));
            let u = n.dot(&(vi - v[ju]));
            if u < 0.0 {
                dv -= n * (share * u);
            }
            contacts += 1;
        }
    }
    if contacts == 0 {
        return (xi, vi);
    }
    let c = contacts as f64;
    (xi + dx / c, vi + dv / c)
}

/// One self-collision pass on the state (x, v), in place, single-threaded: the hash, then
/// [`sc_repulse`] for every particle on the old state.
pub fn self_collide_pass(m: &CpuModel, sc: &SelfCollision, x: &mut [V3], v: &mut [V3]) {
    let n = m.n;
    let hash = SpatialHash::build(&x[..n], sc.cell_size());
    let new: Vec<(V3, V3)> = (0..n).map(|i| sc_repulse(i, m, sc.thickness, &hash, x, v)).collect();
    for (i, (xi, vi)) in new.into_iter().enumerate() {
        x[i] = xi;
        v[i] = vi;
    }
}

/// Every pass of the model's self-collision on (x, v), in place; nothing without it.
pub fn self_collide(m: &CpuModel, x: &mut [V3], v: &mut [V3]) {
    if let Some(sc) = m.self_collision {
        for _ in 0..sc.passes {
            self_collide_pass(m, &sc, x, v);
        }
    }
}

/// The smallest distance between two particles that no spring joins, over the thickness of `sc`,
/// found through the hash of cell `sc.cell_size()` (capped at cell/t: farther pairs may be missed).
/// Works for any model (self-collision on or off): `sc` gives the thickness and cell to check against.
pub fn self_gap(m: &CpuModel, sc: &SelfCollision, x: &[V3]) -> f64 {
    let (t, cell) = (sc.thickness, sc.cell_size());
    let hash = SpatialHash::build(&x[..m.n], cell);
    let mut best = cell;
    for i in 0..m.n {
        for cell in hash.around(x[i]) {
            for &j in hash.in_bucket(sc_hash(cell, hash.table)) {
                if j as usize <= i {
                    continue;
                }
                let d = (x[i] - x[j as usize]).norm();
                if d < best && !joined(m, i, j) {
                    best = d;
                }
            }
        }
    }
    best / t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Forces, Model};

    #[test]
    fn hash_sorts_by_bucket_then_index() {
        let x: Vec<V3> = (0..200).map(|i| V3::new((i * 37 % 101) as f64 * 0.013, (i % 7) as f64 * 0.05, (i % 3) as f64 * 0.1)).collect();
        let h = SpatialHash::build(&x, 0.05);
        assert_eq!(h.start[h.table as usize], 200);
        for b in 0..h.table {
            let list = h.in_bucket(b);
            assert_eq!(list.len() as u32, h.counts[b as usize]);
            assert!(list.windows(2).all(|w| w[0] < w[1]));
            assert!(list.iter().all(|&i| h.bucket[i as usize] == b));
        }
    }

    #[test]
    fn repulsion_pushes_an_unjoined_pair_to_the_thickness_and_skips_a_joined_one() {
        let mut model = Model::new(Forces::none());
        model.add_particle([0.0, 0.0, 0.0], 1.0);
        model.add_particle([0.01, 0.0, 0.0], 3.0);
        model.velocities[0] = [1.0, 0.0, 0.0];
        model.self_collision = Some(SelfCollision::new(0.05));
        let m = CpuModel::new(&model).unwrap();
        let mut x: Vec<V3> = model.positions.iter().map(|p| V3::from(*p)).collect();
        let mut v: Vec<V3> = model.velocities.iter().map(|p| V3::from(*p)).collect();
        self_collide(&m, &mut x, &mut v);
        assert!(((x[1] - x[0]).norm() - 0.05).abs() < 1e-12, "{x:?}");
        // the lighter particle takes 3/4 of the push; the approach is removed, momentum kept
        assert!((x[0].x + 0.03).abs() < 1e-12, "{x:?}");
        assert!((v[0].x - v[1].x).abs() < 1e-12 && (v[0].x * 1.0 + v[1].x * 3.0 - 1.0).abs() < 1e-12, "{v:?}");
        assert!((self_gap(&m, &SelfCollision::new(0.05), &x) - 1.0).abs() < 1e-9);
        model.add_spring(0, 1, 1.0, 0.0);
        let m = CpuModel::new(&model).unwrap();
        let mut x: Vec<V3> = model.positions.iter().map(|p| V3::from(*p)).collect();
        let mut v = x.clone();
        self_collide(&m, &mut x, &mut v);
        assert_eq!(x[1].x, 0.01);
    }
}
