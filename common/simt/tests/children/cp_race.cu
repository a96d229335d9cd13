/*
 * Sanitizer check (negative): each thread refills its element of a shared
 * tile by cp.async before the barrier that ends the reads of that tile, then
 * reads its neighbour's element. On a GPU the neighbour's copy may land in
 * the middle of that read. Built with simtcc --sanitize=thread,
 * ThreadSanitizer must report a data race on the read.
 */
#include <stdio.h>

#include "warp_mma.cuh"

__global__ void refill_before_barrier(const float *src, float *out)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    cp_async_4(&s[t], &src[t]);
    cp_async_wait_all();
    __syncthreads();
    cp_async_4(&s[t], &src[64 + t]); /* too early: neighbours still read s */
    cp_async_commit_group();
    out[t] = s[(t + 1) % 64];
    cp_async_wait_all();
}

int main(void)
{
    float *src, *out;
    cudaMalloc((void **)&src, 128 * sizeof(float));
    cudaMalloc((void **)&out, 64 * sizeof(float));
    cudaMemset(src, 0, 128 * sizeof(float));
    refill_before_barrier<<<1, 64>>>(src, out);
    printf("cp_race: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
