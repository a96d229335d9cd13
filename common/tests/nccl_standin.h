/*
 * Stand-ins for the CUDA runtime and NCCL functions that comm.c calls, for
 * testing the NCCL backend's waits on a machine without a GPU (see
 * nccl_standin.c). A program links them instead of libcudart and libnccl;
 * this header is how it chooses what the "GPU" and "NCCL" do and reads back
 * what comm.c asked of them.
 */
#ifndef COURSE_TESTS_NCCL_STANDIN_H
#define COURSE_TESTS_NCCL_STANDIN_H

#include <stddef.h>

/* What the stand-ins do; the same on every rank of a job. */
typedef struct {
    int ready_after;       /* after each NCCL call, the stream (and an event recorded on it)
                              answers "not ready" to this many queries, then "done";
                              < 0: never done, as when the kernels wait for a dead peer */
    int fail_rank;         /* the NCCL rank whose ncclCommGetAsyncError reports ncclRemoteError ... */
    int fail_after;        /* ... from its fail_after-th call on; fail_rank < 0: no rank fails */
    int in_progress_polls; /* the first this many ncclCommGetAsyncError calls report ncclInProgress */
    int call_fails;        /* on fail_rank, ncclAllReduce itself returns ncclSystemError */
    int query_fails;       /* on fail_rank, querying a busy stream or event returns cudaErrorLaunchFailure */
    int async_query_fails; /* on fail_rank, ncclCommGetAsyncError itself returns ncclInvalidArgument */
} standin_scenario_t;

/* How many times comm.c called each function, summed over all communicators. */
typedef struct {
    long stream_queries; /* cudaStreamQuery */
    long event_queries;  /* cudaEventQuery */
    long async_queries;  /* ncclCommGetAsyncError */
    long aborts;         /* ncclCommAbort */
    long syncs;          /* cudaStreamSynchronize and cudaEventSynchronize: blind to NCCL errors */
} standin_counts_t;

void standin_set_scenario(const standin_scenario_t *scenario);
standin_counts_t standin_counts(void);

/* One NCCL operation as comm.c called it, so a test can check the arguments, such as the
 * blocks of the "v" collectives, though no data moves. */
typedef struct {
    const char *fn;       /* "ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclReduce",
                             "ncclBroadcast", "ncclSend" or "ncclRecv" */
    const void *sendbuff; /* the pointers as passed; NULL for the one a call does not take */
    const void *recvbuff;
    size_t count;
    int datatype;         /* ncclDataType_t */
    int op;               /* ncclRedOp_t; -1 for the calls without one */
    int root;             /* root, or the peer of ncclSend and ncclRecv; -1 for the others */
    const void *stream;   /* the cudaStream_t it was enqueued on */
} standin_call_t;

enum { STANDIN_MAX_CALLS = 16 };

/* Forget the calls recorded so far. */
void standin_clear_calls(void);
/* The calls since standin_clear_calls() (the first STANDIN_MAX_CALLS); *n gets their number. */
const standin_call_t *standin_calls(int *n);

/* The details ncclGetLastError() returns after an asynchronous failure and after a failed
 * call, for the test to look for. */
#define STANDIN_LAST_ERROR "nccl stand-in: connection to a peer closed by the remote side"
#define STANDIN_CALL_ERROR "nccl stand-in: socket connect to the peer failed"
/* The line ncclCommAbort() prints (then " on rank R"), so a test sees that it was called. */
#define STANDIN_ABORT_LINE "nccl stand-in: ncclCommAbort called"

#endif
