//! The GPU engine's large buffers estimated from a model's counts alone (particles and springs), so that
//! a model too large for the device is refused before it is built: [`buffers`] lists them per method
//! with the bindings each may be split over ([`crate::gpu::base::alloc::SplitBuffer`]), [`check`] holds them to a
//! device's limits with the same one-line [`Error::BufferTooLarge`] that the allocator gives. The
//! estimate is the allocator's sizes for the counts (the incidence entries are two per spring); the
//! multigrid hierarchy, whose size depends on its coarsening, is checked when it is built.

use crate::error::{Error, Result};
use crate::gpu::base::alloc::split_bytes;
use crate::gpu::base::layout::CG_VECTORS;
use crate::gpu::base::options::GpuOptions;
use crate::gpu::base::state::NBR_SLOTS;
use crate::gpu::methods::implicit::BLOCK_SLOTS;
use crate::gpu::methods::local_global::integrator::{work_len, LOCAL_GLOBAL_SLOTS};
use crate::method::Method;

/// One buffer of the GPU engine: its label, its bytes, and the bindings it may be split over (1: it
/// must fit one binding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferNeed {
    /// The buffer's label (as the allocator names it).
    pub name: &'static str,
    /// Its bytes.
    pub bytes: u64,
    /// The bindings its kernels declare for it.
    pub slots: usize,
}

/// The large buffers of `method` on a model of `particles` and `springs`: the state's two ping-pong
/// buffers, the neighbour table and CSR offsets, and the method's own (intermediate states, blocks,
/// the PCG's vectors, local/global's tables, work vectors and directions). Buffers of O(1) bytes and
/// the per-workgroup partials are left out.
pub fn buffers(method: Method, particles: u64, springs: u64) -> Vec<BufferNeed> {
    let (n, s) = (particles, springs);
    let e = 2 * s;
    let need = |name, bytes, slots| BufferNeed { name, bytes, slots };
    let state = 2 * n * 16;
    let mut out = vec![need("springsim.state", state, 1), need("springsim.nbr", 16 * e, NBR_SLOTS), need("springsim.csr", 4 * (n + 1), 1)];
    let pcg = need("springsim.pcg_vectors", CG_VECTORS as u64 * n * 16, 1);
    match method {
        Method::Midpoint => out.push(need("springsim.tmp0", state, 1)),
        Method::Rk4 => out.extend([need("springsim.tmp0", state, 1), need("springsim.tmp1", state, 1), need("springsim.acc", state, 1)]),
        Method::Leu => out.extend([need("springsim.leu_lin", 3 * n * 16, 1), need("springsim.leu_blocks", 3 * e * 16, 1)]),
        Method::ImplicitEuler => out.extend([need("springsim.implicit_blocks", 2 * e * 16, BLOCK_SLOTS), pcg]),
        Method::LocalGlobal => out.extend([
            need("springsim.local_global_tables", 4 * (n + 1 + e + 4 * s), LOCAL_GLOBAL_SLOTS),
            need("springsim.local_global_work", work_len(n as usize) as u64 * 16, 1),
            need("springsim.local_global_dirs", 16 * s, 1),
            pcg,
        ]),
        Method::ExplicitEuler | Method::SymplecticEuler | Method::Newton => {}
    }
    out
}

/// Holds `needs` to a device's `limits` with the split size `options` give: a buffer of one binding to
/// `max_storage_buffer_binding_size` and `max_buffer_size`, a split one to its bindings × the split
/// size. The first that does not fit is an [`Error::BufferTooLarge`] naming it, its bytes and the limit.
pub fn check(limits: &wgpu::Limits, options: &GpuOptions, needs: &[BufferNeed]) -> Result<()> {
    let split = split_bytes(limits.max_storage_buffer_binding_size, options.max_binding_bytes());
    for b in needs {
        let too_large = |limit_name, limit| Error::BufferTooLarge { buffer: b.name.to_string(), bytes: b.bytes, limit_name, limit };
        if b.slots == 1 {
            if b.bytes > limits.max_storage_buffer_binding_size {
                return Err(too_large("max_storage_buffer_binding_size", limits.max_storage_buffer_binding_size));
            }
            if b.bytes > limits.max_buffer_size {
                return Err(too_large("max_buffer_size", limits.max_buffer_size));
            }
        } else {
            crate::gpu::base::alloc::check_split_bytes(b.name, b.bytes, split, b.slots)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 3000² cloth (9 M particles) is refused by its state (2n `vec4` = 288 MB) under WebGPU's
    /// default limits (128 MiB bindings), from its counts alone; the 1024² cloth fits every method's
    /// buffers once split.
    #[test]
    fn the_3000_cloth_is_refused_by_its_state_and_1024_fits() {
        let limits = wgpu::Limits::default();
        let cloth = |n: u64| (n * n, 6 * n * n - 10 * n + 2);
        let (n, s) = cloth(3000);
        let err = check(&limits, &GpuOptions::default(), &buffers(Method::SymplecticEuler, n, s)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "GPU buffer springsim.state needs 288000000 B, over the device's max_storage_buffer_binding_size of 134217728 B"
        );
        let (n, s) = cloth(1024);
        for m in [Method::SymplecticEuler, Method::ImplicitEuler, Method::LocalGlobal] {
            check(&limits, &GpuOptions::default(), &buffers(m, n, s)).unwrap();
        }
        // split over at most their bindings: at a 64 MiB split size the neighbour table (201 MB) needs 4
        let err =
            check(&limits, &GpuOptions::default().with_max_binding_bytes(64 << 20), &buffers(Method::ImplicitEuler, n, s)).unwrap_err();
        assert!(err.to_string().contains("springsim.nbr"), "{err}");
    }
}
