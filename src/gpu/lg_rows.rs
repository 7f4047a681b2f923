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
//! 16-byte load and can issue their four gathers at once): a header of `u32` words (the packet offsets of
//! the nb + 1 blocks of [`WORKGROUP_SIZE`] particles, then, in the compact layout, the spring classes),
//! padded to whole packets, then per block of G packets a particle (its longest incidence list in slots,
//! rounded up to four) planes of G·C packets, packet-major (packet g of lane l at g·C + l; its components
//! are slots 4g … 4g + 3). A particle's slots follow its CSR incidence list in order (so the kernels sum
//! in the order of the f64 twins); padding slots add nothing.
//!
//! - **Compact** (where every spring's other end is within 32767 of the particle and the springs have at
//!   most 32767 distinct (k, rest) pairs, as on the builders' cloths, ropes and lattices): one plane of
//!   words, (j − i + 32768) in bits 0–15, the spring's class in bits 16–30 and in bit 31 whether the
//!   particle is the spring's b (its rest length then negative: the sign of Liu's J and of the local
//!   step's guard direction). The classes (k, rest) as f32 bits follow the block offsets in the header;
//!   class 0 is (0, 0), the padding's (with j = i). 4 bytes a slot.
//! - **Wide** (any other model): three planes, the other end j, k (f32 bits) and the signed rest length
//!   (f32 bits); padding (i, 0, 0). 12 bytes a slot.
//!
//! The table depends on the springs alone, not on h or the pinned set.

use std::collections::HashMap;

use super::alloc::UploadWriter;
use super::layout::WORKGROUP_SIZE;
use crate::error::{Error, Result};
use crate::reference::local_global::entry_spring;
use crate::reference::model::CpuModel;

/// Particles per block (the kernels' workgroup size).
const C: usize = WORKGROUP_SIZE as usize;
/// Slots per packet (a `vec4<u32>`).
const P: usize = 4;
/// The compact layout's offset of j − i.
const DELTA_BIAS: i64 = 32768;
/// The compact layout's most classes (class 0, the padding's, included).
const MAX_CLASSES: usize = 1 << 15;

/// The plan of a model's table: its block offsets and, in the compact layout, its spring classes.
#[derive(Clone, Debug, PartialEq)]
pub struct LgRows {
    /// Packet offset of each block's planes (nb + 1; the last is the table's length in packets).
    pub offsets: Vec<u32>,
    /// The compact layout's classes (k, rest), class 0 = (0, 0); `None`: the wide layout.
    pub classes: Option<Vec<[f32; 2]>>,
    /// Each spring's class (compact layout only).
    spring_class: Vec<u16>,
}

impl LgRows {
    /// The blocks, widths and layout of `m`'s table (compact where it fits); an error when it would pass
    /// 2³² packets.
    pub fn plan(m: &CpuModel) -> Result<Self> {
        Self::plan_with(m, true)
    }

    /// [`LgRows::plan`], with the compact layout only when `compact` allows it.
    pub fn plan_with(m: &CpuModel, compact: bool) -> Result<Self> {
        let (classes, spring_class) = match Self::classes(m).filter(|_| compact) {
            Some((c, s)) => (Some(c), s),
            None => (None, Vec::new()),
        };
        let planes = if classes.is_some() { 1 } else { 3 };
        let nb = m.n.div_ceil(C);
        let deg = |i: usize| (m.incidence.offsets[i + 1] - m.incidence.offsets[i]) as u64;
        let header = nb + 1 + classes.as_ref().map_or(0, |c| 2 * c.len());
        let mut offsets = Vec::with_capacity(nb + 1);
        let mut at = header.div_ceil(P) as u64;
        for b in 0..nb {
            offsets.push(at);
            let width = (b * C..((b + 1) * C).min(m.n)).map(deg).max().unwrap_or(0);
            at += planes * width.div_ceil(P as u64) * C as u64;
        }
        offsets.push(at);
        if at > u32::MAX as u64 {
            return Err(Error::Gpu(format!(
                "springsim.lg_rows: the local/global table needs {at} packets, past the 2^32 its indices reach"
            )));
        }
        Ok(LgRows { offsets: offsets.into_iter().map(|o| o as u32).collect(), classes, spring_class })
    }

