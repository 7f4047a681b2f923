//! Bending: the quadratic bending energy of Bergou, Wardetzky, Harmon, Zorin and Grinspun, "A
//! Quadratic Bending Model for Inextensible Surfaces" (SGP 2006), written as zero-rest-length springs.
//!
//! For each interior edge of a triangle mesh that is flat at rest, with the edge's ends x₀, x₁ and the
//! two opposite vertices x₂, x₃, the energy is `E_e = ½ B/(A₀ + A₁) · |Σᵢ Kᵢ xᵢ|²`, where A₀, A₁
//! are the two triangles' rest areas and K = (cot α₁ + cot β₁, cot α₀ + cot β₀, −cot α₀ − cot α₁,
//! −cot β₀ − cot β₁) holds the cotangents of the rest angles at x₀ and x₁ in the triangle with x₂ (α)
//! and with x₃ (β) (Bergou et al. §4; Wardetzky et al. 2007). `Σᵢ Kᵢ xᵢ` is the hinge's discrete
//! mean-curvature normal: zero while the hinge is flat, whatever its position or rotation, and growing
//! linearly with the fold, so a grid-scale fold costs energy ∝ its angle² (skip-one bend springs resist a
//! fold only to fourth order near flat).
//!
//! The energy is quadratic in the positions with a constant Hessian B·Q ⊗ I₃ whose rows sum to zero, and
//! every such energy is a sum of zero-rest-length springs: `½ xᵀ(Q ⊗ I)x = ½ Σ_{i<j} (−Q_ij) |xᵢ − xⱼ|²`.
//! So each hinge adds linear springs of rest length 0 and stiffness `k_ij = −B/(A₀+A₁)·Kᵢ Kⱼ` between
//! its four vertices (merged over hinges); some are negative (a hinge's diagonal pulls its two sides
//! apart), their sum is positive semi-definite. Every engine evaluates them as the springs they are: the
//! force, the implicit Hessian (kI for a zero-rest spring) and local/global's constant matrix
//! (d = 0: a zero-rest spring's projection is the point itself) all hold exactly, so every method and
//! both engines get bending with no kernel of its own.
//!
//! B (N·m) is the bending stiffness of a plate: a cylindrical bend of curvature κ stores ½ B κ² per unit
//! area, in any direction across the grid (Bergou et al.'s Q is 3/(A₀+A₁)·K Kᵀ for ∫H²; the factor here
//! makes B the plate's stiffness; the tests below roll a sheet into cylinders three ways). Heavy cloth is about 1e-4 N·m; the built-in scenes' coarse
//! grids use a stiffer B so that folds span several cells.

use std::collections::HashMap;

use super::{Model, Spring};
use crate::error::{Bound, Error, Result};

type V = [f64; 3];

