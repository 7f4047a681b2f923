// The workgroup reduction shared by the kernels that sum dot products (power iteration, the PCG, Liu's
// global step): each thread's vec4, summed over the workgroup in two stages. Composed in (after
// the kernel file) by `compose` wherever a kernel calls `wg_reduce`.

var<workgroup> red: array<vec4<f32>, WG>;
var<workgroup> red_total: vec4<f32>;

// The lanes that sum the workgroup's values in the second stage, RED_CHUNK values each (WG a multiple of it).
const RED_LANES: u32 = 8u;
const RED_CHUNK: u32 = WG / RED_LANES;

// The workgroup's sum of v over its threads, the same in every thread (uniform). Two stages (RED_LANES
// lanes sum RED_CHUNK values each, then one lane sums theirs) instead of a halving tree: three barriers
// instead of log2(WG) + 1, which is what costs on lavapipe (with the PCG's two sums in one reduction, the
// curtain's implicit frame went 46–58 → 27–34 ms there).
fn wg_reduce(lid: u32, v: vec4<f32>) -> vec4<f32> {
    red[lid] = v;
    workgroupBarrier();
    if (lid < RED_LANES) {
        var s = red[lid * RED_CHUNK];
        for (var k = 1u; k < RED_CHUNK; k++) {
            s += red[lid * RED_CHUNK + k];
        }
        red[lid * RED_CHUNK] = s;
    }
    workgroupBarrier();
    if (lid == 0u) {
        var s = red[0];
        for (var k = 1u; k < RED_LANES; k++) {
            s += red[k * RED_CHUNK];
        }
        red_total = s;
    }
    return workgroupUniformLoad(&red_total);
}
