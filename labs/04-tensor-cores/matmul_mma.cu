/*
 * Lab 04, step B: mma.sync m16n8k16 fed by ldmatrix from swizzled shared
 * memory, with a cp.async pipeline MMA_STAGES deep.
 *
 * Each block computes a 128 x 256 tile of C with eight warps in a 2 x 4
 * grid; each warp owns 64 x 64 of it: 4 x 8 mma tiles of 16 x 8, that is 128
 * fp32 accumulators per thread in registers. A square warp tile gets the
 * most mma work out of each fragment ldmatrix brings in (per 16-wide slice
 * of K: 8 ldmatrix.x4 for 32 mma; 64 x 32 needs 6 for 16), and shared
 * memory is the first limit of mma.sync: at 128 bytes per cycle per SM, a
 * 128 x 128 block of 64 x 32 warps moves 32 KB (ldmatrix reads, cp.async
 * writes) per 16-wide slice, 256 cycles for 0.5 MFLOP, at most ~2000 FLOP
 * per cycle; this tile moves 44 KB for 1 MFLOP, ~3000 FLOP per cycle.
 * K is walked in steps of MMA_BK. While the warps multiply one step
 * out of shared memory, cp.async copies for the next MMA_STAGES - 1 steps
 * are already on their way from global memory, so the load latency hides
 * behind the tensor-core work.
 *
 * The tile sizes can be changed at compile time (-DMMA_BM=256 -DMMA_BN=128
 * -DMMA_WARPS_M=4 -DMMA_WARPS_N=2, -DMMA_BK=32, -DMMA_STAGES=4, ...; make's
 * LAB_DEFS passes them), for a sweep on a GPU; the static_asserts below say
 * which combinations work. The default's 144 KB of shared memory fits an
 * A100, H100 or H200 (up to 163 or 227 KB per block); GPUs with 99 KB per
 * block (RTX 30, 40 series) need -DMMA_BK=32 (72 KB).
 *
 * The PTX instructions (mma.sync, ldmatrix, cp.async) come from
 * common/warp_mma.cuh, which also documents the fragment layouts. Not here:
 * Hopper's TMA and wgmma (step C, matmul_wgmma.cu).
 * [[maybe_unused]] marks the variables the starter declares for the TODO
 * blocks: until they are written, nvcc -Werror would reject them as unused.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "lab.h"
#include "matmul_ladder.h"
#include "tile_order.cuh"
#include "warp_mma.cuh"

#ifndef MMA_BM
#define MMA_BM 128
#endif
#ifndef MMA_BN
#define MMA_BN 256
#endif
#ifndef MMA_BK
#define MMA_BK 64
#endif
#ifndef MMA_STAGES
#define MMA_STAGES 3
#endif
#ifndef MMA_WARPS_M
#define MMA_WARPS_M 2
#endif
#ifndef MMA_WARPS_N
#define MMA_WARPS_N 4
#endif
#ifndef MMA_GROUP_M
#define MMA_GROUP_M 16 /* rows of tiles per rasterisation group (grouped_tile_origin) */
#endif
#define MMA_THREADS (32 * MMA_WARPS_M * MMA_WARPS_N)
#define MMA_WARP_M (MMA_BM / MMA_WARPS_M) /* 64 rows of C per warp */
#define MMA_WARP_N (MMA_BN / MMA_WARPS_N) /* 64 columns of C per warp */
#define MMA_TILES_M (MMA_WARP_M / 16)     /* 4 mma tiles down */
#define MMA_TILES_N (MMA_WARP_N / 8)      /* 8 mma tiles across */
/* Shared memory of one stage, in bf16 elements: an A tile and a B tile. */
#define MMA_A_ELEMS (MMA_BM * MMA_BK)
#define MMA_B_ELEMS (MMA_BK * MMA_BN)
#define MMA_STAGE_ELEMS (MMA_A_ELEMS + MMA_B_ELEMS)
#define MMA_SMEM_BYTES (MMA_STAGES * MMA_STAGE_ELEMS * 2) /* 144 KB */

