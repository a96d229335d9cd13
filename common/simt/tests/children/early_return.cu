/*
 * Emulator check (negative): lanes 24-31 return before an ldmatrix, a
 * warp-wide (.aligned) instruction that every lane must execute. The
 * emulator fails the launch and names the ldmatrix's line (17).
 */
#include <stdint.h>
#include <stdio.h>

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

int main(void)
{
    float *out;
    cudaMalloc((void **)&out, 32 * sizeof(float));
    early_return<<<1, 32>>>(out);
    printf("early_return: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
