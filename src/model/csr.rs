//! CSR incidence lists: for each particle, the springs that touch it and on which side.
//!
//! Every per-particle gather (spring forces, K·v, the linearized force, later the CG matrix-vector
//! product and the local-step right-hand side) walks `entries[offsets[i]..offsets[i+1]]`. An entry is
//! `2·spring + side`, side 0 when the particle is the spring's `a`, 1 when it is `b`. The sum is
//! deterministic and needs no float atomics.

use super::Spring;

/// CSR incidence lists of a spring set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incidence {
    /// `n + 1` offsets into `entries`.
    pub offsets: Vec<u32>,
    /// `2·spring + side`, grouped by particle, springs in increasing order within a particle.
    pub entries: Vec<u32>,
}

impl Incidence {
    /// Builds the lists for `n` particles. Springs with out-of-range endpoints are skipped
    /// (a validated model has none).
    pub fn build(n: usize, springs: &[Spring]) -> Self {
        let mut counts = vec![0u32; n + 1];
        for s in springs {
            if (s.a as usize) < n && (s.b as usize) < n {
                counts[s.a as usize + 1] += 1;
                counts[s.b as usize + 1] += 1;
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let offsets = counts.clone();
        let mut fill = counts;
        let mut entries = vec![0u32; offsets[n] as usize];
        for (si, s) in springs.iter().enumerate() {
            if (s.a as usize) < n && (s.b as usize) < n {
                let (a, b) = (s.a as usize, s.b as usize);
                entries[fill[a] as usize] = (si as u32) << 1;
                fill[a] += 1;
                entries[fill[b] as usize] = ((si as u32) << 1) | 1;
                fill[b] += 1;
            }
        }
        Incidence { offsets, entries }
    }

    /// The entries of particle `i`.
    #[inline]
    pub fn of(&self, i: usize) -> &[u32] {
        &self.entries[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}
