/*
 * Lab 03, step 4: warp tiling.
 * One more level between the block and the thread. The block's BM x BN tile
 * is split into WM x WN warp tiles, one per warp; a warp walks its tile in
 * WMITER x WNITER sub-tiles of WSUBM x WSUBN, and in each sub-tile every lane
 * owns a TM x TN micro-tile. Why bother: at each k the 32 lanes of a warp
 * read one small, contiguous strip of As and one of Bs (64 and 16 floats
 * with the defaults), each float4 a broadcast to several lanes; and a
 * thread's micro-tiles lie WSUBN columns apart, which lets one thread hold
 * 128 outputs while the warp's shared loads stay contiguous. Loads from
 * global memory, the transposed A tile, float4 access and the alignment
 * fallbacks are as in step 3.
 * Not here yet: double buffering (cp.async) and tensor cores (lab 04).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "lab.h"
#include "matmul_ladder.h"

/* Tile sizes (override with -D; autotune.sh searches them, the checks ask
 * matmul_warptile_tiles()). These defaults are a reasoned starting point for
 * sm_90, not the tuned result; run the autotuner on your GPU.
 * NTHREADS = 128 (4 warps), each warp a WM x WN = 64 x 64 tile of the
 * BM x BN = 128 x 128 block tile: 64 * 64 / 32 = 128 outputs per thread, in
 * WNITER = 4 sub-tiles of TM x TN = 8 x 4. Per k a thread loads 8 + 16 floats
 * for 128 multiply-adds (5.3 per float, against 4 in steps 2-3). The price:
 * about 235 registers per thread (128 accumulators, 24 operands, addresses),
 * just under the 255 allowed; 128 threads x 240 (registers are allocated in
 * steps) = 30K, so two blocks (8 warps) share an sm_90 SM's 64K. BK = 16 halves the barriers of BK = 8;
 * the two tiles take (128 + 128) x 16 x 4 B = 16 KB of shared memory per
 * block, well inside the 48 KB of static shared memory and the SM's 228 KB. */
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef WNITER
#define WNITER 4
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
#ifndef NTHREADS
#define NTHREADS 128
#endif
/* Derived: sub-tiles per warp tile along M, and the sub-tile's size. */
#define WMITER ((WM * WN) / (32 * TM * TN * WNITER))
#define WSUBM (WM / WMITER)
#define WSUBN (WN / WNITER)

static_assert(NTHREADS % 32 == 0 && NTHREADS <= 1024, "whole warps, at most 1024 threads");
static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
static_assert((BM / WM) * (BN / WN) == NTHREADS / 32, "one warp per warp tile");
static_assert(WMITER >= 1 && WMITER * 32 * TM * TN * WNITER == WM * WN,
              "a warp's 32 lanes x WMITER x WNITER micro-tiles must cover its WM x WN tile");
static_assert(WM % WMITER == 0 && WN % WNITER == 0, "sub-tiles must tile the warp tile");
static_assert((WSUBM / TM) * (WSUBN / TN) == 32 && WSUBM % TM == 0 && WSUBN % TN == 0,
              "the 32 lanes must tile a sub-tile");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 reads need multiples of 4");
static_assert((BM * BK / 4) % NTHREADS == 0 && (BK * BN / 4) % NTHREADS == 0,
              "every thread loads the same number of float4s");
