/** @file
 * The whole course model on a GPU (or on the SIMT emulator) in bf16 mixed
 * precision: the lab-05 backend of the train program.
 *
 * Flat device buffers as on the CPU (kernels/cpu/model_cpu.h): fp32 master
 * parameters, fp32 gradients, fp32 AdamW moments, plus a bf16 copy of the
 * parameters that the matmuls read. Everything statistical (norms, softmax,
 * loss), the residual stream and the parameter gradients stay fp32; matmuls
 * take bf16 operands and accumulate in fp32 (kernels/cuda/model_ops_gpu.h),
 * and an activation that is only ever a matmul operand is stored in bf16
 * straight away, as are the matmul outputs that only an element-wise kernel
 * reads (q, k, v, gate, up, the output projections' results) and SwiGLU's
 * gradients (gpu_layer_acts_t, swiglu_backward_gpu()). The forward and backward passes mirror
 * model_cpu.c op for op, so the two can be compared step by step.
 *
 * Four functions (the lab's five tasks) are the student's (lab 05,
 * labs/05-single-gpu-training/train_ops.cu): the backward passes of RMSNorm,
 * of the attention softmax and of SwiGLU, and the fused AdamW step that also
 * writes the bf16 copy. Their
 * prototypes are at the end of this file; the backend aborts with "not
 * implemented" while one is still a TODO.
 *
 * Attention comes in two implementations (model_attn_t): the naive one
 * stores the B x H x T x T probabilities and runs the student's softmax
 * backward, the one the lab's checks exercise; the flash one
 * (kernels/cuda/flash_attention.h) never stores them and is what the
 * benchmark and the training program use by default where the head size
 * allows.
 *
 * Not here: activation recomputation, overlap of anything with anything;
 * the handout lists them as next steps.
 */
#ifndef COURSE_MODEL_GPU_H
#define COURSE_MODEL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "model.h"
#include "cpu/model_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the GPU backend computes attention. */
typedef enum {
    MODEL_ATTN_NAIVE = 0, /**< scores and probabilities stored [B, H, T, T]; the student's softmax backward */
    MODEL_ATTN_FLASH = 1  /**< fused kernels, only the row log-sum-exp stored (hd in {16, 32, 64, 128}) */
} model_attn_t;

/**
 * One block's activations kept for the backward pass, in the precision the
 * backward pass reads them: fp32 for the residual stream (the student's
 * RMSNorm backward reads it), bf16 for what only ever enters a matmul (the
 * norm outputs, SwiGLU's output, the heads of q, k, v) and for gate and up,
 * which their matmul rounds as it writes them (the student's SwiGLU backward
 * reads them in bf16).
 * Device pointers; N = B * T rows.
 */
typedef struct {
    uint16_t *ln1;    /**< [N, D] bf16 RMSNorm output before attention */
    float *ln1_rstd;  /**< [N] its 1/rms */
    uint16_t *qh;     /**< [B, H, T, hd] bf16 queries after RoPE */
    uint16_t *kh;     /**< [B, H, T, hd] bf16 keys after RoPE */
    uint16_t *vh;     /**< [B, H, T, hd] bf16 values */
    float *att;       /**< naive: [B, H, T, T] probabilities; flash: [B, H, T] row log-sum-exps */
    float *atty;      /**< [N, D] attention output before the output projection (naive only; NULL with flash) */
    uint16_t *atty_b; /**< [N, D] bf16 attention output: the output projection's operand, forward and backward,
                           and (flash) the backward's Delta = rowsum(dO * O) */
    float *res1;      /**< [N, D] residual stream after attention */
    uint16_t *ln2;    /**< [N, D] bf16 RMSNorm output before the MLP */
    float *ln2_rstd;  /**< [N] its 1/rms */
    uint16_t *gate;   /**< [N, F] bf16 gate projection (up follows it directly) */
    uint16_t *up;     /**< [N, F] bf16 up projection */
    uint16_t *swi;    /**< [N, F] bf16 silu(gate) * up */
    float *res2;      /**< [N, D] residual stream after the MLP: the block's output */
} gpu_layer_acts_t;

