/*
 * Lab 03, step 3: vector loads and a transposed A tile.
 * Same tiling as step 2 (a TM x TN micro-tile per thread), but memory is
 * moved 16 bytes at a time. From global memory each thread reads float4s:
 * four neighbouring floats of a row of A or B in one 128-bit load (LDG.128),
 * a quarter of the load instructions. The A tile is stored transposed in
 * shared memory, As[k][m], so the TM values of A a thread needs for one k are
 * contiguous and come in as float4s too (LDS.128), like those of B. C is
 * written with float4 stores.
 * A float4 access must be 16-byte aligned. Row r of A starts at A + r * K
 * floats, so rows are aligned only when K % 4 == 0 (and B's and C's only when
 * N % 4 == 0): tiles that are inside the matrices and aligned take the float4
 * path, everything else (edge tiles, or every tile when K or N is not a
 * multiple of 4) a guarded scalar path with zero padding.
 * Not here yet: warp tiling (matmul_warptile.cu).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "lab.h"
#include "matmul_ladder.h"

/* Tile sizes (override with -D; the checks ask matmul_vectorized_tiles()).
 * As step 2: 128 x 128 per block, 8 x 8 per thread, 256 threads, about 140
 * registers per thread (one block per sm_90 SM by registers), 8 KB of shared
 * memory per block. Each tile is BM * BK / 4 = 256 float4s of A and
 * BK * BN / 4 = 256 of B: exactly one float4 of each per thread per step. */
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
#define NTHREADS ((BM / TM) * (BN / TN))

static_assert(BM % TM == 0 && BN % TN == 0, "TM must divide BM and TN divide BN");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 reads need multiples of 4");
static_assert(NTHREADS <= 1024, "at most 1024 threads per block");
static_assert(NTHREADS % 32 == 0, "whole warps only");
static_assert((BM * BK / 4) % NTHREADS == 0 && (BK * BN / 4) % NTHREADS == 0,
              "every thread loads the same number of float4s");
static_assert((BM * BK + BK * BN) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, all row-major.
 * Threads and tiles as in step 2. vec_a: rows of A are 16-byte aligned
 * (K % 4 == 0 and A aligned); vec_b, vec_c: the same for B and C (N % 4 == 0). */
__global__ void __launch_bounds__(NTHREADS)
matmul_vectorized_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                         float beta, float *C, int vec_a, int vec_b, int vec_c) {
    /* TODO(tasks 9-12) begin */
    /*
     * 9.  Declare __shared__ __align__(16) float As[BK][BM] (A transposed:
     *     As[k][m] holds A[m0 + m][k0 + k]) and Bs[BK][BN], the accumulators
     *     and the register arrays of step 2.
     * 10. Loop over K in steps of BK. If vec_a and the whole A tile is inside
     *     A (m0 + BM <= M and k0 + BK <= K), each thread loads its float4s of
     *     the tile (float4 i is row i / (BK / 4), columns 4 * (i % (BK / 4))..)
     *     with one 16-byte load each and writes the four values down a column
     *     of As. Otherwise load element by element with zero padding, as in
     *     step 2, still into As[k][m]. The same for B with vec_b (no
     *     transpose: a float4 of a row of B is a float4 of a row of Bs).
     *     __syncthreads().
     * 11. For each k, read the TM values As[k][row..] and the TN values
     *     Bs[k][col..] as float4s into a[] and b[]; outer product into acc;
     *     __syncthreads() after the loop over k.
     * 12. Store C: if vec_c and the whole tile is inside C, read (only when
     *     beta != 0) and write float4s; else element by element with checks. */
    (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    (void)vec_a; (void)vec_b; (void)vec_c;
    /* TODO(tasks 9-12) end */
}

/* The tile sizes this file was compiled with, for the checks' edge cases. */
extern "C" void matmul_vectorized_tiles(int *bm, int *bn, int *bk) {
    *bm = BM;
    *bn = BN;
    *bk = BK;
}

/* Whether p may be read as float4: 16-byte aligned. cudaMalloc returns
 * 256-byte aligned memory, but a caller may pass a pointer into the middle
 * of a buffer. */
static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

/* Launch over all of C. A, B, C are device pointers. Returns LAB_OK,
 * LAB_BAD_ARGUMENT for a size below 1, or LAB_LAUNCH_FAILED. */
extern "C" int matmul_vectorized(int M, int N, int K, float alpha, const float *A,
                                 const float *B, float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* TODO(task 13) begin */
    /* Decide the three alignment flags (every row of A is
     * 16-byte aligned when K % 4 == 0 and aligned16(A); B and C when
     * N % 4 == 0 and their pointer is aligned), then launch as in step 2 with
     * the flags as the last three arguments. Then delete the lines below. */
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    (void)aligned16;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(task 13) end */
}
