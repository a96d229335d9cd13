/*
 * Lab 00: hello, GPU. Add two vectors, c = a + b, one thread per element.
 *
 * This is the template every later lab follows: the file holds only what you
 * write, between the TODO markers; check.c proves it right, bench.c measures
 * it. Not here yet: anything fast (lab 01 starts the matmul ladder).
 */
#include <cuda_runtime.h>

#include "lab.h"
#include "vector_add.h"

/* c[i] = a[i] + b[i] for 0 <= i < n; a, b, c are device pointers. */
__global__ void vector_add_kernel(const float *a, const float *b, float *c, int n) {
    /* TODO(task 1) begin */
    /* Compute this thread's global index from blockIdx, blockDim and
     * threadIdx, and if it is inside the vector, write c at that index.
     * The grid is rounded up, so some threads of the last block are past n. */
    (void)a; (void)b; (void)c; (void)n;
    /* TODO(task 1) end */
}

/* Launch the kernel over n elements. Returns LAB_OK, or LAB_LAUNCH_FAILED if
 * the launch was rejected. */
extern "C" int vector_add(const float *a, const float *b, float *c, int n) {
    if (n < 0) return LAB_BAD_ARGUMENT;
    if (n == 0) return LAB_OK; /* a grid of 0 blocks is an invalid launch */
    /* TODO(task 2) begin */
    /* Pick a block size (a multiple of 32, e.g. 256), compute how many
     * blocks cover n elements (round up), launch vector_add_kernel, and
     * return LAB_LAUNCH_FAILED if cudaGetLastError() reports a problem.
     * Then delete the two lines below. */
    (void)a; (void)b; (void)c;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(task 2) end */
}
