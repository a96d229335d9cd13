/*
 * The course model's fused GPU kernels (see model_ops_gpu.h).
 *
 * Each kernel is short and plain: element-wise ops take one thread per four
 * consecutive elements (16-byte loads), row-wise ops (RMSNorm, softmax,
 * cross-entropy) one warp per row with shuffle reductions, so a row's
 * statistics never touch shared memory. None of them computes much: their time
 * is the bytes they move, so each reads its inputs once, in wide accesses, and
 * stores bf16 directly where the result is only a matmul operand. The matmuls
 * go to cuBLAS on a GPU. Under the emulator (simtcc defines
 * __SIMT_EMULATOR__) there is no cuBLAS, and the matmuls run on a 16 x 16
 * shared-memory tiled kernel, the lab-02 design with bf16 operands.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#ifndef __SIMT_EMULATOR__
#include <cublas_v2.h>
#endif

#include "cuda/model_ops_gpu.h"
#include "cuda/vec4.cuh"
#include "error.h"
#include "lab.h"

#define EW_THREADS 256   /* element-wise kernels */
#define ROW_THREADS 256  /* row kernels: 8 warps, one row each */
#define WARP 32

static unsigned blocks_for(size_t n, int threads) { return (unsigned)((n + threads - 1) / threads); }

