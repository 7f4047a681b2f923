//! The CPU engine's one specialised kernel: the explicit family's derivative a(x, v), fused and blocked.
//!
//! The plain path ([`super::forces::spring_forces`], then [`super::forces::gather`] per particle) makes
//! two passes over the whole model per evaluation, each a rayon fork-join, and writes every spring's
//! force to memory between them. This kernel cuts the particles into a few equal, contiguous chunks
//! (a multiple of the thread count) and hands each chunk to one task, which
//!
//! 1. evaluates the springs incident to its particles, four at a time, into a buffer of its own that
//!    stays in cache. The chunk lists its springs *runs* first: four springs a₀+l → b₀+l between
//!    consecutive particles (most springs of a grid), whose coordinates are read with contiguous loads.
//!    Where the CPU has AVX, `eval_chunk_avx` does this in AVX intrinsics, four springs per
//!    instruction; elsewhere `eval_chunk` does it in plain loops over `[f64; 4]` lanes, which the
//!    compiler vectorises as it can. This module is the only one of the CPU engine with `unsafe`:
//!    the call into the AVX function (after the CPU was checked for AVX) and its unaligned loads and
//!    stores, each with its `SAFETY` note;
//! 2. sums each particle's springs over its CSR incidence list in list order, exactly as
//!    [`super::forces::gather`] does, and hands the acceleration to the integrator's update at once.
//!
//! A spring whose ends lie in two chunks is evaluated by both. Every lane does the scalar IEEE
//! operations of [`crate::reference::forces::spring_force`] in the same order (no contraction, no
//! reassociation; the vector `sqrt` and division are correctly rounded), so every acceleration is bit
//! for bit the reference's `accel`, whatever the chunks, the threads or the vector width: the tests
//! below and `tests/reference.rs` hold it to that. One fork-join per evaluation instead of two.
//!
//! Why it exists: in one bench run on the 256×256 cloth on a 2-core VM it took a symplectic Euler frame
//! from 1,878 to 1,071 ms and an RK4 frame from 7,060 to 3,687 ms (1.75× and 1.91×) against the plain
//! path it replaces for the explicit methods.
#![deny(unsafe_op_in_unsafe_fn)]

use super::forces::{cursor_accel, external_accel, EPS_LEN};
use super::{CpuModel, V3};
use rayon::prelude::*;

/// Springs evaluated together.
const LANES: usize = 4;

/// Springs per chunk at least: below that, a task is too short to pay for handing it to a thread.
const MIN_CHUNK_SPRINGS: usize = 8192;

/// Chunks per thread at most (several, so that a thread that finishes early steals the rest).
const MAX_CHUNKS_PER_THREAD: usize = 4;

/// One chunk of particles `lo..hi` and the springs incident to them, in the chunk's own order: first
/// the *runs* (four springs a₀+l → b₀+l, l = 0..4, between consecutive particles: most springs of a
/// grid), then the others in groups of four, the last group padded with copies of its last spring.
#[derive(Clone, Debug, Default)]
struct Chunk {
    lo: usize,
    hi: usize,
    /// Per run: its first spring's ends (a₀, b₀).
    runs: Vec<[u32; 2]>,
    /// The springs after the runs, by id.
    rest_ids: Vec<u32>,
    /// Per spring in the chunk's order: stiffness, damping and rest length.
    k: Vec<f64>,
    kd: Vec<f64>,
    rest: Vec<f64>,
    /// Per incidence entry of the chunk's particles (in the CSR order): `2·(chunk-order index) + side`.
    slots: Vec<u32>,
    /// The offset of the chunk's first entry in the CSR lists.
    base: usize,
}

