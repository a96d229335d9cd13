/** @file
 * The training loop behind build/bin/train, as a library entry point so that
 * tests can run it in-process.
 *
 * One step: the global batch of the step (data.h, a pure function of seed and
 * step) is split into `accum` micro-batches; their gradients are accumulated,
 * clipped by global norm, and AdamW takes a step with a linear-warmup plus
 * cosine learning rate. Eval loss on fixed held-out batches every
 * eval_every steps and at the end; checkpoints every save_every steps and at
 * the end; a resumed run continues bit-identically (same batches, same
 * arithmetic order; on a GPU, on the same GPU model and cuBLAS version,
 * which is as far as cuBLAS promises identical results). For that the
 * checkpoint records the backend, precision, attention and matmul kernel the
 * run computed with, and a resume that would compute differently is refused
 * with the flags that match; it records the device and the math library
 * (OpenBLAS or cuBLAS, and its version) as well, and a resume on another
 * device or library goes on with a warning. A loss, gradient norm, eval loss
 * or parameter that becomes NaN or inf stops the run with an error before it
 * reaches a checkpoint, so the last checkpoint on disk is always a good one.
 *
 * Backends: cpu (kernels/cpu/model_cpu.h) is built in. The GPU backend of
 * lab 05 (kernels/cuda/model_gpu.h, on a GPU or on the SIMT emulator) lives in
 * per-target programs, which register it with train_set_gpu_backend(); the
 * loop sees every backend through train_backend_t. Data-parallel ranks arrive
 * with lab 07 (data_batch() already takes rank and world).
 */
#ifndef COURSE_TRAINER_H
#define COURSE_TRAINER_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Everything a training run is configured by (the train program's flags). */
typedef struct {
    model_config_t cfg;      /**< model shape */
    int batch;               /**< global batch, sequences per optimizer step */
    int seq;                 /**< tokens per sequence */
    int accum;               /**< micro-batches per step (batch must be a multiple) */
    int steps;               /**< optimizer steps in the whole run (sets the schedule) */
    int warmup;              /**< linear warmup steps */
    double lr;               /**< peak learning rate */
    double min_lr;           /**< learning rate at the end of the cosine */
    double weight_decay;     /**< AdamW decoupled weight decay (matrices only) */
    double beta1;            /**< AdamW beta1 */
    double beta2;            /**< AdamW beta2 */
    double adam_eps;         /**< AdamW epsilon */
    double clip;             /**< clip gradients to this global norm (0: off) */
    uint64_t seed;           /**< parameter init and data sampling */
    uint64_t markov_seed;    /**< seed of the Markov transition table */
    int markov_states;       /**< Markov alphabet size */
    int markov_branch;       /**< successors per Markov state */
    const char *data_path;   /**< text file instead of the Markov source (NULL: Markov) */
    int eval_every;          /**< eval loss every this many steps (0: only at the end) */
    int eval_batches;        /**< held-out batches of `batch` sequences per eval (the same set whatever `accum`) */
    int print_every;         /**< progress line every this many steps (0: none) */
    const char *log_path;    /**< loss log file (NULL: none); a NaN or inf is null in JSON, an empty CSV field;
                                  train_run() refuses one that is the --data, --resume or --save file;
                                  with --resume, the log's rows up to the checkpoint's step are kept and
                                  the run's rows follow them (a file that is not a log is refused) */
    const char *log_format;  /**< "csv" or "json" (NULL: from the file name, default csv) */
    const char *save_path;   /**< checkpoint file (NULL: none); train_run() checks it can be written before step 1,
                                  and refuses the --data file (the --resume one is fine: that continues a run) */
    int save_every;          /**< also save every this many steps (0: only at the end) */
    const char *resume_path; /**< continue from this checkpoint (NULL: start fresh) */
    int stop_at;             /**< stop (and save) after this step, as if interrupted (0: run to steps) */
    int threads;             /**< OpenMP threads (0: leave as they are); each runs single-threaded sgemms */
    double peak_tflops;      /**< MFU denominator (0: the device's bf16 peak by name; for the cpu backend and
                                  the emulator this CPU's measured sgemm rate; for a GPU not in the table, unknown) */
    const char *backend;     /**< "cpu" (NULL means cpu), "cuda" or "emu" */
} train_opts_t;

/**
 * One model behind the training loop: the handful of operations a step needs,
 * on whichever device holds the model. A backend owns its buffers; state()
 * gives host views of the fp32 parameters and AdamW moments (copied from the
 * device where there is one) for checkpoints.
 */
