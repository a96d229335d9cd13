/** @file
 * The communicator: one API for every distributed lab, over two backends.
 *
 * COMM_BACKEND_MPI moves host buffers with Open MPI, so every distributed lab
 * runs and is tested on a laptop as `mpirun -np 4` with no GPU. The NCCL
 * backend moves device buffers with NCCL on the communicator's CUDA stream;
 * it is bootstrapped over MPI (rank 0 makes the NCCL unique id and MPI
 * broadcasts it), so the job is still launched with mpirun. A lab writes its
 * communication once and picks the backend when it creates the communicator.
 *
 * The operations follow NCCL's conventions, since that is what large-scale
 * training uses: counts are numbers of elements (not bytes), reduce_scatter
 * takes the count each rank receives and allgather the count each rank sends,
 * and "in place" means the same pointer layout as in NCCL; buffers that
 * overlap in any other way are refused (on both backends), since NCCL gives
 * no defined result for them even where MPI happens to. Buffers that do
 * not divide evenly among the ranks go through comm_shard_range() and the
 * "v" collectives, which is how ZeRO shards a parameter buffer of any size.
 *
 * Every call is checked: a failing MPI, NCCL or CUDA call prints the call,
 * file, line and rank, and comm_init() installs an abort hook so that any
 * FATAL on any rank ends the whole job with MPI_Abort instead of leaving the
 * other ranks waiting forever in a collective. A peer that fails inside NCCL
 * (a network error, a process that died without MPI_Abort) is caught too:
 * every NCCL wait polls the GPU work and ncclCommGetAsyncError() in turn,
 * never a blocking synchronize, and on an error it calls ncclCommAbort() and
 * ends the job, naming the call, the NCCL error and the rank.
 *
 * Ranks that pass different arguments to the same collective (another count,
 * dtype, op or root, or another collective altogether) are the hardest bug a
 * distributed program can have, since neither library reports it: MPI may
 * hang, cut the data short or combine unrelated elements, and NCCL hangs. Set
 * COMM_CHECK_ARGS=1 in the environment (comm_init() reads it once) and every
 * collective, the non-blocking ones, comm_barrier() and comm_split() included
 * (of a split only the call: its color and key differ by design), first
 * compares what each rank passed: the call, count, dtype, op and root, and a
 * hash of the counts of the "v" collectives. Where they differ the job ends
 * before any data moves, and each rank's message names the call, the argument
 * that differed, its own value and which ranks passed which value. The
 * comparison is one small MPI_Allreduce on the host over the communicator's
 * MPI group, on the NCCL backend too. It is off by default because that is one
 * more round trip per collective, which every latency and bandwidth
 * measurement would include (and it makes a non-blocking call wait for all
 * ranks to start it): turn it on while writing or debugging a lab, off to time
 * it. A rank that never calls the collective at all still leaves the others
 * waiting: there is nothing to compare. For that, set COMM_TIMEOUT=S (seconds;
 * comm_init() reads it once): a rank that has waited S seconds in one call
 * that waits for other ranks (a blocking send, receive or collective,
 * comm_wait, comm_barrier, comm_split, comm_free, comm_finalize) prints which
 * call it is in, with the collective's number on its communicator or the peer
 * rank, and ends the job. Every rank still waiting prints its own line, so a
 * rank that skipped a collective shows up as the one whose number differs.
 * A thread of the communicator's watches the clock, since the waiting thread
 * is inside MPI or NCCL; it never calls MPI, and ends its process with
 * _exit(1), which mpirun turns into the end of the job. Off by default: a rank
 * can rightly wait long (for rank 0 to write a checkpoint, say), so choose S
 * above the longest such wait.
 *
 * What this is not: a tuned collective library. The MPI backend calls the
 * MPI collectives as they are; the labs write their own ring all-reduce and
 * compare it against these.
 *
 * The header needs neither mpi.h nor the CUDA headers, so host-only code can
 * include it.
 */
#ifndef COURSE_COMM_H
#define COURSE_COMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Which library moves the data, and so where the buffers live. */
typedef enum {
    COMM_BACKEND_MPI = 0,  /**< Open MPI; all buffers are host memory */
    COMM_BACKEND_NCCL = 1, /**< NCCL; all buffers are device memory, one GPU per rank */
} comm_backend_t;

/**
 * @brief Element types. bf16 and fp16 are stored as uint16_t bit patterns;
 * the MPI backend reduces them in float and rounds each partial result to the
 * nearest even 16-bit value, as a GPU kernel would.
 */