static __device__ float warp_sum(float x) {
    for (int o = WARP / 2; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

static __device__ float warp_max(float x) {
    for (int o = WARP / 2; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}

/* ---- vector access ------------------------------------------------------------ */

/* Element-wise kernels take VEC consecutive elements per thread through
 * cuda/vec4.cuh: one 16-byte access per fp32 array and one 8-byte access per
 * bf16 array. vec says the caller found every pointer aligned (carve() in
 * model_gpu.c aligns the model's tensors to 256 bytes). */

/* Threads for n elements at VEC per thread. */
static unsigned vec_blocks(size_t n) { return blocks_for((n + VEC - 1) / VEC, EW_THREADS); }

/* The kernels below index with 32-bit unsigned integers: a 64-bit division
 * is a long software routine on a GPU, a 32-bit one a few instructions. */
static void check_index32(size_t n, const char *what) {
    CHECK(n < 0xffffffffu, "%s: %zu elements do not fit the kernel's 32-bit indices", what, n);
}

/* ---- embedding ------------------------------------------------------------ */

/* A copy of rows: VEC floats per thread when the rows allow 16-byte access (vec), else one. */
__global__ void encoder_forward_kernel(float *out, const int *tokens, const float *wte, int N, int D, int vec) {
    const unsigned w = vec ? VEC : 1, per_row = (unsigned)D / w;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (unsigned)N * per_row) return;
    const unsigned n = i / per_row, d = i % per_row * w;
    const float *src = wte + (size_t)tokens[n] * D + d;
    float *dst = out + (size_t)n * D + d;
    if (vec)
        *(float4 *)dst = *(const float4 *)src;
    else
        *dst = *src;
}

/* Block (column group, vocabulary row v); each thread owns one column d of
 * row v and adds the rows whose token is v in order n = 0..N-1: the same
 * additions in the same order as the CPU, so the result is bit-identical,
 * with no atomics, and V x D threads share the work instead of D threads
 * walking all N rows of a 16k-token micro-batch. The block looks at the
 * tokens ENC_THREADS at a time, one per thread: a ballot per warp and the
 * warps' counts give each match its place in rows[], in token order, so a
 * thread then visits only the chunk's matches (about N / V of them in all)
 * instead of comparing every token itself. */
#define ENC_THREADS 256
#define ENC_WARPS (ENC_THREADS / WARP)
__global__ void encoder_backward_kernel(float *dwte, const float *dout, const int *tokens, int N, int D) {
    __shared__ int rows[ENC_THREADS]; /* this chunk's rows whose token is v, ascending */
    __shared__ int warp_hits[ENC_WARPS];
    const int v = blockIdx.y, d = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
    float acc = d < D ? dwte[(size_t)v * D + d] : 0.0f;
    for (int n0 = 0; n0 < N; n0 += ENC_THREADS) {
        const int n = n0 + (int)threadIdx.x;
        const int hit = n < N && tokens[n] == v;
        const unsigned mask = __ballot_sync(0xffffffffu, hit);
        if (lane == 0) warp_hits[w] = __popc(mask);
        __syncthreads(); /* the counts are in, and everyone has finished with the last chunk's rows[] */
        int before = 0, cnt = 0;
        for (int k = 0; k < ENC_WARPS; k++) {
            before += k < w ? warp_hits[k] : 0;
            cnt += warp_hits[k];
        }
        if (hit) rows[before + __popc(mask & ((1u << lane) - 1u))] = n;
        __syncthreads(); /* rows[] is complete, and warp_hits has been read */
        if (d < D) {
            int j = 0;
            /* Four loads issued before their four additions: the loads overlap,
             * and the order of the sum does not change. */
            for (; j + 4 <= cnt; j += 4) {
                const float a0 = dout[(size_t)rows[j] * D + d], a1 = dout[(size_t)rows[j + 1] * D + d];
                const float a2 = dout[(size_t)rows[j + 2] * D + d], a3 = dout[(size_t)rows[j + 3] * D + d];
                acc += a0;
                acc += a1;
                acc += a2;
                acc += a3;
            }
            for (; j < cnt; j++) acc += dout[(size_t)rows[j] * D + d];
        }
    }
    if (d < D) dwte[(size_t)v * D + d] = acc;
}

extern "C" void gpu_encoder_forward(float *out, const int *tokens, const float *wte, int N, int D) {
    size_t n = (size_t)N * D;
    if (n == 0) return;
    check_index32(n, "gpu_encoder_forward");
    const int vec = D % VEC == 0 && aligned16(out) && aligned16(wte);
    encoder_forward_kernel<<<blocks_for(vec ? n / VEC : n, EW_THREADS), EW_THREADS>>>(out, tokens, wte, N, D, vec);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_encoder_backward(float *dwte, const float *dout, const int *tokens, int N, int D, int V) {
    if (N < 1 || D < 1 || V < 1) return;
    dim3 grid(blocks_for((size_t)D, ENC_THREADS), (unsigned)V);
    encoder_backward_kernel<<<grid, ENC_THREADS>>>(dwte, dout, tokens, N, D);
    CUDA_CHECK_LAST();
}

/* ---- RMSNorm forward -------------------------------------------------------- */

/* Four consecutive elements of the norm's input: inp, or inp + add (the
 * residual add fused in; add is a bf16 branch output, widened exactly),
 * recomputed identically on every read. */
static __device__ float4 norm_in4(const float *inp, const uint16_t *add, size_t i) {
    float4 x = *(const float4 *)(inp + i);
    if (add) {
        const float4 y = load4_bf16(add, i, i + VEC, 1);
        x = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    return x;
}

static __device__ float norm_in(const float *inp, const uint16_t *add, size_t i) {
    return add ? inp[i] + bf16_bits_to_float(add[i]) : inp[i];
}

/* One warp per row; the result stored as fp32 (out) or only as bf16
 * (out_bf16): exactly one is given. The model's norm outputs are only ever
 * matmul operands, rounded to bf16 anyway, so storing them in fp32 and casting
 * later would move 3x the bytes. With add (a bf16 branch output: the
 * attention or MLP output projection), the row normalised is inp + add,
 * which is also stored in res: the residual add fused in, so the sum goes to
 * DRAM once and is not read back. With vec (D a multiple of 4, 16-byte
 * aligned rows) every access is 16 bytes wide. The second pass over the
 * inputs hits the cache, so DRAM sees them once. */
__global__ void rmsnorm_forward_kernel(float *out, uint16_t *out_bf16, float *rstd, float *res, const float *inp,
                                       const uint16_t *add, const float *weight, int N, int D, float eps,
                                       int vec) {
    int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (row >= N) return; /* the whole warp leaves together */
    const size_t o = (size_t)row * D;
    float ss = 0.0f;
    if (vec)
        for (int d = VEC * lane; d < D; d += VEC * WARP) {
            const float4 v = norm_in4(inp, add, o + d);
            ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
            if (res) store4(res, o + d, o + D, 1, v);
        }
    else
        for (int d = lane; d < D; d += WARP) {
            const float v = norm_in(inp, add, o + d);
            ss += v * v;
            if (res) res[o + d] = v;
        }
    ss = warp_sum(ss);
    float r = rsqrtf(ss / (float)D + eps);
    if (lane == 0) rstd[row] = r;
    if (vec)
        for (int d = VEC * lane; d < D; d += VEC * WARP) {
            const float4 v = norm_in4(inp, add, o + d), g = *(const float4 *)(weight + d);
            const float4 y = make_float4(v.x * r * g.x, v.y * r * g.y, v.z * r * g.z, v.w * r * g.w);
            if (out_bf16)
                store4_bf16(out_bf16, o + d, o + D, 1, y);
            else
                store4(out, o + d, o + D, 1, y);
        }
    else
        for (int d = lane; d < D; d += WARP) {
            const float y = norm_in(inp, add, o + d) * r * weight[d];
            if (out_bf16)
                out_bf16[o + d] = float_to_bf16(y);
            else
                out[o + d] = y;
        }
}

static void rmsnorm_launch(float *out, uint16_t *out_bf16, float *rstd, float *res, const float *inp,
                           const uint16_t *add, const float *weight, int N, int D, float eps) {
    if (N < 1) return;
    const int vec = D % VEC == 0 && aligned16(out_bf16 ? (const void *)out_bf16 : (const void *)out) &&
                    aligned16(inp) && aligned16(weight) && (!add || (aligned8(add) && aligned16(res)));
    rmsnorm_forward_kernel<<<blocks_for((size_t)N, ROW_THREADS / WARP), ROW_THREADS>>>(
        out, out_bf16, rstd, res, inp, add, weight, N, D, eps, vec);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight,
                                    int N, int D, float eps) {
    rmsnorm_launch(out, NULL, rstd, NULL, inp, NULL, weight, N, D, eps);
}

extern "C" void gpu_rmsnorm_forward_bf16(uint16_t *out, float *rstd, const float *inp, const float *weight,
                                         int N, int D, float eps) {
    rmsnorm_launch(NULL, out, rstd, NULL, inp, NULL, weight, N, D, eps);
}

extern "C" void gpu_residual_rmsnorm_forward_bf16(float *res, uint16_t *out, float *rstd, const float *a,
                                                  const uint16_t *b, const float *weight, int N, int D, float eps) {
    rmsnorm_launch(NULL, out, rstd, res, a, b, weight, N, D, eps);
}

/* ---- RoPE ------------------------------------------------------------------- */

/* The rotation of one pair (x0, x1) by the angle whose cosine is c and sine s. */
static __device__ void rope_rotate(float *x0, float *x1, float c, float s) {
    const float y0 = *x0 * c - *x1 * s, y1 = *x0 * s + *x1 * c;
    *x0 = y0;
    *x1 = y1;
}

/* A pair (x0, x1) = p[at], p[at + 1]: one 8-byte load when vec (p 8-byte aligned; at is even). */
static __device__ float2 load_pair(const float *p, size_t at, int vec) {
    if (vec) return *(const float2 *)(p + at);
    return make_float2(p[at], p[at + 1]);
}

/* One thread per rotated pair, the result stored as fp32 (out) or rounded to
 * bf16 (out_bf16, the backward's cast fused in): exactly one is given. Each
 * thread reads its two inputs before writing, so in place is safe. With vec
 * the pair moves as one 8-byte load and one 8-byte (fp32) or 4-byte (bf16)
 * store, instead of two accesses of half the width. The grid's y walks
 * [gridDim.y, N, D] tensors stored back to back (dq, dk, dv: one launch, not
 * three); the first `rotated` of them are rotated, the others only copied. */
__global__ void rope_kernel(float *out, uint16_t *out_bf16, const float *inp, const float *cosv,
                            const float *sinv, int N, int T, int D, int H, float sign, int rotated, int vec) {
    const unsigned half = D / H / 2, pairs_per_row = D / 2;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (unsigned)N * pairs_per_row) return;
    const unsigned n = i / pairs_per_row, p = i % pairs_per_row;
    const unsigned f = p % half, t = n % T;                             /* pair index within its head; position */
    const size_t at = (size_t)blockIdx.y * N * D + 2 * (size_t)i;      /* = n * D + 2 p in tensor blockIdx.y */
    float2 x = load_pair(inp, at, vec);
    if ((int)blockIdx.y < rotated) rope_rotate(&x.x, &x.y, cosv[t * half + f], sign * sinv[t * half + f]);
    if (out_bf16) {
        if (vec)
            *(uint32_t *)(out_bf16 + at) = pack_bf16x2(x.x, x.y);
        else {
            out_bf16[at] = float_to_bf16(x.x);
            out_bf16[at + 1] = float_to_bf16(x.y);
        }
    } else if (vec) {
        *(float2 *)(out + at) = x;
    } else {
        out[at] = x.x;
        out[at + 1] = x.y;
    }
}

static void rope_launch(float *out, uint16_t *out_bf16, const float *inp, const float *cosv, const float *sinv,
                        int N, int T, int D, int H, float sign, int tensors, int rotated) {
    size_t pairs = (size_t)N * D / 2;
    if (pairs == 0) return;
    check_index32(pairs, "gpu_rope");
    /* D is even (RoPE pairs), so every tensor and pair of a vec launch stays 8-byte (fp32) or 4-byte (bf16) aligned */
    const int vec = aligned8(inp) && aligned8(out_bf16 ? (const void *)out_bf16 : (const void *)out);
    dim3 grid(blocks_for(pairs, EW_THREADS), (unsigned)tensors);
    rope_kernel<<<grid, EW_THREADS>>>(out, out_bf16, inp, cosv, sinv, N, T, D, H, sign, rotated, vec);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_rope(float *out, const float *inp, const float *cosv, const float *sinv, int N, int T,
                         int D, int H, float sign) {
    rope_launch(out, NULL, inp, cosv, sinv, N, T, D, H, sign, 1, 1);
}

extern "C" void gpu_rope_cast_bf16(uint16_t *out, const float *inp, const float *cosv, const float *sinv, int N,
                                   int T, int D, int H, float sign) {
    rope_launch(NULL, out, inp, cosv, sinv, N, T, D, H, sign, 1, 1);
}

extern "C" void gpu_rope_cast_qkv_bf16(uint16_t *out, const float *inp, const float *cosv, const float *sinv,
                                       int N, int T, int D, int H, float sign) {
    rope_launch(NULL, out, inp, cosv, sinv, N, T, D, H, sign, 3, 2);
}

/* ---- attention layout --------------------------------------------------------- */

/* Block (pair group, sequence b x head h, tensor z): one thread per pair of
 * dst [B, H, T, hd]: read the pair from src [B*T, D] (fp32 src, or bf16
 * src_b as the q, k, v matmul writes it: exactly one is given), rotate it
 * (RoPE, for the first `rotated` tensors) in fp32 and store it rounded to
 * bf16: the rotation, the head split and the cast in one pass. The grid's z
 * walks q, k, v (src back to back, one dst each): one launch for the three.
 * The grid's y is the (b, h) slab, so a thread finds its place with one
 * division instead of four, and a pair moves as one 8-byte (fp32) or 4-byte
 * (bf16) load and one 4-byte store (vec). */
__global__ void rope_heads_kernel(uint16_t *dst0, uint16_t *dst1, uint16_t *dst2, const float *src,
                                  const uint16_t *src_b, const float *cosv, const float *sinv, int B, int T, int D,
                                  int H, int rotated, int vec) {
    const unsigned hd = D / H, half = hd / 2, z = blockIdx.z;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x; /* pair index within the (b, h) slab */
    if (i >= (unsigned)T * half) return;
    const unsigned b = blockIdx.y / H, h = blockIdx.y % H, t = i / half, f = i % half;
    const size_t at = (size_t)z * B * T * D + ((size_t)b * T + t) * D + (size_t)h * hd + 2 * f;
    float2 x;
    if (!src_b) {
        x = load_pair(src, at, vec);
    } else if (vec) {
        x = bf16x2_to_float2(*(const uint32_t *)(src_b + at));
    } else {
        x = make_float2(bf16_bits_to_float(src_b[at]), bf16_bits_to_float(src_b[at + 1]));
    }
    if ((int)z < rotated) rope_rotate(&x.x, &x.y, cosv[t * half + f], sinv[t * half + f]);
    uint16_t *o = (z == 0 ? dst0 : z == 1 ? dst1 : dst2) + (size_t)blockIdx.y * T * hd + 2 * (size_t)i;
    if (vec) {
        *(uint32_t *)o = pack_bf16x2(x.x, x.y);
    } else {
        o[0] = float_to_bf16(x.x);
        o[1] = float_to_bf16(x.y);
    }
}

static void rope_heads_launch(uint16_t *dst0, uint16_t *dst1, uint16_t *dst2, const float *src,
                              const uint16_t *src_b, const float *cosv, const float *sinv, int B, int T, int D,
                              int H, int tensors, int rotated) {
    size_t pairs = (size_t)T * (D / H / 2);
    if (pairs == 0 || B < 1) return;
    check_index32(pairs, "gpu_rope_heads_bf16");
    CHECK((long long)B * H <= 65535, "gpu_rope_heads_bf16: B * H = %lld exceeds the grid's 65535 (b, h) slabs",
          (long long)B * H);
    /* hd even keeps every pair on an even element: 8-byte (fp32) or 4-byte (bf16) loads, 4-byte stores */
    const int vec = (D / H) % 2 == 0 && (src_b ? (uintptr_t)src_b % 4 == 0 : aligned8(src)) && aligned8(dst0) &&
                    (tensors < 2 || aligned8(dst1)) && (tensors < 3 || aligned8(dst2));
    dim3 grid(blocks_for(pairs, EW_THREADS), (unsigned)(B * H), (unsigned)tensors);
    rope_heads_kernel<<<grid, EW_THREADS>>>(dst0, dst1, dst2, src, src_b, cosv, sinv, B, T, D, H, rotated, vec);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_rope_heads_bf16(uint16_t *dst, const float *src, const float *cosv, const float *sinv, int B,
                                    int T, int D, int H, int rotate) {
    rope_heads_launch(dst, NULL, NULL, src, NULL, cosv, sinv, B, T, D, H, 1, rotate ? 1 : 0);
}

extern "C" void gpu_rope_heads_qkv_bf16(uint16_t *q, uint16_t *k, uint16_t *v, const uint16_t *qkv,
                                        const float *cosv, const float *sinv, int B, int T, int D, int H) {
    rope_heads_launch(q, k, v, NULL, qkv, cosv, sinv, B, T, D, H, 3, 2);
}

__global__ void heads_split_kernel(uint16_t *dst, const float *src, int B, int T, int D, int H) {
    const int hd = D / H;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; /* index into dst [B, H, T, hd] */
    if (i >= (size_t)B * T * D) return;
    int e = (int)(i % hd);
    size_t r = i / hd;
    int t = (int)(r % T);
    r /= T;
    int h = (int)(r % H), b = (int)(r / H);
    dst[i] = float_to_bf16(src[((size_t)b * T + t) * D + (size_t)h * hd + e]);
}

__global__ void heads_merge_kernel(float *dst, const float *src, int B, int T, int D, int H) {
    const int hd = D / H;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; /* index into src [B, H, T, hd] */
    if (i >= (size_t)B * T * D) return;
    int e = (int)(i % hd);
    size_t r = i / hd;
    int t = (int)(r % T);
    r /= T;
    int h = (int)(r % H), b = (int)(r / H);
    dst[((size_t)b * T + t) * D + (size_t)h * hd + e] = src[i];
}

extern "C" void gpu_heads_split_bf16(uint16_t *dst, const float *src, int B, int T, int D, int H) {
    size_t n = (size_t)B * T * D;
    if (n == 0) return;
    heads_split_kernel<<<blocks_for(n, EW_THREADS), EW_THREADS>>>(dst, src, B, T, D, H);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_heads_merge(float *dst, const float *src, int B, int T, int D, int H) {
    size_t n = (size_t)B * T * D;
    if (n == 0) return;
    heads_merge_kernel<<<blocks_for(n, EW_THREADS), EW_THREADS>>>(dst, src, B, T, D, H);
    CUDA_CHECK_LAST();
}

/* ---- causal softmax ----------------------------------------------------------- */

__global__ void causal_softmax_kernel(float *att, const float *S, int BH, int T) {
    long long row = (long long)blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= (long long)BH * T) return;
    const int t = (int)(row % T); /* query position: keys 0..t are visible */
    const float *s = S + row * T;
    float *p = att + row * T;
    float m = -INFINITY;
    for (int u = lane; u <= t; u += WARP) m = fmaxf(m, s[u]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int u = lane; u <= t; u += WARP) sum += expf(s[u] - m);
    sum = warp_sum(sum);
    float inv = 1.0f / sum;
    for (int u = lane; u < T; u += WARP) p[u] = u <= t ? expf(s[u] - m) * inv : 0.0f;
}

extern "C" void gpu_causal_softmax(float *att, const float *S, int BH, int T) {
    size_t rows = (size_t)BH * T;
    if (rows == 0) return;
    causal_softmax_kernel<<<blocks_for(rows, ROW_THREADS / WARP), ROW_THREADS>>>(att, S, BH, T);
    CUDA_CHECK_LAST();
}

/* ---- element-wise ---------------------------------------------------------------- */

static __device__ float silu_times(float g, float u) { return g / (1.0f + expf(-g)) * u; }

static __device__ float4 silu_times4(float4 g, float4 u) {
    return make_float4(silu_times(g.x, u.x), silu_times(g.y, u.y), silu_times(g.z, u.z), silu_times(g.w, u.w));
}

/* SwiGLU in fp32, for the tests and the CPU comparisons. */
__global__ void swiglu_forward_kernel(float *out, const float *gate, const float *up, size_t n, int vec) {
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (i < n) store4(out, i, n, vec, silu_times4(load4(gate, i, n, vec), load4(up, i, n, vec)));
}

/* SwiGLU as the model runs it: gate and up arrive in bf16 from their matmul
 * and the output (like the norm outputs, only a matmul operand) leaves in
 * bf16, so the kernel moves 6 bytes an element where fp32 would move 12;
 * the arithmetic is fp32. */
__global__ void swiglu_forward_bf16_kernel(uint16_t *out, const uint16_t *gate, const uint16_t *up, size_t n,
                                           int vec) {
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (i < n) store4_bf16(out, i, n, vec, silu_times4(load4_bf16(gate, i, n, vec), load4_bf16(up, i, n, vec)));
}

__global__ void residual_forward_kernel(float *out, const float *a, const float *b, size_t n, int vec) {
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (i >= n) return;
    const float4 x = load4(a, i, n, vec), y = load4(b, i, n, vec);
    store4(out, i, n, vec, make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w));
}

__global__ void cast_to_bf16_kernel(uint16_t *dst, const float *src, size_t n, int vec) {
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (i < n) store4_bf16(dst, i, n, vec, load4(src, i, n, vec));
}

extern "C" void gpu_swiglu_forward(float *out, const float *gate, const float *up, size_t n) {
    if (n == 0) return;
    const int vec = aligned16(out) && aligned16(gate) && aligned16(up);
    swiglu_forward_kernel<<<vec_blocks(n), EW_THREADS>>>(out, gate, up, n, vec);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_swiglu_forward_bf16(uint16_t *out, const uint16_t *gate, const uint16_t *up, size_t n) {
    if (n == 0) return;
    const int vec = aligned8(out) && aligned8(gate) && aligned8(up);
    swiglu_forward_bf16_kernel<<<vec_blocks(n), EW_THREADS>>>(out, gate, up, n, vec);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_residual_forward(float *out, const float *a, const float *b, size_t n) {
    if (n == 0) return;
    const int vec = aligned16(out) && aligned16(a) && aligned16(b);
    residual_forward_kernel<<<vec_blocks(n), EW_THREADS>>>(out, a, b, n, vec);
    CUDA_CHECK_LAST();
}

/* dst += src is the residual add with out = a = dst: each thread reads its elements before writing them. */
extern "C" void gpu_add_inplace(float *dst, const float *src, size_t n) { gpu_residual_forward(dst, dst, src, n); }

extern "C" void gpu_cast_to_bf16(uint16_t *dst, const float *src, size_t n) {
    if (n == 0) return;
    const int vec = aligned16(dst) && aligned16(src);
    cast_to_bf16_kernel<<<vec_blocks(n), EW_THREADS>>>(dst, src, n, vec);
    CUDA_CHECK_LAST();
}

/* ---- cross-entropy --------------------------------------------------------------- */

__global__ void crossentropy_forward_kernel(float *losses, float *probs, const float *logits,
                                            const int *targets, int N, int V) {
    int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (row >= N) return;
    const float *x = logits + (size_t)row * V;
    float *p = probs + (size_t)row * V;
    const float xt = x[targets[row]];
    float m = -INFINITY;
    for (int j = lane; j < V; j += WARP) m = fmaxf(m, x[j]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int j = lane; j < V; j += WARP) sum += expf(x[j] - m);
    sum = warp_sum(sum);
    /* Every lane has read what it needs (xt, and its own x[j] below) before p overwrites x. */
    __syncwarp();
    float inv = 1.0f / sum;
    for (int j = lane; j < V; j += WARP) p[j] = expf(x[j] - m) * inv;
    /* From the logits, not log(p): no log(0) when a probability underflows. */
    if (lane == 0) losses[row] = logf(sum) - (xt - m);
}

__global__ void crossentropy_backward_kernel(float *dlogits, const float *probs, const int *targets,
                                             float dloss, int N, int V) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)N * V) return;
    int n = (int)(i / V), j = (int)(i % V);
    dlogits[i] = (probs[i] - (j == targets[n] ? 1.0f : 0.0f)) * dloss;
}

extern "C" void gpu_crossentropy_forward(float *losses, float *probs, const float *logits, const int *targets,
                                         int N, int V) {
    if (N < 1) return;
    crossentropy_forward_kernel<<<blocks_for((size_t)N, ROW_THREADS / WARP), ROW_THREADS>>>(
        losses, probs, logits, targets, N, V);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_crossentropy_backward(float *dlogits, const float *probs, const int *targets, float dloss,
                                          int N, int V) {
    size_t n = (size_t)N * V;
    if (n == 0) return;
    crossentropy_backward_kernel<<<blocks_for(n, EW_THREADS), EW_THREADS>>>(dlogits, probs, targets, dloss, N, V);
    CUDA_CHECK_LAST();
}

/* ---- global norm ------------------------------------------------------------------ */

/* One block per chunk; the block's sum is a fixed tree over its threads, so
 * the partial sums (and the norm) are the same on every run. A thread reads
 * VEC floats at a time (16 bytes, vec: g aligned; the chunks start on
 * multiples of 4). */
#define NORM_THREADS 256
__global__ void sum_squares_kernel(double *partial, const float *g, size_t n, int vec) {
    __shared__ double acc[NORM_THREADS];
    size_t lo = (size_t)blockIdx.x * GPU_NORM_CHUNK;
    size_t hi = lo + GPU_NORM_CHUNK < n ? lo + GPU_NORM_CHUNK : n;
    double s = 0.0;
    for (size_t i = lo + VEC * threadIdx.x; i < hi; i += VEC * NORM_THREADS) {
        const float4 v = load4(g, i, hi, vec); /* zeros past hi */
        s += (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z + (double)v.w * v.w;
    }
    acc[threadIdx.x] = s;
    __syncthreads();
    for (int w = NORM_THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) acc[threadIdx.x] += acc[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = acc[0];
}

extern "C" void gpu_sum_squares_chunks(double *partial, const float *g, size_t n) {
    if (n == 0) return;
    sum_squares_kernel<<<blocks_for(n, GPU_NORM_CHUNK), NORM_THREADS>>>(partial, g, n, aligned16(g));
    CUDA_CHECK_LAST();
}

/* ---- matmul ---------------------------------------------------------------------- */

#define GEMM_TILE 16

/* C = alpha op(A) op(B) + beta C for matrix blockIdx.z of the batch, into
 * the fp32 C or, rounded, the bf16 Cb (beta 0 there): exactly one is given.
 * Tiles of op(A) and op(B) are staged in shared memory as fp32 (the bf16
 * values widen exactly), so each loaded element is reused GEMM_TILE times. */
__global__ void gemm_bf16_tiled_kernel(int transA, int transB, int M, int N, int K, float alpha,
                                       const uint16_t *A, int lda, long long strideA, const uint16_t *B,
                                       int ldb, long long strideB, float beta, float *C, uint16_t *Cb, int ldc,
                                       long long strideC) {
    __shared__ float As[GEMM_TILE][GEMM_TILE];
    __shared__ float Bs[GEMM_TILE][GEMM_TILE + 1]; /* +1: no bank conflicts on the column reads */
    A += strideA * blockIdx.z;
    B += strideB * blockIdx.z;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * GEMM_TILE + ty, col = blockIdx.x * GEMM_TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += GEMM_TILE) {
        int ka = k0 + tx, kb = k0 + ty;
        float a = 0.0f, b = 0.0f;
        if (row < M && ka < K) a = bf16_bits_to_float(transA ? A[(size_t)ka * lda + row] : A[(size_t)row * lda + ka]);
        if (kb < K && col < N) b = bf16_bits_to_float(transB ? B[(size_t)col * ldb + kb] : B[(size_t)kb * ldb + col]);
        As[ty][tx] = a;
        Bs[ty][tx] = b;
        __syncthreads();
        for (int k = 0; k < GEMM_TILE; k++) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row >= M || col >= N) return;
    const size_t at = strideC * blockIdx.z + (size_t)row * ldc + col;
    if (Cb) {
        Cb[at] = float_to_bf16(alpha * acc);
        return;
    }
    C[at] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[at]; /* beta 0: C may be uninitialised */
}

static int use_tiled = 0;
static gpu_gemm_nn_fn custom_fn = NULL;
static char custom_name[64];

extern "C" void gpu_gemm_use_tiled(int on) {
    use_tiled = on;
    if (on) custom_fn = NULL;
}

extern "C" void gpu_gemm_use_custom(gpu_gemm_nn_fn fn, const char *name) {
    custom_fn = fn;
    snprintf(custom_name, sizeof custom_name, "%s", fn && name ? name : "");
    if (fn) use_tiled = 0;
}

extern "C" const char *gpu_gemm_kernel_name(void) {
    if (custom_fn) return custom_name[0] ? custom_name : "custom";
#ifndef __SIMT_EMULATOR__
    if (!use_tiled) return "cublas";
#endif
    return "tiled";
}

/* The compiler that built this file's kernels (and the lab-04 ones of the same build), for
 * gpu_gemm_library(): without a library, the kernels' arithmetic is whatever it emitted. */
#ifdef __SIMT_EMULATOR__
#if defined(__clang__)
#define KERNELS_COMPILER "clang++ " __clang_version__
#elif defined(__GNUC__)
#define KERNELS_COMPILER "g++ " __VERSION__
#else
#define KERNELS_COMPILER "an unnamed C++ compiler"
#endif
/* The emulator runs kernels as host code: the CPU's instructions (an FMA or not) are its arithmetic. */
#if defined(__x86_64__)
#define KERNELS_ARCH "x86-64"
#elif defined(__aarch64__)
#define KERNELS_ARCH "arm64"
#else
#define KERNELS_ARCH "this CPU"
#endif
#endif

extern "C" void gpu_gemm_library(char *buf, size_t len) {
#ifdef __SIMT_EMULATOR__
    snprintf(buf, len, "none (the course's kernels on the SIMT emulator, built by %s for %s)", KERNELS_COMPILER,
             KERNELS_ARCH);
#else
    if (!custom_fn && !use_tiled) {
        /* The libcublas the process loaded, not CUBLAS_VERSION from the header it was built against:
         * a newer library under the same program is what changes the kernels. */
        int major = 0, minor = 0, patch = 0;
        CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
        CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
        CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
        snprintf(buf, len, "cuBLAS %d.%d.%d", major, minor, patch);
        return;
    }
    snprintf(buf, len, "none (the course's kernels, built by nvcc %d.%d)", __CUDACC_VER_MAJOR__,
             __CUDACC_VER_MINOR__);
#endif
}

/* ---- the custom (lab-04) path: dense row-major operands only ------------------- */

#define PACK_TILE 32

/* dst = op(src) as a dense R x C row-major matrix: a strided copy (trans 0) or
 * a transpose (trans 1, src stored C x R with row length ld). The transpose
 * goes through a shared tile so that both the reads and the writes are
 * coalesced; the +1 column keeps the tile's column reads off a single bank. */
__global__ void pack_bf16_kernel(uint16_t *dst, const uint16_t *src, int R, int C, int ld, int trans) {
    __shared__ uint16_t tile[PACK_TILE][PACK_TILE + 1];
    const int bx = blockIdx.x * PACK_TILE, by = blockIdx.y * PACK_TILE;
    if (!trans) {
        for (int y = threadIdx.y; y < PACK_TILE; y += blockDim.y) {
            int r = by + y, c = bx + threadIdx.x;
            if (r < R && c < C) dst[(size_t)r * C + c] = src[(size_t)r * ld + c];
        }
        return;
    }
    /* read src rows bx.. (columns of dst), columns by.. (rows of dst) */
    for (int y = threadIdx.y; y < PACK_TILE; y += blockDim.y) {
        int sr = bx + y, sc = by + threadIdx.x;
        if (sr < C && sc < R) tile[y][threadIdx.x] = src[(size_t)sr * ld + sc];
    }
    __syncthreads();
    for (int y = threadIdx.y; y < PACK_TILE; y += blockDim.y) {
        int r = by + y, c = bx + threadIdx.x;
        if (r < R && c < C) dst[(size_t)r * C + c] = tile[threadIdx.x][y];
    }
}

/* Grow-only device scratch: packed operands (A and B), and the fp32 product
 * that a lab-04 kernel writes where the model wants bf16. */
static void *scratch_buf[3];
static size_t scratch_cap[3];

static void *grow_scratch(int which, size_t bytes) {
    if (bytes > scratch_cap[which]) {
        if (scratch_buf[which]) CUDA_CHECK(cudaFree(scratch_buf[which]));
        CUDA_CHECK(cudaMalloc(&scratch_buf[which], bytes));
        scratch_cap[which] = bytes;
    }
    return scratch_buf[which];
}

static uint16_t *pack_scratch(int which, size_t n) { return (uint16_t *)grow_scratch(which, n * sizeof(uint16_t)); }

/* op(X) as the dense, 16-byte-aligned R x C matrix a lab-04 kernel wants:
 * X itself when it already is one, else a packed copy. */
static const uint16_t *dense_operand(int which, const uint16_t *X, int trans, int R, int C, int ld) {
    if (!trans && ld == C && (uintptr_t)X % 16 == 0) return X;
    uint16_t *d = pack_scratch(which, (size_t)R * C);
    dim3 block(PACK_TILE, 8), grid((C + PACK_TILE - 1) / PACK_TILE, (R + PACK_TILE - 1) / PACK_TILE);
    pack_bf16_kernel<<<grid, block>>>(d, X, R, C, ld, trans);
    CUDA_CHECK_LAST();
    return d;
}

/* One product per batch entry through the custom kernel, operands packed as
 * needed. The kernel writes fp32: for a bf16 C it writes a scratch matrix,
 * which is then rounded into C (a pass the cuBLAS path does not pay). */
static void gemm_custom(int transA, int transB, int M, int N, int K, float alpha, const uint16_t *A, int lda,
                        long long strideA, const uint16_t *B, int ldb, long long strideB, float beta, float *C,
                        uint16_t *Cb, int ldc, long long strideC, int batch) {
    CHECK(ldc == N, "gpu_gemm_bf16: the %s matmul writes a dense C, but ldc %d != N %d here; "
          "use --matmul cublas or tiled for this product", custom_name, ldc, N);
    const uint16_t *a = NULL, *bm = NULL;
    float *c32 = Cb ? (float *)grow_scratch(2, (size_t)M * N * sizeof(float)) : NULL;
    for (int b = 0; b < batch; b++) {
        /* A shared operand (stride 0: the input of Q, K, V) is packed once for the whole batch. */
        if (b == 0 || strideA != 0) a = dense_operand(0, A + strideA * b, transA, M, K, lda);
        if (b == 0 || strideB != 0) bm = dense_operand(1, B + strideB * b, transB, K, N, ldb);
        int st = custom_fn(M, N, K, alpha, a, bm, beta, Cb ? c32 : C + strideC * b);
        CHECK(st == LAB_OK, "gpu_gemm_bf16: the %s matmul (--matmul %s) returned %s for M %d, N %d, K %d",
              custom_name, custom_name, lab_status_name(st), M, N, K);
        CUDA_CHECK_LAST();
        if (Cb) gpu_cast_to_bf16(Cb + strideC * b, c32, (size_t)M * N);
    }
}

#ifndef __SIMT_EMULATOR__
static cublasHandle_t model_handle = NULL;
static cublasHandle_t get_model_handle(void) {
    if (!model_handle) CUBLAS_CHECK(cublasCreate(&model_handle));
    return model_handle;
}
#endif

/* The product into the fp32 C or the bf16 Cb (exactly one given), by
 * whichever kernel is switched in. */
static void gemm_dispatch(int transA, int transB, int M, int N, int K, float alpha, const uint16_t *A, int lda,
                          long long strideA, const uint16_t *B, int ldb, long long strideB, float beta, float *C,
                          uint16_t *Cb, int ldc, long long strideC, int batch) {
    if (M < 1 || N < 1 || batch < 1) return;
    if (custom_fn && K >= 1) {
        gemm_custom(transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, Cb, ldc, strideC,
                    batch);
        return;
    }
#ifndef __SIMT_EMULATOR__
    if (!use_tiled && K >= 1) {
        /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and
         * a stored row-major matrix read as column-major is its transpose:
         * so B goes first, with its own flag, and the shapes swap. The
         * accumulation is fp32 either way; a bf16 C is rounded once, in the
         * epilogue. */
        CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            get_model_handle(), transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N, N, M,
            K, &alpha, B, CUDA_R_16BF, ldb, strideB, A, CUDA_R_16BF, lda, strideA, &beta,
            Cb ? (void *)Cb : (void *)C, Cb ? CUDA_R_16BF : CUDA_R_32F, ldc, strideC, batch, CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT));
        return;
    }
#endif
    dim3 block(GEMM_TILE, GEMM_TILE);
    dim3 grid((N + GEMM_TILE - 1) / GEMM_TILE, (M + GEMM_TILE - 1) / GEMM_TILE, batch);
    gemm_bf16_tiled_kernel<<<grid, block>>>(transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb, strideB,
                                            beta, C, Cb, ldc, strideC);
    CUDA_CHECK_LAST();
}

extern "C" void gpu_gemm_bf16(int transA, int transB, int M, int N, int K, float alpha, const uint16_t *A,
                              int lda, long long strideA, const uint16_t *B, int ldb, long long strideB,
                              float beta, float *C, int ldc, long long strideC, int batch) {
    gemm_dispatch(transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb, strideB, beta, C, NULL, ldc, strideC,
                  batch);
}

extern "C" void gpu_gemm_bf16_out(int transA, int transB, int M, int N, int K, float alpha, const uint16_t *A,
                                  int lda, long long strideA, const uint16_t *B, int ldb, long long strideB,
                                  uint16_t *C, int ldc, long long strideC, int batch) {
    gemm_dispatch(transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb, strideB, 0.0f, NULL, C, ldc, strideC,
                  batch);
}
