/*
 * SIMT emulator: declarations shared by the runtime's own source files only
 * (scheduler and CUDA API). Not installed with the headers.
 */
#ifndef SIMT_INTERNAL_H
#define SIMT_INTERNAL_H

#include <stdint.h>

#include "cuda_runtime_api.h"

/** Shared memory per block on an sm_90-like device: what a kernel may have
 *  without cudaFuncSetAttribute (also the most static __shared__ ptxas
 *  allows), and the opt-in maximum of static and dynamic together. */
enum { SIMT_SHARED_DEFAULT = 48 * 1024, SIMT_SHARED_OPTIN = 227 * 1024 };

/** @brief The opt-in maximum of shared memory per block, static and dynamic
 *  together: SIMT_SHARED_OPTIN (227 KB, an H100 or H200), or the
 *  SIMT_SHARED_OPTIN_KB environment variable (48 to 227), to act as a GPU
 *  with less: 163 for an A100, 99 for sm_86/89 cards (RTX 30/40, L40S).
 *  @return bytes. */
size_t simt_shared_optin(void);
/** @brief Record a kernel fault; the first one sticks, as on a GPU. @param e the fault. */
void simt_set_fault(cudaError_t e);
/** @brief The sticky fault, cudaSuccess if none. @return the fault. */
cudaError_t simt_get_fault(void);
/** @brief Run every block of a validated launch. @param grid grid. @param block block.
 *  @param shmem dynamic shared bytes. @param shared_limit static plus dynamic bytes the block
 *  may have (48 KB, or 227 KB once the kernel's limit was raised).
 *  @param body per-thread body. @param ctx its argument.
 *  @return cudaSuccess or the fault the kernel raised. */
cudaError_t simt_run_grid(dim3 grid, dim3 block, size_t shmem, size_t shared_limit, void (*body)(void *), void *ctx);
/** @brief Whether the caller is an emulated device thread. @return nonzero inside a kernel. */
int simt_in_kernel(void);
/* Does p point into a live cudaMalloc (or cudaMallocManaged, cudaMallocHost)
 * allocation, i.e. global memory? */
int simt_in_allocation(const void *p);
/* Does p point into device memory that cudaFree freed and that is not
 * handed out again yet (its addresses unreadable)? Always 0 in the
 * sanitizer builds, whose freed memory goes back to the heap. A signal
 * handler passes in_handler = 1: it gets 0 rather than wait for the
 * table's lock. */
int simt_in_freed(const void *p, int in_handler);

/* The static __shared__ variable of the current block that holds p (or
 * ends at p): its index in the order the block declared them, its address
 * and size; -1 for none (simt_runtime.c). */
int simt_static_shared_index(const void *p, const void **base, size_t *bytes);
/* The index-th static __shared__ variable of the current block, its size
 * and name; NULL past the last. */
const void *simt_static_shared_var(unsigned int index, size_t *bytes, const char **name);


/* --- Hopper: what the scheduler (simt_runtime.c) and simt_hopper.c share --- */

/** A queued TMA copy: everything needed to run it later. */
typedef struct simt_tma_op {
    unsigned char map[128]; /**< copy of the CUtensorMap (the kernel's may be gone by then) */
    int coords[5];          /**< the box's first element, innermost first */
    void *dst;              /**< shared-memory destination */
    uint64_t *bar;          /**< the mbarrier its bytes complete on */
    unsigned int bytes;     /**< the whole box, out-of-bounds elements included */
    int phase;              /**< the barrier's phase when the copy was issued */
} simt_tma_op;

/** @brief Copy one box into shared memory (simt_hopper.c). @param op the copy. */
void simt_tma_run(const simt_tma_op *op);
/** @brief Queue a copy on the current block; it lands when its barrier is
 *  waited on, or when the block ends (simt_runtime.c). @param op the copy. */
void simt_tma_enqueue(const simt_tma_op *op);

/** One wgmma.mma_async a thread has issued and not yet waited for. */
typedef struct simt_wgmma_op {
    float *d;                   /**< the issuing thread's accumulators */
    uint64_t desc_a, desc_b;    /**< shared-memory matrix descriptors */
    int n, scale_d, neg_a, neg_b, trans_a, trans_b, bf16;
    int group;                  /**< committed group number, -1 while open */
    unsigned int seq;           /**< the thread's count of wgmma issued, this one included */
    uint32_t lo[2], hi[2];      /**< shared bytes [lo, hi) operands A and B may read */
} simt_wgmma_op;

