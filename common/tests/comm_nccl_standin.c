/*
 * The communicator's NCCL backend, run without a GPU: an MPI program linked
 * against libcomm (built with COURSE_HAVE_NCCL) and the stand-ins of
 * nccl_standin.c instead of libcudart and libnccl. test_comm_nccl_wait
 * launches it as `mpirun -np 2` and watches the job.
 *
 *   comm_nccl_standin ok
 *       Every NCCL call's work finishes after 3 "not ready" answers, and
 *       NCCL's first error poll says ncclInProgress (not a failure). Each
 *       wait (a blocking allreduce, comm_wait, comm_barrier) must return
 *       only once the work is done, having asked NCCL for errors meanwhile,
 *       without aborting anything and without a blind synchronize. And the
 *       "v" collectives, which NCCL lacks, must become one ncclReduce (or
 *       ncclBroadcast) per non-empty block, rooted at the block's owner, with
 *       the block's offset, count, NCCL dtype and op; every other call must
 *       reach NCCL with its arguments mapped as they should be, on the
 *       communicator's stream (after comm_set_stream, the one given). Exits 0
 *       and rank 0 says
 *       "all N ranks finished" when every rank saw all that.
 *   comm_nccl_standin fail CALL
 *       The work never finishes (kernels waiting for a dead peer) and on
 *       rank 1 NCCL reports ncclRemoteError on its third error poll. Every
 *       rank waits in CALL: allreduce (blocking), wait (comm_iallreduce, then
 *       comm_wait), barrier (comm_iallreduce, then comm_barrier), free
 *       (comm_free of a comm_split communicator with work on it) or finalize
 *       (comm_finalize with work on the world communicator). Rank 1 must
 *       abort its NCCL communicator and end the job, naming itself and the
 *       error; rank 0, whose NCCL sees nothing wrong, is ended by MPI_Abort.
 *   comm_nccl_standin fail-call
 *       ncclAllReduce itself returns ncclSystemError on rank 1: NCCL_CHECK must
 *       end the job with the call, NCCL's error and ncclGetLastError's detail.
 *   comm_nccl_standin fail-query
 *       On rank 1 cudaEventQuery itself fails (cudaErrorLaunchFailure) while
 *       comm_wait waits for a comm_iallreduce: the wait must end the job
 *       naming the query, the rank and the CUDA error, not poll on.
 *   comm_nccl_standin fail-async-query
 *       On rank 1 ncclCommGetAsyncError itself fails (ncclInvalidArgument)
 *       during a blocking comm_allreduce: a rank that cannot ask NCCL for
 *       errors treats that as one, aborts and ends the job.
 *   comm_nccl_standin mismatch
 *       Run with COMM_CHECK_ARGS=1. Rank 1 passes count 3 to comm_allreduce,
 *       rank 0 count 4, and the work never finishes, as real NCCL's would not:
 *       the argument check, over the backend's MPI group, must end the job
 *       naming the count before anything reaches NCCL.
 *   comm_nccl_standin hang [free]
 *       Run with COMM_TIMEOUT set. The work of a comm_allreduce never
 *       finishes and NCCL reports no error (a peer that never made the call):
 *       the watchdog must end the job, naming the call, once a rank has
 *       waited COMM_TIMEOUT seconds. With free: the work of a comm_iallreduce
 *       on a comm_split communicator never finishes, and comm_free waits.
 */
#include "comm.h"
#include "error.h"
#include "log.h"
#include "nccl_standin.h"

#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void) {
    fprintf(stderr, "usage: comm_nccl_standin ok | fail allreduce|wait|barrier|free|finalize | fail-call | "
                    "fail-query | fail-async-query | mismatch | hang [free]\n");
    exit(2);
}

enum { READY_AFTER = 3 };

static int failures = 0;

/* One wait of the ok case: what the stand-ins counted during it. */
static void check_wait(const char *what, standin_counts_t before, int by_event) {
    standin_counts_t after = standin_counts();
    long queries = by_event ? after.event_queries - before.event_queries
                            : after.stream_queries - before.stream_queries;
    long polls = after.async_queries - before.async_queries;
    long aborts = after.aborts - before.aborts, syncs = after.syncs - before.syncs;
    /* READY_AFTER "not ready" answers and the "done" one: fewer means it returned before the
     * work was done; the error poll after each "not ready" is what lets a failed peer end it. */
    int ok = queries == READY_AFTER + 1 && polls >= READY_AFTER && aborts == 0 && syncs == 0;
    if (!ok) failures++;
    log_info("%s %s: %ld %s queries (want %d), %ld error polls (want >= %d), %ld aborts, %ld blind "
             "synchronizes (want 0 of both)",
             ok ? "ok" : "FAIL", what, queries, by_event ? "event" : "stream", READY_AFTER + 1, polls,
             READY_AFTER, aborts, syncs);
}

