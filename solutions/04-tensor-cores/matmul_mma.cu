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
    int rows_per_line = chunks >= 8 ? 1 : 8 / chunks;
    int mask = chunks >= 8 ? 7 : chunks - 1;
    return (r * chunks + (c ^ ((r / rows_per_line) & mask))) * 8;
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
    /* Thread t copies chunk t % chunks of row t / chunks, then the same
     * chunk of the row a step of MMA_THREADS / chunks rows further down, and
     * so on. Its column, and with it the k or n bound, is the same in every
     * pass, and the pass count is a compile-time constant, so each loop
     * unrolls into straight cp.asyncs. (A loop over chunk ids from
     * threadIdx.x in strides of MMA_THREADS copies the same chunks, but the
     * compiler cannot unroll it: in SASS each 16-byte copy then costs some
     * 35 instructions of index arithmetic, tests and branches, and a warp
     * issues more of them per k-tile than mma instructions.) */
    constexpr int a_chunks = MMA_BK / 8, b_chunks = MMA_BN / 8;
    constexpr int a_step = MMA_THREADS / a_chunks, b_step = MMA_THREADS / b_chunks; /* rows per pass */
    static_assert(a_step >= 1 && MMA_THREADS % a_chunks == 0 && MMA_BM % a_step == 0,
                  "load_tile: the block's threads must copy whole rows of the A tile in whole passes");
    static_assert(b_step >= 1 && MMA_THREADS % b_chunks == 0 && MMA_BK % b_step == 0,
                  "load_tile: the block's threads must copy whole rows of the B tile in whole passes");
    const int ra = threadIdx.x / a_chunks, ca = threadIdx.x % a_chunks; /* first row, its chunk */
    const int rb = threadIdx.x / b_chunks, cb = threadIdx.x % b_chunks;
    if (vec && m0 + MMA_BM <= M && n0 + MMA_BN <= N && k0 + MMA_BK <= K) {
        /* The whole tile lies inside A and B, as every tile of a large
         * matmul does but those of the last row, column or k-step: no bounds
         * to test, and addresses a fixed stride apart. The swizzle repeats
         * every 8 rows (swz), so when the step is a multiple of 8 the
         * destination moves by a fixed offset too, an immediate in SASS. */
        const uint16_t *a = A + (size_t)(m0 + ra) * K + k0 + 8 * ca;
        const uint16_t *b = B + (size_t)(k0 + rb) * N + n0 + 8 * cb;
#pragma unroll
        for (int p = 0; p < MMA_BM / a_step; p++)
            cp_async_16(a_step % 8 == 0 ? As + swz_a(ra, ca) + p * a_step * MMA_BK : As + swz_a(ra + p * a_step, ca),
                        a + (size_t)p * a_step * K);
#pragma unroll
        for (int p = 0; p < MMA_BK / b_step; p++)
            cp_async_16(b_step % 8 == 0 ? Bs + swz_b(rb, cb) + p * b_step * MMA_BN : Bs + swz_b(rb + p * b_step, cb),
                        b + (size_t)p * b_step * N);
        return;
    }
    if (vec) {
        /* An edge tile: a chunk is wholly inside or wholly outside; the
         * outside ones are zero-filled, reading nothing (the pointer passed
         * for them, A or B itself, is only a valid address). */
        const int gk = k0 + 8 * ca, gn = n0 + 8 * cb;
#pragma unroll
        for (int p = 0; p < MMA_BM / a_step; p++) {
            int gr = m0 + ra + p * a_step, inside = gr < M && gk < K;
            cp_async_16_zfill(As + swz_a(ra + p * a_step, ca), inside ? A + (size_t)gr * K + gk : A,
                              inside ? 16 : 0);
        }
#pragma unroll
        for (int p = 0; p < MMA_BK / b_step; p++) {
            int gkb = k0 + rb + p * b_step, inside = gkb < K && gn < N;
            cp_async_16_zfill(Bs + swz_b(rb + p * b_step, cb), inside ? B + (size_t)gkb * N + gn : B,
                              inside ? 16 : 0);
        }
        return;
    }
    /* Any shape, any alignment: element by element, zeros past the edges. */
    for (int id = threadIdx.x; id < MMA_BM * MMA_BK / 8; id += MMA_THREADS) {
        int r = id / (MMA_BK / 8), c = id % (MMA_BK / 8);
        int gr = m0 + r, gk = k0 + 8 * c;
        uint16_t *dst = As + swz_a(r, c);
        for (int e = 0; e < 8; e++) dst[e] = (gr < M && gk + e < K) ? A[(size_t)gr * K + gk + e] : (uint16_t)0;
    }
    for (int id = threadIdx.x; id < MMA_BK * MMA_BN / 8; id += MMA_THREADS) {
        int k = id / (MMA_BN / 8), c = id % (MMA_BN / 8);
        int gk = k0 + k, gn = n0 + 8 * c;
        uint16_t *dst = Bs + swz_b(k, c);
        for (int e = 0; e < 8; e++) dst[e] = (gk < K && gn + e < N) ? B[(size_t)gk * N + gn + e] : (uint16_t)0;
    }
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
    /* A: one ldmatrix.x4 per 16 x 16 tile. Lanes 0-15 give rows 0-15 of the
     * left 8 columns, lanes 16-31 rows 0-15 of the right 8: the four 8x8
     * matrices arrive as a[0..3] of the mma layout. The swizzle repeats every
     * 8 rows (swz), so tile i + 1 sits exactly 16 rows after tile i: one
     * swizzled address, then fixed offsets (immediates in SASS, where
     * computing each address anew cost some 45 instructions a k-tile). */
    const uint16_t *a0 = As + swz_a(wm * MMA_WARP_M + (lane & 15), ks * 2 + (lane >> 4));
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++) ldmatrix_x4(a[i], a0 + i * 16 * MMA_BK);
    /* B: row-major in shared memory (k rows, n contiguous), but the mma
     * wants pairs along k in each register, so ldmatrix .trans. One x4
     * covers two 8-column tiles: matrices (k 0-7, tile 0), (k 8-15, tile 0),
     * (k 0-7, tile 1), (k 8-15, tile 1). */
