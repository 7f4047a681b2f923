//! Local/global's global matrix as a sliced ELL table (SELL-C with C = the workgroup size): the rows that
//! `lg_local_residual`, `lg_apply` (the PCG's operator) and `lg_chebyshev` gather over in
//! `shaders/local_global.wgsl`, in place of the CSR incidence lists the force kernels walk.
//!
//! Why: a thread that walks its own CSR list reads records 16 B × its degree apart from its neighbour
//! lane's, so each load of a warp touches as many cache lines as it has lanes; in a sliced ELL table slot
//! s of the 64 particles of a workgroup is 64 consecutive words, one or two cache lines per load. The
//! Chebyshev and PCG iterations of the global step are that gather and little else (BENCHMARKS,
//! seventeenth session).
//!
//! Layout (`vec4<u32>`s, "packets" of four slots, so that a thread reads four of its slots in one
//! 16-byte load and can issue their four gathers at once): the `u32` word offsets (in packets) of the
//! nb + 1 blocks of [`WORKGROUP_SIZE`] particles, padded to whole packets, then per block of G packets
//! (its longest incidence list in slots, rounded up to four) three planes of G·C packets: the other end j,
//! the stiffness k (f32 bits) and the signed rest length (f32 bits: +rest where the particle is the
//! spring's a, −rest where it is b: the sign of Liu's J and of the local step's guard direction), each
//! packet-major (packet g of lane l at g·C + l; its components are slots 4g … 4g + 3). A particle's slots
//! follow its CSR incidence list in order (so the kernels sum in the order of the f64 twins); the padding
//! slots are (i, 0, 0), which add nothing. The table depends on the springs alone, not on h or the
//! pinned set.

use super::alloc::UploadWriter;
use super::layout::WORKGROUP_SIZE;
use crate::error::{Error, Result};
use crate::reference::local_global::entry_spring;
use crate::reference::model::CpuModel;

/// Particles per block (the kernels' workgroup size).
const C: usize = WORKGROUP_SIZE as usize;
/// Slots per packet (a `vec4<u32>`).
const P: usize = 4;

/// The plan of a model's table: its block offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LgRows {
    /// Packet offset of each block's planes (nb + 1; the last is the table's length in packets).
    pub offsets: Vec<u32>,
    /// Every block G packets a particle (G ≤ [`UNIFORM_MAX_PACKETS`]): `Some(G)`.
    pub uniform: Option<u32>,
}

/// The most packets a particle of a uniform table (16 slots): the kernels unroll their loop over them.
pub const UNIFORM_MAX_PACKETS: u64 = 4;

impl LgRows {
    /// The blocks and widths of `m`'s table; an error when it would pass 2³² packets.
    pub fn plan(m: &CpuModel) -> Result<Self> {
        let nb = m.n.div_ceil(C);
        let deg = |i: usize| (m.incidence.offsets[i + 1] - m.incidence.offsets[i]) as u64;
        let packets: Vec<u64> = (0..nb).map(|b| (b * C..((b + 1) * C).min(m.n)).map(deg).max().unwrap_or(0).div_ceil(P as u64)).collect();
        // one width for every block where that pads the table by at most a quarter and unrolls at most
        // UNIFORM_MAX_PACKETS packets: the kernels then find a row by arithmetic and run a loop of a
        // constant count (LG_PACKETS), all of a row's loads at once
        let widest = packets.iter().copied().max().unwrap_or(0);
        let sum: u64 = packets.iter().sum();
        let uniform = (widest > 0 && widest <= UNIFORM_MAX_PACKETS && 4 * widest * nb as u64 <= 5 * sum).then_some(widest);
        let mut offsets = Vec::with_capacity(nb + 1);
        let mut at = (nb + 1).div_ceil(P) as u64;
        for &g in &packets {
            offsets.push(at);
            at += 3 * uniform.unwrap_or(g) * C as u64;
        }
        offsets.push(at);
        if at > u32::MAX as u64 {
            return Err(Error::Gpu(format!(
                "springsim.lg_rows: the local/global table needs {at} packets, past the 2^32 its indices reach"
            )));
        }
        Ok(LgRows { offsets: offsets.into_iter().map(|o| o as u32).collect(), uniform: uniform.map(|g| g as u32) })
    }

    /// Packets a particle in every block, where the table is uniform (`LG_PACKETS` in the shader; 0:
    /// per block, from the header).
    pub fn uniform_packets(&self) -> u32 {
        self.uniform.unwrap_or(0)
    }

    /// Bytes of the table.
    pub fn bytes(&self) -> u64 {
        *self.offsets.last().unwrap_or(&0) as u64 * 16
    }

    /// Packets of the header.
    fn header(&self) -> usize {
        self.offsets.len().div_ceil(P)
    }

    /// Slots of the table, the padding included.
    pub fn slots(&self) -> u64 {
        (self.bytes() / 16 - self.header() as u64) * P as u64 / 3
    }

    /// Particle i's row, as `lg_row` in the shader computes it: (the packet of its slots 0 to 3, its
    /// block's packets per particle G, the packets between planes G·C).
    pub fn row(&self, i: usize) -> (usize, usize, usize) {
        let b = i / C;
        let o = self.offsets[b] as usize;
        let plane = (self.offsets[b + 1] as usize - o) / 3;
        (o + i % C, plane / C, plane)
    }

