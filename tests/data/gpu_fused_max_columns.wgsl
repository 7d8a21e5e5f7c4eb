// rjax fused reduce_max loop kernel: 1 operations
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> in0: array<f32>;
@group(0) @binding(2) var<storage, read> in1: array<f32>;
@group(0) @binding(3) var<storage, read_write> out0: array<f32>;
@group(0) @binding(4) var<storage, read_write> dst: array<f32>;

fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn max_f32(a: f32, b: f32) -> f32 {
    return select(a, b, !is_nan(a) & (is_nan(b) | (b > a)));
}

fn op0(x0: f32, x1: f32) -> f32 {
    return x0 - x1;
}

const FOLD = 8u;

alias Acc = f32;

fn identity() -> Acc {
    return bitcast<f32>(params[FOLD + 2u]);
}

fn combine(a: Acc, b: Acc) -> Acc {
    return max_f32(a, b);
}

// The group's values at element `i` of its shape, its outputs stored there.
fn element(i: u32) -> Acc {
    var rest = i;
    let c1 = rest % params[2];
    rest = rest / params[2];
    let c0 = rest;
    let x0 = in0[params[3] + i];
    let x1 = in1[params[4] + c1 * params[7]];
    let v0 = op0(x0, x1);
    out0[params[5] + i] = v0;
    return v0;
}

fn kept_base(o: u32) -> u32 {
    let kr = params[FOLD + 3u];
    var rest = o;
    var at = 0u;
    for (var k = kr; k > 0u; k = k - 1u) {
        let extent = params[FOLD + 4u + k];
        at = at + (rest % extent) * params[FOLD + 4u + kr + k];
        rest = rest / extent;
    }
    return at;
}

fn reduced_offset(j: u32) -> u32 {
    let first = FOLD + 5u + 2u * params[FOLD + 3u];
    let rr = params[FOLD + 4u];
    var rest = j;
    var at = 0u;
    for (var k = rr; k > 0u; k = k - 1u) {
        let extent = params[first + k - 1u];
        at = at + (rest % extent) * params[first + rr + k - 1u];
        rest = rest / extent;
    }
    return at;
}

fn load(j: u32, at: u32) -> Acc {
    return element(at);
}

fn store(o: u32, acc: Acc) {
    dst[o] = acc;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let o = (wg.y * groups.x + wg.x) * 256u + lane;
    if (o >= params[FOLD]) {
        return;
    }
    let base = kept_base(o);
    var acc = identity();
    for (var j = 0u; j < params[FOLD + 1u]; j = j + 1u) {
        acc = combine(acc, load(j, base + reduced_offset(j)));
    }
    store(o, acc);
}