typedef struct {
    void *model;             /**< the backend's model object */
    size_t n_params;         /**< parameter count */
    char device[128];        /**< where it runs, for the banner and the peak table */
    char library[128];       /**< the math library behind its matmuls, with its version as loaded (OpenBLAS's
                                  config, "cuBLAS 12.8.4", or "none" and the compiler of the course's own
                                  kernels): what a checkpoint records, and a resume warns if it differs */
    double peak_tflops;      /**< the device's bf16 peak for MFU, TFLOP/s (0: not known) */
    int measure_cpu_peak;    /**< 1: the model runs on this CPU (cpu backend, emulator), so with no peak known
                                  MFU is against its measured sgemm rate; 0: with no peak, MFU is unknown */
    const char *precision;   /**< "fp32" or "bf16 mixed" (bf16 compute, fp32 master weights) */
    const char *attention;   /**< the attention it runs: "naive" or "flash" ("naive" for the cpu backend's fp32 one) */
    const char *matmul;      /**< the matmul kernel: "cublas", "tiled", "wmma", "mma", "wgmma"; "openblas" on cpu */
    double (*forward)(void *model, const int *inputs, const int *targets);            /**< mean loss */
    void (*zero_grad)(void *model);                                                   /**< before a step */
    void (*backward)(void *model, float loss_scale);                                  /**< accumulate */
    double (*grad_norm)(void *model);                                                 /**< global L2 norm */
    void (*step)(void *model, double grad_norm, double clip, float lr, float beta1, float beta2, float eps,
                 float weight_decay, long t);                                         /**< clip + AdamW */
    void (*state)(void *model, float **params, float **m, float **v);                 /**< host views */
    void (*state_loaded)(void *model);                                                /**< after writing the views */
    size_t (*bytes)(void *model);                                                     /**< memory held */
    size_t (*device_used)(void *model); /**< GPU memory in use (NULL for the CPU backend: host RSS is shown) */
    void (*destroy)(void *model);                                                     /**< free it all */
} train_backend_t;

/**
 * A function that opens a non-CPU backend by name for micro-batches of B x T.
 * @return 0, or -1 with a one-line message in err
 */
typedef int (*train_backend_open_fn)(train_backend_t *b, const char *name, const model_config_t *cfg, int B,
                                     int T, uint64_t seed, char *err, size_t errlen);

/**
 * @brief Make the GPU backend (--backend cuda|emu) available to train_run(); per-target programs call it.
 * @param open the opener (NULL removes it)
 */
void train_set_gpu_backend(train_backend_open_fn open);

/**
 * @brief Open the backend o->backend names for micro-batches of B x T.
 * @param b filled in
 * @param o the options (backend, cfg, seed)
 * @param B sequences per forward pass
 * @param T tokens per sequence
 * @param err message on failure
 * @param errlen size of err
 * @return 0, or -1 with a message saying which program has that backend
 */
int train_backend_open(train_backend_t *b, const train_opts_t *o, int B, int T, char *err, size_t errlen);

/** What a run reports back. */
typedef struct {
    int steps_done;          /**< last completed step (before the fault, for a run stopped by a NaN) */
    double last_train_loss;  /**< loss of the last step */
    double eval_loss;        /**< the last eval loss (NaN if none) */
    double entropy_rate;     /**< the data's optimum (NaN for a text file) */
    double tokens_per_s;     /**< training throughput over the run */
    double mfu;              /**< model FLOPs utilisation over the run, 0..1 (NaN: no peak known for the GPU) */
    double peak_tflops;      /**< the MFU denominator used (NaN: none known; pass --peak-tflops) */
    size_t peak_rss;         /**< peak resident memory of the process, bytes */
    size_t n_params;         /**< parameter count */
    uint64_t params_hash;    /**< FNV-1a of the final parameters' bytes */
} train_result_t;

/**
 * @brief The defaults of the train program: a CI-sized model on the Markov source.
 * @return the options
 */
train_opts_t train_opts_default(void);

/**
 * @brief Check options; on failure one line saying what to change (flag names as in --help).
 * @param o the options
 * @param err destination
 * @param errlen size of err
 * @return 0 or -1
 */
int train_opts_validate(const train_opts_t *o, char *err, size_t errlen);

/**
 * @brief Learning rate at a step: linear warmup to lr, then cosine down to min_lr.
 * @param o the options (lr, min_lr, warmup, steps)
 * @param step 0-based step
 * @return the rate
 */
double train_lr_at(const train_opts_t *o, int step);

/**
 * @brief Measure the CPU's fp32 sgemm rate (best of three 768^3 OpenBLAS matmuls on as many threads as OpenMP uses), for MFU.
 * @return TFLOP/s
 */
double train_measure_cpu_peak(void);

/**
 * @brief Run training as configured; print progress to stdout, errors as "train: ..." to stderr.
 * @param o the options
 * @param res filled in (may be NULL)
 * @return 0 on success, -1 after an error message
 */
int train_run(const train_opts_t *o, train_result_t *res);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_TRAINER_H */
