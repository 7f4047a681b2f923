//! Local/global's global matrix as a sliced ELL table (SELL-C with C = the workgroup size): the rows that
//! `local_global_local_residual`, `local_global_apply` (the PCG's operator) and `local_global_chebyshev` gather over in
//! `shaders/local_global.wgsl`, in place of the CSR incidence lists the force kernels walk.
//!
//! Why: a thread that walks its own CSR list reads records 16 B × its degree apart from its neighbour
//! lane's, so each load of a warp touches as many cache lines as it has lanes; in a sliced ELL table slot
//! s of the 64 particles of a workgroup is 64 consecutive words, one or two cache lines per load. The
//! Chebyshev and PCG iterations of the global step are that gather and little else: on an NVIDIA H100
//! the table, with the local step fused into the residual, took the 1024² cloth's Chebyshev frame from
//! 92 to 38 ms (docs/PERFORMANCE.md has the current figures).
//!
//! Layout (`vec4<u32>`s, "packets" of four slots, so that a thread reads four of its slots in one
//! 16-byte load and can issue their four gathers at once): the `u32` word offsets (in packets) of the
//! nb blocks of [`WORKGROUP_SIZE`] particles and the table's end, padded to whole packets; the stencil
//! (below), if any; then per block of G packets a particle (its longest incidence list in slots, rounded
//! up to four) three planes of G·C packets: the other end j, the stiffness k (f32 bits) and the signed
//! rest length (f32 bits: +rest where the particle is the spring's a, −rest where it is b: the sign of
//! Liu's J and of the local step's guard direction), each packet-major (packet g of lane l at g·C + l;
//! its components are slots 4g … 4g + 3). A particle's slots follow its CSR incidence list in order (so
//! the kernels sum in the order of the f64 twins); the padding slots are (i, 0, 0), which add nothing. The
//! table depends on the springs alone, not on h or the pinned set.
//!
//! The stencil: on a lattice (a cloth grid, a rope, hair, in the builders' order) most particles have the
//! same row up to a shift, (j − i, k, ±rest) slot for slot, bit for bit in f32. That row is stored once,
//! as a block whose C rows are all it with j − i in its first plane, and a block whose particles all have
//! it has no rows of its own: its offset is the stencil's. Its threads read the stencil (the same few
//! kilobytes for every such block: cached) and add i to its j. The table of a 1024² cloth then holds its
//! edge blocks alone (an eighth of them), and a sweep of the global step over the others reads no row
//! from memory. The row is found by a majority vote (Boyer–Moore: two passes, no memory a row) and kept
//! where a quarter of the blocks or more are made of it and the table is uniform (every block G packets
//! wide, the stencil too): a thread then tells a stencil block by the one header word it reads.

use crate::error::{Error, Result};
use crate::gpu::base::alloc::UploadWriter;
use crate::gpu::base::layout::WORKGROUP_SIZE;
use crate::reference::local_global::entry_spring;
use crate::reference::model::CpuModel;

/// Particles per block (the kernels' workgroup size).
const C: usize = WORKGROUP_SIZE as usize;
/// Slots per packet (a `vec4<u32>`).
const P: usize = 4;

/// The most packets a particle of a uniform table (16 slots): the kernels unroll their loop over them.
pub const UNIFORM_MAX_PACKETS: u64 = 4;

/// The plan of a model's table: its block offsets and its stencil.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalGlobalRows {
    /// Packet offset of each block's planes (the stencil's for the blocks that read it), then the
    /// table's length in packets (nb + 1 words).
    pub offsets: Vec<u32>,
    /// Every block G packets a particle (G ≤ [`UNIFORM_MAX_PACKETS`]), the stencil too: `Some(G)`.
    pub uniform: Option<u32>,
    /// The row most particles share up to a shift, where a quarter of the blocks or more read it.
    pub stencil: Option<Stencil>,
}

/// The row that a lattice's particles share up to a shift (module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stencil {
    /// A particle with that row.
    pub particle: usize,
    /// Its slots (the row's length).
    pub slots: usize,
    /// The blocks that read it.
    pub blocks: usize,
}

