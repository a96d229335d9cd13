/** @file
 * Small helpers every lab's check.c uses on top of cmocka.
 *
 * A check must fail loudly and usefully: with "not implemented" while the
 * TODO is there, with the worst element and its error when the numbers are
 * off, and as "skipped" (not "passed") when there is nowhere to run kernels.
 */
#ifndef COURSE_LABCHECK_H
#define COURSE_LABCHECK_H

#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "gpu.h"
#include "lab.h"
#include "numerics.h"
#ifdef COURSE_SIMT
#include "simt_memtrace.h"
#endif

/** Seed of this run's random inputs: fixed by default, set by --seed (the grader picks a fresh one). */
static unsigned long long lab_seed __attribute__((unused)) = 2024; /* unused by tests that only want the macros */

/** How many tests LAB_REQUIRE_DEVICE() found the device faulted for: the first gets the whole story. */
static int lab_told_sticky __attribute__((unused)) = 0;

/** The --only pattern, or NULL: which tests this run keeps (see LAB_RUN_TESTS). */
static const char *lab_only __attribute__((unused)) = NULL;

/** The name of the test lab_run_tests() is running, or NULL: what a message
 *  puts after ONLY= to rerun it alone. Weak, so that this header defines it in
 *  every file that includes it and the program still has one (the matmul
 *  harness, in a library, reads what the check sets). */
__attribute__((weak)) const char *lab_test_name = NULL;

/** The make arguments that name this check program's lab, "LAB=02" (with
 *  " SRC=solutions" for a solution's), from its folder, or "" when its path
 *  does not say (see lab_check_init()). Weak, as lab_test_name. */
__attribute__((weak)) char lab_make_args[32] = "";

/**
 * @brief Fill lab_make_args from a check program's path, build/.../labs/NN-topic/check.
 * @param argv0 the program's path (argv[0])
 */
static inline void lab_note_make_args(const char *argv0) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s", argv0 ? argv0 : "");
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = '\0';
    char *lab = strrchr(dir, '/');
    if (!lab || !(lab[1] >= '0' && lab[1] <= '9' && lab[2] >= '0' && lab[2] <= '9' && lab[3] == '-')) return;
    *lab = '\0';
    const char *tree = strrchr(dir, '/');
    tree = tree ? tree + 1 : dir;
    snprintf(lab_make_args, sizeof lab_make_args, "LAB=%c%c%s", lab[1], lab[2],
             strcmp(tree, "solutions") == 0 ? " SRC=solutions" : "");
}

/**
 * @brief Parse a check program's flags (--seed, --only, --help) and print where it runs.
 * @param argc from main
 * @param argv from main
 * @param summary one line saying what the checks cover
 */
static inline void lab_check_init(int argc, char **argv, const char *summary) {
    static long long seed_arg = 2024;
    static const char *only_arg = NULL;
    static const arg_spec_t specs[] = {
        {"seed", ARG_LONG, &seed_arg, "seed of the random inputs", 0, 9.2e18},
        {"only", ARG_STRING, &only_arg,
         "run only the tests whose name matches this pattern (* and ? as in the shell; | between patterns "
         "keeps a test that matches any), e.g. '*large' or 'adamw|mixed*'", 0, -1},
    };
    args_t a = {"check", summary, specs, 2};
    args_parse_or_exit(&a, argc, argv);
    lab_seed = (unsigned long long)seed_arg;
    lab_only = only_arg;
    lab_note_make_args(argv[0]);
    char name[128];
    printf("checks on: %s (seed %llu)\n", gpu_device_name(name, sizeof name), lab_seed);
}

/**
 * @brief Whether a test's name matches an --only pattern: shell-style (*, ?,
 * [...]), and `a|b` matches what either side matches, so one run can take
 * the tests of two tasks. No test name holds a '|'.
 * @param pattern the --only argument
 * @param name a test's name
 * @return 1 if it matches, 0 if not
 */
static inline int lab_only_matches(const char *pattern, const char *name) {
    for (const char *p = pattern;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        char *one = strndup(p, len);
        int hit = one && fnmatch(one, name, 0) == 0;
        free(one);
        if (hit) return 1;
        if (!bar) return 0;
        p = bar + 1;
    }
}

/** A test as lab_run_tests() runs it: its own function and state, behind a
 *  step that first sets lab_test_name. */
typedef struct {
    const char *name;    /**< the test's name */
    CMUnitTestFunction fn; /**< its function */
    void *state;         /**< its initial state */
} lab_named_test_t;

/**
 * @brief The test function lab_run_tests() gives cmocka: sets lab_test_name,
 * then runs the test on its own state.
 * @param state cmocka's state, a lab_named_test_t * on entry
 */
static inline void lab_run_named(void **state) {
    const lab_named_test_t *t = (const lab_named_test_t *)*state;
    lab_test_name = t->name;
    *state = t->state;
    t->fn(state);
}