    /// Writes the table of `m` (planned by [`LgRows::plan`] for it) into `w`, a block at a time.
    pub fn write(&self, m: &CpuModel, w: &mut UploadWriter) -> Result<()> {
        self.emit(m, |words| w.words(words))
    }

    /// The table of `m` in order as `u32` words, the header then one block at a time, through `out`.
    pub fn emit(&self, m: &CpuModel, mut out: impl FnMut(&[u32]) -> Result<()>) -> Result<()> {
        let mut header = self.offsets.clone();
        header.resize(self.header() * P, 0);
        out(&header)?;
        let mut block = Vec::new();
        for b in 0..self.offsets.len() - 1 {
            // words per plane: G·C packets of P
            let plane = (self.offsets[b + 1] - self.offsets[b]) as usize / 3 * P;
            let packets = plane / (C * P);
            block.clear();
            block.resize(3 * plane, 0u32);
            for l in 0..C {
                let i = b * C + l;
                if i >= m.n {
                    break;
                }
                let list = &m.incidence.entries[m.incidence.offsets[i] as usize..m.incidence.offsets[i + 1] as usize];
                for s in 0..packets * P {
                    let at = ((s / P) * C + l) * P + s % P;
                    let (j, k, rest) = match list.get(s) {
                        Some(&e) => {
                            let (spring, sign) = entry_spring(e);
                            let j = if sign > 0.0 { m.end_b[spring] } else { m.end_a[spring] };
                            (j, m.k[spring] as f32, (sign * m.rest[spring]) as f32)
                        }
                        None => (i as u32, 0.0, 0.0),
                    };
                    block[at] = j;
                    block[plane + at] = k.to_bits();
                    block[2 * plane + at] = rest.to_bits();
                }
            }
            out(&block)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::curtain;

    /// Every particle's row, read as the shader reads it, is its CSR incidence list in order (j, k, ±rest)
    /// and then padding (i, 0, 0); the blocks are as wide as their longest list.
    #[test]
    fn rows_are_the_incidence_lists() {
        let model = curtain(13, None).unwrap();
        let m = CpuModel::new(&model).unwrap();
        let rows = LgRows::plan(&m).unwrap();
        assert_eq!(rows.uniform, Some(3), "a curtain's rows: 12 slots, uniform");
        let padded = check(&m, &rows);
        // the curtain's edges are shorter lists than its interior: some padding, not most of it
        assert!(padded > 0 && padded < rows.slots() / 4, "{padded} padding slots of {}", rows.slots());
    }

    /// Checks every row of `rows` against `m`'s lists; returns the padding slots.
    fn check(m: &CpuModel, rows: &LgRows) -> u64 {
        let mut t = Vec::new();
        rows.emit(m, |w| {
            t.extend_from_slice(w);
            Ok(())
        })
        .unwrap();
        assert_eq!(t.len() as u64 * 4, rows.bytes());
        assert!(rows.slots() >= m.incidence.entries.len() as u64);
        let mut padded = 0u64;
        for i in 0..m.n {
            let (o, packets, plane) = rows.row(i);
            let list = m.incidence.of(i);
            let widest = (i / C * C..((i / C + 1) * C).min(m.n)).map(|p| m.incidence.of(p).len()).max().unwrap();
            assert_eq!(packets, rows.uniform.map_or(widest.div_ceil(P), |g| g as usize), "particle {i}: the block's packets");
            for s in 0..packets * P {
                // word c of packet e, as the shader's vec4 loads see it
                let e = (o + (s / P) * C) * P + s % P;
                let (j, k, rest) = (t[e], f32::from_bits(t[e + plane * P]), f32::from_bits(t[e + 2 * plane * P]));
                match list.get(s) {
                    Some(&entry) => {
                        let (spring, sign) = entry_spring(entry);
                        let other = if sign > 0.0 { m.end_b[spring] } else { m.end_a[spring] };
                        assert_eq!((j, k, rest), (other, m.k[spring] as f32, (sign * m.rest[spring]) as f32), "particle {i} slot {s}");
                    }
                    None => {
                        assert_eq!((j, k, rest), (i as u32, 0.0, 0.0), "particle {i} padding slot {s}");
                        padded += 1;
                    }
                }
            }
        }
        // a uniform table: each row where the shader's arithmetic puts it (no header read)
        if let Some(g) = rows.uniform {
            let (g, header) = (g as usize, (m.n.div_ceil(C) + 1).div_ceil(P));
            for i in 0..m.n {
                assert_eq!(rows.row(i), (header + (i / C) * 3 * g * C + i % C, g, g * C), "particle {i}: the uniform row");
            }
        }
        padded
    }

    /// A hub (a particle with 40 springs, 10 packets) makes the table per block: the hub's block is
    /// 10 packets wide, the others 3, and every row still reads back as its list.
    #[test]
    fn a_hub_makes_the_widths_per_block() {
        let mut model = curtain(21, None).unwrap();
        let n = model.n_particles() as u32;
        for j in 0..40 {
            model.springs.push(crate::model::Spring { a: 100, b: (j * 4 + 1) % n, rest: 0.5, k: 10.0, kd: 0.0 });
        }
        let m = CpuModel::new(&model).unwrap();
        let rows = LgRows::plan(&m).unwrap();
        assert_eq!(rows.uniform, None);
        assert_eq!(rows.uniform_packets(), 0);
        assert_eq!(rows.row(100).1, m.incidence.of(100).len().div_ceil(P));
        assert_eq!(rows.row(300).1, 3);
        check(&m, &rows);
    }
}
