// expect: dynamic initialization is not supported for a __constant__ variable
// A GPU variable whose initializer calls a function that is not constexpr:
// its value is part of the compiled module, so nvcc refuses it; the emulator
// would have called the function when the program started. Each line is one
// refusal (see test_simt_agreement.c).
#include <cmath>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__host__ __device__ float head_dim() { return 64.0f; }

__constant__ float softmax_scale = 0.125f * sqrtf(2.0f); // refused
__device__ float scale_of_head = 1.0f / sqrtf(head_dim()); // refused
__device__ float2 origin = make_float2(0.0f, 0.0f); // refused
__device__ float4 corner = make_float4(0.0f, 0.0f, 1.0f, 1.0f); // refused
__device__ __half one_half = __float2half(1.0f); // refused
__device__ __nv_bfloat16 one_bf16 = __float2bfloat16(1.0f); // refused
__device__ __half two_half = __half(2.0f); // refused
__device__ float eps{expf(-20.0f)}; // refused
__device__ float table[3] = {1.0f, logf(2.0f), 3.0f}; // refused
__managed__ int widest = max(32, 64); // refused
static __device__ float clip = fmaxf(0.0f, 1.0f); // refused
