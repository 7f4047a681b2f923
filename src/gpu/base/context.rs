//! A headless device for the CLI, the benchmarks and the tests. Embedding apps bring their own.

use crate::error::{Error, Result};

/// An instance, adapter, device and queue.
pub struct GpuContext {
    /// The instance.
    pub instance: wgpu::Instance,
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// The queue.
    pub queue: wgpu::Queue,
}

/// A one-line description of an adapter.
pub fn adapter_name(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

/// An instance whose backends follow `WGPU_BACKEND` (e.g. `vulkan`, `metal`, `dx12`, `gl`).
pub fn instance_from_env() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

/// Picks an adapter: the first whose name contains `WGPU_ADAPTER_NAME` (case-insensitive) when it is
/// set, else the high-performance one (or `WGPU_POWER_PREF`).
pub fn select_adapter(instance: &wgpu::Instance) -> Result<wgpu::Adapter> {
    if let Ok(want) = std::env::var("WGPU_ADAPTER_NAME") {
        let want_l = want.to_lowercase();
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
        return adapters.into_iter().find(|a| a.get_info().name.to_lowercase().contains(&want_l)).ok_or_else(|| {
            Error::NoAdapter(format!("WGPU_ADAPTER_NAME={want} matches none of the adapters found: [{}]", names.join(", ")))
        });
    }
    let opts = wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::from_env().unwrap_or(wgpu::PowerPreference::HighPerformance),
        force_fallback_adapter: false,
        compatible_surface: None,
        ..Default::default()
    };
    pollster::block_on(instance.request_adapter(&opts)).map_err(|e| {
        let backend = std::env::var("WGPU_BACKEND").unwrap_or_else(|_| "all".into());
        Error::NoAdapter(format!("{e} (WGPU_BACKEND={backend}); on Linux install mesa-vulkan-drivers for lavapipe"))
    })
}

/// The device limits springsim asks for: the adapter's own, so that large models fit.
pub fn limits_for(adapter: &wgpu::Adapter) -> wgpu::Limits {
    adapter.limits()
}

impl GpuContext {
    /// A headless context on the adapter chosen by [`select_adapter`].
    pub fn headless() -> Result<Self> {
        Self::headless_with(wgpu::Features::empty())
    }

    /// [`GpuContext::headless`] with the timestamp features the adapter has (`TIMESTAMP_QUERY`, and
    /// inside encoders and passes), for [`crate::gpu::GpuEngine::enable_timestamps`]; none requested that the
    /// adapter lacks, so this never fails for want of them.
    pub fn headless_with_timestamps() -> Result<Self> {
        Self::headless_with(
            wgpu::Features::TIMESTAMP_QUERY
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
        )
    }

    /// A headless context whose device has those of `wanted` features that the adapter offers.
    pub fn headless_with(wanted: wgpu::Features) -> Result<Self> {
        let instance = instance_from_env();
        let adapter = select_adapter(&instance)?;
        let desc = wgpu::DeviceDescriptor {
            label: Some("springsim"),
            required_limits: limits_for(&adapter),
            required_features: wanted & adapter.features(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc)).map_err(|e| Error::Device(e.to_string()))?;
        Ok(GpuContext { instance, adapter, device, queue })
    }

    /// The adapter's description.
    pub fn adapter_name(&self) -> String {
        adapter_name(&self.adapter.get_info())
    }
}
