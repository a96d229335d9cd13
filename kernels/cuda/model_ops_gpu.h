/** @file
 * The course model's layers on a GPU: the fused kernels the lab-05 backend is
 * built from, each behind a C-callable launch wrapper (raw device pointers and
 * sizes, shapes in the comments, the same conventions as kernels/cpu/model_ops.h:
 * N = B * T rows, D = d_model, H heads of size hd = D / H, F = SwiGLU width,
 * V = vocabulary, weights [in, out] row-major).
 *
 * Precision: activations, statistics (RMSNorm's rstd, softmax, the loss) and
 * gradients are fp32; matmul operands are bf16 with fp32 accumulation and an
 * fp32 result. bf16 buffers are passed as uint16_t bit patterns so that plain
 * C can hold them.
 *
 * The same source builds for a GPU (nvcc; matmuls through cuBLAS) and for the
 * SIMT emulator (simtcc; matmuls through a simple tiled kernel, since the
 * emulator has no cuBLAS). Every wrapper checks its launch and aborts with the
 * call's name on an error. Not here: the backward passes of RMSNorm, of the
 * attention softmax and of SwiGLU, and the AdamW step, which the student
 * writes in lab 05 (their prototypes are in model_gpu.h).
 */
#ifndef COURSE_MODEL_OPS_GPU_H
#define COURSE_MODEL_OPS_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Token embedding lookup: out[n, :] = wte[tokens[n], :].
 * @param out [N, D] written
 * @param tokens [N] device ids in [0, V)
 * @param wte [V, D] fp32
 * @param N rows
 * @param D width
 */
void gpu_encoder_forward(float *out, const int *tokens, const float *wte, int N, int D);

/**
 * @brief dwte[tokens[n], :] += dout[n, :], rows added in order n = 0..N-1 (bit-identical to the CPU).
 * @param dwte [V, D] accumulated
 * @param dout [N, D]
 * @param tokens [N] ids in [0, V)
 * @param N rows
 * @param D width
 * @param V vocabulary
 */
void gpu_encoder_backward(float *dwte, const float *dout, const int *tokens, int N, int D, int V);

/**
 * @brief RMSNorm forward, one warp per row: out = x * rstd * w, rstd = 1/sqrt(mean(x^2) + eps).
 * @param out [N, D] written
 * @param rstd [N] written, kept for the backward pass
 * @param inp [N, D]
 * @param weight [D]
 * @param N rows
 * @param D width
 * @param eps added to the mean square
 */
void gpu_rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, int N,
                         int D, float eps);

/**
 * @brief gpu_rmsnorm_forward() with the output stored only as bf16 (the same fp32 values, rounded once).
 *
 * For norm outputs that are only ever matmul operands: a third of the bytes of fp32 plus a cast.
 * @param out [N, D] bf16 written
 * @param rstd [N] written, kept for the backward pass
 * @param inp [N, D]
 * @param weight [D]
 * @param N rows
 * @param D width
 * @param eps added to the mean square
 */
void gpu_rmsnorm_forward_bf16(uint16_t *out, float *rstd, const float *inp, const float *weight, int N,
                              int D, float eps);

/**
 * @brief The residual add fused with the next RMSNorm: res = a + b, then gpu_rmsnorm_forward_bf16() of res.
 *
 * The same values as gpu_residual_forward() (of a and b widened) followed by
 * gpu_rmsnorm_forward_bf16(), without reading res back: the sum is written
 * once and normalised from registers and cache. b is a block's branch
 * output as its output projection writes it, in bf16; the residual stream a
 * and res stay fp32.
 * @param res [N, D] written, a + b (must not alias a)
 * @param out [N, D] bf16 written
 * @param rstd [N] written, kept for the backward pass
 * @param a [N, D] fp32, the residual stream
 * @param b [N, D] bf16, the branch added to it
 * @param weight [D]
 * @param N rows
 * @param D width
 * @param eps added to the mean square
 */
void gpu_residual_rmsnorm_forward_bf16(float *res, uint16_t *out, float *rstd, const float *a, const uint16_t *b,
                                       const float *weight, int N, int D, float eps);

/**
 * @brief Rotary embedding (sign = +1) or its backward (sign = -1, the inverse rotation). In place is allowed.
 * @param out [N, D] written
 * @param inp [N, D]
 * @param cosv [T, hd/2] device copy of rope_tables()
 * @param sinv [T, hd/2]
 * @param N rows (a multiple of T)
 * @param T sequence length
 * @param D width
 * @param H heads
 * @param sign +1 forward, -1 backward
 */