/* Whether call k of the recorded ones is fn(send, recv, count, datatype, op, root). */
static int called(int k, const char *fn, const void *send, const void *recv, size_t count, int datatype, int op,
                  int root) {
    int n = 0;
    const standin_call_t *c = standin_calls(&n);
    int ok = k < n && !strcmp(c[k].fn, fn) && c[k].sendbuff == send && c[k].recvbuff == recv &&
             c[k].count == count && c[k].datatype == datatype && c[k].op == op && c[k].root == root;
    if (!ok) {
        failures++;
        if (k < n)
            log_error("FAIL call %d: %s(send %p, recv %p, count %zu, dtype %d, op %d, root %d), expected "
                      "%s(%p, %p, %zu, %d, %d, %d)", k, c[k].fn, c[k].sendbuff, c[k].recvbuff, c[k].count,
                      c[k].datatype, c[k].op, c[k].root, fn, send, recv, count, datatype, op, root);
        else
            log_error("FAIL call %d: only %d calls, expected %s", k, n, fn);
    }
    return ok;
}

/* The "v" collectives on NCCL: one call per non-empty block, rooted at its owner. Run with 2
 * ranks; blocks of 1 and 3 elements (offsets 0 and 1), then of 0 and 1 (block 0 skipped). */
static void check_v_layout(comm_t *nccl) {
    int me = comm_rank(nccl), n = 0;
    uint16_t send[4], recv[4], mine[3];
    size_t counts[2] = {1, 3}, off[2] = {0, 1};
    standin_clear_calls();
    comm_reduce_scatterv(nccl, send, recv, counts, COMM_BF16, COMM_AVG);
    for (int r = 0; r < 2; r++) /* a non-root's recvbuff is its own block, unused */
        called(r, "ncclReduce", send + off[r], r == me ? recv : send + off[r], counts[r], /*ncclBfloat16=*/9,
               ncclAvg, r);
    standin_calls(&n);
    if (n != 2) failures++;

    standin_clear_calls();
    comm_allgatherv(nccl, mine, recv, counts, COMM_FP16);
    for (int r = 0; r < 2; r++) /* the owner sends its own buffer; the others' is where it lands */
        called(r, "ncclBroadcast", r == me ? (void *)mine : recv + off[r], recv + off[r], counts[r], ncclFloat16,
               -1, r);

    size_t skip[2] = {0, 1};
    standin_clear_calls();
    comm_reduce_scatterv(nccl, send, me == 1 ? recv : NULL, skip, COMM_FLOAT32, COMM_MAX);
    called(0, "ncclReduce", send, me == 1 ? (void *)recv : send, 1, ncclFloat32, ncclMax, 1);
    standin_calls(&n);
    if (n != 1) failures++;
    standin_clear_calls();
    comm_allgatherv(nccl, me == 1 ? mine : NULL, recv, skip, COMM_INT32);
    called(0, "ncclBroadcast", me == 1 ? (void *)mine : recv, recv, 1, ncclInt32, -1, 1);
    standin_calls(&n);
    if (n != 1) failures++;
    if (!failures) log_info("ok the v collectives' NCCL calls");
}

/* Every other call reaches NCCL with its own arguments: each comm_dtype_t and comm_op_t as
 * NCCL's, the counts, buffers, roots and peers as passed (a sendrecv with another peer on each
 * side, so that a swap shows; the stand-in moves no data), all on the communicator's stream,
 * which after comm_set_stream is the one given. comm_set_stream first waits for the work on the
 * stream it replaces. */