impl Chunk {
    /// The chunk of particles `lo..hi` of `m`; `local` is working memory of one entry per spring.
    fn new(m: &CpuModel, lo: usize, hi: usize, local: &mut [u32]) -> Self {
        let offsets = &m.incidence.offsets;
        let (e0, e1) = (offsets[lo] as usize, offsets[hi] as usize);
        let entries = &m.incidence.entries[e0..e1];
        let ends = |s: u32| (m.end_a[s as usize] as i64, m.end_b[s as usize] as i64);
        let mut springs: Vec<u32> = entries.iter().map(|&e| e >> 1).collect();
        // by (b − a, a): springs of one offset between consecutive particles become adjacent
        springs.sort_unstable_by_key(|&s| {
            let (a, b) = ends(s);
            (b - a, a, s)
        });
        springs.dedup();
        let (mut runs, mut order, mut rest_ids) = (Vec::new(), Vec::with_capacity(springs.len() + LANES), Vec::new());
        let mut j = 0;
        while j < springs.len() {
            let (a0, b0) = ends(springs[j]);
            let run = j + LANES <= springs.len() && (1..LANES).all(|l| ends(springs[j + l]) == (a0 + l as i64, b0 + l as i64));
            if run {
                runs.push([a0 as u32, b0 as u32]);
                order.extend_from_slice(&springs[j..j + LANES]);
                j += LANES;
            } else {
                rest_ids.push(springs[j]);
                j += 1;
            }
        }
        if let Some(&last) = rest_ids.last() {
            while rest_ids.len() % LANES != 0 {
                rest_ids.push(last);
            }
        }
        order.extend_from_slice(&rest_ids);
        // a padded spring's first copy is the one the slots name
        for (j, &s) in order.iter().enumerate().rev() {
            local[s as usize] = j as u32;
        }
        let slots = entries.iter().map(|&e| (local[(e >> 1) as usize] << 1) | (e & 1)).collect();
        let pick = |v: &[f64]| order.iter().map(|&s| v[s as usize]).collect();
        Chunk { lo, hi, runs, rest_ids, k: pick(&m.k), kd: pick(&m.kd), rest: pick(&m.rest), slots, base: e0 }
    }

    /// Springs in the chunk's order, padding included.
    fn len(&self) -> usize {
        self.k.len()
    }
}

/// The chunks of one model for one thread count, built once ([`ForcePlan::new`]).
#[derive(Clone, Debug, Default)]
pub struct ForcePlan {
    chunks: Vec<Chunk>,
    n: usize,
    springs: usize,
    threads: usize,
    /// Whether the CPU has AVX ([`eval_chunk_avx`] is then used; read on x86-64 only).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    avx: bool,
    /// The address of the model's stiffness table, whose values the chunks copy: a plan is used only
    /// with the model it was made for.
    k: usize,
}

/// The per-chunk working memory of [`ForcePlan`] (one force per spring of the chunk).
#[derive(Clone, Debug, Default)]
pub struct FastScratch {
    forces: Vec<Vec<V3>>,
}

impl ForcePlan {
    /// Cuts `m`'s particles into chunks for `threads` threads: one chunk below 2·8192 springs or on
    /// one thread, else one to four per thread, all of equal size.
    pub fn new(m: &CpuModel, threads: usize) -> Self {
        let ns = m.end_a.len();
        let threads = threads.max(1);
        let per_thread = (ns / (MIN_CHUNK_SPRINGS * threads)).clamp(1, MAX_CHUNKS_PER_THREAD);
        let count = if ns < 2 * MIN_CHUNK_SPRINGS || threads == 1 { 1 } else { threads * per_thread };
        Self::with_chunks(m, threads, count)
    }

    /// Cuts `m`'s particles into `count` chunks of equal size (at least one, at most one per particle).
    pub(crate) fn with_chunks(m: &CpuModel, threads: usize, count: usize) -> Self {
        let (n, ns) = (m.n, m.end_a.len());
        let count = count.clamp(1, n.max(1));
        let mut local = vec![0; ns];
        let chunks = (0..count).map(|c| Chunk::new(m, c * n / count, (c + 1) * n / count, &mut local)).collect();
        ForcePlan { chunks, n, springs: ns, threads: threads.max(1), avx: has_avx(), k: m.k.as_ptr() as usize }
    }

