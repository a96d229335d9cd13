/*
 * Lab 04, step A: tensor cores through WMMA.
 * Each block computes a 64 x 64 tile of C with four warps; each warp owns a
 * 32 x 32 piece of it, that is 2 x 2 WMMA accumulator fragments of 16 x 16.
 * The block walks K in steps of WMMA_BK, staging bf16 tiles of A and B in
 * shared memory (zeros past the edges, as in lab 02), and every warp feeds
 * them to the tensor cores with wmma::load_matrix_sync and wmma::mma_sync.
 * The fp32 accumulators go through shared memory once at the end so the
 * alpha/beta update can be written with ordinary bounds checks.
 * Not here yet: asynchronous copies, ldmatrix and swizzling (step B,
 * matmul_mma.cu) and Hopper's wgmma (step C, matmul_wgmma.cu).
 * [[maybe_unused]] marks the variables the starter declares for the TODO
 * blocks: until they are written, nvcc -Werror would reject them as unused.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <stdint.h>

#include "lab.h"
#include "matmul_ladder.h"

using namespace nvcuda;

/* Block tile: WMMA_BM x WMMA_BN of C, WMMA_BK of K per step. Four warps in a
 * 2 x 2 grid, each 32 x 32 (2 x 2 fragments). */
#define WMMA_BM 64
#define WMMA_BN 64
#define WMMA_BK 32
#define WMMA_THREADS 128
/* Rows of the shared tiles are padded (16 bytes for bf16, 32 for fp32) to
 * shift each row to other banks, so the 16 rows a fragment load touches do
 * not all start in the same bank. WMMA needs ldm to be a multiple of 16
 * bytes and each fragment's first element 32-byte aligned; the PTX ISA also
 * asks that every row of an fp32 accumulator (8 registers, 32 bytes) start
 * 32-byte aligned, hence 8 floats of pad rather than 4 (the emulator checks
 * the first two rules, not this one). */
#define WMMA_PAD_BF16 8
#define WMMA_PAD_F32 8

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, row-major; A and B
 * bf16, C and the accumulation fp32. Block (blockIdx.x, blockIdx.y) owns the
 * tile of C at rows blockIdx.y * WMMA_BM, columns blockIdx.x * WMMA_BN. */
__global__ void __launch_bounds__(WMMA_THREADS)
matmul_wmma_kernel(int M, int N, int K, float alpha, const __nv_bfloat16 *A,
                   const __nv_bfloat16 *B, float beta, float *C) {
    [[maybe_unused]] __shared__ __align__(32) __nv_bfloat16 As[WMMA_BM][WMMA_BK + WMMA_PAD_BF16];
    [[maybe_unused]] __shared__ __align__(32) __nv_bfloat16 Bs[WMMA_BK][WMMA_BN + WMMA_PAD_BF16];
    [[maybe_unused]] __shared__ __align__(32) float Cs[WMMA_BM][WMMA_BN + WMMA_PAD_F32];
    [[maybe_unused]] int tid = threadIdx.x;
    int warp = tid / 32;
    [[maybe_unused]] int wm = warp / 2, wn = warp % 2; /* this warp's 32 x 32 piece */
    [[maybe_unused]] int m0 = blockIdx.y * WMMA_BM, n0 = blockIdx.x * WMMA_BN;
    [[maybe_unused]] const __nv_bfloat16 zero = __float2bfloat16(0.0f);

    /* TODO(A1) begin */
    /* Task 1. Accumulate this warp's 32 x 32 piece of C in 2 x 2
     * wmma::fragment<wmma::accumulator, 16, 16, 16, float> (fill_fragment 0).
     * Walk K in steps of WMMA_BK: all WMMA_THREADS threads copy the
     * WMMA_BM x WMMA_BK tile of A into As and the WMMA_BK x WMMA_BN tile of B
     * into Bs (coalesced: consecutive threads, consecutive columns), storing
     * `zero` for elements outside A or B; __syncthreads(); then for each
     * 16-wide slice kk of the tile load 2 matrix_a fragments (row_major, from
     * &As[wm * 32 + i * 16][kk], ldm WMMA_BK + WMMA_PAD_BF16) and 2 matrix_b
     * fragments (row_major, from &Bs[kk][wn * 32 + j * 16], ldm WMMA_BN +
     * WMMA_PAD_BF16) and issue the 2 x 2 wmma::mma_sync; __syncthreads()
     * before the next tiles land. */
    (void)As; (void)Bs; (void)tid; (void)wm; (void)wn; (void)m0; (void)n0; (void)zero;
    /* TODO(A1) end */

    /* TODO(A2) begin */
    /* Task 2. Store the 2 x 2 accumulators into Cs with store_matrix_sync
     * (mem_row_major, ldm WMMA_BN + WMMA_PAD_F32); __syncthreads(); then
     * every thread writes its share of the tile: C = alpha * acc + beta * C
     * inside the matrix only, without reading C when beta == 0. */
    (void)Cs; (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    /* TODO(A2) end */
}

/* The tile sizes this file was compiled with, for the checks' edge cases. */
extern "C" void matmul_wmma_tiles(int *bm, int *bn, int *bk) {
    *bm = WMMA_BM;
    *bn = WMMA_BN;
    *bk = WMMA_BK;
}

/* Launch over all of C. A, B hold bf16 bit patterns on the device; C fp32.
 * Returns LAB_OK, LAB_BAD_ARGUMENT for a size below 1, or LAB_LAUNCH_FAILED. */
extern "C" int matmul_wmma(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B,
                           float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* TODO(A3) begin */
    /* Task 3. A grid of ceil(N / WMMA_BN) x ceil(M / WMMA_BM) blocks of
     * WMMA_THREADS threads; launch matmul_wmma_kernel (cast A and B to
     * const __nv_bfloat16 *); return LAB_LAUNCH_FAILED if cudaGetLastError()
     * reports a problem, else LAB_OK. Then delete the two lines below. */
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(A3) end */
}
