/*
 * Emulator check (negative): shared-memory operands past their tile. The
 * first kernel's cp.async writes one 16-byte chunk past the end of the
 * launch's dynamic shared memory; the second's ldmatrix reads a row past a
 * static __shared__ tile. A GPU faults or reads another tile's bytes; the
 * emulator must stop each kernel with a message naming this file's line,
 * not write its own heap and die later in malloc.
 */
#include <stdint.h>
#include <stdio.h>

#include "warp_mma.cuh"

__global__ void copy_past_end(const float *src)
{
    extern __shared__ __align__(16) float dyn[];
    int t = threadIdx.x;
    cp_async_16(&dyn[4 * (t + 1)], &src[4 * t]); /* the last thread's chunk is past the end */
    cp_async_wait_all();
}

__global__ void ldmatrix_past_tile(uint32_t *out)
{
    __shared__ __align__(16) uint16_t tile[8 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 64; i += 32) tile[i] = (uint16_t)i;
    __syncwarp();
    uint32_t r[1];
    ldmatrix_x1(r, &tile[8 * (lane % 8 + 1)]); /* lane 7's row is the 9th of an 8-row tile */
    out[lane] = r[0];
}

/* One kernel a run, as a fault is sticky: "cp" (the default) or "ldmatrix". */
int main(int argc, char **argv)
{
    float *src;
    uint32_t *out;
    cudaMalloc((void **)&src, 256 * sizeof(float));
    cudaMalloc((void **)&out, 32 * sizeof(uint32_t));
    if (argc > 1 && argv[1][0] == 'l') {
        ldmatrix_past_tile<<<1, 32>>>(out);
        printf("ldmatrix_past_tile: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    } else {
        copy_past_end<<<1, 64, 64 * 16>>>(src);
        printf("copy_past_end: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    }
    return 0;
}
