//! Pipelines of `shaders/multigrid.wgsl` and the buffers of one hierarchy: the smoothed-aggregation
//! V(1,1)-cycle that preconditions the PCG of Liu's `cg` global step, the twin of
//! [`crate::cpu::multigrid::Multigrid::apply`].
//!
//! The hierarchy is built on the CPU in f64 once per step size ([`GlobalMg::for_global`]: that of
//! [`crate::linalg::multigrid::Multigrid::for_global`] without its finest matrix stored) and uploaded in
//! f32: [`MultigridData`] holds its matrices, the coarse levels' vectors and one [`MgPass`] per
//! dispatch. A V-cycle is recorded into the PCG's compute pass after `pcg_begin` and after every
//! `pcg_update`, or between `local_global_cheb_residual` and `local_global_cheb_combine` of each Chebyshev iteration
//! ([`MultigridData::encode`]); nothing is read back.

use crate::error::{Error, Result};
use crate::gpu::base::alloc::{Allocator, SplitBuffer, UploadWriter};
use crate::gpu::base::layout::{groups, MgPass, CG_VECTORS};
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::pipelines::{
    bind, bind_dynamic, build, dynamic_params, params_stride, storage, Bindings, GroupLayout, Kernel as Compiled,
};
use crate::gpu::methods::pcg::PcgBuffers;
use crate::gpu::profiling::cost::CountedPass;
use crate::linalg::aggregation::Rows;
use crate::linalg::global_mg::{GlobalMg, LevelMatrix};
use crate::linalg::multigrid::Csr;

/// Bindings of the multigrid matrices (`mat`, `mat_1`): 2 × 128 MiB.
pub const MAT_SLOTS: usize = 2;

/// The multigrid kernels and their layouts.
pub struct MultigridKernels {
    /// Group 0: (mat, cg_vectors, mgv, partials, cg_state).
    pub layout: GroupLayout,
    /// Group 1: `MgPass` at a dynamic offset.
    pub pass_layout: GroupLayout,
    /// `mg_down`, `mg_restrict`, `mg_coarse`, `mg_up`, `mg_post`.
    kernels: [Compiled; 5],
}

/// One kernel of the V-cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    Down = 0,
    Restrict = 1,
    Coarse = 2,
    Up = 3,
    Post = 4,
}

impl Kernel {
    /// The kernel's entry point in `shaders/multigrid.wgsl`.
    fn entry_point(self) -> &'static str {
        match self {
            Kernel::Down => "mg_down",
            Kernel::Restrict => "mg_restrict",
            Kernel::Coarse => "mg_coarse",
            Kernel::Up => "mg_up",
            Kernel::Post => "mg_post",
        }
    }
}

impl MultigridKernels {
    /// Compiles the kernels.
    pub fn new(device: &wgpu::Device, options: &GpuOptions) -> Result<Self> {
        let data = [storage(0, true), storage(1, false), storage(2, false), storage(3, false), storage(4, false), storage(5, true)];
        let pass = [dynamic_params(0, std::mem::size_of::<MgPass>())];
        let names = ["mg_down", "mg_restrict", "mg_coarse", "mg_up", "mg_post"];
        let k = build(device, options, "multigrid.wgsl", &[&data, &pass], &names)?;
        let kernels = [
            k.pipeline(Kernel::Down.entry_point())?,
            k.pipeline(Kernel::Restrict.entry_point())?,
            k.pipeline(Kernel::Coarse.entry_point())?,
            k.pipeline(Kernel::Up.entry_point())?,
            k.pipeline(Kernel::Post.entry_point())?,
        ];
        Ok(MultigridKernels { layout: k.layout(0)?, pass_layout: k.layout(1)?, kernels })
    }
}

