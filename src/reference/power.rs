//! Power iteration for k₀ = λ_max(M⁻¹K) (Shinya §3): the deterministic start vector that the CPU engine
//! and the GPU's `power_matvec` share, so both iterate from the same vector.

/// The deterministic start vector shared with the GPU: a hash of the index, in [−0.5, 0.5).
pub fn power_start(i: usize, c: usize) -> f64 {
    let h = ((3 * i + c) as u32).wrapping_add(1).wrapping_mul(2_654_435_761u32);
    let h = (h ^ (h >> 16)).wrapping_mul(2_246_822_519u32);
    (h >> 8) as f64 / (1u32 << 24) as f64 - 0.5
}
