// The workgroup reduction shared by the kernels that sum dot products (power iteration, the PCG, Liu's
// global step): each thread's vec4, summed over the workgroup by halving strides. Composed in (after
// the kernel file) by `compose` wherever a kernel calls `wg_reduce`.

var<workgroup> red: array<vec4<f32>, WG>;
var<workgroup> red_total: vec4<f32>;

// The workgroup's sum of v over its threads, the same in every thread (uniform).
fn wg_reduce(lid: u32, v: vec4<f32>) -> vec4<f32> {
    red[lid] = v;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            red[lid] += red[lid + stride];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        red_total = red[0];
    }
    return workgroupUniformLoad(&red_total);
}
