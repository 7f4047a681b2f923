//! The engine's side of the cost model: the shape of its planned frame ([`GpuEngine::frame_shape`])
//! and the model of it ([`GpuEngine::cost_model`], see [`crate::gpu::profiling::cost_model`]), to set beside what
//! it counted ([`GpuEngine::cost`]).

use super::GpuEngine;
use crate::gpu::methods::integrator::Integrator;
use crate::gpu::profiling::cost_model::{frame_model, CostModel, FrameShape};
use crate::method::Method;

impl GpuEngine {
    /// The shape of a planned frame of the current method, plan and settings: what
    /// [`GpuEngine::encode_frame`] records (implicit Euler's trial steps off: set `trial` for the
    /// adaptive step's blocking path). Local/global's solver as last prepared.
    pub fn frame_shape(&self) -> FrameShape {
        let m = &self.model;
        let s = &self.settings;
        let (global, multigrid, multigrid_update) = match &self.integrator {
            Integrator::LocalGlobal(lg) => (lg.global().or(s.global.resolve(Method::LocalGlobal).ok()), lg.multigrid_shape(), None),
            Integrator::Implicit(i) => match i.multigrid_shape() {
                Some((vcycle, update)) => (None, Some(vcycle), Some(update)),
                None => (None, None, None),
            },
            _ => (None, None, None),
        };
        let (pcg_reduce, pcg_groups) = match &self.integrator {
            Integrator::LocalGlobal(lg) => (lg.pcg_reduces(m.n), lg.pcg_groups(m.n)),
            Integrator::Implicit(im) => (im.pcg_reduces(m.n), im.pcg_groups(m.n)),
            _ => (false, 0),
        };
        FrameShape {
            method: Some(self.method),
            n: m.n as u64,
            springs: m.end_a.len() as u64,
            entries: m.incidence.entries.len() as u64,
            colliders: self.colliders.as_ref().map_or(0, |_| m.colliders.len() as u64),
            moving_pins: self.colliders.as_ref().map_or(0, |_| m.moving_pins.len() as u64),
            self_collision_passes: self.self_collider.as_ref().map_or(0, |_| m.self_collision.map_or(0, |s| s.passes as u64)),
            wind_entries: m.aero.map(|_| m.tri.others.len() as u64),
            steps: self.plan.substeps as u64,
            strain_passes: self.strain.as_ref().map_or(0, |s| s.passes() as u64),
            relinearize_every: self.plan.relinearize_every as u64,
            cg_iterations: s.cg_max_iterations as u64,
            trial: false,
            lg_iterations: s.lg_iterations as u64,
            global,
            global_iterations: s.global_iterations as u64,
            multigrid,
            pcg_reduce,
            pcg_groups: pcg_groups as u64,
            multigrid_update,
            lg_rows: match &self.integrator {
                Integrator::LocalGlobal(lg) => Some(lg.rows()),
                _ => None,
            },
        }
    }

    /// The cost model of a planned frame ([`GpuEngine::frame_shape`]): its kernels with their
    /// dispatches, workgroups and estimated bytes, its passes, and the floor.
    pub fn cost_model(&self) -> CostModel {
        frame_model(&self.frame_shape())
    }
}
