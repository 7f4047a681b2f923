//! Host memory, checked before it is taken: what a model and an engine's structures will need,
//! estimated from their sizes, against what the machine has free, so that a model too large for the
//! machine is refused with one line ([`Error::HostMemory`]) instead of an abort in the allocator.
//!
//! The estimates count the large arrays (per particle and per spring) and leave out what is O(1); they
//! are meant to be within a small factor, which is what matters for a model that either fits with room
//! to spare or does not fit by orders of magnitude.

use crate::error::{Error, Result};

/// An environment variable that caps the memory [`available`] reports (bytes): for tests, and for a
/// host application that wants springsim to stay within a budget of its own.
pub const LIMIT_ENV: &str = "SPRINGSIM_HOST_MEMORY";

/// The bytes the process may still take: the smaller of `SPRINGSIM_HOST_MEMORY` (when set) and the
/// kernel's `MemAvailable` (Linux); `None` where neither is known (the checks then pass).
pub fn available() -> Option<u64> {
    let cap = std::env::var(LIMIT_ENV).ok().and_then(|s| s.trim().parse::<u64>().ok());
    let free = mem_available();
    match (cap, free) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A `kB` field of `/proc/self/status` (Linux), in bytes.
fn status_field(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// This process's resident memory now (`VmRSS`, Linux; `None` elsewhere).
pub fn resident() -> Option<u64> {
    status_field("VmRSS:")
}

/// This process's peak resident memory (`VmHWM`, Linux; `None` elsewhere), since it started or since
/// [`reset_peak_resident`].
pub fn peak_resident() -> Option<u64> {
    status_field("VmHWM:")
}

/// Starts the peak of [`peak_resident`] again from the current resident memory (Linux ≥ 4.0: `5` into
/// `/proc/self/clear_refs`); whether it could.
pub fn reset_peak_resident() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuses `bytes` for `what` when they exceed [`available`].
pub fn check(what: &str, bytes: u64) -> Result<()> {
    check_against(what, bytes, available())
}

/// [`check`] against `available` bytes (`None`: unknown, and the check passes).
pub fn check_against(what: &str, bytes: u64, available: Option<u64>) -> Result<()> {
    match available {
        Some(free) if bytes > free => Err(Error::HostMemory { what: what.to_string(), bytes, available: free }),
        _ => Ok(()),
    }
}

/// Bytes of one [`crate::model::Spring`] (two `u32` ends, rest length, k, k_d; a test holds it to the
/// type).
pub const SPRING_BYTES: u64 = 32;

/// Bytes of a [`crate::model::Model`] with `particles`, `springs` and `triangles`: positions,
/// velocities, masses and pins; the springs (two indices, rest length, k, k_d); the triangles.
pub fn model_bytes(particles: u64, springs: u64, triangles: u64) -> u64 {
    particles * (24 + 24 + 8 + 1) + springs * SPRING_BYTES + triangles * 12
}

/// Bytes of the f64 model every engine lays out ([`crate::reference::model::CpuModel`]): masses and
/// inverse masses, the spring table (ends, rest length, k, k_d), the CSR incidence lists.
pub fn cpu_model_bytes(particles: u64, springs: u64) -> u64 {
    particles * (8 + 8 + 4) + springs * (4 + 4 + 8 + 8 + 8) + 2 * springs * 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_over_what_is_free_is_refused_with_both_figures() {
        let e = check_against("the test's array", 5000, Some(1000)).unwrap_err();
        assert!(matches!(e, Error::HostMemory { bytes: 5000, available: 1000, .. }), "{e}");
        assert!(check_against("a small one", 999, Some(1000)).is_ok());
        assert!(check_against("anything", u64::MAX, None).is_ok(), "unknown memory: no refusal");
        let line = e.to_string();
        assert!(!line.contains('\n') && line.contains("the test's array") && line.contains("5000 B"), "{line}");
    }

    #[test]
    fn the_spring_size_is_the_type_s() {
        assert_eq!(std::mem::size_of::<crate::model::Spring>() as u64, SPRING_BYTES);
    }
}
