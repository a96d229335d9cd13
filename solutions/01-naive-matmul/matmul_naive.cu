/*
 * Lab 01: a naive matmul, one thread per element of C.
 *
 * Two versions of the same kernel that differ only in which thread computes
 * which element of C. matmul_naive_uncoalesced lets threadIdx.x walk down the
 * rows of C: the 32 threads of a warp then read 32 different rows of A (32
 * separate memory transactions per load) and write C with a stride of N
 * floats. matmul_naive lets threadIdx.x walk along the columns: a warp reads
 * 32 consecutive floats of B (one 128-byte transaction) and one element of A
 * that all its threads share. check.c proves both right; bench.c shows what
 * the mapping costs.
 * Not here yet: any reuse of loaded data (lab 02 stages tiles in shared memory).
 */
#include <cuda_runtime.h>

#include "lab.h"
#include "matmul_ladder.h"

/* Each block is BLOCK x BLOCK threads: 32 x 32 = 1024, the most a block may
 * hold, and a warp is exactly one row of the block (32 threads along x). */
#define BLOCK 32

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, all row-major.
 * First version: the row of C comes from the x coordinates, the column from y. */
__global__ void matmul_naive_uncoalesced_kernel(int M, int N, int K, float alpha, const float *A,
                                                const float *B, float beta, float *C) {
    /* TODO(task 1) begin */
    /* Neighbouring threads (consecutive threadIdx.x) get neighbouring rows:
     * in the loop below a warp's 32 loads of A are K floats apart, so each
     * needs its own transaction; the load of B is one address (broadcast). */
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) { /* the grid is rounded up: edge threads idle */
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        float *c = &C[(size_t)row * N + col];
        /* BLAS rule: with beta == 0, C is not read, so NaN in it is ignored. */
        *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
    }
    /* TODO(task 1) end */
}

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, all row-major.
 * Coalesced version: the column of C comes from the x coordinates. */
__global__ void matmul_naive_kernel(int M, int N, int K, float alpha, const float *A,
                                    const float *B, float beta, float *C) {
    /* TODO(task 3) begin */
    /* Consecutive threadIdx.x get consecutive columns: a warp reads 32
     * neighbouring floats of a row of B (one 128-byte line) and one float of
     * A (broadcast), and writes 32 neighbouring floats of C. */
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        float *c = &C[(size_t)row * N + col];
        *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
    }
    /* TODO(task 3) end */
}

/* Launch the first version over all of C. A, B, C are device pointers.
 * Returns LAB_OK, LAB_BAD_ARGUMENT for a size below 1, or LAB_LAUNCH_FAILED. */
extern "C" int matmul_naive_uncoalesced(int M, int N, int K, float alpha, const float *A,
                                        const float *B, float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* TODO(task 2) begin */
    /* x covers the M rows, y the N columns; round up so edge blocks exist. */
    dim3 block(BLOCK, BLOCK);
    dim3 grid((M + BLOCK - 1) / BLOCK, (N + BLOCK - 1) / BLOCK);
    matmul_naive_uncoalesced_kernel<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(task 2) end */
}

/* Launch the coalesced version over all of C. Same contract as above. */
extern "C" int matmul_naive(int M, int N, int K, float alpha, const float *A, const float *B,
                            float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* TODO(task 3) begin */
    /* x covers the N columns now, y the M rows. */
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive_kernel<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(task 3) end */
}
