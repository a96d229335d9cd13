/*
 * Sanitizer check (negative): the last thread's cp.async reads one float
 * past the end of its source allocation. The emulator moves the bytes at
 * the wait; built with simtcc --sanitize=address, AddressSanitizer must
 * report the overflow at the cp.async's own line, not at the wait.
 */
#include <stdio.h>

#include "warp_mma.cuh"

__global__ void copy_past_end(const float *src, float *out)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    cp_async_4(&s[t], &src[t + 1]); /* thread 63 reads src[64]: one past the end */
    cp_async_wait_all();
    __syncthreads();
    out[t] = s[t];
}

int main(void)
{
    float *src, *out;
    cudaMalloc((void **)&src, 64 * sizeof(float));
    cudaMalloc((void **)&out, 64 * sizeof(float));
    cudaMemset(src, 0, 64 * sizeof(float));
    copy_past_end<<<1, 64>>>(src, out);
    printf("cp_oob: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
