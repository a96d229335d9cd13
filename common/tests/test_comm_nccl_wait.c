/*
 * The NCCL backend's waits never hang on a failed peer: a rank whose NCCL
 * reports an asynchronous error while it waits aborts its NCCL communicator
 * and ends the whole job, naming itself and the error; and a wait whose work
 * finishes returns, having polled NCCL's error state, with nothing aborted.
 * And an NCCL call that fails says what NCCL said (NCCL_CHECK's detail).
 * With COMM_CHECK_ARGS=1 the waits behave the same, and ranks that pass
 * different counts end the job before the call reaches NCCL, which would hang.
 *
 * Runs without a GPU: it launches `$MPIRUN -np 2 comm_nccl_standin CASE`
 * jobs, in which comm.c's NCCL backend runs on stand-ins for the CUDA
 * runtime and NCCL (nccl_standin.c), and watches them, as test_comm_abort
 * does. Run it directly, not under mpirun:
 *
 *   test_comm_nccl_wait [PATH_TO_comm_nccl_standin]
 *
 * The program is the first argument, else $COMM_NCCL_STANDIN, else the file
 * comm_nccl_standin next to this test's binary. MPIRUN defaults to
 * "mpirun --oversubscribe". Each job gets a hard limit: one still running
 * then (a wait that hangs) is killed with its process group and fails.
 */
#include "nccl_standin.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mpi_job.h"

enum { KILL_AFTER_S = 30 };         /* hard limit on one job: past it, a wait hung */
static const double MAX_END_S = 20; /* a failed job must be over within this */

static char prog[PATH_MAX];

/* A job of comm_nccl_standin on two ranks. */
static void run_job2(const char *args, job_t *job) { run_job(prog, 2, args, KILL_AFTER_S, job); }

/* The first line of out that contains key, copied into line ("" if none). */
static void line_with(const char *out, const char *key, char *line, size_t size) {
    line[0] = '\0';
    const char *hit = strstr(out, key);
    if (!hit) return;
    const char *start = hit;
    while (start > out && start[-1] != '\n') start--;
    const char *end = strchr(hit, '\n');
    size_t n = end ? (size_t)(end - start) : strlen(start);
    if (n >= size) n = size - 1;
    memcpy(line, start, n);
    line[n] = '\0';
}

/* Control, and the normal case: every wait returns once its work is done, having polled
 * NCCL's error state, without an abort (comm_nccl_standin checks the counts on each rank), and
 * the "v" collectives become one NCCL call per non-empty block, rooted at its owner, with the
 * block's pointers and count and the NCCL dtype and op (it checks the recorded calls).
 * Without it, a broken MPIRUN or stand-in would make the failure cases pass too. */
static void test_waits_return_when_the_work_is_done(void **state) {
    (void)state;
    static job_t job;
    run_job2("ok", &job);
    int ok = job.exited && job.status == 0 && strstr(job.out, "all 2 ranks finished") &&
             !strstr(job.out, "FAIL") && !strstr(job.out, STANDIN_ABORT_LINE);
    if (!ok) fprintf(stderr, "---- job output ----\n%s---- end ----\n", job.out);
    assert_true(ok);
}

/* Rank 1's NCCL fails while every rank waits in call: the job ends by itself, quickly, non-zero;
 * rank 1 called ncclCommAbort (rank 0 did not: its NCCL saw nothing) and its error line names
 * the call, the rank and NCCL's error; then the abort hook ended the job. */
static void assert_rank_1_ends_the_job(const char *call, const char *fn) {
    static job_t job;
    char args[64], line[1024];
    snprintf(args, sizeof args, "fail %s", call);
    run_job2(args, &job);
    line_with(job.out, "[rank 1/2] error:", line, sizeof line);
    int ok = job.exited && job.status != 0 && job.seconds < MAX_END_S &&
             strstr(job.out, STANDIN_ABORT_LINE " on rank 1") && !strstr(job.out, STANDIN_ABORT_LINE " on rank 0") &&
             strstr(line, fn) && strstr(line, "on rank 1 of 2") &&
             strstr(line, "remote process exited or there was a network error") &&
             strstr(line, STANDIN_LAST_ERROR) /* ncclGetLastError's detail */ && strstr(line, "ncclCommAbort") &&
             strstr(job.out, "[rank 1/2] comm: ending the whole job with MPI_Abort") && !strstr(job.out, "returned from");
    if (!ok) fprintf(stderr, "---- job output ----\n%s---- end ----\nrank 1's error line: '%s'\n", job.out, line);
    assert_true(job.exited);
    assert_int_not_equal(job.status, 0);
    assert_true(job.seconds < MAX_END_S);
    assert_true(ok);
}

