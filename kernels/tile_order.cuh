/**
 * @file tile_order.cuh
 * @brief Which tile of C a block computes: grouped rasterisation, shared by
 * lab 04's step B (mma.sync) and step C (wgmma) kernels.
 *
 * The GPU starts blocks in the order of their linear index,
 * blockIdx.y * gridDim.x + blockIdx.x. Handed tiles row by row, the ~132
 * blocks that run at once on an H100 or H200 cover about 4 rows of tiles and
 * every column, so all of B streams in from DRAM again for each wave of
 * blocks. Handed tiles column by column inside groups of group_m rows of
 * tiles instead, one wave shares group_m row panels of A and a few column
 * panels of B; neighbours read the same panels at nearly the same k, so L2
 * serves the repeats (at 8192^3 with 16 rows per group, about 65 MB read
 * from DRAM per wave instead of about 136 MB).
 */
#ifndef COURSE_TILE_ORDER_CUH
#define COURSE_TILE_ORDER_CUH

#include <cuda_runtime.h>

/**
 * @brief The origin of the tile of C this block computes, in grouped order.
 * The grid has one block per tile: gridDim.x = ceil(N / bn) columns of
 * tiles, gridDim.y = ceil(M / bm) rows. The last group has fewer rows when
 * gridDim.y is not a multiple of group_m.
 * @param group_m rows of tiles per group (16 in lab 04)
 * @param bm rows of C per tile
 * @param bn columns of C per tile
 * @param m0 written: the tile's first row of C
 * @param n0 written: the tile's first column of C
 */
__device__ __forceinline__ void grouped_tile_origin(int group_m, int bm, int bn, int *m0, int *n0) {
    int tiles_n = gridDim.x, tiles_m = gridDim.y;
    int id = blockIdx.y * tiles_n + blockIdx.x;
    int per_group = group_m * tiles_n;
    int first = id / per_group * group_m;
    int rows = tiles_m - first < group_m ? tiles_m - first : group_m;
    int in = id % per_group;
    *m0 = (first + in % rows) * bm;
    *n0 = in / rows * bn;
}

#endif