static_assert((BM * BK + BK * BN) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, all row-major.
 * Block (blockIdx.x, blockIdx.y) owns the BM x BN tile of C at rows
 * blockIdx.y * BM, columns blockIdx.x * BN; warp w the WM x WN warp tile
 * (w / (BN / WN), w % (BN / WN)) of it. vec_a, vec_b, vec_c as in step 3. */
__global__ void __launch_bounds__(NTHREADS)
matmul_warptile_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                       float beta, float *C, int vec_a, int vec_b, int vec_c) {
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int warp = tid / 32, lane = tid % 32;
    /* This warp's tile, relative to the block's tile. */
    const int wrow = (warp / (BN / WN)) * WM;
    const int wcol = (warp % (BN / WN)) * WN;
    /* This lane's micro-tile, relative to each sub-tile of the warp tile. */
    const int lrow = (lane / (WSUBN / TN)) * TM;
    const int lcol = (lane % (WSUBN / TN)) * TN;

    float acc[WMITER * TM][WNITER * TN];
    float a[WMITER * TM], b[WNITER * TN];
#pragma unroll
    for (int i = 0; i < WMITER * TM; i++)
#pragma unroll
        for (int j = 0; j < WNITER * TN; j++) acc[i][j] = 0.0f;
    const bool fast_c = vec_c && m0 + BM <= M && n0 + BN <= N;

    for (int k0 = 0; k0 < K; k0 += BK) {
        /* Global to shared, as in step 3: block-uniform test, float4 loads
         * for aligned interior tiles, guarded scalars with zero padding for
         * the edges and for rows that are not 16-byte aligned. */
        if (vec_a && m0 + BM <= M && k0 + BK <= K) {
#pragma unroll
            for (int l = 0; l < BM * BK / 4 / NTHREADS; l++) { /* a constant trip count */
                const int i = tid + l * NTHREADS; /* this thread's l-th float4 of the tile */
                const int r = i / (BK / 4), c = 4 * (i % (BK / 4));
                const float4 v = *reinterpret_cast<const float4 *>(&A[(size_t)(m0 + r) * K + k0 + c]);
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
            /* With the defaults a warp reads 64 contiguous floats of As[k]
             * (8 lanes' rows, each a broadcast to 4 lanes) and 16 of Bs[k]
             * per sub-tile (each float4 a broadcast to 8 lanes). */
#pragma unroll
            for (int wm = 0; wm < WMITER; wm++)
#pragma unroll
                for (int i = 0; i < TM; i += 4) {
                    const float4 v =
                        *reinterpret_cast<const float4 *>(&As[k][wrow + wm * WSUBM + lrow + i]);
                    a[wm * TM + i + 0] = v.x;
                    a[wm * TM + i + 1] = v.y;
                    a[wm * TM + i + 2] = v.z;
                    a[wm * TM + i + 3] = v.w;
                }
#pragma unroll
            for (int wn = 0; wn < WNITER; wn++)
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const float4 v =
                        *reinterpret_cast<const float4 *>(&Bs[k][wcol + wn * WSUBN + lcol + j]);
                    b[wn * TN + j + 0] = v.x;
                    b[wn * TN + j + 1] = v.y;
                    b[wn * TN + j + 2] = v.z;
                    b[wn * TN + j + 3] = v.w;
                }
            /* (WMITER * TM) x (WNITER * TN) multiply-adds from registers. */
#pragma unroll
            for (int i = 0; i < WMITER * TM; i++)
#pragma unroll
                for (int j = 0; j < WNITER * TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

    /* acc[wm * TM + i][wn * TN + j] is C's element at tile row
     * wrow + wm * WSUBM + lrow + i, column wcol + wn * WSUBN + lcol + j. */
#pragma unroll
    for (int wm = 0; wm < WMITER; wm++)
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int r = m0 + wrow + wm * WSUBM + lrow + i;
#pragma unroll
            for (int wn = 0; wn < WNITER; wn++)
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const int c = n0 + wcol + wn * WSUBN + lcol + j;
                    /* Index acc with constants only (the loops unroll), so it
                     * stays in registers; a pointer into it would push it to
                     * local memory. */
                    const int ai = wm * TM + i, aj = wn * TN + j;
                    if (fast_c) {
                        float4 *p = reinterpret_cast<float4 *>(&C[(size_t)r * N + c]);
                        float4 out = make_float4(alpha * acc[ai][aj], alpha * acc[ai][aj + 1],
                                                 alpha * acc[ai][aj + 2], alpha * acc[ai][aj + 3]);
                        if (beta != 0.0f) { /* BLAS rule: with beta == 0, C is not read. */
                            const float4 old = *p;
                            out.x += beta * old.x; out.y += beta * old.y;
                            out.z += beta * old.z; out.w += beta * old.w;
                        }
                        *p = out;
                    } else if (r < M) {
#pragma unroll
                        for (int jj = 0; jj < 4; jj++) {
                            if (c + jj < N) {
                                float *p = &C[(size_t)r * N + c + jj];
                                *p = beta == 0.0f ? alpha * acc[ai][aj + jj]
                                                  : alpha * acc[ai][aj + jj] + beta * *p;
                            }
                        }
                    }
                }
        }
}

/* The tile sizes this file was compiled with, for the checks' edge cases. */
extern "C" void matmul_warptile_tiles(int *bm, int *bn, int *bk) {
    *bm = BM;
    *bn = BN;
    *bk = BK;
}

/* Whether p may be read as float4 (see matmul_vectorized.cu). */
static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

/* Launch over all of C. A, B, C are device pointers. Returns LAB_OK,
 * LAB_BAD_ARGUMENT for a size below 1, or LAB_LAUNCH_FAILED. */
extern "C" int matmul_warptile(int M, int N, int K, float alpha, const float *A, const float *B,
                               float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    const int vec_a = K % 4 == 0 && aligned16(A);
    const int vec_b = N % 4 == 0 && aligned16(B);
    const int vec_c = N % 4 == 0 && aligned16(C);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    matmul_warptile_kernel<<<grid, NTHREADS>>>(M, N, K, alpha, A, B, beta, C, vec_a, vec_b, vec_c);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
}