/// What the kernels and the cost model need of a table: its slots and widths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableShape {
    /// Slots a sweep reads, the padding included ([`LocalGlobalRows::slots`]).
    pub slots: u64,
    /// Slots the blocks' own rows hold ([`LocalGlobalRows::table_slots`]).
    pub table_slots: u64,
    /// `LOCAL_GLOBAL_PACKETS` ([`LocalGlobalRows::uniform_packets`]).
    pub packets: u32,
    /// `LOCAL_GLOBAL_STENCIL`: whether blocks read a stencil.
    pub stencil: bool,
}

/// A particle's row as the kernels read it: packet g of plane p at `first + g·C + p·plane`, its j the
/// packet's word plus `base` (wrapping: the stencil's words are j − i).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The packet of slots 0 to 3.
    pub first: usize,
    /// Packets.
    pub packets: usize,
    /// Packets between planes.
    pub plane: usize,
    /// Added to the j words (i in the stencil, 0 in a block).
    pub base: u32,
}

/// The words of incidence entry `e` as a block stores them: (j, k, ±rest).
fn slot(m: &CpuModel, e: u32) -> (u32, u32, u32) {
    let (spring, sign) = entry_spring(e);
    let j = if sign > 0.0 { m.end_b[spring] } else { m.end_a[spring] };
    (j, (m.k[spring] as f32).to_bits(), ((sign * m.rest[spring]) as f32).to_bits())
}

/// Whether particles `i` and `c` have the same row up to the shift c − i, bit for bit.
fn same_row(m: &CpuModel, i: usize, c: usize) -> bool {
    let (a, b) = (m.incidence.of(i), m.incidence.of(c));
    a.len() == b.len()
        && a.iter().zip(b).all(|(&ea, &eb)| {
            let ((ja, ka, ra), (jb, kb, rb)) = (slot(m, ea), slot(m, eb));
            ka == kb && ra == rb && ja as i64 - i as i64 == jb as i64 - c as i64
        })
}

/// The stencil of `m` and the blocks that read it, if a quarter of the blocks or more would.
fn find_stencil(m: &CpuModel, nb: usize) -> Option<(Stencil, Vec<bool>)> {
    // Boyer–Moore's majority vote over the rows (the particles with springs): the row held by more than
    // half of them, if one is, is the candidate it ends with
    let (mut candidate, mut count) = (usize::MAX, 0usize);
    for i in (0..m.n).filter(|&i| !m.incidence.of(i).is_empty()) {
        if count == 0 {
            (candidate, count) = (i, 1);
        } else if same_row(m, i, candidate) {
            count += 1;
        } else {
            count -= 1;
        }
    }
    let slots = m.incidence.of(*(candidate < m.n).then_some(&candidate)?).len();
    let reads: Vec<bool> = (0..nb).map(|b| (b * C..((b + 1) * C).min(m.n)).all(|i| same_row(m, i, candidate))).collect();
    let blocks = reads.iter().filter(|&&r| r).count();
    (blocks > 0 && 4 * blocks >= nb).then_some((Stencil { particle: candidate, slots, blocks }, reads))
}

/// One width G for every block of `widths` (`None`: the block reads the stencil of `least` packets)
/// where that pads the blocks by at most a quarter and unrolls at most [`UNIFORM_MAX_PACKETS`] packets:
/// the kernels then find a row from one header word or by arithmetic and run a loop of a constant count
/// (`LOCAL_GLOBAL_PACKETS`), all of a row's loads at once.
fn uniform_width(widths: &[Option<u64>], least: u64) -> Option<u64> {
    let own = widths.iter().flatten();
    let widest = own.clone().copied().max().unwrap_or(0).max(least);
    let (sum, count) = (own.clone().sum::<u64>(), own.count() as u64);
    (widest > 0 && widest <= UNIFORM_MAX_PACKETS && 4 * widest * count <= 5 * sum).then_some(widest)
}

