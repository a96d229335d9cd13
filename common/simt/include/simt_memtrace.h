/**
 * @file simt_memtrace.h
 * @brief SIMT emulator: how a kernel's loads and stores would reach memory on a GPU.
 *
 *
 * A GPU serves the 32 threads of a warp together. One load instruction of a
 * warp (a "request") fetches global memory in 32-byte sectors, so 32 threads
 * reading 32 neighbouring floats need 4 sectors and 32 threads reading 32
 * floats a row apart need 32: the same bytes cost 8 times the traffic.
 * Shared memory is 32 banks of 4-byte words, and a request takes one pass
 * ("wavefront") per word some bank must deliver, so 32 threads reading down
 * a column of a 32 x 32 float tile take 32 passes where a row takes 1.
 *
 * The emulator runs each thread on its own, so it cannot feel either cost;
 * a .cu file compiled with `simtcc --memtrace` (the labs' emulator builds
 * are) records every load and store its kernels make, and after each launch
 * the records of each warp are grouped the way the hardware groups them:
 * the n-th execution of one load or store in the code by each thread of the
 * warp is one request. Counted per request:
 *
 * - global memory (cudaMalloc'd): the distinct 32-byte sectors it touches,
 *   against the fewest that could hold the distinct bytes it asked for;
 * - shared memory: wavefronts, the most distinct 4-byte words any one bank
 *   holds among the request's addresses (several threads reading one word
 *   share it), against the fewest, one per 128 distinct bytes. This is the
 *   model the course teaches; the hardware's rules for 8- and 16-byte
 *   accesses (served a half or a quarter of a warp at a time) can differ
 *   from it in a pass or two on unusual patterns.
 *
 * What the emulator does for the kernel is counted where the course's
 * headers note it (simt_memtrace_note in simt_abi.h): cp.async and ldmatrix
 * from common/warp_mma.cuh, an ldmatrix as one request per 8 x 8 matrix
 * and a cp.async's shared-memory side per 128 bytes, as the hardware serves
 * them. Not counted: TMA, wgmma, atomics, wmma loads and stores, and each
 * thread's accesses past its first SIMT_MEMTRACE_PER_THREAD (reported as
 * dropped).
 *
 * Two ways to use it: SIMT_MEMTRACE=1 in the environment prints, after each
 * launch, its totals and the source lines that cost most above the fewest
 * on stderr; simt_memtrace_start and simt_memtrace_stop let a program (a
 * lab's check) count the launches in between. Plain C, for host files.
 */
#ifndef SIMT_MEMTRACE_H
#define SIMT_MEMTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/** Accesses of one thread that are recorded; later ones are dropped. */
#define SIMT_MEMTRACE_PER_THREAD 8192

/** One kind of access (global or shared, load or store), summed over requests. */
typedef struct simt_memtrace_counts {
    unsigned long long requests; /**< warp-wide instructions: one per (code site, n-th execution) a warp's threads share */
    unsigned long long accesses; /**< the threads' accesses in them */
    unsigned long long bytes;    /**< the bytes those accesses asked for, repeats included: bytes / accesses
                                      is the width of a thread's access (4 for a float, 16 for a float4) */
    unsigned long long cost;     /**< global: 32-byte sectors touched; shared: wavefronts */
    unsigned long long best;     /**< the fewest sectors or wavefronts the same distinct bytes need */
} simt_memtrace_counts;

/** What the traced launches did. cost / best is 1 for a perfect pattern. */
typedef struct simt_memtrace_stats {
    simt_memtrace_counts global_load;  /**< loads from cudaMalloc'd memory */
    simt_memtrace_counts global_store; /**< stores to it */
    simt_memtrace_counts shared_load;  /**< loads from __shared__ memory, static or dynamic */
    simt_memtrace_counts shared_store; /**< stores to it */
    unsigned long long launches;       /**< launches traced */
    unsigned long long dropped;        /**< accesses past a thread's SIMT_MEMTRACE_PER_THREAD */
} simt_memtrace_stats;

/** @brief Whether this build can trace: 1 for the plain libsimt, 0 for its
 *  ASan and TSan flavours (which own the instrumentation it relies on).
 *  @return 1 or 0. */
int simt_memtrace_available(void);

/** @brief Start tracing every launch, from zeroed counts. Only kernels in
 *  .cu files compiled with `simtcc --memtrace` record anything. */
void simt_memtrace_start(void);

/** @brief Stop tracing (unless SIMT_MEMTRACE is set) and return the counts
 *  since simt_memtrace_start. @param out the counts; may be NULL. */
void simt_memtrace_stop(simt_memtrace_stats *out);

/** @brief Mark [p, p + bytes) as a guard zone that no kernel may load or
 *  store: such an access in a .cu file compiled with `simtcc --memtrace`
 *  (the labs' emulator builds) fails its launch with a message that names
 *  the buffer, how far past its end (or before its start) the access went,
 *  and the kernel's line. On a GPU the same read returns whatever lies
 *  there and usually passes unseen. The matmul checks guard the margins
 *  they leave around A, B and C, labs 00 and 05 every buffer (labguard.h). At
 *  most 16 zones at a time. In the AddressSanitizer flavour the zone is
 *  poisoned instead, so ASan reports the access with its line (and any host
 *  copy of it: lift the zone first); the ThreadSanitizer flavour ignores it.
 *  cudaFree lifts the zones inside the memory it frees.
 *  @param p the zone's first byte
 *  @param bytes its length
 *  @param what the buffer it borders, as the message names it (kept, not copied)
 *  @param before 1 for a zone in front of the buffer, 0 for one behind it */
void simt_memtrace_guard(const void *p, size_t bytes, const char *what, int before);

/** @brief Lift every guard zone that lies wholly in [p, p + bytes) (and
 *  unpoison it in the AddressSanitizer flavour).
 *  @param p the range's first byte @param bytes its length */
void simt_memtrace_unguard(const void *p, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* SIMT_MEMTRACE_H */
