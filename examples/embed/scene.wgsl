// The host application's own shaders (examples/embed.rs): its lit scenery (a checkered ground and a
// box) and the springsim cloth, drawn straight from springsim's position buffer bound as a vertex
// buffer (vec4<f32> per particle, w = 1/m, unused here). The cloth's normals are flat per triangle,
// from the screen-space derivatives of the world position, turned towards the eye (two-sided).

struct Camera {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    // direction towards the light (unit)
    light: vec4<f32>,
}

@group(0) @binding(0) var<uniform> camera: Camera;

// Lambert with an ambient term; colours are linear (the target is sRGB).
fn lit(albedo: vec3<f32>, normal: vec3<f32>) -> vec3<f32> {
    return albedo * (0.3 + 0.7 * max(dot(normal, camera.light.xyz), 0.0));
}

struct SceneryOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    // rgb: albedo, a: 1 for a checker pattern (the ground), 0 for a plain colour
    @location(2) albedo: vec4<f32>,
}

@vertex
fn vs_scenery(@location(0) position: vec3<f32>, @location(1) normal: vec3<f32>, @location(2) albedo: vec4<f32>) -> SceneryOut {
    var out: SceneryOut;
    out.clip = camera.view_proj * vec4<f32>(position, 1.0);
    out.world = position;
    out.normal = normal;
    out.albedo = albedo;
    return out;
}

@fragment
fn fs_scenery(in: SceneryOut) -> @location(0) vec4<f32> {
    var albedo = in.albedo.rgb;
    if (in.albedo.a > 0.5) {
        // 25 cm tiles
        let tile = floor(in.world.xz * 4.0);
        if ((i32(tile.x) + i32(tile.y)) % 2 == 0) {
            albedo = albedo * 0.7;
        }
    }
    return vec4<f32>(lit(albedo, normalize(in.normal)), 1.0);
}

struct ClothOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
}

@vertex
fn vs_cloth(@location(0) particle: vec4<f32>) -> ClothOut {
    var out: ClothOut;
    out.clip = camera.view_proj * vec4<f32>(particle.xyz, 1.0);
    out.world = particle.xyz;
    return out;
}

@fragment
fn fs_cloth(in: ClothOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var normal = normalize(cross(dpdx(in.world), dpdy(in.world)));
    if (dot(normal, camera.eye.xyz - in.world) < 0.0) {
        normal = -normal;
    }
    // one hue, a lighter front and a darker back
    var albedo = vec3<f32>(0.80, 0.16, 0.07);
    if (!front) {
        albedo = vec3<f32>(0.55, 0.09, 0.05);
    }
    return vec4<f32>(lit(albedo, normal), 1.0);
}
