//! Kernel specialization: the pipeline-overridable constants of `shaders/shared/forces.wgsl`, set per
//! pipeline from the model and the method, so that a kernel is compiled without the force terms the
//! model cannot produce. On lavapipe (masked SIMD) a branch that no invocation takes still costs its
//! whole body; removing the damping and external-field branches made the curtain's symplectic substep
//! several times faster (BENCHMARKS, twelfth session). The constants only remove code that would compute
//! zero: the results are the same.

use crate::method::Method;
use crate::reference::model::CpuModel;

/// Which optional force terms a force-gathering kernel keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForceFeatures {
    /// Damping along the springs (some k_d ≠ 0) or the method's Rayleigh term (α may be ≠ 0).
    pub spring_damping: bool,
    /// The central field or point fields.
    pub external_fields: bool,
}

impl ForceFeatures {
    /// Every term kept (the shader's defaults).
    pub const ALL: ForceFeatures = ForceFeatures { spring_damping: true, external_fields: true };

    /// The terms that model `m` stepped by `method` can produce. The model's springs and fields do not
    /// change after the engine is built; α depends on the step, so any method with a Rayleigh term keeps
    /// the damping branch.
    pub fn of(m: &CpuModel, method: Method) -> Self {
        ForceFeatures {
            spring_damping: m.kd.iter().any(|&kd| kd != 0.0) || method.has_rayleigh(),
            external_fields: m.central_strength != 0.0 || !m.fields.is_empty(),
        }
    }

    /// The pipeline constants (`SPRING_DAMPING`, `EXTERNAL_FIELDS`).
    pub fn constants(&self) -> [(&'static str, f64); 2] {
        [("SPRING_DAMPING", self.spring_damping as u8 as f64), ("EXTERNAL_FIELDS", self.external_fields as u8 as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Falloff, Field, Forces};

    fn chain(kd: f64) -> crate::Model {
        let mut m = crate::Model::new(Forces::default());
        let a = m.add_particle([0.0; 3], 1.0);
        let b = m.add_particle([1.0, 0.0, 0.0], 1.0);
        m.add_spring(a, b, 10.0, kd);
        m
    }

    #[test]
    fn features_follow_the_model_and_the_method() {
        let plain = CpuModel::new(&chain(0.0)).unwrap();
        let f = ForceFeatures::of(&plain, Method::SymplecticEuler);
        assert_eq!(f, ForceFeatures { spring_damping: false, external_fields: false });
        assert_eq!(f.constants(), [("SPRING_DAMPING", 0.0), ("EXTERNAL_FIELDS", 0.0)]);
        // a method with a Rayleigh term keeps the damping branch even without k_d
        assert!(ForceFeatures::of(&plain, Method::ExplicitEuler).spring_damping);
        assert!(ForceFeatures::of(&plain, Method::Rk4).spring_damping);
        assert!(!ForceFeatures::of(&plain, Method::ImplicitEuler).spring_damping);
        let damped = CpuModel::new(&chain(0.5)).unwrap();
        assert!(ForceFeatures::of(&damped, Method::SymplecticEuler).spring_damping);
        let mut central = chain(0.0);
        central.forces.central = Some(([0.0; 3], 2.0));
        assert!(ForceFeatures::of(&CpuModel::new(&central).unwrap(), Method::SymplecticEuler).external_fields);
        let mut fields = chain(0.0);
        fields.fields.push(Field::point([0.0; 3], 1.0, Falloff::Constant));
        assert!(ForceFeatures::of(&CpuModel::new(&fields).unwrap(), Method::SymplecticEuler).external_fields);
        assert_eq!(ForceFeatures::ALL.constants(), [("SPRING_DAMPING", 1.0), ("EXTERNAL_FIELDS", 1.0)]);
    }
}
