/*
 * Lab 03, step 4: warp tiling, double-buffered.
 * One more level between the block and the thread. The block's BM x BN tile
 * is split into WM x WN warp tiles, one per warp; a warp walks its tile in
 * WMITER x WNITER sub-tiles of WSUBM x WSUBN, and in each sub-tile every lane
 * owns a TM x TN micro-tile. Why bother: at each k the 32 lanes of a warp
 * read short, contiguous strips of As and Bs (32 floats per sub-tile with
 * the defaults), each float4 a broadcast to several lanes; and a thread's
 * micro-tiles lie WSUBN columns apart, so its outputs grow while the warp's
 * shared loads stay contiguous.
 * Then the latency goes: in steps 1-3 every warp waits at a barrier while
 * the next tile comes from global memory, and again while it is stored. Here
 * the global loads of slice k0 + BK go out into registers before the math on
 * slice k0, and land in a second shared buffer after it, so one barrier per
 * slice is all that is left; likewise the operands of depth k + 1 are read
 * from shared memory while the multiply-adds of depth k run. The transposed
 * A tile, float4 access and the alignment fallbacks are as in step 3.
 * Not here yet: cp.async (global to shared without the registers) and tensor
 * cores (lab 04).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "lab.h"
#include "matmul_ladder.h"

/* Tile sizes (override with -D; autotune.sh searches them, the checks ask
 * matmul_warptile_tiles()). These defaults are a reasoned starting point for
 * sm_90; run the autotuner on your GPU.
 * NTHREADS = 256 (8 warps), each warp a WM x WN = 32 x 64 tile of the
 * BM x BN = 128 x 128 block tile: 32 * 64 / 32 = 64 outputs per thread, in
 * WNITER = 2 sub-tiles of TM x TN = 8 x 4. Per k a thread reads 8 + 8 floats
 * (four LDS.128) for 64 multiply-adds. Registers: 64 accumulators, 2 x 16
 * operands (two depths in flight), 8 floats of the next slice, addresses:
 * ptxas (sm_90a) needs 127, so 2 blocks x 256 threads x 128 fill an SM's 64K
 * registers exactly, and 16 warps hide each other's latency. More outputs
 * per thread (128, as in 64 x 64 warp tiles of 128 threads) would read
 * shared memory less per multiply-add, but near 255 registers and with half
 * the warps. BK = 8 keeps the slice held in registers small (one float4 of
 * A and one of B per thread); with double buffering the barrier per slice
 * no longer waits for global memory, so a deeper slice buys little. Two
 * buffers of both tiles take 2 x ((128 + 4) + 128) x 8 x 4 B = 16.25 KiB. */
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef WM
#define WM 32
#endif
#ifndef WN
#define WN 64
#endif
#ifndef WNITER
#define WNITER 2
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
#ifndef NTHREADS
#define NTHREADS 256
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
/* Four floats of padding per row of the transposed A tile: rows stay
 * 16-byte aligned for the float4 reads, and the column of As that a thread's
 * float4 of A goes down moves 16 banks per 4 rows, so with BK = 8 the two
 * threads that share a row of A write different banks. */
#define APAD 4
static_assert(2 * ((BM + APAD) * BK + BK * BN) * 4 <= 48 * 1024,
              "two buffers of both tiles must fit the 48 KB of static shared memory");

/* One thread's share of a BK-deep slice of A and of B, held in registers
 * between the global load and the shared store. Thread t owns float4 slots
 * t, t + NTHREADS, ... of each tile, row-major: slot i of the A tile is row
 * i / (BK / 4), columns 4 * (i % (BK / 4)) .. + 3. */
#define LDA (BM * BK / 4 / NTHREADS)
#define LDB (BK * BN / 4 / NTHREADS)

/* Global to registers: the slice of A and B at k0. As in step 3, a
 * block-uniform test picks float4 loads for aligned interior tiles and
 * guarded scalars with zero padding for the edges and for rows that are not
 * 16-byte aligned; both fill the same slots, so the store below is one code
 * path. */
