//! A frame's picture: the scene drawn from the simulation's buffers and the egui panel over it,
//! recorded into the host's encoder. The window (`app`) and the browser page (web/) both draw this
//! way, onto their surface's texture or any other target.

use super::overlay::{self, Action, OverlayState};
use super::Demo;
use crate::Simulator;

/// The egui panel's context and its wgpu renderer.
pub struct Panel {
    /// The egui context (the window's input state holds a clone of it).
    pub ctx: egui::Context,
    /// Draws egui's triangles with wgpu.
    pub renderer: egui_wgpu::Renderer,
    /// Textures egui freed in the last picture: destroyed at the next, once that one was submitted.
    freed: Vec<egui::TextureId>,
}

impl Panel {
    /// A panel that draws into targets of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let renderer = egui_wgpu::Renderer::new(device, format, egui_wgpu::RendererOptions::default());
        Panel { ctx: egui::Context::default(), renderer, freed: Vec::new() }
    }
}

/// What recording a picture gave besides the commands in the host's encoder.
pub struct Picture {
    /// egui's buffer uploads, to be submitted before the encoder's commands.
    pub uploads: Vec<wgpu::CommandBuffer>,
    /// What the panel's controls asked for (a scene, a method, a reset), to act on after the submit.
    pub actions: Vec<Action>,
    /// egui's requests to the platform (the cursor's shape, a copied text).
    pub platform_output: egui::PlatformOutput,
}

impl Demo {
    /// Records the scene and, over it, the panel run on `raw` input into `encoder`, drawing into
    /// `view` (`w`×`h`, the renderer's format, sRGB or not). Records only: the host submits `uploads`
    /// and then its encoder, presents if it draws to a surface, then calls [`Demo::after_submit`].
    #[allow(clippy::too_many_arguments)] // the panel, its input and the host's encoder and target
    pub fn encode_picture(
        &mut self,
        panel: &mut Panel,
        overlay_state: &mut OverlayState,
        raw: egui::RawInput,
        encoder: &mut wgpu::CommandEncoder,
        view: &wgpu::TextureView,
        (w, h): (u32, u32),
    ) -> Picture {
        // the last picture's commands are submitted: what egui freed there can go now
        for id in std::mem::take(&mut panel.freed) {
            panel.renderer.free_texture(&id);
        }
        let mut actions = Vec::new();
        let mut out = panel.ctx.run_pass(raw, |ctx| actions = overlay::show(ctx, self, overlay_state));
        let jobs = panel.ctx.tessellate(std::mem::take(&mut out.shapes), out.pixels_per_point);
        let screen = egui_wgpu::ScreenDescriptor { size_in_pixels: [w, h], pixels_per_point: out.pixels_per_point };
        for (id, deltas) in &out.textures_delta.set {
            for delta in deltas {
                panel.renderer.update_texture(&self.device, &self.queue, *id, delta);
            }
        }
        self.renderer.set_camera(&self.queue, &self.camera, w, h, &self.draw);
        self.renderer.set_collider_time(&self.queue, self.sim.time());
        self.renderer.encode(&self.device, encoder, &self.sim, view, w, h, &self.draw);
        let uploads = panel.renderer.update_buffers(&self.device, &self.queue, encoder, &jobs, &screen);
        {
            let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("springsim.overlay"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations { load: wgpu::LoadOp::Load, store: wgpu::StoreOp::Store },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            let mut pass = pass.forget_lifetime();
            panel.renderer.render(&mut pass, &jobs, &screen);
        }
        // destroyed at the next picture: the commands recorded here may still use them
        panel.freed = out.textures_delta.free.drain().collect();
        out.textures_delta.clear(); // applied above (epaint asserts that no delta is dropped unapplied)
        Picture { uploads, actions, platform_output: out.platform_output }
    }
}
