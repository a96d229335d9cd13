/** @file
 * The course model: a decoder-only transformer in the Llama style, described
 * independently of where it runs.
 *
 *     tokens -> embedding -> L x [ x += Attn(RMSNorm(x)); x += SwiGLU(RMSNorm(x)) ]
 *            -> RMSNorm -> output projection -> logits over 256 bytes
 *
 * Attention is causal multi-head with rotary position embeddings (RoPE); the
 * MLP is SwiGLU (silu(x Wg) * (x Wu)) Wd. The vocabulary is the 256 byte
 * values, so no tokenizer is needed.
 *
 * This file holds the configuration (with validation that says what to fix),
 * the parameter table (named slices of the one flat parameter buffer: the
 * later labs bucket and shard gradients and optimizer state as slices of the
 * same layout), deterministic initialisation, the FLOP count per token used
 * for MFU, and the table of peak throughputs by device name. It computes
 * nothing itself: the CPU forward/backward is kernels/cpu/model_cpu.h; the
 * GPU backend (bf16 mixed precision) is kernels/cuda/model_gpu.h (lab 05).
 *
 * Every weight matrix is stored row-major as [in, out], so a layer is
 * out[N, out] = in[N, in] * W[in, out].
 */
#ifndef COURSE_MODEL_H
#define COURSE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Size of the byte-level vocabulary. */
#define MODEL_VOCAB 256

/** The shape of the model. */
typedef struct {
    int vocab;        /**< vocabulary size (MODEL_VOCAB) */
    int d_model;      /**< width of the residual stream */
    int n_layers;     /**< transformer blocks */
    int n_heads;      /**< attention heads; must divide d_model */
    int d_ff;         /**< hidden width of the SwiGLU MLP */
    int max_seq;      /**< longest sequence the model accepts */
    float rope_theta; /**< RoPE base frequency (10000 in Llama) */
    float norm_eps;   /**< epsilon inside RMSNorm */
} model_config_t;

/** The tensors of one transformer block, in their order in the flat buffer. */
typedef enum {
    P_ATTN_NORM = 0, /**< [D] RMSNorm gain before attention */
    P_WQ,            /**< [D, D] query projection */
    P_WK,            /**< [D, D] key projection */
    P_WV,            /**< [D, D] value projection */
    P_WO,            /**< [D, D] attention output projection */
    P_MLP_NORM,      /**< [D] RMSNorm gain before the MLP */
    P_W_GATE,        /**< [D, F] SwiGLU gate projection */
    P_W_UP,          /**< [D, F] SwiGLU up projection */
    P_W_DOWN,        /**< [F, D] SwiGLU down projection */
    P_LAYER_COUNT    /**< number of tensors per block */
} model_layer_param_t;

/** One named slice of the flat parameter buffer. */
typedef struct {
    char name[32];   /**< e.g. "layers.1.wq", "tok_emb", "lm_head" */
    size_t offset;   /**< first float of the slice */
    size_t numel;    /**< rows * cols */
    int rows;        /**< first dimension */
    int cols;        /**< second dimension (1 for vectors) */
    int layer;       /**< block index, or -1 for embedding, final norm and output */
    int decay;       /**< 1 if AdamW applies weight decay (matrices), 0 for norm gains */
} param_slice_t;

/** The parameter table: every tensor of the model as a slice of one buffer. */
typedef struct {
    model_config_t cfg;     /**< the shape it was built for */
    int n;                  /**< number of slices */
    param_slice_t *slices;  /**< tok_emb, layers.0.* ... layers.L-1.*, final_norm, lm_head */
    size_t total;           /**< total floats */
} param_table_t;

/**
 * @brief A small default configuration (d_model 64, 2 layers, 4 heads, d_ff 192, max_seq 256).
 * @return the configuration
 */
model_config_t model_config_default(void);

/**
 * @brief Check a configuration; on failure write one line saying what is wrong and what to pick.
 *
 * Example: "--heads 5 does not divide --d-model 64; pick heads in {1,2,4,8,16,32}"
 * (64 heads would give an odd head size, which RoPE cannot rotate in pairs).
 * The messages name the command-line flags of the train program.
 * @param c the configuration
 * @param err destination for the message (may be NULL)
 * @param errlen size of err
 * @return 0 if valid, -1 otherwise
 */
int model_config_validate(const model_config_t *c, char *err, size_t errlen);

/**
 * @brief Build the parameter table for a (valid) configuration.
 * @param t filled in; release with param_table_free()
 * @param c the configuration
 */
