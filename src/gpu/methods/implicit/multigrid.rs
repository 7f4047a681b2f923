//! Implicit Euler's aggregation multigrid on the GPU (`shaders/implicit_mg.wgsl`): the twin of
//! [`crate::linalg::spring_mg::SpringMg`] with one sweep each side, preconditioning the GPU PCG.
//!
//! The hierarchy's structure (aggregates, the lists each coarse block sums, the coarse levels'
//! incidence) is built on the CPU once per model by [`SpringLevels::for_model`], that of the CPU engine's
//! hierarchy, and uploaded once ([`ImplicitMg::new`]). Each step, after
//! `implicit_prepare`, [`ImplicitMg::encode_update`] re-sums the coarse levels' blocks level by level and
//! factors the last level (a dense Cholesky in one workgroup); the V-cycle
//! ([`ImplicitMg::encode_vcycle`]) is recorded by the PCG after `pcg_begin` and after every `pcg_update`.
//! Every dispatch reads its `ImplicitMgPass` at a dynamic offset of one parameter table (as `MgPass` does for
//! local/global's multigrid). Nothing is read back.

use crate::error::Result;
use crate::gpu::base::alloc::{Allocator, UploadWriter};
use crate::gpu::base::layout::{groups, ImplicitMgPass};
use crate::gpu::base::pipelines::{
    bind_entries, dynamic_params, params_stride, storage, Bindings, GroupLayout, Kernel as Compiled, Kernels,
};
use crate::gpu::profiling::cost::CountedPass;
use crate::linalg::spring_levels::SpringLevels;
use crate::linalg::spring_mg::{spring_order, ALPHA};
use crate::reference::model::CpuModel;

/// One kernel of the update or of the V-cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    Sum0 = 0,
    Sum = 1,
    Dinv = 2,
    Factor = 3,
    Down = 4,
    Restrict = 5,
    Coarse = 6,
    Up = 7,
    Post = 8,
    /// The second half of `Post` on level 0 when it runs in two dispatches ([`ImplicitMgKernels::post_apart`]).
    PostTail = 9,
}

/// The kernels' pipelines (compiled with the implicit kernels, in the module `implicit_mg.wgsl`) and
/// the layout of their group 2.
pub struct ImplicitMgKernels {
    /// Group 2: (lists, block values, vectors, dense factor).
    pub layout: GroupLayout,
    /// Group 3: `ImplicitMgPass` at a dynamic offset.
    pub pass_layout: GroupLayout,
    /// By [`Kernel`]: `implicit_mg_post` at `Post`, or `implicit_mg_post_smooth` there and `implicit_mg_post_tail` after it.
    kernels: Vec<Compiled>,
}

impl ImplicitMgKernels {
    /// The entry points, compiled after the implicit and PCG ones.
    pub const ENTRY_POINTS: [&'static str; 9] = [
        "implicit_mg_sum0",
        "implicit_mg_sum",
        "implicit_mg_dinv",
        "implicit_mg_factor",
        "implicit_mg_down",
        "implicit_mg_restrict",
        "implicit_mg_coarse",
        "implicit_mg_up",
        "implicit_mg_post",
    ];

    /// [`ImplicitMgKernels::ENTRY_POINTS`] with `implicit_mg_post` in two dispatches
    /// (`implicit_mg_post_smooth`, then `implicit_mg_post_tail` on level 0), each within 8 storage
    /// buffers, where `implicit_mg_post`'s 9 are more than the device allows (WebGPU's default
    /// limits). The same numbers.
    pub const ENTRY_POINTS_APART: [&'static str; 10] = [
        "implicit_mg_sum0",
        "implicit_mg_sum",
        "implicit_mg_dinv",
        "implicit_mg_factor",
        "implicit_mg_down",
        "implicit_mg_restrict",
        "implicit_mg_coarse",
        "implicit_mg_up",
        "implicit_mg_post_smooth",
        "implicit_mg_post_tail",
    ];