/**
 * @brief Run a check program's tests: all of them, or only those whose name
 * matches --only (lab_only_matches()). While a test runs, lab_test_name is
 * its name.
 *
 * The tests are chosen here, with the same matcher that decides whether any
 * matches, rather than by cmocka's filter (which knows only * and ?, and
 * runs nothing, reporting success, for a pattern that matches no test).
 * @param group the group's name in cmocka's report
 * @param tests the tests
 * @param n how many
 * @return cmocka's result (the number of failed tests), or 2, a usage error,
 *         when --only matches no test (their names are listed)
 */
static inline int lab_run_tests(const char *group, const struct CMUnitTest *tests, size_t n) {
    struct CMUnitTest *kept = (struct CMUnitTest *)malloc(n * sizeof(*kept) + 1);
    lab_named_test_t *named = (lab_named_test_t *)malloc(n * sizeof(*named) + 1);
    size_t k = 0;
    if (!kept || !named) {
        fprintf(stderr, "check: out of memory\n");
        free(kept);
        free(named);
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        if (lab_only && !lab_only_matches(lab_only, tests[i].name)) continue;
        kept[k] = tests[i];
        /* A test with a setup or teardown gets its state through them: run it as it is. */
        if (!tests[i].setup_func && !tests[i].teardown_func) {
            named[k] = (lab_named_test_t){tests[i].name, tests[i].test_func, tests[i].initial_state};
            kept[k].test_func = lab_run_named;
            kept[k].initial_state = &named[k];
        }
        k++;
    }
    int rc = 2;
    if (k > 0 || !lab_only) {
        rc = _cmocka_run_group_tests(group, kept, k, NULL, NULL);
    } else {
        fflush(stdout);
        fprintf(stderr, "check: --only '%s' matches none of these tests (quote the pattern; * matches any text):\n",
                lab_only);
        for (size_t i = 0; i < n; i++) fprintf(stderr, "  %s\n", tests[i].name);
    }
    free(kept);
    free(named);
    return rc;
}

/** @brief lab_run_tests() on an array of tests. */
#define LAB_RUN_TESTS(group, tests) lab_run_tests((group), (tests), sizeof(tests) / sizeof((tests)[0]))

/** @brief Fail the current test unless a student function returned LAB_OK. */
#define LAB_REQUIRE_OK(status, fn) LAB_REQUIRE_OK_FOR(status, fn, "")

/**
 * @brief LAB_REQUIRE_OK for one case: a failure names it (e.g. "N = 17, D = 33"),
 * so that a launch refused for one shape only says which.
 */
#define LAB_REQUIRE_OK_FOR(status, fn, case_text)                                                \
    do {                                                                                         \
        int st_ = (status);                                                                      \
        const char *c_ = (case_text), *for_ = c_[0] ? " for " : "";                              \
        if (st_ == LAB_NOT_IMPLEMENTED)                                                          \
            fail_msg("not implemented: %s still has its TODO (see the lab's README)", fn);       \
        char err_[160];                                                                          \
        if (st_ == LAB_LAUNCH_FAILED &&                                                          \
            strcmp(gpu_sticky_error(err_, sizeof err_), "no error") != 0)                        \
            fail_msg("%s returned 'launch failed'%s%s: the device reports %s (a fault in a "      \
                     "kernel is sticky and fails every later launch: fix the first failure)",     \
                     fn, for_, c_, err_);                                                        \
        if (st_ == LAB_LAUNCH_FAILED)                                                            \
            fail_msg("%s returned 'launch failed'%s%s and the device reports no fault: the "      \
                     "launch was refused (a grid of 0 blocks? a block of 0 or more than 1024 "   \
                     "threads? too much shared memory?) or a call before it failed. The emulator " \
                     "prints the reason above; on a GPU, print "                                  \
                     "cudaGetErrorString(cudaGetLastError()) right after the launch",             \
                     fn, for_, c_);                                                              \
        if (st_ != LAB_OK) fail_msg("%s returned '%s' (%d)%s%s", fn, lab_status_name(st_), st_,  \
                                    for_, c_);                                                   \
    } while (0)

/** @brief Fail the current test with the comparison report unless ok. */
#define LAB_REQUIRE_CLOSE(ok, what, rep)                                                         \
    do {                                                                                         \
        if (!(ok)) {                                                                             \
            char line_[512];                                                                     \
            fail_msg("%s", cmp_report_format(line_, sizeof line_, (what), (rep)));               \
        }                                                                                        \
    } while (0)

/** @brief LAB_REQUIRE_CLOSE for a matrix of cols columns: the worst element as [row][column]. */
#define LAB_REQUIRE_CLOSE_RC(ok, what, rep, cols)                                                \
    do {                                                                                         \
        if (!(ok)) {                                                                             \
            char line_[512];                                                                     \
            fail_msg("%s", cmp_report_format_rc(line_, sizeof line_, (what), (rep), (cols)));    \
        }                                                                                        \
    } while (0)

