/*
 * SIMT emulator: the part of cooperative groups (<cooperative_groups.h>)
 * that a block's kernels use, built on the warp intrinsics of
 * cuda_runtime.h, so that each call waits, votes and shuffles as those do.
 *
 * Here: this_thread_block() and thread_block (sync, thread_rank,
 * num_threads/size, thread_index, group_index, group_dim/dim_threads);
 * tiled_partition<N>(parent) for N = 1, 2, 4, 8, 16 or 32, and
 * thread_block_tile<N> (sync, thread_rank, num_threads/size,
 * meta_group_rank, meta_group_size, shfl, shfl_up, shfl_down, shfl_xor,
 * any, all, ballot); thread_group, to which both convert (sync,
 * thread_rank, size); cg::sync(g). cg::reduce and its
 * operators are in <cooperative_groups/reduce.h>, as in CUDA.
 *
 * As on a GPU, a tile is N consecutive threads of the block in linear order
 * (x fastest), so it lies within one warp, and its calls take part only
 * those N lanes (the mask CUDA passes the *_sync intrinsics). A tile's
 * thread_rank is the block's rank mod N, its meta_group_rank the rank / N.
 * ballot gives the tile's bits, bit i for its thread i.
 *
 * Not here: grid groups (this_grid() needs a cooperative launch),
 * coalesced_threads(), labeled and binary partitions, tiled_partition with
 * a size known only at run time, tiles larger than a warp, memcpy_async
 * and scans. Code that uses one does not compile here: the name is not
 * declared. Write it with the intrinsics instead (__shfl_xor_sync,
 * __ballot_sync, __syncthreads).
 */
#ifndef SIMT_COOPERATIVE_GROUPS_H
#define SIMT_COOPERATIVE_GROUPS_H

#include <string.h>

#include "cuda_runtime.h"

namespace cooperative_groups {

namespace details {
/* A shuffle of any trivially copyable type: eight bytes at a time, as the
 * hardware moves 32 bits at a time (cg shuffles any such type). */
template <class T> static inline T shfl(unsigned int mask, const T &var, int mode, int arg, int width)
{
    unsigned char in[sizeof(T)], out[sizeof(T)];
    memcpy(in, &var, sizeof(T));
    for (size_t at = 0; at < sizeof(T); at += 8) {
        unsigned long long w = 0;
        size_t n = sizeof(T) - at < 8 ? sizeof(T) - at : 8;
        memcpy(&w, in + at, n);
        w = ::simt::shfl(mask, w, mode, arg, width);
        memcpy(out + at, &w, n);
    }
    T r;
    memcpy((void *)&r, out, sizeof(T));
    return r;
}
/* The lanes of the calling thread's tile of n threads in its warp. */
static inline unsigned int tile_mask(unsigned int n)
{
    return n == 32 ? 0xffffffffu : ((1u << n) - 1) << (simt_cur_thread->lane & ~(n - 1));
}
} // namespace details

/** @brief The threads of the calling block. */
class thread_block {
  public:
    /** @brief Waits for every thread of the block (__syncthreads; the
     *  default arguments carry the caller's line to the barrier check). */
    static void sync(const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE())
    { simt_syncthreads_at(0, 0, simt_file, simt_line); }
    /** @brief This thread's linear index in the block (x fastest). */
    static unsigned int thread_rank() { return simt_cur_thread->linear; }
    /** @brief Threads in the block. */
    static unsigned int num_threads() { return blockDim.x * blockDim.y * blockDim.z; }
    /** @brief Threads in the block (the older name). */
    static unsigned int size() { return num_threads(); }
    /** @brief threadIdx. */
    static dim3 thread_index() { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    /** @brief blockIdx. */
    static dim3 group_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    /** @brief blockDim. */
    static dim3 group_dim() { return blockDim; }
    /** @brief blockDim (the newer name). */
    static dim3 dim_threads() { return blockDim; }
};

/** @brief The calling block as a group. */
static inline thread_block this_thread_block() { return thread_block(); }

/** @brief N consecutive threads of the block, within one warp. */
template <unsigned int N, class Parent = void> class thread_block_tile;

template <unsigned int N> class thread_block_tile<N, void> {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0,
                  "the emulator has tiles of 1, 2, 4, 8, 16 or 32 threads (larger ones are not emulated)");

