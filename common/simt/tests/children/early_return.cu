/*
 * Emulator check (negative): lanes 24-31 return before an ldmatrix, a
 * warp-wide (.aligned) instruction that every lane must execute. The
 * emulator fails the launch and names the ldmatrix's line (22) and a lane
 * that reached it. "diverge": with the full mask, half of a warp calls
 * __shfl_sync (line 30) and the other half __ballot_sync (line 32); the
 * failure names both lines and a thread of the second half. The same
 * intrinsic from two lines passes: CUDA asks for the same intrinsic and mask.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "warp_mma.cuh"

__global__ void early_return(float *out)
{
    __shared__ __align__(16) uint16_t s[16 * 16];
    int lane = threadIdx.x;
    if (lane >= 24) return; /* wrong: these lanes must take part below */
    uint32_t r[4];
    ldmatrix_x4(r, &s[(lane & 15) * 16 + (lane >> 4) * 8]);
    out[lane] = (float)r[0];
}

__global__ void diverge(float *out)
{
    float v = (float)threadIdx.x;
    if (threadIdx.x < 16)
        v = __shfl_sync(0xffffffffu, v, 0);
    else
        v = (float)__ballot_sync(0xffffffffu, v > 20.0f); /* wrong: another intrinsic, the same mask */
    out[threadIdx.x] = v;
}

int main(int argc, char **argv)
{
    float *out;
    cudaMalloc((void **)&out, 32 * sizeof(float));
    if (argc > 1 && !strcmp(argv[1], "diverge")) {
        diverge<<<1, 32>>>(out);
        printf("diverge: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
        return 0;
    }
    early_return<<<1, 32>>>(out);
    printf("early_return: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