/**
 * @brief Skip (visibly) when no device can run kernels: no GPU and not the
 * emulator; fail when an earlier test's kernel faulted.
 *
 * A fault is sticky: the device refuses every later call in this process,
 * so the test could not even allocate. It says so and points at the first
 * failure instead of ending the whole run on a failed allocation.
 */
#define LAB_REQUIRE_DEVICE()                                                                     \
    do {                                                                                         \
        if (!gpu_available()) {                                                                  \
            print_message("no GPU here: build with TARGET=emu to run this check on the CPU\n");  \
            skip();                                                                              \
        }                                                                                        \
        char dev_err_[160];                                                                      \
        if (strcmp(gpu_sticky_error(dev_err_, sizeof dev_err_), "no error") != 0) {              \
            if (lab_told_sticky++) /* the whole story once; after that, one line */           \
                fail_msg("not run: the device has reported %s since an earlier test's kernel "   \
                         "faulted (see the first test that says 'not run')", dev_err_);          \
            fail_msg("not run: the device has reported %s since an earlier test's kernel "       \
                     "faulted; a fault is sticky and fails every later call, so fix the first "  \
                     "failure (meanwhile make check ONLY='<pattern>' runs other tests in a "     \
                     "process of their own; a pattern that matches none lists the names)",       \
                     dev_err_);                                                                  \
        }                                                                                        \
    } while (0)

/**
 * @brief Skip the current test unless this build can count memory access
 * patterns (simt_memtrace.h): the emulator can, except its sanitizer builds;
 * on a GPU the same thing shows as time (make bench LAB=lab), and Nsight
 * Compute counts it. The GPU's message is the one make gpu-check recognises
 * as a skip by design. @param lab the lab's number, e.g. "02".
 */
#ifdef COURSE_SIMT
#define LAB_REQUIRE_MEMTRACE(lab)                                                                \
    do {                                                                                         \
        (void)(lab);                                                                             \
        if (!simt_memtrace_available()) {                                                        \
            print_message("this emulator build cannot trace memory accesses (a sanitizer "       \
                          "build); skipped, not passed\n");                                       \
            skip();                                                                              \
        }                                                                                        \
    } while (0)
#else
#define LAB_REQUIRE_MEMTRACE(lab)                                                                \
    do {                                                                                         \
        print_message("memory access patterns are counted on the emulator (TARGET=emu); on a "   \
                      "GPU, make bench LAB=%s times them; skipped, not passed\n", (lab));        \
        skip();                                                                                  \
    } while (0)
#endif

/**
 * @brief Fail the current test unless the device work a student function
 * started finished: a GPU reports a kernel's fault only when the host waits
 * (the emulator at the launch already, as LAB_REQUIRE_OK sees it).
 */
#define LAB_REQUIRE_FINISHED(fn)                                                                 \
    do {                                                                                         \
        char run_err_[160];                                                                      \
        int run_ = gpu_sync_status(run_err_, sizeof run_err_);                                   \
        if (run_ == GPU_FAULTED)                                                                 \
            fail_msg("%s faulted while running: the device reports %s", (fn), run_err_);         \
        if (run_ == GPU_REFUSED)                                                                 \
            fail_msg("%s returned LAB_OK, but its launch was refused: %s; check "                \
                     "cudaGetLastError() after the launch and return LAB_LAUNCH_FAILED", (fn),   \
                     run_err_);                                                                  \
    } while (0)

/**
 * @brief Skip (visibly, not a pass) when a Hopper-only step cannot run here.
 *
 * status is what the step's own probe returned (e.g. LAB_NEEDS_HOPPER from a
 * wgmma kernel on an sm_80 GPU, or from a binary without sm_90a code; the
 * emulator runs wgmma and TMA); anything else lets the test go on.
 */
#define LAB_REQUIRE_HOPPER(status, what)                                                         \
    do {                                                                                         \
        if ((status) == LAB_NEEDS_HOPPER) {                                                      \
            /* A device broken by an earlier fault cannot answer the probe. */                   \
            char err_[160];                                                                      \
            if (strcmp(gpu_sticky_error(err_, sizeof err_), "no error") != 0)                    \
                fail_msg("%s: the device reports %s since an earlier failure, so it cannot say " \
                         "whether it runs wgmma (a fault in a kernel is sticky: fix the first "  \
                         "failure)", (what), err_);                                              \
            print_message("%s needs a Hopper GPU (compute capability 9.0) and an sm_90a build, "  \
                          "or TARGET=emu; skipped, not passed\n", (what));                       \
            skip();                                                                              \
        }                                                                                        \
    } while (0)

#endif /* COURSE_LABCHECK_H */
