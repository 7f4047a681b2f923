//! What the adapter charges for the loads of the PCG's A·p gather: one kernel shaped like
//! `operator_apply` in `shaders/implicit.wgsl` (per particle of the 81×81 curtain, 12 incidence entries,
//! each reading a neighbour index, two block texels and z_j + βp_j) reading storage buffers (`ssbo`,
//! what springsim does), the same reading `textureLoad` from rgba32float textures (`tex`, the index in
//! the block's spare lane), and a kernel that only writes its output (`nop`, the dispatch floor).
//!
//! `WGPU_BACKEND=vulkan WGPU_ADAPTER_NAME=llvmpipe cargo run --release --example load_paths`
//!
//! On Mesa 22.3's llvmpipe every storage-buffer load with a per-lane address becomes a loop over the
//! SIMD lanes, one per component; texel fetches are gathered. On a 2-core VM (Mesa 22.3) an A·p-shaped
//! dispatch on the curtain took 5.3–8.4 ms through storage buffers, 1.6–2.1 ms through textures.
use springsim::gpu::base::context::GpuContext;
use std::time::Instant;
use wgpu::util::DeviceExt;

const N: u32 = 6561;
const E: u32 = 12;
const W: u32 = 1024;

const SRC: &str = r#"
struct P { n: u32, e: u32, w: u32, pad: u32 }
@group(0) @binding(0) var<uniform> C: P;
@group(0) @binding(1) var<storage, read> vecs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> blocks: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> nbr: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(5) var tvecs: texture_2d<f32>;
@group(0) @binding(6) var tblocks: texture_2d<f32>;

fn tl(t: texture_2d<f32>, i: u32) -> vec4<f32> { return textureLoad(t, vec2<u32>(i % C.w, i / C.w), 0); }

@compute @workgroup_size(64)
fn ssbo(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x; if (i >= C.n) { return; }
  var y = vec4<f32>(0.0);
  for (var k = 0u; k < C.e; k++) {
    let e = i * C.e + k;
    let j = nbr[e];
    let b0 = blocks[2u * e]; let b1 = blocks[2u * e + 1u];
    let p = vecs[j] + 0.5 * vecs[C.n + j];
    y += b0 * p + b1 * p.yzxw;
  }
  out[i] = y;
}

@compute @workgroup_size(64)
fn nop(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x; if (i >= C.n) { return; }
  out[i] = vec4<f32>(f32(i));
}

@compute @workgroup_size(64)
fn tex(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x; if (i >= C.n) { return; }
  var y = vec4<f32>(0.0);
  for (var k = 0u; k < C.e; k++) {
    let e = i * C.e + k;
    let b0 = tl(tblocks, 2u * e); let b1 = tl(tblocks, 2u * e + 1u);
    let j = bitcast<u32>(b1.w);
    let p = tl(tvecs, j) + 0.5 * tl(tvecs, C.n + j);
    y += b0 * p + b1 * p.yzxw;
  }
  out[i] = y;
}
"#;

fn main() {
    let ctx = GpuContext::headless().expect("a GPU adapter (see WGPU_BACKEND, WGPU_ADAPTER_NAME)");
    println!("{}", ctx.adapter_name());
    let d = &ctx.device;
    let nbr: Vec<u32> = (0..N * E).map(|e| (e / E * 7 + (e % E) * 81) % N).collect();
    let vecs: Vec<f32> = (0..2 * N * 4).map(|i| (i % 13) as f32 * 0.1).collect();
    let mut blocks: Vec<f32> = (0..2 * N * E * 4).map(|i| (i % 11) as f32 * 0.1).collect();
    for e in 0..(N * E) as usize {
        blocks[(2 * e + 1) * 4 + 3] = f32::from_bits(nbr[e]);
    }
    let buf = |c: &[u8], u| d.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: c, usage: u });
    let s = wgpu::BufferUsages::STORAGE;
    let cb = buf(bytemuck::cast_slice(&[N, E, W, 0u32]), wgpu::BufferUsages::UNIFORM);
    let vb = buf(bytemuck::cast_slice(&vecs), s);
    let bb = buf(bytemuck::cast_slice(&blocks), s);
    let nb = buf(bytemuck::cast_slice(&nbr), s);
    let ob = d.create_buffer(&wgpu::BufferDescriptor { label: None, size: (N * 16) as u64, usage: s, mapped_at_creation: false });
    let tex = |data: &[f32]| {
        let texels = data.len() as u32 / 4;
        let h = texels.div_ceil(W);
        let mut padded = data.to_vec();
        padded.resize((W * h * 4) as usize, 0.0);
        let t = d.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d { width: W, height: h, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba32Float,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        ctx.queue.write_texture(
            t.as_image_copy(),
            bytemuck::cast_slice(&padded),
            wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(W * 16), rows_per_image: Some(h) },
            wgpu::Extent3d { width: W, height: h, depth_or_array_layers: 1 },
        );
        t.create_view(&Default::default())
    };
    let tv = tex(&vecs);
    let tb = tex(&blocks);
    let m = d.create_shader_module(wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(SRC.into()) });
    // each kernel twice: the first round includes compiling the pipeline
    for entry in ["ssbo", "tex", "nop", "ssbo", "tex", "nop"] {
        let p = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &m,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        });
        let l = p.get_bind_group_layout(0);
        let mut ents = vec![];
        let res: Vec<(u32, wgpu::BindingResource)> = if entry == "nop" {
            vec![(0, cb.as_entire_binding()), (4, ob.as_entire_binding())]
        } else if entry == "ssbo" {
            vec![
                (0, cb.as_entire_binding()),
                (1, vb.as_entire_binding()),
                (2, bb.as_entire_binding()),
                (3, nb.as_entire_binding()),
                (4, ob.as_entire_binding()),
            ]
        } else {
            vec![
                (0, cb.as_entire_binding()),
                (4, ob.as_entire_binding()),
                (5, wgpu::BindingResource::TextureView(&tv)),
                (6, wgpu::BindingResource::TextureView(&tb)),
            ]
        };
        for (b, r) in res {
            ents.push(wgpu::BindGroupEntry { binding: b, resource: r });
        }
        let bg = d.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &l, entries: &ents });
        let reps = 20;
        let t = Instant::now();
        let mut enc = d.create_command_encoder(&Default::default());
        for _ in 0..reps {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&p);
            pass.set_bind_group(0, &bg, &[]);
            pass.dispatch_workgroups(N.div_ceil(64), 1, 1);
        }
        ctx.queue.submit([enc.finish()]);
        d.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
        println!("{entry}: {:.3} ms per dispatch", t.elapsed().as_secs_f64() * 1e3 / reps as f64);
    }
}
