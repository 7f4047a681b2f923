// The window's draw pipelines. Cloth and meshes: the simulation's position buffer bound as a vertex
// buffer (vec4, w = 1/m) with the normals of normals.wgsl, shaded two-sided. Strands and the spring
// view: screen-space ribbons, 6 vertices per segment, read from the same buffer as a storage buffer,
// coloured by strain (|x_a − x_b| − L)/L when asked.

struct Camera {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    light: vec4<f32>,      // direction towards the light
    // x: viewport width (px), y: height (px), z: ribbon width (px), w: strain colour scale (0: flat colour)
    viewport: vec4<f32>,
    front: vec4<f32>,      // cloth front colour
    back: vec4<f32>,       // cloth back colour
    line: vec4<f32>,       // flat line colour
}

@group(0) @binding(0) var<uniform> cam: Camera;

// The colours below are linear. An sRGB colour target encodes them as it stores them; a plain one (a
// browser's canvas offers no sRGB format) needs them encoded here: set by the pipeline
// (src/viewer/pipeline.rs) from the target's format.
override ENCODE_SRGB: bool = false;

// What a fragment returns for the linear colour `rgb`, opaque.
fn target_color(rgb: vec3<f32>) -> vec4<f32> {
    if (ENCODE_SRGB) {
        let c = clamp(rgb, vec3<f32>(0.0), vec3<f32>(1.0));
        let encoded = select(1.055 * pow(c, vec3<f32>(1.0 / 2.4)) - 0.055, 12.92 * c, c <= vec3<f32>(0.0031308));
        return vec4<f32>(encoded, 1.0);
    }
    return vec4<f32>(rgb, 1.0);
}

struct ClothOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) world: vec3<f32>,
}

@vertex
fn vs_cloth(@location(0) pos: vec4<f32>, @location(1) nrm: vec4<f32>) -> ClothOut {
    var o: ClothOut;
    o.clip = cam.view_proj * vec4<f32>(pos.xyz, 1.0);
    o.normal = nrm.xyz;
    o.world = pos.xyz;
    return o;
}

@fragment
fn fs_cloth(in: ClothOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var n = normalize(in.normal);
    var base = cam.front.rgb;
    if (!front) {
        n = -n;
        base = cam.back.rgb;
    }
    let l = normalize(cam.light.xyz);
    let v = normalize(cam.eye.xyz - in.world);
    // fabric, not plastic: a wrapped diffuse (light bleeds a little past the terminator), a broad and
    // faint highlight, and a sheen at grazing angles in the cloth's own colour
    let diffuse = max((dot(n, l) + 0.25) / 1.25, 0.0);
    let hv = normalize(l + v);
    let spec = pow(max(dot(n, hv), 0.0), 10.0) * 0.05;
    let sheen = pow(1.0 - max(dot(n, v), 0.0), 4.0) * 0.15;
    let rgb = base * (0.18 + 0.82 * diffuse + sheen) + vec3<f32>(spec);
    return target_color(rgb);
}

// The colliders as solids (spheres, capsules, boxes; src/viewer/solids.rs): a mesh in the colliders'
// placement at time 0, w = the collider's index; `solid_offsets` moves each by its path's offset now.
@group(1) @binding(4) var<storage, read> solid_offsets: array<vec4<f32>>;

@vertex
fn vs_solid(@location(0) pos: vec4<f32>, @location(1) nrm: vec4<f32>) -> ClothOut {
    var o: ClothOut;
    let p = pos.xyz + solid_offsets[u32(pos.w)].xyz;
    o.clip = cam.view_proj * vec4<f32>(p, 1.0);
    o.normal = nrm.xyz;
    o.world = p;
    return o;
}

// A matte grey with a soft sheen: the colliders read as solid props, not as cloth.
@fragment
fn fs_solid(in: ClothOut) -> @location(0) vec4<f32> {
    let n = normalize(in.normal);
    let l = normalize(cam.light.xyz);
    let v = normalize(cam.eye.xyz - in.world);
    let diffuse = max(dot(n, l), 0.0);
    let rim = pow(1.0 - max(dot(n, v), 0.0), 3.0) * 0.08;
    let base = vec3<f32>(0.46, 0.48, 0.52);
    return target_color(base * (0.25 + 0.75 * diffuse) + vec3<f32>(rim));
}

struct Seg {
    a: u32,
    b: u32,
    rest: f32,
    _pad: f32,
}

@group(1) @binding(0) var<storage, read> positions: array<vec4<f32>>;
@group(1) @binding(1) var<storage, read> segs: array<Seg>;

struct LineOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec3<f32>,
    @location(1) side: f32,   // −1 … 1 across the ribbon: shaded as a thin tube
}

fn strain_color(strain: f32) -> vec3<f32> {
    // blue (compressed) - white (rest) - red (stretched), saturating at ±viewport.w
    let t = clamp(strain / cam.viewport.w, -1.0, 1.0);
    if (t >= 0.0) {
        return mix(vec3<f32>(0.92, 0.92, 0.92), vec3<f32>(0.95, 0.1, 0.05), t);
    }
    return mix(vec3<f32>(0.92, 0.92, 0.92), vec3<f32>(0.1, 0.3, 0.95), -t);
}