/** What a step's device time is spent on, for model_gpu_profile_start(). */
typedef enum {
    MODEL_PROF_MATMUL = 0, /**< the projections' matmuls (cuBLAS or the --matmul kernel) */
    MODEL_PROF_ATTENTION,  /**< attention forward (flash, or naive with its matmuls and softmax) */
    MODEL_PROF_ATTENTION_BWD, /**< attention backward (flash, or naive with its matmuls and softmax backward) */
    MODEL_PROF_RMSNORM,    /**< RMSNorm forward (with the residual add fused in) and the student's backward */
    MODEL_PROF_ROPE,       /**< RoPE with the head split or the cast (v and dv: the split or the cast alone) */
    MODEL_PROF_SWIGLU,     /**< SwiGLU forward and the student's backward */
    MODEL_PROF_RESIDUAL,   /**< the embedding and its gradient (the residual adds are fused into RMSNorm) */
    MODEL_PROF_CAST,       /**< fp32 -> bf16 casts of matmul operands */
    MODEL_PROF_LOSS,       /**< cross-entropy forward and backward */
    MODEL_PROF_OPTIMIZER,  /**< gradient norm and the student's AdamW */
    MODEL_PROF_COUNT       /**< number of categories */
} model_prof_t;

/** Device time per category, collected while on (host memory). */
typedef struct {
    int on;                        /**< collecting */
    int depth;                     /**< nesting of timed regions: only the outermost is timed */
    gpu_timer_t timer;             /**< the events of the open region */
    double ms[MODEL_PROF_COUNT];   /**< milliseconds per category */
    long calls[MODEL_PROF_COUNT];  /**< timed regions per category */
    double bytes[MODEL_PROF_COUNT]; /**< DRAM bytes the ops must move at the least (inputs read once, outputs
                                         written once); 0 where not modelled (matmuls, naive attention) */
    double flops[MODEL_PROF_COUNT]; /**< FLOPs: the matmuls', and attention's over the causal triangle */
} model_gpu_profile_t;

/** The model on the device for micro-batches of B x T tokens. Pointers are device memory unless marked host. */
typedef struct {
    model_config_t cfg;     /**< the shape */
    model_attn_t attn;      /**< attention implementation (layers[l].att holds [B, H, T] log-sum-exps with flash) */
    param_table_t table;    /**< slices of the flat buffers (host) */
    size_t n_params;        /**< elements in each flat buffer */
    int B;                  /**< sequences per forward pass */
    int T;                  /**< tokens per sequence */
    float *params;          /**< fp32 master parameters */
    uint16_t *params_bf16;  /**< bf16 working copy read by the matmuls */
    float *grads;           /**< fp32 gradients */
    float *adam_m;          /**< AdamW first moments */
    float *adam_v;          /**< AdamW second moments */
    float *acts;            /**< fp32 activations, one allocation */
    size_t n_acts;          /**< floats in acts */
    uint16_t *acts_bf16;    /**< bf16 activations, one allocation */
    size_t n_acts_bf16;     /**< elements in acts_bf16 */
    float *encoded;         /**< [N, D] */
    gpu_layer_acts_t *layers; /**< per block (host array of device pointers) */
    uint16_t *scratch;      /**< [N, D] bf16 output of a block's output projection, added in by the next norm */
    uint16_t *lnf;          /**< [N, D] bf16 final RMSNorm output */
    float *lnf_rstd;        /**< [N] */
    float *probs;           /**< [N, V] logits, probabilities, then their gradient */
    float *losses;          /**< [N] */
    float *work;            /**< backward and attention scratch, one allocation */
    size_t n_work;          /**< floats in work */
    uint16_t *work_bf16;    /**< bf16 operand scratch, one allocation */
    size_t n_work_bf16;     /**< elements in work_bf16 */
    float *rope_cos;        /**< [T, hd/2] */
    float *rope_sin;        /**< [T, hd/2] */
    int *inputs;            /**< [N] */
    int *targets;           /**< [N] */
    double *norm_partial;   /**< per-chunk sums of squares */
    float *host_losses;     /**< [N] host */
    double *host_partial;   /**< host copy of norm_partial */
    float *host_params;     /**< host mirror for checkpoints (filled by model_gpu_download_state) */
    float *host_m;          /**< host mirror of adam_m */
    float *host_v;          /**< host mirror of adam_v */
    model_gpu_profile_t *prof; /**< per-category timing (host), allocated by model_gpu_profile_start() */
    struct model_gpu_audit *audit; /**< the student-function audit (host), allocated by model_gpu_audit() */
} model_gpu_t;

