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
#include <stdint.h>
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
    size_t dyn_shared_size; /**< its size in bytes, as given at launch */
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

/**
 * A collective of a group of consecutive threads (a Hopper warpgroup is 128):
 * as simt_warp_fn, with @p n deposits, NULL for threads that have exited.
 */
typedef void (*simt_group_fn)(void *const *thread_args, unsigned int n);

/** @brief __syncthreads with CUDA's predicate forms.
 *  @param pred this thread's predicate. @param op 0: plain, 1: count, 2: and, 3: or.
 *  @return the reduced predicate (0 for op 0). */
int simt_syncthreads(int pred, int op);
/** @brief simt_syncthreads from a known source line: threads that meet at
 *  barriers of different lines stop the launch (see simt_runtime.c).
 *  @param pred, op as simt_syncthreads. @param file, line the call's place
 *  (file NULL: unknown, not checked). @return as simt_syncthreads. */
int simt_syncthreads_at(int pred, int op, const char *file, int line);
/** @brief Run a warp collective (see simt_warp_fn). @param mask participating lanes.
 *  @param arg this lane's deposit. @param fn the combine step. */
void simt_warp_collective(unsigned int mask, void *arg, simt_warp_fn fn);
/** @brief A warp-wide `.aligned` instruction (mma.sync, ldmatrix, wmma): a
 *  collective of the whole warp in which all 32 lanes must arrive at the same
 *  instruction. A warp of fewer than 32 threads, a lane that has exited, or
 *  lanes at different instructions fail the launch (PTX leaves them undefined).
 *  @param what the instruction, e.g. "ldmatrix.x4" (lanes must agree on it).
 *  @param arg this lane's deposit. @param fn the combine step. */
void simt_warp_aligned(const char *what, void *arg, simt_warp_fn fn);
/** @brief simt_warp_aligned from a known source line: its failure messages
 *  and deadlock reports name @p file and @p line instead of the line of the
 *  call's return address, which lies in the header when the compiler keeps
 *  a header's helper out of line (mma.h's wmma functions pass the kernel's
 *  line this way, as __syncthreads does).
 *  @param what, arg, fn as simt_warp_aligned. @param file, line the call's
 *  place in the kernel (file NULL: the return address's line, as
 *  simt_warp_aligned). */
void simt_warp_aligned_at(const char *what, void *arg, simt_warp_fn fn, const char *file, int line);
/** @brief Run a collective of the @p size consecutive threads (linear index
 *  rounded down to a multiple of size) that hold the caller; it completes
 *  when every one of them that has not exited is waiting in a collective of
 *  the same size. @param size 32, 64 or 128. @param arg this thread's deposit.
 *  @param fn the combine step. */
void simt_group_collective(unsigned int size, void *arg, simt_group_fn fn);
/** @brief Whether p lies in the calling block's shared memory: a static
 *  __shared__ variable it has declared, or its extern __shared__ memory.
 *  A float atomicAdd anywhere else (cudaMalloc'd memory, a __device__
 *  variable: global memory on a GPU) flushes subnormal inputs and results
 *  to zero, as the GPU's atom.add.f32 on global memory does; on shared
 *  memory it keeps them. @param p an address. @return 1 or 0. */
int simt_in_shared(const void *p);
/** @brief Lanes of the calling warp that have not exited. @return the mask. */
unsigned int simt_active_mask(void);
/** @brief Abort the kernel as a device trap does (cudaErrorLaunchFailure). */
void simt_trap(void) __attribute__((noreturn));
/** @brief Fail the running kernel with a message (printed with the block and
 *  thread, as a trap is) and cudaErrorLaunchFailure; in host code, print and
 *  abort the process. @param fmt printf format. */
void simt_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/** @brief With on = 1, the next kernel launch is refused with
 *  cudaErrorLaunchOutOfResources (not sticky), as a GPU refuses a launch it
 *  cannot fit; 0 cancels. For checks of a caller's launch-error path.
 *  @param on 1 to refuse the next launch, 0 to cancel. */
void simt_refuse_next_launch(int on);
/** @brief With on = 1, host code may read and write cudaMalloc memory
 *  directly, as if it were managed memory; 0 fences it again (the default:
 *  the host's access is a segmentation fault, as on a GPU). For tests of a
 *  harness whose stand-in kernels are host functions; no course code on a
 *  GPU may rely on it. @param on 1 to allow, 0 to fence. */
void simt_host_access(int on);
/** @brief Abort the kernel after a failed device assert (cudaErrorAssert).
 *  @param expr the expression text. @param file source file. @param line line. @param func function. */
