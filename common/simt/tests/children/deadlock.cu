/*
 * Emulator check (negative): half of a block's threads wait at a barrier
 * that the other half skips, and those wait at a warp shuffle for lanes
 * that never come. A GPU hangs or gives garbage; the emulator reports a
 * deadlock, and says where each group waits: line 16 and line 18.
 */
#include <stdio.h>

#include <cuda_runtime.h>

__global__ void barrier_in_divergent_code(int *out)
{
    int t = threadIdx.x;
    if (t < 16) {
        out[t] = t;
        __syncthreads(); /* only threads 0-15 get here */
    } else {
        out[t] = __shfl_sync(0xffffffffu, t, 0); /* waits for lanes 0-15, stuck at the barrier */
    }
}

int main(void)
{
    int *out;
    cudaMalloc((void **)&out, 32 * sizeof(int));
    barrier_in_divergent_code<<<1, 32>>>(out);
    printf("deadlock: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
