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
/* dinp and dweight in one pass over dout and inp. A block takes
 * warps * RMS_ROWS_PER_WARP consecutive rows; each warp does its rows one at a
 * time: the row's dot of g = dout * w with xhat = x * rstd (warp_sum), then
 * dinp[n, :] += rstd * (g - xhat * mean(g * xhat)), and it adds the row's
 * dout * xhat to its own slice of shared memory, the dweight sums of its rows.
 * At the end the block adds its warps' slices in order into one row of
 * partial [blocks, D], which rmsnorm_dweight_kernel sums. Every sum has a fixed
 * order, so the result does not change from run to run (no atomics), and
 * dout and inp leave DRAM once: a separate dweight kernel would read both
 * again. The second loop over the row reads what the first just brought into
 * the cache. With vec (D a multiple of 4, 16-byte aligned rows) every access
 * is 16 bytes wide. */
#define RMS_ROWS_PER_WARP 2
#define RMS_MAX_WARPS 8
__global__ void rmsnorm_backward_kernel(float *dinp, float *partial, const float *dout, const float *inp,
                                        const float *weight, const float *rstd, int N, int D, int vec) {
    extern __shared__ __align__(16) float dw_warp[]; /* [warps][D]: each warp's own dweight sums */
    const int warps = blockDim.x / WARP, lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
    float *acc = dw_warp + (size_t)w * D;
    for (int d = lane; d < D; d += WARP) acc[d] = 0.0f;
    __syncwarp(); /* the loops below give the lanes other columns of acc */
    for (int k = 0; k < RMS_ROWS_PER_WARP; k++) {
        const int row = (blockIdx.x * warps + w) * RMS_ROWS_PER_WARP + k;
        if (row >= N) break; /* the whole warp leaves together */
        const float *x = inp + (size_t)row * D, *g = dout + (size_t)row * D;
        float *dx = dinp + (size_t)row * D;
        const float r = rstd[row];
        float dot = 0.0f;
        if (vec) {
            for (int d = VEC * lane; d < D; d += VEC * WARP) {
                const float4 g4 = *(const float4 *)(g + d), w4 = *(const float4 *)(weight + d);
                const float4 x4 = *(const float4 *)(x + d);
                dot += g4.x * w4.x * x4.x * r + g4.y * w4.y * x4.y * r + g4.z * w4.z * x4.z * r +
                       g4.w * w4.w * x4.w * r;
            }
            dot = warp_sum(dot) / (float)D;
            for (int d = VEC * lane; d < D; d += VEC * WARP) {
                const float4 g4 = *(const float4 *)(g + d), w4 = *(const float4 *)(weight + d);
                const float4 x4 = *(const float4 *)(x + d);
                float4 d4 = *(float4 *)(dx + d), a4 = *(float4 *)(acc + d);
                d4.x += r * (g4.x * w4.x - x4.x * r * dot);
                d4.y += r * (g4.y * w4.y - x4.y * r * dot);
                d4.z += r * (g4.z * w4.z - x4.z * r * dot);
                d4.w += r * (g4.w * w4.w - x4.w * r * dot);
                a4.x += g4.x * x4.x * r;
                a4.y += g4.y * x4.y * r;
                a4.z += g4.z * x4.z * r;
                a4.w += g4.w * x4.w * r;
                *(float4 *)(dx + d) = d4;
                *(float4 *)(acc + d) = a4;
            }
        } else {
            for (int d = lane; d < D; d += WARP) dot += g[d] * weight[d] * x[d] * r;
            dot = warp_sum(dot) / (float)D;
            for (int d = lane; d < D; d += WARP) {
                dx[d] += r * (g[d] * weight[d] - x[d] * r * dot);
                acc[d] += g[d] * x[d] * r;
            }
        }
    }
    __syncthreads();
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float s = 0.0f;
        for (int k = 0; k < warps; k++) s += dw_warp[(size_t)k * D + d];
        partial[(size_t)blockIdx.x * D + d] = s;
    }
}

/* dweight[d] += the sum of column d of partial [R, D], in a fixed order. One
 * thread per column would leave each thread R dependent loads; a block takes
 * 32 columns with DW_WARPS warps: warp w sums rows w, w + DW_WARPS, ... (each
 * lane one column, so a warp's loads are one coalesced row segment), then one
 * warp adds the DW_WARPS partial sums in order. */
#define DW_WARPS 32
__global__ void rmsnorm_dweight_kernel(float *dweight, const float *partial, int R, int D) {
    __shared__ float part[DW_WARPS][WARP + 1]; /* +1: the column reads below hit 32 different banks */
    const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP, d = blockIdx.x * WARP + lane;
    float acc = 0.0f;
    if (d < D)
        for (int n = w; n < R; n += DW_WARPS) acc += partial[(size_t)n * D + d];
    part[w][lane] = acc;
    __syncthreads();
    if (w == 0 && d < D) {
        float s = 0.0f;
        for (int k = 0; k < DW_WARPS; k++) s += part[k][lane];
        dweight[d] += s;
    }
}