static void test_error_in_blocking_allreduce(void **state) {
    (void)state;
    assert_rank_1_ends_the_job("allreduce", "comm_allreduce: NCCL failed");
}

static void test_error_in_comm_wait(void **state) {
    (void)state;
    assert_rank_1_ends_the_job("wait", "comm_wait (comm_iallreduce): NCCL failed");
}

static void test_error_in_barrier(void **state) {
    (void)state;
    assert_rank_1_ends_the_job("barrier", "comm_barrier: NCCL failed");
}

static void test_error_in_comm_free(void **state) {
    (void)state;
    assert_rank_1_ends_the_job("free", "comm_free: NCCL failed");
}

static void test_error_in_finalize(void **state) {
    (void)state;
    assert_rank_1_ends_the_job("finalize", "comm_finalize: NCCL failed");
}

/* An NCCL call that fails at once: NCCL_CHECK's line names the call, NCCL's error and, from
 * ncclGetLastError, what failed (ncclGetErrorString alone says only "unhandled system error"). */
static void test_failed_call_message_has_nccl_detail(void **state) {
    (void)state;
    static job_t job;
    char line[1024];
    run_job2("fail-call", &job);
    line_with(job.out, "[rank 1/2] error:", line, sizeof line);
    int ok = job.exited && job.status != 0 && job.seconds < MAX_END_S && strstr(line, "ncclAllReduce(") &&
             strstr(line, "failed: unhandled system error") && strstr(line, STANDIN_CALL_ERROR) &&
             strstr(job.out, "[rank 1/2] comm: ending the whole job with MPI_Abort");
    if (!ok) fprintf(stderr, "---- job output ----\n%s---- end ----\nrank 1's error line: '%s'\n", job.out, line);
    assert_true(ok);
}

/* A wait whose query itself fails (not "not ready": the GPU work failed) ends the job at once,
 * naming the query, the rank and CUDA's error, instead of polling for ever. */
static void test_failed_query_ends_the_job(void **state) {
    (void)state;
    static job_t job;
    char line[1024];
    run_job2("fail-query", &job);
    line_with(job.out, "[rank 1/2] error:", line, sizeof line);
    int ok = job.exited && job.status != 0 && job.seconds < MAX_END_S &&
             strstr(line, "comm_wait (comm_iallreduce): cudaEventQuery failed on rank 1 of 2 while waiting for NCCL: "
                          "cudaErrorLaunchFailure") &&
             strstr(job.out, "[rank 1/2] comm: ending the whole job with MPI_Abort") && !strstr(job.out, "returned from");
    if (!ok) fprintf(stderr, "---- job output ----\n%s---- end ----\nrank 1's error line: '%s'\n", job.out, line);
    assert_true(ok);
}

/* A rank whose ncclCommGetAsyncError itself fails cannot tell whether its peers are alive: it
 * counts that as NCCL's error, aborts its communicator and ends the job, naming the error. */
static void test_failed_error_poll_ends_the_job(void **state) {
    (void)state;
    static job_t job;
    char line[1024];
    run_job2("fail-async-query", &job);
    line_with(job.out, "[rank 1/2] error:", line, sizeof line);
    int ok = job.exited && job.status != 0 && job.seconds < MAX_END_S &&
             strstr(line, "comm_allreduce: NCCL failed on rank 1 of 2 while this rank waited for it: invalid argument") &&
             strstr(job.out, STANDIN_ABORT_LINE " on rank 1") && !strstr(job.out, "returned from");
    if (!ok) fprintf(stderr, "---- job output ----\n%s---- end ----\nrank 1's error line: '%s'\n", job.out, line);
    assert_true(ok);
}

/* The argument check runs over the NCCL backend's MPI group: with COMM_CHECK_ARGS=1 the normal
 * waits still poll and return as above (the check adds no CUDA or NCCL call), and ranks that
 * pass different counts end the job naming them, before NCCL (whose work here never finishes,
 * as it would not for real) could hang it, so nothing is aborted through NCCL. */