    /// Whether this plan was made for `m` and `threads`.
    pub fn fits(&self, m: &CpuModel, threads: usize) -> bool {
        self.n == m.n && self.springs == m.end_a.len() && self.k == m.k.as_ptr() as usize && self.threads == threads.max(1)
    }

    /// `f(i, aᵢ, outs[..][i])` for every particle i, aᵢ = M⁻¹f(x, v) bit for bit as
    /// [`super::forces::gather`] after [`super::forces::spring_forces`] computes it. The chunks run in
    /// parallel on the current rayon pool.
    pub fn for_each_accel<const K: usize>(
        &self,
        scratch: &mut FastScratch,
        m: &CpuModel,
        alpha: f64,
        (x, v): (&[V3], &[V3]),
        outs: [&mut [V3]; K],
        f: impl Fn(usize, V3, [&mut V3; K]) + Sync,
    ) {
        scratch.forces.resize_with(self.chunks.len(), Vec::new);
        let mut parts: Vec<[&mut [V3]; K]> = Vec::with_capacity(self.chunks.len());
        let mut rest = outs.map(|o| &mut o[..self.n]);
        for c in &self.chunks {
            let len = c.hi - c.lo;
            let split = rest.each_mut().map(|r| {
                let (head, tail) = std::mem::take(r).split_at_mut(len);
                *r = tail;
                head
            });
            parts.push(split);
        }
        let task = |((c, sf), outs): ((&Chunk, &mut Vec<V3>), [&mut [V3]; K])| {
            sf.resize(c.len(), V3::zeros());
            self.eval(c, m, alpha, x, v, sf);
            gather_chunk(c, m, sf, x, v, outs, &f);
        };
        if self.chunks.len() == 1 {
            self.chunks.iter().zip(scratch.forces.iter_mut()).zip(parts).for_each(task);
        } else {
            self.chunks.par_iter().zip(scratch.forces.par_iter_mut()).zip(parts).for_each(task);
        }
    }

    /// The chunk's spring forces, with AVX where the CPU has it.
    fn eval(&self, c: &Chunk, m: &CpuModel, alpha: f64, x: &[V3], v: &[V3], sf: &mut [V3]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx {
            // SAFETY: `self.avx` is `has_avx()`, true only where the running CPU has AVX, the one
            // feature that `eval_chunk_avx` is compiled to use.
            unsafe { eval_chunk_avx(c, m, alpha, x, v, sf) };
            return;
        }
        eval_chunk(c, m, alpha, x, v, sf);
    }
}

/// Whether the running CPU has AVX.
fn has_avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`eval_chunk`] in AVX instructions, four springs per instruction: a run's (x_a − x_b) and
/// (v_a − v_b) are taken on the interleaved coordinates of four consecutive particles (three loads
/// each) and then transposed to one vector per coordinate, the forces transposed back for the stores.
/// The arithmetic is [`spring_force_x4`]'s, operation for operation.
///
/// # Safety
/// The CPU must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn eval_chunk_avx(c: &Chunk, m: &CpuModel, alpha: f64, x: &[V3], v: &[V3], sf: &mut [V3]) {
    use avx::*;
    let (xf, vf): (&[f64], &[f64]) = (bytemuck::cast_slice(x), bytemuck::cast_slice(v));
    let out: &mut [f64] = bytemuck::cast_slice_mut(sf);
    let mut j = 0;
    for &[a0, b0] in &c.runs {
        let (a, b) = (3 * a0 as usize, 3 * b0 as usize);
        let d = transpose_in(sub3(load3(&xf[a..a + 12]), load3(&xf[b..b + 12])));
        let u = transpose_in(sub3(load3(&vf[a..a + 12]), load3(&vf[b..b + 12])));
        let f = force(alpha, d, u, [load(&c.k[j..]), load(&c.kd[j..]), load(&c.rest[j..])]);
        store3(&mut out[3 * j..3 * j + 12], transpose_out(f));
        j += LANES;
    }
    for ids in c.rest_ids.chunks_exact(LANES) {
        let mut dl = [[0.0; LANES]; 3];
        let mut ul = [[0.0; LANES]; 3];
        for l in 0..LANES {
            let s = ids[l] as usize;
            let (a, b) = (m.end_a[s] as usize, m.end_b[s] as usize);
            for k in 0..3 {
                dl[k][l] = x[a][k] - x[b][k];
                ul[k][l] = v[a][k] - v[b][k];
            }
        }
        let f = force(alpha, dl.map(|r| load(&r)), ul.map(|r| load(&r)), [load(&c.k[j..]), load(&c.kd[j..]), load(&c.rest[j..])]);
        store3(&mut out[3 * j..3 * j + 12], transpose_out(f));
        j += LANES;
    }
}

