//! The headless context's calls that wait: the adapter and the device requested and waited for (not
//! in a browser page, which awaits [`super::select_adapter_async`] and [`GpuContext::request`]).

use super::{select_adapter_async, GpuContext, LimitsRequest};
use crate::error::Result;

/// Picks an adapter: the first whose name contains `WGPU_ADAPTER_NAME` (case-insensitive) when it is
/// set, else the high-performance one (or `WGPU_POWER_PREF`). Waits for the adapter: not in a browser
/// page, where [`select_adapter_async`] is the way.
pub fn select_adapter(instance: &wgpu::Instance) -> Result<wgpu::Adapter> {
    pollster::block_on(select_adapter_async(instance))
}

impl GpuContext {
    /// A headless context whose device has those of `wanted` features that the adapter offers, and the
    /// limits `limits` names (e.g. [`LimitsRequest::WebGpuDefaults`], to prove a model fits a browser).
    pub fn headless_with_limits(wanted: wgpu::Features, limits: LimitsRequest) -> Result<Self> {
        pollster::block_on(Self::request(wanted, limits))
    }
}