/* Grow-only device scratch for the blocks' dweight rows, kept between calls. */
static float *dw_partial;
static size_t dw_partial_cap;

/* TODO(1a, 1b) end */

extern "C" int rmsnorm_backward_gpu(float *dinp, float *dweight, const float *dout, const float *inp,
                                    const float *weight, const float *rstd, int N, int D) {
    if (N < 0 || D < 1) return LAB_BAD_ARGUMENT;
    if (N == 0) return LAB_OK;
    /* TODO(1c) begin */
    /* As many warps as keep a block's dweight slices within the default 48 KiB of shared memory
     * (8 at D = 768); a row too wide even for one warp's slice asks for more. */
    const size_t row_bytes = (size_t)D * sizeof(float);
    int warps = (int)(48 * 1024 / row_bytes);
    warps = warps > RMS_MAX_WARPS ? RMS_MAX_WARPS : warps < 1 ? 1 : warps;
    const size_t smem = warps * row_bytes;
    if (smem > 48 * 1024 && (smem > INT32_MAX || cudaFuncSetAttribute(rmsnorm_backward_kernel,
                                                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                      (int)smem) != cudaSuccess))
        return LAB_BAD_ARGUMENT;
    const int rows_per_block = warps * RMS_ROWS_PER_WARP, blocks = (N + rows_per_block - 1) / rows_per_block;
    if ((size_t)blocks * D > dw_partial_cap) {
        if (dw_partial) cudaFree(dw_partial);
        dw_partial_cap = 0;
        if (cudaMalloc((void **)&dw_partial, (size_t)blocks * D * sizeof(float)) != cudaSuccess)
            return LAB_LAUNCH_FAILED;
        dw_partial_cap = (size_t)blocks * D;
    }
    const int vec = D % VEC == 0 && aligned16(dinp) && aligned16(dout) && aligned16(inp) && aligned16(weight);
    rmsnorm_backward_kernel<<<blocks, warps * WARP, smem>>>(dinp, dw_partial, dout, inp, weight, rstd, N, D, vec);
    rmsnorm_dweight_kernel<<<(D + WARP - 1) / WARP, DW_WARPS * WARP>>>(dweight, dw_partial, blocks, D);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(1c) end */
}

/* ---- Task 2: attention softmax backward ---------------------------------------- */

/* One warp per row (r, t): the row's sum of P * dP, then the Jacobian-vector product. */
__global__ void softmax_backward_kernel(float *dpreatt, const float *att, const float *datt, int BH, int T,
                                        float scale) {
    /* TODO(2a) begin */
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
    /* TODO(2a) end */
}

extern "C" int attention_softmax_backward_gpu(float *dpreatt, const float *att, const float *datt, int BH,
                                              int T, float scale) {
    if (BH < 0 || T < 0) return LAB_BAD_ARGUMENT;
    if (BH == 0 || T == 0) return LAB_OK;
    /* TODO(2b) begin */
    long long rows = (long long)BH * T;
    softmax_backward_kernel<<<(unsigned)((rows + THREADS / WARP - 1) / (THREADS / WARP)), THREADS>>>(
        dpreatt, att, datt, BH, T, scale);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(2b) end */
}

/* ---- Task 3: SwiGLU backward ----------------------------------------------------- */

/* TODO(3a) begin */
/* silu'(g) = s (1 + g (1 - s)) with s = sigmoid(g): the gradients of one element. */
static __device__ void swiglu_grad(float *dg, float *du, float go, float g, float u) {
    const float s = 1.0f / (1.0f + expf(-g));
    *dg = go * u * s * (1.0f + g * (1.0f - s));
    *du = go * g * s;
}

/* VEC elements per thread: three 8-byte loads of bf16 widened to fp32
 * (load4_bf16), and two 8-byte stores of the gradients rounded to bf16
 * (store4_bf16 rounds to nearest even). */
__global__ void swiglu_backward_kernel(uint16_t *dgate, uint16_t *dup, const uint16_t *dout, const uint16_t *gate,
                                       const uint16_t *up, size_t n, int vec) {
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (i >= n) return;
    const float4 go = load4_bf16(dout, i, n, vec), g = load4_bf16(gate, i, n, vec), u = load4_bf16(up, i, n, vec);
    float4 dg, du;
    swiglu_grad(&dg.x, &du.x, go.x, g.x, u.x);
    swiglu_grad(&dg.y, &du.y, go.y, g.y, u.y);
    swiglu_grad(&dg.z, &du.z, go.z, g.z, u.z);
    swiglu_grad(&dg.w, &du.w, go.w, g.w, u.w);
    store4_bf16(dgate, i, n, vec, dg);
    store4_bf16(dup, i, n, vec, du);
}
/* TODO(3a) end */

