/*
 * Random fills on the device (see fill.h): one thread per element, each
 * computing its own value from (seed, stream, i), so no state is shared and
 * the result does not depend on the launch shape.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda/fill.h"
#include "error.h"
#include "rng.h"

#define FILL_THREADS 256

static unsigned fill_blocks(size_t n) { return (unsigned)((n + FILL_THREADS - 1) / FILL_THREADS); }

__global__ void fill_uniform_kernel(float *x, size_t n, uint64_t seed, uint64_t stream, float lo, float span) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = lo + span * rng_uniform_at(seed, stream, i);
}

/* Round to nearest even, as common/half.h's bf16_from_float does on the
 * host (the values here are finite, so no NaN case). */
__global__ void fill_uniform_bf16_kernel(uint16_t *x, size_t n, uint64_t seed, uint64_t stream, float lo,
                                         float span) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = lo + span * rng_uniform_at(seed, stream, i);
    uint32_t u = __float_as_uint(v);
    x[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

extern "C" void gpu_fill_uniform(float *x, size_t n, uint64_t seed, uint64_t stream, float lo, float hi) {
    if (n == 0) return;
    fill_uniform_kernel<<<fill_blocks(n), FILL_THREADS>>>(x, n, seed, stream, lo, hi - lo);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_fill_uniform_bf16(uint16_t *x, size_t n, uint64_t seed, uint64_t stream, float lo, float hi) {
    if (n == 0) return;
    fill_uniform_bf16_kernel<<<fill_blocks(n), FILL_THREADS>>>(x, n, seed, stream, lo, hi - lo);
    CUDA_CHECK_LAST();
}
