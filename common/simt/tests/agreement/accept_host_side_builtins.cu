// What host code may call of CUDA's built-ins: half and bfloat16 arithmetic
// and conversions, the math functions nvcc has on both sides (rsqrtf,
// normcdff) and the C library's clock; a GPU built-in under
// #ifdef __CUDA_ARCH__ in a __host__ __device__ function; and, in a template,
// a call whose arguments depend on its parameters (nvcc checks that one per
// instantiation, and lets it pass).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <ctime>

float host_half_math(float x)
{
    __half h = __float2half(x);
    __half m = __hmax(__hadd(h, h), __hmul(h, h));
    __nv_bfloat16 b = __float2bfloat16(x);
    return __half2float(m) + __bfloat162float(__hadd(b, b)) + rsqrtf(x) + normcdff(x) + (float)clock();
}

__host__ __device__ float fast_exp(float x)
{
#ifdef __CUDA_ARCH__
    return __expf(x);
#else
    return expf(x);
#endif
}

template <typename T> T load(const T *p) { return __ldg(p); }

int host_load(const int *p) { return load(p); }