/**
 * @brief Allocate the model on the device and initialise its parameters from seed (as model_cpu_init()).
 *
 * Aborts with a message if B x n_heads is over 65535, the grid dimension the
 * attention and RoPE kernels put those pairs on (the CPU backend has no such
 * limit).
 * @param m the model
 * @param cfg a valid configuration
 * @param B sequences per forward pass
 * @param T tokens per sequence
 * @param seed parameter-initialisation seed
 */
void model_gpu_init(model_gpu_t *m, const model_config_t *cfg, int B, int T, uint64_t seed);

/**
 * @brief model_gpu_init() with a choice of attention (model_gpu_init() is MODEL_ATTN_NAIVE).
 *
 * Aborts with a message if attn is MODEL_ATTN_FLASH and the head size is not supported
 * (model_gpu_flash_supported() asks first), and, whatever attn is, if B x n_heads is
 * over 65535.
 * @param m the model
 * @param cfg a valid configuration
 * @param B sequences per forward pass
 * @param T tokens per sequence
 * @param seed parameter-initialisation seed
 * @param attn the attention implementation
 */
void model_gpu_init_attn(model_gpu_t *m, const model_config_t *cfg, int B, int T, uint64_t seed,
                         model_attn_t attn);

/**
 * @brief Whether the flash attention kernels handle this configuration on the current device.
 *
 * The head size must be 16, 32, 64 or 128 with the shared memory it needs
 * (gpu_flash_attention_supported()), and B x heads at most 65535 (a grid dimension).
 * @param cfg the configuration
 * @param B sequences per forward pass
 * @return 1 or 0
 */
int model_gpu_flash_supported(const model_config_t *cfg, int B);

/** @brief Release everything model_gpu_init() allocated. @param m the model */
void model_gpu_free(model_gpu_t *m);

/**
 * @brief Forward pass and mean loss.
 * @param m the model
 * @param inputs [B*T] host byte ids
 * @param targets [B*T] host next bytes
 * @return the mean cross-entropy in nats
 */
double model_gpu_forward(model_gpu_t *m, const int *inputs, const int *targets);

/** @brief Zero the gradients. @param m the model */
void model_gpu_zero_grad(model_gpu_t *m);

/**
 * @brief Backward pass of the last forward, accumulating the gradient of loss_scale * mean loss.
 * @param m the model
 * @param loss_scale 1/accum with gradient accumulation
 */
void model_gpu_backward(model_gpu_t *m, float loss_scale);

/**
 * @brief Global L2 norm of the gradients (fixed chunking, summed in order in double).
 * @param m the model
 * @return the norm
 */
double model_gpu_grad_norm(model_gpu_t *m);

/**
 * @brief One AdamW step over every slice with the gradients scaled by grad_scale (clipping), refreshing the bf16 copy.
 * @param m the model
 * @param lr learning rate
 * @param beta1 first-moment decay
 * @param beta2 second-moment decay
 * @param eps denominator guard
 * @param weight_decay decoupled decay for matrices (slices with decay set)
 * @param t step number from 1
 * @param grad_scale factor applied to every gradient first (1: no clipping)
 */
void model_gpu_adamw(model_gpu_t *m, float lr, float beta1, float beta2, float eps, float weight_decay,
                     long t, float grad_scale);

/** @brief Copy master parameters and moments to the host mirrors (host_params, host_m, host_v). @param m the model */
void model_gpu_download_state(model_gpu_t *m);

