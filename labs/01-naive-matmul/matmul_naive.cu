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
    /* Compute this thread's row of C from the x coordinates
     * (blockIdx.x, blockDim.x, threadIdx.x) and its column from the y ones.
     * If both are inside C, accumulate the dot product of row `row` of A and
     * column `col` of B in a float, then store alpha * acc + beta * C[row][col].
     * When beta == 0, do not read C at all (it may hold NaN; BLAS never reads
     * it then, and 0 * NaN would be NaN). */
    (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    /* TODO(task 1) end */
}

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, all row-major.
 * Coalesced version: the column of C comes from the x coordinates. */
__global__ void matmul_naive_kernel(int M, int N, int K, float alpha, const float *A,
                                    const float *B, float beta, float *C) {
    /* TODO(task 3) begin */
    /* The same computation with the roles of x and y swapped:
     * the column of C comes from the x coordinates, the row from y. Then the
     * 32 threads of a warp read 32 neighbouring floats of B instead of 32
     * rows of A. Same beta == 0 rule as above. */
    (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    /* TODO(task 3) end */
}

/* Launch the first version over all of C. A, B, C are device pointers.
 * Returns LAB_OK, LAB_BAD_ARGUMENT for a size below 1, or LAB_LAUNCH_FAILED. */
extern "C" int matmul_naive_uncoalesced(int M, int N, int K, float alpha, const float *A,
                                        const float *B, float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* TODO(task 2) begin */
    /* A BLOCK x BLOCK block of threads; a grid whose x
     * dimension covers the M rows and y the N columns (round up); launch
     * matmul_naive_uncoalesced_kernel; return LAB_LAUNCH_FAILED if
     * cudaGetLastError() reports a problem, else LAB_OK. Then delete the two
     * lines below. */
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(task 2) end */
}

/* Launch the coalesced version over all of C. Same contract as above. */
extern "C" int matmul_naive(int M, int N, int K, float alpha, const float *A, const float *B,
                            float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* TODO(task 3) begin */
    /* As in matmul_naive_uncoalesced, but the grid's x
     * dimension now covers the N columns and y the M rows; launch
     * matmul_naive_kernel. Then delete the two lines below. */
    (void)alpha; (void)A; (void)B; (void)beta; (void)C;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(task 3) end */
}
