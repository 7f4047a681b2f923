//! `GpuState`: every buffer of one simulation, owned by the caller's simulator. Kernels and layouts
//! live apart, in the pipeline structs.

use super::layout::{GpuNbr, LeuPass, CG_STATE_WORDS, CG_VECTORS, WORKGROUP_SIZE};
use crate::cpu::CpuModel;
use wgpu::util::DeviceExt;

/// The buffers of one simulation.
pub struct GpuState {
    /// Particles.
    pub n: usize,
    /// Springs.
    pub n_springs: usize,
    /// `Params` (uniform).
    pub params: wgpu::Buffer,
    /// One `Nbr` per CSR incidence entry, in CSR order.
    pub nbr: wgpu::Buffer,
    /// The n + 1 CSR offsets into `nbr`.
    pub csr: wgpu::Buffer,
    /// The ping-pong states: positions (`vec4<f32>`, w = 1/m) at [0, n), velocities at [n, 2n).
    /// `state[0]` holds the current state between frames; its first n entries are the positions,
    /// usable as a vertex buffer.
    pub state: [wgpu::Buffer; 2],
    /// Intermediate states of the multi-stage methods.
    pub tmp: [wgpu::Buffer; 2],
    /// RK4's accumulator.
    pub acc: wgpu::Buffer,
    /// LEU: x₀, v₀, a₀.
    pub lin: wgpu::Buffer,
    /// LEU: three `vec4` per incidence entry (the K and D blocks).
    pub blocks: wgpu::Buffer,
    /// LEU: divergence flags of the two parities ([0], [1]) and the retry count ([2]); [3]: an
    /// explicit step exceeded the speed limit.
    pub flags: wgpu::Buffer,
    /// LEU: the parity uniforms.
    pub leu_pass: [wgpu::Buffer; 2],
    /// Power iteration vectors.
    pub y: [wgpu::Buffer; 2],
    /// Per-workgroup partial sums.
    pub partials: wgpu::Buffer,
    /// Reduced scalars.
    pub scalars: wgpu::Buffer,
    /// Implicit Euler: two `vec4` per incidence entry, the six values of the spring's block of
    /// −h J_v − h² J_x (each endpoint its own copy).
    pub imp_blocks: wgpu::Buffer,
    /// Implicit Euler: `ImplicitParams` (uniform).
    pub imp_params: wgpu::Buffer,
    /// PCG: the vectors r, z, p0, p1, Ap, x, P⁻¹ (n `vec4` each).
    pub cgv: wgpu::Buffer,
    /// PCG: per-workgroup partial sums, three slots.
    pub cg_partials: wgpu::Buffer,
    /// PCG: status, iterations, residual, iterations since cleared, breakdowns.
    pub cg_state: wgpu::Buffer,
    /// PCG: the `CgPass` uniforms of the two iteration parities (written by the simulator).
    pub cg_pass: [wgpu::Buffer; 2],
    /// Local/global: the CSR offsets (n + 1), then the incidence entries `2·spring + side` and the spring
    /// table (a, b, rest bits, k bits): `csr` of `shaders/local_global.wgsl` (bases in [`LgConsts`]).
    ///
    /// [`LgConsts`]: super::layout::LgConsts
    pub lg_tables: wgpu::Buffer,
    /// Local/global: the Chebyshev iterates (3n), d (one per spring), the ‖r‖² partials (2 slots of
    /// `groups`) and the report (one `vec4`): `lgv` of `shaders/local_global.wgsl`.
    pub lgv: wgpu::Buffer,
    /// Local/global: `LgConsts` (uniform, written by the simulator).
    pub lg_consts: wgpu::Buffer,
    /// Staging buffer for read-back (state size).
    pub readback: wgpu::Buffer,
}

fn storage(device: &wgpu::Device, label: &str, bytes: u64, extra: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(64),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC | extra,
        mapped_at_creation: false,
    })
}

/// Packs positions (w = 1/m, 0 when pinned) and velocities into the state layout.
pub fn pack_state(m: &CpuModel, x: &[[f64; 3]], v: &[[f64; 3]]) -> Vec<[f32; 4]> {
    let mut out = Vec::with_capacity(2 * m.n);
    for i in 0..m.n {
        out.push([x[i][0] as f32, x[i][1] as f32, x[i][2] as f32, m.inv_mass[i] as f32]);
    }
    for i in 0..m.n {
        let vi = if m.inv_mass[i] == 0.0 { [0.0; 3] } else { v[i] };
        out.push([vi[0] as f32, vi[1] as f32, vi[2] as f32, 0.0]);
    }
    out
}

