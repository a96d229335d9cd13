// Device intrinsics and math of CUDA 13 that a student's kernel may use.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void intrinsics(const float *__restrict__ a, float *__restrict__ o, unsigned *u, __half *h,
                           __nv_bfloat16 *b)
{
    int i = threadIdx.x;
    unsigned m = __activemask();
    float x = __ldg(a + i) + __ldcg(a + i) + __ldcs(a + i);
    x += __shfl_xor_sync(m, x, 1) + __shfl_down_sync(m, x, 2) + __shfl_up_sync(m, x, 1) + __shfl_sync(m, x, 0);
    unsigned v = __ballot_sync(m, x > 1.0f) + __match_any_sync(m, i & 3) + (unsigned)__reduce_add_sync(m, i);
    v += __brev(i) + __popc(i) + __clz(i) + __ffs(i) + __byte_perm(i, 3, 0x0123) + __funnelshift_l(i, 1, 3);
    v += (unsigned)__hadd(i, 3) + (unsigned)__rhadd(i, 3) + __uhadd(v, 3u) + __urhadd(v, 3u) + __dp4a(i, 3, 1);
    x += __fdividef(x, 3.0f) + __expf(x) + __saturatef(x) + rsqrtf(2.0f) + __frsqrt_rn(2.0f) + __fsqrt_rn(2.0f);
    x += __fadd_rz(x, 1.0f) + __fmul_rd(x, 2.0f) + normcdff(0.1f) + normcdfinvf(0.9f) + erfinvf(0.5f);
    float s, c;
    sincospif(x, &s, &c);
    __sincosf(x, &s, &c);
    x += s + c + __int_as_float(__float_as_int(1.0f)) + (float)__float2int_rn(x);
    __half2 h2 = __floats2half2_rn(1.0f, 2.0f);
    h2 = h2exp(h2rcp(__hfma2(h2, h2, h2)));
    __nv_bfloat162 b2 = h2floor(__floats2bfloat162_rn(1.5f, 2.5f));
    x += __low2float(h2) + __high2float(b2) + __half2float(hexp2(h[i])) + __bfloat162float(hrint(b[i]));
    atomicAdd(o, x);
    atomicAdd(h, __float2half(1.0f));
    atomicAdd(b, __float2bfloat16(1.0f));
    atomicMax(u, v);
    __builtin_assume(i >= 0);
    __syncwarp(m);
    o[i] = x + (float)v;
}
