/*
 * Stand-ins for exactly the CUDA runtime and NCCL functions that comm.c
 * calls, so that its NCCL backend runs, and its waits are tested, on a
 * machine without a GPU: linked in place of libcudart and libnccl, against
 * the real headers (so every signature is checked by the compiler).
 *
 * Nothing moves data. What matters is time: each NCCL call marks its stream
 * busy, and the stream then answers cudaStreamQuery with cudaErrorNotReady
 * as often as the scenario says (for ever, like kernels that wait for a
 * peer that has died), while ncclCommGetAsyncError reports the failure the
 * scenario asks for. cudaStreamSynchronize blocks as the real one does: for
 * ever on a stream that never finishes. That is the hang a wait must avoid.
 *
 * Single-threaded, like the programs that use it.
 */
#include "nccl_standin.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "the NCCL stand-ins need nccl.h from NCCL 2.14 or newer (ncclRemoteError, ncclInProgress, ncclGetLastError)"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct CUstream_st {
    int busy;              /* an NCCL call is on it */
    int not_ready_left;    /* queries left that answer "not ready"; < 0: all of them */
};

struct CUevent_st {
    struct CUstream_st *stream; /* the stream it was recorded on: done when that is */
};

struct ncclComm {
    int rank, nranks;
    long async_calls; /* ncclCommGetAsyncError calls on this communicator */
};

static standin_scenario_t scenario = {0, -1, 0, 0, 0, 0, 0};
static int my_rank = -1; /* the NCCL rank of this process's last ncclCommInitRank */
static standin_counts_t counts;
static char last_error[256] = "";

void standin_set_scenario(const standin_scenario_t *s) { scenario = *s; }
standin_counts_t standin_counts(void) { return counts; }

static standin_call_t calls[STANDIN_MAX_CALLS];
static int ncalls = 0; /* may pass STANDIN_MAX_CALLS: only the first ones are kept */

void standin_clear_calls(void) { ncalls = 0; }

const standin_call_t *standin_calls(int *n) {
    *n = ncalls < STANDIN_MAX_CALLS ? ncalls : STANDIN_MAX_CALLS;
    return calls;
}

static void record(const char *fn, const void *send, const void *recv, size_t count, int datatype, int op,
                   int root, cudaStream_t stream) {
    if (ncalls < STANDIN_MAX_CALLS)
        calls[ncalls] = (standin_call_t){fn, send, recv, count, datatype, op, root, stream};
    ncalls++;
}

static void *new_zeroed(size_t n) {
    void *p = calloc(1, n);
    if (!p) {
        fprintf(stderr, "nccl stand-in: out of memory\n");
        abort();
    }
    return p;
}

/* ------------------------------------------------------------ CUDA runtime */

cudaError_t cudaGetDeviceCount(int *count) {
    *count = 1;
    return cudaSuccess;
}

/* One device, 0: any other number is refused, as the real runtime refuses a device it lacks. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
    if (device != 0) return cudaErrorInvalidDevice;
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "stand-in GPU");
    /* One GPU per process: every rank of a job on this machine sees a different one. */
    pid_t pid = getpid();
    memcpy(prop->uuid.bytes, &pid, sizeof pid);
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags) {
    (void)flags;
    *stream = new_zeroed(sizeof **stream);
    return cudaSuccess;
}

/* Kept, not freed: an event recorded on a stream may be queried after the stream is destroyed,
 * which the real runtime allows. */
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    (void)stream;
    return cudaSuccess;
}

static cudaError_t query(struct CUstream_st *s) {
    if (!s->busy) return cudaSuccess;
    if (scenario.query_fails && my_rank == scenario.fail_rank) return cudaErrorLaunchFailure;
    if (s->not_ready_left == 0) {
        s->busy = 0;
        return cudaSuccess;
    }
    if (s->not_ready_left > 0) s->not_ready_left--;
    return cudaErrorNotReady;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
    counts.stream_queries++;
    return query(stream);
}

/* What the real call does on kernels that wait for a dead peer: never return. */
static cudaError_t synchronize(struct CUstream_st *s) {
    counts.syncs++;
    while (s->busy && s->not_ready_left < 0) sleep(1);
    s->busy = 0;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) { return synchronize(stream); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
    (void)flags;
    *event = new_zeroed(sizeof **event);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    event->stream = stream;
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
    counts.event_queries++;
    return event->stream ? query(event->stream) : cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    return event->stream ? synchronize(event->stream) : cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    free(event);
    return cudaSuccess;
}

const char *cudaGetErrorName(cudaError_t error) {
    return error == cudaSuccess ? "cudaSuccess" : error == cudaErrorNotReady ? "cudaErrorNotReady"
           : error == cudaErrorLaunchFailure ? "cudaErrorLaunchFailure" : "cudaError";
}

const char *cudaGetErrorString(cudaError_t error) {
    return error == cudaSuccess ? "no error" : "stand-in CUDA error";
}

/* -------------------------------------------------------------------- NCCL */

/* NCCL's own texts, for the codes a test meets. */
const char *ncclGetErrorString(ncclResult_t result) {
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

const char *ncclGetLastError(ncclComm_t comm) {
    (void)comm;
    return last_error;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "nccl stand-in");
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    (void)id;
    *comm = new_zeroed(sizeof **comm);
    (*comm)->rank = rank;
    (*comm)->nranks = nranks;
    my_rank = rank;
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error) {
    counts.async_queries++;
    long n = ++comm->async_calls;
    if (scenario.async_query_fails && comm->rank == scenario.fail_rank) return ncclInvalidArgument;
    if (comm->rank == scenario.fail_rank && n >= scenario.fail_after) {
        snprintf(last_error, sizeof last_error, "%s", STANDIN_LAST_ERROR);
        *async_error = ncclRemoteError;
    } else {
        *async_error = n <= scenario.in_progress_polls ? ncclInProgress : ncclSuccess;
    }
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
    counts.aborts++;
    fprintf(stderr, "%s on rank %d\n", STANDIN_ABORT_LINE, comm->rank);
    fflush(stderr);
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }

/* Every operation: the stream is busy until the scenario says it is done. */
static ncclResult_t enqueue(cudaStream_t stream) {
    stream->busy = 1;
    stream->not_ready_left = scenario.ready_after;
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    record("ncclAllReduce", sendbuff, recvbuff, count, (int)datatype, (int)op, -1, stream);
    if (scenario.call_fails && comm->rank == scenario.fail_rank) {
        snprintf(last_error, sizeof last_error, "%s", STANDIN_CALL_ERROR);
        return ncclSystemError;
    }
    return enqueue(stream);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    (void)comm;
    record("ncclReduceScatter", sendbuff, recvbuff, recvcount, (int)datatype, (int)op, -1, stream);
    return enqueue(stream);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
    (void)comm;
    record("ncclAllGather", sendbuff, recvbuff, sendcount, (int)datatype, -1, -1, stream);
    return enqueue(stream);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
    (void)comm;
    record("ncclBroadcast", sendbuff, recvbuff, count, (int)datatype, -1, root, stream);
    return enqueue(stream);
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
    (void)comm;
    record("ncclReduce", sendbuff, recvbuff, count, (int)datatype, (int)op, root, stream);
    return enqueue(stream);
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    (void)comm;
    record("ncclSend", sendbuff, NULL, count, (int)datatype, -1, peer, stream);
    return enqueue(stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    (void)comm;
    record("ncclRecv", NULL, recvbuff, count, (int)datatype, -1, peer, stream);
    return enqueue(stream);
}