enum { SIMT_WGMMA_MAX = 64 };

/** A thread's wgmma operations in flight. */
typedef struct simt_wgmma_queue {
    int count;  /**< operations queued */
    int groups; /**< groups committed so far */
    unsigned int issued; /**< wgmma issued so far (the last op's seq) */
    unsigned int done;   /**< seq of the newest wgmma a wait_group has let go */
    int fenced;          /**< a wgmma.fence has run in this block's thread */
    simt_wgmma_op op[SIMT_WGMMA_MAX];
} simt_wgmma_queue;

/** @brief The calling thread's wgmma queue, allocated on first use and emptied
 *  at the start of every block. @return the queue; NULL in host code. */
simt_wgmma_queue *simt_thread_wgmma_queue(void);

/** @brief A wgmma of the current block, not yet let go by wgmma.wait_group,
 *  whose operands may read shared bytes [lo, hi) (simt_runtime.c).
 *  @param lo first byte. @param hi one past the last.
 *  @param thread set to the issuing thread's linear index when one is found.
 *  @return 1 if there is one, 0 if not. */
int simt_wgmma_reads_in_flight(uint32_t lo, uint32_t hi, unsigned int *thread);

/** @brief Whether the calling thread may not yet write shared bytes [lo, hi):
 *  a wgmma reads them that this thread is not ordered after (its warpgroup
 *  had not waited for it when it arrived on an mbarrier this thread then
 *  waited on). See "Stage hand-off" in simt_runtime.c.
 *  @param lo first byte. @param hi one past the last.
 *  @param warpgroup set to the reading warpgroup when there is one.
 *  @return 1 if there is one, 0 if not. */
int simt_wgmma_reads_unordered(uint32_t lo, uint32_t hi, unsigned int *warpgroup);

/** @brief Records shared bytes [lo, hi) as a TMA destination of the current
 *  block and says whether no earlier TMA copy of the block targeted any of
 *  them (simt_runtime.c): a wgmma reading them before then read bytes no copy
 *  had filled. When its table is full it answers 0, so it never claims a
 *  first fill wrongly.
 *  @param lo first byte. @param hi one past the last.
 *  @return 1 for a first fill, 0 otherwise. */
int simt_tma_first_fill(uint32_t lo, uint32_t hi);

/** @brief "file.cu:line" of the call whose return address is site, from the
 * program's debug information through addr2line (binutils): the first line
 * in a .cu file among those that inlined the call, else the call's own;
 * "object+offset" when that cannot be found. For messages only: it starts a
 * process. */
void simt_source_line(uintptr_t site, char *out, size_t n);

/** @brief A kernel's name, demangled ("kernel at 0x..." when the program does
 *  not export it: a static kernel, or a link without -rdynamic).
 *  @param func the kernel. @param out, n where to write it. */
void simt_kernel_name(const void *func, char *out, size_t n);

/** @brief A plain load of n bytes at p, from the kernel's code at site
 *  (simt_memtrace.c's hooks): fail the launch, naming both lines, if a
 *  cp.async of the block has not landed them yet; nothing (one test) while
 *  no copy is in flight. @param site the load's return address.
 *  @param p its address. @param n its size. */
void simt_check_load_landed(uintptr_t site, const void *p, size_t n);

/* --- memory-access tracing (simt_memtrace.c), called by the scheduler --- */

/** @brief A launch begins: trace it if simt_memtrace_start or SIMT_MEMTRACE
 *  asked for it. @param func the kernel, for the report's name. */
void simt_memtrace_launch_begin(const void *func);
/** @brief The launch has ended: add its counts up, print its line under
 *  SIMT_MEMTRACE. @param grid its grid. @param block its block. */
void simt_memtrace_launch_end(dim3 grid, dim3 block);
/** @brief The calling OS thread starts a block. @param nthreads its threads. */
void simt_memtrace_block_begin(unsigned int nthreads);
/** @brief The block has ended: count its warps' requests.
 *  @param aborted nonzero if it faulted (its counts are dropped). */
void simt_memtrace_block_end(int aborted);
/** @brief The calling OS thread has run its last block of the launch: free
 *  its records (worker threads are started for each launch). */
void simt_memtrace_worker_end(void);
/** @brief A static __shared__ variable of the current block.
 *  @param var its address. @param bytes its size. */
void simt_memtrace_shared_var(const void *var, size_t bytes);

#endif /* SIMT_INTERNAL_H */
