/** @file
 * The --matmul switch of the lab-05 programs (train and bench): which kernel
 * runs the model's matmuls on the GPU backend.
 *
 *   cublas  cuBLAS (the default on a GPU)
 *   tiled   the course's 16 x 16 shared-memory kernel (the default under the emulator, which has no cuBLAS)
 *   wmma    lab 04 step A, matmul_wmma()
 *   mma     lab 04 step B, matmul_mma()
 *   wgmma   lab 04 step C, matmul_wgmma() (an H100/H200 with an sm_90a build, or the emulator)
 *
 * The lab-04 kernels are the student's own from the same source tree
 * (labs/04-tensor-cores, or solutions/04-tensor-cores for the solutions'
 * build), linked into the lab-05 programs; a step that is still a TODO
 * stops the run at its first matmul with "not implemented".
 */
#ifndef COURSE_MATMUL_SWITCH_H
#define COURSE_MATMUL_SWITCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The names train_select_matmul() accepts, for --help. */
#define TRAIN_MATMUL_NAMES "cublas, tiled, wmma, mma or wgmma"

/**
 * @brief Route the GPU backend's matmuls through the named kernel.
 *
 * "auto" (or NULL) picks cuBLAS on a GPU and the tiled kernel under the
 * emulator, which has no cuBLAS. Call after the device is known to exist.
 * @param name one of TRAIN_MATMUL_NAMES, or "auto"
 * @param err one line saying what was wrong and what to pass instead
 * @param errlen size of err
 * @return 0, or -1 with err filled
 */
int train_select_matmul(const char *name, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_MATMUL_SWITCH_H */
