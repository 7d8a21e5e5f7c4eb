// rjax elementwise kernel: Convert of float64[same] -> int8 (rank 1)
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
    u64 w[4];
};

extern "C" __global__ void rjax_kernel(const Params p, const double* __restrict__ in0, i8* __restrict__ out0) {
    const u64 n = p.w[0];
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const double x0 = in0[p.w[2] + i];
        out0[p.w[3] + i] = (i8)max((i64)(-128ll), min((i64)127ll, __double2ll_rz((double)x0)));
    }
}