/// The AVX pieces of [`eval_chunk_avx`]. Each function is compiled with AVX and called only from
/// there.
#[cfg(target_arch = "x86_64")]
mod avx {
    use super::{EPS_LEN, LANES};
    use std::arch::x86_64::*;

    /// Four f64 from a slice of at least four.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) fn load(s: &[f64]) -> __m256d {
        let s = &s[..LANES];
        // SAFETY: `s` holds four f64 (the slice index above checks it), and `loadu` needs no alignment.
        unsafe { _mm256_loadu_pd(s.as_ptr()) }
    }

    /// Twelve f64: the interleaved coordinates of four particles.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) fn load3(s: &[f64]) -> [__m256d; 3] {
        [load(&s[0..4]), load(&s[4..8]), load(&s[8..12])]
    }

    /// Stores twelve f64.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) fn store3(s: &mut [f64], r: [__m256d; 3]) {
        let s = &mut s[..12];
        for (k, r) in r.into_iter().enumerate() {
            // SAFETY: `s[4k..4k + 4]` is in bounds (`s` holds twelve f64, checked above), and `storeu`
            // needs no alignment.
            unsafe { _mm256_storeu_pd(s[4 * k..].as_mut_ptr(), r) };
        }
    }

    /// Lane-wise a − b, three vectors.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) fn sub3(a: [__m256d; 3], b: [__m256d; 3]) -> [__m256d; 3] {
        [_mm256_sub_pd(a[0], b[0]), _mm256_sub_pd(a[1], b[1]), _mm256_sub_pd(a[2], b[2])]
    }

    /// (x₀y₀z₀x₁, y₁z₁x₂y₂, z₂x₃y₃z₃) → (x₀..x₃, y₀..y₃, z₀..z₃).
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) fn transpose_in([r0, r1, r2]: [__m256d; 3]) -> [__m256d; 3] {
        let t0 = _mm256_permute2f128_pd::<0x30>(r0, r1); // x0 y0 | x2 y2
        let t1 = _mm256_permute2f128_pd::<0x21>(r0, r2); // z0 x1 | z2 x3
        let t2 = _mm256_permute2f128_pd::<0x30>(r1, r2); // y1 z1 | y3 z3
        [_mm256_shuffle_pd::<0b1010>(t0, t1), _mm256_shuffle_pd::<0b0101>(t0, t2), _mm256_shuffle_pd::<0b1010>(t1, t2)]
    }

    /// The inverse of [`transpose_in`].
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) fn transpose_out([x, y, z]: [__m256d; 3]) -> [__m256d; 3] {
        let t0 = _mm256_shuffle_pd::<0b0000>(x, y); // x0 y0 | x2 y2
        let t1 = _mm256_shuffle_pd::<0b1010>(z, x); // z0 x1 | z2 x3
        let t2 = _mm256_shuffle_pd::<0b1111>(y, z); // y1 z1 | y3 z3
        [_mm256_permute2f128_pd::<0x20>(t0, t1), _mm256_permute2f128_pd::<0x30>(t2, t0), _mm256_permute2f128_pd::<0x31>(t1, t2)]
    }

    /// `super::spring_force_x4` in AVX: the same operations in the same order, lane by lane.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) fn force(alpha: f64, d: [__m256d; 3], u: [__m256d; 3], [k, kd, rest]: [__m256d; 3]) -> [__m256d; 3] {
        let len =
            _mm256_sqrt_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(d[0], d[0]), _mm256_mul_pd(d[1], d[1])), _mm256_mul_pd(d[2], d[2])));
        let n = d.map(|dc| _mm256_div_pd(dc, len));
        let un = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(n[0], u[0]), _mm256_mul_pd(n[1], u[1])), _mm256_mul_pd(n[2], u[2]));
        let sum = _mm256_add_pd(_mm256_mul_pd(k, _mm256_sub_pd(len, rest)), _mm256_mul_pd(kd, un));
        let mag = _mm256_xor_pd(sum, _mm256_set1_pd(-0.0));
        let mut f = n.map(|nc| _mm256_mul_pd(nc, mag));
        if alpha != 0.0 {
            let one = _mm256_set1_pd(1.0);
            // max(x, 0) returns 0 where x is NaN, as f64::max does
            let cc = _mm256_max_pd(_mm256_sub_pd(one, _mm256_div_pd(rest, len)), _mm256_setzero_pd());
            let t = _mm256_mul_pd(_mm256_sub_pd(one, cc), un);
            let a = _mm256_set1_pd(alpha);
            for c in 0..3 {
                let kc = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(u[c], cc), _mm256_mul_pd(n[c], t)), k);
                f[c] = _mm256_sub_pd(f[c], _mm256_mul_pd(kc, a));
            }
        }
        let short = _mm256_cmp_pd::<_CMP_LE_OQ>(len, _mm256_set1_pd(EPS_LEN));
        f.map(|fc| _mm256_andnot_pd(short, fc))
    }
}