    /// The entry points to compile: `apart` when the module's layout is over the device's storage
    /// buffers per shader stage.
    pub fn entry_points(apart: bool) -> &'static [&'static str] {
        if apart {
            &Self::ENTRY_POINTS_APART
        } else {
            &Self::ENTRY_POINTS
        }
    }

    /// Whether `implicit_mg_post` runs in two dispatches.
    pub fn post_apart(&self) -> bool {
        self.kernels.len() > Self::ENTRY_POINTS.len()
    }

    /// The layout of group 2.
    pub fn layout_entries() -> [wgpu::BindGroupLayoutEntry; 4] {
        [storage(0, true), storage(1, false), storage(2, false), storage(3, false)]
    }

    /// The layout of group 3.
    pub fn pass_layout_entries() -> [wgpu::BindGroupLayoutEntry; 1] {
        [dynamic_params(0, std::mem::size_of::<ImplicitMgPass>())]
    }

    /// Takes group 2's layout and the pipelines of [`ImplicitMgKernels::entry_points`]`(apart)` from `kernels`.
    pub fn from_kernels(kernels: &Kernels, apart: bool) -> Result<Self> {
        let kernels_of = Self::entry_points(apart).iter().map(|ep| kernels.pipeline(ep)).collect::<Result<Vec<_>>>()?;
        Ok(ImplicitMgKernels { layout: kernels.layout(2)?, pass_layout: kernels.layout(3)?, kernels: kernels_of })
    }
}

/// One hierarchy on the GPU: its lists, this step's blocks, the coarse levels' vectors, the last
/// level's factor, and the dispatch lists of the update and of the V-cycle (per partials slot).
pub struct ImplicitMg {
    /// The fixed lists (u32 words).
    pub lists: wgpu::Buffer,
    /// The blocks of this step (`vec4` pairs): level 0's inverse diagonal, each coarse level's node,
    /// edge and inverse diagonal blocks.
    pub vals: wgpu::Buffer,
    /// Level 0's t and the coarse levels' (b, x, t).
    pub vecs: wgpu::Buffer,
    /// The last level's dense matrix and factor (f32, 3n square).
    pub dense: wgpu::Buffer,
    /// The `ImplicitMgPass` entries.
    pub passes: wgpu::Buffer,
    group: Bindings,
    pass_group: Bindings,
    update: Vec<(Kernel, u32, u32)>,
    vcycle: [Vec<(Kernel, u32, u32)>; 2],
    /// Nodes per level (level 0: the particles).
    pub sizes: Vec<usize>,
    /// Bytes of the buffers.
    pub bytes: u64,
}

/// Word offsets of one link's lists and the coarse level's incidence.
#[derive(Clone, Copy, Default)]
struct LinkAt {
    agg: u32,
    mem: [u32; 2],
    gr: [u32; 2],
    ed: [u32; 2],
}

/// Where one level lives: incidence (words), blocks (vec4), vectors (joint index space).
#[derive(Clone, Copy, Default)]
struct LevelAt {
    inc: [u32; 2],
    ground: u32,
    edge: u32,
    dinv: u32,
    bxt: [u32; 3],
}

/// Places `len` words after the `at` placed so far: their offset.
fn place(at: &mut u32, len: usize) -> u32 {
    let offset = *at;
    *at += len as u32;
    offset
}

impl ImplicitMg {
    /// The hierarchy of `m` that the GPU can run: the structure of the CPU engine's
    /// ([`crate::linalg::spring_mg::SpringMg::for_model`], built without its fine graph by
    /// [`SpringLevels::for_model`]), when its last level is factored ([`SpringLevels::factors_last_level`]);
    /// `None` for a model too small to coarsen (≤ 128 free particles) or whose coarsening stalls, which the
    /// GPU then preconditions with Jacobi.
    pub fn hierarchy(m: &CpuModel) -> Result<Option<SpringLevels>> {
        let mg = SpringLevels::for_model(m);
        Ok(mg.factors_last_level().then_some(mg))
    }