typedef enum {
    COMM_FLOAT32 = 0, /**< float */
    COMM_FLOAT64,     /**< double */
    COMM_INT32,       /**< int32_t */
    COMM_INT64,       /**< int64_t */
    COMM_BF16,        /**< bfloat16, as uint16_t bits */
    COMM_FP16,        /**< IEEE half, as uint16_t bits */
    COMM_DTYPE_COUNT  /**< number of element types (not a type) */
} comm_dtype_t;

/**
 * @brief Reduction operations (the same set as NCCL's).
 *
 * Integer sums and products wrap around (two's complement) on overflow, on
 * both backends; nothing reports it. Floating-point results depend on the
 * order in which the ranks' values are combined, which neither backend fixes,
 * but every rank receives the same bits.
 */
typedef enum {
    COMM_SUM = 0, /**< sum over ranks */
    COMM_PROD,    /**< product over ranks */
    COMM_MAX,     /**< maximum over ranks; for floating-point types as fmax() and NCCL's kernels:
                       a NaN loses to a number (NaN only where every rank has NaN), and -0 counts
                       as below +0, so the result does not depend on which rank holds what */
    COMM_MIN,     /**< minimum over ranks; NaN and -0 as for COMM_MAX */
    COMM_AVG,     /**< sum divided by the number of ranks (integer types: the wrapped sum, divided
                       with truncation toward zero); MPI sums
                       then divides, NCCL scales floating-point inputs by 1/size first, so the
                       two may differ in the last bit */
    COMM_OP_COUNT /**< number of operations (not an operation) */
} comm_op_t;

/** @brief A communicator: a group of ranks plus the backend that connects them. Opaque. */
typedef struct comm comm_t;

/**
 * @brief Handle of a non-blocking operation; finish it with comm_wait().
 *
 * COMM_REQUEST_NULL stands for "nothing pending"; waiting on it returns at
 * once, so arrays of requests may hold unused slots.
 */
typedef struct comm_request *comm_request_t;

/** @brief The request that is already complete. */
#define COMM_REQUEST_NULL ((comm_request_t)0)

/** @brief Color for comm_split() meaning "this rank joins no new group". */
#define COMM_SPLIT_NONE (-1)

/** @brief Size in bytes of an NCCL unique id (NCCL_UNIQUE_ID_BYTES). */
#define COMM_NCCL_ID_BYTES 128

/* ---------------------------------------------------------------- setup */

/**
 * @brief Start MPI (unless the program already did) and hook fatal errors to MPI_Abort.
 *
 * Also tells the log this process's rank, so every log line and every fatal
 * error carries "[rank r/n]", and sets MPI_COMM_WORLD's error handler to
 * MPI_ERRORS_RETURN so that MPI_CHECK can name the failing call before it
 * aborts the job, and reads COMM_CHECK_ARGS (1: check every collective's
 * arguments across the ranks; 0 or unset: do not; anything else ends the
 * job) and COMM_TIMEOUT (seconds, above; 0 or unset: wait forever; a value
 * that is not a number in [0, 1e6] ends the job). Call once, first thing in
 * main(); later calls do nothing.
 * @param argc pointer to main's argc (may be NULL)
 * @param argv pointer to main's argv (may be NULL)
 */
void comm_init(int *argc, char ***argv);

/**
 * @brief Free the world communicators and end MPI (if comm_init() started it).
 *
 * Collective: every rank must call it. Communicators made by comm_split()
 * must have been freed with comm_free() before.
 */
void comm_finalize(void);

/**
 * @brief The communicator of all ranks in the job, for one backend.
 *
 * Made on first use and kept until comm_finalize(), so calling it again is
 * cheap; comm_free() on it does nothing. The first call for a backend is
 * collective. For COMM_BACKEND_NCCL each rank takes the GPU numbered (its
 * rank among the ranks on its node) modulo (the number of visible GPUs); the
 * job ends with a clear message if the build has no NCCL, the rank sees no
 * GPU, or two ranks of a node would share one (more ranks than GPUs).
 * @param backend COMM_BACKEND_MPI or COMM_BACKEND_NCCL
 * @return the world communicator of that backend
 */
comm_t *comm_world(comm_backend_t backend);