void param_table_init(param_table_t *t, const model_config_t *c);

/**
 * @brief Release the table's slices.
 * @param t the table
 */
void param_table_free(param_table_t *t);

/**
 * @brief Index of a block tensor's slice in the table.
 * @param t the table
 * @param layer block index in [0, n_layers)
 * @param which which tensor of the block
 * @return index into t->slices
 */
int param_index(const param_table_t *t, int layer, model_layer_param_t which);

/**
 * @brief Find a slice by name.
 * @param t the table
 * @param name e.g. "layers.0.wq"
 * @return the slice, or NULL if there is none of that name
 */
const param_slice_t *param_find(const param_table_t *t, const char *name);

/** @brief Index of the token embedding [V, D] in the table. @param t the table @return 0 */
int param_index_tok_emb(const param_table_t *t);

/** @brief Index of the final RMSNorm gain [D]. @param t the table @return the index */
int param_index_final_norm(const param_table_t *t);

/** @brief Index of the output projection [D, V]. @param t the table @return the index */
int param_index_lm_head(const param_table_t *t);

/**
 * The initialisation's branch of its seed ("init" in ASCII): slice i draws
 * from rng_split(rng_split(seed's root, MODEL_INIT_BRANCH), i). Splitting the
 * root by slice index alone would give slice i the very stream the Markov
 * source (data.h) gives state i of the same seed: with the defaults
 * (--seed 1, --markov-seed 1) the token embedding's first draws were the
 * bits that chose state 0's successors.
 */
#define MODEL_INIT_BRANCH 0x696e6974u

/**
 * @brief Initialise parameters deterministically from a seed.
 *
 * Matrices get N(0, 0.02^2); the two projections that write into the residual
 * stream (wo, w_down) are scaled by 1/sqrt(2 L) (GPT-2) so the stream's
 * variance does not grow with depth; norm gains are 1. Each slice draws from
 * its own stream, split by slice index from a branch of the seed kept for
 * the initialisation (MODEL_INIT_BRANCH), so a slice's values do not depend
 * on the order slices are filled (or on which rank fills them), nor repeat
 * the Markov source's draws when its seed is the same (both default to 1,
 * and that source splits its seed by state index).
 * @param t the table
 * @param params t->total floats
 * @param seed the seed
 */
void model_init_params(const param_table_t *t, float *params, uint64_t seed);

/**
 * @brief Parameters that take part in matmuls (all but the norm gains and the embedding).
 * @param c the configuration
 * @return the count
 */
size_t model_matmul_params(const model_config_t *c);

/**
 * @brief Training FLOPs per token (forward + backward) at sequence length T.
 *
 * 6 per matmul parameter (2 forward, 4 backward) plus attention's QK^T and
 * PV, 12 * L * D * T, counted over the full T x T square as PaLM (Chowdhery
 * et al. 2022, appendix B) and nanoGPT do, so MFU figures are comparable
 * with theirs. llm.c counts half of it (6 * L * D * T), so it counts 6 to 7%
 * fewer FLOPs per token at GPT-2 small's shape (T = 1024), and the same speed
 * reads that much lower there.
 * Element-wise work (norms, softmax, SwiGLU, RoPE) is not counted.
 * @param c the configuration
 * @param T sequence length used for training
 * @return FLOPs per token
 */
double model_flops_per_token(const model_config_t *c, int T);

/**
 * @brief Dense peak throughput of a device by name, for MFU.
 *
 * A small table from vendor datasheets: H100/H200 SXM (989 bf16, 495 tf32,
 * 67 fp32 TFLOP/s), H100 PCIe (756, 378, 51), H100/H200 NVL (835, 418, 60),
 * GH200 (as H100 SXM), A100 (312, 156, 19.5), L40S, RTX 4090, A10. A table
 * name must appear as whole words of the device name, case-insensitive, with
 * any run of spaces, dashes or other punctuation between words: "H100" is in
 * "NVIDIA H100 80GB HBM3", "A100" in "NVIDIA A100-SXM4-80GB", but "A100" is
 * not in "NVIDIA RTX A1000" nor "A10" in "NVIDIA A10G": those are unknown.
 * CPUs are not in the table: their figure is measured (see the train program)
 * or given with --peak-tflops.
 * @param device_name e.g. what cudaGetDeviceProperties reports
 * @param precision "bf16", "fp16", "tf32" or "fp32"
 * @return TFLOP/s, or 0 if the device or precision is unknown
 */
double model_peak_tflops(const char *device_name, const char *precision);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_MODEL_H */
