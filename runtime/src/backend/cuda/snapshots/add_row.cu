// rjax elementwise kernel: Binary(Add) of float32[same], float32[along axis 1] -> float32 (rank 2)
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
struct w128 {
    u64 lo, hi;
};

struct Params {
    u64 w[8];
};

extern "C" __global__ void rjax_kernel(const Params p, const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out0) {
    const u64 n = p.w[0];
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        u64 rest = i;
        const u64 c1 = rest % p.w[2];
        rest = rest / p.w[2];
        const u64 c0 = rest;
        const float x0 = in0[p.w[3] + i];
        const float x1 = in1[p.w[4] + c1 * p.w[7]];
        out0[p.w[5] + i] = x0 + x1;
    }
}