void simt_assert_fail(const char *expr, const char *file, int line, const char *func) __attribute__((noreturn));
/** @brief Where a static __shared__ variable is declared (simtcc's rewrite
 *  puts the call there): the block's first thread to arrive fills it with
 *  0xff bytes, so each block starts from NaN, not from zeros or the last
 *  block's values, and adds its size to the block's static shared memory,
 *  which fails the launch past a GPU's limits (48 KB static, 227 KB with the
 *  dynamic size). @param var the variable (volatile too). @param bytes its size.
 *  @param name its name. @param file where it is declared. @param line its line. */
void simt_shared_first_use(const volatile void *var, size_t bytes, const char *name, const char *file, int line);
/** @brief At the start of a kernel declared with __launch_bounds__ (simtcc's
 *  rewrite puts the call there): refuse the launch with cudaErrorInvalidValue
 *  (not sticky), as a GPU does, when the block has more threads than the
 *  bound. @param max_threads the bound's first argument.
 *  @param file the kernel's file. @param line the line of its body's brace. */
void simt_check_launch_bounds(unsigned long long max_threads, const char *file, int line);
/** @brief Fail the kernel with cudaErrorMisalignedAddress, as a GPU does, when
 *  @p addr is not a multiple of @p align; nothing otherwise, and nothing in
 *  host code. @param what the instruction, for the message ("cp.async of 16 bytes").
 *  @param operand which address ("source"). @param addr the address. @param align its required alignment. */
void simt_check_aligned(const char *what, const char *operand, const void *addr, size_t align);
/** @brief Fail the kernel (cudaErrorIllegalAddress) when the @p n bytes at
 *  @p p, which the instruction reads or writes as shared memory, are not all
 *  in the block's shared memory (its dynamic shared memory or a static
 *  __shared__ variable): a pointer into a cudaMalloc allocation (global
 *  memory, whose address means nothing in the shared window), or an index
 *  past a tile. The message names the kernel's line. Also fails it when a
 *  cp.async of any thread of the block has not yet landed its copy into
 *  one of those bytes (the message names both lines and speaks of a read:
 *  the course calls this for ldmatrix rows). Nothing in host code.
 *  @param what the instruction. @param operand which address. @param p the
 *  address. @param n the bytes accessed there. */
void simt_check_shared(const char *what, const char *operand, const void *p, size_t n);
/** @brief Fails the launch when a cp.async of any thread of the block has
 *  not yet landed its copy into one of the @p n bytes at @p p, which a
 *  library call (wmma::load_matrix_sync) is about to read; the message names
 *  both lines, as simt_check_shared's does for ldmatrix. Costs one test
 *  while no copy is in flight. Nothing in host code.
 *  @param what the call. @param p the address read. @param n its bytes.
 *  @param file, line the call's place in the kernel (file NULL: the line of
 *  the return address). */
void simt_check_landed_at(const char *what, const void *p, size_t n, const char *file, int line);
/** @brief What CUDA asks of a wmma::load_matrix_sync or store_matrix_sync
 *  pointer: 256-bit (32-byte) alignment, else cudaErrorMisalignedAddress; and
 *  a leading dimension that is a multiple of 16 bytes, else the launch fails
 *  (undefined results on a GPU). Nothing in host code. A failure names @p file
 *  and @p line, the kernel's call (see simt_warp_aligned_at).
 *  @param what the call, for the message. @param p the matrix pointer.
 *  @param ldm its leading dimension in elements. @param elem_size bytes per element.
 *  @param file, line the call's place in the kernel (file NULL: the line of
 *  the return address). */
void simt_check_wmma_at(const char *what, const void *p, unsigned ldm, size_t elem_size, const char *file, int line);
/** @brief Record one access for the memory-access tracer (simt_memtrace.h)
 *  that the emulator performs for a kernel instead of the kernel's own code
 *  (cp.async, ldmatrix), so gcc's instrumentation does not see it. Headers
 *  call it only in `simtcc --memtrace` builds; elsewhere, and outside a
 *  traced launch, it does nothing. The code site is the call's return
 *  address, as for the instrumented loads and stores: each inlined copy of
 *  the caller is a site of its own.
 *  @param addr the address. @param size its bytes. @param store 1 for a store.
 *  @param phase 0, or which part of the warp this lane's access is served
 *  with, for an instruction the hardware serves in parts (ldmatrix: one 8 x 8
 *  matrix at a time): each part is a request of its own. */
void simt_memtrace_note(const void *addr, size_t size, int store, unsigned int phase);
/** @brief Queue an asynchronous copy in the calling thread's current cp.async group.
 *  @param dst destination. @param src source. @param size bytes copied. @param src_size bytes read
 *  from src; the rest of size is zero-filled. */
void simt_cp_async(void *dst, const void *src, size_t size, size_t src_size);
/** @brief Close the current cp.async group. */
void simt_cp_async_commit(void);
/** @brief Complete all but the @p n most recent committed groups. @param n groups left pending. */
void simt_cp_async_wait(int n);

/* --- Hopper (sm_90a) features: mbarrier, TMA, wgmma (src/simt_hopper.c) ---- */