/// One hierarchy on the GPU: its matrices (f32), the coarse levels' vectors, and the per-dispatch
/// parameter blocks with the V-cycle's dispatch list for each partials slot.
pub struct MultigridData {
    /// The matrices and ω/a_ii, as words: `mat` and `mat_1` of `shaders/multigrid.wgsl`, split at the
    /// split size.
    pub mat: SplitBuffer,
    /// The vectors (b, x, t) of levels 1 and coarser.
    pub mgv: wgpu::Buffer,
    /// The `MgPass` entries.
    pub passes: wgpu::Buffer,
    group: Bindings,
    pass_group: Bindings,
    /// Per slot (r·z written to partials slot 0 or 1): (kernel, dynamic offset, workgroups).
    plan: [Vec<(Kernel, u32, u32)>; 2],
    /// Rows per level.
    pub sizes: Vec<usize>,
    /// Bytes of the buffers.
    pub bytes: u64,
}

/// The word offsets of the matrices' layout in `mat`, planned before anything is written: each array is
/// placed after the previous one ([`MatLayout::place`]), and [`write_csr`] writes them in the same order.
#[derive(Default)]
struct MatLayout {
    words: u32,
}

impl MatLayout {
    /// Places `len` words: their offset.
    fn place(&mut self, len: usize) -> u32 {
        let at = self.words;
        self.words += len as u32;
        at
    }

    /// Places a CSR matrix: (offsets, columns, values).
    fn csr(&mut self, m: &Csr) -> [u32; 3] {
        self.matrix(m.rows(), m.nnz())
    }

    /// Places a CSR matrix of `rows` rows and `nnz` entries: (offsets, columns, values).
    fn matrix(&mut self, rows: usize, nnz: usize) -> [u32; 3] {
        [self.place(rows + 1), self.place(nnz), self.place(nnz)]
    }
}

/// Writes a level's matrix placed at `at` by [`MatLayout::matrix`]: stored, as [`write_csr`]; formed,
/// row by row (offsets, columns, values: the rows formed three times, one row held at a time).
fn write_matrix(w: &mut UploadWriter, m: LevelMatrix, at: [u32; 3]) -> Result<()> {
    let a = match m {
        LevelMatrix::Stored(a) => return write_csr(w, a, at),
        LevelMatrix::Formed(a, _) => a,
    };
    let (mut row, mut words) = (Vec::new(), Vec::new());
    expect_at(w, at[0])?;
    w.words(&[0])?;
    let mut end = 0u32;
    for i in 0..a.rows() {
        a.row_into(i, &mut row);
        end += row.len() as u32;
        w.words(&[end])?;
    }
    for (k, part) in [at[1], at[2]].into_iter().enumerate() {
        expect_at(w, part)?;
        for i in 0..a.rows() {
            a.row_into(i, &mut row);
            words.clear();
            words.extend(row.iter().map(|&(j, v)| if k == 0 { j } else { (v as f32).to_bits() }));
            w.words(&words)?;
        }
    }
    Ok(())
}

/// Writes a CSR matrix placed at `at` by [`MatLayout::csr`]: offsets, columns, values in f32.
fn write_csr(w: &mut UploadWriter, m: &Csr, at: [u32; 3]) -> Result<()> {
    expect_at(w, at[0])?;
    w.words(&m.ptr)?;
    w.words(&m.col)?;
    w.f32s(m.val.iter().copied())
}

/// Checks that the writer is where the layout placed the next array.
fn expect_at(w: &UploadWriter, word: u32) -> Result<()> {
    if w.position() != word as u64 * 4 {
        return Err(Error::internal_gpu(format!("springsim.mg_mat: writing at byte {} where the layout placed word {word}", w.position())));
    }
    Ok(())
}

/// What a V-cycle preconditions, which fixes its level-0 vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MgUse {
    /// The PCG: b = r, x = z, t = Ap; r·z partials into the PCG's slot; a no-op once the PCG stopped.
    Pcg,
    /// Chebyshev's iteration: b = the PCG's p0 (s = r − Aδ from `local_global_cheb_residual`), x = z, t = Ap; no
    /// partials, always run.
    Chebyshev,
}