extern "C" int swiglu_backward_gpu(uint16_t *dgate, uint16_t *dup, const uint16_t *dout, const uint16_t *gate,
                                   const uint16_t *up, size_t n) {
    if (n == 0) return LAB_OK;
    /* TODO(3b) begin */
    const int vec = aligned8(dgate) && aligned8(dup) && aligned8(dout) && aligned8(gate) && aligned8(up);
    swiglu_backward_kernel<<<vec_blocks(n), THREADS>>>(dgate, dup, dout, gate, up, n, vec);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(3b) end */
}

/* ---- Tasks 4 and 5: fused AdamW with fp32 master weights and a bf16 copy ---------- */

/* TODO(4a, 5) begin */
/* The update of one parameter; returns the new master value. */
static __device__ float adamw_one(float p, float g, float *m, float *v, float lr, float beta1, float beta2,
                                  float c1, float c2, float eps, float wd) {
    *m = beta1 * *m + (1.0f - beta1) * g;
    *v = beta2 * *v + (1.0f - beta2) * g * g;
    return p - lr * ((*m / c1) / (sqrtf(*v / c2) + eps) + wd * p);
}

static __device__ uint16_t bf16_bits(float f) {
    __nv_bfloat16_raw r = __nv_bfloat16_raw(__float2bfloat16(f));
    return r.x;
}

/* VEC parameters per thread: every fp32 array is read once and written once in
 * 16-byte accesses, the bf16 copy in one 8-byte store. */
__global__ void adamw_kernel(float *master, uint16_t *params_bf16, const float *grads, float *m, float *v,
                             size_t n, float lr, float beta1, float beta2, float c1, float c2, float eps,
                             float wd, float grad_scale, int vec) {
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (i >= n) return;
    const float4 g = load4(grads, i, n, vec);
    float4 p = load4(master, i, n, vec), mi = load4(m, i, n, vec), vi = load4(v, i, n, vec);
    p.x = adamw_one(p.x, g.x * grad_scale, &mi.x, &vi.x, lr, beta1, beta2, c1, c2, eps, wd);
    p.y = adamw_one(p.y, g.y * grad_scale, &mi.y, &vi.y, lr, beta1, beta2, c1, c2, eps, wd);
    p.z = adamw_one(p.z, g.z * grad_scale, &mi.z, &vi.z, lr, beta1, beta2, c1, c2, eps, wd);
    p.w = adamw_one(p.w, g.w * grad_scale, &mi.w, &vi.w, lr, beta1, beta2, c1, c2, eps, wd);
    store4(m, i, n, vec, mi);
    store4(v, i, n, vec, vi);
    store4(master, i, n, vec, p);
    /* Task 5: the working copy is rounded from the fp32 master, never updated in bf16. */
    const uint16_t b[VEC] = {bf16_bits(p.x), bf16_bits(p.y), bf16_bits(p.z), bf16_bits(p.w)};
    if (vec && i + VEC <= n) {
        uint2 u;
        u.x = (uint32_t)b[0] | (uint32_t)b[1] << 16; /* the first element at the lower address */
        u.y = (uint32_t)b[2] | (uint32_t)b[3] << 16;
        *(uint2 *)(params_bf16 + i) = u;
    } else {
        for (int j = 0; j < VEC && i + j < n; j++) params_bf16[i + j] = b[j];
    }
}
/* TODO(4a, 5) end */

extern "C" int adamw_step_gpu(float *master, uint16_t *params_bf16, const float *grads, float *m, float *v,
                              size_t n, float lr, float beta1, float beta2, float eps, float weight_decay,
                              long t, float grad_scale) {
    if (t < 1) return LAB_BAD_ARGUMENT;
    if (n == 0) return LAB_OK;
    /* TODO(4b) begin */
    /* Bias corrections on the host, once per call, as the CPU computes them. */
    const float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    /* the bf16 copy's 8-byte store needs only 8-byte alignment */
    const int vec = aligned16(master) && (uintptr_t)params_bf16 % 8 == 0 && aligned16(grads) && aligned16(m) &&
                    aligned16(v);
    adamw_kernel<<<vec_blocks(n), THREADS>>>(master, params_bf16, grads, m, v, n, lr, beta1, beta2, c1, c2, eps,
                                             weight_decay, grad_scale, vec);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
    /* TODO(4b) end */
}
