//! The GPU engine's interaction calls: a particle moved, pinned or freed where it is (the window's mouse
//! drag and pin toggle), and the cursor spring. Each is a queue write before the next submit; the CPU
//! twins are [`crate::cpu::CpuEngine::set_particle`] and [`crate::cpu::CpuEngine::set_cursor`].

use super::GpuEngine;
use crate::error::{Bound, Error, Result};
use crate::gpu::methods::integrator::Integrator;

impl GpuEngine {
    /// Overwrites one particle's position and velocity and pins or frees it (w = 1/m or 0), without
    /// touching the rest of the state: the window's mouse drag (a kinematic position constraint) and
    /// pin toggle. The CPU twin is [`crate::cpu::CpuEngine::set_particle`]. Queued before the next
    /// submit, so it takes effect at the start of the next frame.
    pub(crate) fn set_particle(&mut self, i: usize, x: [f64; 3], v: [f64; 3], pinned: bool) -> Result<()> {
        let n = self.model.n;
        if i >= n {
            return Err(Error::invalid("particle", i, Bound::index(n)));
        }
        let w = if pinned { 0.0 } else { 1.0 / self.model.mass[i] };
        let pin_was = self.model.inv_mass[i] == 0.0;
        self.model.inv_mass[i] = w;
        let v = if pinned { [0.0; 3] } else { v };
        let xr = [x[0] as f32, x[1] as f32, x[2] as f32, w as f32];
        let vr = [v[0] as f32, v[1] as f32, v[2] as f32, 0.0f32];
        self.state.counters.write_buffer(&self.queue, &self.state.state[0], (i * 16) as u64, bytemuck::bytes_of(&xr));
        self.state.counters.write_buffer(&self.queue, &self.state.state[0], ((n + i) * 16) as u64, bytemuck::bytes_of(&vr));
        self.integrator.relinearize();
        if (w == 0.0) != pin_was {
            // local/global: the free set changed, and the global matrix with it (a new symbolic
            // factorisation, or ρ again, before the next frame); moving a pinned particle only moves the
            // right-hand side, which the GPU reads from the state
            if let Integrator::LocalGlobal(lg) = &mut self.integrator {
                lg.mark_stale();
            }
        }
        Ok(())
    }

    /// Whether particle `i` is pinned now (w = 0).
    pub(crate) fn is_pinned(&self, i: usize) -> bool {
        self.model.inv_mass.get(i).is_some_and(|&w| w == 0.0)
    }

    /// Sets or clears the cursor spring (the explicit methods' and LEU's mouse drag,
    /// [`crate::model::Cursor`]; [`crate::model::Cursor::stable`] picks a stiffness the planned step
    /// stays stable with). The implicit methods keep it but do not apply it (they drag by a position
    /// constraint, [`GpuEngine::set_particle`]). Queued before the next submit. CPU twin:
    /// [`crate::cpu::CpuEngine::set_cursor`].
    pub(crate) fn set_cursor(&mut self, cursor: Option<crate::model::Cursor>) -> Result<()> {
        if let Some(c) = &cursor {
            c.validate(self.model.n)?;
        }
        self.cursor = cursor;
        self.integrator.relinearize();
        self.write_params();
        Ok(())
    }

    /// The cursor spring set by [`GpuEngine::set_cursor`].
    pub(crate) fn cursor(&self) -> Option<crate::model::Cursor> {
        self.cursor
    }
}