/* What the code below assumes of a -D configuration. */
static_assert(MMA_THREADS <= 1024, "at most 1024 threads per block");
static_assert(MMA_WARP_M % 16 == 0, "a warp's rows must be whole 16-row mma tiles (MMA_BM / MMA_WARPS_M)");
static_assert(MMA_WARP_N % 16 == 0, "a warp's columns must be pairs of 8-column mma tiles: one ldmatrix.x4.trans loads two");
static_assert(MMA_BK % 16 == 0, "MMA_BK must be whole 16-wide mma slices");
/* The swizzle permutes the 16-byte chunks of a row within one 128-byte
 * line: a row is 2 or 4 chunks, or a multiple of 8. */
#define MMA_SWIZZLABLE(chunks) ((chunks) == 2 || (chunks) == 4 || (chunks) % 8 == 0)
static_assert(MMA_SWIZZLABLE(MMA_BK / 8), "MMA_BK must be 16, 32 or a multiple of 64");
static_assert(MMA_SWIZZLABLE(MMA_BN / 8), "MMA_BN must be 16, 32 or a multiple of 64");
/* The swizzle's bank groups are counted from a 128-byte boundary. */
static_assert(MMA_A_ELEMS * 2 % 128 == 0 && MMA_B_ELEMS * 2 % 128 == 0, "tiles must start on 128-byte lines");
static_assert(MMA_STAGES >= 2 && MMA_STAGES - 2 <= 7, "2 to 9 stages: cp.async.wait_group takes 0 to 7");
static_assert(MMA_SMEM_BYTES <= 227 * 1024, "at most 227 KB of shared memory per block (H100, H200)");
static_assert(MMA_GROUP_M >= 1, "MMA_GROUP_M is at least one row of tiles");

/*
 * Swizzled shared layouts. Both tiles are stored row by row in 16-byte
 * chunks of 8 bf16; the chunk index is XORed with a few bits of the row so
 * that the 8 rows one ldmatrix matrix reads fall into 8 different groups of
 * 4 banks (a group of banks is 16 bytes; 8 groups make the 128 bytes shared
 * memory serves per cycle).
 *
 * A row of 8 or more chunks (MMA_BK = 64: 128 bytes; MMA_BN = 256: 512
 * bytes) starts in bank group 0, so chunk c of row r goes to c ^ (r % 8).
 * A row of 4 chunks (64 bytes, MMA_BK = 32) shares its 128-byte line with
 * the next row, so rows r and r + 2 would start in the same group: chunk c
 * goes to c ^ ((r / 2) % 4); bit 0 of r picks the half line, the XOR
 * spreads the pairs of rows over the 4 chunks. Likewise 2 chunks (32 bytes,
 * four rows a line): c ^ ((r / 4) % 2). swz returns the element offset of
 * chunk c of row r in a tile of rows `chunks` chunks long.
 */
__device__ __forceinline__ int swz(int r, int c, int chunks) {
    /* TODO(B1) begin */
    /* Task 4. Swizzle: chunk c of row r goes to c ^ (r % 8) when a row is 8
     * chunks or more, c ^ ((r / 2) % 4) for 4 chunks, c ^ ((r / 4) % 2) for
     * 2. This plain layout is correct but has 8-way bank conflicts in
     * ldmatrix. */
    return (r * chunks + c) * 8;
    /* TODO(B1) end */
}
__device__ __forceinline__ int swz_a(int r, int c) { return swz(r, c, MMA_BK / 8); }
__device__ __forceinline__ int swz_b(int k, int c) { return swz(k, c, MMA_BN / 8); }

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

/*
 * The fragments of one 16-wide slice ks of K for this warp, from the stage
 * at As, Bs: a[i] the 16 x 16 A tile of mma row i, b[j] the 16 x 8 B tile
 * of mma column j.
 */