__device__ __forceinline__ void load_slices(float4 (&ra)[LDA], float4 (&rb)[LDB], int M, int N,
                                            int K, const float *A, const float *B, int m0, int n0,
                                            int k0, int vec_a, int vec_b) {
    /* TODO(task 15) begin */
    const int tid = threadIdx.x;
    const bool fast_a = vec_a && m0 + BM <= M && k0 + BK <= K;
#pragma unroll
    for (int l = 0; l < LDA; l++) {
        const int i = tid + l * NTHREADS;
        const int r = m0 + i / (BK / 4), c = k0 + 4 * (i % (BK / 4));
        if (fast_a) {
            ra[l] = *reinterpret_cast<const float4 *>(&A[(size_t)r * K + c]);
        } else {
            const bool in = r < M;
            ra[l].x = in && c + 0 < K ? A[(size_t)r * K + c + 0] : 0.0f;
            ra[l].y = in && c + 1 < K ? A[(size_t)r * K + c + 1] : 0.0f;
            ra[l].z = in && c + 2 < K ? A[(size_t)r * K + c + 2] : 0.0f;
            ra[l].w = in && c + 3 < K ? A[(size_t)r * K + c + 3] : 0.0f;
        }
    }
    const bool fast_b = vec_b && k0 + BK <= K && n0 + BN <= N;
#pragma unroll
    for (int l = 0; l < LDB; l++) {
        const int i = tid + l * NTHREADS;
        const int r = k0 + i / (BN / 4), c = n0 + 4 * (i % (BN / 4));
        if (fast_b) {
            rb[l] = *reinterpret_cast<const float4 *>(&B[(size_t)r * N + c]);
        } else {
            const bool in = r < K;
            rb[l].x = in && c + 0 < N ? B[(size_t)r * N + c + 0] : 0.0f;
            rb[l].y = in && c + 1 < N ? B[(size_t)r * N + c + 1] : 0.0f;
            rb[l].z = in && c + 2 < N ? B[(size_t)r * N + c + 2] : 0.0f;
            rb[l].w = in && c + 3 < N ? B[(size_t)r * N + c + 3] : 0.0f;
        }
    }
    /* TODO(task 15) end */
}

/* Registers to one shared buffer: A transposed (its float4 goes down a
 * column of As), B as it is. */
__device__ __forceinline__ void store_slices(float (*As)[BM + APAD], float (*Bs)[BN],
                                             const float4 (&ra)[LDA], const float4 (&rb)[LDB]) {
    /* TODO(task 15) begin */
    const int tid = threadIdx.x;
#pragma unroll
    for (int l = 0; l < LDA; l++) {
        const int i = tid + l * NTHREADS;
        const int r = i / (BK / 4), c = 4 * (i % (BK / 4));
        As[c + 0][r] = ra[l].x;
        As[c + 1][r] = ra[l].y;
        As[c + 2][r] = ra[l].z;
        As[c + 3][r] = ra[l].w;
    }
#pragma unroll
    for (int l = 0; l < LDB; l++) {
        const int i = tid + l * NTHREADS;
        const int r = i / (BN / 4), c = 4 * (i % (BN / 4));
        *reinterpret_cast<float4 *>(&Bs[r][c]) = rb[l];
    }
    /* TODO(task 15) end */
}

/* Shared to registers: this lane's operands at depth k, as float4s. With
 * the defaults a warp reads 32 contiguous floats of As[k] per sub-tile row
 * (4 groups of 8 rows, each float4 a broadcast to 8 lanes) and 32 of Bs[k]
 * per sub-tile column (each float4 a broadcast to 4 lanes): 128 bytes, one
 * shared-memory wavefront, per LDS.128. */
__device__ __forceinline__ void load_fragments(float (&a)[WMITER * TM], float (&b)[WNITER * TN],
                                               const float (*As)[BM + APAD],
                                               const float (*Bs)[BN], int k, int arow,
                                               int bcol) {
    /* TODO(task 16) begin */
#pragma unroll
    for (int wm = 0; wm < WMITER; wm++)
#pragma unroll
        for (int i = 0; i < TM; i += 4) {
            const float4 v = *reinterpret_cast<const float4 *>(&As[k][arow + wm * WSUBM + i]);
            a[wm * TM + i + 0] = v.x;
            a[wm * TM + i + 1] = v.y;
            a[wm * TM + i + 2] = v.z;
            a[wm * TM + i + 3] = v.w;
        }
#pragma unroll
    for (int wn = 0; wn < WNITER; wn++)
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const float4 v = *reinterpret_cast<const float4 *>(&Bs[k][bcol + wn * WSUBN + j]);
            b[wn * TN + j + 0] = v.x;
            b[wn * TN + j + 1] = v.y;
            b[wn * TN + j + 2] = v.z;
            b[wn * TN + j + 3] = v.w;
        }
    /* TODO(task 16) end */
}

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, all row-major.
 * Block (blockIdx.x, blockIdx.y) owns the BM x BN tile of C at rows
 * blockIdx.y * BM, columns blockIdx.x * BN; warp w the WM x WN warp tile
 * (w / (BN / WN), w % (BN / WN)) of it. vec_a, vec_b, vec_c as in step 3. */