@vertex
fn vs_line(@builtin(vertex_index) vid: u32) -> LineOut {
    let s = segs[vid / 6u];
    let corner = vid % 6u;
    let pa = positions[s.a].xyz;
    let pb = positions[s.b].xyz;
    let ca = cam.view_proj * vec4<f32>(pa, 1.0);
    let cb = cam.view_proj * vec4<f32>(pb, 1.0);
    // screen-space direction and its perpendicular (in pixels)
    let wa = max(ca.w, 1e-4);
    let wb = max(cb.w, 1e-4);
    let sa = ca.xy / wa * cam.viewport.xy * 0.5;
    let sb = cb.xy / wb * cam.viewport.xy * 0.5;
    var d = sb - sa;
    if (length(d) < 1e-6) {
        d = vec2<f32>(1.0, 0.0);
    }
    let perp = normalize(vec2<f32>(-d.y, d.x)) * cam.viewport.z * 0.5;
    // two triangles: (a-, b-, b+), (a-, b+, a+)
    var use_b = false;
    var side = -1.0;
    switch corner {
        case 0u: { use_b = false; side = -1.0; }
        case 1u: { use_b = true; side = -1.0; }
        case 2u: { use_b = true; side = 1.0; }
        case 3u: { use_b = false; side = -1.0; }
        case 4u: { use_b = true; side = 1.0; }
        default: { use_b = false; side = 1.0; }
    }
    var c = ca;
    if (use_b) {
        c = cb;
    }
    let off = perp * side / (cam.viewport.xy * 0.5) * c.w;
    var o: LineOut;
    o.clip = vec4<f32>(c.xy + off, c.z, c.w);
    o.side = side;
    if (cam.viewport.w > 0.0 && s.rest > 0.0) {
        let strain = (distance(pa, pb) - s.rest) / max(s.rest, 1e-12);
        o.color = strain_color(strain);
    } else {
        o.color = cam.line.rgb;
    }
    return o;
}

@fragment
fn fs_line(in: LineOut) -> @location(0) vec4<f32> {
    let shade = 0.35 + 0.65 * sqrt(max(1.0 - in.side * in.side, 0.0));
    return target_color(in.color * shade);
}

// The ground (a half-space collider) as a shaded, checkered quad: `plane` holds the unit normal n and
// the offset d of n·x = d; `center` a point on the plane (xyz) and the half-size (w). Drawn a hair
// below the plane so that cloth resting on it does not fight it for depth.
struct Ground {
    plane: vec4<f32>,
    center: vec4<f32>,
}

@group(1) @binding(2) var<uniform> ground: Ground;  // binding 2: group 1 of the ribbons uses 0 and 1

struct GroundOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) uv: vec2<f32>,
}

@vertex
fn vs_ground(@builtin(vertex_index) vid: u32) -> GroundOut {
    let n = ground.plane.xyz;
    // a tangent basis of the plane
    var t = vec3<f32>(1.0, 0.0, 0.0);
    if (abs(n.x) > 0.9) {
        t = vec3<f32>(0.0, 0.0, 1.0);
    }
    let e1 = normalize(cross(n, t));
    let e2 = cross(n, e1);
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0),
    );
    let uv = corners[vid % 6u] * ground.center.w;
    let p = ground.center.xyz + e1 * uv.x + e2 * uv.y - n * (0.002 * ground.center.w);
    var o: GroundOut;
    o.clip = cam.view_proj * vec4<f32>(p, 1.0);
    o.world = p;
    o.uv = uv;
    return o;
}

@fragment
fn fs_ground(in: GroundOut) -> @location(0) vec4<f32> {
    // 10 cm checks, fading out towards the quad's edge
    let c = floor(in.uv * 10.0);
    let check = select(0.30, 0.36, (i32(c.x) + i32(c.y)) % 2 == 0);
    let l = normalize(cam.light.xyz);
    let diffuse = max(dot(ground.plane.xyz, l), 0.0);
    let fade = 1.0 - smoothstep(0.6, 1.0, length(in.uv) / ground.center.w);
    let rgb = vec3<f32>(0.55, 0.58, 0.5) * check * (0.35 + 0.65 * diffuse);
    let bg = vec3<f32>(0.055, 0.06, 0.075);
    return target_color(mix(bg, rgb, fade));
}

// Pin markers: a disc PIN_PX pixels across (viewport.z holds the ribbon width, so the size is fixed
// here) on every pinned particle, read from the position buffer through the list of pins.
const PIN_PX: f32 = 11.0;

@group(1) @binding(3) var<storage, read> pins: array<u32>;

struct PinOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,   // −1 … 1 across the disc
}

@vertex
fn vs_pin(@builtin(vertex_index) vid: u32) -> PinOut {
    let p = positions[pins[vid / 6u]].xyz;
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0),
    );
    let uv = corners[vid % 6u];
    let c = cam.view_proj * vec4<f32>(p, 1.0);
    var o: PinOut;
    o.clip = vec4<f32>(c.xy + uv * PIN_PX / cam.viewport.xy * c.w, c.z, c.w);
    o.uv = uv;
    return o;
}

@fragment
fn fs_pin(in: PinOut) -> @location(0) vec4<f32> {
    let r = length(in.uv);
    if (r > 1.0) {
        discard;
    }
    // a light core in a dark ring: visible on the cloth, the ground and the background
    let core = vec3<f32>(1.0, 0.86, 0.25);
    let ring = vec3<f32>(0.08, 0.06, 0.02);
    return target_color(select(core, ring, r > 0.62));
}
