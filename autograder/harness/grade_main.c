/*
 * The main() of every program the grader runs: a lab's check.c or bench.c is
 * compiled with main renamed to grade_lab_main and linked to this file.
 *
 * Why it exists: the student's code runs in the same process as the checks,
 * so anything it can write (stdout, stderr, files) cannot be trusted to carry
 * the verdict. The grader instead hands this process a secret (a random
 * token, fresh for every test) through a pipe on fd 3, and listens on a
 * second pipe, fd 4. This file reads the token before main() runs, closes
 * fd 3, runs exactly one named cmocka test and writes one line
 * "<token> PASS|FAIL|SKIP <test>" to fd 4. Printed "[  PASSED  ]" lines,
 * fake XML files or an early exit(0) never produce that line, so they never
 * earn points. A benchmark run reports its JSON the same way.
 *
 * Which test to run (GRADE_TEST) or where the benchmark's JSON goes
 * (GRADE_BENCH_JSON) is read and removed from the environment before main, so
 * code cannot take a benchmark-only path by looking there. (The arguments,
 * --seed for a check and --json for a benchmark, and the program's own path
 * stay visible: argv and /proc/self/cmdline cannot be hidden from the code of
 * the process they belong to.)
 *
 * A test on several MPI ranks runs under mpirun, which passes neither fd on.
 * There GRADE_CHANNEL names a socket of the grader's: each rank connects
 * before main(), says "HELLO <rank>" (its rank from the launcher's
 * environment), gets the token back and later sends its verdict the same
 * way; the grader takes one connection per rank, so an extra one (the
 * student's code trying to learn the token) fails the test. A rank that
 * passed finalizes MPI before it leaves, so the others are not torn down
 * before they too have reported; a rank that failed leaves at once with a
 * non-zero status, and mpirun ends the job instead of letting the other
 * ranks wait for it until the timeout.
 *
 * It does not defend against code written to read this process's memory
 * (the token sits in it); autograder/README.md says how that is bounded.
 * Not here: limits, timeouts and the environment; the grader sets those
 * before exec.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int grade_lab_main(int argc, char **argv);
int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);

#define TOKEN_FD 3
#define REPORT_FD 4

static char token[128];     /* the secret of this run (the grader allows up to 126 characters); empty when not run by the grader */
/* GRADE_TEST and GRADE_BENCH_JSON, read and removed from the environment
 * before main; NULL when not set (or too long to be the grader's). */
static char test_name[512], bench_json[4096];
static const char *want_test, *bench_path;
static int report_fd = -1;  /* where verdicts go */
static int on_ranks;        /* 1: one rank of an MPI job, talking to the grader over GRADE_CHANNEL */

/* MPI, when the program links it (an MPI lab's checks); NULL otherwise. The
 * harness is plain C without mpi.h: these three take and return ints only. */
extern int MPI_Initialized(int *flag) __attribute__((weak));
extern int MPI_Finalized(int *flag) __attribute__((weak));
extern int MPI_Finalize(void) __attribute__((weak));

/* This process's rank, from the launcher's environment (Open MPI, PMIx, MPICH, Slurm); -1 if none. */
static int launcher_rank(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", NULL};
    for (const char *const *v = vars; *v; v++) {
        const char *s = getenv(*v);
        char *end;
        long r = s && *s ? strtol(s, &end, 10) : -1;
        if (s && *s && !*end && r >= 0 && r < 1 << 20) return (int)r;
    }
    return -1;
}

/* One rank of a job: connect to the grader's socket (abstract name in
 * GRADE_CHANNEL), say which rank this is and read the token. On any failure
 * the token stays empty and the grader sees no verdict from this rank. */
static void open_channel(const char *name) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    size_t l = strlen(name);
    if (fd < 0 || l + 1 > sizeof a.sun_path) goto fail; /* '\0', then the name without one at its end */
    memcpy(a.sun_path + 1, name, l);
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l);
    if (connect(fd, (struct sockaddr *)&a, alen) != 0) goto fail;
    char hello[48];
    int n = snprintf(hello, sizeof hello, "HELLO %d\n", launcher_rank());
    if (write(fd, hello, (size_t)n) != n) goto fail;
    size_t got = 0; /* one byte at a time: nothing past the token's newline is taken */
    while (got + 1 < sizeof token) {
        ssize_t r = read(fd, token + got, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0 || token[got] == '\n') break;
        got++;
    }
    token[got] = '\0';
    if (!token[0]) goto fail;
    report_fd = fd;
    on_ranks = 1;
    return;
fail:
    token[0] = '\0';
    if (fd >= 0) close(fd);
}

/* Remove the variable name from the environment: from environ, and its
 * bytes wiped where they lie, since /proc/self/environ shows the process's
 * first environment block whatever unsetenv does. */
static void drop_env(const char *name) {
    char *v = getenv(name);
    unsetenv(name);
    if (v) memset(v - strlen(name) - 1, 0, strlen(name) + 1 + strlen(v)); /* "NAME=value" */
}

/* The value of the variable name, copied into buf (NULL when unset or too
 * long), and the variable removed (drop_env). */
static const char *take_env(const char *name, char *buf, size_t n) {
    const char *v = getenv(name);
    int ok = v && strlen(v) < n;
    if (ok) memcpy(buf, v, strlen(v) + 1);
    drop_env(name);
    return ok ? buf : NULL;
}

