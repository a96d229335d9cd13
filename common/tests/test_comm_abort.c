/*
 * A rank that fails must end the whole MPI job within seconds, naming itself,
 * never leave the others hanging, and a wrong argument must be refused with a
 * message that names the call. Run this test directly, not under mpirun:
 * it launches its own jobs of the comm_fail_rank program and watches them.
 *
 *   test_comm_abort [PATH_TO_comm_fail_rank]
 *
 * The program is the first argument, else $COMM_FAIL_RANK, else the file
 * comm_fail_rank next to this test's own binary. Jobs are started as
 * `$MPIRUN -np N program ARGS` through sh, with MPIRUN defaulting to
 * "mpirun --oversubscribe" (running as root also needs Open MPI's
 * OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
 *
 * Each job gets a hard limit; a job still running then is killed with its
 * whole process group and the test fails, so this test cannot hang either.
 */
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

enum { KILL_AFTER_S = 60 };         /* hard limit on one job */
static const double MAX_END_S = 20; /* a failed job must be over within this */

static char prog[PATH_MAX];

typedef struct {
    int exited;      /* the launcher ended by itself (not killed by us) */
    int status;      /* its exit status, or 128 + signal */
    double seconds;  /* from launch until the launcher ended */
    char out[65536]; /* stdout and stderr of the whole job, truncated */
} job_t;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run `$MPIRUN -np np prog args` and collect its output, exit status and duration. */
static void run_job(int np, const char *args, job_t *job) {
    const char *mpirun = getenv("MPIRUN");
    if (!mpirun || !*mpirun) mpirun = "mpirun --oversubscribe";
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "%s -np %d '%s' %s", mpirun, np, prog, args);
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
        fprintf(stderr, "job still running after %d s: killing it\n", KILL_AFTER_S);
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

static void show_output_if(int failed, const job_t *job) {
    if (failed) fprintf(stderr, "---- job output ----\n%s---- end ----\n", job->out);
}

/* The job failed as it should: ended by itself, quickly, non-zero, with these words. */
static void assert_failed_job(const job_t *job, const char *must1, const char *must2) {
    int ok = job->exited && job->status != 0 && job->seconds < MAX_END_S &&
             strstr(job->out, must1) && (!must2 || strstr(job->out, must2));
    show_output_if(!ok, job);
    assert_true(job->exited);
    assert_int_not_equal(job->status, 0);
    assert_true(job->seconds < MAX_END_S);
    assert_non_null(strstr(job->out, must1));
    if (must2) assert_non_null(strstr(job->out, must2));
}

/* Control: the same launcher and program, nobody fails, exit 0. Without this a broken
 * MPIRUN would make every failure case below pass. */
static void test_control_job_succeeds(void **state) {
    (void)state;
    static job_t job;
    run_job(4, "ok", &job);
    int ok = job.exited && job.status == 0 && strstr(job.out, "all 4 ranks finished");
    show_output_if(!ok, &job);
    assert_true(ok);
}

/* The line the communicator's abort hook prints just before it calls MPI_Abort. Without
 * the hook a FATAL only exits, and Open MPI's mpirun still ends the job because a rank
 * exited non-zero, so the message and the exit status alone would pass; a launcher that
 * does not end the job on one rank's exit (srun without --kill-on-bad-exit) would then
 * leave the others waiting forever. (Open MPI's own "MPI_ABORT was invoked on rank N" is
 * not checked: it is lost now and then.) */
#define ABORTED_BY_HOOK "comm: ending the whole job with MPI_Abort"

static void test_fatal_while_others_in_barrier(void **state) {
    (void)state;
    static job_t job;
    run_job(4, "2", &job);
    assert_failed_job(&job, "[rank 2/4]", "rank 2 fails on purpose while the others wait in barrier");
    assert_failed_job(&job, "[rank 2/4] " ABORTED_BY_HOOK, NULL);
}

static void test_fatal_while_others_in_allreduce(void **state) {
    (void)state;
    static job_t job;
    run_job(4, "2 allreduce", &job);
    assert_failed_job(&job, "[rank 2/4]", "rank 2 fails on purpose while the others wait in allreduce");
    assert_failed_job(&job, "[rank 2/4] " ABORTED_BY_HOOK, NULL);
}

/* A rank that just exits (no FATAL, no MPI_Finalize): mpirun itself must end the job. */
static void test_exit_without_finalize(void **state) {
    (void)state;
    static job_t job;
    run_job(4, "2 exit", &job);
    assert_failed_job(&job, "[rank 2/4]", "without MPI_Finalize");
    assert_null(strstr(job.out, "left the collective"));
}