static void check_calls(comm_t *nccl) {
    static const int dtypes[COMM_DTYPE_COUNT] = {
        [COMM_FLOAT32] = ncclFloat32, [COMM_FLOAT64] = ncclFloat64, [COMM_INT32] = ncclInt32,
        [COMM_INT64] = ncclInt64,     [COMM_BF16] = /*ncclBfloat16=*/9, [COMM_FP16] = ncclFloat16};
    static const int ops[COMM_OP_COUNT] = {[COMM_SUM] = ncclSum, [COMM_PROD] = ncclProd, [COMM_MAX] = ncclMax,
                                           [COMM_MIN] = ncclMin, [COMM_AVG] = ncclAvg};
    int me = comm_rank(nccl), other = 1 - me, n = 0;
    double a[8], b[8];
    for (int t = 0; t < COMM_DTYPE_COUNT; t++)
        for (int op = 0; op < COMM_OP_COUNT; op++) {
            standin_clear_calls();
            comm_allreduce(nccl, a, b, 3, (comm_dtype_t)t, (comm_op_t)op);
            called(0, "ncclAllReduce", a, b, 3, dtypes[t], ops[op], -1);
        }
    standin_clear_calls();
    comm_reduce_scatter(nccl, a, b, 2, COMM_INT64, COMM_MIN);
    called(0, "ncclReduceScatter", a, b, 2, ncclInt64, ncclMin, -1);
    standin_clear_calls();
    comm_allgather(nccl, b, a, 3, COMM_FLOAT64);
    called(0, "ncclAllGather", b, a, 3, ncclFloat64, -1, -1);
    standin_clear_calls();
    comm_broadcast(nccl, a, 5, COMM_INT32, 1);
    called(0, "ncclBroadcast", a, a, 5, ncclInt32, -1, 1);
    standin_clear_calls();
    comm_sendrecv(nccl, a, 2, /*dest=*/other, b, 3, /*source=*/me, COMM_FP16);
    called(0, "ncclSend", a, NULL, 2, ncclFloat16, -1, other);
    called(1, "ncclRecv", NULL, b, 3, ncclFloat16, -1, me);
    standin_clear_calls();
    comm_send(nccl, a, 4, COMM_FLOAT32, other);
    comm_recv(nccl, b, 6, COMM_INT32, other);
    called(0, "ncclSend", a, NULL, 4, ncclFloat32, -1, other);
    called(1, "ncclRecv", NULL, b, 6, ncclInt32, -1, other);

    cudaStream_t mine = NULL;
    cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking);
    comm_request_t r = comm_iallreduce(nccl, a, a, 4, COMM_FLOAT32, COMM_SUM);
    standin_counts_t c = standin_counts();
    comm_set_stream(nccl, mine);
    check_wait("comm_set_stream with an allreduce on the old stream", c, 0);
    comm_wait(&r);
    if (comm_stream(nccl) != (void *)mine) failures++;
    standin_clear_calls();
    comm_allreduce(nccl, a, b, 4, COMM_FLOAT32, COMM_SUM);
    const standin_call_t *calls = standin_calls(&n);
    if (n != 1 || calls[0].stream != (void *)mine) {
        failures++;
        log_error("FAIL the allreduce after comm_set_stream went to stream %p, not %p", n ? calls[0].stream : NULL,
                  (void *)mine);
    }
    if (!failures) log_info("ok the NCCL calls' arguments and streams");
}

static void run_ok(void) {
    standin_scenario_t s = {READY_AFTER, /*fail_rank=*/-1, 0, /*in_progress_polls=*/1, 0, 0, 0};
    standin_set_scenario(&s);
    comm_t *nccl = comm_world(COMM_BACKEND_NCCL);
    float x[4] = {0};

    standin_counts_t c = standin_counts();
    comm_allreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
    check_wait("comm_allreduce", c, 0);

    comm_request_t r = comm_iallreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
    c = standin_counts();
    comm_wait(&r);
    check_wait("comm_wait after comm_iallreduce", c, 1);

    r = comm_ibroadcast(nccl, x, 4, COMM_FLOAT32, 0);
    c = standin_counts();
    comm_barrier(nccl);
    check_wait("comm_barrier with a broadcast on the stream", c, 0);
    comm_wait(&r); /* the work is done: one query */

    if (comm_size(nccl) == 2) check_v_layout(nccl);
    if (comm_size(nccl) == 2) check_calls(nccl);

    /* Every rank's verdict, over MPI (the NCCL stand-in moves no data). */
    comm_t *world = comm_world(COMM_BACKEND_MPI);
    int bad = failures;
    comm_allreduce(world, &bad, &bad, 1, COMM_INT32, COMM_SUM);
    if (bad == 0 && comm_rank(world) == 0)
        printf("comm_nccl_standin: all %d ranks finished\n", comm_size(world));
    comm_finalize();
    exit(bad == 0 ? 0 : 1);
}

