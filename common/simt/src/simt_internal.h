/*
 * SIMT emulator: declarations shared by the runtime's own source files only
 * (scheduler and CUDA API). Not installed with the headers.
 */
#ifndef SIMT_INTERNAL_H
#define SIMT_INTERNAL_H

#include "cuda_runtime_api.h"

/** @brief Record a kernel fault; the first one sticks, as on a GPU. @param e the fault. */
void simt_set_fault(cudaError_t e);
/** @brief The sticky fault, cudaSuccess if none. @return the fault. */
cudaError_t simt_get_fault(void);
/** @brief Run every block of a validated launch. @param grid grid. @param block block.
 *  @param shmem dynamic shared bytes. @param body per-thread body. @param ctx its argument.
 *  @return cudaSuccess or the fault the kernel raised. */
cudaError_t simt_run_grid(dim3 grid, dim3 block, size_t shmem, void (*body)(void *), void *ctx);
/** @brief Whether the caller is an emulated device thread. @return nonzero inside a kernel. */
int simt_in_kernel(void);

#endif /* SIMT_INTERNAL_H */
