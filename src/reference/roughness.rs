//! The roughness of a triangle surface: the angle between the normals of every two triangles that share
//! an edge, summarised by its median, 90th and 99th percentiles in degrees. A flat sheet is 0; a sheet
//! folded once along a straight crease by θ has one row of pairs at θ and the rest at 0; a cloth rough at
//! its grid's scale (every grid-scale mode ringing) has a median of many degrees. Computed from positions
//! read back at the end of a run (or of a frame, by `springsim run`), so no GPU kernel mirrors it.

use std::collections::HashMap;

/// Two triangles that share an edge, by index, and whether their windings disagree along it (the same
/// edge walked the same way in both), in which case one normal is flipped before the angle is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdjacentPair {
    /// The first triangle.
    pub t0: u32,
    /// The second triangle.
    pub t1: u32,
    /// Their windings disagree along the shared edge.
    pub flip: bool,
}

/// Every pair of triangles of `triangles` that share an edge (an edge of k triangles gives every one of
/// their k(k − 1)/2 pairs). Degenerate triangles (a repeated vertex) are left out.
pub fn adjacent_pairs(triangles: &[[u32; 3]]) -> Vec<AdjacentPair> {
    // edge (lo, hi) -> the triangles along it, each with whether it walks the edge lo -> hi
    let mut edges: HashMap<(u32, u32), Vec<(u32, bool)>> = HashMap::with_capacity(triangles.len() * 3 / 2 + 1);
    for (t, tri) in triangles.iter().enumerate() {
        if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
            continue;
        }
        for e in 0..3 {
            let (a, b) = (tri[e], tri[(e + 1) % 3]);
            edges.entry((a.min(b), a.max(b))).or_default().push((t as u32, a < b));
        }
    }
    let mut pairs = Vec::with_capacity(triangles.len() * 3 / 2);
    for list in edges.values() {
        for i in 0..list.len() {
            for j in i + 1..list.len() {
                pairs.push(AdjacentPair { t0: list[i].0, t1: list[j].0, flip: list[i].1 == list[j].1 });
            }
        }
    }
    // a fixed order, whatever the hash map's
    pairs.sort_unstable_by_key(|p| (p.t0, p.t1));
    pairs
}

/// The roughness of a surface ([`roughness`]), in degrees.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Roughness {
    /// Pairs of adjacent triangles measured (those where both triangles have an area).
    pub pairs: usize,
    /// The median angle between adjacent triangles' normals (°).
    pub median_deg: f64,
    /// Its 90th percentile (°).
    pub p90_deg: f64,
    /// Its 99th percentile (°).
    pub p99_deg: f64,
    /// The largest (°).
    pub max_deg: f64,
}

/// The unit normal of triangle `t` at positions `x` (`None` for one of zero area or out of range).
fn normal(t: [u32; 3], x: &[[f64; 3]]) -> Option<[f64; 3]> {
    let p = |i: u32| x.get(i as usize).copied();
    let (a, b, c) = (p(t[0])?, p(t[1])?, p(t[2])?);
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    (len.is_finite() && len > 0.0).then(|| [n[0] / len, n[1] / len, n[2] / len])
}

/// The angle (°) between unit vectors `a` and `b`, atan2(|a × b|, a · b): exact near 0 and 180°.
fn angle_deg(a: [f64; 3], b: [f64; 3]) -> f64 {
    let c = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let sin = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
    let cos = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    sin.atan2(cos).to_degrees()
}

/// The roughness of `triangles` at positions `x` over the adjacent pairs `pairs` ([`adjacent_pairs`]
/// of the same triangles): for every pair, the angle between the two triangles' normals (one flipped
/// where the windings disagree); the median, 90th and 99th percentiles (nearest rank: the ⌈q·s⌉-th
/// smallest of s) and the largest. `None` when no pair has two triangles with an area (a model without
/// triangles).
pub fn roughness_of_pairs(triangles: &[[u32; 3]], pairs: &[AdjacentPair], x: &[[f64; 3]]) -> Option<Roughness> {
    let normals: Vec<Option<[f64; 3]>> = triangles.iter().map(|&t| normal(t, x)).collect();
    let mut angles: Vec<f64> = pairs
        .iter()
        .filter_map(|p| {
            let a = (*normals.get(p.t0 as usize)?)?;
            let b = (*normals.get(p.t1 as usize)?)?;
            let b = if p.flip { [-b[0], -b[1], -b[2]] } else { b };
            Some(angle_deg(a, b))
        })
        .collect();
    if angles.is_empty() {
        return None;
    }
    angles.sort_unstable_by(|a, b| a.total_cmp(b));
    let s = angles.len();
    let rank = |q: f64| angles[((q * s as f64).ceil() as usize).clamp(1, s) - 1];
    Some(Roughness { pairs: s, median_deg: rank(0.5), p90_deg: rank(0.9), p99_deg: rank(0.99), max_deg: angles[s - 1] })
}

