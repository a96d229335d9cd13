/** @file
 * Checkpoints: everything a training run needs to continue bit-identically.
 *
 * Binary layout (little-endian, as written by x86-64 and arm64 hosts):
 *
 *     magic "CRSCKPT\0" | u32 version | u32 header bytes | ckpt_meta_t fields
 *     | params[n] | adam_m[n] | adam_v[n] | u64 FNV-1a of every byte before it
 *
 * The ckpt_meta_t fields are written one by one in the order they are
 * declared (no padding): the ints as i32, the counts as u64, the model's
 * float constants and the hyperparameters as f64, each name as its whole
 * fixed-size array. That makes the header (magic to the last field) 508 bytes
 * in version 2, which ends with device[128], and 636 in version 3, which
 * appends library[128].
 *
 * The metadata holds the model configuration, the step, the seeds, the data
 * source's description, the training hyperparameters and how the run
 * computed: backend, precision, attention and matmul kernel, and the device
 * and math library it ran on. Batches are pure functions of (seed, step,
 * rank), so the step and the seeds are the whole random state of the data;
 * the way of computing is recorded because a run continues bit-identically
 * only with the same arithmetic (a cpu fp32 checkpoint resumed in bf16 on the
 * GPU backend would go on as another run). Loading checks the magic, the
 * version, the size, the checksum and then every field against what the
 * caller expects, and says exactly which one differs and, for the way of
 * computing, which flag to pass to match. The device and the library are not
 * compared: no flag chooses them, and the same kernels on another GPU or
 * another cuBLAS or OpenBLAS version are the same run to within rounding, so
 * the training program warns instead (trainer.c).
 *
 * Version history. 2 added the way of computing and the device; 3 added the
 * math library (library, the last field of the metadata) and sums with
 * FNV-1a's offset basis (version 2 used 1469598103934665603, a digit short;
 * its files are checked with it). A version-2 file
 * still loads, with library empty: it does not say which library computed
 * it. A version-1 file does not say how it was computed at all, so it is
 * refused (with a message saying so) rather than guessed at: resume it with
 * the build that wrote it, or train again.
 *
 * Not here (yet): sharded checkpoints (one file per rank, ZeRO, lab 10).
 */
#ifndef COURSE_CHECKPOINT_H
#define COURSE_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Format version written by checkpoint_save() (3: version 2's fields and the math library). */
#define CKPT_VERSION 3

/** The oldest format version checkpoint_load() reads (2: the first that records how the run computed). */
#define CKPT_VERSION_OLDEST 2

/** Room for each of the names that say how a run computed, with the terminating 0. */
#define CKPT_NAME_LEN 16

/** Room for the device's name (as the backend reports it), with the terminating 0. */
#define CKPT_DEVICE_LEN 128

/** Room for the math library's name, version and build (as the backend reports it), with the terminating 0. */
#define CKPT_LIBRARY_LEN 128

/** Training state and hyperparameters stored beside the tensors. */
typedef struct {
    model_config_t cfg;    /**< the model's shape */
    uint64_t n_params;     /**< floats in each of params, m and v */
    uint64_t step;         /**< optimizer steps completed */
    uint64_t seed;         /**< parameter-init and data-sampling seed */
    char data_desc[160];   /**< the data source (data_source_t.desc) */
    int batch;             /**< global batch in sequences */
    int seq_len;           /**< training sequence length */
    int accum;             /**< gradient-accumulation micro-steps */
    int total_steps;       /**< planned steps (sets the cosine schedule) */
    int warmup;            /**< warmup steps */
    double lr;             /**< peak learning rate */
    double min_lr;         /**< final learning rate of the cosine */
    double weight_decay;   /**< AdamW decoupled weight decay */
    double beta1;          /**< AdamW beta1 */
    double beta2;          /**< AdamW beta2 */
    double adam_eps;       /**< AdamW epsilon */
    double clip;           /**< global gradient-norm clip (0: off) */
    char backend[CKPT_NAME_LEN];   /**< --backend: "cpu", "cuda" or "emu" */
    char precision[CKPT_NAME_LEN]; /**< "fp32" (cpu) or "bf16 mixed" (GPU backend: bf16 compute, fp32 master weights) */
    char attention[CKPT_NAME_LEN]; /**< --attention as resolved: "naive" or "flash" ("naive" on cpu: its own fp32 one) */
    char matmul[CKPT_NAME_LEN];    /**< --matmul as resolved: "cublas", "tiled", "wmma", "mma", "wgmma"; "openblas" on cpu */
    char device[CKPT_DEVICE_LEN];  /**< where it ran (the GPU's or CPU's name): not compared on load, since
                                        the same kernels on another device are the same run to within
                                        rounding; the training program warns that the bits may differ */
    char library[CKPT_LIBRARY_LEN]; /**< the math library behind the matmuls as loaded at run time, e.g.
                                         "cuBLAS 12.8.4" or OpenBLAS's version and core (version 3 on;
                                         empty from a version-2 file, which does not record it): not compared
                                         on load, like device; another version may pick other kernels, and
                                         the training program warns that the bits may differ */
} ckpt_meta_t;

