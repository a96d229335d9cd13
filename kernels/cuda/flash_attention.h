/** @file
 * Fused causal attention (FlashAttention-2 style) for the course model's GPU
 * backend: softmax(Q K^T / sqrt(hd), causal) V without ever storing the
 * B x H x T x T score matrix, and its backward pass.
 *
 * The forward pass walks the K/V tiles at or below the diagonal with an
 * online softmax (running row maximum and sum) and keeps only the output and
 * each row's logsumexp L. The backward pass recomputes the probabilities from
 * L: one kernel per K/V tile for dK and dV, one per Q tile for dQ, so every
 * output element is summed by one thread in a fixed order (no atomics): two
 * runs on the same inputs give bit-identical gradients.
 *
 * Layouts, with N = B * T rows, D = d_model, H heads of size hd = D / H:
 *  - q, k, v: bf16 [B, H, T, hd], what gpu_heads_split_bf16() writes;
 *  - out, dout, dq, dk, dv: fp32 [N, D], heads side by side (head h in
 *    columns h*hd .. h*hd + hd - 1), the model's activation layout, so no
 *    heads_merge is needed and the RoPE backward applies to dq, dk directly;
 *  - lse: fp32 [B, H, T], natural logarithm of each row's sum of
 *    exp(q . k / sqrt(hd)) over the visible keys.
 *
 * The _bf16 variants are what the model runs: they also write the operands of
 * the next matmuls, rounded to bf16 in the kernels' last step (the output for
 * the projection W_o; dq, dk with RoPE undone and dv for the backward of the
 * q, k, v projections), so no separate pass reads the fp32 results back.
 *
 * Precision: Q K^T and P V (and the backward's four products) take bf16
 * operands with fp32 accumulation on the tensor cores (mma.sync m16n8k16);
 * the softmax, its statistics and every output are fp32. The probabilities P
 * and the score gradients dS are rounded to bf16 for the products; dout is
 * rounded to bf16 once, by the backward's first kernel, and that rounded
 * dout is used throughout (also in Delta), so the gradients are those of the
 * rounded problem. Expect errors of a few bf16 units (2^-8) relative to the
 * sizes of the terms summed; the tests derive the bounds element by element.
 *
 * Supported: any B, H, T >= 1 (B * H <= 65535, T <= 65535 * 64), head sizes hd in
 * {16, 32, 64, 128}; other head sizes abort with a message naming the choices
 * (gpu_flash_attention_supported() asks first). Buffers need only their
 * type's alignment; when q, k, v (and dout_bf16) start on a 16-byte boundary,
 * as cudaMalloc'd buffers and [B, H, T, hd] slices of them do, the tiles are
 * copied 16 bytes at a time (cp.async), otherwise element by element. Every
 * wrapper checks its launches and aborts with the call's name on an error.
 */
#ifndef COURSE_FLASH_ATTENTION_H
#define COURSE_FLASH_ATTENTION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Keys per K/V tile and rows per query tile; the forward and dQ kernels' blocks hold two query tiles at hd <= 64. */
#define FLASH_TILE 64

/**
 * @brief Whether the fused kernels handle this head size on the current device.
 *
 * The backward kernels of hd 128 need 103 KB of shared memory per block: an
 * H100, H200 or A100 allows it, sm_86/89 cards (A10, L40S, RTX 30/40, 99 KB)
 * do not. Asks the current device.
 * @param hd head size d_model / n_heads
 * @return 1 for hd in {16, 32, 64, 128} when the device has the shared memory, else 0
 */
int gpu_flash_attention_supported(int hd);

/**
 * @brief Causal attention forward: out = softmax(q k^T / sqrt(hd), causal) v, per (sequence, head).
 *
 * Writes exactly out[0 .. N*D) and lse[0 .. B*H*T): the padding rows of a
 * partial last tile are never stored.
 * @param out [B*T, D] fp32 written (heads side by side)
 * @param lse [B, H, T] fp32 written: row logsumexp of the scaled scores, kept for the backward pass
 * @param q [B, H, T, hd] bf16
 * @param k [B, H, T, hd] bf16
 * @param v [B, H, T, hd] bf16
 * @param B sequences
 * @param T sequence length
 * @param D width (H * hd)
 * @param H heads
 */
void gpu_flash_attention_forward(float *out, float *lse, const uint16_t *q, const uint16_t *k,
                                 const uint16_t *v, int B, int T, int D, int H);

