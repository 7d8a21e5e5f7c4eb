// rjax elementwise kernel: Binary(Add) of float32[same], float32[along axis 1] -> float32 (rank 2)
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> in0: array<f32>;
@group(0) @binding(2) var<storage, read> in1: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let i = (wg.y * groups.x + wg.x) * 256u + lane;
    if (i >= params[0]) {
        return;
    }
    var rest = i;
    let c1 = rest % params[2];
    rest = rest / params[2];
    let c0 = rest;
    let x0 = in0[params[3] + i];
    let x1 = in1[params[4] + c1 * params[7]];
    out[params[5] + i] = x0 + x1;
}