__device__ __forceinline__ void load_frags(uint32_t a[MMA_TILES_M][4], uint32_t b[MMA_TILES_N][2],
                                           const uint16_t *As, const uint16_t *Bs, int ks, int wm,
                                           int wn, int lane) {
    /* TODO(B3) begin */
    /* Task 6a. ldmatrix_x4 the MMA_TILES_M A fragments (lane l gives row
     * wm * MMA_WARP_M + 16 i + l % 16, chunk 2 ks + l / 16), and
     * ldmatrix_x4_trans the B fragments two 8-column tiles at a time (lane l
     * gives k row 16 ks + l % 8 + 8 ((l / 8) % 2), the column chunk of tile
     * j + l / 16 of this warp's columns). The README draws the mma
     * fragments; the lane addresses above are all the ldmatrix calls need. */
    (void)a; (void)b; (void)As; (void)Bs; (void)ks; (void)wm; (void)wn; (void)lane;
    /* TODO(B3) end */
}

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, row-major; A and B
 * bf16 bit patterns, C and the accumulation fp32. One block per SM: 128
 * accumulators and two sets of fragments take 211 registers (make ptxas). */
__global__ void __launch_bounds__(MMA_THREADS, 1)
matmul_mma_kernel(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B,
                  float beta, float *C, int vec) {
    extern __shared__ __align__(128) uint16_t mma_smem[];
    [[maybe_unused]] int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    [[maybe_unused]] int wm = warp / MMA_WARPS_N, wn = warp % MMA_WARPS_N;
    [[maybe_unused]] int m0, n0;
    grouped_tile_origin(MMA_GROUP_M, MMA_BM, MMA_BN, &m0, &n0); /* kernels/tile_order.cuh: the grouped order, for L2 */
    [[maybe_unused]] int ktiles = (K + MMA_BK - 1) / MMA_BK;
    [[maybe_unused]] float acc[MMA_TILES_M][MMA_TILES_N][4];
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    /* TODO(B3) begin */
    /* Task 6b. The pipeline. Prologue: load_tile for k-tiles 0 ..
     * MMA_STAGES - 2 into stages 0 .. MMA_STAGES - 2, cp_async_commit_group()
     * after each (also when the k-tile does not exist). Main loop over kt:
     * cp_async_wait_group(MMA_STAGES - 2); __syncthreads(); load_tile for
     * k-tile kt + MMA_STAGES - 1 (if it exists) into stage
     * (kt + MMA_STAGES - 1) % MMA_STAGES; commit; then compute from stage
     * kt % MMA_STAGES: for each 16-wide ks, load_frags and
     * mma_m16n8k16_bf16_f32 every (i, j) pair into acc. Keep two sets of
     * fragments and load those of ks + 1 before the mmas of ks, so that the
     * ldmatrix latency hides behind them. After the loop, cp_async_wait_all(). */
    (void)A; (void)B; (void)M; (void)N; (void)K; (void)vec; (void)lane; (void)wm; (void)wn;
    (void)m0; (void)n0; (void)ktiles;
    /* TODO(B3) end */

    /* TODO(B4) begin */
    /* Task 7. Write acc: acc[i][j][e] is row 16 i + lane / 4 (+ 8 for e >= 2),
     * column 8 j + 2 (lane % 4) + e % 2 of this warp's MMA_WARP_M x
     * MMA_WARP_N piece. Store alpha * acc + beta * C inside C only; with
     * beta == 0 do not read C. */
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
     * (144 KB at these sizes: above 48 KB, call cudaFuncSetAttribute(...,
     * cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) first); pass vec;
     * check cudaGetLastError().
     * Then delete the lines below. */
    (void)alpha; (void)A; (void)B; (void)beta; (void)C; (void)vec;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(B5) end */
}