    /// The compact layout's classes and each spring's, when `m` fits it.
    fn classes(m: &CpuModel) -> Option<(Vec<[f32; 2]>, Vec<u16>)> {
        let near = (0..m.end_a.len()).all(|s| (m.end_a[s] as i64 - m.end_b[s] as i64).abs() < DELTA_BIAS);
        if !near {
            return None;
        }
        let mut classes = vec![[0.0f32; 2]];
        let mut index: HashMap<(u32, u32), u16> = HashMap::new();
        let mut spring_class = Vec::with_capacity(m.end_a.len());
        for s in 0..m.end_a.len() {
            let key = [m.k[s] as f32, m.rest[s] as f32];
            let c = *index.entry((key[0].to_bits(), key[1].to_bits())).or_insert_with(|| {
                classes.push(key);
                (classes.len() - 1).min(u16::MAX as usize) as u16
            });
            if classes.len() > MAX_CLASSES {
                return None;
            }
            spring_class.push(c);
        }
        Some((classes, spring_class))
    }

    /// Whether the table is in the compact layout (`LG_COMPACT` in the shader).
    pub fn compact(&self) -> bool {
        self.classes.is_some()
    }

    /// Bytes of the table.
    pub fn bytes(&self) -> u64 {
        *self.offsets.last().unwrap_or(&0) as u64 * 16
    }

    /// Words of the header.
    fn header_words(&self) -> usize {
        self.offsets.len() + self.classes.as_ref().map_or(0, |c| 2 * c.len())
    }

    /// Planes of a block.
    fn planes(&self) -> usize {
        if self.compact() {
            1
        } else {
            3
        }
    }

    /// Slots of the table, the padding included.
    pub fn slots(&self) -> u64 {
        (self.bytes() / 16 - self.header_words().div_ceil(P) as u64) * P as u64 / self.planes() as u64
    }

    /// Bytes the table holds per slot: 4 compact, 12 wide (j, k, rest).
    pub fn slot_bytes(&self) -> u64 {
        4 * self.planes() as u64
    }

    /// Particle i's row, as `lg_row` in the shader computes it: (the packet of its slots 0 to 3, its
    /// block's packets per particle G, the packets between planes G·C).
    pub fn row(&self, i: usize) -> (usize, usize, usize) {
        let b = i / C;
        let o = self.offsets[b] as usize;
        let plane = (self.offsets[b + 1] as usize - o) / self.planes();
        (o + i % C, plane / C, plane)
    }

    /// Writes the table of `m` (planned by [`LgRows::plan`] for it) into `w`, a block at a time.
    pub fn write(&self, m: &CpuModel, w: &mut UploadWriter) -> Result<()> {
        self.emit(m, |words| w.words(words))
    }

    /// The table of `m` in order as `u32` words, the header then one block at a time, through `out`.
    pub fn emit(&self, m: &CpuModel, mut out: impl FnMut(&[u32]) -> Result<()>) -> Result<()> {
        let mut header = self.offsets.clone();
        for c in self.classes.iter().flatten() {
            header.extend([c[0].to_bits(), c[1].to_bits()]);
        }
        header.resize(self.header_words().div_ceil(P) * P, 0);
        out(&header)?;
        let planes = self.planes();
        let mut block = Vec::new();
        for b in 0..self.offsets.len() - 1 {
            // words per plane: G·C packets of P
            let plane = (self.offsets[b + 1] - self.offsets[b]) as usize / planes * P;
            let packets = plane / (C * P);
            block.clear();
            block.resize(planes * plane, 0u32);
            for l in 0..C {
                let i = b * C + l;
                if i >= m.n {
                    break;
                }
                let list = &m.incidence.entries[m.incidence.offsets[i] as usize..m.incidence.offsets[i + 1] as usize];
                for s in 0..packets * P {
                    let at = ((s / P) * C + l) * P + s % P;
                    match (list.get(s), self.compact()) {
                        (Some(&e), true) => {
                            let (spring, sign) = entry_spring(e);
                            let j = if sign > 0.0 { m.end_b[spring] } else { m.end_a[spring] };
                            let delta = (j as i64 - i as i64 + DELTA_BIAS) as u32;
                            block[at] = delta | (self.spring_class[spring] as u32) << 16 | ((sign < 0.0) as u32) << 31;
                        }
                        (None, true) => block[at] = DELTA_BIAS as u32,
                        (Some(&e), false) => {
                            let (spring, sign) = entry_spring(e);
                            let j = if sign > 0.0 { m.end_b[spring] } else { m.end_a[spring] };
                            block[at] = j;
                            block[plane + at] = (m.k[spring] as f32).to_bits();
                            block[2 * plane + at] = ((sign * m.rest[spring]) as f32).to_bits();
                        }
                        (None, false) => block[at] = i as u32,
                    }
                }
            }
            out(&block)?;
        }
        Ok(())
    }

