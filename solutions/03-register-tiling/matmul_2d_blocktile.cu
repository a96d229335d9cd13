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
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int row = (tid / (BN / TN)) * TM; /* first row of the micro-tile in the tile */
    const int col = (tid % (BN / TN)) * TN; /* first column */
    float acc[TM][TN];
    float a[TM], b[TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        /* As in step 1: the whole block loads each tile row by row
         * (coalesced), with 0 past the edges of A and B. */
        for (int i = tid; i < BM * BK; i += NTHREADS) {
            int r = i / BK, c = i % BK;
            As[r][c] = (m0 + r < M && k0 + c < K) ? A[(size_t)(m0 + r) * K + k0 + c] : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += NTHREADS) {
            int r = i / BN, c = i % BN;
            Bs[r][c] = (k0 + r < K && n0 + c < N) ? B[(size_t)(k0 + r) * N + n0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            /* TM + TN shared loads, then TM * TN multiply-adds from registers.
             * As[row + i][k] walks down a column of As: the two micro-tile
             * rows a warp covers are 8 rows = 64 words apart, the same bank,
             * a 2-way conflict that step 3 removes by storing A transposed. */
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[row + i][k];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[k][col + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int r = m0 + row + i;
        if (r >= M) break; /* the rest of the micro-tile is below C too */
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int c = n0 + col + j;
            if (c < N) {
                float *p = &C[(size_t)r * N + c];
                /* BLAS rule: with beta == 0, C is not read. */
                *p = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *p;
            }
        }
    }
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
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    matmul_blocktile_2d_kernel<<<grid, NTHREADS>>>(M, N, K, alpha, A, B, beta, C);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(task 8) end */
}