static void test_check_args_on_the_nccl_backend(void **state) {
    (void)state;
    static job_t job;
    setenv("COMM_CHECK_ARGS", "1", 1);
    run_job2("ok", &job);
    int ok = job.exited && job.status == 0 && strstr(job.out, "all 2 ranks finished") &&
             !strstr(job.out, "FAIL") && !strstr(job.out, STANDIN_ABORT_LINE) &&
             strstr(job.out, "COMM_CHECK_ARGS=1: every collective first checks");
    if (!ok) fprintf(stderr, "---- job output (ok, COMM_CHECK_ARGS=1) ----\n%s---- end ----\n", job.out);
    assert_true(ok);

    run_job2("mismatch", &job);
    unsetenv("COMM_CHECK_ARGS");
    ok = job.exited && job.status != 0 && job.seconds < MAX_END_S &&
         strstr(job.out, "comm_allreduce: COMM_CHECK_ARGS: the ranks passed different arguments") &&
         strstr(job.out, "count is ") && strstr(job.out, "on this rank (4 on rank 0; 3 on rank 1)") &&
         strstr(job.out, "comm: ending the whole job with MPI_Abort") && !strstr(job.out, STANDIN_ABORT_LINE) &&
         !strstr(job.out, "returned from");
    if (!ok) fprintf(stderr, "---- job output (mismatch) ----\n%s---- end ----\n", job.out);
    assert_true(job.exited);
    assert_true(ok);
}

/* COMM_TIMEOUT on the NCCL backend: a wait for work that never finishes, with no error from
 * NCCL (a peer that never made the call), ends the job once the limit has passed, naming the
 * call; the polling wait does not keep the watchdog from seeing it. */
static void test_timeout_on_the_nccl_backend(void **state) {
    (void)state;
    static job_t job;
    setenv("COMM_TIMEOUT", "1.5", 1);
    run_job2("hang", &job);
    unsetenv("COMM_TIMEOUT");
    int ok = job.exited && job.status != 0 && job.seconds < MAX_END_S &&
             strstr(job.out, "comm: COMM_TIMEOUT: comm_allreduce (collective number 1 on this rank's communicator "
                             "of 2 ranks") &&
             strstr(job.out, "(COMM_TIMEOUT=1.5)") && strstr(job.out, "comm: ending the whole job (exit code 1)") &&
             !strstr(job.out, "returned from");
    if (!ok) fprintf(stderr, "---- job output ----\n%s---- end ----\n", job.out);
    assert_true(job.exited);
    assert_true(ok);
    /* comm_free waits for the work on its communicator (on MPI it waits for nothing). */
    setenv("COMM_TIMEOUT", "1.5", 1);
    run_job2("hang free", &job);
    unsetenv("COMM_TIMEOUT");
    ok = job.exited && job.status != 0 && job.seconds < MAX_END_S &&
         strstr(job.out, "comm: COMM_TIMEOUT: comm_free (of a communicator of 2 ranks, which each of them must free) "
                         "has waited ") && !strstr(job.out, "returned from");
    if (!ok) fprintf(stderr, "---- job output (hang free) ----\n%s---- end ----\n", job.out);
    assert_true(ok);
}

int main(int argc, char **argv) {
    const char *given = argc > 1 ? argv[1] : getenv("COMM_NCCL_STANDIN");
    if (given && *given) {
        snprintf(prog, sizeof prog, "%s", given);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) {
            fprintf(stderr, "test_comm_nccl_wait: cannot find my own path; pass comm_nccl_standin's path\n");
            return 1;
        }
        self[n] = '\0';
        snprintf(prog, sizeof prog, "%s/comm_nccl_standin", dirname(self));
    }
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "test_comm_nccl_wait: %s is not an executable; build it or pass its path\n", prog);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waits_return_when_the_work_is_done),
        cmocka_unit_test(test_error_in_blocking_allreduce),
        cmocka_unit_test(test_error_in_comm_wait),
        cmocka_unit_test(test_error_in_barrier),
        cmocka_unit_test(test_error_in_comm_free),
        cmocka_unit_test(test_error_in_finalize),
        cmocka_unit_test(test_failed_call_message_has_nccl_detail),
        cmocka_unit_test(test_failed_query_ends_the_job),
        cmocka_unit_test(test_failed_error_poll_ends_the_job),
        cmocka_unit_test(test_check_args_on_the_nccl_backend),
        cmocka_unit_test(test_timeout_on_the_nccl_backend),
    };
    /* COMM_TEST_FILTER='test_error*' runs only the tests whose names match (a cmocka glob). */
    if (getenv("COMM_TEST_FILTER") && getenv("COMM_TEST_FILTER")[0]) cmocka_set_test_filter(getenv("COMM_TEST_FILTER"));
    return cmocka_run_group_tests_name("comm_nccl_wait", tests, NULL, NULL) ? 1 : 0;
}
