/*
 * Emulator check (negative): a 16-byte cp.async from a source 4 bytes past
 * a 16-byte boundary. A GPU stops the kernel with a misaligned address; the
 * emulator must too, and its message must name this file's line of the
 * cp.async (reached through the course header's inline wrapper).
 */
#include <stdio.h>

#include "warp_mma.cuh"

__global__ void copy_misaligned(const float *src, float *out)
{
    __shared__ __align__(16) float s[256];
    int t = threadIdx.x;
    cp_async_16(&s[4 * t], &src[4 * t + 1]); /* every source is 4 bytes off */
    cp_async_wait_all();
    __syncthreads();
    out[t] = s[4 * t];
}

int main(void)
{
    float *src, *out;
    cudaMalloc((void **)&src, 512 * sizeof(float));
    cudaMalloc((void **)&out, 64 * sizeof(float));
    copy_misaligned<<<1, 64>>>(src, out);
    printf("cp_misaligned: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