impl LocalGlobalRows {
    /// The blocks, widths and stencil of `m`'s table; an error when it would pass 2³² packets.
    pub fn plan(m: &CpuModel) -> Result<Self> {
        let nb = m.n.div_ceil(C);
        let width =
            |b: usize| (b * C..((b + 1) * C).min(m.n)).map(|i| m.incidence.of(i).len() as u64).max().unwrap_or(0).div_ceil(P as u64);
        // the stencil where the table is uniform with it (else the blocks' own rows)
        let (stencil, reads, uniform) = match find_stencil(m, nb) {
            Some((s, reads)) => {
                let widths: Vec<Option<u64>> = (0..nb).map(|b| (!reads[b]).then(|| width(b))).collect();
                match uniform_width(&widths, s.slots.div_ceil(P) as u64) {
                    Some(g) => (Some(s), reads, Some(g)),
                    None => (None, vec![false; nb], None),
                }
            }
            None => (None, vec![false; nb], None),
        };
        let uniform = match stencil {
            Some(_) => uniform,
            None => uniform_width(&(0..nb).map(|b| Some(width(b))).collect::<Vec<_>>(), 0),
        };
        let header = (nb + 1).div_ceil(P) as u64;
        let mut offsets = Vec::with_capacity(nb + 1);
        let mut at = header + stencil.as_ref().map_or(0, |_| 3 * uniform.unwrap_or(0) * C as u64);
        for (b, &read) in reads.iter().enumerate() {
            if read {
                offsets.push(header);
            } else {
                offsets.push(at);
                at += 3 * uniform.unwrap_or_else(|| width(b)) * C as u64;
            }
        }
        offsets.push(at);
        if at > u32::MAX as u64 {
            return Err(Error::IndexOverflow { what: "springsim.local_global_rows: the local/global table", count: at });
        }
        Ok(LocalGlobalRows { offsets: offsets.into_iter().map(|o| o as u32).collect(), uniform: uniform.map(|g| g as u32), stencil })
    }

    /// Packets a particle in every block, where the table is uniform (`LOCAL_GLOBAL_PACKETS` in the shader; 0: per
    /// block, from the header).
    pub fn uniform_packets(&self) -> u32 {
        self.uniform.unwrap_or(0)
    }

    /// Its [`TableShape`].
    pub fn shape(&self) -> TableShape {
        TableShape {
            slots: self.slots(),
            table_slots: self.table_slots(),
            packets: self.uniform_packets(),
            stencil: self.stencil.is_some(),
        }
    }

    /// Bytes of the table.
    pub fn bytes(&self) -> u64 {
        *self.offsets.last().unwrap_or(&0) as u64 * 16
    }

    /// Packets of the header.
    fn header(&self) -> usize {
        self.offsets.len().div_ceil(P)
    }

    /// Packets of the stencil (a block of uniform width; 0: none).
    fn stencil_len(&self) -> usize {
        self.stencil.as_ref().map_or(0, |_| 3 * self.uniform_packets() as usize * C)
    }

    /// Slots of the blocks' own rows, the padding included: those the table stores beside the stencil.
    pub fn table_slots(&self) -> u64 {
        let body = self.offsets.last().map_or(0, |&o| o as u64).saturating_sub((self.header() + self.stencil_len()) as u64);
        body * P as u64 / 3
    }

    /// Slots that a sweep over every block reads, the padding included: the blocks' own and the
    /// stencil's for each thread of the blocks that read it.
    pub fn slots(&self) -> u64 {
        self.table_slots() + self.stencil.as_ref().map_or(0, |s| (s.blocks * C * self.uniform_packets() as usize * P) as u64)
    }

    /// Particle i's row, as `local_global_row` in the shader finds it.
    pub fn row(&self, i: usize) -> Row {
        let b = i / C;
        let o = self.offsets[b] as usize;
        if let Some(g) = self.uniform {
            let g = g as usize;
            let base = if self.stencil.is_some() && o == self.header() { i as u32 } else { 0 };
            return Row { first: o + i % C, packets: g, plane: g * C, base };
        }
        let plane = (self.offsets[b + 1] as usize - o) / 3;
        Row { first: o + i % C, packets: plane / C, plane, base: 0 }
    }