void gpu_rope(float *out, const float *inp, const float *cosv, const float *sinv, int N, int T,
              int D, int H, float sign);

/**
 * @brief gpu_rope() fused with rounding its result to bf16: out = bf16(rope_sign(inp)), both [N, D].
 * @param out [N, D] bf16 written
 * @param inp [N, D] fp32
 * @param cosv [T, hd/2]
 * @param sinv [T, hd/2]
 * @param N rows (a multiple of T)
 * @param T sequence length
 * @param D width
 * @param H heads
 * @param sign +1 forward, -1 backward
 */
void gpu_rope_cast_bf16(uint16_t *out, const float *inp, const float *cosv, const float *sinv, int N, int T,
                        int D, int H, float sign);

/**
 * @brief The RoPE backward of dq and dk and the rounding of dv in one launch:
 * out[i] = bf16(rope_sign(inp[i])) for i = 0, 1 and out[2] = bf16(inp[2]).
 *
 * The same values as gpu_rope_cast_bf16() on the first two tensors and gpu_cast_to_bf16() on the third.
 * @param out [3, N, D] bf16 written
 * @param inp [3, N, D] fp32: q, k, v (or their gradients) back to back
 * @param cosv [T, hd/2]
 * @param sinv [T, hd/2]
 * @param N rows (a multiple of T)
 * @param T sequence length
 * @param D width
 * @param H heads
 * @param sign +1 forward, -1 backward
 */
void gpu_rope_cast_qkv_bf16(uint16_t *out, const float *inp, const float *cosv, const float *sinv, int N, int T,
                            int D, int H, float sign);

/**
 * @brief RoPE (if rotate), head split and bf16 rounding in one pass:
 * dst[b, h, t, :] = bf16(rope(src[b*T + t, h*hd .. h*hd + hd - 1])).
 *
 * The same values as gpu_rope() followed by gpu_heads_split_bf16(), without the fp32 round trip.
 * @param dst [B, H, T, hd] bf16 written
 * @param src [B*T, D] fp32
 * @param cosv [T, hd/2]
 * @param sinv [T, hd/2]
 * @param B sequences
 * @param T sequence length
 * @param D width
 * @param H heads
 * @param rotate 1 to apply RoPE (q, k), 0 for a plain split (v)
 */
void gpu_rope_heads_bf16(uint16_t *dst, const float *src, const float *cosv, const float *sinv, int B, int T,
                         int D, int H, int rotate);

/**
 * @brief gpu_rope_heads_bf16() of q and k (rotated) and v (not) in one launch, from bf16 q, k, v.
 *
 * The input is what the batched Q, K, V matmul writes (gpu_gemm_bf16_out()):
 * each pair is widened, rotated in fp32 and rounded again.
 * @param q [B, H, T, hd] bf16 written
 * @param k [B, H, T, hd] bf16 written
 * @param v [B, H, T, hd] bf16 written
 * @param qkv [3, B*T, D] bf16: q, k, v back to back
 * @param cosv [T, hd/2]
 * @param sinv [T, hd/2]
 * @param B sequences
 * @param T sequence length
 * @param D width
 * @param H heads
 */
void gpu_rope_heads_qkv_bf16(uint16_t *q, uint16_t *k, uint16_t *v, const uint16_t *qkv, const float *cosv,
                             const float *sinv, int B, int T, int D, int H);

/**
 * @brief Gather the heads into batched layout and round to bf16: dst[b, h, t, i] = bf16(src[b*T + t, h*hd + i]).
 * @param dst [B, H, T, hd] bf16 written
 * @param src [B*T, D] fp32
 * @param B sequences
 * @param T sequence length
 * @param D width
 * @param H heads
 */
void gpu_heads_split_bf16(uint16_t *dst, const float *src, int B, int T, int D, int H);

/**
 * @brief The inverse of gpu_heads_split_bf16() in fp32: dst[b*T + t, h*hd + i] = src[b, h, t, i].
 * @param dst [B*T, D] written
 * @param src [B, H, T, hd]
 * @param B sequences
 * @param T sequence length
 * @param D width
 * @param H heads
 */
void gpu_heads_merge(float *dst, const float *src, int B, int T, int D, int H);

/**
 * @brief Causal softmax of scores, one warp per row, in fp32: att[r, t, u] = softmax_u(S[r, t, u]) for u <= t, 0 above.
 * @param att [BH, T, T] written (may alias S)
 * @param S [BH, T, T] scores, already scaled by 1/sqrt(hd)
 * @param BH sequences times heads
 * @param T sequence length
 */
