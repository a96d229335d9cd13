/*
 * The NCCL backend's waits never hang on a failed peer: a rank whose NCCL
 * reports an asynchronous error while it waits aborts its NCCL communicator
 * and ends the whole job, naming itself and the error; and a wait whose work
 * finishes returns, having polled NCCL's error state, with nothing aborted.
 * And an NCCL call that fails says what NCCL said (NCCL_CHECK's detail).
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

enum { KILL_AFTER_S = 30 };         /* hard limit on one job: past it, a wait hung */
static const double MAX_END_S = 20; /* a failed job must be over within this */

static char prog[PATH_MAX];

typedef struct {
    int exited;      /* the launcher ended by itself (not killed by us) */
    int status;      /* its exit status, or 128 + signal */
    double seconds;  /* how long it ran */
    char out[65536]; /* stdout and stderr of the whole job */
} job_t;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run `$MPIRUN -np 2 prog args`, collecting its output, exit status and duration. */
static void run_job(const char *args, job_t *job) {
    const char *mpirun = getenv("MPIRUN");
    if (!mpirun || !*mpirun) mpirun = "mpirun --oversubscribe";
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "%s -np 2 '%s' %s", mpirun, prog, args);
    memset(job, 0, sizeof *job);

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    double t0 = now_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0); /* its own process group, so a timeout can kill the whole job */
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        execlp("sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    close(fds[1]);

    size_t len = 0;
    int status = 0, reaped = 0, eof = 0;
    double ended = 0;
    while (!(reaped && eof)) {
        double t = now_s();
        if (t - t0 > KILL_AFTER_S) break;
        if (reaped && t - ended > 5) break; /* leftover processes holding the pipe */
        struct pollfd p = {fds[0], POLLIN, 0};
        if (!eof && poll(&p, 1, 100) > 0) {
            char buf[4096];
            ssize_t n = read(fds[0], buf, sizeof buf);
            if (n <= 0) {
                if (n < 0 && errno == EINTR) continue;
                eof = 1;
            } else {
                size_t keep = (size_t)n < sizeof job->out - 1 - len ? (size_t)n : sizeof job->out - 1 - len;
                memcpy(job->out + len, buf, keep);
                len += keep;
            }
        } else if (eof) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
            reaped = 1;
            ended = now_s();
        }
    }
    if (!reaped) {
        fprintf(stderr, "job still running after %d s (a wait hung): killing it\n", KILL_AFTER_S);
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        ended = now_s();
    } else {
        kill(-pid, SIGKILL); /* anything of the job still alive */
        job->exited = 1;
    }
    close(fds[0]);
    job->out[len] = '\0';
    job->seconds = ended - t0;
    job->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("  `%s`: exit status %d after %.2f s\n", cmd, job->status, job->seconds);
}

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
 * NCCL's error state, without an abort (comm_nccl_standin checks the counts on each rank).
 * Without it, a broken MPIRUN or stand-in would make the failure cases pass too. */
static void test_waits_return_when_the_work_is_done(void **state) {
    (void)state;
    static job_t job;
    run_job("ok", &job);
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
    run_job(args, &job);
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
    run_job("fail-call", &job);
    line_with(job.out, "[rank 1/2] error:", line, sizeof line);
    int ok = job.exited && job.status != 0 && job.seconds < MAX_END_S && strstr(line, "ncclAllReduce(") &&
             strstr(line, "failed: unhandled system error") && strstr(line, STANDIN_CALL_ERROR) &&
             strstr(job.out, "[rank 1/2] comm: ending the whole job with MPI_Abort");
    if (!ok) fprintf(stderr, "---- job output ----\n%s---- end ----\nrank 1's error line: '%s'\n", job.out, line);
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
    };
    return cmocka_run_group_tests_name("comm_nccl_wait", tests, NULL, NULL) ? 1 : 0;
}
