/** @file
 * The course model's layers on the CPU, one forward/backward pair per op.
 *
 * The clean fp32 reference, in the manner of llm.c's train_gpt2.c: plain
 * functions on raw pointers, shapes in the comments, OpenMP over independent
 * rows or heads, matmuls through OpenBLAS. Every reduction has a fixed order
 * that does not depend on the number of threads (a column's sum runs over
 * rows in one thread; the gradient norm adds fixed-size chunks in order;
 * matmuls are cut into fixed blocks of rows, each one single-threaded sgemm),
 * so a run is bit-identical from one time to the next and for any
 * OMP_NUM_THREADS.
 *
 * Conventions: N = B * T rows (batch x sequence), D = d_model, H heads of size
 * hd = D / H, F = SwiGLU width, V = vocabulary. Weights are [in, out]
 * row-major. Backward functions *accumulate* (+=) into parameter gradients
 * and into input gradients, unless the comment says "written", so a tensor
 * used twice (the residual stream, the input of the q/k/v projections) sums
 * its gradients naturally; the caller zeroes gradient buffers first.
 *
 * Not here: fused or low-precision kernels (the CUDA backend, lab 05).
 */
#ifndef COURSE_MODEL_OPS_H
#define COURSE_MODEL_OPS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Token embedding lookup: out[n, :] = wte[tokens[n], :].
 * @param out [N, D]
 * @param tokens [N] ids in [0, V)
 * @param wte [V, D]
 * @param N rows
 * @param D width
 */
void encoder_forward(float *out, const int *tokens, const float *wte, int N, int D);

/**
 * @brief dwte[tokens[n], :] += dout[n, :], rows added in order n = 0..N-1.
 * @param dwte [V, D] accumulated
 * @param dout [N, D]
 * @param tokens [N]
 * @param N rows
 * @param D width
 */
void encoder_backward(float *dwte, const float *dout, const int *tokens, int N, int D);

/**
 * @brief RMSNorm: out = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) per row.
 * @param out [N, D]
 * @param rstd [N] saved for the backward pass
 * @param inp [N, D]
 * @param weight [D] gain
 * @param N rows
 * @param D width
 * @param eps added to the mean square
 */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, int N, int D,
                     float eps);

/**
 * @brief RMSNorm backward: dinp += rstd * (g - xhat * mean(g * xhat)), g = dout * w, xhat = x * rstd.
 * @param dinp [N, D] accumulated
 * @param dweight [D] accumulated: sum over rows of dout * xhat
 * @param dout [N, D]
 * @param inp [N, D] the forward input
 * @param weight [D]
 * @param rstd [N] from the forward pass
 * @param N rows
 * @param D width
 */
void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp,
                      const float *weight, const float *rstd, int N, int D);

/**
 * @brief out[N, OC] = inp[N, C] * w[C, OC] (OpenBLAS sgemm).
 * @param out [N, OC] written
 * @param inp [N, C]
 * @param weight [C, OC]
 * @param N rows
 * @param C input width
 * @param OC output width
 */
void matmul_forward(float *out, const float *inp, const float *weight, int N, int C, int OC);

/**
 * @brief dinp += dout * w^T; dweight += inp^T * dout.
 * @param dinp [N, C] accumulated (NULL: not needed)
 * @param dweight [C, OC] accumulated
 * @param dout [N, OC]
 * @param inp [N, C]
 * @param weight [C, OC]
 * @param N rows
 * @param C input width
 * @param OC output width
 */
void matmul_backward(float *dinp, float *dweight, const float *dout, const float *inp,
                     const float *weight, int N, int C, int OC);

/**
 * @brief The library behind matmul_forward() and matmul_backward(), as loaded at run time.
 *
 * What a checkpoint records as its library (checkpoint.h): OpenBLAS's
 * version and the core whose kernels it picked for this CPU (a DYNAMIC_ARCH
 * build chooses Haswell, SkylakeX, Zen, ... when it loads), e.g. "OpenBLAS
 * 0.3.21 core Zen". Another version or core may run other kernels and round
 * differently. Left out: the other build options (MAX_THREADS and the like,
 * which do not change an sgemm's arithmetic) and the thread count (every
 * sgemm here is single-threaded on a block of rows of fixed size, so the
 * bits do not depend on it).
 * @param buf destination (truncated to fit, always NUL-ended)
 * @param len size of buf
 */
void matmul_library(char *buf, size_t len);

/**
 * @brief The RoPE angle tables: angle(t, i) = t * theta^(-2i / hd).
 * @param cos_out [T, hd/2]
 * @param sin_out [T, hd/2]
 * @param T positions
 * @param hd head size (even)
 * @param theta base frequency
 */
void rope_tables(float *cos_out, float *sin_out, int T, int hd, float theta);

/**
 * @brief Rotary embedding: each pair (x[2i], x[2i+1]) of every head of row n
 * is rotated by angle(n % T, i). In place is allowed (out == inp).
 * @param out [N, D] written
 * @param inp [N, D]
 * @param cosv [T, hd/2] from rope_tables()
 * @param sinv [T, hd/2]
 * @param N rows (a multiple of T)
 * @param T sequence length
 * @param D width
 * @param H heads
 */
void rope_forward(float *out, const float *inp, const float *cosv, const float *sinv, int N, int T,
                  int D, int H);

