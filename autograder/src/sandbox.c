/*
 * Running one untrusted child: a build of student code or one graded test.
 *
 * The child gets its own session (so a timeout kills everything it started,
 * via killpg), resource limits (CPU seconds, address space, file size, no
 * core files), an environment the caller built from an allow-list, stdin
 * from /dev/null, and stdout+stderr through one pipe whose bytes are counted
 * and capped. With a token, fd 3 carries the token in and fd 4 carries the
 * verdict out (see autograder/harness/grade_main.c); every other descriptor
 * is closed. Nothing the child does can make this function fail or hang
 * past the timeout: the worst outcome is a result that says what went wrong.
 *
 * Not here: deciding what a result means (grade.c does that).
 */
#include "grade.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Seconds since an arbitrary start, immune to clock changes. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Set one limit, soft and hard, so the child cannot raise it again. */
static void limit(int what, long long v) {
    struct rlimit rl = {(rlim_t)v, (rlim_t)v};
    setrlimit(what, &rl);
}

/* Close every descriptor from lo up; close_range() is missing on old kernels. */
static void close_from(int lo) {
    if (close_range((unsigned)lo, ~0U, 0) != 0)
        for (int fd = lo; fd < 65536; fd++) close(fd);
}

/* The child side: everything between fork and exec. Only async-signal-safe
 * calls; on any failure it exits 127, which the parent reports. */
static void child_exec(char *const argv[], const sandbox_opts_t *o, int out_w, int tok_r, int rep_w) {
    setsid();
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(out_w, 2) < 0) _exit(127);
    if (o->token) {
        /* Move the ends to 3 and 4 without clobbering one with the other. */
        int t = fcntl(tok_r, F_DUPFD, 10), r = fcntl(rep_w, F_DUPFD, 10);
        if (t < 0 || r < 0 || dup2(t, 3) < 0 || dup2(r, 4) < 0) _exit(127);
        close_from(5);
    } else {
        close_from(3);
    }
    if (o->cpu_s > 0) limit(RLIMIT_CPU, o->cpu_s);
    if (o->as_bytes > 0) limit(RLIMIT_AS, o->as_bytes);
    if (o->fsize_bytes > 0) limit(RLIMIT_FSIZE, o->fsize_bytes);
    limit(RLIMIT_CORE, 0);
    if (o->run_as) {
        /* A dedicated user: its process count limit is its own. */
        limit(RLIMIT_NPROC, 4096);
        if (setgroups(0, NULL) != 0 || setgid(o->gid) != 0 || setuid(o->uid) != 0) _exit(127);
    }
    if (o->cwd && chdir(o->cwd) != 0) _exit(127);
    signal(SIGPIPE, SIG_DFL);
    execve(argv[0], argv, o->env);
    _exit(127);
}

/* Append what arrived to a growing, capped buffer. Bytes past the cap are
 * counted but dropped. */
static void keep(char **buf, size_t *len, size_t *cap, long long cap_max, const char *data, size_t n) {
    if ((long long)*len >= cap_max) return;
    if ((long long)(*len + n) > cap_max) n = (size_t)(cap_max - (long long)*len);
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap ? *cap : 4096);
        while (nc < *len + n + 1) nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* Fork, exec with limits, then read output and verdicts until both pipes
 * close, killing the group at the deadline or past the output limit. */
void sandbox_run(char *const argv[], const sandbox_opts_t *o, sandbox_result_t *res) {
    memset(res, 0, sizeof *res);
    int outp[2] = {-1, -1}, tokp[2] = {-1, -1}, repp[2] = {-1, -1};
    double t0 = now_s();
    if (pipe2(outp, O_CLOEXEC) != 0 || (o->token && (pipe2(tokp, O_CLOEXEC) != 0 || pipe2(repp, O_CLOEXEC) != 0))) {
        res->exited = 1;
        res->exit_code = 127;
        res->out = strdup("grade: could not create pipes for the child");
        return;
    }
    if (o->token) {
        /* The token is short: it fits in the pipe before the child starts. */
        char line[128];
        int n = snprintf(line, sizeof line, "%s\n", o->token);
        if (write(tokp[1], line, (size_t)n) != n) { /* reported as a missing verdict */ }
        close(tokp[1]);
        tokp[1] = -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) child_exec(argv, o, outp[1], tokp[0], repp[1]);
    close(outp[1]);
    if (tokp[0] >= 0) close(tokp[0]);
    if (repp[1] >= 0) close(repp[1]);
    if (pid < 0) {
        close(outp[0]);
        if (repp[0] >= 0) close(repp[0]);
        res->exited = 1;
        res->exit_code = 127;
        res->out = strdup("grade: fork failed");
        return;
    }

    char *out = NULL, *rep = NULL;
    size_t out_len = 0, out_capb = 0, rep_len = 0, rep_capb = 0;
    int out_open = 1, rep_open = repp[0] >= 0, reaped = 0, status = 0;
    double deadline = t0 + (o->timeout_s > 0 ? o->timeout_s : 3600);
    double reaped_at = 0;
    while (out_open || rep_open) {
        struct pollfd pf[2];
        int np = 0, io = -1, ir = -1;
        if (out_open) { pf[np].fd = outp[0]; pf[np].events = POLLIN; io = np++; }
        if (rep_open) { pf[np].fd = repp[0]; pf[np].events = POLLIN; ir = np++; }
        int pr = poll(pf, (nfds_t)np, 100);
        if (pr < 0 && errno != EINTR) break;
        char buf[65536];
        if (pr > 0 && io >= 0 && (pf[io].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(outp[0], buf, sizeof buf);
            if (r > 0) {
                res->out_total += r;
                keep(&out, &out_len, &out_capb, o->out_cap, buf, (size_t)r);
                if (o->out_kill > 0 && res->out_total > o->out_kill && !res->output_killed) {
                    res->output_killed = 1;
                    killpg(pid, SIGKILL);
                }
            } else if (r == 0 || errno != EINTR) {
                out_open = 0;
            }
        }
        if (pr > 0 && ir >= 0 && (pf[ir].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(repp[0], buf, sizeof buf);
            if (r > 0) keep(&rep, &rep_len, &rep_capb, 1 << 21, buf, (size_t)r);
            else if (r == 0 || errno != EINTR) rep_open = 0;
        }
        if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
            reaped = 1;
            reaped_at = now_s();
            /* Whatever the child left running (a forked sleeper holding the
             * pipes open) goes with it. */
            killpg(pid, SIGKILL);
        }
        double t = now_s();
        if (!reaped && t > deadline && !res->timed_out) {
            res->timed_out = 1;
            killpg(pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        /* Grandchildren outside the group could hold the pipes: stop waiting
         * for EOF two seconds after the child itself is gone. */
        if (reaped && t - reaped_at > 2.0) break;
    }
    if (!reaped) {
        killpg(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    close(outp[0]);
    if (repp[0] >= 0) close(repp[0]);
    res->wall_s = now_s() - t0;
    if (WIFEXITED(status)) {
        res->exited = 1;
        res->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->signaled = 1;
        res->sig = WTERMSIG(status);
    }
    res->out = out ? out : strdup("");
    res->out_len = out_len;
    res->report = rep ? rep : strdup("");
}

/* Output and reports are malloc'd by sandbox_run. */
void sandbox_result_free(sandbox_result_t *res) {
    free(res->out);
    free(res->report);
    res->out = res->report = NULL;
}
