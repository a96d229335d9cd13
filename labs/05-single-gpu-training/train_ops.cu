/*
 * Lab 05: the training-specific kernels of the course model.
 *
 * The forward kernels, the matmuls and the rest of the backward pass are the
 * course's (kernels/cuda/model_ops.cu, model_gpu.c); the backend calls the
 * four functions of this file (prototypes and contracts in
 * kernels/cuda/model_gpu.h). The gradients are fp32, except SwiGLU's: its
 * inputs and gradients are bf16, computed on in fp32. The AdamW step keeps fp32
 * master weights and moments and writes the bf16 copy the matmuls read.
 * None of them computes much: their time is the bytes they move, so each
 * reads and writes every array once, 16 bytes per access where the pointers
 * allow. Not here: fusing these into their neighbours, activation
 * recomputation.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

#include "cuda/model_gpu.h"
#include "cuda/vec4.cuh"
#include "lab.h"

#define WARP 32
#define THREADS 256

static __device__ float warp_sum(float x) {
    for (int o = WARP / 2; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

/* ---- vector access ------------------------------------------------------------ */

/* An element-wise kernel can take VEC consecutive elements per thread, through
 * load4 and store4 of cuda/vec4.cuh: one 16-byte access per array instead of
 * four 4-byte ones (the model's buffers are 16-byte aligned; others fall back
 * to scalar accesses). vec_blocks(n) is the grid for n elements that way.
 * [[maybe_unused]]: a file whose kernels take one element per thread does not
 * call it, and nvcc -Werror would reject an unused function. */

[[maybe_unused]] static unsigned vec_blocks(size_t n) {
    return (unsigned)(((n + VEC - 1) / VEC + THREADS - 1) / THREADS);
}

/* ---- Task 1: RMSNorm backward ------------------------------------------------ */

/* TODO(1a, 1b) begin */
/* One warp per row: dinp[n, :] += rstd * (g - xhat * mean(g * xhat)), g = dout * w. */
__global__ void rmsnorm_backward_dinp_kernel(float *dinp, const float *dout, const float *inp,
                                             const float *weight, const float *rstd, int N, int D) {
    /* TODO 1a: row = this warp's row, lane = threadIdx.x % WARP; leave if row >= N.
     * Each lane sums dout[d] * weight[d] * x[d] * rstd (g * xhat) over d = lane,
     * lane + 32, ...; warp_sum() gives the whole row's dot; divide by D. Then
     * each lane ADDS rstd * (dout[d] * weight[d] - x[d] * rstd * dot) to its
     * dinp elements. */
    (void)dinp; (void)dout; (void)inp; (void)weight; (void)rstd; (void)N; (void)D; (void)warp_sum;
}

/* The gain's gradient: for each column d, a sum over all N rows, in a fixed
 * order so that it is deterministic (no atomics). DW_WARPS is the number of
 * warps per block for the faster version that TODO 1b ends with. */
#define DW_WARPS 32
__global__ void rmsnorm_backward_dweight_kernel(float *dweight, const float *dout, const float *inp,
                                                const float *rstd, int N, int D) {
    /* TODO 1b: thread d sums dout[n, d] * inp[n, d] * rstd[n] over n = 0..N-1
     * and ADDS the sum to dweight[d]. (Why not atomicAdd per row? The order
     * of the additions would change from run to run.) This is correct but
     * leaves most of a GPU idle at D = 768. Once it passes, make it faster:
     * give each block WARP columns (lane = column) and DW_WARPS warps, let
     * warp w sum rows w, w + DW_WARPS, ..., and add the warps' partial sums
     * in a fixed order through shared memory (DW_WARPS x WARP floats). */
    (void)dweight; (void)dout; (void)inp; (void)rstd; (void)N; (void)D;
}
/* TODO(1a, 1b) end */

extern "C" int rmsnorm_backward_gpu(float *dinp, float *dweight, const float *dout, const float *inp,
                                    const float *weight, const float *rstd, int N, int D) {
    if (N < 0 || D < 1) return LAB_BAD_ARGUMENT;
    if (N == 0) return LAB_OK;
    /* TODO(1c) begin */
    /* TODO 1c: launch both kernels: the first with THREADS threads per block,
     * THREADS / WARP rows per block; the second with THREADS threads per
     * block, one column per thread (for the faster version of 1b, one block
     * of DW_WARPS * WARP threads per WARP columns). Return LAB_LAUNCH_FAILED
     * if cudaGetLastError() reports a problem. */
    (void)dinp; (void)dweight; (void)dout; (void)inp; (void)weight; (void)rstd;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(1c) end */
}

/* ---- Task 2: attention softmax backward ---------------------------------------- */