/// `sf[j]` = the force of the chunk's spring j on its end a, four springs at a time: the runs with
/// contiguous loads, the others gathered.
#[inline(always)]
fn eval_chunk(c: &Chunk, m: &CpuModel, alpha: f64, x: &[V3], v: &[V3], sf: &mut [V3]) {
    let mut out = sf.chunks_exact_mut(LANES);
    let mut params = c.k.chunks_exact(LANES).zip(c.kd.chunks_exact(LANES)).zip(c.rest.chunks_exact(LANES));
    for &[a0, b0] in &c.runs {
        let (a0, b0) = (a0 as usize, b0 as usize);
        let (xa, xb, va, vb) = (&x[a0..a0 + LANES], &x[b0..b0 + LANES], &v[a0..a0 + LANES], &v[b0..b0 + LANES]);
        let (mut d, mut u) = ([[0.0; LANES]; 3], [[0.0; LANES]; 3]);
        for l in 0..LANES {
            for c in 0..3 {
                d[c][l] = xa[l][c] - xb[l][c];
                u[c][l] = va[l][c] - vb[l][c];
            }
        }
        if let (Some(o), Some(p)) = (out.next(), params.next()) {
            store(o, spring_force_x4(alpha, d, u, p));
        }
    }
    for ids in c.rest_ids.chunks_exact(LANES) {
        let (mut d, mut u) = ([[0.0; LANES]; 3], [[0.0; LANES]; 3]);
        for l in 0..LANES {
            let s = ids[l] as usize;
            let (a, b) = (m.end_a[s] as usize, m.end_b[s] as usize);
            for c in 0..3 {
                d[c][l] = x[a][c] - x[b][c];
                u[c][l] = v[a][c] - v[b][c];
            }
        }
        if let (Some(o), Some(p)) = (out.next(), params.next()) {
            store(o, spring_force_x4(alpha, d, u, p));
        }
    }
}