    /// Uploads `mg` (built by [`ImplicitMg::hierarchy`] for `m`) for the PCG of n = `m.n` particles,
    /// through `alloc` (every buffer checked against the device's limits before any is allocated).
    pub fn new(device: &wgpu::Device, alloc: &mut Allocator, kernels: &ImplicitMgKernels, m: &CpuModel, mg: &SpringLevels) -> Result<Self> {
        let n = m.n;
        let nl = mg.levels();
        let sizes = mg.sizes();
        // the lists' word offsets, placed in the order `fill_lists` writes them
        let mut words = 0u32;
        // level 0: each fine edge (the sweep's order of springs) → an incidence entry of a free end
        let ent_at = place(&mut words, m.end_a.len());
        let mut links = Vec::new();
        for l in 0..nl - 1 {
            let [(mp, ms), (gp, gs), (ep, es)] = mg.link_lists(l);
            let agg = place(&mut words, mg.aggregates(l).len());
            let mem = [place(&mut words, mp.len()), place(&mut words, ms.len())];
            let gr = [place(&mut words, gp.len()), place(&mut words, gs.len())];
            let ed = [place(&mut words, ep.len()), place(&mut words, es.len())];
            links.push(LinkAt { agg, mem, gr, ed });
        }
        // level 0: D⁻¹ at vals 0, (b, x, t) at the start of implicit_mg_vecs
        let n32 = n as u32;
        let mut levels = vec![LevelAt { dinv: 0, bxt: [0, n32, 2 * n32], ..Default::default() }];
        let (mut vals_len, mut vecs_len) = (2 * n32, 3 * n32);
        for l in 1..nl {
            let (nodes, ptr, inc) = mg.level_lists(l);
            let (nodes, edges) = (nodes as u32, mg.level_edges(l) as u32);
            let inc = [place(&mut words, ptr.len()), place(&mut words, 2 * inc.len())];
            let ground = vals_len;
            let edge = ground + 2 * nodes;
            let dinv = edge + 2 * edges;
            vals_len = dinv + 2 * nodes;
            let b = vecs_len;
            vecs_len += 3 * nodes;
            levels.push(LevelAt { inc, ground, edge, dinv, bxt: [b, b + nodes, b + 2 * nodes] });
        }
        let last = sizes[nl - 1] as u64;
        let stride = params_stride(device, std::mem::size_of::<ImplicitMgPass>());

        // the dispatches
        let base = ImplicitMgPass {
            slot: 2,
            groups: groups(n),
            ent: ent_at,
            omega: (2.0f64 / 3.0) as f32,
            alpha: ALPHA as f32,
            ..Default::default()
        };
        let fine = |l: usize, e: ImplicitMgPass| -> ImplicitMgPass {
            let (lv, [b, x, t]) = (&levels[l], levels[l].bxt);
            ImplicitMgPass {
                level: l as u32,
                b,
                x,
                t,
                f_inc_ptr: lv.inc[0],
                f_inc: lv.inc[1],
                f_ground: lv.ground,
                f_edge: lv.edge,
                f_dinv: lv.dinv,
                ..e
            }
        };
        let coarse = |l: usize, e: ImplicitMgPass| -> ImplicitMgPass {
            let lv = &levels[l];
            ImplicitMgPass {
                nodes: sizes[l] as u32,
                cb: lv.bxt[0],
                cx: lv.bxt[1],
                c_inc_ptr: lv.inc[0],
                c_inc: lv.inc[1],
                c_ground: lv.ground,
                c_edge: lv.edge,
                c_dinv: lv.dinv,
                ..e
            }
        };
        let link = |l: usize, e: ImplicitMgPass| -> ImplicitMgPass {
            let k = &links[l];
            ImplicitMgPass { agg: k.agg, mem_ptr: k.mem[0], mem: k.mem[1], gr_ptr: k.gr[0], gr: k.gr[1], ed_ptr: k.ed[0], ed: k.ed[1], ..e }
        };
        let mut entries: Vec<ImplicitMgPass> = Vec::new();
        let mut add = |e: ImplicitMgPass, k: Kernel, count: u32, plans: &mut [&mut Vec<(Kernel, u32, u32)>]| {
            let off = entries.len() as u32 * stride;
            entries.push(e);
            for p in plans.iter_mut() {
                p.push((k, off, count));
            }
        };
        let (mut update, mut v0, mut v1) = (Vec::new(), Vec::new(), Vec::new());
        add(fine(0, ImplicitMgPass { rows: n as u32, ..base }), Kernel::Sum0, groups(n), &mut [&mut update]);
        for l in 0..nl - 1 {
            let rows = (sizes[l + 1] + mg.level_edges(l + 1)) as u32;
            let e = coarse(l + 1, link(l, fine(l, ImplicitMgPass { rows, ..base })));
            add(e, Kernel::Sum, groups(rows as usize), &mut [&mut update]);
            let e = coarse(l + 1, ImplicitMgPass { rows: sizes[l + 1] as u32, ..base });
            add(e, Kernel::Dinv, groups(sizes[l + 1]), &mut [&mut update]);
        }
        add(coarse(nl - 1, base), Kernel::Factor, 1, &mut [&mut update]);
        add(fine(0, ImplicitMgPass { rows: n as u32, ..base }), Kernel::Down, groups(n), &mut [&mut v0, &mut v1]);
        for l in 0..nl - 1 {
            let e = coarse(l + 1, link(l, fine(l, ImplicitMgPass { rows: sizes[l + 1] as u32, ..base })));
            add(e, Kernel::Restrict, groups(sizes[l + 1]), &mut [&mut v0, &mut v1]);
        }
        add(fine(nl - 1, coarse(nl - 1, base)), Kernel::Coarse, 1, &mut [&mut v0, &mut v1]);
        for l in (0..nl - 1).rev() {
            let rows = sizes[l] as u32;
            let e = coarse(l + 1, link(l, fine(l, ImplicitMgPass { rows, ..base })));
            add(e, Kernel::Up, groups(sizes[l]), &mut [&mut v0, &mut v1]);
            let e = fine(l, ImplicitMgPass { rows, ..base });
            if l == 0 {
                add(ImplicitMgPass { slot: 0, ..e }, Kernel::Post, groups(n), &mut [&mut v0]);
                if kernels.post_apart() {
                    v0.push((Kernel::PostTail, v0[v0.len() - 1].1, groups(n)));
                }
                add(ImplicitMgPass { slot: 1, ..e }, Kernel::Post, groups(n), &mut [&mut v1]);
                if kernels.post_apart() {
                    v1.push((Kernel::PostTail, v1[v1.len() - 1].1, groups(n)));
                }
            } else {
                add(e, Kernel::Post, groups(sizes[l]), &mut [&mut v0, &mut v1]);
            }
        }
        let mut bytes = vec![0u8; entries.len() * stride as usize];
        for (k, e) in entries.iter().enumerate() {
            let o = k * stride as usize;
            bytes[o..o + std::mem::size_of::<ImplicitMgPass>()].copy_from_slice(bytemuck::bytes_of(e));
        }

        // sizes checked before anything is allocated
        let rw = crate::gpu::base::alloc::STORAGE_RW;
        let read = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let sized = [
            ("springsim.implicit_mg_lists", words as u64 * 4, read),
            ("springsim.implicit_mg_vals", vals_len as u64 * 16, rw),
            ("springsim.implicit_mg_vecs", vecs_len as u64 * 16, rw),
            ("springsim.implicit_mg_dense", 9 * last * last * 4, rw),
        ];
        for (label, size, usage) in sized {
            alloc.check(label, size, usage)?;
        }
        let before = alloc.bytes();
        let lists = alloc.buffer_fill(sized[0].0, sized[0].1, read, |w| fill_lists(w, m, mg))?;
        let vals = alloc.storage(sized[1].0, sized[1].1, wgpu::BufferUsages::empty())?;
        let vecs = alloc.storage(sized[2].0, sized[2].1, wgpu::BufferUsages::empty())?;
        let dense = alloc.storage(sized[3].0, sized[3].1, wgpu::BufferUsages::empty())?;
        let passes = alloc.params_init("springsim.implicit_mg_pass", &bytes)?;
        let pass_size = wgpu::BufferSize::new(std::mem::size_of::<ImplicitMgPass>() as u64);
        fn whole(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() }
        }
        let group = bind_entries(
            device,
            &kernels.layout,
            "springsim.implicit_mg",
            &[whole(0, &lists), whole(1, &vals), whole(2, &vecs), whole(3, &dense)],
        );
        let pass_group = bind_entries(
            device,
            &kernels.pass_layout,
            "springsim.implicit_mg_pass",
            &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: &passes, offset: 0, size: pass_size }),
            }],
        );
        let bytes = alloc.bytes() - before;
        Ok(ImplicitMg { lists, vals, vecs, dense, passes, group, pass_group, update, vcycle: [v0, v1], sizes, bytes })
    }

    /// Binds groups 2 and 3 (at the first entry): the implicit kernels of the module need them bound.
    pub fn bind(&self, pass: &mut CountedPass) {
        pass.set_bind_group(2, &self.group, &[]);
        pass.set_bind_group(3, &self.pass_group, &[0]);
    }

    fn encode(&self, pass: &mut CountedPass, kernels: &ImplicitMgKernels, plan: &[(Kernel, u32, u32)]) {
        for &(k, offset, count) in plan {
            pass.set_bind_group(3, &self.pass_group, &[offset]);
            pass.set_pipeline(&kernels.kernels[k as usize]);
            pass.dispatch_workgroups(count, 1, 1);
        }
    }

    /// Records the step's block sums and the last level's factor (after `implicit_prepare`, before
    /// `pcg_begin`, with the implicit groups 0 and 1 bound).
    pub fn encode_update(&self, pass: &mut CountedPass, kernels: &ImplicitMgKernels) {
        self.encode(pass, kernels, &self.update);
    }

    /// Records one V-cycle z = B r, its r·z partials into the PCG's `slot` (0 after `pcg_begin`, 1 − q
    /// after `pcg_update` of parity q).
    pub fn encode_vcycle(&self, pass: &mut CountedPass, kernels: &ImplicitMgKernels, slot: usize) {
        self.encode(pass, kernels, &self.vcycle[slot]);
    }

    /// (dispatches, workgroups) of the step's update.
    pub fn update_shape(&self) -> (u64, u64) {
        (self.update.len() as u64, self.update.iter().map(|&(_, _, c)| c as u64).sum())
    }

    /// (dispatches, workgroups) of one V-cycle.
    pub fn vcycle_shape(&self) -> (u64, u64) {
        (self.vcycle[0].len() as u64, self.vcycle[0].iter().map(|&(_, _, c)| c as u64).sum())
    }
}