/**
 * @brief Split a communicator into groups, as MPI_Comm_split does.
 *
 * Collective over parent. Ranks with the same color form one new
 * communicator, ordered by key (ties by parent rank). The new communicator
 * has the parent's backend; for NCCL a fresh unique id is bootstrapped inside
 * each group and the rank keeps its GPU.
 * @param parent communicator to split
 * @param color group label (>= 0), or COMM_SPLIT_NONE to join no group
 * @param key ordering within the group
 * @return the new communicator (free with comm_free()), or NULL for COMM_SPLIT_NONE
 */
comm_t *comm_split(comm_t *parent, int color, int key);

/**
 * @brief Free a communicator made by comm_split(). Collective over its ranks.
 * @param comm communicator to free; NULL and world communicators are ignored
 */
void comm_free(comm_t *comm);

/**
 * @brief This process's rank in the communicator.
 * @param comm communicator
 * @return rank, 0 <= rank < comm_size(comm)
 */
int comm_rank(const comm_t *comm);

/**
 * @brief Number of ranks in the communicator.
 * @param comm communicator
 * @return number of ranks (>= 1)
 */
int comm_size(const comm_t *comm);

/**
 * @brief The backend the communicator was made with.
 * @param comm communicator
 * @return COMM_BACKEND_MPI or COMM_BACKEND_NCCL
 */
comm_backend_t comm_backend(const comm_t *comm);

/**
 * @brief Whether the communicator's collectives check that all ranks passed the same arguments.
 *
 * On when COMM_CHECK_ARGS=1 reached any rank of the job (then every rank
 * checks, since the check is itself an MPI call all must make); communicators
 * made by comm_split() take it from their parent. A benchmark can print it
 * beside its timings, which the check slows down.
 * @param comm communicator
 * @return 1 if each collective first compares its arguments across the ranks, else 0
 */
int comm_checks_args(const comm_t *comm);

/**
 * @brief Whether this build includes the NCCL backend (COURSE_HAVE_NCCL).
 * @return 1 if comm_world(COMM_BACKEND_NCCL) can work given GPUs, else 0
 */
int comm_nccl_compiled(void);

/**
 * @brief Set the CUDA stream the NCCL backend enqueues work on.
 *
 * The default is a non-blocking stream the communicator creates. Ignored by
 * the MPI backend.
 * @param comm communicator
 * @param stream a cudaStream_t, passed as void* so this header needs no CUDA
 */
void comm_set_stream(comm_t *comm, void *stream);

/**
 * @brief The CUDA stream the NCCL backend uses (a cudaStream_t), or NULL for MPI.
 * @param comm communicator
 * @return the stream
 */
void *comm_stream(const comm_t *comm);

/**
 * @brief Bytes per element of a dtype.
 * @param dtype element type
 * @return 2, 4 or 8
 */
size_t comm_dtype_size(comm_dtype_t dtype);

/**
 * @brief The contiguous shard of total elements that rank owns.
 *
 * Splits [0, total) into size nearly equal pieces: the first total % size
 * ranks get one element more than the others. Used by ZeRO and by the "v"
 * collectives below, so every part of the course shards the same way.
 * @param total number of elements to split
 * @param rank which shard (0 <= rank < size)
 * @param size number of shards (>= 1)
 * @param offset out: index of the shard's first element
 * @param count out: number of elements in the shard (may be 0 when total < size)
 */
void comm_shard_range(size_t total, int rank, int size, size_t *offset, size_t *count);

/**
 * @brief Receive the NCCL unique id made by rank 0 of comm (the NCCL bootstrap).
 *
 * Rank 0 calls ncclGetUniqueId(); the id bytes are then broadcast over the
 * communicator's MPI group so every rank holds the same id for
 * ncclCommInitRank(). Collective over comm. It needs no GPU (ncclGetUniqueId
 * only opens a bootstrap socket), so it is tested on CPU machines. Ends the
 * job if the build has no NCCL.
 * @param comm communicator whose MPI group shares the id (either backend)
 * @param id out: COMM_NCCL_ID_BYTES bytes, identical on every rank afterwards
 */
void comm_nccl_bootstrap_id(const comm_t *comm, void *id);

/* ------------------------------------------------ point-to-point (blocking) */

/**
 * @brief Send count elements to rank peer. Messages between a pair arrive in order.
 * @param comm communicator
 * @param buf data to send
 * @param count number of elements
 * @param dtype element type
 * @param peer destination rank
 */
void comm_send(comm_t *comm, const void *buf, size_t count, comm_dtype_t dtype, int peer);