/* Read the token before any constructor of the student's code at default
 * priority can run, and close its pipe so nothing later can read it. Under
 * mpirun fd 3 is the launcher's, not ours: the channel replaces it. The
 * grader's variables leave the environment here too, so the student's code
 * cannot tell a check run (GRADE_TEST) from a benchmark run (GRADE_BENCH_JSON)
 * by them. */
__attribute__((constructor(101))) static void read_token(void) {
    want_test = take_env("GRADE_TEST", test_name, sizeof test_name);
    bench_path = take_env("GRADE_BENCH_JSON", bench_json, sizeof bench_json);
    const char *channel = getenv("GRADE_CHANNEL");
    if (channel && *channel) {
        open_channel(channel);
        drop_env("GRADE_CHANNEL");
        return;
    }
    size_t n = 0;
    while (n + 1 < sizeof token) {
        ssize_t r = read(TOKEN_FD, token + n, sizeof token - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    token[n] = '\0';
    token[strcspn(token, "\r\n")] = '\0';
    close(TOKEN_FD);
    if (token[0] && fcntl(REPORT_FD, F_GETFD) >= 0) {
        report_fd = REPORT_FD;
        /* Programs the student's code might start do not get the channel. */
        fcntl(report_fd, F_SETFD, FD_CLOEXEC);
    }
}

/* Write the whole of s to the report channel, retrying short writes. */
static void report(const char *s) {
    if (report_fd < 0) return;
    size_t len = strlen(s), off = 0;
    while (off < len) {
        ssize_t w = write(report_fd, s + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        off += (size_t)w;
    }
}

/* Leave without running what the student's code registered (atexit,
 * destructors). One rank of a job that did its part finalizes MPI first:
 * leaving without it would make mpirun end the job while other ranks are
 * still on their way to their verdicts. */
__attribute__((noreturn)) static void leave(int ok) {
    int init = 0, fin = 0;
    if (on_ranks && ok && MPI_Initialized && MPI_Finalized && MPI_Finalize && MPI_Initialized(&init) == 0 &&
        init && MPI_Finalized(&fin) == 0 && !fin)
        MPI_Finalize();
    _exit(on_ranks && !ok ? 1 : 0);
}

/* Send "<token> <verdict> <name>\n" and leave at once. */
static void report_and_exit(const char *verdict, const char *name) {
    char line[512];
    snprintf(line, sizeof line, "%s %s %s\n", token, verdict, name);
    fflush(stdout);
    fflush(stderr);
    report(line);
    leave(!strcmp(verdict, "PASS") || !strcmp(verdict, "SKIP"));
}

/* The test being run and whether its body returned normally. cmocka leaves a
 * test body by longjmp on a failed assertion and on skip(), so "returned"
 * means the test passed. */
static CMUnitTestFunction real_test;
static volatile int test_returned;

/* Runs the real test body; reaching the last line means it passed. */
static void trampoline(void **state) {
    real_test(state);
    test_returned = 1;
}

/* check.c's cmocka_run_group_tests_name() lands here (-Wl,--wrap). Without
 * the grader (no token) everything runs as usual; with it, only the test
 * named in GRADE_TEST runs, through the trampoline. */
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown) {
    const char *want = want_test;
    if (!token[0] || !want)
        return __real__cmocka_run_group_tests(group_name, tests, num_tests, group_setup,
                                              group_teardown);
    for (size_t i = 0; i < num_tests; i++) {
        if (!tests[i].name || strcmp(tests[i].name, want) != 0) continue;
        struct CMUnitTest one = tests[i];
        real_test = one.test_func;
        one.test_func = trampoline;
        test_returned = 0;
        int failed = __real__cmocka_run_group_tests(group_name, &one, 1, group_setup, group_teardown);
        /* Returned with no failure: pass. No failure but not returned: skip(). */
        report_and_exit(failed ? "FAIL" : test_returned ? "PASS" : "SKIP", want);
    }
    fprintf(stderr, "grade: the checks have no test named '%s'\n", want);
    report_and_exit("NOTFOUND", want);
    return 1;
}

/* A benchmark run: run bench.c's main, then send the JSON it wrote (the path
 * was in GRADE_BENCH_JSON and was also passed as --json) on one line. */
static int run_bench(int argc, char **argv, const char *json_path) {
    int rc = grade_lab_main(argc, argv);
    static char buf[1 << 20];
    size_t n = 0;
    FILE *f = fopen(json_path, "r");
    if (f) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\n' || buf[i] == '\r') buf[i] = ' ';
    char head[160];
    snprintf(head, sizeof head, "%s BENCH %d ", token, rc);
    fflush(stdout);
    fflush(stderr);
    report(head);
    report(buf);
    report("\n");
    leave(rc == 0);
}

/* The program's real main: a bench run, a single graded test, or (outside
 * the grader) the unchanged check program. */
int main(int argc, char **argv) {
    if (token[0] && bench_path) return run_bench(argc, argv, bench_path);
    int rc = grade_lab_main(argc, argv);
    /* Reaching here under the grader means the named test was never run
     * (check.c returned without calling cmocka): say so. */
    if (token[0]) report_and_exit("NOTRUN", want_test ? want_test : "?");
    return rc;
}
