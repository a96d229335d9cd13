/*
 * Sanitizer check (negative): thread 0 loads a tile with TMA and waits for
 * its mbarrier; thread 32 reads the tile without waiting. Built with
 * simtcc --sanitize=thread, ThreadSanitizer must report a data race.
 */
#include <cuda.h>
#include <stdio.h>

#include "hopper.cuh"

__global__ void read_without_wait(const __grid_constant__ CUtensorMap map, float *out)
{
    __shared__ uint64_t bar;
    extern __shared__ __align__(1024) uint8_t tile[];
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_arrive_expect_tx(&bar, 64 * 8 * 2);
        tma_load_2d(tile, &map, 0, 0, &bar);
    }
    __syncthreads();
    if (threadIdx.x == 0) mbar_wait(&bar, 0);
    if (threadIdx.x == 32) out[0] = ((const uint16_t *)tile)[5]; /* no mbar_wait */
}

int main(void)
{
    uint16_t *g;
    float *out;
    cudaMalloc((void **)&g, 64 * 8 * 2);
    cudaMalloc((void **)&out, sizeof(float));
    cudaMemset(g, 0, 64 * 8 * 2);
    CUtensorMap map;
    cuuint64_t dims[2] = {64, 8}, strides[1] = {128};
    cuuint32_t box[2] = {64, 8}, es[2] = {1, 1};
    cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, g, dims, strides, box, es,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    read_without_wait<<<1, 64, 1024>>>(map, out);
    printf("tma_race: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
