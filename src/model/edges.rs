//! The edges of a triangle mesh and the triangles on either side of each: what the mesh builder's
//! bending springs ([`super::triangle_mesh`]) and Bergou's bending energy ([`super::add_bending`]) both
//! walk.

use std::collections::HashMap;

/// An edge of a triangle mesh, `(lo, hi)`, and the triangles that share it, each as (its index in the
/// triangle list, the vertex opposite the edge), in the list's order. An interior edge of a manifold
/// mesh has two.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MeshEdge {
    /// The edge's vertices, the lower index first.
    pub key: (u32, u32),
    /// (triangle, opposite vertex) for each triangle on the edge.
    pub sides: Vec<(usize, u32)>,
}

/// Every edge of `triangles`, in the order of first appearance. A triangle with a repeated vertex has no
/// edges of its own and is left out. The vertex indices are not checked against any vertex count.
pub(crate) fn mesh_edges(triangles: &[[u32; 3]]) -> Vec<MeshEdge> {
    let mut index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut edges: Vec<MeshEdge> = Vec::new();
    for (t, tri) in triangles.iter().enumerate() {
        if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
            continue;
        }
        for e in 0..3 {
            let (a, b, opp) = (tri[e], tri[(e + 1) % 3], tri[(e + 2) % 3]);
            let key = (a.min(b), a.max(b));
            let i = *index.entry(key).or_insert_with(|| {
                edges.push(MeshEdge { key, sides: Vec::new() });
                edges.len() - 1
            });
            edges[i].sides.push((t, opp));
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles sharing the edge (1, 2): five edges in order of first appearance, the shared one
    /// with both opposite vertices; a degenerate triangle adds nothing.
    #[test]
    fn a_quad_has_one_interior_edge() {
        let edges = mesh_edges(&[[0, 1, 2], [2, 1, 3], [4, 4, 0]]);
        let keys: Vec<(u32, u32)> = edges.iter().map(|e| e.key).collect();
        assert_eq!(keys, [(0, 1), (1, 2), (0, 2), (1, 3), (2, 3)]);
        assert_eq!(edges[1].sides, [(0, 0), (1, 3)]);
        assert!(edges.iter().filter(|e| e.key != (1, 2)).all(|e| e.sides.len() == 1));
    }
}