/// Four forces from their components.
#[inline(always)]
fn store(out: &mut [V3], f: [X4; 3]) {
    for (l, o) in out.iter_mut().enumerate() {
        *o = V3::new(f[0][l], f[1][l], f[2][l]);
    }
}

/// Four lanes.
type X4 = [f64; LANES];

/// Four springs' (k, k_d, L).
type Params<'a> = ((&'a [f64], &'a [f64]), &'a [f64]);

/// [`crate::reference::forces::spring_force`] of four springs with d = x_a − x_b and u = v_a − v_b,
/// lane by lane in the same IEEE operations and order: l = |d| = √((d_x² + d_y²) + d_z²), n̂ = d/l,
/// f = −[k(l − L) + k_d (n̂·u)] n̂ − α K_c u; zero where l ≤ [`EPS_LEN`]. Plain loops over the lanes
/// (no closures), which the compiler vectorises.
#[inline(always)]
fn spring_force_x4(alpha: f64, d: [X4; 3], u: [X4; 3], ((k, kd), rest): Params<'_>) -> [X4; 3] {
    let z = [0.0; LANES];
    let (mut len, mut un, mut mag) = (z, z, z);
    let mut n = [z; 3];
    for l in 0..LANES {
        len[l] = (d[0][l] * d[0][l] + d[1][l] * d[1][l] + d[2][l] * d[2][l]).sqrt();
    }
    for c in 0..3 {
        for l in 0..LANES {
            n[c][l] = d[c][l] / len[l];
        }
    }
    for l in 0..LANES {
        un[l] = n[0][l] * u[0][l] + n[1][l] * u[1][l] + n[2][l] * u[2][l];
        mag[l] = -(k[l] * (len[l] - rest[l]) + kd[l] * un[l]);
    }
    let mut f = [z; 3];
    for c in 0..3 {
        for l in 0..LANES {
            f[c][l] = n[c][l] * mag[l];
        }
    }
    if alpha != 0.0 {
        // kc_apply(k, c, n, u) = (u c + n ((1 − c)(n̂·u))) k, c = max(0, 1 − L/l)
        let (mut cc, mut t) = (z, z);
        for l in 0..LANES {
            cc[l] = (1.0 - rest[l] / len[l]).max(0.0);
            t[l] = (1.0 - cc[l]) * un[l];
        }
        for c in 0..3 {
            for l in 0..LANES {
                f[c][l] -= (u[c][l] * cc[l] + n[c][l] * t[l]) * k[l] * alpha;
            }
        }
    }
    for fc in &mut f {
        for l in 0..LANES {
            if len[l] <= EPS_LEN {
                fc[l] = 0.0;
            }
        }
    }
    f
}

