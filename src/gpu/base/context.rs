//! A headless device for the CLI, the benchmarks and the tests. Embedding apps bring their own.

use crate::error::{Error, Result};

#[cfg(not(target_arch = "wasm32"))]
mod blocking;
#[cfg(not(target_arch = "wasm32"))]
pub use blocking::select_adapter;

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

/// [`select_adapter`] as a future (a browser page awaits it).
pub async fn select_adapter_async(instance: &wgpu::Instance) -> Result<wgpu::Adapter> {
    if let Ok(want) = std::env::var("WGPU_ADAPTER_NAME") {
        let want_l = want.to_lowercase();
        let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
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
    instance.request_adapter(&opts).await.map_err(|e| {
        let backend = std::env::var("WGPU_BACKEND").unwrap_or_else(|_| "all".into());
        Error::NoAdapter(format!("{e} (WGPU_BACKEND={backend}); on Linux install mesa-vulkan-drivers for lavapipe"))
    })
}

/// Which limits a headless device asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitsRequest {
    /// The adapter's own, so that large models fit (the default).
    #[default]
    Adapter,
    /// Exactly WebGPU's default limits ([`wgpu::Limits::defaults`]: 8 storage buffers per shader stage,
    /// 128 MiB a storage binding, 256 MiB a buffer, 4 bind groups, 65535 workgroups a dimension), what
    /// a browser grants a page that asks for nothing more: a native run under them shows that a model
    /// and a method fit a browser's WebGPU.
    WebGpuDefaults,
}

impl LimitsRequest {
    /// Parses a name: `adapter` or `webgpu`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "adapter" => Ok(LimitsRequest::Adapter),
            "webgpu" => Ok(LimitsRequest::WebGpuDefaults),
            _ => Err(Error::invalid("limits", s, crate::error::Bound::one_of("adapter, webgpu"))),
        }
    }

    /// The request named by `SPRINGSIM_LIMITS` (`adapter` or `webgpu`), [`LimitsRequest::Adapter`] when
    /// it is unset.
    pub fn from_env() -> Result<Self> {
        match std::env::var("SPRINGSIM_LIMITS") {
            Ok(s) => Self::parse(&s),
            Err(_) => Ok(LimitsRequest::Adapter),
        }
    }

    /// The limits to request from `adapter`.
    pub fn limits(self, adapter: &wgpu::Adapter) -> wgpu::Limits {
        match self {
            LimitsRequest::Adapter => adapter.limits(),
            LimitsRequest::WebGpuDefaults => wgpu::Limits::defaults(),
        }
    }
}

/// The device limits springsim asks for: the adapter's own, so that large models fit, or WebGPU's
/// defaults when `SPRINGSIM_LIMITS=webgpu` ([`LimitsRequest`]).
pub fn limits_for(adapter: &wgpu::Adapter) -> Result<wgpu::Limits> {
    Ok(LimitsRequest::from_env()?.limits(adapter))
}

impl GpuContext {
    /// A headless context on the adapter chosen by [`select_adapter`]. Waits for the device: not in a
    /// browser page, where [`GpuContext::request`] is the way.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn headless() -> Result<Self> {
        Self::headless_with(wgpu::Features::empty())
    }

    /// [`GpuContext::headless`] with the timestamp features the adapter has (`TIMESTAMP_QUERY`, and
    /// inside encoders and passes), for [`crate::gpu::GpuProbe::enable_timestamps`]; none requested that the
    /// adapter lacks, so this never fails for want of them.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn headless_with_timestamps() -> Result<Self> {
        Self::headless_with(
            wgpu::Features::TIMESTAMP_QUERY
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
        )
    }

    /// A headless context whose device has those of `wanted` features that the adapter offers, and
    /// the limits [`limits_for`] names.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn headless_with(wanted: wgpu::Features) -> Result<Self> {
        Self::headless_with_limits(wanted, LimitsRequest::from_env()?)
    }

    /// A context whose device has those of `wanted` features that the adapter offers and the limits
    /// `limits` names, as a future: what a browser page awaits (the other constructors wait on it).
    pub async fn request(wanted: wgpu::Features, limits: LimitsRequest) -> Result<Self> {
        let instance = instance_from_env();
        let adapter = select_adapter_async(&instance).await?;
        let desc = wgpu::DeviceDescriptor {
            label: Some("springsim"),
            required_limits: limits.limits(&adapter),
            required_features: wanted & adapter.features(),
            ..Default::default()
        };
        let (device, queue) = adapter.request_device(&desc).await.map_err(|e| Error::Device(e.to_string()))?;
        Ok(GpuContext { instance, adapter, device, queue })
    }

    /// The adapter's description, ending in `[WebGPU default limits]` when the device was asked for
    /// those ([`LimitsRequest::WebGpuDefaults`]) and the adapter's own are others.
    pub fn adapter_name(&self) -> String {
        let name = adapter_name(&self.adapter.get_info());
        let defaults = wgpu::Limits::defaults();
        if self.device.limits() == defaults && self.adapter.limits() != defaults {
            format!("{name} [WebGPU default limits]")
        } else {
            name
        }
    }
}
