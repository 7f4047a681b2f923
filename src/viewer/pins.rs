//! Pin markers: a small ringed disc on every pinned particle, drawn on top of the scene. The vertex
//! shader (`vs_pin` in `shaders/render.wgsl`) reads each marker's position straight from the
//! simulation's position buffer through an index list of the pinned particles: the list is uploaded
//! when the model is set or a pin is toggled, nothing is copied per frame. The disc is `PIN_PX` (11)
//! pixels across.

use wgpu::util::DeviceExt;

/// The pipeline and its bind group layout (group 1: positions at binding 0, the pin list at 3).
pub struct PinPipeline {
    layout: wgpu::BindGroupLayout,
    pipe: wgpu::RenderPipeline,
}

/// One model's pin list, bound to its position buffer.
pub struct PinList {
    bg: wgpu::BindGroup,
    count: u32,
}

impl PinList {
    /// How many markers it draws.
    pub fn count(&self) -> u32 {
        self.count
    }
}

impl PinPipeline {
    /// Builds the pipeline from the render module, with the camera's layout as group 0.
    pub fn new(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        cam_layout: &wgpu::BindGroupLayout,
        (format, depth_format): (wgpu::TextureFormat, wgpu::TextureFormat),
        samples: u32,
    ) -> Self {
        let ro = wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: None,
        };
        let entry = |binding| wgpu::BindGroupLayoutEntry { binding, visibility: wgpu::ShaderStages::VERTEX, ty: ro, count: None };
        let layout = device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("springsim.pins"), entries: &[entry(0), entry(3)] });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("springsim.pins"),
            bind_group_layouts: &[Some(cam_layout), Some(&layout)],
            immediate_size: 0,
        });
        // on top of everything: a pin sits on the cloth and would be half hidden in it
        let spec = super::pipeline::Spec {
            label: "springsim.pins",
            layout: &pl,
            entry: ("vs_pin", "fs_pin"),
            buffers: &[],
            cull_back: false,
            depth: (false, wgpu::CompareFunction::Always),
        };
        let pipe = super::pipeline::build(device, module, (format, depth_format), samples, spec);
        PinPipeline { layout, pipe }
    }

    /// The list of `pins` (particle indices) read from `positions`; `None` without pins.
    pub fn list(&self, device: &wgpu::Device, positions: wgpu::BufferBinding, pins: &[u32]) -> Option<PinList> {
        if pins.is_empty() {
            return None;
        }
        let buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("springsim.pin_list"),
            contents: bytemuck::cast_slice(pins),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("springsim.pins"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::Buffer(positions) },
                wgpu::BindGroupEntry { binding: 3, resource: buf.as_entire_binding() },
            ],
        });
        Some(PinList { bg, count: pins.len() as u32 })
    }

    /// Draws the markers (6 vertices each) into `pass`, whose group 0 is the camera.
    pub fn draw(&self, pass: &mut wgpu::RenderPass, list: &PinList) {
        pass.set_pipeline(&self.pipe);
        pass.set_bind_group(1, &list.bg, &[]);
        pass.draw(0..list.count * 6, 0..1);
    }
}
