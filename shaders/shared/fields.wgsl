// The point force fields (model::PointField), shared by the force gather (shared/forces.wgsl) and the
// kernels that add the fields' acceleration themselves (local/global's local_global_inertia). Needs, in the
// including kernel: P (Params).

// The falloff φ(d) of code `code` at radius r (twin: reference::fields::falloff).
fn field_falloff(code: u32, r: f32, d: f32) -> f32 {
    switch code {
        case 1u: { return r * r / (d * d + r * r); }
        case 2u: { return max(1.0 - d / r, 0.0); }
        case 3u: {
            let t = min(d / r, 1.0);
            return 1.0 - t * t * (3.0 - 2.0 * t);
        }
        default: { return 1.0; }
    }
}

// The point fields at x (twin: reference::fields::field_accel): a point field −s φ(d)(x − c)/d, a
// vortex s φ(ρ) â × r⊥/ρ; zero outside a field's box and within EPS_LEN of its centre or axis.
fn field_accel(x: vec3<f32>) -> vec3<f32> {
    var a = vec3<f32>(0.0);
    for (var f = 0u; f < min(P.n_fields, MAX_FIELDS); f++) {
        let c = P.fields[4u * f];
        let ax = P.fields[4u * f + 1u];
        let lo = P.fields[4u * f + 2u];
        let hi = P.fields[4u * f + 3u];
        if (hi.w != 0.0 && (any(x < lo.xyz) || any(x > hi.xyz))) {
            continue;
        }
        let r = x - c.xyz;
        let rp = r - ax.xyz * dot(ax.xyz, r);
        let d = length(rp);
        if (d <= EPS_LEN) {
            continue;
        }
        let s = c.w * field_falloff(u32(lo.w), ax.w, d) / d;
        if (all(ax.xyz == vec3<f32>(0.0))) {
            a -= rp * s;
        } else {
            a += cross(ax.xyz, rp) * s;
        }
    }
    return a;
}