__global__ void __launch_bounds__(NTHREADS)
matmul_warptile_kernel(int M, int N, int K, float alpha, const float *A, const float *B,
                       float beta, float *C, int vec_a, int vec_b, int vec_c) {
    /* TODO(tasks 14-17) begin */
    /* Two buffers of each tile: the block computes on one while its next
     * slice is written into the other. */
    __shared__ __align__(16) float As[2][BK][BM + APAD];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int warp = tid / 32, lane = tid % 32;
    /* This lane's first row and column in the block's tile: the warp's tile
     * (warp / (BN / WN), warp % (BN / WN)) plus the lane's micro-tile in the
     * first sub-tile; the other sub-tiles are WSUBM rows and WSUBN columns
     * further on. */
    const int arow = (warp / (BN / WN)) * WM + (lane / (WSUBN / TN)) * TM;
    const int bcol = (warp % (BN / WN)) * WN + (lane % (WSUBN / TN)) * TN;

    float acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int i = 0; i < WMITER * TM; i++)
#pragma unroll
        for (int j = 0; j < WNITER * TN; j++) acc[i][j] = 0.0f;
    float4 ra[LDA], rb[LDB];
    /* Two sets of operands: those of depth k + 1 are read from shared memory
     * while the multiply-adds of depth k run, so no FFMA waits for an LDS. */
    float a[2][WMITER * TM], b[2][WNITER * TN];

    load_slices(ra, rb, M, N, K, A, B, m0, n0, 0, vec_a, vec_b);
    store_slices(As[0], Bs[0], ra, rb);
    __syncthreads();
    int cur = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool next = k0 + BK < K;
        /* Issue the global loads of the next slice first: their few hundred
         * cycles of latency pass while this slice's BK steps of math run,
         * instead of every warp waiting for them at a barrier. */
        if (next) load_slices(ra, rb, M, N, K, A, B, m0, n0, k0 + BK, vec_a, vec_b);

        load_fragments(a[0], b[0], As[cur], Bs[cur], 0, arow, bcol);
#pragma unroll
        for (int k = 0; k < BK; k++) {
            /* k is a constant once unrolled, so a[k % 2] names registers. */
            if (k + 1 < BK)
                load_fragments(a[(k + 1) % 2], b[(k + 1) % 2], As[cur], Bs[cur], k + 1, arow,
                               bcol);
            /* (WMITER * TM) x (WNITER * TN) multiply-adds from registers. */
#pragma unroll
            for (int i = 0; i < WMITER * TM; i++)
#pragma unroll
                for (int j = 0; j < WNITER * TN; j++) acc[i][j] += a[k % 2][i] * b[k % 2][j];
        }

        /* The other buffer was last read in the previous iteration, before
         * the barrier that ended it, so it is free to overwrite; one barrier
         * per slice then publishes it and retires this one. */
        if (next) store_slices(As[cur ^ 1], Bs[cur ^ 1], ra, rb);
        __syncthreads();
        cur ^= 1;
    }

    const bool fast_c = vec_c && m0 + BM <= M && n0 + BN <= N;
    /* acc[wm * TM + i][wn * TN + j] is C's element at tile row
     * arow + wm * WSUBM + i, column bcol + wn * WSUBN + j. */
#pragma unroll
    for (int wm = 0; wm < WMITER; wm++)
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int r = m0 + arow + wm * WSUBM + i;
#pragma unroll
            for (int wn = 0; wn < WNITER; wn++)
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const int c = n0 + bcol + wn * WSUBN + j;
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
    /* TODO(tasks 14-17) end */
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
    /* TODO(task 18) begin */
    const int vec_a = K % 4 == 0 && aligned16(A);
    const int vec_b = N % 4 == 0 && aligned16(B);
    const int vec_c = N % 4 == 0 && aligned16(C);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    matmul_warptile_kernel<<<grid, NTHREADS>>>(M, N, K, alpha, A, B, beta, C, vec_a, vec_b, vec_c);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(task 18) end */
}