/** @brief Address of @p p in the block's shared-memory window (what
 *  __cvta_generic_to_shared gives): its offset in the extern __shared__
 *  memory, or, for a static __shared__ variable, an address from
 *  (i + 1) << 24 for the block's i-th. Traps for any other pointer.
 *  @param p a pointer into the block's shared memory, or one past the end
 *  of a tile (the instructions that use an address check the bytes they
 *  touch). @return the 32-bit shared address. */
unsigned int simt_shared_addr(const void *p);
/** @brief simt_shared_addr for the Hopper model (common/hopper.cuh), which
 *  keeps TMA destinations and wgmma operands in dynamic shared memory only (a wgmma
 *  descriptor has 18 bits of address): traps for any other pointer.
 *  @param p a pointer into the extern __shared__ memory, or one past its end.
 *  @return its offset there. */
unsigned int simt_dynamic_shared_addr(const void *p);
/** @brief The pointer a shared-window address stands for (the inverse of
 *  simt_shared_addr), for inline PTX's .shared operands. Traps for a value
 *  that is no such address (a generic pointer, say). @param addr the
 *  operand's value. @param who the instruction, for the message.
 *  @param file the asm's source file. @param line its line. @return the pointer; its bytes are for the caller to check. */
void *simt_shared_ptr(unsigned long long addr, const char *who, const char *file, int line);
/** @brief mbarrier.init: a fresh barrier in phase 0 that completes a phase
 *  after @p count arrivals. @param bar the 64-bit barrier. @param count 1 .. 2^20 - 1. */
void simt_mbar_init(uint64_t *bar, unsigned int count);
/** @brief mbarrier.arrive, with .expect_tx when @p tx_bytes > 0: announce
 *  tx_bytes of asynchronous traffic, then arrive once. More arrivals than the
 *  count in one phase trap. @param bar the barrier. @param tx_bytes bytes, or 0. */
void simt_mbar_arrive(uint64_t *bar, unsigned int tx_bytes);
/** @brief mbarrier.test_wait.parity: whether the phase of this parity has
 *  completed (the barrier's phase bit differs from it). TMA copies that
 *  complete on this barrier land first. @param bar the barrier. @param parity 0 or 1.
 *  @return 1 if it has completed. */
int simt_mbar_test_parity(uint64_t *bar, int parity);
/** @brief mbarrier.try_wait.parity in a loop: block until the phase of this
 *  parity has completed. @param bar the barrier. @param parity 0 or 1. */
void simt_mbar_wait_parity(uint64_t *bar, int parity);
/** @brief simt_mbar_wait_parity from a known place: a deadlock report names
 *  it. @param bar the barrier. @param parity 0 or 1.
 *  @param file the waiting source file. @param line its line. */
void simt_mbar_wait_parity_at(uint64_t *bar, int parity, const char *file, int line);
/** @brief cp.async.bulk.tensor (tile mode, global to shared): queue a copy
 *  of the box at @p coords of the tensor map into shared memory; it lands,
 *  and completes its bytes on @p bar, when a thread waits on bar.
 *  @param dst shared-memory destination. @param tensor_map a CUtensorMap from
 *  cuTensorMapEncodeTiled. @param coords the box's first element, innermost
 *  first. @param ncoords the map's rank. @param bar the mbarrier. */
void simt_tma_load(void *dst, const void *tensor_map, const int *coords, int ncoords, uint64_t *bar);
/** @brief wgmma.mma_async m64nNk16 with both operands in shared memory:
 *  queue D = A B (+ D if @p scale_d) for the calling thread's warpgroup.
 *  @param d this thread's N / 2 accumulator registers. @param n N (8 .. 256,
 *  a multiple of 8). @param desc_a A's matrix descriptor. @param desc_b B's.
 *  @param scale_d 0: ignore the old D. @param neg_a -1 negates A (imm-scale-a).
 *  @param neg_b -1 negates B. @param trans_a 1: A is M-major. @param trans_b 1:
 *  B is N-major. @param bf16 1: bf16 inputs, 0: fp16. */
void simt_wgmma(float *d, int n, uint64_t desc_a, uint64_t desc_b, int scale_d, int neg_a, int neg_b,
                int trans_a, int trans_b, int bf16);
/** @brief wgmma.commit_group: close the calling thread's open wgmma group. */
void simt_wgmma_commit(void);
/** @brief wgmma.fence.sync.aligned: orders the thread's register accesses
 *  before the wgmma that follow; the emulator requires one before a thread's
 *  first wgmma of the block. */
void simt_wgmma_fence(void);
/** @brief wgmma.wait_group: run every committed group but the @p n most
 *  recent ones (a collective of the warpgroup). @param n groups left pending. */
void simt_wgmma_wait(int n);

#ifdef __cplusplus
}
#endif

#endif /* SIMT_ABI_H */
