/*
 * Run a function in a forked child and capture what it wrote to stdout and
 * stderr, with its exit status. The tests use it for code paths that end the
 * process on purpose (fatal errors, --help), which cmocka cannot run inline.
 */
#ifndef COURSE_TESTS_CHILD_H
#define COURSE_TESTS_CHILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    int exited;      /* 1 if the child exited normally */
    int exit_code;   /* its exit code */
    int signal;      /* the signal that killed it, else 0 */
    char out[8192];  /* stdout and stderr, merged */
} child_result_t;

/* Runs fn(arg) in a child; the child's exit code is fn's return value. */
static inline child_result_t run_in_child(int (*fn)(void *), void *arg) {
    child_result_t r;
    memset(&r, 0, sizeof r);
    int fds[2];
    if (pipe(fds) != 0) abort();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        int code = fn(arg);
        fflush(stdout);
        fflush(stderr);
        _exit(code);
    }
    close(fds[1]);
    /* Keep the first sizeof r.out - 1 bytes and read the rest into a sink: a
     * child that prints more must not die of SIGPIPE on a closed pipe. The
     * room is tested before each read so that no read can be asked to write
     * past out (gcc 13's fortified read checks that at compile time). */
    size_t n = 0;
    for (;;) {
        char sink[512];
        size_t room = sizeof r.out - 1 - n;
        ssize_t k = room > 0 ? read(fds[0], r.out + n, room) : read(fds[0], sink, sizeof sink);
        if (k <= 0) break;
        if (room > 0) n += (size_t)k;
    }
    r.out[n] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {
        r.exited = 1;
        r.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r.signal = WTERMSIG(status);
    }
    return r;
}

#endif
