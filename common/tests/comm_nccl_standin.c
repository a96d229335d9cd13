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
 *       without aborting anything and without a blind synchronize. Exits 0
 *       and rank 0 says "all N ranks finished" when every rank saw that.
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
 *   comm_nccl_standin mismatch
 *       Run with COMM_CHECK_ARGS=1. Rank 1 passes count 3 to comm_allreduce,
 *       rank 0 count 4, and the work never finishes, as real NCCL's would not:
 *       the argument check, over the backend's MPI group, must end the job
 *       naming the count before anything reaches NCCL.
 *   comm_nccl_standin hang
 *       Run with COMM_TIMEOUT set. The work of a comm_allreduce never
 *       finishes and NCCL reports no error (a peer that never made the call):
 *       the watchdog must end the job, naming the call, once a rank has
 *       waited COMM_TIMEOUT seconds.
 */
#include "comm.h"
#include "error.h"
#include "log.h"
#include "nccl_standin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void) {
    fprintf(stderr, "usage: comm_nccl_standin ok | fail allreduce|wait|barrier|free|finalize | fail-call | "
                    "mismatch | hang\n");
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

static void run_ok(void) {
    standin_scenario_t s = {READY_AFTER, /*fail_rank=*/-1, 0, /*in_progress_polls=*/1, 0};
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
                            /*call_fails=*/!strcmp(call, "call")};
    standin_set_scenario(&s);
    comm_t *nccl = comm_world(COMM_BACKEND_NCCL);
    float x[4] = {0};
    if (!strcmp(call, "allreduce") || !strcmp(call, "call")) {
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
    standin_scenario_t s = {/*ready_after=*/-1, /*fail_rank=*/-1, 0, 0, 0};
    standin_set_scenario(&s);
    comm_t *nccl = comm_world(COMM_BACKEND_NCCL);
    /* Without the check this call would wait forever. */
    CHECK(comm_checks_args(nccl), "mismatch: run with COMM_CHECK_ARGS=1");
    float x[4] = {0};
    comm_allreduce(nccl, x, x, comm_rank(nccl) == 1 ? 3 : 4, COMM_FLOAT32, COMM_SUM);
    log_error("returned from comm_allreduce although the ranks passed different counts");
    exit(0);
}

static void run_hang(void) {
    standin_scenario_t s = {/*ready_after=*/-1, /*fail_rank=*/-1, 0, 0, 0};
    standin_set_scenario(&s);
    CHECK(getenv("COMM_TIMEOUT"), "hang: run with COMM_TIMEOUT set to a few seconds");
    comm_t *nccl = comm_world(COMM_BACKEND_NCCL);
    float x[4] = {0};
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
    if (!strcmp(argv[1], "mismatch")) run_mismatch();
    if (!strcmp(argv[1], "hang")) run_hang();
    usage();
}
