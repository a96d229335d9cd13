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
    /* Consecutive threads touch consecutive floats, so each warp's 32 loads
     * fall in one 128-byte segment: fully coalesced. */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
    /* TODO(task 1) end */
}

/* Launch the kernel over n elements. Returns LAB_OK, or LAB_LAUNCH_FAILED if
 * the launch was rejected. */
extern "C" int vector_add(const float *a, const float *b, float *c, int n) {
    if (n < 0) return LAB_BAD_ARGUMENT;
    if (n == 0) return LAB_OK; /* a grid of 0 blocks is an invalid launch */
    /* TODO(task 2) begin */
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    vector_add_kernel<<<blocks, threads>>>(a, b, c, n);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(task 2) end */
}
