/*
 * SIMT emulator: cuda_pipeline.h, CUDA's pipeline primitives, the C++
 * spelling of sm_80's asynchronous copy (cp.async) from global to shared
 * memory:
 *   __pipeline_memcpy_async(dst, src, size, zfill)  one cp.async of 4, 8 or
 *                                                   16 bytes, the last zfill
 *                                                   of them zero-filled
 *   __pipeline_commit()                             cp.async.commit_group
 *   __pipeline_wait_prior(n)                        cp.async.wait_group n
 * and nvcuda::experimental::pipeline, whose memcpy_async copies one object
 * of 4, 8 or 16 bytes. They run on the emulator's model of cp.async, the
 * one the course's cp_async_16 and inline PTX use: a misaligned address or
 * a destination outside shared memory fails the launch, and until its wait
 * the destination holds NaN bytes, so a read before the wait shows.
 * Not here: __pipeline_arrive_on and pipeline::arrive_on, whose barriers
 * (cuda_awbarrier.h) are not emulated; a call stops the build.
 */
#ifndef SIMT_CUDA_PIPELINE_H
#define SIMT_CUDA_PIPELINE_H

#include "cuda_runtime.h"

/** @brief One asynchronous copy from global to shared memory (cp.async).
 *  @param dst_shared destination in shared memory, aligned to size_and_align.
 *  @param src_global source in global memory, aligned the same.
 *  @param size_and_align 4, 8 or 16 bytes.
 *  @param zfill how many of the last bytes are zero-filled instead of read. */
__attribute__((always_inline)) static inline void __pipeline_memcpy_async(void *__restrict__ dst_shared,
                                                                         const void *__restrict__ src_global,
                                                                         size_t size_and_align, size_t zfill = 0)
{
    if (size_and_align != 4 && size_and_align != 8 && size_and_align != 16)
        simt_fail("__pipeline_memcpy_async of %zu bytes: the copy is one cp.async, of 4, 8 or 16 bytes",
                  size_and_align);
    if (zfill > size_and_align)
        simt_fail("__pipeline_memcpy_async of %zu bytes with zfill %zu: at most the %zu bytes it copies can be "
                  "zero-filled",
                  size_and_align, zfill, size_and_align);
    simt_cp_async_issue(dst_shared, src_global, size_and_align, size_and_align - zfill);
}

/** @brief Close this thread's current batch of copies (cp.async.commit_group). */
static inline void __pipeline_commit(void) { simt_cp_async_commit(); }

/** @brief Wait until at most @p prior committed batches of this thread are in
 *  flight (cp.async.wait_group; more than 8 counts as 8, as CUDA's does). */
static inline void __pipeline_wait_prior(size_t prior) { simt_cp_async_wait(prior > 8 ? 8 : (int)prior); }

/* A template whose instantiation stops the build with the message: a call
 * of what is not emulated compiles only where it is made. */
template <class T> struct simt_pipeline_barrier_not_emulated {
    static_assert(sizeof(T) == 0, "__pipeline_arrive_on and pipeline::arrive_on are not emulated: their barriers "
                                  "(cuda_awbarrier.h) are not; wait with __pipeline_wait_prior and __syncthreads, or "
                                  "use common/hopper.cuh's mbarriers");
};
template <class T> static inline void __pipeline_arrive_on(T *)
{
    (void)sizeof(simt_pipeline_barrier_not_emulated<T>);
}

namespace nvcuda {
namespace experimental {

/** @brief The pointer as a pointer to an array of N elements. */
template <size_t N, typename T> static inline T (*segment(T *ptr))[N] { return (T(*)[N])ptr; }

/** @brief A thread's sequence of batches of asynchronous copies. */
class pipeline {
  public:
    pipeline() : current_batch(0) {}
    pipeline(const pipeline &) = delete;
    pipeline(pipeline &&) = delete;
    pipeline &operator=(const pipeline &) = delete;
    pipeline &operator=(pipeline &&) = delete;
    /** @brief Close the current batch. @return its number. */
    size_t commit()
    {
        __pipeline_commit();
        return current_batch++;
    }
    /** @brief Close the current batch and wait for every one. */
    void commit_and_wait()
    {
        (void)commit();
        __pipeline_wait_prior(0);
    }
    /** @brief Wait for batch @p batch, as CUDA's pipeline counts it. */
    void wait(size_t batch) { __pipeline_wait_prior(current_batch > batch ? current_batch - batch : 0); }
    /** @brief Wait until at most N batches are in flight. */
    template <unsigned N> void wait_prior() { __pipeline_wait_prior(N); }
    template <class B> void arrive_on(B &) { (void)sizeof(simt_pipeline_barrier_not_emulated<B>); }

  private:
    size_t current_batch;
};

/** @brief Copy one object asynchronously where dst is in shared memory
 *  (at once otherwise, as CUDA's does). Here T is 4, 8 or 16 bytes, aligned
 *  to its size: one cp.async. */
template <class T> static inline void memcpy_async(T &dst, const T &src, pipeline &pipe)
{
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
                  "memcpy_async of an object that is not 4, 8 or 16 bytes: the emulator copies one cp.async's worth; "
                  "copy a larger object in 16-byte pieces with __pipeline_memcpy_async");
    static_assert(alignof(T) >= sizeof(T), "memcpy_async of an object aligned to less than its size: CUDA's then "
                                           "splits the copy, which the emulator does not; align the type to its "
                                           "size (alignas(16)) or use float4, int2, ...");
    (void)pipe;
    if (simt_in_shared(&dst) && !simt_in_shared(&src)) __pipeline_memcpy_async(&dst, &src, sizeof(T));
    else memcpy(&dst, &src, sizeof(T));
}

} // namespace experimental
} // namespace nvcuda

#endif
