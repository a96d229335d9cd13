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
    /* For each of this thread's LDA float4 slots of the A
     * slice (slot tid + l * NTHREADS: row m0 + i / (BK / 4), columns
     * k0 + 4 * (i % (BK / 4)) .. + 3), one float4 load into ra[l] when vec_a
     * and the slice lies inside A, else four guarded scalars, 0 outside A.
     * The same for the LDB slots of B (row k0 + i / (BN / 4), columns
     * n0 + 4 * (i % (BN / 4)) ..) with vec_b. */
    (void)ra; (void)rb; (void)M; (void)N; (void)K; (void)A; (void)B; (void)m0; (void)n0;
    (void)k0; (void)vec_a; (void)vec_b;
    /* TODO(task 15) end */
}

/* Registers to one shared buffer: A transposed (its float4 goes down a
 * column of As), B as it is. */
__device__ __forceinline__ void store_slices(float (*As)[BM + APAD], float (*Bs)[BN],
                                             const float4 (&ra)[LDA], const float4 (&rb)[LDB]) {
    /* TODO(task 15) begin */
    /* With r and c the slot's row and first column within
     * the slice (as above, without m0 and k0): ra[l]'s four floats go to
     * As[c + 0][r] .. As[c + 3][r] (down a column of the transposed tile),
     * rb[l] as one float4 to Bs[r][c]. */
    (void)As; (void)Bs; (void)ra; (void)rb;
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
    /* For each sub-tile row wm, the lane's TM values
     * As[k][arow + wm * WSUBM ..] as float4s into a[wm * TM ..]; for each
     * sub-tile column wn, its TN values Bs[k][bcol + wn * WSUBN ..] into
     * b[wn * TN ..]. */
    (void)a; (void)b; (void)As; (void)Bs; (void)k; (void)arow; (void)bcol;
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
    /*
     * 14. Two buffers of each shared tile, As[2][BK][BM + APAD] (transposed)
     *     and Bs[2][BK][BN]. Registers: acc[WMITER * TM][WNITER * TN] set to
     *     0; the next slice, float4 ra[LDA], rb[LDB]; two sets of operands,
     *     a[2][WMITER * TM], b[2][WNITER * TN]. Indices: warp = threadIdx.x
     *     / 32, lane = threadIdx.x % 32; the lane's first row in the block's
     *     tile is arow = (warp / (BN / WN)) * WM + (lane / (WSUBN / TN)) * TM,
     *     its first column bcol = (warp % (BN / WN)) * WN +
     *     (lane % (WSUBN / TN)) * TN.
     * 15. Before the loop: load_slices for k0 = 0, store_slices into buffer
     *     0, __syncthreads(). Loop over K in steps of BK with cur, the buffer
     *     the math reads: if there is a next slice, load_slices for k0 + BK
     *     first (its latency passes during the math); after the math,
     *     store_slices into buffer cur ^ 1; then one __syncthreads() and
     *     cur ^= 1.
     * 16. The math on buffer cur: load_fragments of depth 0 into a[0], b[0];
     *     then for each k (unrolled, so k % 2 is a constant): load_fragments
     *     of depth k + 1 into a[(k + 1) % 2], b[(k + 1) % 2] when k + 1 < BK,
     *     and add the outer product of a[k % 2] and b[k % 2] to acc.
     * 17. Store C as in step 3 (float4 fast path when vec_c and the block's
     *     tile is inside C, else guarded scalars; read C only when
     *     beta != 0): acc[wm * TM + i][wn * TN + j] goes to tile row
     *     arow + wm * WSUBM + i, column bcol + wn * WSUBN + j. */
    (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    (void)vec_a; (void)vec_b; (void)vec_c;
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
    /* The alignment flags as in step 3; NTHREADS threads per
     * block, one block per BM x BN tile of C; launch matmul_warptile_kernel
     * and report launch errors. Then delete the lines below. */
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    (void)aligned16;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(task 18) end */
}