/* The NCCL world communicator: a clear refusal without a GPU, with fewer GPUs than ranks
 * (or without NCCL in the build), success with one GPU per rank. */
static void test_nccl_world_needs_gpu(void **state) {
    (void)state;
    static job_t job;
    run_job(2, "nccl", &job);
    if (job.exited && job.status == 0) {
        assert_non_null(strstr(job.out, "NCCL world communicator ready"));
        return;
    }
    const char *why = strstr(job.out, "has no NCCL") ? "this build has no NCCL"
                                                     : "the NCCL backend needs one GPU per rank";
    /* Without a GPU: none visible; with one GPU for two ranks: they would share it. */
    if (strstr(why, "GPU"))
        assert_true(strstr(job.out, "no CUDA device visible to rank") || strstr(job.out, "share GPU"));
    assert_failed_job(&job, why, ABORTED_BY_HOOK);
}

/* A wrong argument is refused on every rank with a message that names the call and says what
 * was wrong, and the job ends through the abort hook. */
static void assert_refused(const char *bad, const char *message) {
    static job_t job;
    char args[64];
    snprintf(args, sizeof args, "badarg %s", bad);
    run_job(2, args, &job);
    assert_failed_job(&job, message, ABORTED_BY_HOOK);
    assert_null(strstr(job.out, "was not refused"));
}

static void test_refuses_null_buffer(void **state) {
    (void)state;
    assert_refused("null", "comm_allreduce: NULL buffer for 5 elements");
}

static void test_refuses_root_out_of_range(void **state) {
    (void)state;
    assert_refused("root", "comm_broadcast: root 2 is not a rank of this communicator (size 2)");
}

/* Before, -1 was "larger than MPI's int limit; split the buffer", which sends the reader the
 * wrong way (and the NCCL backend, which has no int limit, passed it on). */
static void test_refuses_negative_count(void **state) {
    (void)state;
    assert_refused("negative", "comm_allreduce: count 18446744073709551615 is not a number of elements "
                               "(as a signed number it is -1: a negative count");
}

static void test_refuses_count_over_int_max(void **state) {
    (void)state;
    assert_refused("intmax", "comm_allreduce: count 2147483648 is more than MPI takes in one call "
                             "(INT_MAX = 2147483647 elements); split the buffer");
}

/* sendbuf == recvbuf is MPI's habit, not NCCL's in-place layout (except on rank 0). Open MPI
 * happened to return the right data for both calls, so the mistake passed every check on the
 * MPI backend and would read overwritten data under NCCL; now rank 1 refuses it. */
static void test_refuses_allgather_overlap_not_in_place(void **state) {
    (void)state;
    assert_refused("allgather-overlap", "comm_allgather: sendbuf overlaps recvbuf but is not recvbuf + "
                                        "rank * sendcount (recvbuf + 4 elements on rank 1)");
}

static void test_refuses_reduce_scatter_overlap_not_in_place(void **state) {
    (void)state;
    assert_refused("reduce-scatter-overlap", "comm_reduce_scatter: recvbuf overlaps sendbuf but is not "
                                             "sendbuf + rank * recvcount (sendbuf + 4 elements on rank 1)");
}

int main(int argc, char **argv) {
    const char *given = argc > 1 ? argv[1] : getenv("COMM_FAIL_RANK");
    if (given && *given) {
        snprintf(prog, sizeof prog, "%s", given);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) {
            fprintf(stderr, "test_comm_abort: cannot find my own path; pass comm_fail_rank's path\n");
            return 1;
        }
        self[n] = '\0';
        snprintf(prog, sizeof prog, "%s/comm_fail_rank", dirname(self));
    }
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "test_comm_abort: %s is not an executable; build it or pass its path\n", prog);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_job_succeeds),
        cmocka_unit_test(test_fatal_while_others_in_barrier),
        cmocka_unit_test(test_fatal_while_others_in_allreduce),
        cmocka_unit_test(test_exit_without_finalize),
        cmocka_unit_test(test_nccl_world_needs_gpu),
        cmocka_unit_test(test_refuses_null_buffer),
        cmocka_unit_test(test_refuses_root_out_of_range),
        cmocka_unit_test(test_refuses_negative_count),
        cmocka_unit_test(test_refuses_count_over_int_max),
        cmocka_unit_test(test_refuses_allgather_overlap_not_in_place),
        cmocka_unit_test(test_refuses_reduce_scatter_overlap_not_in_place),
    };
    return cmocka_run_group_tests_name("comm_abort", tests, NULL, NULL) ? 1 : 0;
}