/**
 * @brief Write a checkpoint atomically (to path.tmp, then renamed over path).
 *
 * On any failure path.tmp is removed and path is left as it was. A path with
 * no room for ".tmp" in a path's 4095 characters is refused.
 * @param path file to write
 * @param meta the metadata (n_params must be the length of the three arrays)
 * @param params parameters
 * @param m AdamW first moments
 * @param v AdamW second moments
 * @param err message on failure (may be NULL)
 * @param errlen size of err
 * @return 0, or -1 with a message naming the file and the system error
 */
int checkpoint_save(const char *path, const ckpt_meta_t *meta, const float *params, const float *m,
                    const float *v, char *err, size_t errlen);

/**
 * @brief Check, before a long run, that checkpoint_save() will be able to write path.
 *
 * Creates and removes path.tmp (the file a save writes before renaming it
 * over path), so a missing or read-only folder is found at the start rather
 * than after the last step. path itself is not touched.
 * @param path the checkpoint file a run will write
 * @param err message on failure, naming the path, the system error and what to do
 * @param errlen size of err
 * @return 0, or -1 if path is a directory or path.tmp cannot be created or removed (or is too long a name)
 */
int checkpoint_check_writable(const char *path, char *err, size_t errlen);

/**
 * @brief Read only a checkpoint's metadata, after checking magic, version, size and checksum.
 *
 * Like checkpoint_load(), it also refuses a file with a number no run writes (a NaN or
 * infinite hyperparameter, a step past the run's --steps). A version-2 file is read with
 * meta->library empty (it does not record the library).
 * @param path the file
 * @param meta filled in
 * @param err message on failure, e.g. "ckpt.bin: checksum mismatch: the file is corrupt; ..." (a file
 *            cut short or grown is refused earlier, by its size), or for a version-1 file, that it
 *            must be resumed by the build that wrote it
 * @param errlen size of err
 * @return 0 or -1
 */
int checkpoint_read_meta(const char *path, ckpt_meta_t *meta, char *err, size_t errlen);

/**
 * @brief Compare two metadata records field by field, ignoring the step, the device and the library.
 * @param want what this run is configured for
 * @param got what the checkpoint holds
 * @param err message naming every differing field with both values, e.g.
 *            "--d-model: checkpoint 64, this run 128", and for the way of computing
 *            also the flag that matches the checkpoint, e.g.
 *            "--backend: checkpoint cpu, this run emu (pass --backend cpu)"
 * @param errlen size of err
 * @return 0 if they agree, -1 otherwise
 */
int checkpoint_compare_meta(const ckpt_meta_t *want, const ckpt_meta_t *got, char *err,
                            size_t errlen);

/**
 * @brief Load a checkpoint that must match `want` (every field but the step, the device and the library).
 *
 * path must be a regular file: a directory, FIFO or device is refused from
 * stat() without being opened (a FIFO would block the open). Verifies magic, version, size and
 * checksum; then that no number is one a run never writes (a NaN or infinite hyperparameter, a
 * step past the run's --steps); then that the metadata matches want. Only then are the arrays
 * overwritten, so a failed load leaves them untouched.
 * @param path the file
 * @param want the expected metadata
 * @param got filled with the checkpoint's metadata (its step says where to continue; library empty
 *            from a version-2 file)
 * @param params want->n_params floats
 * @param m want->n_params floats
 * @param v want->n_params floats
 * @param err message on failure
 * @param errlen size of err
 * @return 0 or -1
 */
int checkpoint_load(const char *path, const ckpt_meta_t *want, ckpt_meta_t *got, float *params,
                    float *m, float *v, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_CHECKPOINT_H */