/**
 * @brief Receive count elements from rank peer.
 *
 * count and dtype must match the sender's. On the MPI backend a message of
 * another size in bytes ends the job, naming the sender and both sizes (MPI
 * alone would fill a shorter one in silently and leave the rest of buf as it
 * was); so does the receive of comm_sendrecv() and, in its comm_wait(), of
 * comm_irecv(). On NCCL a mismatched pair hangs (see COMM_TIMEOUT above).
 * @param comm communicator
 * @param buf where the data goes
 * @param count number of elements (must match the sender's)
 * @param dtype element type
 * @param peer source rank
 */
void comm_recv(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype, int peer);

/**
 * @brief Send to one rank and receive from another at the same time (no deadlock in a ring).
 * @param comm communicator
 * @param sendbuf data to send
 * @param sendcount elements to send
 * @param dest destination rank
 * @param recvbuf where received data goes (must not overlap sendbuf)
 * @param recvcount elements to receive: source's sendcount (checked, as comm_recv() says)
 * @param source source rank
 * @param dtype element type of both buffers
 */
void comm_sendrecv(comm_t *comm, const void *sendbuf, size_t sendcount, int dest,
                   void *recvbuf, size_t recvcount, int source, comm_dtype_t dtype);

/* --------------------------------------------------- collectives (blocking) */

/**
 * @brief recvbuf[i] = op over ranks of sendbuf[i], on every rank.
 *
 * In place when sendbuf == recvbuf (other overlaps are refused). Blocking on both backends: on NCCL the
 * call waits for the communicator's stream before returning (polling NCCL's error state, so a
 * failed peer ends the job instead of hanging it).
 * @param comm communicator
 * @param sendbuf count elements
 * @param recvbuf count elements
 * @param count number of elements
 * @param dtype element type
 * @param op reduction
 */
void comm_allreduce(comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                    comm_dtype_t dtype, comm_op_t op);

/**
 * @brief Reduce a buffer of recvcount * size elements; rank r receives block r.
 *
 * recvbuf[i] = op over ranks of sendbuf[rank * recvcount + i]. In place when
 * recvbuf == sendbuf + rank * recvcount (in elements), as in NCCL; the rest of
 * sendbuf is then left unspecified.
 * @param comm communicator
 * @param sendbuf recvcount * comm_size(comm) elements
 * @param recvbuf recvcount elements
 * @param recvcount elements each rank receives
 * @param dtype element type
 * @param op reduction
 */
void comm_reduce_scatter(comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
                         comm_dtype_t dtype, comm_op_t op);

/**
 * @brief Every rank receives every rank's block: recvbuf[r * sendcount + i] = sendbuf of rank r [i].
 *
 * In place when sendbuf == recvbuf + rank * sendcount (in elements).
 * @param comm communicator
 * @param sendbuf sendcount elements
 * @param recvbuf sendcount * comm_size(comm) elements
 * @param sendcount elements each rank contributes
 * @param dtype element type
 */
void comm_allgather(comm_t *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                    comm_dtype_t dtype);

/**
 * @brief Reduce-scatter with a different block size per rank.
 *
 * Block r is counts[r] elements at offset counts[0] + ... + counts[r-1] of
 * sendbuf; rank r receives the reduction of its block. With counts from
 * comm_shard_range() this shards a buffer of any length. In place when
 * recvbuf == sendbuf + (offset of this rank's block). The NCCL backend has no
 * such collective; it runs one ncclReduce per block, rooted at the block's
 * owner, inside one NCCL group (same bytes moved, more launches).
 * @param comm communicator
 * @param sendbuf counts[0] + ... + counts[size-1] elements
 * @param recvbuf counts[rank] elements
 * @param counts comm_size(comm) block sizes, identical on every rank
 * @param dtype element type
 * @param op reduction
 */
void comm_reduce_scatterv(comm_t *comm, const void *sendbuf, void *recvbuf,
                          const size_t *counts, comm_dtype_t dtype, comm_op_t op);

/**
 * @brief All-gather with a different block size per rank.
 *
 * Rank r's counts[r] elements land at offset counts[0] + ... + counts[r-1] of
 * recvbuf on every rank. In place when sendbuf == recvbuf + (offset of this
 * rank's block). The NCCL backend runs one ncclBroadcast per block, rooted at
 * its owner, inside one NCCL group.
 * @param comm communicator
 * @param sendbuf counts[rank] elements
 * @param recvbuf counts[0] + ... + counts[size-1] elements
 * @param counts comm_size(comm) block sizes, identical on every rank
 * @param dtype element type
 */