fn sub(a: &V, b: &V) -> V {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: &V, b: &V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: &V, b: &V) -> V {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn norm(a: &V) -> f64 {
    dot(a, a).sqrt()
}

/// The cotangent of the angle at `o` between the rays to `a` and `b`.
fn cot(o: &V, a: &V, b: &V) -> f64 {
    let (u, v) = (sub(a, o), sub(b, o));
    dot(&u, &v) / norm(&cross(&u, &v))
}

/// One interior edge's hinge: the edge's ends, the two opposite vertices and the two triangles' areas.
struct Hinge {
    v: [u32; 4],
    area: f64,
}

/// The interior edges of `triangles` (an edge shared by exactly two triangles), in a fixed order.
fn hinges(x: &[V], triangles: &[[u32; 3]]) -> Vec<Hinge> {
    let area = |t: usize| {
        let [a, b, c] = triangles[t].map(|i| x[i as usize]);
        0.5 * norm(&cross(&sub(&b, &a), &sub(&c, &a)))
    };
    let mut hs: Vec<Hinge> = super::edges::mesh_edges(triangles)
        .into_iter()
        .filter_map(|e| match e.sides[..] {
            [(t0, o0), (t1, o1)] => Some(Hinge { v: [e.key.0, e.key.1, o0, o1], area: area(t0) + area(t1) }),
            _ => None,
        })
        .collect();
    hs.sort_unstable_by_key(|h| (h.v[0], h.v[1]));
    hs
}

/// A hinge's weights K (Bergou et al. 2006, §4) from the rest positions.
fn weights(x: &[V], h: &Hinge) -> [f64; 4] {
    let [x0, x1, x2, x3] = h.v.map(|i| x[i as usize]);
    let (a0, a1) = (cot(&x0, &x1, &x2), cot(&x1, &x0, &x2));
    let (b0, b1) = (cot(&x0, &x1, &x3), cot(&x1, &x0, &x3));
    [a1 + b1, a0 + b0, -a0 - a1, -b0 - b1]
}

/// Adds the quadratic bending energy of stiffness `b` (N·m) over the model's triangles as zero-rest-length
/// springs (see the module's documentation) and returns how many springs it added. The rest shape is the
/// model's current positions, which must be flat at every interior edge (a cloth cut flat): the model
/// bends toward flat. Refuses a model without interior edges, a degenerate triangle and a rest shape
/// that is not flat.
pub fn add_bending(m: &mut Model, b: f64) -> Result<usize> {
    if !(b.is_finite() && b >= 0.0) {
        return Err(Error::invalid("bending", b, Bound::NonNegative));
    }
    let x = &m.positions;
    if let Some(t) = m.triangles.iter().find(|t| t.iter().any(|&i| i as usize >= x.len())) {
        return Err(Error::invalid("bending", format!("{t:?}"), Bound::Other("a triangle's vertex is out of range".into())));
    }
    if let Some(t) = m.triangles.iter().find(|t| t[0] == t[1] || t[1] == t[2] || t[0] == t[2]) {
        return Err(Error::invalid("bending", format!("{t:?}"), Bound::Other("a degenerate triangle (a repeated vertex)".into())));
    }
    let hs = hinges(x, &m.triangles);
    if hs.is_empty() {
        return Err(Error::invalid("bending", b, Bound::Other("the model has no interior triangle edges to bend".into())));
    }
    let mut k: HashMap<(u32, u32), f64> = HashMap::new();
    let mut scale = 0.0f64;
    for h in &hs {
        let w = weights(x, h);
        if h.area.is_nan() || h.area <= 0.0 || w.iter().any(|c| !c.is_finite()) {
            return Err(Error::invalid("bending", format!("{:?}", h.v), Bound::Other("a degenerate triangle at this hinge".into())));
        }
        // flat at rest: the hinge's mean-curvature normal Σ Kᵢ xᵢ is zero (relative to its edge's length)
        let mut hn = [0.0; 3];
        for (c, &i) in w.iter().zip(&h.v) {
            for d in 0..3 {
                hn[d] += c * x[i as usize][d];
            }
        }
        let edge = norm(&sub(&x[h.v[0] as usize], &x[h.v[1] as usize]));
        if norm(&hn) > 1e-9 * edge {
            return Err(Error::invalid(
                "bending",
                format!("{:?}", h.v),
                Bound::Other("the rest shape is not flat at this hinge (bending holds a cloth cut flat)".into()),
            ));
        }
        let q = b / h.area;
        for i in 0..4 {
            for j in i + 1..4 {
                let (p, r) = (h.v[i].min(h.v[j]), h.v[i].max(h.v[j]));
                let kij = -q * w[i] * w[j];
                scale = scale.max(kij.abs());
                *k.entry((p, r)).or_default() += kij;
            }
        }
    }
    let mut pairs: Vec<_> = k.into_iter().filter(|(_, kij)| kij.abs() > 1e-12 * scale).collect();
    pairs.sort_unstable_by_key(|(p, _)| *p);
    let added = pairs.len();
    m.springs.extend(pairs.into_iter().map(|((a, b), k)| Spring { a, b, rest: 0.0, k, kd: 0.0 }));
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bending springs' energy ½ Σ k |xₐ − x_b|² over the zero-rest springs.
    fn energy(m: &Model, x: &[V]) -> f64 {
        let e = |s: &Spring| sub(&x[s.a as usize], &x[s.b as usize]);
        m.springs.iter().filter(|s| s.rest == 0.0).map(|s| 0.5 * s.k * dot(&e(s), &e(s))).sum()
    }

    /// A 41×41 curtain (1 m², flat in x-z) with bending only.
    fn sheet(b: f64) -> Model {
        let mut m = crate::model::curtain(41, None).unwrap();
        m.springs.clear();
        add_bending(&mut m, b).unwrap();
        m
    }

    /// Rolled onto a cylinder of radius r whose axis is along the unit in-plane direction `axis`
    /// (arc length kept: an isometry, so only bending stores energy).
    fn rolled(m: &Model, r: f64, axis: [f64; 2]) -> Vec<V> {
        let across = [axis[1], -axis[0]];
        m.positions
            .iter()
            .map(|p| {
                let (u, w) = (p[0] * across[0] + p[2] * across[1], p[0] * axis[0] + p[2] * axis[1]);
                let (a, h) = (r * (u / r).sin(), r * (1.0 - (u / r).cos()));
                [a * across[0] + w * axis[0], h, a * across[1] + w * axis[1]]
            })
            .collect()
    }

    #[test]
    fn a_cylinder_stores_half_b_kappa_squared_per_area_in_every_direction() {
        let b = 0.01;
        let m = sheet(b);
        let s = 1.0 / 40.0;
        for r in [0.5f64, 1.0, 2.0] {
            let want = 0.5 * b / (r * r); // the whole 1 m² sheet
                                          // along the grid's columns or rows: the bend lives on the 39 interior lines of 40
            for axis in [[0.0, 1.0], [1.0, 0.0]] {
                let ratio = energy(&m, &rolled(&m, r, axis)) / want;
                assert!((ratio - (1.0 - s)).abs() < 2e-3, "R {r}, axis {axis:?}: E / (½Bκ²A) = {ratio:.4}, want {:.4}", 1.0 - s);
            }
            // across the diagonals (the grid's one diagonal per quad): the same stiffness within 5%
            let d = std::f64::consts::FRAC_1_SQRT_2;
            let ratio = energy(&m, &rolled(&m, r, [d, d])) / want;
            assert!((0.9..=1.0).contains(&ratio), "R {r}, diagonal: E / (½Bκ²A) = {ratio:.4}");
        }
    }

    #[test]
    fn a_flat_sheet_moved_rotated_or_stretched_in_its_plane_stores_nothing() {
        let m = sheet(0.01);
        let (c, s) = (0.6f64, 0.8f64);
        let moved: Vec<V> = m.positions.iter().map(|p| [c * p[0] - s * p[1] + 3.0, s * p[0] + c * p[1] - 1.0, 1.3 * p[2] + 2.0]).collect();
        let e = energy(&m, &moved);
        assert!(e.abs() < 1e-12, "energy {e:e}");
        // a fold costs energy, and the springs' sum is positive semi-definite: a random shape stores > 0
        let bumped: Vec<V> =
            m.positions.iter().enumerate().map(|(i, p)| [p[0], p[1] + 0.01 * ((i * 7919 % 97) as f64 / 97.0), p[2]]).collect();
        assert!(energy(&m, &bumped) > 0.0);
    }

    #[test]
    fn a_rest_shape_that_is_not_flat_is_refused() {
        let mut m = crate::model::curtain(9, None).unwrap();
        m.positions[40][1] += 0.01;
        let e = add_bending(&mut m, 0.01).unwrap_err().to_string();
        assert!(e.contains("not flat"), "{e}");
        let mut rope = crate::model::rope(8, None).unwrap();
        assert!(add_bending(&mut rope, 0.01).unwrap_err().to_string().contains("no interior triangle edges"));
        assert!(add_bending(&mut sheet(0.0), -1.0).is_err());
    }
}