    /// Writes the table of `m` (planned by [`LocalGlobalRows::plan`] for it) into `w`, a block at a time.
    pub fn write(&self, m: &CpuModel, w: &mut UploadWriter) -> Result<()> {
        self.emit(m, |words| w.words(words))
    }

    /// The table of `m` in order as `u32` words, the header, the stencil, then one block at a time,
    /// through `out`.
    pub fn emit(&self, m: &CpuModel, mut out: impl FnMut(&[u32]) -> Result<()>) -> Result<()> {
        let mut header = self.offsets.clone();
        header.resize(self.header() * P, 0);
        out(&header)?;
        let mut block = Vec::new();
        if let Some(s) = &self.stencil {
            // a block whose every lane's row is the stencil, j − i in its first plane; the padding slots
            // (0, 0, 0) are j = i, k = 0
            let list = m.incidence.of(s.particle);
            fill(&mut block, self.uniform_packets() as usize, |_, at| {
                Some(list.get(at).map_or((0, 0, 0), |&e| {
                    let (j, k, rest) = slot(m, e);
                    (j.wrapping_sub(s.particle as u32), k, rest)
                }))
            });
            out(&block)?;
        }
        for b in 0..self.offsets.len() - 1 {
            let packets = match self.uniform {
                Some(_) if self.stencil.is_some() && self.offsets[b] as usize == self.header() => continue,
                Some(g) => g as usize,
                None => (self.offsets[b + 1] - self.offsets[b]) as usize / (3 * C),
            };
            fill(&mut block, packets, |l, at| {
                let i = b * C + l;
                (i < m.n).then(|| m.incidence.of(i).get(at).map_or((i as u32, 0, 0), |&e| slot(m, e)))
            });
            out(&block)?;
        }
        Ok(())
    }
}