/// Writes the lists in the order [`ImplicitMg::new`] placed them: level 0's incidence entry of each fine
/// edge, then per level its aggregates and link lists, then per coarse level its incidence. The host
/// holds no copy of them: level 0's entries are formed a chunk at a time.
fn fill_lists(w: &mut UploadWriter, m: &CpuModel, mg: &SpringLevels) -> Result<()> {
    // each spring's first incidence entry at a free end (else at a pinned one: implicit_prepare writes no
    // blocks for a pinned particle's entries)
    let mut first = vec![u32::MAX; m.end_a.len()];
    for free in [true, false] {
        for i in (0..m.n).filter(|&i| (m.inv_mass[i] != 0.0) == free) {
            for e in m.incidence.offsets[i]..m.incidence.offsets[i + 1] {
                let s = (m.incidence.entries[e as usize] / 2) as usize;
                if first[s] == u32::MAX {
                    first[s] = e;
                }
            }
        }
    }
    w.records(spring_order(m).into_iter().map(|s| first[s as usize]))?;
    drop(first);
    for l in 0..mg.levels() - 1 {
        w.words(mg.aggregates(l))?;
        for (ptr, src) in mg.link_lists(l) {
            w.words(ptr)?;
            w.words(src)?;
        }
    }
    for l in 1..mg.levels() {
        let (_, ptr, inc) = mg.level_lists(l);
        w.words(ptr)?;
        w.words(bytemuck::cast_slice(inc))?;
    }
    Ok(())
}
