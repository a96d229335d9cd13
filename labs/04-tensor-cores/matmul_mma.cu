/*
 * Lab 04, step B: mma.sync m16n8k16 fed by ldmatrix from swizzled shared
 * memory, with a cp.async pipeline MMA_STAGES deep.
 *
 * Each block computes a 128 x 128 tile of C with eight warps in a 2 x 4
 * grid; each warp owns 64 x 32 of it: 4 x 4 mma tiles of 16 x 8, that is 64
 * fp32 accumulators per thread in registers. K is walked in steps of MMA_BK.
 * While the warps multiply one step out of shared memory, cp.async copies
 * for the next MMA_STAGES - 1 steps are already on their way from global
 * memory, so the load latency hides behind the tensor-core work.
 *
 * The PTX instructions (mma.sync, ldmatrix, cp.async) come from
 * common/warp_mma.cuh, which also documents the fragment layouts. Not here:
 * Hopper's TMA and wgmma (step C, matmul_wgmma.cu).
 * [[maybe_unused]] marks the variables the starter declares for the TODO
 * blocks: until they are written, nvcc -Werror would reject them as unused.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "lab.h"
#include "matmul_ladder.h"
#include "warp_mma.cuh"

#define MMA_BM 128
#define MMA_BN 128
#define MMA_BK 32
#define MMA_STAGES 3
#define MMA_WARPS_M 2
#define MMA_WARPS_N 4
#define MMA_THREADS (32 * MMA_WARPS_M * MMA_WARPS_N)
#define MMA_WARP_M (MMA_BM / MMA_WARPS_M) /* 64 rows of C per warp */
#define MMA_WARP_N (MMA_BN / MMA_WARPS_N) /* 32 columns of C per warp */
#define MMA_TILES_M (MMA_WARP_M / 16)     /* 4 mma tiles down */
#define MMA_TILES_N (MMA_WARP_N / 8)      /* 4 mma tiles across */
/* Shared memory of one stage, in bf16 elements: an A tile and a B tile. */
#define MMA_A_ELEMS (MMA_BM * MMA_BK)
#define MMA_B_ELEMS (MMA_BK * MMA_BN)
#define MMA_STAGE_ELEMS (MMA_A_ELEMS + MMA_B_ELEMS)
#define MMA_SMEM_BYTES (MMA_STAGES * MMA_STAGE_ELEMS * 2)

/*
 * Swizzled shared layouts. Both tiles are stored row by row in 16-byte
 * chunks of 8 bf16; the chunk index is XORed with a few bits of the row so
 * that the 8 rows one ldmatrix matrix reads fall into 8 different groups of
 * 4 banks (a group of banks is 16 bytes; 8 groups make the 128 bytes shared
 * memory serves per cycle).
 *
 * A tile, MMA_BM rows of MMA_BK = 32 bf16 (64 bytes, 4 chunks): two rows
 * fill one 128-byte line, so rows r and r + 2 would start in the same bank
 * group. Chunk c of row r goes to c ^ ((r / 2) % 4): bit 0 of r picks the
 * half line, the XOR spreads the pairs of rows over the 4 chunks.
 * B tile, MMA_BK rows of MMA_BN = 128 bf16 (256 bytes, 16 chunks): every row
 * starts in bank 0. Chunk c of row k goes to c ^ (k % 8).
 * Both return the element offset of chunk c of a row inside its tile.
 */
__device__ __forceinline__ int swz_a(int r, int c) {
    /* TODO(B1) begin */
    /* Task 4. Swizzle: chunk c of row r goes to c ^ ((r / 2) % 4). This
     * plain layout is correct but has 4-way bank conflicts in ldmatrix. */
    return r * MMA_BK + 8 * c;
    /* TODO(B1) end */
}
__device__ __forceinline__ int swz_b(int k, int c) {
    /* TODO(B1) begin */
    /* Task 4. Swizzle: chunk c of row k goes to c ^ (k % 8). This plain
     * layout is correct but has 8-way bank conflicts in ldmatrix. */
    return k * MMA_BN + 8 * c;
    /* TODO(B1) end */
}

/*
 * Start the copies of k-tile kt (columns kt * MMA_BK of A, rows of B) into
 * one stage. vec says whether 16-byte copies are legal: every row of A and
 * B must start on a 16-byte boundary, which needs K and N to be multiples
 * of 8 bf16 (and 16-byte-aligned base pointers). Then a chunk of 8 elements
 * is either wholly inside the matrix or wholly outside, and cp.async's
 * zero-fill form writes zeros for the outside ones (src_bytes = 0: nothing
 * is read). Otherwise each element is loaded and stored on its own, with
 * the same zeros past the edges: correct for any shape, slower.
 */