#pragma unroll
    for (int j = 0; j < MMA_TILES_N; j += 2) {
        int k = ks * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        int c = (wn * MMA_WARP_N + (j + (lane >> 4)) * 8) / 8;
        uint32_t r4[4];
        ldmatrix_x4_trans(r4, Bs + swz_b(k, c));
        b[j][0] = r4[0];
        b[j][1] = r4[1];
        b[j + 1][0] = r4[2];
        b[j + 1][1] = r4[3];
    }
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
    /* Prologue: put the first MMA_STAGES - 1 k-tiles in flight, one commit
     * group each (empty groups past the end keep the counting uniform). */
    for (int s = 0; s < MMA_STAGES - 1; s++) {
        if (s < ktiles)
            load_tile(mma_smem + s * MMA_STAGE_ELEMS, mma_smem + s * MMA_STAGE_ELEMS + MMA_A_ELEMS,
                      A, B, M, N, K, m0, n0, s, vec);
        cp_async_commit_group();
    }
    for (int kt = 0; kt < ktiles; kt++) {
        /* Groups committed so far: k-tiles 0 .. kt + MMA_STAGES - 2. Letting
         * MMA_STAGES - 2 stay pending means k-tile kt has landed (for this
         * thread's copies); the barrier makes everyone's copies visible and
         * also says every warp is done with k-tile kt - 1, whose stage the
         * copies issued next will overwrite. */
        cp_async_wait_group(MMA_STAGES - 2);
        __syncthreads();
        int next = kt + MMA_STAGES - 1;
        if (next < ktiles) {
            int s = next % MMA_STAGES;
            load_tile(mma_smem + s * MMA_STAGE_ELEMS, mma_smem + s * MMA_STAGE_ELEMS + MMA_A_ELEMS,
                      A, B, M, N, K, m0, n0, next, vec);
        }
        cp_async_commit_group();

        const uint16_t *As = mma_smem + (kt % MMA_STAGES) * MMA_STAGE_ELEMS;
        const uint16_t *Bs = As + MMA_A_ELEMS;
        /* Two sets of fragments: while the mmas of slice ks issue, the
         * ldmatrix of slice ks + 1 is already on its way, so a warp does not
         * stall on shared-memory latency between slices. */
        uint32_t a[2][MMA_TILES_M][4], b[2][MMA_TILES_N][2];
        load_frags(a[0], b[0], As, Bs, 0, wm, wn, lane);
#pragma unroll
        for (int ks = 0; ks < MMA_BK / 16; ks++) {
            if (ks + 1 < MMA_BK / 16)
                load_frags(a[(ks + 1) % 2], b[(ks + 1) % 2], As, Bs, ks + 1, wm, wn, lane);
#pragma unroll
            for (int i = 0; i < MMA_TILES_M; i++)
#pragma unroll
                for (int j = 0; j < MMA_TILES_N; j++)
                    mma_m16n8k16_bf16_f32(acc[i][j], a[ks % 2][i], b[ks % 2][j], acc[i][j]);
        }
    }
    /* Nothing may stay in flight when the block exits. */
    cp_async_wait_all();
    /* TODO(B3) end */

    /* TODO(B4) begin */
    /* acc[i][j][0..1] is row g, columns 2t and 2t + 1 of the 16 x 8 tile;
     * acc[i][j][2..3] the same columns of row g + 8 (g = lane / 4, t = lane % 4).
     * A pair of columns is one 8-byte store when N is even and C 8-byte
     * aligned (2t is even, so the pair is too): half the store instructions. */
    int g = lane >> 2, t = lane & 3;
    int pairs = N % 2 == 0 && (uintptr_t)C % 8 == 0;
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int row = m0 + wm * MMA_WARP_M + i * 16 + g + h * 8;
                int col = n0 + wn * MMA_WARP_N + j * 8 + 2 * t;
                if (row >= M) continue;
                float *p = &C[(size_t)row * N + col];
                float v0 = alpha * acc[i][j][2 * h], v1 = alpha * acc[i][j][2 * h + 1];
                if (pairs && col + 1 < N) {
                    float2 v = make_float2(v0, v1);
                    if (beta != 0.0f) {
                        float2 c = *(float2 *)p;
                        v.x += beta * c.x;
                        v.y += beta * c.y;
                    }
                    *(float2 *)p = v;
                } else {
                    if (col < N) p[0] = beta == 0.0f ? v0 : v0 + beta * p[0];
                    if (col + 1 < N) p[1] = beta == 0.0f ? v1 : v1 + beta * p[1];
                }
            }
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
    /* Above 48 KB a block must opt in to more dynamic shared memory, up to
     * what the GPU allows: a GPU with less says so, with the way out. */
    if (MMA_SMEM_BYTES > 48 * 1024) {
        int dev = 0, optin = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
            return LAB_LAUNCH_FAILED;
        if (MMA_SMEM_BYTES > optin) {
            fprintf(stderr,
                    "matmul_mma: %d x %d tiles, BK %d, %d stages need %d KB of shared memory per block and this "
                    "GPU allows %d KB; build with smaller tiles, e.g. make ... LAB_DEFS=-DMMA_BK=32 (half)\n",
                    MMA_BM, MMA_BN, MMA_BK, MMA_STAGES, MMA_SMEM_BYTES / 1024, optin / 1024);
            return LAB_LAUNCH_FAILED;
        }
        if (cudaFuncSetAttribute(matmul_mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 MMA_SMEM_BYTES) != cudaSuccess)
            return LAB_LAUNCH_FAILED;
    }
    dim3 grid((N + MMA_BN - 1) / MMA_BN, (M + MMA_BM - 1) / MMA_BM);
    matmul_mma_kernel<<<grid, MMA_THREADS, MMA_SMEM_BYTES>>>(M, N, K, alpha, A, B, beta, C, vec);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(B5) end */
}