impl MultigridData {
    /// Uploads `mg` for the PCG vectors `pcg_buffers` of n particles (level 0 is the particles; see [`MgUse`]),
    /// through `alloc` (checked against the device's limits), the matrices split at `split` bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: &wgpu::Device,
        alloc: &mut Allocator,
        pipes: &MultigridKernels,
        pcg_buffers: &PcgBuffers,
        n: usize,
        mg: &GlobalMg,
        use_: MgUse,
        split: u64,
    ) -> Result<Self> {
        let pcg_groups = groups(n);
        let n = n as u32;
        let cg_n = CG_VECTORS as u32 * n;
        let levels = mg.levels();
        let nl = levels.len();
        let mut layout = MatLayout::default();
        // per level: A, ω/a_ii, P, R; vectors (b, x, t)
        let mut a = Vec::new();
        let mut wd = Vec::new();
        let mut pr = Vec::new();
        let mut vecs = Vec::new();
        let mut mgv_len = 0u32;
        for (l, lv) in levels.iter().enumerate() {
            a.push(layout.matrix(lv.a.rows(), lv.a.nnz()));
            wd.push(layout.place(lv.wdinv.len()));
            pr.push(if l + 1 < nl { [layout.csr(lv.p), layout.csr(lv.r)] } else { [[0; 3]; 2] });
            let rows = lv.a.rows() as u32;
            vecs.push(if l == 0 {
                // the PCG's r (Chebyshev: p0), z and Ap (pcg.wgsl's SEG_R, SEG_P, SEG_Z, SEG_AP)
                [if use_ == MgUse::Pcg { 0 } else { 2 * n }, n, 4 * n]
            } else {
                let base = cg_n + mgv_len;
                mgv_len += 3 * rows;
                [base, base + rows, base + 2 * rows]
            });
        }
        let inv_at = layout.csr(mg.coarse_inv());
        let [ip, ic, iv] = inv_at;
        let stride = params_stride(device, std::mem::size_of::<MgPass>());
        let mut entries: Vec<MgPass> = Vec::new();
        let mut plan: [Vec<(Kernel, u32, u32)>; 2] = [Vec::new(), Vec::new()];
        let pcg = use_ == MgUse::Pcg;
        let base = MgPass { cg_n, groups: pcg_groups, slot: 2, gate: pcg as u32, ..Default::default() };
        // level 0's partials slot for plan s (none for Chebyshev)
        let slot = |s: u32| if pcg { s } else { 2 };
        let mut add = |e: MgPass, k: Kernel, slots: &[usize], plan: &mut [Vec<(Kernel, u32, u32)>; 2]| {
            let off = entries.len() as u32 * stride;
            entries.push(e);
            for &s in slots {
                plan[s].push((k, off, groups(e.rows as usize)));
            }
        };
        for l in 0..nl - 1 {
            let rows = levels[l].a.rows() as u32;
            let [b, x, t] = vecs[l];
            let [ap, ac, av] = a[l];
            let e = MgPass { rows, m_ptr: ap, m_col: ac, m_val: av, wdinv: wd[l], b, x, t, ..base };
            add(e, Kernel::Down, &[0, 1], &mut plan);
            let [rp, rc, rv] = pr[l][1];
            let e = MgPass { rows: levels[l + 1].a.rows() as u32, m_ptr: rp, m_col: rc, m_val: rv, t, other: vecs[l + 1][0], ..base };
            add(e, Kernel::Restrict, &[0, 1], &mut plan);
        }
        {
            let l = nl - 1;
            let [b, x, t] = vecs[l];
            let e = MgPass { rows: levels[l].a.rows() as u32, m_ptr: ip, m_col: ic, m_val: iv, b, x, t, ..base };
            if l == 0 {
                add(MgPass { slot: slot(0), ..e }, Kernel::Coarse, &[0], &mut plan);
                add(MgPass { slot: slot(1), ..e }, Kernel::Coarse, &[1], &mut plan);
            } else {
                add(e, Kernel::Coarse, &[0, 1], &mut plan);
            }
        }
        for l in (0..nl - 1).rev() {
            let rows = levels[l].a.rows() as u32;
            let [b, x, t] = vecs[l];
            let [pp, pc, pv] = pr[l][0];
            let e = MgPass { rows, m_ptr: pp, m_col: pc, m_val: pv, b, x, t, other: vecs[l + 1][1], ..base };
            add(e, Kernel::Up, &[0, 1], &mut plan);
            let [ap, ac, av] = a[l];
            let e = MgPass { rows, m_ptr: ap, m_col: ac, m_val: av, wdinv: wd[l], b, x, t, ..base };
            if l == 0 {
                add(MgPass { slot: slot(0), ..e }, Kernel::Post, &[0], &mut plan);
                add(MgPass { slot: slot(1), ..e }, Kernel::Post, &[1], &mut plan);
            } else {
                add(e, Kernel::Post, &[0, 1], &mut plan);
            }
        }
        let mut bytes = vec![0u8; entries.len() * stride as usize];
        for (k, e) in entries.iter().enumerate() {
            let o = k * stride as usize;
            bytes[o..o + std::mem::size_of::<MgPass>()].copy_from_slice(bytemuck::bytes_of(e));
        }
        let before = alloc.bytes();
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        // written through the mappings in the layout's order: no host copy of the f32 matrices
        let mat = alloc.split_fill("springsim.mg_mat", layout.words as u64 * 4, split, MAT_SLOTS, usage, |w| {
            for (l, lv) in levels.iter().enumerate() {
                write_matrix(w, lv.a, a[l])?;
                expect_at(w, wd[l])?;
                w.f32s(lv.wdinv.iter().copied())?;
                if l + 1 < nl {
                    write_csr(w, lv.p, pr[l][0])?;
                    write_csr(w, lv.r, pr[l][1])?;
                }
            }
            write_csr(w, mg.coarse_inv(), inv_at)
        })?;
        let mat_bindings = mat.bindings();
        let mgv = alloc.storage("springsim.mgv", mgv_len as u64 * 16, wgpu::BufferUsages::empty())?;
        let passes = alloc.params_init("springsim.mg_pass", &bytes)?;
        let group = bind(
            device,
            &pipes.layout,
            "springsim.multigrid",
            &[mat_bindings[0], &pcg_buffers.vectors, &mgv, &pcg_buffers.partials, &pcg_buffers.status, mat_bindings[1]],
        );
        let pass_group = bind_dynamic(device, &pipes.pass_layout, "springsim.mg_pass", &passes, std::mem::size_of::<MgPass>());
        Ok(MultigridData { mat, mgv, passes, group, pass_group, plan, sizes: mg.sizes(), bytes: alloc.bytes() - before })
    }

    /// Records one V-cycle z = B r into `pass`, its r·z partials into the PCG's `slot` (0 after
    /// `pcg_begin`, 1 − q after `pcg_update` of parity q; Chebyshev: either, no partials). The caller
    /// rebinds its own groups afterwards.
    pub fn encode(&self, pass: &mut CountedPass, pipes: &MultigridKernels, slot: usize) {
        pass.set_bind_group(0, &self.group, &[]);
        for &(k, offset, count) in &self.plan[slot] {
            pass.set_bind_group(1, &self.pass_group, &[offset]);
            pass.set_pipeline(&pipes.kernels[k as usize]);
            pass.dispatch_workgroups(count, 1, 1);
        }
    }

    /// Dispatches per V-cycle.
    pub fn dispatches(&self) -> usize {
        self.plan[0].len()
    }

    /// Workgroups per V-cycle.
    pub fn workgroups(&self) -> u64 {
        self.plan[0].iter().map(|&(_, _, count)| count as u64).sum()
    }
}