void gpu_causal_softmax(float *att, const float *S, int BH, int T);

/**
 * @brief SwiGLU activation: out = silu(gate) * up.
 * @param out [n] written
 * @param gate [n]
 * @param up [n]
 * @param n elements
 */
void gpu_swiglu_forward(float *out, const float *gate, const float *up, size_t n);

/**
 * @brief gpu_swiglu_forward() on bf16 tensors, as the model stores them: out = bf16(silu(gate) * up).
 *
 * gate and up are widened exactly to fp32, the arithmetic is fp32, and the
 * result is rounded to nearest even.
 * @param out [n] bf16 written
 * @param gate [n] bf16
 * @param up [n] bf16
 * @param n elements
 */
void gpu_swiglu_forward_bf16(uint16_t *out, const uint16_t *gate, const uint16_t *up, size_t n);

/**
 * @brief Residual add: out = a + b (out may alias a or b).
 * @param out [n] written
 * @param a [n]
 * @param b [n]
 * @param n elements
 */
void gpu_residual_forward(float *out, const float *a, const float *b, size_t n);

/**
 * @brief dst += src (the residual backward's pass-through, gradient accumulation).
 * @param dst [n] accumulated
 * @param src [n]
 * @param n elements
 */
void gpu_add_inplace(float *dst, const float *src, size_t n);

/**
 * @brief Softmax cross-entropy, one warp per row: probs = softmax(logits), losses[n] = -log probs[n, target].
 * @param losses [N] written
 * @param probs [N, V] written (may alias logits)
 * @param logits [N, V]
 * @param targets [N]
 * @param N rows
 * @param V vocabulary
 */
void gpu_crossentropy_forward(float *losses, float *probs, const float *logits, const int *targets,
                              int N, int V);

/**
 * @brief dlogits = (probs - onehot(target)) * dloss. Written; may alias probs.
 * @param dlogits [N, V]
 * @param probs [N, V]
 * @param targets [N]
 * @param dloss weight of each row's loss (1/N for the mean)
 * @param N rows
 * @param V vocabulary
 */
void gpu_crossentropy_backward(float *dlogits, const float *probs, const int *targets, float dloss,
                               int N, int V);

/**
 * @brief Round fp32 to bf16 (nearest even): dst[i] = bf16(src[i]).
 * @param dst [n] bf16 written
 * @param src [n]
 * @param n elements
 */
void gpu_cast_to_bf16(uint16_t *dst, const float *src, size_t n);

/**
 * @brief Sums of squares in double over fixed chunks of GPU_NORM_CHUNK elements, one block per chunk.
 *
 * The caller adds the chunks' sums in order, so the global norm does not depend
 * on scheduling (the same chunking as grad_norm_squared() on the CPU).
 * @param partial [ceil(n / GPU_NORM_CHUNK)] doubles written
 * @param g [n]
 * @param n elements
 */
void gpu_sum_squares_chunks(double *partial, const float *g, size_t n);

/** Chunk of gpu_sum_squares_chunks(). */
#define GPU_NORM_CHUNK 4096

/**
 * @brief Batched row-major matmul, bf16 in, fp32 accumulate and out:
 * C_b = alpha * op(A_b) op(B_b) + beta * C_b for b < batch.
 *
 * op(X) is X or X^T (trans flag); op(A) is M x K, op(B) K x N, C M x N; lda,
 * ldb, ldc are row lengths of the stored matrices; the stride_* are elements
 * between consecutive matrices of the batch. On a GPU this is cuBLAS
 * (cublasGemmStridedBatchedEx, fp32 compute) unless gpu_gemm_use_tiled(1) or
 * gpu_gemm_use_custom() chose another kernel;
 * under the emulator it is always the tiled kernel.
 * @param transA 1 if A is stored K x M
 * @param transB 1 if B is stored N x K
 * @param M rows of C
 * @param N columns of C
 * @param K inner dimension
 * @param alpha scale of the product
 * @param A bf16
 * @param lda row length of A as stored
 * @param strideA elements between batch entries
 * @param B bf16
 * @param ldb row length of B as stored
 * @param strideB elements between batch entries
 * @param beta scale of the old C (0: C is not read)
 * @param C fp32
 * @param ldc row length of C
 * @param strideC elements between batch entries
 * @param batch number of products
 */
