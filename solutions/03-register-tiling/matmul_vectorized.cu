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
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int row = (tid / (BN / TN)) * TM;
    const int col = (tid % (BN / TN)) * TN;
    float acc[TM][TN];
    float a[TM], b[TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    /* Whether the C tile can be written with float4s is the same all along. */
    const bool fast_c = vec_c && m0 + BM <= M && n0 + BN <= N;

    for (int k0 = 0; k0 < K; k0 += BK) {
        /* The tests are the same for every thread of the block, so the
         * branch does not diverge; only the last K step and the blocks on
         * the bottom and right edges take the slow path. */
        if (vec_a && m0 + BM <= M && k0 + BK <= K) {
#pragma unroll
            for (int l = 0; l < BM * BK / 4 / NTHREADS; l++) { /* a constant trip count */
                const int i = tid + l * NTHREADS; /* this thread's l-th float4 of the tile */
                const int r = i / (BK / 4), c = 4 * (i % (BK / 4));
                const float4 v = *reinterpret_cast<const float4 *>(&A[(size_t)(m0 + r) * K + k0 + c]);
                /* The transposed store: four words, BM apart, down column r.
                 * With BK = 8 two neighbouring threads share r and differ in
                 * c by 4 rows of As = 4 * BM words, the same bank: a 2-way
                 * conflict, paid once per tile, not in the inner loop. */
                As[c + 0][r] = v.x;
                As[c + 1][r] = v.y;
                As[c + 2][r] = v.z;
                As[c + 3][r] = v.w;
            }
        } else {
            for (int i = tid; i < BM * BK; i += NTHREADS) {
                const int r = i / BK, c = i % BK;
                As[c][r] = (m0 + r < M && k0 + c < K) ? A[(size_t)(m0 + r) * K + k0 + c] : 0.0f;
            }
        }
        if (vec_b && k0 + BK <= K && n0 + BN <= N) {
#pragma unroll
            for (int l = 0; l < BK * BN / 4 / NTHREADS; l++) {
                const int i = tid + l * NTHREADS;
                const int r = i / (BN / 4), c = 4 * (i % (BN / 4));
                *reinterpret_cast<float4 *>(&Bs[r][c]) =
                    *reinterpret_cast<const float4 *>(&B[(size_t)(k0 + r) * N + n0 + c]);
            }
        } else {
            for (int i = tid; i < BK * BN; i += NTHREADS) {
                const int r = i / BN, c = i % BN;
                Bs[r][c] = (k0 + r < K && n0 + c < N) ? B[(size_t)(k0 + r) * N + n0 + c] : 0.0f;
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            /* (TM + TN) / 4 shared loads of 16 bytes for TM * TN multiply-adds.
             * A warp covers two micro-tile rows: As[k][row..] is two float4s
             * (broadcast to 16 threads each). */
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&As[k][row + i]);
                a[i] = v.x; a[i + 1] = v.y; a[i + 2] = v.z; a[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&Bs[k][col + j]);
                b[j] = v.x; b[j + 1] = v.y; b[j + 2] = v.z; b[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

    if (fast_c) {
#pragma unroll
        for (int i = 0; i < TM; i++) {
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                float4 *p = reinterpret_cast<float4 *>(&C[(size_t)(m0 + row + i) * N + n0 + col + j]);
                float4 v = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1],
                                       alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
                if (beta != 0.0f) { /* BLAS rule: with beta == 0, C is not read. */
                    const float4 c = *p;
                    v.x += beta * c.x; v.y += beta * c.y; v.z += beta * c.z; v.w += beta * c.w;
                }
                *p = v;
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int r = m0 + row + i;
            if (r >= M) break;
#pragma unroll
            for (int j = 0; j < TN; j++) {
                const int c = n0 + col + j;
                if (c < N) {
                    float *p = &C[(size_t)r * N + c];
                    *p = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *p;
                }
            }
        }
    }
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
    /* Row r of A starts r * K floats after A: 16-byte aligned for every r only
     * when K is a multiple of 4 and A itself is aligned. Likewise B and C with N. */
    const int vec_a = K % 4 == 0 && aligned16(A);
    const int vec_b = N % 4 == 0 && aligned16(B);
    const int vec_c = N % 4 == 0 && aligned16(C);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    matmul_vectorized_kernel<<<grid, NTHREADS>>>(M, N, K, alpha, A, B, beta, C, vec_a, vec_b,
                                                 vec_c);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(task 13) end */
}