    /// Slot `s` of particle `i` in the table `t` (its words, as [`LgRows::emit`] wrote them), decoded as
    /// the shader decodes it: (j, k, signed rest).
    pub fn decode(&self, t: &[u32], i: usize, s: usize) -> (u32, f32, f32) {
        let (o, _, plane) = self.row(i);
        let e = (o + (s / P) * C) * P + s % P;
        if self.compact() {
            let w = t[e];
            let j = (i as i64 + (w & 0xffff) as i64 - DELTA_BIAS) as u32;
            let class = ((w >> 16) & 0x7fff) as usize;
            let at = self.offsets.len() + 2 * class;
            let (k, rest) = (f32::from_bits(t[at]), f32::from_bits(t[at + 1]));
            (j, k, if w >> 31 != 0 { -rest } else { rest })
        } else {
            (t[e], f32::from_bits(t[e + plane * P]), f32::from_bits(t[e + 2 * plane * P]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::curtain;

    /// Every particle's row, decoded as the shader decodes it, is its CSR incidence list in order
    /// (j, k, ±rest) and then padding (i, 0, 0); the blocks are as wide as their longest list.
    fn check(m: &CpuModel, rows: &LgRows) {
        let mut t = Vec::new();
        rows.emit(m, |w| {
            t.extend_from_slice(w);
            Ok(())
        })
        .unwrap();
        assert_eq!(t.len() as u64 * 4, rows.bytes());
        assert!(rows.slots() >= m.incidence.entries.len() as u64);
        let mut padded = 0;
        for i in 0..m.n {
            let (_, packets, _) = rows.row(i);
            let list = m.incidence.of(i);
            let widest = (i / C * C..((i / C + 1) * C).min(m.n)).map(|p| m.incidence.of(p).len()).max().unwrap();
            assert_eq!(packets, widest.div_ceil(P), "particle {i}: the block's packets");
            for s in 0..packets * P {
                let got = rows.decode(&t, i, s);
                match list.get(s) {
                    Some(&entry) => {
                        let (spring, sign) = entry_spring(entry);
                        let other = if sign > 0.0 { m.end_b[spring] } else { m.end_a[spring] };
                        assert_eq!(got, (other, m.k[spring] as f32, (sign * m.rest[spring]) as f32), "particle {i} slot {s}");
                    }
                    None => {
                        assert_eq!(got, (i as u32, 0.0, 0.0), "particle {i} padding slot {s}");
                        padded += 1;
                    }
                }
            }
        }
        // the curtain's edges are shorter lists than its interior: some padding, not most of it
        assert!(padded > 0 && (padded as u64) < rows.slots() / 4, "{padded} padding slots of {}", rows.slots());
    }

    #[test]
    fn rows_are_the_incidence_lists_in_both_layouts() {
        let model = curtain(13, None).unwrap();
        let m = CpuModel::new(&model).unwrap();
        let rows = LgRows::plan(&m).unwrap();
        assert!(rows.compact(), "a curtain fits the compact layout");
        assert_eq!(rows.slot_bytes(), 4);
        check(&m, &rows);
        // the wide layout of the same model
        let wide = LgRows::plan_with(&m, false).unwrap();
        assert!(!wide.compact() && wide.slot_bytes() == 12);
        check(&m, &wide);
        // what the compact layout cannot hold: a spring whose ends are 32768 apart, more than 32767 classes
        let mut far = m.clone();
        far.end_b[0] = far.end_a[0] + 32768;
        assert!(LgRows::classes(&far).is_none());
        let mut many = m.clone();
        many.k = (0..MAX_CLASSES).map(|s| 1.0 + s as f64).collect();
        many.rest = vec![0.1; MAX_CLASSES];
        many.end_a = vec![0; MAX_CLASSES];
        many.end_b = vec![1; MAX_CLASSES];
        assert!(LgRows::classes(&many).is_none(), "{} classes and the padding's", MAX_CLASSES);
        for v in [&mut many.k, &mut many.rest] {
            v.pop();
        }
        for v in [&mut many.end_a, &mut many.end_b] {
            v.pop();
        }
        assert_eq!(LgRows::classes(&many).map(|(c, _)| c.len()), Some(MAX_CLASSES));
    }
}
