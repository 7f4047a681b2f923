//! Kernel specialization: the pipeline-overridable constants of `shaders/shared/forces.wgsl`, set per
//! pipeline from the model and the method, so that a kernel is compiled without the force terms the
//! model cannot produce. On lavapipe (masked SIMD) a branch that no invocation takes still costs its
//! whole body; removing the damping and external-field branches took the curtain's symplectic substep
//! from 2.47 to 0.75 ms there. The constants only remove code that would compute zero: the results are
//! the same.

use crate::gpu::base::state::GpuState;
use crate::method::Method;
use crate::reference::model::CpuModel;

/// Which of a model's split tables span more than one binding (see [`crate::gpu::base::alloc::SplitBuffer`]): the
/// pipeline constants `NBR_SPLIT` (`shaders/shared/forces.wgsl`) and, per kernel, those of its own
/// tables ([`split_constant`]). A kernel compiled with `false` for a table reads its first binding alone,
/// with no branch on the index: lavapipe runs the loads of every side of such a branch, which cost the
/// force gather 19% and the PCG's mat-vec 23% (measured on the 256² cloth). A table that fits one
/// binding is all in its first, so the results are the same; the shaders' defaults keep the branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splits {
    /// The incidence records (`nbr`, `nbr_1`).
    pub nbr: bool,
}

impl Splits {
    /// Every table split (the shaders' defaults: right for any model).
    pub const ALL: Splits = Splits { nbr: true };

    /// The tables of the state `st`.
    pub fn of(st: &GpuState) -> Self {
        Splits { nbr: st.nbr_parts > 1 }
    }

    /// The pipeline constants (`NBR_SPLIT`).
    pub fn constants(&self) -> [(&'static str, f64); 1] {
        [split_constant("NBR_SPLIT", if self.nbr { 2 } else { 1 })]
    }
}

/// The pipeline constant `name` of a split table held in `parts` bindings: 1 (branch on the index) when
/// it spans more than one, else 0.
pub fn split_constant(name: &'static str, parts: usize) -> (&'static str, f64) {
    (name, (parts > 1) as u8 as f64)
}

/// The second halves of each split table, by the constant that says whether the table is split: where
/// it is 0 the kernels never read them, and a layout per kernel ([`drop_unsplit_parts`]) leaves them
/// out.
pub const SPLIT_PARTS: [(&str, &[&str]); 3] =
    [("NBR_SPLIT", &["nbr_1"]), ("BLOCKS_SPLIT", &["blocks_1", "blocks_2", "blocks_3"]), ("TABLES_SPLIT", &["local_global_rows_1"])];

/// `src` with the bindings of the split parts that `constants` say are not split ([`SPLIT_PARTS`])
/// declared as one-element private arrays instead: the code that names them (behind the constant's
/// branch, never taken) still compiles, and no binding of theirs is counted against the device's
/// storage buffers per shader stage.
pub fn drop_unsplit_parts(src: &str, constants: &[(&str, f64)]) -> String {
    let mut out = src.to_string();
    for (constant, parts) in SPLIT_PARTS {
        if !constants.iter().any(|(c, v)| *c == constant && *v == 0.0) {
            continue;
        }
        for part in parts {
            let lines: Vec<String> = out
                .lines()
                .map(|line| {
                    let t = line.trim_start();
                    let declares = t.starts_with("@group(") && t.contains(" var<storage") && t.contains(&format!("> {part}: array<"));
                    match (declares, t.find(&format!("{part}: array<"))) {
                        (true, Some(at)) => {
                            let ty = t[at + part.len() + 2..].split(';').next().unwrap_or("").trim();
                            let elem = ty.strip_prefix("array<").and_then(|e| e.strip_suffix('>')).unwrap_or(ty);
                            format!("var<private> {part}: array<{elem}, 1>;")
                        }
                        _ => line.to_string(),
                    }
                })
                .collect();
            out = lines.join("\n");
        }
    }
    out
}

/// `src` with its parameter blocks (read-only storage bindings of one struct, not arrays) read as
/// uniforms instead, and their (group, binding): where a kernel binds more storage buffers than the
/// device allows, its parameters go to the uniform buffers, counted apart (12 per shader stage in
/// WebGPU). Natively they stay storage, for the reason [`crate::gpu::base::pipelines::params`] gives.
pub fn params_as_uniforms(src: &str) -> (String, Vec<(u32, u32)>) {
    let mut slots = Vec::new();
    let lines: Vec<String> = src
        .lines()
        .map(|line| {
            let t = line.trim_start();
            let Some(rest) = t.strip_prefix("@group(") else { return line.to_string() };
            let Some((decl, ty)) = rest.split_once(" var<storage, read> ").and_then(|(d, r)| r.split_once(':').map(|(_, ty)| (d, ty)))
            else {
                return line.to_string();
            };
            if ty.trim_start().starts_with("array<") {
                return line.to_string();
            }
            // decl: "G) @binding(B)"
            let number = |s: &str| s.chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse::<u32>().ok();
            let group = number(decl);
            let binding = decl.split_once("@binding(").and_then(|(_, b)| number(b));
            match (group, binding) {
                (Some(g), Some(b)) => {
                    slots.push((g, b));
                    line.replacen("var<storage, read>", "var<uniform>", 1)
                }
                _ => line.to_string(),
            }
        })
        .collect();
    (lines.join("\n"), slots)
}

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
    fn split_constants_keep_the_branch_only_for_a_table_over_several_bindings() {
        assert_eq!(split_constant("BLOCKS_SPLIT", 1), ("BLOCKS_SPLIT", 0.0));
        assert_eq!(split_constant("BLOCKS_SPLIT", 2), ("BLOCKS_SPLIT", 1.0));
        assert_eq!(split_constant("TABLES_SPLIT", 4), ("TABLES_SPLIT", 1.0));
        assert_eq!(Splits { nbr: false }.constants(), [("NBR_SPLIT", 0.0)]);
        assert_eq!(Splits::ALL.constants(), [("NBR_SPLIT", 1.0)]);
    }

    #[test]
    fn parameter_blocks_become_uniforms() {
        let src = "@group(0) @binding(0) var<storage, read> P: Params;\n@group(0) @binding(1) var<storage, read> nbr: array<Nbr>;\n@group(2) @binding(0) var<storage, read> K: LocalGlobalPass;";
        let (out, slots) = params_as_uniforms(src);
        assert_eq!(slots, vec![(0, 0), (2, 0)]);
        assert_eq!(out.lines().next(), Some("@group(0) @binding(0) var<uniform> P: Params;"));
        assert!(out.contains("var<storage, read> nbr: array<Nbr>;"));
    }

    #[test]
    fn unsplit_parts_become_private() {
        let src = "@group(0) @binding(8) var<storage, read> nbr_1: array<Nbr>;\n@group(0) @binding(9) var<storage, read_write> blocks_1: array<vec4<f32>>; // x";
        let out = drop_unsplit_parts(src, &[("NBR_SPLIT", 0.0), ("BLOCKS_SPLIT", 1.0)]);
        assert_eq!(out.lines().next(), Some("var<private> nbr_1: array<Nbr, 1>;"));
        assert!(out.contains("@binding(9) var<storage, read_write> blocks_1"), "{out}");
        let all = drop_unsplit_parts(src, &[("NBR_SPLIT", 0.0), ("BLOCKS_SPLIT", 0.0)]);
        assert_eq!(all.lines().nth(1), Some("var<private> blocks_1: array<vec4<f32>, 1>;"));
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