void comm_allgatherv(comm_t *comm, const void *sendbuf, void *recvbuf, const size_t *counts,
                     comm_dtype_t dtype);

/**
 * @brief Copy root's buffer to every rank (in place).
 * @param comm communicator
 * @param buf count elements: input on root, output elsewhere
 * @param count number of elements
 * @param dtype element type
 * @param root rank that holds the data
 */
void comm_broadcast(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype, int root);

/**
 * @brief Return only when every rank of the communicator has called it.
 *
 * On NCCL it also waits for the work already on the communicator's stream.
 * @param comm communicator
 */
void comm_barrier(comm_t *comm);

/* ------------------------------------------------------------ non-blocking */

/**
 * @brief Start comm_allreduce(); the buffers must stay untouched until comm_wait().
 * @param comm communicator
 * @param sendbuf count elements
 * @param recvbuf count elements (may equal sendbuf)
 * @param count number of elements
 * @param dtype element type
 * @param op reduction
 * @return request to pass to comm_wait()
 */
comm_request_t comm_iallreduce(comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
                               comm_dtype_t dtype, comm_op_t op);

/**
 * @brief Start comm_reduce_scatter(); finish with comm_wait().
 * @param comm communicator
 * @param sendbuf recvcount * comm_size(comm) elements
 * @param recvbuf recvcount elements
 * @param recvcount elements each rank receives
 * @param dtype element type
 * @param op reduction
 * @return request to pass to comm_wait()
 */
comm_request_t comm_ireduce_scatter(comm_t *comm, const void *sendbuf, void *recvbuf,
                                    size_t recvcount, comm_dtype_t dtype, comm_op_t op);

/**
 * @brief Start comm_allgather(); finish with comm_wait().
 * @param comm communicator
 * @param sendbuf sendcount elements
 * @param recvbuf sendcount * comm_size(comm) elements
 * @param sendcount elements each rank contributes
 * @param dtype element type
 * @return request to pass to comm_wait()
 */
comm_request_t comm_iallgather(comm_t *comm, const void *sendbuf, void *recvbuf,
                               size_t sendcount, comm_dtype_t dtype);

/**
 * @brief Start comm_broadcast(); finish with comm_wait().
 * @param comm communicator
 * @param buf count elements
 * @param count number of elements
 * @param dtype element type
 * @param root rank that holds the data
 * @return request to pass to comm_wait()
 */
comm_request_t comm_ibroadcast(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype,
                               int root);

/**
 * @brief Start comm_send(); finish with comm_wait().
 *
 * On NCCL the send is enqueued on the communicator's stream and completes
 * only together with the matching receive; sends and receives on one stream
 * run in the order they were started, so a ring of isend-then-irecv would
 * deadlock there. Use comm_sendrecv() for exchanges (it groups the pair).
 * @param comm communicator
 * @param buf data to send
 * @param count number of elements
 * @param dtype element type
 * @param peer destination rank
 * @return request to pass to comm_wait()
 */
comm_request_t comm_isend(comm_t *comm, const void *buf, size_t count, comm_dtype_t dtype,
                          int peer);

/**
 * @brief Start comm_recv(); finish with comm_wait().
 * @param comm communicator
 * @param buf where the data goes
 * @param count number of elements
 * @param dtype element type
 * @param peer source rank
 * @return request to pass to comm_wait()
 */
comm_request_t comm_irecv(comm_t *comm, void *buf, size_t count, comm_dtype_t dtype, int peer);

/**
 * @brief Wait until a non-blocking operation has finished and its buffers may be used.
 *
 * On NCCL this waits for the CUDA event recorded after the operation on the
 * communicator's stream, polling NCCL's error state meanwhile (an error aborts
 * the NCCL communicator and ends the job), so the communicator must not have
 * been freed before. Sets *req to COMM_REQUEST_NULL.
 * @param req request from a comm_i* call (COMM_REQUEST_NULL returns at once)
 */
void comm_wait(comm_request_t *req);

/**
 * @brief comm_wait() on each of n requests.
 *
 * A negative n, or a NULL reqs with n > 0, ends the job with a message: either
 * would otherwise leave requests pending whose buffers look ready.
 * @param n number of requests (>= 0)
 * @param reqs array of n requests (may be NULL when n is 0); each becomes COMM_REQUEST_NULL
 */
void comm_waitall(int n, comm_request_t *reqs);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_COMM_H */
