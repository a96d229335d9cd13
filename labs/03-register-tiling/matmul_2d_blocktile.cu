/*
 * Lab 03, step 2: 2-D block tiling.
 * Each thread now computes a TM x TN micro-tile of C in registers. For every
 * k it reads TM values of A and TN values of B from shared memory into
 * registers and does all TM * TN multiply-adds between them (an outer
 * product), so a shared-memory load feeds TM * TN / (TM + TN) multiply-adds:
 * 4 for 8 x 8, against 8 / 9 for step 1. Loading the tiles from global
 * memory is unchanged: scalar, guarded, zero padded.
 * Not here yet: vector loads and the transposed A tile (matmul_vectorized.cu),
 * warp tiling (matmul_warptile.cu).
 */
#include <cuda_runtime.h>

#include "lab.h"
#include "matmul_ladder.h"

/* Tile sizes (override with -D; the checks ask matmul_blocktile_2d_tiles()).
 * BM x BN = 128 x 128 per block, TM x TN = 8 x 8 per thread: 256 threads.
 * Each thread holds 64 accumulators plus 16 operands in registers; with the
 * loops unrolled ptxas uses about 160 registers per thread (of the 255
 * allowed), 256 x 160 = 40K of an sm_90 SM's 64K, so one block per SM: 8
 * warps of the 64 an SM can hold. That is enough to keep the FMA units busy
 * because each warp has 64 independent multiply-adds per k. (Asking for two
 * blocks with __launch_bounds__(NTHREADS, 2) caps registers at 128 and
 * makes ptxas spill a little: try both.)
 * BK = 8: the two tiles are (128 + 128) x 8 x 4 B = 8 KB of shared memory per
 * block, far from the SM's 228 KB (registers, not shared memory, hold it to
 * one block per SM, as above); a bigger BK halves the
 * barriers but doubles the footprint (try it with the autotuner). */
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
/* One thread per TM x TN micro-tile of the block's tile. */
#define NTHREADS ((BM / TM) * (BN / TN))

static_assert(BM % TM == 0 && BN % TN == 0, "TM must divide BM and TN divide BN");
static_assert(NTHREADS <= 1024, "at most 1024 threads per block");
static_assert(NTHREADS % 32 == 0, "whole warps only");
static_assert((BM * BK + BK * BN) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, all row-major.
 * Block (blockIdx.x, blockIdx.y) owns the BM x BN tile of C at rows
 * blockIdx.y * BM, columns blockIdx.x * BN. Thread t owns the TM x TN
 * micro-tile at tile rows (t / (BN / TN)) * TM.., columns (t % (BN / TN)) * TN.. */
__global__ void __launch_bounds__(NTHREADS)
matmul_blocktile_2d_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                           float beta, float *C) {
    /* TODO(tasks 5-7) begin */
    /*
     * 5. Declare __shared__ float As[BM][BK] and Bs[BK][BN]; TM x TN float
     *    accumulators set to 0; and two register arrays, a[TM] and b[TN].
     *    This thread's micro-tile starts at tile row (t / (BN / TN)) * TM and
     *    tile column (t % (BN / TN)) * TN, t = threadIdx.x.
     * 6. Loop over K in steps of BK: load both tiles with all threads and
     *    zero padding as in step 1, __syncthreads(), then for each k of the
     *    tile copy the TM values As[row + i][k] into a[] and the TN values
     *    Bs[k][col + j] into b[], and add a[i] * b[j] to acc[i][j] for every
     *    i, j; then __syncthreads().
     * 7. Store the TM x TN results that are inside C (alpha and beta as in
     *    step 1; C is not read when beta == 0). */
    (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    /* TODO(tasks 5-7) end */
}

/* The tile sizes this file was compiled with, for the checks' edge cases. */
extern "C" void matmul_blocktile_2d_tiles(int *bm, int *bn, int *bk) {
    *bm = BM;
    *bn = BN;
    *bk = BK;
}

/* Launch over all of C. A, B, C are device pointers. Returns LAB_OK,
 * LAB_BAD_ARGUMENT for a size below 1, or LAB_LAUNCH_FAILED. */
extern "C" int matmul_blocktile_2d(int M, int N, int K, float alpha, const float *A,
                                   const float *B, float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* TODO(task 8) begin */
    /* NTHREADS threads per block, one block per BM x BN tile
     * of C (x over columns, y over rows, rounded up); launch
     * matmul_blocktile_2d_kernel and report launch errors as in step 1. Then
     * delete the two lines below. */
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(task 8) end */
}
