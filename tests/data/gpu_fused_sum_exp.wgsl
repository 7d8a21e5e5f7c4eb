// rjax fused reduce_sum tree kernel: 2 operations
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> in0: array<f32>;
@group(0) @binding(2) var<storage, read> in1: array<f32>;
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;

fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn kept(x: f32) -> f32 {
    return x * select(1.0, 0.5, params[0] == 0u);
}

fn exp_xla(x0: f32) -> f32 {
    if (is_nan(x0)) {
        return x0;
    }
    let x = clamp(x0, (-87.80000305175781), 88.80000305175781);
    let n = clamp(floor(fma(x, 1.4426950216293335, 0.5)), -127.0, 127.0);
    let r0 = fma((-0.693359375), n, x);
    let r = fma(0.00021219444170128554, n, kept(r0));
    var p = 0.00019875691214110702;
    p = fma(p, r, 0.001398199936375022);
    p = fma(p, r, 0.008333452045917511);
    p = fma(p, r, 0.04166579619050026);
    p = fma(p, r, 0.1666666567325592);
    p = fma(p, r, 0.5);
    let e_r = 1.0 + fma(p, r * r, r);
    let two_n = bitcast<f32>(bitcast<u32>(n + 8388735.0) << 23u);
    let y = e_r * two_n;
    return select(y, 0.0, y < 1.1754943508222875e-38);
}

fn op0(x0: f32) -> f32 {
    return exp_xla(x0);
}

fn op1(x0: f32, x1: f32) -> f32 {
    return x0 * x1;
}

const FOLD = 4u;

alias Acc = f32;

fn identity() -> Acc {
    return bitcast<f32>(params[FOLD + 2u]);
}

fn combine(a: Acc, b: Acc) -> Acc {
    return a + b;
}

// The group's values at element `i` of its shape, its outputs stored there.
fn element(i: u32) -> Acc {
    let x0 = in0[params[2] + i];
    let x1 = in1[params[3] + i];
    let v0 = op0(x0);
    let v1 = op1(v0, x1);
    return v1;
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

var<workgroup> part: array<Acc, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let o = wg.y * groups.x + wg.x;
    let live = o < params[FOLD];
    let len = select(0u, params[FOLD + 1u], live);
    let base = select(0u, kept_base(o), live);
    var acc = identity();
    for (var j = lane; j < len; j = j + 256u) {
        acc = combine(acc, load(j, base + reduced_offset(j)));
    }
    part[lane] = acc;
    workgroupBarrier();
    for (var gap = 128u; gap > 0u; gap = gap / 2u) {
        if (lane < gap) {
            part[lane] = combine(part[lane], part[lane + gap]);
        }
        workgroupBarrier();
    }
    if (live && lane == 0u) {
        store(o, part[0]);
    }
}