  protected:
    static unsigned int mask() { return details::tile_mask(N); }

  public:
    /** @brief Waits for the tile's threads (__syncwarp with its mask). */
    void sync() const { __syncwarp(mask()); }
    /** @brief This thread's index in the tile. */
    unsigned int thread_rank() const { return simt_cur_thread->linear % N; }
    /** @brief N. */
    static constexpr unsigned int num_threads() { return N; }
    /** @brief N (the older name). */
    static constexpr unsigned long long size() { return N; }
    /** @brief Which tile of the block this is. */
    unsigned int meta_group_rank() const { return simt_cur_thread->linear / N; }
    /** @brief How many tiles the block was split into. */
    unsigned int meta_group_size() const { return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N; }
    /** @brief var of the tile's thread src (taken mod N). */
    template <class T> T shfl(const T &var, int src) const { return details::shfl(mask(), var, 0, src, N); }
    /** @brief var of the thread delta below (its own below rank delta). */
    template <class T> T shfl_up(const T &var, unsigned int delta) const
    { return details::shfl(mask(), var, 1, (int)delta, N); }
    /** @brief var of the thread delta above (its own past the tile's end). */
    template <class T> T shfl_down(const T &var, unsigned int delta) const
    { return details::shfl(mask(), var, 2, (int)delta, N); }
    /** @brief var of the thread whose rank is this one's xor lane_mask. */
    template <class T> T shfl_xor(const T &var, unsigned int lane_mask) const
    { return details::shfl(mask(), var, 3, (int)lane_mask, N); }
    /** @brief Whether pred holds on some thread of the tile. */
    int any(int pred) const { return __any_sync(mask(), pred); }
    /** @brief Whether pred holds on every thread of the tile. */
    int all(int pred) const { return __all_sync(mask(), pred); }
    /** @brief The tile's threads where pred holds, bit i for thread rank i. */
    unsigned int ballot(int pred) const
    {
        unsigned int m = mask(), b = __ballot_sync(m, pred);
        return N == 32 ? b : (b & m) >> (simt_cur_thread->lane & ~(N - 1));
    }
};

/* What tiled_partition<N>(parent) returns; it converts to the plain tile. */
template <unsigned int N, class Parent> class thread_block_tile : public thread_block_tile<N, void> {};

/** @brief Splits a block (or a larger tile) into tiles of N threads. */
template <unsigned int N> static inline thread_block_tile<N, thread_block> tiled_partition(const thread_block &)
{ return thread_block_tile<N, thread_block>(); }
template <unsigned int N, unsigned int M, class P>
static inline thread_block_tile<N, thread_block_tile<M, P>> tiled_partition(const thread_block_tile<M, P> &)
{
    static_assert(N <= M, "a tile splits into tiles no larger than itself");
    return thread_block_tile<N, thread_block_tile<M, P>>();
}

/** @brief A block or a tile, its size known at run time. */
class thread_group {
    unsigned int tile_; /* 0: the whole block */

  public:
    /** @brief The block as a group. */
    thread_group(const thread_block &) : tile_(0) {}
    /** @brief A tile as a group. */
    template <unsigned int N, class P> thread_group(const thread_block_tile<N, P> &) : tile_(N) {}
    /** @brief Waits for the group's threads (__syncthreads or __syncwarp). */
    void sync(const char *simt_file = __builtin_FILE(), int simt_line = __builtin_LINE()) const
    {
        if (tile_ == 0) {
            simt_syncthreads_at(0, 0, simt_file, simt_line);
            return;
        }
        __syncwarp(details::tile_mask(tile_));
    }
    /** @brief This thread's index in the group. */
    unsigned long long thread_rank() const
    { return tile_ ? simt_cur_thread->linear % tile_ : simt_cur_thread->linear; }
    /** @brief Threads in the group. (CUDA 12 declares num_threads() here
     *  too, but never defines it: nvcc refuses a call, and so does this.) */
    unsigned long long size() const { return tile_ ? tile_ : blockDim.x * blockDim.y * blockDim.z; }
};

/** @brief g.sync(). */
template <class G> static inline void sync(const G &g) { g.sync(); }

} // namespace cooperative_groups

#endif