__device__ __forceinline__ void load_tile(uint16_t *As, uint16_t *Bs, const uint16_t *A,
                                                 const uint16_t *B, int M, int N, int K, int m0,
                                                 int n0, int kt, int vec) {
    [[maybe_unused]] int k0 = kt * MMA_BK;
    /* TODO(B2) begin */
    /* Task 5. Loop over the MMA_BM * MMA_BK / 8 chunks of the A tile, this
     * thread taking every MMA_THREADS-th from threadIdx.x: chunk id is row
     * id / (MMA_BK / 8), chunk id % (MMA_BK / 8); its destination is
     * As + swz_a(row, chunk). With vec: cp_async_16_zfill with 16 bytes when
     * the chunk is inside A, 0 bytes (zeros; pass A itself as the source)
     * when it is not. Without vec: 8 plain loads and stores, 0 outside A.
     * Then the same for the MMA_BK x MMA_BN tile of B with swz_b. */
    (void)As; (void)Bs; (void)A; (void)B; (void)M; (void)N; (void)K; (void)m0; (void)n0;
    (void)k0; (void)vec;
    /* TODO(B2) end */
}

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, row-major; A and B
 * bf16 bit patterns, C and the accumulation fp32. */
__global__ void __launch_bounds__(MMA_THREADS)
matmul_mma_kernel(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B,
                  float beta, float *C, int vec) {
    extern __shared__ __align__(128) uint16_t mma_smem[];
    [[maybe_unused]] int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    [[maybe_unused]] int wm = warp / MMA_WARPS_N, wn = warp % MMA_WARPS_N;
    [[maybe_unused]] int m0 = blockIdx.y * MMA_BM, n0 = blockIdx.x * MMA_BN;
    [[maybe_unused]] int ktiles = (K + MMA_BK - 1) / MMA_BK;
    [[maybe_unused]] float acc[MMA_TILES_M][MMA_TILES_N][4];
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    /* TODO(B3) begin */
    /* Task 6. The pipeline. Prologue: load_tile for k-tiles 0 ..
     * MMA_STAGES - 2 into stages 0 .. MMA_STAGES - 2, cp_async_commit_group()
     * after each (also when the k-tile does not exist). Main loop over kt:
     * cp_async_wait_group(MMA_STAGES - 2); __syncthreads(); load_tile for
     * k-tile kt + MMA_STAGES - 1 (if it exists) into stage
     * (kt + MMA_STAGES - 1) % MMA_STAGES; commit; then compute from stage
     * kt % MMA_STAGES: for each 16-wide ks, ldmatrix_x4 the MMA_TILES_M A
     * fragments (lane l gives row l % 16, chunk 2 ks + l / 16),
     * ldmatrix_x4_trans the B fragments two 8-column tiles at a time (lane l
     * gives k row 16 ks + l % 8 + 8 ((l / 8) % 2), the column chunk of tile
     * j + l / 16), and mma_m16n8k16_bf16_f32 every (i, j) pair into acc.
     * After the loop, cp_async_wait_all(). The README draws the mma fragments;
     * the lane addresses above are all the ldmatrix calls need. */
    (void)A; (void)B; (void)M; (void)N; (void)K; (void)vec; (void)lane; (void)wm; (void)wn;
    (void)m0; (void)n0; (void)ktiles;
    /* TODO(B3) end */

    /* TODO(B4) begin */
    /* Task 7. Write acc: acc[i][j][e] is row 16 i + lane / 4 (+ 8 for e >= 2),
     * column 8 j + 2 (lane % 4) + e % 2 of this warp's 64 x 32 piece. Store
     * alpha * acc + beta * C inside C only; with beta == 0 do not read C. */
    (void)acc; (void)alpha; (void)beta; (void)C;
    /* TODO(B4) end */
}

/* The tile sizes this file was compiled with, for the checks' edge cases. */
extern "C" void matmul_mma_tiles(int *bm, int *bn, int *bk) {
    *bm = MMA_BM;
    *bn = MMA_BN;
    *bk = MMA_BK;
}

/* Launch over all of C. A, B hold bf16 bit patterns on the device; C fp32.
 * Returns LAB_OK, LAB_BAD_ARGUMENT for a size below 1, or LAB_LAUNCH_FAILED. */
extern "C" int matmul_mma(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B,
                          float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* 16-byte copies need every row of A and B on a 16-byte boundary. */
    [[maybe_unused]] int vec = K % 8 == 0 && N % 8 == 0 && (uintptr_t)A % 16 == 0 && (uintptr_t)B % 16 == 0;
    /* TODO(B5) begin */
    /* Task 8. A grid of ceil(N / MMA_BN) x ceil(M / MMA_BM) blocks of
     * MMA_THREADS threads with MMA_SMEM_BYTES of dynamic shared memory
     * (exactly 48 KB at these sizes, which needs nothing more; with more
     * stages or larger tiles, call cudaFuncSetAttribute(...,
     * cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) first); pass vec;
     * check cudaGetLastError().
     * Then delete the lines below. */
    (void)alpha; (void)A; (void)B; (void)beta; (void)C; (void)vec;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(B5) end */
}