/// Fills `block` with three planes of `packets`·C packets, lane l's slot s from `row(l, s)` (`None`: a
/// lane past the particles, left 0).
fn fill(block: &mut Vec<u32>, packets: usize, row: impl Fn(usize, usize) -> Option<(u32, u32, u32)>) {
    let plane = packets * C * P;
    block.clear();
    block.resize(3 * plane, 0);
    for l in 0..C {
        for s in 0..packets * P {
            if let Some((j, k, rest)) = row(l, s) {
                let at = ((s / P) * C + l) * P + s % P;
                block[at] = j;
                block[plane + at] = k;
                block[2 * plane + at] = rest;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{cloth, curtain, rope};

    /// Every particle's row, read as the shader reads it, is its CSR incidence list in order (j, k, ±rest)
    /// and then padding (i, 0, 0); the blocks are as wide as their longest list.
    #[test]
    fn rows_are_the_incidence_lists() {
        let model = curtain(13, None).unwrap();
        let m = CpuModel::new(&model).unwrap();
        let rows = LocalGlobalRows::plan(&m).unwrap();
        assert_eq!(rows.uniform, Some(3), "a curtain's rows: 12 slots, uniform");
        assert_eq!(rows.stencil, None, "13 columns: no block of 64 inside the curtain's interior");
        let padded = check(&m, &rows);
        // the curtain's edges are shorter lists than its interior: some padding, not most of it
        assert!(padded > 0 && padded < rows.slots() / 4, "{padded} padding slots of {}", rows.slots());
    }

    /// A cloth 256 wide: the interior's row (12 slots: j − i = ±1, ±256, ±2, ±512 and the shears) is the
    /// stencil, read by every block that is not on an edge: two of a row's four, and none in the first
    /// two and the last two rows of particles; the edge blocks keep rows of their own, as wide.
    #[test]
    fn a_cloths_interior_reads_the_stencil() {
        let m = CpuModel::new(&cloth(256, None).unwrap()).unwrap();
        let rows = LocalGlobalRows::plan(&m).unwrap();
        let s = rows.stencil.clone().expect("a stencil");
        assert_eq!((s.slots, rows.uniform), (12, Some(3)));
        assert_eq!(s.blocks, 2 * (256 - 4), "the blocks of columns 64-191, rows 2-253");
        // the other blocks, 12 slots a particle, and the stencil's block
        assert_eq!(rows.table_slots(), ((m.n / C - s.blocks) * C * 12) as u64);
        assert_eq!(rows.bytes() as usize, 16 * (rows.header() + (m.n / C - s.blocks + 1) * 3 * 3 * C));
        assert_eq!(rows.slots(), (m.n * 12) as u64);
        check(&m, &rows);
    }

    /// A rope: all but the blocks at its two ends read the stencil.
    #[test]
    fn a_rope_reads_the_stencil_but_at_its_ends() {
        let m = CpuModel::new(&rope(1000, None).unwrap()).unwrap();
        let rows = LocalGlobalRows::plan(&m).unwrap();
        let nb = 1000usize.div_ceil(C);
        assert_eq!((rows.stencil.as_ref().map(|s| s.blocks), rows.uniform), (Some(nb - 2), Some(1)));
        check(&m, &rows);
    }

    /// Checks every row of `rows` against `m`'s lists; returns the padding slots.
    fn check(m: &CpuModel, rows: &LocalGlobalRows) -> u64 {
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
            let row = rows.row(i);
            let list = m.incidence.of(i);
            let block = i / C * C..((i / C + 1) * C).min(m.n);
            match (&rows.stencil, rows.uniform) {
                (Some(s), Some(g)) if rows.offsets[i / C] as usize == rows.header() => {
                    assert_eq!(
                        row,
                        Row { first: rows.header() + i % C, packets: g as usize, plane: g as usize * C, base: i as u32 },
                        "particle {i}: the stencil's row"
                    );
                    assert!(block.clone().all(|p| same_row(m, p, s.particle)), "particle {i}: a block of the stencil's rows");
                }
                (_, uniform) => {
                    let widest = block.map(|p| m.incidence.of(p).len()).max().unwrap();
                    assert_eq!(row.packets, uniform.map_or(widest.div_ceil(P), |g| g as usize), "particle {i}: the block's packets");
                    assert_eq!(row.base, 0);
                }
            }
            for s in 0..row.packets * P {
                // word c of packet e, as the shader's vec4 loads see it
                let e = (row.first + (s / P) * C) * P + s % P;
                let j = t[e].wrapping_add(row.base);
                let (k, rest) = (f32::from_bits(t[e + row.plane * P]), f32::from_bits(t[e + 2 * row.plane * P]));
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
        // a uniform table without a stencil: each row where the shader's arithmetic puts it (no header read)
        if let (Some(g), None) = (rows.uniform, &rows.stencil) {
            let (g, header) = (g as usize, (m.n.div_ceil(C) + 1).div_ceil(P));
            for i in 0..m.n {
                assert_eq!(
                    rows.row(i),
                    Row { first: header + (i / C) * 3 * g * C + i % C, packets: g, plane: g * C, base: 0 },
                    "particle {i}: the uniform row"
                );
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
        let rows = LocalGlobalRows::plan(&m).unwrap();
        assert_eq!(rows.uniform, None);
        assert_eq!(rows.uniform_packets(), 0);
        assert_eq!(rows.row(100).packets, m.incidence.of(100).len().div_ceil(P));
        assert_eq!(rows.row(300).packets, 3);
        check(&m, &rows);
    }

    /// A rope with a hub: the stencil would be read by all blocks but the ends' and the hub's, but the
    /// hub's block makes the table non-uniform, so there is none (a thread could not tell a stencil
    /// block from the one header word it reads).
    #[test]
    fn a_hub_keeps_the_stencil_out() {
        let mut model = rope(1000, None).unwrap();
        for j in 0..40 {
            model.springs.push(crate::model::Spring { a: 500, b: 450 + j, rest: 0.5, k: 10.0, kd: 0.0 });
        }
        let m = CpuModel::new(&model).unwrap();
        assert_eq!(find_stencil(&m, 16).map(|(s, _)| s.blocks), Some(13), "the stencil's blocks");
        let rows = LocalGlobalRows::plan(&m).unwrap();
        assert_eq!((rows.uniform, &rows.stencil), (None, &None));
        check(&m, &rows);
    }
}
