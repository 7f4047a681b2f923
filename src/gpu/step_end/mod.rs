//! The passes at the end of every GPU step, in one place and one order for every driver (the recorded
//! frame, implicit Euler's trial step, local/global's host-driven frame): the moving pins placed on
//! their paths, Provot's strain limiting, self-collision, then the colliders (obstacles win). The CPU
//! engine's twin is `cpu::collide::finish_step`.

pub mod collide;
pub mod self_collision;
pub mod strain_limit;
pub mod wind;

use crate::gpu::profiling::cost::CountedPass;
use crate::gpu::step_end::collide::Colliders;
use crate::gpu::step_end::self_collision::SelfCollider;
use crate::gpu::step_end::strain_limit::StrainLimiter;

/// What a model records at the end of a step (each `None` when the model does not use it).
#[derive(Clone, Copy, Default)]
pub struct StepEnd<'a> {
    /// Strain limiting.
    pub strain: Option<&'a StrainLimiter>,
    /// Self-collision.
    pub self_collider: Option<&'a SelfCollider>,
    /// The colliders and the moving pins.
    pub colliders: Option<&'a Colliders>,
}

impl StepEnd<'_> {
    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.strain.is_none() && self.self_collider.is_none() && self.colliders.is_none()
    }

    /// Records the end of a step on `state[q]` (n particles) with step slot `slot`'s placements.
    pub fn encode(&self, pass: &mut CountedPass, q: usize, n: usize, slot: usize) {
        if let Some(c) = self.colliders {
            c.encode_pins(pass, q, slot);
        }
        if let Some(sl) = self.strain {
            sl.encode(pass, q, n);
        }
        if let Some(sc) = self.self_collider {
            sc.encode(pass, q);
        }
        if let Some(c) = self.colliders {
            c.encode(pass, q, n, slot);
        }
    }
}
