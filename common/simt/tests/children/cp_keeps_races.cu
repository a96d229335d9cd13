/*
 * Sanitizer check (negative): a race between two threads of a block (a
 * shared store and a neighbour's load, no barrier) with cp.async copies in
 * between. Each copy looks its destination up in the table of cudaMalloc
 * allocations; that lookup must not order the threads, or ThreadSanitizer
 * would miss the race. Built with simtcc --sanitize=thread, it must report
 * the load's line.
 */
#include <stdio.h>

#include "warp_mma.cuh"

__global__ void race_around_copies(const float *src, float *out)
{
    __shared__ float s[32];
    __shared__ __align__(16) float d[64];
    int t = threadIdx.x;
    s[t] = (float)t;
    cp_async_4(&d[t], &src[t]);
    cp_async_wait_all();
    cp_async_4(&d[32 + t], &src[t]);
    cp_async_wait_all();
    if (t > 0) out[t] = s[t - 1] + d[t]; /* no barrier: races with thread t - 1's store */
}

int main(void)
{
    float *src, *out;
    cudaMalloc((void **)&src, 64 * sizeof(float));
    cudaMalloc((void **)&out, 64 * sizeof(float));
    cudaMemset(src, 0, 64 * sizeof(float));
    race_around_copies<<<1, 32>>>(src, out);
    printf("cp_keeps_races: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
