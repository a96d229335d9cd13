/*
 * Launch an MPI job from a test and watch it: `$MPIRUN -np N program ARGS`
 * through sh (MPIRUN defaults to "mpirun --oversubscribe"), its stdout and
 * stderr collected, with a hard limit after which the job's whole process
 * group is killed, so a job that hangs fails the test instead of hanging it.
 * For tests of jobs that must end by themselves (a failed rank ending the
 * job); run such a test directly, not under mpirun.
 */
#ifndef COURSE_TESTS_MPI_JOB_H
#define COURSE_TESTS_MPI_JOB_H

#include <errno.h>
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
static void run_job(const char *prog, int np, const char *args, int kill_after_s, job_t *job) {
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
        if (t - t0 > kill_after_s) break;
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
        fprintf(stderr, "job still running after %d s: killing it\n", kill_after_s);
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

#endif