static void run_fail(const char *call) {
    standin_scenario_t s = {/*ready_after=*/-1, /*fail_rank=*/1, /*fail_after=*/3, 0,
                            /*call_fails=*/!strcmp(call, "call"), /*query_fails=*/!strcmp(call, "query"),
                            /*async_query_fails=*/!strcmp(call, "async-query")};
    standin_set_scenario(&s);
    comm_t *nccl = comm_world(COMM_BACKEND_NCCL);
    float x[4] = {0};
    if (!strcmp(call, "allreduce") || !strcmp(call, "call") || !strcmp(call, "async-query")) {
        comm_allreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(call, "query")) {
        /* By event: the query that fails is comm_wait's cudaEventQuery. */
        comm_request_t r = comm_iallreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
        comm_wait(&r);
    } else if (0) {
        comm_allreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
    } else if (!strcmp(call, "wait")) {
        comm_request_t r = comm_iallreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
        comm_wait(&r);
    } else if (!strcmp(call, "barrier")) {
        comm_request_t r = comm_iallreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
        comm_barrier(nccl);
        comm_wait(&r);
    } else if (!strcmp(call, "free")) {
        /* The same order, so rank r of the group is NCCL rank r: the stand-in fails rank 1. */
        comm_t *group = comm_split(nccl, 0, comm_rank(nccl));
        comm_request_t r = comm_isend(group, x, 4, COMM_FLOAT32, 1 - comm_rank(group));
        (void)r; /* left pending on purpose: comm_free must not hang on it */
        comm_free(group);
    } else if (!strcmp(call, "finalize")) {
        comm_request_t r = comm_iallreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
        (void)r; /* left pending on purpose: comm_finalize must not hang on it */
        comm_finalize();
    } else {
        usage();
    }
    /* Not reached: the work never finishes, so the call can only end with the job. */
    log_error("returned from %s although the NCCL work never finished", call);
    exit(0);
}

static void run_mismatch(void) {
    standin_scenario_t s = {/*ready_after=*/-1, /*fail_rank=*/-1, 0, 0, 0, 0, 0};
    standin_set_scenario(&s);
    comm_t *nccl = comm_world(COMM_BACKEND_NCCL);
    /* Without the check this call would wait forever. */
    CHECK(comm_checks_args(nccl), "mismatch: run with COMM_CHECK_ARGS=1");
    float x[4] = {0};
    comm_allreduce(nccl, x, x, comm_rank(nccl) == 1 ? 3 : 4, COMM_FLOAT32, COMM_SUM);
    log_error("returned from comm_allreduce although the ranks passed different counts");
    exit(0);
}

static void run_hang(const char *call) {
    standin_scenario_t s = {/*ready_after=*/-1, /*fail_rank=*/-1, 0, 0, 0, 0, 0};
    standin_set_scenario(&s);
    CHECK(getenv("COMM_TIMEOUT"), "hang: run with COMM_TIMEOUT set to a few seconds");
    comm_t *nccl = comm_world(COMM_BACKEND_NCCL);
    float x[4] = {0};
    if (call && !strcmp(call, "free")) {
        comm_t *group = comm_split(nccl, 0, comm_rank(nccl));
        comm_request_t r = comm_iallreduce(group, x, x, 4, COMM_FLOAT32, COMM_SUM);
        (void)r; /* never finishes: comm_free waits for it */
        comm_free(group);
        log_error("returned from comm_free although its NCCL work never finished");
        exit(0);
    }
    comm_allreduce(nccl, x, x, 4, COMM_FLOAT32, COMM_SUM);
    log_error("returned from comm_allreduce although its NCCL work never finished");
    exit(0);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    comm_init(&argc, &argv);
    if (!strcmp(argv[1], "ok")) run_ok();
    if (!strcmp(argv[1], "fail") && argc == 3) run_fail(argv[2]);
    if (!strcmp(argv[1], "fail-call")) run_fail("call");
    if (!strcmp(argv[1], "fail-query")) run_fail("query");
    if (!strcmp(argv[1], "fail-async-query")) run_fail("async-query");
    if (!strcmp(argv[1], "mismatch")) run_mismatch();
    if (!strcmp(argv[1], "hang")) run_hang(argc > 2 ? argv[2] : NULL);
    usage();
}
