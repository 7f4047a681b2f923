//! Kauppila's adaptive step for implicit Euler (Kauppila, "Implicit Euler tutorial", §3.2.3): a step
//! that leaves a spring strained beyond the strain limit, or that changes a spring's length by more than
//! the step limit within the step (Bridson et al. 2002's 10%), is discarded and retaken with h/2; after
//! two accepted steps in a row h doubles again, never above the planned step. Below h_plan/2¹⁰ a step
//! is accepted as it is, so a frame always ends. The engines make the check (`implicit_strain`); this
//! module only decides.

/// The smallest step, as a fraction of the planned one, that the adaptive step still halves.
pub const MIN_FRACTION: f64 = crate::method::ADAPTIVE_MIN_FRACTION;

/// The adaptive step's state between frames, and the log of every step tried.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdaptiveStep {
    /// The step in use (0 before the first frame).
    h: f64,
    /// Accepted steps since the last halving or doubling.
    good_steps: usize,
    /// Every step tried so far: (h, accepted).
    log: Vec<(f64, bool)>,
}

/// What to do with a trial step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Keep it and advance the time.
    Accept,
    /// Discard it: the state stays, and the next trial is half as long.
    Retry,
}

impl AdaptiveStep {
    /// The step to try next with `remaining` seconds of the frame left, for the planned step `planned`.
    pub fn next_h(&mut self, planned: f64, remaining: f64) -> f64 {
        if self.h <= 0.0 || self.h > planned {
            self.h = planned;
        }
        self.h.min(remaining)
    }

    /// Judges a trial step of size `h` that did (`strained`) or did not strain a spring beyond the limit.
    pub fn judge(&mut self, h: f64, strained: bool, planned: f64) -> Verdict {
        if strained && h > planned * MIN_FRACTION {
            self.log.push((h, false));
            self.h = h * 0.5;
            self.good_steps = 0;
            return Verdict::Retry;
        }
        self.log.push((h, true));
        self.good_steps += 1;
        if self.good_steps >= 2 && self.h < planned {
            self.h = (self.h * 2.0).min(planned);
            self.good_steps = 0;
        }
        Verdict::Accept
    }

    /// Starts again from the planned step (after a new plan or method).
    pub fn reset(&mut self) {
        self.h = 0.0;
        self.good_steps = 0;
    }

    /// Adds steps tried elsewhere (the GPU's adaptive frame, from its report) to the log.
    pub fn record(&mut self, tried: &[(f64, bool)]) {
        self.log.extend_from_slice(tried);
    }

    /// Every step tried so far: (h, accepted).
    pub fn log(&self) -> &[(f64, bool)] {
        &self.log
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_on_strain_and_doubles_after_two_good_steps() {
        let mut a = AdaptiveStep::default();
        let planned = 0.04;
        assert_eq!(a.next_h(planned, 1.0), 0.04);
        assert_eq!(a.judge(0.04, true, planned), Verdict::Retry);
        assert_eq!(a.next_h(planned, 1.0), 0.02);
        assert_eq!(a.judge(0.02, true, planned), Verdict::Retry);
        assert_eq!(a.next_h(planned, 1.0), 0.01);
        assert_eq!(a.judge(0.01, false, planned), Verdict::Accept);
        assert_eq!(a.next_h(planned, 1.0), 0.01, "one good step keeps h");
        assert_eq!(a.judge(0.01, false, planned), Verdict::Accept);
        assert_eq!(a.next_h(planned, 1.0), 0.02, "two good steps double h");
        assert_eq!(a.next_h(planned, 0.005), 0.005, "the frame's end caps the step");
        assert_eq!(a.log(), &[(0.04, false), (0.02, false), (0.01, true), (0.01, true)]);
    }

    #[test]
    fn accepts_below_the_floor_and_never_exceeds_the_plan() {
        let mut a = AdaptiveStep::default();
        let planned = 1.0;
        let tiny = planned * MIN_FRACTION;
        a.next_h(planned, 10.0);
        assert_eq!(a.judge(tiny, true, planned), Verdict::Accept, "at the floor a strained step is kept");
        for _ in 0..40 {
            let h = a.next_h(planned, 10.0);
            a.judge(h, false, planned);
        }
        assert_eq!(a.next_h(planned, 10.0), planned);
        a.reset();
        assert_eq!(a.next_h(0.5, 10.0), 0.5);
    }
}