impl GpuState {
    /// Allocates and uploads.
    pub fn new(device: &wgpu::Device, m: &CpuModel, x: &[[f64; 3]], v: &[[f64; 3]]) -> Self {
        let n = m.n;
        let ns = m.sa.len();
        let nbr: Vec<GpuNbr> = m
            .incidence
            .entries
            .iter()
            .map(|&e| {
                let s = (e >> 1) as usize;
                let j = if e & 1 == 0 { m.sb[s] } else { m.sa[s] };
                GpuNbr { j, rest: m.rest[s] as f32, k: m.k[s] as f32, kd: m.kd[s] as f32 }
            })
            .collect();
        let csr = &m.incidence.offsets;
        let init = |label: &str, data: &[u8], usage: wgpu::BufferUsages| {
            let mut bytes = data.to_vec();
            bytes.resize(bytes.len().max(64), 0);
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: &bytes, usage })
        };
        let ro = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let state_bytes = (2 * n * 16) as u64;
        let packed = pack_state(m, x, v);
        let sv = wgpu::BufferUsages::VERTEX;
        let state = [
            init("springsim.state0", bytemuck::cast_slice(&packed), ro | wgpu::BufferUsages::COPY_SRC | sv),
            storage(device, "springsim.state1", state_bytes, sv),
        ];
        let groups = (n as u64).div_ceil(WORKGROUP_SIZE as u64);
        let entries = m.incidence.entries.len() as u64;
        let uni = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
        let mut tables: Vec<u32> = csr.clone();
        tables.extend_from_slice(&m.incidence.entries);
        for s in 0..ns {
            tables.extend_from_slice(&[m.sa[s], m.sb[s], (m.rest[s] as f32).to_bits(), (m.k[s] as f32).to_bits()]);
        }
        GpuState {
            n,
            n_springs: ns,
            params: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("springsim.params"),
                size: std::mem::size_of::<super::layout::GpuParams>() as u64,
                usage: uni,
                mapped_at_creation: false,
            }),
            nbr: init("springsim.nbr", bytemuck::cast_slice(&nbr), ro),
            csr: init("springsim.csr", bytemuck::cast_slice(csr), ro),
            state,
            tmp: [
                storage(device, "springsim.tmp0", state_bytes, wgpu::BufferUsages::empty()),
                storage(device, "springsim.tmp1", state_bytes, wgpu::BufferUsages::empty()),
            ],
            acc: storage(device, "springsim.acc", state_bytes, wgpu::BufferUsages::empty()),
            lin: storage(device, "springsim.lin", (3 * n * 16) as u64, wgpu::BufferUsages::empty()),
            blocks: storage(device, "springsim.blocks", 3 * entries * 16, wgpu::BufferUsages::empty()),
            flags: storage(device, "springsim.flags", 16, wgpu::BufferUsages::empty()),
            leu_pass: [0u32, 1].map(|p| init("springsim.leu_pass", bytemuck::bytes_of(&LeuPass { parity: p, _pad: [0; 3] }), uni)),
            y: [
                storage(device, "springsim.y0", (n * 16) as u64, wgpu::BufferUsages::empty()),
                storage(device, "springsim.y1", (n * 16) as u64, wgpu::BufferUsages::empty()),
            ],
            partials: storage(device, "springsim.partials", groups * 16, wgpu::BufferUsages::empty()),
            scalars: storage(device, "springsim.scalars", 16, wgpu::BufferUsages::empty()),
            imp_blocks: storage(device, "springsim.imp_blocks", 2 * entries * 16, wgpu::BufferUsages::empty()),
            imp_params: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("springsim.imp_params"),
                size: std::mem::size_of::<super::layout::ImplicitParams>() as u64,
                usage: uni,
                mapped_at_creation: false,
            }),
            cgv: storage(device, "springsim.cgv", (CG_VECTORS * n * 16) as u64, wgpu::BufferUsages::empty()),
            cg_partials: storage(device, "springsim.cg_partials", 3 * groups * 16, wgpu::BufferUsages::empty()),
            cg_state: storage(device, "springsim.cg_state", (CG_STATE_WORDS * 4) as u64, wgpu::BufferUsages::empty()),
            cg_pass: [0, 1].map(|_| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("springsim.cg_pass"),
                    size: std::mem::size_of::<super::layout::CgPass>() as u64,
                    usage: uni,
                    mapped_at_creation: false,
                })
            }),
            lg_tables: init("springsim.lg_tables", bytemuck::cast_slice(&tables), ro),
            lgv: storage(device, "springsim.lgv", (Self::lgv_len(n, ns) * 16) as u64, wgpu::BufferUsages::empty()),
            lg_consts: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("springsim.lg_consts"),
                size: std::mem::size_of::<super::layout::LgConsts>() as u64,
                usage: uni,
                mapped_at_creation: false,
            }),
            readback: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("springsim.readback"),
                size: state_bytes.max(64),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        }
    }

    /// `vec4`s of the local/global work buffer `lgv`: 3n Chebyshev iterates, n_springs directions, 2G
    /// partials and the report.
    pub fn lgv_len(n: usize, n_springs: usize) -> usize {
        3 * n + n_springs + 2 * n.div_ceil(WORKGROUP_SIZE as usize) + 1
    }

    /// Bytes of one state buffer.
    pub fn state_bytes(&self) -> u64 {
        (2 * self.n * 16).max(16) as u64
    }

    /// The byte range of the positions in `state[0]` (bind it as a vertex buffer of `vec4<f32>`).
    pub fn positions_range(&self) -> std::ops::Range<u64> {
        0..(self.n * 16) as u64
    }
}