/// The roughness of `triangles` at positions `x` ([`roughness_of_pairs`] over [`adjacent_pairs`]).
pub fn roughness(triangles: &[[u32; 3]], x: &[[f64; 3]]) -> Option<Roughness> {
    roughness_of_pairs(triangles, &adjacent_pairs(triangles), x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An n×n grid in the x-z plane, cut into triangles as the cloth builders cut it.
    fn grid(n: usize) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
        let x = (0..n * n).map(|i| [(i % n) as f64, 0.0, (i / n) as f64]).collect();
        let mut t = Vec::new();
        for r in 0..n - 1 {
            for c in 0..n - 1 {
                let i = (r * n + c) as u32;
                let n = n as u32;
                t.push([i, i + 1, i + n + 1]);
                t.push([i, i + n + 1, i + n]);
            }
        }
        (x, t)
    }

    #[test]
    fn a_flat_sheet_is_zero() {
        let (x, t) = grid(6);
        let r = roughness(&t, &x).unwrap();
        // 5×5 quads: 25 diagonals, 2·5·4 interior grid edges
        assert_eq!(r.pairs, 25 + 40);
        assert_eq!((r.median_deg, r.p90_deg, r.p99_deg, r.max_deg), (0.0, 0.0, 0.0, 0.0));
    }

    #[test]
    fn one_fold_gives_its_angle() {
        // a 2×1 strip of quads (2 columns), its second column lifted about the crease x = 1 by 40°
        let n = 3;
        let (mut x, t) = grid(n);
        let theta = 40f64.to_radians();
        for p in x.iter_mut() {
            if p[0] > 1.0 {
                let d = p[0] - 1.0;
                *p = [1.0 + d * theta.cos(), d * theta.sin(), p[2]];
            }
        }
        let r = roughness(&t, &x).unwrap();
        // 4 diagonals and 2 crease pairs of the 2×2 quads' 8 triangles, and the 2 interior row edges
        // (x = 0..1 and x = 1..2 at z = 1): 8 pairs, 2 of them across the crease at 40°
        assert_eq!(r.pairs, 8);
        assert!((r.max_deg - 40.0).abs() < 1e-9, "{r:?}");
        // 6 of 8 at 0°: the median (4th) is 0, the 90th percentile (8th) the fold
        assert_eq!(r.median_deg, 0.0);
        assert!((r.p90_deg - 40.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn a_fold_along_every_crease_is_the_median() {
        // a zig-zag of ±15° about every grid column: every pair across a column crease is at 30°, the
        // diagonals and row edges (within a column strip) at 0
        let n = 8;
        let (mut x, t) = grid(n);
        let h = 15f64.to_radians().tan();
        for p in x.iter_mut() {
            p[1] = if (p[0] as usize).is_multiple_of(2) { 0.0 } else { h };
        }
        let r = roughness(&t, &x).unwrap();
        assert!((r.max_deg - 30.0).abs() < 1e-9, "{r:?}");
        // 49 diagonals and 42 row edges at 0°, 42 column creases at 30°: the median is 0, p90 30°
        assert_eq!(r.pairs, 49 + 42 + 42);
        assert_eq!(r.median_deg, 0.0);
        assert!((r.p90_deg - 30.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn windings_that_disagree_are_flipped() {
        let (x, mut t) = grid(4);
        t[3] = [t[3][0], t[3][2], t[3][1]];
        assert_eq!(roughness(&t, &x).unwrap().max_deg, 0.0);
    }

    #[test]
    fn no_triangles_is_none() {
        assert_eq!(roughness(&[], &[[0.0; 3]]), None);
        assert_eq!(roughness(&[[0, 0, 1]], &[[0.0; 3], [1.0, 0.0, 0.0]]), None);
    }
}