/// Per particle of the chunk: the sum of its springs' forces in CSR order (+ on end a, − on end b),
/// times 1/m, plus the external fields and the cursor ([`super::forces::gather`]), handed to `f`.
#[inline(always)]
fn gather_chunk<const K: usize>(
    c: &Chunk,
    m: &CpuModel,
    sf: &[V3],
    x: &[V3],
    v: &[V3],
    mut outs: [&mut [V3]; K],
    f: &impl Fn(usize, V3, [&mut V3; K]),
) {
    let offsets = &m.incidence.offsets;
    for i in c.lo..c.hi {
        let w = m.inv_mass[i];
        let a = if w == 0.0 {
            V3::zeros()
        } else {
            let mut fi = V3::zeros();
            let (e0, e1) = (offsets[i] as usize - c.base, offsets[i + 1] as usize - c.base);
            for &e in &c.slots[e0..e1] {
                let fs = sf[(e >> 1) as usize];
                if e & 1 == 0 {
                    fi += fs;
                } else {
                    fi -= fs;
                }
            }
            let a = fi * w + external_accel(m, x[i], v[i]);
            match cursor_accel(m, i, x[i], v[i]) {
                Some(cu) => a - cu,
                None => a,
            }
        };
        let j = i - c.lo;
        f(i, a, outs.each_mut().map(|o| &mut o[j]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::forces::tests::{state, tangle};
    use crate::reference::forces::accel;

    /// The bits of every coordinate.
    fn bits(a: &[V3]) -> Vec<[u64; 3]> {
        a.iter().map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]).collect()
    }

    /// Every acceleration of the fused kernel equals the reference's per-particle `accel` bit for bit:
    /// grids (runs) and random springs (gathered groups, a zero-length spring, pins, a cursor), one to
    /// seven chunks, one and three threads, with and without Rayleigh damping, with AVX (where the CPU
    /// has it) and without.
    #[test]
    fn the_fused_kernel_is_the_reference_accel_bit_for_bit() {
        let models = [crate::model::curtain(41, None).unwrap(), crate::model::cloth(23, None).unwrap(), tangle(700), tangle(9)];
        for model in &models {
            let mut cm = CpuModel::new(model).unwrap();
            cm.cursor = Some(crate::model::Cursor { particle: 5, target: [0.1, -0.2, 0.3], stiffness: 1.7e3, damping: 3.1 });
            let (x, mut v) = state(model);
            for (vi, &w) in v.iter_mut().zip(&cm.inv_mass) {
                if w == 0.0 {
                    *vi = V3::zeros();
                }
            }
            let runs = ForcePlan::with_chunks(&cm, 1, 1).chunks[0].runs.len();
            for alpha in [0.0, 1.3e-4] {
                let want: Vec<V3> = (0..cm.n).map(|i| accel(&cm, alpha, i, &x, &v)).collect();
                for (threads, chunks) in [(1, 1), (1, 3), (3, 2), (3, 7)] {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    for avx in [false, true] {
                        let mut plan = ForcePlan::with_chunks(&cm, threads, chunks);
                        plan.avx &= avx;
                        let mut got = vec![V3::repeat(f64::NAN); cm.n];
                        let mut scratch = FastScratch::default();
                        pool.install(|| plan.for_each_accel(&mut scratch, &cm, alpha, (&x, &v), [&mut got], |_, a, [o]| *o = a));
                        let first = bits(&got).iter().zip(bits(&want)).position(|(g, w)| *g != w);
                        assert!(
                            first.is_none(),
                            "{} particles ({runs} runs), alpha {alpha}, {chunks} chunks, {threads} threads, avx {}: particle {first:?} differs",
                            cm.n,
                            plan.avx
                        );
                    }
                }
            }
        }
    }

    /// The grids' springs are mostly runs (what the contiguous loads are for); random springs are not.
    #[test]
    fn grids_are_cut_into_runs() {
        let count = |model: &crate::model::Model| {
            let cm = CpuModel::new(model).unwrap();
            let c = &ForcePlan::with_chunks(&cm, 1, 1).chunks[0];
            (LANES * c.runs.len(), c.len(), cm.end_a.len())
        };
        let (in_runs, listed, springs) = count(&crate::model::cloth(64, None).unwrap());
        assert!(listed >= springs && listed < springs + LANES, "one chunk lists every spring once, padded: {listed} of {springs}");
        assert!(in_runs as f64 > 0.9 * springs as f64, "{in_runs} of {springs} springs in runs");
        let (in_runs, _, springs) = count(&tangle(2000));
        assert!((in_runs as f64) < 0.05 * springs as f64, "{in_runs} of {springs} random springs in runs");
    }

    /// A plan is remade for another model, another thread count.
    #[test]
    fn a_plan_fits_only_its_model_and_threads() {
        let a = CpuModel::new(&crate::model::curtain(9, None).unwrap()).unwrap();
        let b = CpuModel::new(&crate::model::curtain(9, None).unwrap()).unwrap();
        let plan = ForcePlan::new(&a, 2);
        assert!(plan.fits(&a, 2));
        assert!(!plan.fits(&a, 3));
        assert!(!plan.fits(&b, 2), "same sizes, another model");
    }
}
