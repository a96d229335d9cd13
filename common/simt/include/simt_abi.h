/** @file
 * SIMT emulator: the interface between the device-side headers and libsimt.
 * Kernels see threadIdx and friends through the two thread-local pointers
 * below, which the scheduler updates on every switch between the fibers
 * (emulated threads) of a block. The functions are the few operations that
 * need the scheduler: barriers, warp collectives, traps, cp.async queues.
 * This is not CUDA API; course code never calls it directly.
 */
#ifndef SIMT_ABI_H
#define SIMT_ABI_H

#include <stddef.h>
#include "vector_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a running emulated thread knows about itself. */
typedef struct simt_thread_info {
    uint3 thread_idx;    /**< threadIdx */
    unsigned int linear; /**< x + y*blockDim.x + z*blockDim.x*blockDim.y */
    unsigned int lane;   /**< linear % 32 */
    unsigned int warp;   /**< linear / 32 */
} simt_thread_info;

/** What the blocks running on one OS thread share: the current block. */
typedef struct simt_block_info {
    uint3 block_idx; /**< blockIdx */
    dim3 block_dim;  /**< blockDim */
    dim3 grid_dim;   /**< gridDim */
    void *dyn_shared; /**< extern __shared__ memory of this block */
} simt_block_info;

/* One OS thread runs one block at a time and all of that block's fibers,
 * so "the current thread" is per OS thread. NULL in host code. */
/** The emulated thread running on this OS thread (threadIdx, its warp); NULL in host code. */
extern __thread simt_thread_info *simt_cur_thread;
/** The block this OS thread is running (blockIdx, blockDim, gridDim, dynamic shared memory). */
extern __thread simt_block_info simt_cur_block;

/**
 * A warp collective: each participating lane deposits one pointer; when the
 * last lane of @p mask arrives, @p fn runs once with all 32 deposits (NULL for
 * lanes that have exited) and then every participant resumes.
 */
typedef void (*simt_warp_fn)(void *const *lane_args, unsigned int present_mask);

/** @brief __syncthreads with CUDA's predicate forms.
 *  @param pred this thread's predicate. @param op 0: plain, 1: count, 2: and, 3: or.
 *  @return the reduced predicate (0 for op 0). */
int simt_syncthreads(int pred, int op);
/** @brief Run a warp collective (see simt_warp_fn). @param mask participating lanes.
 *  @param arg this lane's deposit. @param fn the combine step. */
void simt_warp_collective(unsigned int mask, void *arg, simt_warp_fn fn);
/** @brief Lanes of the calling warp that have not exited. @return the mask. */
unsigned int simt_active_mask(void);
/** @brief Abort the kernel as a device trap does (cudaErrorLaunchFailure). */
void simt_trap(void) __attribute__((noreturn));
/** @brief Abort the kernel after a failed device assert (cudaErrorAssert).
 *  @param expr the expression text. @param file source file. @param line line. @param func function. */
void simt_assert_fail(const char *expr, const char *file, int line, const char *func) __attribute__((noreturn));
/** @brief Queue an asynchronous copy in the calling thread's current cp.async group.
 *  @param dst destination. @param src source. @param size bytes copied. @param src_size bytes read
 *  from src; the rest of size is zero-filled. */
void simt_cp_async(void *dst, const void *src, size_t size, size_t src_size);
/** @brief Close the current cp.async group. */
void simt_cp_async_commit(void);
/** @brief Complete all but the @p n most recent committed groups. @param n groups left pending. */
void simt_cp_async_wait(int n);

#ifdef __cplusplus
}
#endif

#endif /* SIMT_ABI_H */