void gpu_gemm_bf16(int transA, int transB, int M, int N, int K, float alpha, const uint16_t *A,
                   int lda, long long strideA, const uint16_t *B, int ldb, long long strideB,
                   float beta, float *C, int ldc, long long strideC, int batch);

/**
 * @brief gpu_gemm_bf16() with C stored in bf16: C = bf16(alpha op(A) op(B)).
 *
 * For the model's activations that the next kernel reads as bf16 (gate and
 * up, SwiGLU's input gradient): the product accumulates in fp32 and is
 * rounded once, to nearest even, as it is written, so C costs half the
 * bytes of gpu_gemm_bf16()'s fp32 C and needs no cast pass. There is no
 * beta: C is overwritten, never read.
 * @param transA 1 if A is stored K x M
 * @param transB 1 if B is stored N x K
 * @param M rows of C
 * @param N columns of C
 * @param K inner dimension
 * @param alpha scale of the product
 * @param A bf16
 * @param lda row length of A as stored
 * @param strideA elements between batch entries
 * @param B bf16
 * @param ldb row length of B as stored
 * @param strideB elements between batch entries
 * @param C bf16, written
 * @param ldc row length of C
 * @param strideC elements between batch entries
 * @param batch number of products
 */
void gpu_gemm_bf16_out(int transA, int transB, int M, int N, int K, float alpha, const uint16_t *A, int lda,
                       long long strideA, const uint16_t *B, int ldb, long long strideB, uint16_t *C, int ldc,
                       long long strideC, int batch);

/**
 * @brief Route gpu_gemm_bf16() and gpu_gemm_bf16_out() through the tiled kernel (1) or cuBLAS
 * (0, the default on a GPU).
 *
 * Under the emulator the tiled kernel is the only one and the call has no effect.
 * Turning it on also drops a kernel set by gpu_gemm_use_custom().
 * @param on 1 for the tiled kernel
 */
void gpu_gemm_use_tiled(int on);

/**
 * A dense row-major bf16 matmul of the lab-04 kind: C[M, N] = alpha A[M, K] B[K, N] + beta C,
 * A and B bf16 bit patterns, C fp32, device pointers; returns a lab_status_t (lab.h).
 */
typedef int (*gpu_gemm_nn_fn)(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B,
                              float beta, float *C);

/**
 * @brief Route gpu_gemm_bf16() and gpu_gemm_bf16_out() through a lab-04 matmul (the student's kernel
 * switched into the model).
 *
 * Such a kernel only multiplies dense, untransposed matrices, so every product
 * whose operand is transposed, strided or not 16-byte aligned first packs that
 * operand into a dense copy (a tiled transpose: extra memory traffic the cuBLAS
 * path does not pay), and a batched product becomes one launch per entry. C
 * must be dense (ldc == N): another ldc aborts with a message. A status
 * other than LAB_OK aborts with the kernel's name and the shape.
 * @param fn the kernel, or NULL to go back to cuBLAS (or the tiled kernel under the emulator)
 * @param name shown in error messages, e.g. "mma"
 */
void gpu_gemm_use_custom(gpu_gemm_nn_fn fn, const char *name);

/**
 * @brief Which kernel gpu_gemm_bf16() and gpu_gemm_bf16_out() run now, by its --matmul name.
 *
 * What a checkpoint records: another kernel sums in another order, so a run resumed on it
 * would not continue bit-identically.
 * @return "cublas", "tiled" (always under the emulator unless a lab-04 kernel is switched in),
 *         or the name given to gpu_gemm_use_custom()
 */
const char *gpu_gemm_kernel_name(void);

/**
 * @brief The library behind gpu_gemm_bf16() and gpu_gemm_bf16_out() now, with its version as loaded.
 *
 * What a checkpoint records as its library (checkpoint.h), beside the kernel's name: another
 * cuBLAS version may pick other kernels for the same shapes and sum in another order.
 * "cuBLAS 12.8.4" for cuBLAS, the version of the libcublas the process runs with (not of
 * the header it was built against). The tiled and lab-04 kernels use no library: they are
 * compiled into the program, so it names the compiler that built them, "none (the course's
 * kernels, built by nvcc 13.0)", or under the emulator, where they are host code, the
 * host compiler and CPU architecture, "none (the course's kernels on the SIMT emulator,
 * built by g++ 12.2.0 for x86-64)".
 * @param buf destination (truncated to fit, always NUL-ended)
 * @param len size of buf
 */
void gpu_gemm_library(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_MODEL_OPS_GPU_H */