/**
 * @brief gpu_flash_attention_forward() that also (or only) writes out rounded to bf16, the operand of the next matmul.
 *
 * out_bf16 holds the bits of out rounded to nearest even, element for
 * element: what gpu_cast_to_bf16() of out gives, without reading out back.
 * With out NULL only the bf16 copy is written: what the model keeps, since
 * gpu_flash_attention_backward_bf16() reads it too.
 * @param out [B*T, D] fp32 written, or NULL
 * @param out_bf16 [B*T, D] bf16 written; any 2-byte alignment
 * @param lse [B, H, T] fp32 written
 * @param q [B, H, T, hd] bf16
 * @param k [B, H, T, hd] bf16
 * @param v [B, H, T, hd] bf16
 * @param B sequences
 * @param T sequence length
 * @param D width (H * hd)
 * @param H heads
 */
void gpu_flash_attention_forward_bf16(float *out, uint16_t *out_bf16, float *lse, const uint16_t *q,
                                      const uint16_t *k, const uint16_t *v, int B, int T, int D, int H);

/**
 * @brief Causal attention backward: dq, dk, dv from dout, recomputing the probabilities from lse.
 *
 * Three kernels: a row pass that rounds dout to bf16 in the [B, H, T, hd]
 * layout and computes Delta_i = sum_d bf16(dout_id) out_id in fp32, then
 * dK/dV (one block per K/V tile) and dQ (one block per Q tile), each
 * recomputing P from lse. Deterministic: no atomics, every sum in a fixed
 * order. Writes exactly dq, dk, dv [0 .. N*D) and the two scratch buffers,
 * none of which may overlap an input.
 * @param dq [B*T, D] fp32 written (not accumulated)
 * @param dk [B*T, D] fp32 written
 * @param dv [B*T, D] fp32 written
 * @param dout_bf16 [B, H, T, hd] bf16 scratch, written
 * @param delta [B, H, T] fp32 scratch, written
 * @param dout [B*T, D] fp32 gradient of out
 * @param out [B*T, D] fp32 from gpu_flash_attention_forward()
 * @param lse [B, H, T] from gpu_flash_attention_forward()
 * @param q [B, H, T, hd] bf16, as given to the forward pass
 * @param k [B, H, T, hd] bf16
 * @param v [B, H, T, hd] bf16
 * @param B sequences
 * @param T sequence length
 * @param D width (H * hd)
 * @param H heads
 */
void gpu_flash_attention_backward(float *dq, float *dk, float *dv, uint16_t *dout_bf16, float *delta,
                                  const float *dout, const float *out, const float *lse, const uint16_t *q,
                                  const uint16_t *k, const uint16_t *v, int B, int T, int D, int H);

/**
 * @brief gpu_flash_attention_backward() whose results are the next matmuls' operands: bf16, RoPE undone.
 *
 * The gradients go out as the backward of the q, k, v projections reads
 * them: rounded to bf16 (nearest even), three [B*T, D] blocks back to back,
 * and dq and dk rotated back through RoPE first when the tables are given.
 * Its inputs are bf16 too, as the model keeps them: dout from the output
 * projection's backward matmul, out the forward pass's bf16 copy. The
 * result equals gpu_rope_cast_qkv_bf16(dqkv, [dq; dk; dv], cosv, sinv,
 * B*T, T, D, H, -1) of gpu_flash_attention_backward()'s fp32 outputs for the
 * widened dout and out, up to the contraction of the rotation into fmas (at
 * most one bf16 unit in the last place), without writing those outputs and
 * reading them back. Delta then comes from the bf16 out: the same error as
 * the output projection's operand, 2^-9 of each term at most.
 * @param dqkv [3, B*T, D] bf16 written: dq, dk, dv; any 2-byte alignment
 * @param dout_bf16 [B, H, T, hd] bf16 scratch, written
 * @param delta [B, H, T] fp32 scratch, written
 * @param dout [B*T, D] bf16 gradient of out
 * @param out [B*T, D] bf16 out from the forward pass (gpu_flash_attention_forward_bf16())
 * @param lse [B, H, T] from the forward pass
 * @param q [B, H, T, hd] bf16, as given to the forward pass
 * @param k [B, H, T, hd] bf16
 * @param v [B, H, T, hd] bf16
 * @param cosv [T, hd/2] RoPE cosines (as gpu_rope() takes them), or NULL for no rotation
 * @param sinv [T, hd/2] RoPE sines, or NULL (both or neither)
 * @param B sequences
 * @param T sequence length
 * @param D width (H * hd)
 * @param H heads
 */
void gpu_flash_attention_backward_bf16(uint16_t *dqkv, uint16_t *dout_bf16, float *delta, const uint16_t *dout,
                                       const uint16_t *out, const float *lse, const uint16_t *q, const uint16_t *k,
                                       const uint16_t *v, const float *cosv, const float *sinv, int B, int T, int D,
                                       int H);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_FLASH_ATTENTION_H */
