/** @file
 * The whole course model on the CPU: forward, backward and the AdamW step on
 * the flat buffers (parameters, gradients, the two AdamW moments, and the
 * activations each in one allocation), composed from the ops in model_ops.h.
 *
 * This is the fp32 reference that the CUDA backend (lab 05) will be checked
 * against, and fast enough to train the small configurations on a laptop.
 * Not here: mixed precision, activation recomputation, any parallelism
 * beyond OpenMP threads and OpenBLAS.
 */
#ifndef COURSE_MODEL_CPU_H
#define COURSE_MODEL_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Pointers into the activation buffer for one transformer block. */
typedef struct {
    float *ln1;       /**< [N, D] RMSNorm before attention */
    float *ln1_rstd;  /**< [N] */
    float *q;         /**< [N, D] queries after RoPE */
    float *k;         /**< [N, D] keys after RoPE */
    float *v;         /**< [N, D] values */
    float *att;       /**< [B, H, T, T] attention probabilities */
    float *atty;      /**< [N, D] attention output before wo */
    float *res1;      /**< [N, D] residual stream after the attention branch */
    float *ln2;       /**< [N, D] RMSNorm before the MLP */
    float *ln2_rstd;  /**< [N] */
    float *gate;      /**< [N, F] x wg */
    float *up;        /**< [N, F] x wu */
    float *swi;       /**< [N, F] silu(gate) * up */
    float *res2;      /**< [N, D] residual stream after the block */
} layer_acts_t;

/** The model, its optimizer state and activations for batches of B x T tokens. */
typedef struct {
    model_config_t cfg;    /**< the shape */
    param_table_t table;   /**< named slices of the flat buffers */
    size_t n_params;       /**< floats in each of params, grads, m, v */
    float *params;         /**< the parameters */
    float *grads;          /**< their gradients (accumulated by backward) */
    float *adam_m;         /**< AdamW first moments */
    float *adam_v;         /**< AdamW second moments */
    int B;                 /**< sequences per forward pass (a micro-batch) */
    int T;                 /**< tokens per sequence, <= cfg.max_seq */
    size_t n_acts;         /**< floats in the activation buffer */
    float *acts;           /**< all activations, one allocation */
    size_t n_grad_acts;    /**< floats in the activation-gradient buffer */
    float *grad_acts;      /**< scratch for backward, one allocation */
    float *encoded;        /**< [N, D] embedding output */
    layer_acts_t *layers;  /**< per block */
    float *scratch;        /**< [N, D] wo and w_down outputs before the residual add */
    float *lnf;            /**< [N, D] final RMSNorm */
    float *lnf_rstd;       /**< [N] */
    float *probs;          /**< [N, V] logits, then softmax (then their gradient in backward) */
    float *losses;         /**< [N] per-token loss */
    float *rope_cos;       /**< [T, hd/2] */
    float *rope_sin;       /**< [T, hd/2] */
    int *inputs;           /**< [N] the last forward's inputs */
    int *targets;          /**< [N] and targets */
} model_cpu_t;

/**
 * @brief Allocate the model for micro-batches of B x T and initialise its parameters from seed.
 *
 * Gradients and AdamW moments start at zero.
 * @param m the model
 * @param cfg a configuration that passes model_config_validate()
 * @param B sequences per forward pass
 * @param T tokens per sequence (<= cfg->max_seq)
 * @param seed parameter-initialisation seed (model_init_params())
 */
void model_cpu_init(model_cpu_t *m, const model_config_t *cfg, int B, int T, uint64_t seed);

/**
 * @brief Release everything model_cpu_init() allocated.
 * @param m the model
 */
void model_cpu_free(model_cpu_t *m);

/**
 * @brief Forward pass and loss.
 * @param m the model
 * @param inputs [B, T] byte ids
 * @param targets [B, T] the next byte of each position
 * @return the mean cross-entropy over the B*T positions, in nats
 */
double model_cpu_forward(model_cpu_t *m, const int *inputs, const int *targets);

/**
 * @brief Set every gradient to zero (before the first micro-batch of a step).
 * @param m the model
 */
void model_cpu_zero_grad(model_cpu_t *m);

/**
 * @brief Backward pass of the last forward; accumulates into m->grads.
 *
 * The gradient is that of loss_scale times the mean loss, so with gradient
 * accumulation over A micro-batches pass loss_scale = 1/A.
 * @param m the model (model_cpu_forward() must have run)
 * @param loss_scale weight of this micro-batch's mean loss
 */
void model_cpu_backward(model_cpu_t *m, float loss_scale);

/**
 * @brief The global L2 norm of the gradients (deterministic, in double).
 * @param m the model
 * @return sqrt(sum of squared gradients)
 */
double model_cpu_grad_norm(const model_cpu_t *m);

/**
 * @brief One AdamW step over every slice; weight decay only where the slice's decay flag is set.
 * @param m the model
 * @param lr learning rate of this step
 * @param beta1 first-moment decay
 * @param beta2 second-moment decay
 * @param eps denominator guard
 * @param weight_decay decoupled weight decay for matrices
 * @param t step number starting at 1
 */
void model_cpu_adamw(model_cpu_t *m, float lr, float beta1, float beta2, float eps,
                     float weight_decay, long t);

/**
 * @brief Bytes the model holds (parameters, gradients, moments, activations).
 * @param m the model
 * @return the size in bytes
 */
size_t model_cpu_bytes(const model_cpu_t *m);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_MODEL_CPU_H */
