/** @file
 * The GPU backend of the training loop (lab 05): opens kernels/cuda/model_gpu.h
 * behind train_backend_t. The per-target train programs register it with
 * train_set_gpu_backend(train_gpu_backend_open).
 */
#ifndef COURSE_TRAINER_GPU_H
#define COURSE_TRAINER_GPU_H

#include "trainer.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Open the GPU backend ("cuda" on a GPU, "emu" under the SIMT emulator).
 * @param b filled in
 * @param name "cuda" or "emu"; must match the build the program is
 * @param cfg model shape
 * @param B sequences per forward pass
 * @param T tokens per sequence
 * @param seed parameter-initialisation seed
 * @param err message on failure
 * @param errlen size of err
 * @return 0, or -1 with a message
 */
int train_gpu_backend_open(train_backend_t *b, const char *name, const model_config_t *cfg, int B, int T,
                           uint64_t seed, char *err, size_t errlen);

/**
 * @brief Choose the attention of the GPU backends opened from now on (the --attention flag).
 *
 * "auto" (the default) is flash where the head size allows it (16, 32, 64 or 128), else naive;
 * "flash" fails at open with a message when the head size does not allow it.
 * @param name "auto", "naive" or "flash"
 * @param err message on failure
 * @param errlen size of err
 * @return 0, or -1 for an unknown name
 */
int train_gpu_set_attention(const char *name, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_TRAINER_GPU_H */
