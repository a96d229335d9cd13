// A kernel and its launch in a header, as a kernel ladder keeps them.
#pragma once
#include <cuda_runtime.h>

__global__ void reverse_tile(const float *a, float *b)
{
    __shared__ float t[128];
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    t[threadIdx.x] = a[threadIdx.x] + (float)(lane != threadIdx.x % 32);
    __syncthreads();
    b[threadIdx.x] = t[127 - threadIdx.x];
}

static inline void run_reverse_tile(const float *a, float *b) { reverse_tile<<<1, 128>>>(a, b); }