/**
 * @brief RoPE backward: the rotation is orthogonal, so dinp is dout rotated by -angle. Written; in place is allowed.
 * @param dinp [N, D] written
 * @param dout [N, D]
 * @param cosv [T, hd/2]
 * @param sinv [T, hd/2]
 * @param N rows
 * @param T sequence length
 * @param D width
 * @param H heads
 */
void rope_backward(float *dinp, const float *dout, const float *cosv, const float *sinv, int N,
                   int T, int D, int H);

/**
 * @brief Causal multi-head attention: out = softmax(q k^T / sqrt(hd), causal) v per head.
 * @param out [B*T, D] written (heads side by side)
 * @param att [B, H, T, T] written: the attention probabilities (0 above the diagonal)
 * @param q [B*T, D]
 * @param k [B*T, D]
 * @param v [B*T, D]
 * @param B sequences
 * @param T sequence length
 * @param D width
 * @param H heads
 */
void attention_forward(float *out, float *att, const float *q, const float *k, const float *v,
                       int B, int T, int D, int H);

/**
 * @brief Attention backward through the softmax; one (sequence, head) pair per thread.
 * @param dq [B*T, D] accumulated
 * @param dk [B*T, D] accumulated
 * @param dv [B*T, D] accumulated
 * @param dout [B*T, D]
 * @param att [B, H, T, T] from the forward pass
 * @param q [B*T, D]
 * @param k [B*T, D]
 * @param v [B*T, D]
 * @param B sequences
 * @param T sequence length
 * @param D width
 * @param H heads
 */
void attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *att,
                        const float *q, const float *k, const float *v, int B, int T, int D, int H);

/**
 * @brief SwiGLU activation: out = silu(gate) * up, silu(x) = x * sigmoid(x).
 * @param out [n] written
 * @param gate [n]
 * @param up [n]
 * @param n elements (N * F)
 */
void swiglu_forward(float *out, const float *gate, const float *up, size_t n);

/**
 * @brief SwiGLU backward: dgate = dout * up * silu'(gate), dup = dout * silu(gate). Written.
 * @param dgate [n] written
 * @param dup [n] written
 * @param dout [n]
 * @param gate [n]
 * @param up [n]
 * @param n elements
 */
void swiglu_backward(float *dgate, float *dup, const float *dout, const float *gate,
                     const float *up, size_t n);

/**
 * @brief Residual add: out = a + b.
 * @param out [n] written (may alias a or b)
 * @param a [n]
 * @param b [n]
 * @param n elements
 */
void residual_forward(float *out, const float *a, const float *b, size_t n);

/**
 * @brief Residual backward: da += dout, db += dout.
 * @param da [n] accumulated
 * @param db [n] accumulated
 * @param dout [n]
 * @param n elements
 */
void residual_backward(float *da, float *db, const float *dout, size_t n);

/**
 * @brief Softmax cross-entropy: probs = softmax(logits); losses[n] = -log probs[n, target[n]].
 * @param losses [N] written
 * @param probs [N, V] written (may alias logits)
 * @param logits [N, V]
 * @param targets [N]
 * @param N rows
 * @param V vocabulary
 */
void crossentropy_forward(float *losses, float *probs, const float *logits, const int *targets,
                          int N, int V);

/**
 * @brief Gradient of dloss * sum_n losses[n] w.r.t. the logits: (probs - onehot(target)) * dloss. Written.
 * @param dlogits [N, V] written (may alias probs)
 * @param probs [N, V] from the forward pass
 * @param targets [N]
 * @param dloss weight of each row's loss (1/N for the mean)
 * @param N rows
 * @param V vocabulary
 */
void crossentropy_backward(float *dlogits, const float *probs, const int *targets, float dloss,
                           int N, int V);

/**
 * @brief Sum of the losses in double, in order (deterministic).
 * @param losses [N]
 * @param N rows
 * @return the sum
 */
double loss_sum(const float *losses, int N);

/**
 * @brief AdamW (Loshchilov and Hutter, decoupled weight decay) on n parameters.
 *
 * m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 * p -= lr * ((m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps) + wd * p).
 * @param params [n] updated
 * @param grads [n]
 * @param m [n] first moment, updated
 * @param v [n] second moment, updated
 * @param n elements
 * @param lr learning rate
 * @param beta1 first-moment decay
 * @param beta2 second-moment decay
 * @param eps denominator guard
 * @param weight_decay decoupled decay (0 for norm gains)
 * @param t step number starting at 1 (bias correction)
 */
void adamw_update(float *params, const float *grads, float *m, float *v, size_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, long t);

/**
 * @brief Squared L2 norm of g in double: fixed 4096-element chunks summed in order,
 * so the result does not depend on the number of threads.
 * @param g [n]
 * @param n elements
 * @return sum of g[i]^2
 */
double grad_norm_squared(const float *g, size_t n);

/**
 * @brief Clip by global norm: if norm > max_norm, scale g by max_norm / norm.
 * @param g [n] scaled in place
 * @param n elements
 * @param norm the global norm of g (sqrt of grad_norm_squared over all of it)
 * @param max_norm the clip threshold; <= 0 turns clipping off
 * @return the factor applied (1 when not clipped). A NaN norm is not clipped:
 *         g already holds a NaN or an infinity that no factor would mend, and
 *         the trainer stops on a non-finite norm before calling this.
 */
float clip_grad_norm(float *g, size_t n, double norm, double max_norm);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_MODEL_OPS_H */
