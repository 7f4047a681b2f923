//! The one shape of the demo's render pipelines (the cloth, the ribbons, the ground, the solids, the
//! pins): entry points of the render module, a layout, vertex buffers, the primitive's culling, the
//! depth test, and the renderer's colour format and sample count.

/// What differs between the demo's render pipelines.
pub struct Spec<'a> {
    /// The label (`springsim.cloth`, …).
    pub label: &'a str,
    /// The pipeline layout.
    pub layout: &'a wgpu::PipelineLayout,
    /// The vertex and fragment entry points of the render module.
    pub entry: (&'a str, &'a str),
    /// The vertex buffers.
    pub buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    /// Back faces culled (closed solids) or drawn (two-sided cloth, ribbons, quads).
    pub cull_back: bool,
    /// Depth written, and the comparison (`Always`: drawn on top of everything).
    pub depth: (bool, wgpu::CompareFunction),
}

/// A vertex buffer of one `vec4<f32>` per vertex at shader location `loc` (0 or 1).
pub fn vec4s(loc: u32) -> wgpu::VertexBufferLayout<'static> {
    wgpu::VertexBufferLayout {
        array_stride: 16,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: if loc == 0 { &wgpu::vertex_attr_array![0 => Float32x4] } else { &wgpu::vertex_attr_array![1 => Float32x4] },
    }
}

/// The render module's `ENCODE_SRGB` constant for a colour target of `format`: on where the target
/// does not encode sRGB itself.
fn encode_srgb(format: wgpu::TextureFormat) -> [(&'static str, f64); 1] {
    [("ENCODE_SRGB", if format.is_srgb() { 0.0 } else { 1.0 })]
}

/// The colour a target of `format` is cleared to for the linear colour `c`: encoded by hand where the
/// format does not encode sRGB itself.
pub fn clear_color(format: wgpu::TextureFormat, c: [f64; 3]) -> wgpu::Color {
    let e = |x: f64| {
        if format.is_srgb() {
            x
        } else if x <= 0.0031308 {
            12.92 * x
        } else {
            1.055 * x.powf(1.0 / 2.4) - 0.055
        }
    };
    wgpu::Color { r: e(c[0]), g: e(c[1]), b: e(c[2]), a: 1.0 }
}

/// Builds the pipeline of `spec` from `module` for `format` (with `depth_format`) and `samples`.
pub fn build(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    (format, depth_format): (wgpu::TextureFormat, wgpu::TextureFormat),
    samples: u32,
    spec: Spec,
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(spec.label),
        layout: Some(spec.layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(spec.entry.0),
            compilation_options: Default::default(),
            buffers: spec.buffers,
        },
        primitive: wgpu::PrimitiveState { cull_mode: spec.cull_back.then_some(wgpu::Face::Back), ..Default::default() },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: depth_format,
            depth_write_enabled: Some(spec.depth.0),
            depth_compare: Some(spec.depth.1),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: wgpu::MultisampleState { count: samples, mask: !0, alpha_to_coverage_enabled: false },
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(spec.entry.1),
            compilation_options: wgpu::PipelineCompilationOptions { constants: &encode_srgb(format), ..Default::default() },
            targets: &[Some(wgpu::ColorTargetState { format, blend: None, write_mask: wgpu::ColorWrites::ALL })],
        }),
        multiview_mask: None,
        cache: None,
    })
}