/* One warp per row (r, t): the row's sum of P * dP, then the Jacobian-vector product. */
__global__ void softmax_backward_kernel(float *dpreatt, const float *att, const float *datt, int BH, int T,
                                        float scale) {
    /* TODO(2a) begin */
    /* TODO 2a: row = this warp's row of the BH * T rows, t = row % T (keys
     * 0..t are visible). s = sum over u <= t of P[u] * dP[u] (warp_sum). Write
     * dpreatt[u] = scale * P[u] * (dP[u] - s) for u <= t and 0 for t < u < T,
     * without reading P or dP above the diagonal: nothing there is yours to
     * use (the check fills it with NaN). */
    (void)dpreatt; (void)att; (void)datt; (void)BH; (void)T; (void)scale;
    /* TODO(2a) end */
}

extern "C" int attention_softmax_backward_gpu(float *dpreatt, const float *att, const float *datt, int BH,
                                              int T, float scale) {
    if (BH < 0 || T < 0) return LAB_BAD_ARGUMENT;
    if (BH == 0 || T == 0) return LAB_OK;
    /* TODO(2b) begin */
    /* TODO 2b: launch softmax_backward_kernel over BH * T rows (a long long:
     * at the bench's shape, batch 8 x 12 heads x 1024, it is 98304) and check the launch. */
    (void)dpreatt; (void)att; (void)datt; (void)scale;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(2b) end */
}

/* ---- Task 3: SwiGLU backward ----------------------------------------------------- */

/* TODO(3a) begin */
__global__ void swiglu_backward_kernel(uint16_t *dgate, uint16_t *dup, const uint16_t *dout, const uint16_t *gate,
                                       const uint16_t *up, size_t n) {
    /* TODO 3a: with s = sigmoid(gate[i]): dup[i] = dout[i] * silu(gate[i]) and
     * dgate[i] = dout[i] * up[i] * silu'(gate[i]); work out silu' in terms of s.
     * Every array holds bf16 bits. Widen each input to fp32 (a bf16 is the
     * upper half of a float: __uint_as_float((uint32_t)bits << 16)), compute
     * in fp32 and store each result's bf16 bits: the next matmuls read these
     * gradients as bf16 (__float2bfloat16 rounds to nearest even;
     * __nv_bfloat16_raw gives the bits). */
    (void)dgate; (void)dup; (void)dout; (void)gate; (void)up; (void)n;
}
/* TODO(3a) end */

extern "C" int swiglu_backward_gpu(uint16_t *dgate, uint16_t *dup, const uint16_t *dout, const uint16_t *gate,
                                   const uint16_t *up, size_t n) {
    if (n == 0) return LAB_OK;
    /* TODO(3b) begin */
    /* TODO 3b: launch one thread per element and check the launch. */
    (void)dgate; (void)dup; (void)dout; (void)gate; (void)up;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(3b) end */
}

/* ---- Tasks 4 and 5: fused AdamW with fp32 master weights and a bf16 copy ---------- */

/* TODO(4a, 5) begin */
/* One thread per parameter: every array is read once and written once. */
__global__ void adamw_kernel(float *master, uint16_t *params_bf16, const float *grads, float *m, float *v,
                             size_t n, float lr, float beta1, float beta2, float c1, float c2, float eps,
                             float wd, float grad_scale) {
    /* TODO 4a: g = grads[i] * grad_scale; update m and v; then the master
     * weight p -= lr * ((m / c1) / (sqrt(v / c2) + eps) + wd * p), the same
     * order of operations as adamw_update() in kernels/cpu/model_ops.c.
     * TODO 5: write params_bf16[i], the bf16 bits of the new master value
     * (__float2bfloat16 rounds to nearest even; __nv_bfloat16_raw gives the bits). */
    (void)master; (void)params_bf16; (void)grads; (void)m; (void)v; (void)n; (void)lr; (void)beta1;
    (void)beta2; (void)c1; (void)c2; (void)eps; (void)wd; (void)grad_scale;
}
/* TODO(4a, 5) end */

extern "C" int adamw_step_gpu(float *master, uint16_t *params_bf16, const float *grads, float *m, float *v,
                              size_t n, float lr, float beta1, float beta2, float eps, float weight_decay,
                              long t, float grad_scale) {
    if (t < 1) return LAB_BAD_ARGUMENT;
    if (n == 0) return LAB_OK;
    /* TODO(4b) begin */
    /* TODO 4b: the bias corrections c1 = 1 - beta1^t and c2 = 1 - beta2^t
     * (powf on the host, once per call), then launch adamw_kernel. */
    (void)master; (void)params_bf16; (void)grads; (void)m; (void)v; (void)lr; (void)beta1; (void)beta2;
    (void)eps; (void)weight_decay; (void)grad_scale;
    return LAB_NOT_IMPLEMENTED;
    /* TODO(4b) end */
}
