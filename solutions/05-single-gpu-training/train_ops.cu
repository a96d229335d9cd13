/*
 * Lab 05: the training-specific kernels of the course model.
 *
 * The forward kernels, the matmuls and the rest of the backward pass are the
 * course's (kernels/cuda/model_ops.cu, model_gpu.c); the backend calls the
 * four functions of this file (prototypes and contracts in
 * kernels/cuda/model_gpu.h). All gradients are fp32; the AdamW step keeps fp32
 * master weights and moments and writes the bf16 copy the matmuls read.
 * Not here: fusing these into their neighbours, activation recomputation.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>

#include "cuda/model_gpu.h"
#include "lab.h"

#define WARP 32
#define THREADS 256

static __device__ float warp_sum(float x) {
    for (int o = WARP / 2; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

/* ---- Task 1: RMSNorm backward ------------------------------------------------ */

/* One warp per row: dinp[n, :] += rstd * (g - xhat * mean(g * xhat)), g = dout * w. */
__global__ void rmsnorm_backward_dinp_kernel(float *dinp, const float *dout, const float *inp,
                                             const float *weight, const float *rstd, int N, int D) {
    int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (row >= N) return;
    const float *x = inp + (size_t)row * D, *g = dout + (size_t)row * D;
    const float r = rstd[row];
    float dot = 0.0f;
    for (int d = lane; d < D; d += WARP) dot += g[d] * weight[d] * x[d] * r;
    dot = warp_sum(dot) / (float)D;
    float *dx = dinp + (size_t)row * D;
    for (int d = lane; d < D; d += WARP) dx[d] += r * (g[d] * weight[d] - x[d] * r * dot);
}

/* The gain's gradient: for each column d, a sum over all N rows, in a fixed
 * order so that it is deterministic (no atomics). DW_WARPS is the number of
 * warps per block for the faster version that TODO 1b ends with. */
#define DW_WARPS 32
__global__ void rmsnorm_backward_dweight_kernel(float *dweight, const float *dout, const float *inp,
                                                const float *rstd, int N, int D) {
    /* One thread per column would leave most of the GPU idle at D = 768. A
     * block takes 32 columns with 32 warps: warp w sums rows w, w + 32, ...
     * (each lane one column, so the loads of a warp are one coalesced row
     * segment), then one warp adds the 32 partial sums in a fixed order. */
    __shared__ float part[DW_WARPS][WARP + 1]; /* +1: the column reads below hit 32 different banks */
    const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP, d = blockIdx.x * WARP + lane;
    float acc = 0.0f;
    if (d < D)
        for (int n = w; n < N; n += DW_WARPS) acc += dout[(size_t)n * D + d] * inp[(size_t)n * D + d] * rstd[n];
    part[w][lane] = acc;
    __syncthreads();
    if (w == 0 && d < D) {
        float s = 0.0f;
        for (int k = 0; k < DW_WARPS; k++) s += part[k][lane];
        dweight[d] += s;
    }
}

extern "C" int rmsnorm_backward_gpu(float *dinp, float *dweight, const float *dout, const float *inp,
                                    const float *weight, const float *rstd, int N, int D) {
    if (N < 0 || D < 1) return LAB_BAD_ARGUMENT;
    if (N == 0) return LAB_OK;
    rmsnorm_backward_dinp_kernel<<<(N + THREADS / WARP - 1) / (THREADS / WARP), THREADS>>>(dinp, dout, inp,
                                                                                        weight, rstd, N, D);
    rmsnorm_backward_dweight_kernel<<<(D + WARP - 1) / WARP, DW_WARPS * WARP>>>(dweight, dout, inp, rstd, N, D);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
}

/* ---- Task 2: attention softmax backward ---------------------------------------- */

/* One warp per row (r, t): the row's sum of P * dP, then the Jacobian-vector product. */
__global__ void softmax_backward_kernel(float *dpreatt, const float *att, const float *datt, int BH, int T,
                                        float scale) {
    long long row = (long long)blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= (long long)BH * T) return;
    const int t = (int)(row % T);
    const float *p = att + row * T, *dp = datt + row * T;
    float *ds = dpreatt + row * T;
    float s = 0.0f;
    for (int u = lane; u <= t; u += WARP) s += p[u] * dp[u];
    s = warp_sum(s);
    for (int u = lane; u < T; u += WARP) ds[u] = u <= t ? scale * p[u] * (dp[u] - s) : 0.0f;
}

extern "C" int attention_softmax_backward_gpu(float *dpreatt, const float *att, const float *datt, int BH,
                                              int T, float scale) {
    if (BH < 0 || T < 0) return LAB_BAD_ARGUMENT;
    if (BH == 0 || T == 0) return LAB_OK;
    long long rows = (long long)BH * T;
    softmax_backward_kernel<<<(unsigned)((rows + THREADS / WARP - 1) / (THREADS / WARP)), THREADS>>>(
        dpreatt, att, datt, BH, T, scale);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
}

/* ---- Task 3: SwiGLU backward ----------------------------------------------------- */

__global__ void swiglu_backward_kernel(float *dgate, float *dup, const float *dout, const float *gate,
                                       const float *up, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = gate[i], s = 1.0f / (1.0f + expf(-g)), go = dout[i];
    dgate[i] = go * up[i] * s * (1.0f + g * (1.0f - s)); /* silu'(g) = s (1 + g (1 - s)) */
    dup[i] = go * g * s;
}

extern "C" int swiglu_backward_gpu(float *dgate, float *dup, const float *dout, const float *gate,
                                   const float *up, size_t n) {
    if (n == 0) return LAB_OK;
    swiglu_backward_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS>>>(dgate, dup, dout, gate, up, n);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
}

/* ---- Tasks 4 and 5: fused AdamW with fp32 master weights and a bf16 copy ---------- */

/* One thread per parameter: every array is read once and written once. */
__global__ void adamw_kernel(float *master, uint16_t *params_bf16, const float *grads, float *m, float *v,
                             size_t n, float lr, float beta1, float beta2, float c1, float c2, float eps,
                             float wd, float grad_scale) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = grads[i] * grad_scale;
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float p = master[i];
    p -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * p);
    master[i] = p;
    /* Task 5: the working copy is rounded from the fp32 master, never updated in bf16. */
    __nv_bfloat16_raw r = __nv_bfloat16_raw(__float2bfloat16(p));
    params_bf16[i] = r.x;
}

extern "C" int adamw_step_gpu(float *master, uint16_t *params_bf16, const float *grads, float *m, float *v,
                              size_t n, float lr, float beta1, float beta2, float eps, float weight_decay,
                              long t, float grad_scale) {
    if (t < 1) return LAB_BAD_ARGUMENT;
    if (n == 0) return LAB_OK;
    /* Bias corrections on the host, once per call, as the CPU computes them. */
    const float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    adamw_kernel<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS>>>(master, params_bf16, grads, m, v, n, lr,
                                                                      beta1, beta2, c1, c2, eps, weight_decay,
                                                                      grad_scale);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
}