/** @brief Upload the host mirrors to the device and refresh the bf16 copy (after loading a checkpoint). @param m the model */
void model_gpu_upload_state(model_gpu_t *m);

/**
 * @brief Device bytes the model holds.
 * @param m the model
 * @return bytes
 */
size_t model_gpu_bytes(const model_gpu_t *m);

/**
 * @brief Start timing every op of the following steps by category (zeroing earlier figures).
 *
 * Each op is bracketed by CUDA events and waited for, so a profiled step runs
 * slower than a plain one and its launches do not overlap: the figures say
 * where device time goes, not how long a step takes.
 * @param m the model
 */
void model_gpu_profile_start(model_gpu_t *m);

/**
 * @brief Stop timing; the figures stay in m->prof until the next start.
 * @param m the model
 */
void model_gpu_profile_stop(model_gpu_t *m);

/**
 * @brief Check the student's lab-05 functions inside the steps that follow.
 *
 * While on, every call the step makes to a function of lab 05 (RMSNorm,
 * SwiGLU and softmax backward, AdamW) downloads the tensors it reads and
 * writes before the call, runs the CPU reference op on them, and compares
 * the device's result after the call (within 1e-3 of the largest reference
 * value; AdamW's bf16 copy bit for bit, see model_gpu_screen_bf16_copy()).
 * So the function is checked on the real step's tensors and
 * pointers, not on inputs made for a check: a function that behaves
 * differently in a training run (skips a repeated call, say) is found. Slow
 * (every tensor crosses to the host): meant for one step. Switching on
 * clears an earlier failure.
 * @param m the model
 * @param on 1 to start, 0 to stop
 */
void model_gpu_audit(model_gpu_t *m, int on);

/**
 * @brief The benchmark's gross screen: n device floats against a host
 * reference, within 1e-3 of the reference's largest magnitude (plus 1e-3
 * relative). What the lab 05 bench's screen and model_gpu_audit() both use;
 * the numerics proper are check.c's.
 * @param d_got [n] device result
 * @param want [n] host reference
 * @param n elements
 * @param what names the tensor in the message
 * @param msg where a mismatch is described (worst element, counts)
 * @param len its size
 * @return 0, or -1 with msg set
 */
int model_gpu_screen_close(const float *d_got, const float *want, size_t n, const char *what, char *msg,
                           size_t len);

/**
 * @brief model_gpu_screen_close() for a bf16 result: n device bf16 values
 * against a host fp32 reference, allowing also one bf16 unit (2^-7 relative)
 * for the rounding.
 * @param d_got [n] device result, bf16 bits
 * @param want [n] host reference, fp32 before rounding
 * @param n elements
 * @param what names the tensor in the message
 * @param msg where a mismatch is described (worst element, counts)
 * @param len its size
 * @return 0, or -1 with msg set
 */
int model_gpu_screen_close_bf16(const uint16_t *d_got, const float *want, size_t n, const char *what, char *msg,
                                size_t len);

/**
 * @brief AdamW's bf16 working copy against the master weights it was rounded
 * from: every element's bits must equal bf16_from_float() (nearest even) of
 * the device's own updated master, exactly. What the lab 05 bench's screen
 * and model_gpu_audit() use after the master weights themselves compare.
 * @param d_bits [n] device bf16 copy (params_bf16)
 * @param d_master [n] device fp32 master weights, after the update
 * @param n elements
 * @param what names the tensor in the message
 * @param msg where a mismatch is described (count, first element, got and want)
 * @param len its size
 * @return 0, or -1 with msg set
 */
int model_gpu_screen_bf16_copy(const uint16_t *d_bits, const float *d_master, size_t n, const char *what, char *msg,
                               size_t len);

/**
 * @brief The first mismatch (or failed call) an audit has found since it was switched on.
 * @param m the model
 * @return a message naming the function, the tensor and where it differs, or NULL if none
 */
const char *model_gpu_audit_failure(const model_gpu_t *m);

/**
 * @brief Name of a profile category, for tables.
 * @param c a model_prof_t
 * @return e.g. "matmul"
 */
const char *model_gpu_profile_name(int c);

/* ---- written by the student in lab 05 (labs/05-single-gpu-training/train_ops.cu) ---- */

/**
 * @brief RMSNorm backward on the device (same contract as rmsnorm_backward() in cpu/model_ops.h).
 * @param dinp [N, D] accumulated
 * @param dweight [D] accumulated
 * @param dout [N, D]
 * @param inp [N, D]
 * @param weight [D]
 * @param rstd [N]
 * @param N rows
 * @param D width
 * @return LAB_OK, LAB_NOT_IMPLEMENTED, LAB_BAD_ARGUMENT, LAB_LAUNCH_FAILED
 */
int rmsnorm_backward_gpu(float *dinp, float *dweight, const float *dout, const float *inp,
                         const float *weight, const float *rstd, int N, int D);

/**
 * @brief Backward of the scaled causal softmax: dpreatt = scale * P * (dP - sum_u P dP) on u <= t, 0 above.
 *
 * Reads P and dP only on and below the diagonal: above it they hold nothing
 * the function may use (lab 05's check fills them with NaN).
 * @param dpreatt [BH, T, T] gradient of the raw scores q.k
 * @param att [BH, T, T] the probabilities P of the forward pass
 * @param datt [BH, T, T] the gradient dP of the probabilities
 * @param BH sequences times heads
 * @param T sequence length
 * @param scale the forward's score scale 1/sqrt(hd)
 * @return LAB_OK, LAB_NOT_IMPLEMENTED, LAB_BAD_ARGUMENT, LAB_LAUNCH_FAILED
 */
int attention_softmax_backward_gpu(float *dpreatt, const float *att, const float *datt, int BH, int T,
                                   float scale);

/**
 * @brief SwiGLU backward on bf16 tensors, computed in fp32.
 *
 * The values of swiglu_backward() in cpu/model_ops.h for the inputs widened
 * to fp32 (exactly), rounded to bf16 (nearest even) on the way out. Every
 * tensor here is bf16 because of who writes and reads it: dout, gate and up
 * come from matmuls that round as they write; dgate and dup are only ever
 * the operands of the gate and up projections' backward matmuls, so an fp32
 * copy would be written and read back once just to be rounded. At 2 bytes
 * an element the kernel moves 10 bytes per element, where fp32 would move 20.
 * @param dgate [n] bf16 bits, written
 * @param dup [n] bf16 bits, written
 * @param dout [n] bf16 bits, the gradient of silu(gate) * up
 * @param gate [n] bf16 bits
 * @param up [n] bf16 bits
 * @param n elements
 * @return LAB_OK, LAB_NOT_IMPLEMENTED, LAB_LAUNCH_FAILED
 */
int swiglu_backward_gpu(uint16_t *dgate, uint16_t *dup, const uint16_t *dout, const uint16_t *gate,
                        const uint16_t *up, size_t n);

/**
 * @brief Fused AdamW on fp32 master weights that also writes their bf16 copy (the mixed-precision step).
 *
 * With g = grad_scale * grads[i]: the update of adamw_update() in cpu/model_ops.h on
 * master, m, v; then params_bf16[i] = bf16(master[i]) rounded to nearest even.
 * @param master [n] fp32 parameters, updated
 * @param params_bf16 [n] written
 * @param grads [n]
 * @param m [n] first moment, updated
 * @param v [n] second moment, updated
 * @param n elements
 * @param lr learning rate
 * @param beta1 first-moment decay
 * @param beta2 second-moment decay
 * @param eps denominator guard
 * @param weight_decay decoupled decay
 * @param t step number from 1 (bias correction)
 * @param grad_scale gradient scale (global-norm clipping)
 * @return LAB_OK, LAB_NOT_IMPLEMENTED, LAB_BAD_ARGUMENT, LAB_LAUNCH_FAILED
 */
int adamw_step_gpu(float *master, uint16_t *params_bf16, const float *grads, float *m, float *v, size_t n,
                   float lr, float beta1, float beta2, float eps, float weight_decay, long t,
                   float grad_scale);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_MODEL_GPU_H */
