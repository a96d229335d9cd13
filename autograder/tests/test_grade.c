/*
 * The grader's own tests (part of `make test`).
 *
 * Each folder autograder/wrong/NN-topic/<case>/ is a submission with one
 * known defect (only the files that differ from the solution, most as a
 * patch against it or against the starter; the test lays them over
 * solutions/NN-topic/, see lay_out_case) and a file `expect` saying which checks it must lose
 * ("lose NAME"), which it must keep ("keep NAME": the damage stays in the
 * test it breaks), "build-error" when not building is the defect (a lost
 * test's build error fails the case otherwise) and, for hard-coded
 * outputs, checks it passes with the default seed 2024 only
 * ("pass-with-seed-2024 NAME"). The cases of a lab are graded in one
 * --batch run (each case folder a student); the grader must finish normally
 * and write each case's results.json with those scores. A case whose defect
 * only a benchmark shows ("lose-speed NAME", with "speed-args ARGS") is also
 * graded alone with --emu-speed-args ARGS, and must lose that speed test.
 * Then: the solutions get full numerics marks, the starters none, --batch
 * writes the right CSV, --run-as works (when run as root), --mem-mb holds
 * a submission that allocates until malloc fails below the limit, and the
 * Gradescope zip and run_autograder work in a fake /autograder. And the
 * command line: bad usage and conflicting flags refused before any build,
 * submissions laid out oddly (one folder down, files twice, none), a
 * batch's notes (build error, no files, a zip), one lab per Gradescope zip
 * and no solution in it, --target cuda without a device (a fake lab), and a
 * grader stopped by a signal leaving nothing behind.
 *
 * First, unit tests of the parts that need no grading run, linked in from
 * autograder/src, in a few seconds: rubric validation (test_rubric_*), the
 * scoring of speed tests from a bench's JSON (test_speed_*: speed cannot run
 * without a GPU, its scoring can), the table, the rerun hint and
 * results.json with its leaderboard (test_table_*, test_rerun_*, test_json_*,
 * test_report_*, test_leaderboard_*, test_bonus_*), and the private copy:
 * copying, hashing, removing and handing over a tree, the student files of a
 * lab (test_tree_*, test_lab_*), and the points the handouts state
 * (test_handout_points). GRADE_TEST_FILTER (a cmocka glob, e.g.
 * 'test_rubric*') runs only the tests whose names match; every test not
 * named here grades whole submissions, and so does test_speed_path_on_emulator
 * among the test_speed_* ones.
 *
 * One cmocka test per case, so the runner counts them.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "grade.h"
#include "json.h"
#include "report_fixture.h"

#ifndef GRADE_BIN
#error "build with -DGRADE_BIN=\"path to grade\" -DGRADE_ROOT=\"the course tree\""
#endif

#define MAXN 24

typedef struct {
    char lab[96], nn[8], name[64], dir[PATH_MAX];
    char lose[MAXN][96], keep[MAXN][96], seed[MAXN][96];
    int nlose, nkeep, nseed;
    char output_has[256];  /* text the first lost test's output must show */
    char lose_status[32];  /* the status every lost test must have: timeout, crashed, ... */
    int build_error;       /* "build-error": the defect is that it does not build (or link) */
    char test_name[200];
    /* The speed path on the emulator (--emu-speed-args), for a defect only a
     * benchmark shows: the bench's arguments, the speed test it must lose
     * (counted, no points) and what that test's output must show. */
    char speed_args[256], lose_speed[96], speed_output_has[256];
    char speed_test_name[220];
} wrong_case_t;

static char tmp[PATH_MAX];
/* "--base-cache TMP/base-cache": most runs share the course libraries built
 * by the first (test_base_cache checks that this changes no result; the
 * Gradescope tests build without it, as run_autograder does when it cannot
 * run student code as another user). */
static char cache_flag[PATH_MAX + 32];
static const char *file_text(const char *path);
static double json_load_score(const char *path);
static int grade_args(const char *args, const char *log);
static wrong_case_t cases[256];
static int ncases;

/* Run a shell command with a hard time limit; its exit status, or -1. */
static int sh(const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The start of a file, as a string in buf; 0, or -1 when it cannot be read. */
static int read_text(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return 0;
}

/* Does a file contain a string? (the grader's printed table) */
static int file_has(const char *path, const char *needle) {
    static char buf[1 << 20];
    return read_text(path, buf, sizeof buf) == 0 && strstr(buf, needle) != NULL;
}

/* The rubric's display name of a check, as results.json names it ("lab NN: name",
 * "(bonus)" after a bonus test's), and its points. Returns 0 if the rubric has
 * no such check, 2 for a bonus test, 1 for any other. */
static int json_name_of(const char *nn, const char *check, char *out, size_t n, double *points) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/autograder/rubrics/%s.json", GRADE_ROOT, nn);
    json_t *r = json_load_file(path, 0, NULL);
    json_t *tests = json_object_get(r, "tests"), *t;
    size_t i;
    int found = 0;
    json_array_foreach(tests, i, t) {
        const char *c = json_string_value(json_object_get(t, "check"));
        if (c && !strcmp(c, check)) {
            snprintf(out, n, "lab %s: %s%s", nn, json_string_value(json_object_get(t, "name")),
                     json_is_true(json_object_get(t, "bonus")) ? " (bonus)" : "");
            if (points) *points = json_number_value(json_object_get(t, "points"));
            found = json_is_true(json_object_get(t, "bonus")) ? 2 : 1;
            break;
        }
    }
    json_decref(r);
    return found;
}

/* Score and max of one test in a results.json; -1 when absent. */
static double score_of(json_t *res, const char *name, double *max) {
    json_t *tests = json_object_get(res, "tests"), *t;
    size_t i;
    json_array_foreach(tests, i, t) {
        const char *nm = json_string_value(json_object_get(t, "name"));
        if (nm && !strcmp(nm, name)) {
            *max = json_number_value(json_object_get(t, "max_score"));
            return json_number_value(json_object_get(t, "score"));
        }
    }
    *max = -1;
    return -1;
}

/* ---- unit tests: speed scoring, rubric validation, leaderboard ----------------- */

/* An absolute speed test as lab 05's rubric writes it: 5 points for 35% MFU,
 * none at 10%. */
static rubric_test_t mfu_test(void) {
    rubric_test_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "training speed");
    t.kind = KIND_SPEED;
    snprintf(t.metric, sizeof t.metric, "mfu");
    t.points = 5;
    t.full_at = 0.35;
    t.zero_at = 0.10;
    return t;
}

/* A ratio speed test as lab 04's rubric writes it. */
static rubric_test_t ratio_test(void) {
    rubric_test_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "mma speed");
    t.kind = KIND_SPEED;
    snprintf(t.kernel, sizeof t.kernel, "04 matmul_mma (bf16)");
    snprintf(t.baseline, sizeof t.baseline, "cuBLAS bf16");
    t.points = 5;
    t.full_at = 0.5;
    t.zero_at = 0.15;
    return t;
}

/* What the grader does with a bench's JSON after the run: a fresh result as
 * grade_lab() makes it, then speed_score(), as a grader of the emulator
 * build (emulated) or of the GPU build. */
static result_t score_bench_as(const rubric_test_t *t, const char *json, int emulated) {
    result_t r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.max_score = t->points;
    r.counted = 1;
    r.measured = -1;
    r.status = ST_ERROR;
    speed_score(&r, json, emulated);
    return r;
}

/* The JSON as a GPU grader (--target cuda) scores it. */
static result_t score_bench(const rubric_test_t *t, const char *json) { return score_bench_as(t, json, 0); }

static void test_speed_fraction_clamps(void **state) {
    (void)state;
    assert_true(fabs(speed_fraction(0.35, 0.10, 0.35) - 1.0) < 1e-12);
    assert_true(fabs(speed_fraction(0.225, 0.10, 0.35) - 0.5) < 1e-12);
    assert_true(fabs(speed_fraction(0.90, 0.10, 0.35) - 1.0) < 1e-12); /* capped above full_at */
    assert_true(speed_fraction(0.10, 0.10, 0.35) == 0.0);
    assert_true(speed_fraction(0.01, 0.10, 0.35) == 0.0);
    assert_true(speed_fraction(NAN, 0.10, 0.35) == 0.0); /* NaN compares false: must not leak through */
    assert_true(speed_fraction(-INFINITY, 0.10, 0.35) == 0.0);
}

/* Full, partial (linear), zero and capped scores of the absolute kind. */
static void test_speed_mfu_scores(void **state) {
    (void)state;
    const rubric_test_t t = mfu_test();
    result_t r = score_bench(&t, "{\"device\": \"NVIDIA H200\", \"step_ms\": 310.5, \"tokens_per_s\": 26384.5, \"mfu\": 0.35}");
    assert_int_equal(r.status, ST_PASS);
    assert_true(fabs(r.score - 5.0) < 1e-9);
    assert_true(r.counted);
    assert_true(fabs(r.measured - 0.35) < 1e-12);
    assert_string_equal(r.figure, "MFU 35.0%");
    assert_string_equal(r.message, "full points at MFU 35%, none at 10%");

    r = score_bench(&t, "{\"device\": \"NVIDIA H200\", \"mfu\": 0.312}");
    assert_int_equal(r.status, ST_PARTIAL);
    assert_true(fabs(r.score - 5.0 * (0.312 - 0.10) / 0.25) < 1e-9); /* 4.24 */
    assert_string_equal(r.figure, "MFU 31.2%");

    r = score_bench(&t, "{\"mfu\": 0.225}");
    assert_int_equal(r.status, ST_PARTIAL);
    assert_true(fabs(r.score - 2.5) < 1e-9);

    r = score_bench(&t, "{\"mfu\": 0.62}");
    assert_int_equal(r.status, ST_PASS);
    assert_true(fabs(r.score - 5.0) < 1e-9); /* no more than the test's points */
    assert_string_equal(r.figure, "MFU 62.0%");

    r = score_bench(&t, "{\"mfu\": 1.0}"); /* the ceiling itself is possible: only above it fails */
    assert_int_equal(r.status, ST_PASS);
    assert_true(fabs(r.score - 5.0) < 1e-9);

    const double zero[] = {0.10, 0.04};
    const char *zero_json[] = {"{\"mfu\": 0.10}", "{\"mfu\": 0.04}"};
    for (int i = 0; i < 2; i++) {
        r = score_bench(&t, zero_json[i]);
        assert_int_equal(r.status, ST_FAIL);
        assert_true(r.score == 0.0);
        assert_true(r.counted); /* measured and slow: a real zero */
        assert_true(fabs(r.measured - zero[i]) < 1e-12);
    }
}

/* A bench that found the work wrong says so instead of timing it: a counted
 * zero with its reason, whatever numbers come with it. Only "wrong" does
 * that; another top-level status leaves the figure to be graded. */
static void test_speed_bench_says_wrong(void **state) {
    (void)state;
    const rubric_test_t t = mfu_test();
    result_t r = score_bench(&t, "{\"device\": \"NVIDIA H200\", \"status\": \"wrong\", \"message\": "
                                 "\"rmsnorm_backward_gpu dinp at this run's shape (N = 8192 rows, D = 768): 4096 of ...\", "
                                 "\"tokens_per_s\": null, \"mfu\": null}");
    assert_int_equal(r.status, ST_FAIL);
    assert_true(r.counted);
    assert_true(r.score == 0.0);
    assert_non_null(strstr(r.message, "the benchmark says 'wrong': rmsnorm_backward_gpu dinp"));
    r = score_bench(&t, "{\"status\": \"wrong\", \"mfu\": 0.5}"); /* a figure does not rescue it */
    assert_int_equal(r.status, ST_FAIL);
    assert_true(r.score == 0.0);
    r = score_bench(&t, "{\"status\": \"ok\", \"mfu\": 0.35}");
    assert_int_equal(r.status, ST_PASS);
    r = score_bench(&t, "{\"status\": \"wrong\", \"message\": 7, \"mfu\": 0.5}"); /* a reason that is no string */
    assert_int_equal(r.status, ST_FAIL);
    assert_string_equal(r.message, "the benchmark says 'wrong': (no reason given)");
    /* Only "wrong" fails it: any other top-level status is no verdict on the work. */
    r = score_bench(&t, "{\"status\": \"done\", \"mfu\": 0.35}");
    assert_int_equal(r.status, ST_PASS);
    assert_true(fabs(r.score - 5.0) < 1e-9);
}

/* The bench's strings quoted in a message (its status, its reason, the
 * device) are the submission's: a newline or a terminal escape in them is
 * shown as '?', so a test stays one line of the grader's table. */
static void test_speed_message_control_bytes(void **state) {
    (void)state;
    const rubric_test_t t = mfu_test(), rt = ratio_test();
    result_t r = score_bench(&t, "{\"status\": \"wrong\", \"message\": \"bad\\nPASS 10/10\\u001b[2J\", \"mfu\": 0.5}");
    print_message("  %s\n", r.message);
    assert_int_equal(r.status, ST_FAIL);
    assert_non_null(strstr(r.message, "the benchmark says 'wrong': bad?PASS 10/10?[2J"));
    r = score_bench(&rt, "{\"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", \"status\": \"oops\\r\\n\\t\"}]}");
    print_message("  %s\n", r.message);
    assert_int_equal(r.status, ST_FAIL);
    assert_non_null(strstr(r.message, "the benchmark says 'oops\?\?\?' for 04 matmul_mma (bf16)"));
    r = score_bench(&t, "{\"device\": \"GPU\\u0007\\u007f\", \"mfu\": null}");
    print_message("  %s\n", r.message);
    assert_non_null(strstr(r.message, "no MFU on 'GPU\?\?'"));
    /* 0x1f is the last control byte, 0x20 (space) and 0x7e are kept. */
    r = score_bench(&t, "{\"device\": \"a\\u001fb c~\", \"mfu\": null}");
    assert_non_null(strstr(r.message, "no MFU on 'a?b c~'"));
}

/* Nothing to grade: never a pass, never points, never a crash. A missing or
 * null metric says nothing about the submission and is left out of the
 * total; a value no run can produce counts as a zero. */
static void test_speed_mfu_unmeasured(void **state) {
    (void)state;
    const rubric_test_t t = mfu_test();
    result_t r = score_bench(&t, "{\"device\": \"NVIDIA GB300\", \"step_ms\": 99.0, \"tokens_per_s\": 82000.0, \"mfu\": null}");
    assert_int_equal(r.status, ST_ERROR);
    assert_true(r.score == 0.0);
    assert_false(r.counted);
    assert_true(r.measured < 0); /* so no leaderboard entry */
    assert_non_null(strstr(r.message, "no MFU on 'NVIDIA GB300'"));
    assert_non_null(strstr(r.message, "--peak-tflops"));
    r = score_bench(&t, "{\"mfu\": null}"); /* no "device": the message still reads */
    assert_string_equal(r.message, "no MFU on 'this device': bf16 peak unknown; add --peak-tflops N to bench_args in "
                                   "the rubric");

    r = score_bench(&t, "{\"device\": \"NVIDIA H200\", \"tokens_per_s\": 82000.0}");
    assert_int_equal(r.status, ST_ERROR);
    assert_false(r.counted);
    assert_non_null(strstr(r.message, "no \"mfu\""));

    r = score_bench(&t, "{\"mfu\": \"fast\"}");
    assert_int_equal(r.status, ST_ERROR);
    assert_false(r.counted);
    assert_true(r.score == 0.0);
    assert_string_equal(r.message, "\"mfu\" in the benchmark's JSON is not a number");

    /* Counted zeros: what a broken bench or timer writes. NaN is not JSON. */
    const char *broken[] = {"{\"mfu\": NaN}", "{\"mfu\": nan}", "{\"mfu\": 0}", "{\"mfu\": -0.3}", "{\"mfu\": 1.7}",
                            "", NULL, "[0.35]", "{\"mfu\": 0.35", "garbage"};
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        r = score_bench(&t, broken[i]);
        if (r.status != ST_FAIL || r.score != 0.0 || !r.counted)
            fail_msg("bench JSON '%s': status %s, %g points, counted %d; want a counted fail with 0",
                     broken[i] ? broken[i] : "(none)", status_name(r.status), r.score, r.counted);
    }
    r = score_bench(&t, "{\"mfu\": 1.7}");
    assert_non_null(strstr(r.message, "above the possible 100%"));
}

/* The other metric: thresholds and figure in its own unit. */
static void test_speed_tokens_per_s(void **state) {
    (void)state;
    rubric_test_t t = mfu_test();
    snprintf(t.metric, sizeof t.metric, "tokens_per_s");
    t.full_at = 200000;
    t.zero_at = 50000;
    result_t r = score_bench(&t, "{\"tokens_per_s\": 125000.0, \"mfu\": null}");
    assert_int_equal(r.status, ST_PARTIAL);
    assert_true(fabs(r.score - 2.5) < 1e-9);
    assert_string_equal(r.figure, "125.0k tok/s");
    assert_string_equal(r.message, "full points at 200k tok/s, none at 50k tok/s");
    r = score_bench(&t, "{\"tokens_per_s\": 5e7}"); /* no ceiling: a faster run is no broken one */
    assert_int_equal(r.status, ST_PASS);
    assert_string_equal(r.figure, "50000.0k tok/s");
    r = score_bench(&t, "{\"device\": \"NVIDIA H200\", \"tokens_per_s\": null}");
    assert_int_equal(r.status, ST_ERROR);
    assert_false(r.counted);
    assert_string_equal(r.message, "no tokens_per_s on 'NVIDIA H200': the benchmark measured no throughput");
}

/* The ratio kind scores exactly as before the absolute kind existed; a run
 * with no baseline is left out on the emulator and a counted zero on a GPU. */
static void test_speed_ratio_unchanged(void **state) {
    (void)state;
    const rubric_test_t t = ratio_test();
    const char *fmt = "{\"results\": [{\"kernel\": \"cuBLAS bf16\", \"tflops\": 700.0, \"ratio\": 1.0},"
                      " {\"kernel\": \"04 matmul_mma (bf16)\", \"tflops\": 227.5, \"ratio\": %s, \"status\": \"%s\"}]}";
    char json[512];
    snprintf(json, sizeof json, fmt, "0.325", "ok");
    result_t r = score_bench(&t, json);
    assert_int_equal(r.status, ST_PARTIAL);
    assert_true(fabs(r.score - 2.5) < 1e-9);
    assert_true(fabs(r.measured - 0.325) < 1e-12);
    assert_true(r.counted);
    assert_string_equal(r.figure, "32.5% cuBLAS bf16");
    assert_string_equal(r.message, "full points at 50% of cuBLAS bf16, none at 15%");

    snprintf(json, sizeof json, fmt, "0.71", "ok");
    r = score_bench(&t, json);
    assert_int_equal(r.status, ST_PASS);
    assert_true(fabs(r.score - 5.0) < 1e-9);

    snprintf(json, sizeof json, fmt, "0.1", "ok");
    r = score_bench(&t, json);
    assert_int_equal(r.status, ST_FAIL);
    assert_true(r.score == 0.0 && r.counted);

    snprintf(json, sizeof json, fmt, "0.9", "wrong");
    r = score_bench(&t, json);
    assert_int_equal(r.status, ST_FAIL);
    assert_true(r.score == 0.0);
    assert_string_equal(r.message, "the benchmark says 'wrong' for 04 matmul_mma (bf16)");

    r = score_bench(&t, "{\"results\": [{\"kernel\": \"cuBLAS bf16\", \"ratio\": 1.0}]}");
    assert_int_equal(r.status, ST_ERROR);
    assert_true(r.score == 0.0 && r.counted);
    assert_non_null(strstr(r.message, "no row for kernel"));

    r = score_bench(&t, "{\"mfu\": 0.5}"); /* a ratio test ignores top-level metrics */
    assert_int_equal(r.status, ST_ERROR);
    assert_true(r.score == 0.0);

    /* No baseline in the emulator's run (its bench has no cuBLAS): the kernel is fine and
     * there is nothing to divide by, so the test is a grader error left out of the total. */
    r = score_bench_as(&t, "{\"emulator\": true, \"baseline\": null, \"results\": [{\"kernel\": "
                        "\"04 matmul_mma (bf16)\", \"tflops\": 0.001, \"ratio\": null, \"status\": \"ok\"}]}", 1);
    assert_int_equal(r.status, ST_ERROR);
    assert_true(r.score == 0.0 && !r.counted);
    assert_string_equal(r.message, "no baseline was measured (no cuBLAS bf16 in this run), so there is no ratio to grade");
    /* On a GPU the bench times its baseline before any kernel: none there means it did not
     * run in the process the code under test shares. Left out, a submission that broke it
     * would score a higher percentage than an honest slow one; it is a counted zero. */
    const char *no_base[] = {
        "{\"emulator\": false, \"baseline\": null, \"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", "
        "\"tflops\": 0.001, \"ratio\": null, \"status\": \"ok\"}]}",
        "{\"baseline\": null, \"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", "
        "\"tflops\": 0.001, \"ratio\": null, \"status\": \"ok\"}]}",
    };
    for (size_t i = 0; i < sizeof no_base / sizeof *no_base; i++) {
        r = score_bench(&t, no_base[i]);
        if (r.status != ST_FAIL || r.score != 0.0 || !r.counted)
            fail_msg("%s: status %s, %g points, counted %d; want a counted fail with 0", no_base[i],
                     status_name(r.status), r.score, r.counted);
        assert_string_equal(r.message, "no baseline was measured (no cuBLAS bf16 in this run): it did not run in "
                                       "the benchmark's process, which the submission's code shares, so there is "
                                       "no ratio to grade; no points (if the reference solution shows the same, "
                                       "it is a grader problem)");
        double max = 0;
        assert_true(results_total(&r, 1, &max) == 0.0 && max == t.points); /* in the points possible */
    }
    /* ... but a wrong result without a baseline still fails and counts. */
    r = score_bench(&t, "{\"baseline\": null, \"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", "
                        "\"ratio\": null, \"status\": \"wrong\"}]}");
    assert_int_equal(r.status, ST_FAIL);
    assert_true(r.score == 0.0 && r.counted);
    /* Only the bench's own "baseline": null leaves a test out of the total: JSON without the
     * key (rewritten by the code under test, which shares the bench's process) is a counted
     * zero, not a way to drop a slow kernel from the total. */
    r = score_bench(&t, "{\"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", "
                        "\"tflops\": 0.001, \"ratio\": null, \"status\": \"ok\"}]}");
    assert_int_equal(r.status, ST_FAIL);
    assert_true(r.score == 0.0 && r.counted);
}

/* Whether the times are the emulator's is the grader's to say (--target), not
 * the JSON's, which the submission's code can rewrite from inside the bench's
 * process. A GPU run whose JSON claims the emulator would have its slow
 * kernel left out of the total instead of counted: a counted zero that says
 * why. An emulator run whose JSON says otherwise is as forged. Without the
 * key, the grader's own knowledge decides. */
static void test_speed_emulator_forged(void **state) {
    (void)state;
    const rubric_test_t t = ratio_test();
    const char *no_ratio = "{\"emulator\": %s, \"baseline\": null, \"results\": [{\"kernel\": "
                           "\"04 matmul_mma (bf16)\", \"tflops\": 0.001, \"ratio\": null, \"status\": \"ok\"}]}";
    const struct {
        const char *flag;
        int emulated;
        const char *says, *ran;
    } forged[] = {{"true", 0, "true", "GPU"}, {"false", 1, "false", "emulator"}, {"\"yes\"", 0, "(not true or false)", "GPU"},
                  {"1", 1, "(not true or false)", "emulator"}, {"null", 0, "(not true or false)", "GPU"}};
    char json[512], want[512];
    for (size_t i = 0; i < sizeof forged / sizeof *forged; i++) {
        snprintf(json, sizeof json, no_ratio, forged[i].flag);
        result_t r = score_bench_as(&t, json, forged[i].emulated);
        snprintf(want, sizeof want,
                 "the benchmark's JSON says \"emulator\": %s, but the grader ran its %s build: the JSON is not the "
                 "benchmark's own (the submission's code shares its process); no points", forged[i].says,
                 forged[i].ran);
        if (r.status != ST_FAIL || r.score != 0.0 || !r.counted || strcmp(r.message, want))
            fail_msg("\"emulator\": %s graded as %s: status %s, %g points, counted %d, '%s'", forged[i].flag,
                     forged[i].ran, status_name(r.status), r.score, r.counted, r.message);
    }
    /* The same on a test of "over", and on an absolute metric, whose bench writes no such key. */
    rubric_test_t o = ratio_test();
    snprintf(o.kernel, sizeof o.kernel, "01 matmul_naive");
    snprintf(o.over, sizeof o.over, "01 matmul_naive_uncoalesced");
    o.implausible_above = 100.0;
    const char *slow = "{\"emulator\": true, \"results\": [{\"kernel\": \"01 matmul_naive_uncoalesced\", \"ms\": 10.0},"
                       " {\"kernel\": \"01 matmul_naive\", \"ms\": 10.0}]}";
    result_t r = score_bench(&o, slow);
    assert_true(r.status == ST_FAIL && r.score == 0.0 && r.counted);
    assert_non_null(strstr(r.message, "but the grader ran its GPU build"));
    const rubric_test_t m = mfu_test();
    r = score_bench(&m, "{\"emulator\": true, \"mfu\": 0.02}");
    assert_true(r.status == ST_FAIL && r.score == 0.0 && r.counted);
    /* Without the key: the emulator grader leaves both out (CPU times, no
     * cuBLAS), and the GPU grader counts a missing baseline as a zero. */
    r = score_bench_as(&t, "{\"baseline\": null, \"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", "
                           "\"ratio\": null, \"status\": \"ok\"}]}", 1);
    assert_true(r.status == ST_ERROR && !r.counted);
    assert_non_null(strstr(r.message, "no baseline was measured"));
    r = score_bench_as(&o, "{\"results\": [{\"kernel\": \"01 matmul_naive_uncoalesced\", \"ms\": 10.0},"
                           " {\"kernel\": \"01 matmul_naive\", \"ms\": 10.0}]}", 1);
    assert_true(r.status == ST_ERROR && !r.counted);
    assert_non_null(strstr(r.message, "graded only on a GPU"));
    r = score_bench(&t, "{\"baseline\": null, \"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", "
                        "\"ratio\": null, \"status\": \"ok\"}]}");
    assert_true(r.status == ST_FAIL && r.score == 0.0 && r.counted);
    /* The honest flags score as before. */
    snprintf(json, sizeof json, no_ratio, "true");
    r = score_bench_as(&t, json, 1);
    assert_true(r.status == ST_ERROR && !r.counted);
    r = score_bench(&m, "{\"emulator\": false, \"mfu\": 0.35}");
    assert_true(r.status == ST_PASS && r.counted);
}

/* A ratio past the test's "implausible_above" (default 1.25) is no
 * measurement of the work: a counted zero that says why, no leaderboard
 * entry. Up to it the scoring is as before; a rubric may set its own. */
/* "over": the ratio is another kernel's time over this one's, from their "ms"
 * in the same run; left out on the emulator; a wrong or missing row of
 * either kernel earns nothing; a speed-up past implausible_above fails. */
static void test_speed_over_kernel(void **state) {
    (void)state;
    rubric_test_t t = ratio_test();
    snprintf(t.name, sizeof t.name, "coalescing pays");
    snprintf(t.kernel, sizeof t.kernel, "01 matmul_naive");
    snprintf(t.over, sizeof t.over, "01 matmul_naive_uncoalesced");
    snprintf(t.baseline, sizeof t.baseline, "01 matmul_naive_uncoalesced");
    t.points = 2;
    t.full_at = 3.0;
    t.zero_at = 1.5;
    t.implausible_above = 100.0;
    const char *fmt = "{\"emulator\": %s, \"baseline\": \"cublas\", \"results\": ["
                      "{\"kernel\": \"01 matmul_naive_uncoalesced\", \"ms\": %s, \"ratio\": 0.01, \"status\": \"%s\"},"
                      " {\"kernel\": \"01 matmul_naive\", \"ms\": 10.0, \"ratio\": 0.05, \"status\": \"%s\"}]}";
    char json[512];
    snprintf(json, sizeof json, fmt, "false", "40.0", "ok", "ok"); /* 4x: full */
    result_t r = score_bench(&t, json);
    assert_int_equal(r.status, ST_PASS);
    assert_true(fabs(r.score - 2.0) < 1e-9 && fabs(r.measured - 4.0) < 1e-12 && r.counted);
    assert_string_equal(r.figure, "4.00x 01 matmul_naive_uncoalesced");
    snprintf(json, sizeof json, fmt, "false", "22.5", "ok", "ok"); /* 2.25x: half way */
    r = score_bench(&t, json);
    assert_int_equal(r.status, ST_PARTIAL);
    assert_true(fabs(r.score - 1.0) < 1e-9);
    snprintf(json, sizeof json, fmt, "false", "11.0", "ok", "ok"); /* 1.1x: "uncoalesced" is coalesced too */
    r = score_bench(&t, json);
    assert_int_equal(r.status, ST_FAIL);
    assert_true(r.score == 0.0 && r.counted);
    assert_non_null(strstr(r.message, "full points at 3.00x the speed of 01 matmul_naive_uncoalesced"));
    snprintf(json, sizeof json, fmt, "false", "40.0", "ok", "wrong");
    r = score_bench(&t, json);
    assert_true(r.status == ST_FAIL && r.score == 0.0 && r.counted);
    assert_non_null(strstr(r.message, "'wrong' for 01 matmul_naive"));
    snprintf(json, sizeof json, fmt, "false", "40.0", "not implemented", "ok");
    r = score_bench(&t, json);
    assert_true(r.status == ST_FAIL && r.score == 0.0 && r.counted);
    assert_non_null(strstr(r.message, "no speed-up to grade"));
    snprintf(json, sizeof json, fmt, "false", "1000.0", "ok", "ok"); /* 100x: at the limit, not above it */
    r = score_bench(&t, json);
    assert_true(r.status == ST_PASS && fabs(r.measured - 100.0) < 1e-9);
    snprintf(json, sizeof json, fmt, "false", "2000.0", "ok", "ok"); /* 200x */
    r = score_bench(&t, json);
    assert_true(r.status == ST_FAIL && r.score == 0.0 && r.counted && r.measured < 0);
    assert_string_equal(r.message, "200.00x the speed of 01 matmul_naive_uncoalesced is more than the 100.00x any "
                                   "honest pair of kernels reaches here: the time did not measure the work; no points");
    t.implausible_above = 0; /* a test made without rubric_load(): the default, 1.25 */
    snprintf(json, sizeof json, fmt, "false", "40.0", "ok", "ok");
    r = score_bench(&t, json);
    assert_true(r.status == ST_FAIL && r.score == 0.0);
    assert_non_null(strstr(r.message, "4.00x the speed of 01 matmul_naive_uncoalesced is more than the 1.25x"));
    t.implausible_above = 100.0;
    snprintf(json, sizeof json, fmt, "true", "40.0", "ok", "ok"); /* emulator times */
    r = score_bench_as(&t, json, 1);
    assert_true(r.status == ST_ERROR && !r.counted);
    assert_non_null(strstr(r.message, "graded only on a GPU"));
    r = score_bench(&t, "{\"results\": [{\"kernel\": \"01 matmul_naive\", \"ms\": 10.0}]}");
    assert_int_equal(r.status, ST_ERROR);
    assert_non_null(strstr(r.message, "no row for kernel '01 matmul_naive_uncoalesced'"));
    /* Its leaderboard entry is the speed-up itself. */
    snprintf(json, sizeof json, fmt, "false", "40.0", "ok", "ok");
    r = score_bench(&t, json);
    snprintf(r.nn, sizeof r.nn, "01");
    r.number = 1;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/over.json", tmp);
    assert_int_equal(report_json(path, &r, 1, 1.0, "summary"), 0);
    json_t *j = json_load_file(path, 0, NULL);
    json_t *e = json_array_get(json_object_get(j, "leaderboard"), 0);
    assert_non_null(e);
    assert_string_equal(json_string_value(json_object_get(e, "name")),
                        "lab 01 01 matmul_naive (times the speed of 01 matmul_naive_uncoalesced)");
    assert_true(fabs(json_number_value(json_object_get(e, "value")) - 4.0) < 1e-9);
    json_decref(j);
}

static void test_speed_ratio_implausible(void **state) {
    (void)state;
    rubric_test_t t = ratio_test();
    const char *fmt = "{\"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", \"ratio\": %s, \"status\": \"ok\"}]}";
    char json[256];
    snprintf(json, sizeof json, fmt, "1.2");
    result_t r = score_bench(&t, json);
    assert_int_equal(r.status, ST_PASS);
    assert_true(fabs(r.score - 5.0) < 1e-9);
    snprintf(json, sizeof json, fmt, "1.25"); /* "above" 1.25 fails; 1.25 itself is a measurement */
    r = score_bench(&t, json);
    assert_int_equal(r.status, ST_PASS);
    const char *bad[] = {"1.26", "3.5", "250.0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(json, sizeof json, fmt, bad[i]);
        r = score_bench(&t, json);
        if (r.status != ST_FAIL || r.score != 0.0 || !r.counted || r.measured >= 0)
            fail_msg("ratio %s: status %s, %g points, counted %d, measured %g; want a counted fail with 0 and no "
                     "leaderboard value", bad[i], status_name(r.status), r.score, r.counted, r.measured);
        if (!strstr(r.message, "more than the 1.25x any kernel can plausibly reach") ||
            !strstr(r.message, "cuBLAS bf16"))
            fail_msg("ratio %s: the message '%s' does not say why", bad[i], r.message);
    }
    assert_string_equal(r.figure, "25000.0% cuBLAS bf16"); /* the measurement is still shown */
    t.implausible_above = 4.0;
    snprintf(json, sizeof json, fmt, "3.5");
    r = score_bench(&t, json);
    assert_int_equal(r.status, ST_PASS);
    snprintf(json, sizeof json, fmt, "4.5");
    r = score_bench(&t, json);
    assert_int_equal(r.status, ST_FAIL);
    assert_string_equal(r.message, "4.50x the speed of cuBLAS bf16 is more than the 4.00x any kernel can plausibly "
                                   "reach here: the time did not measure the work (a result reused from an earlier "
                                   "run?); no points");
}

/* The speed-up ("over") needs both kernels timed: a row without "ms", or
 * with a time of 0 or below, is no measurement. It is a counted zero that
 * names the kernel, with no figure and no leaderboard value; a missing row
 * of either kernel is named by its own name. */
static void test_speed_over_unmeasured(void **state) {
    (void)state;
    rubric_test_t t = ratio_test();
    snprintf(t.kernel, sizeof t.kernel, "01 matmul_naive");
    snprintf(t.over, sizeof t.over, "01 matmul_naive_uncoalesced");
    snprintf(t.baseline, sizeof t.baseline, "01 matmul_naive_uncoalesced");
    t.points = 2;
    t.full_at = 3.0;
    t.zero_at = 1.5;
    t.implausible_above = 100.0;
    const char *fmt = "{\"results\": [{\"kernel\": \"01 matmul_naive_uncoalesced\"%s},"
                      " {\"kernel\": \"01 matmul_naive\"%s}]}";
    const struct { const char *over, *kernel, *want; } bad[] = {
        {", \"ms\": 40.0", "", "the benchmark says 'ok' for 01 matmul_naive, but its time (ms) is missing, 0 or below: nothing was measured"},
        {", \"ms\": 40.0", ", \"ms\": 0", "the benchmark says 'ok' for 01 matmul_naive, but its time (ms) is missing, 0 or below: nothing was measured"},
        {", \"ms\": 40.0", ", \"ms\": -10.0", "the benchmark says 'ok' for 01 matmul_naive, but its time (ms) is missing, 0 or below: nothing was measured"},
        {", \"ms\": 40.0", ", \"ms\": \"10\"", "the benchmark says 'ok' for 01 matmul_naive, but its time (ms) is missing, 0 or below: nothing was measured"},
        {"", ", \"ms\": 10.0", "the benchmark says 'ok' for 01 matmul_naive_uncoalesced, but its time (ms) is missing, 0 or below: nothing was measured, so there is no speed-up to grade"},
        {", \"ms\": 0", ", \"ms\": 10.0", "the benchmark says 'ok' for 01 matmul_naive_uncoalesced, but its time (ms) is missing, 0 or below: nothing was measured, so there is no speed-up to grade"},
        {", \"ms\": -40.0", ", \"ms\": 10.0", "the benchmark says 'ok' for 01 matmul_naive_uncoalesced, but its time (ms) is missing, 0 or below: nothing was measured, so there is no speed-up to grade"},
    };
    char json[512];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(json, sizeof json, fmt, bad[i].over, bad[i].kernel);
        result_t r = score_bench(&t, json);
        if (r.status != ST_FAIL || r.score != 0.0 || !r.counted || r.measured >= 0 || r.figure[0])
            fail_msg("%s: status %s, %g points, counted %d, measured %g, figure '%s'; want a counted fail with 0, "
                     "no measure and no figure", json, status_name(r.status), r.score, r.counted, r.measured,
                     r.figure);
        if (!strstr(r.message, bad[i].want)) fail_msg("%s: the message '%s' does not say '%s'", json, r.message, bad[i].want);
    }
    result_t r = score_bench(&t, "{\"results\": [{\"kernel\": \"01 matmul_naive_uncoalesced\", \"ms\": 40.0}]}");
    assert_int_equal(r.status, ST_ERROR);
    assert_string_equal(r.message, "no row for kernel '01 matmul_naive' in the benchmark's JSON");
}

/* A ratio that is no measurement (0, negative, not a number) earns nothing
 * and counts, with no leaderboard value; so does a slow kernel whose JSON
 * says "baseline": null next to a ratio (only a row without a ratio, in the
 * emulator's run, is "nothing to divide by"). A missing row names the kernel. */
static void test_speed_ratio_unmeasured(void **state) {
    (void)state;
    const rubric_test_t t = ratio_test();
    const char *bad[] = {
        "{\"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", \"ratio\": 0, \"status\": \"ok\"}]}",
        "{\"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", \"ratio\": -0.5, \"status\": \"ok\"}]}",
        "{\"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", \"ratio\": \"0.4\", \"status\": \"ok\"}]}",
        "{\"baseline\": null, \"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", \"ratio\": 0, \"status\": \"ok\"}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        result_t r = score_bench(&t, bad[i]);
        if (r.status != ST_FAIL || r.score != 0.0 || !r.counted || r.measured >= 0 || r.figure[0])
            fail_msg("%s: status %s, %g points, counted %d, measured %g, figure '%s'; want a counted fail with 0",
                     bad[i], status_name(r.status), r.score, r.counted, r.measured, r.figure);
        if (strcmp(r.message, "the benchmark says 'ok' for 04 matmul_mma (bf16), but its ratio is missing, 0 or "
                              "below: nothing was measured"))
            fail_msg("%s: message '%s'", bad[i], r.message);
    }
    result_t r = score_bench(&t, "{\"baseline\": null, \"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", "
                                 "\"ratio\": 0.1, \"status\": \"ok\"}]}");
    if (r.status != ST_FAIL || r.score != 0.0 || !r.counted)
        fail_msg("a slow kernel with \"baseline\": null: status %s, counted %d; want a counted fail",
                 status_name(r.status), r.counted);
    assert_true(fabs(r.measured - 0.1) < 1e-12);
    r = score_bench(&t, "{\"results\": [{\"kernel\": \"04 matmul_mma (fp16)\", \"ratio\": 0.4}]}");
    assert_int_equal(r.status, ST_ERROR);
    assert_string_equal(r.message, "no row for kernel '04 matmul_mma (bf16)' in the benchmark's JSON");
}

/* An MFU of 0 or below is no measurement: a counted zero with no
 * leaderboard value (a figure of 0.0% would rank it). */
static void test_speed_mfu_zero_is_no_measure(void **state) {
    (void)state;
    const rubric_test_t t = mfu_test();
    const char *bad[] = {"{\"mfu\": 0}", "{\"mfu\": 0.0}", "{\"mfu\": -0.3}", "{\"mfu\": -0.0}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        result_t r = score_bench(&t, bad[i]);
        if (r.status != ST_FAIL || r.score != 0.0 || !r.counted || r.measured >= 0)
            fail_msg("%s: status %s, %g points, counted %d, measured %g; want a counted fail, no measure", bad[i],
                     status_name(r.status), r.score, r.counted, r.measured);
        if (!strstr(r.message, "which no run can measure")) fail_msg("%s: message '%s'", bad[i], r.message);
    }
    result_t r = score_bench(&t, "{\"mfu\": -0.3}");
    assert_string_equal(r.message, "the benchmark reports MFU -30.0%, which no run can measure");
}

/* speed_score() sets the score itself: what the result held before (a
 * reused result) does not survive unreadable JSON, nor does JSON with more
 * after it count; a metric named NULL or unknown is no metric. */
static void test_speed_unit_edges(void **state) {
    (void)state;
    const rubric_test_t t = mfu_test();
    result_t r;
    memset(&r, 0, sizeof r);
    r.t = &t;
    r.counted = 1;
    r.measured = -1;
    r.score = 5;
    r.status = ST_PASS;
    speed_score(&r, "not json", 0);
    assert_int_equal(r.status, ST_FAIL);
    assert_true(r.score == 0.0);
    assert_string_equal(r.message, "the benchmark wrote no readable JSON");
    /* Two values, or one and more text: which is the measurement? Neither. */
    const char *trailing[] = {"{\"mfu\": 0.35} {\"mfu\": 0.9}", "{\"mfu\": 0.35}\nPASS"};
    for (int i = 0; i < 2; i++) {
        r = score_bench(&t, trailing[i]);
        if (r.status != ST_FAIL || r.score != 0.0 || !r.counted || strcmp(r.message, "the benchmark wrote no readable JSON"))
            fail_msg("'%s': status %s, %g points, '%s'; want no readable JSON", trailing[i], status_name(r.status),
                     r.score, r.message);
    }
    assert_null(speed_metric_find(NULL));
    assert_null(speed_metric_find(""));
    assert_null(speed_metric_find("mfu "));
    assert_non_null(speed_metric_find("tokens_per_s"));
    char names[64];
    speed_metric_names(names, sizeof names);
    assert_string_equal(names, "mfu, tokens_per_s");
    speed_metric_names(names, 6); /* cut, never overflowed */
    assert_string_equal(names, "mfu, ");
}

/* Load rubric 99 with this text from a scratch course tree. */
static int load_rubric_text(const char *text, rubric_t *r, char *err, size_t errlen) {
    char root[PATH_MAX], path[PATH_MAX + 64];
    snprintf(root, sizeof root, "%s/rubric-root", tmp);
    snprintf(path, sizeof path, "%s/autograder/rubrics", root);
    if (sh("mkdir -p '%s'", path) != 0) fail_msg("cannot create %s", path);
    snprintf(path + strlen(path), sizeof path - strlen(path), "/99.json");
    FILE *f = fopen(path, "w");
    if (!f) fail_msg("cannot write %s", path);
    fputs(text, f);
    fclose(f);
    err[0] = '\0';
    return rubric_load(root, "99", r, err, errlen);
}

/* Load a rubric whose second test is a speed test with these fields
 * (JSON members without braces). */
static int load_speed_rubric(const char *fields, rubric_t *r, char *err, size_t errlen) {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"lab\": \"99-test\", \"tests\": [\n"
             "  {\"name\": \"a\", \"kind\": \"numerics\", \"check\": \"check a\", \"points\": 1},\n"
             "  {\"name\": \"speed\", \"kind\": \"speed\", \"points\": 5, %s, \"requires\": [\"check a\"]}]}\n",
             fields);
    return load_rubric_text(text, r, err, errlen);
}

/* A speed test must name the numerics checks it requires: without them a
 * kernel wrong at the edges would be paid for its speed. */
static void test_rubric_speed_needs_requires(void **state) {
    (void)state;
    static rubric_t r;
    char err[512];
    const char *text = "{\"lab\": \"99-test\", \"tests\": [\n"
                       "  {\"name\": \"a\", \"kind\": \"numerics\", \"check\": \"check a\", \"points\": 1},\n"
                       "  {\"name\": \"fast\", \"kind\": \"speed\", \"points\": 5, \"kernel\": \"k\", "
                       "\"baseline\": \"cuBLAS\", \"full_at\": 0.8, \"zero_at\": 0.2%s}]}\n";
    char buf[1024];
    snprintf(buf, sizeof buf, text, "");
    if (load_rubric_text(buf, &r, err, sizeof err) == 0) fail_msg("a speed test without \"requires\" was accepted");
    if (!strstr(err, "speed test \"fast\" has no \"requires\""))
        fail_msg("the error '%s' does not name the test and what it lacks", err);
    snprintf(buf, sizeof buf, text, ", \"requires\": []");
    if (load_rubric_text(buf, &r, err, sizeof err) == 0) fail_msg("a speed test with empty \"requires\" was accepted");
    snprintf(buf, sizeof buf, text, ", \"requires\": [\"check a\"]");
    if (load_rubric_text(buf, &r, err, sizeof err) != 0) fail_msg("the control rubric was refused: %s", err);
}

/* "ranks": the lab's default, a test's own, 1 when absent; anything but a
 * whole number from 1 to GRADE_MAX_RANKS is refused, at either level. */
static void test_rubric_ranks(void **state) {
    (void)state;
    static rubric_t r;
    char err[512], text[1024];
    const char *fmt = "{\"lab\": \"99-test\"%s, \"tests\": [{\"name\": \"a\", \"check\": \"a\", \"points\": 1},"
                      " {\"name\": \"b\", \"check\": \"b\", \"points\": 1%s}]}";
    snprintf(text, sizeof text, fmt, ", \"ranks\": 4", ", \"ranks\": 2");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("valid ranks refused: %s", err);
    assert_int_equal(r.tests[0].ranks, 4);
    assert_int_equal(r.tests[1].ranks, 2);
    snprintf(text, sizeof text, fmt, "", "");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("a rubric without ranks refused: %s", err);
    assert_int_equal(r.tests[0].ranks, 1);
    assert_int_equal(r.tests[1].ranks, 1);
    const char *bad[] = {", \"ranks\": 0", ", \"ranks\": 65", ", \"ranks\": 2.5", ", \"ranks\": \"4\"",
                         ", \"ranks\": -1", ", \"ranks\": true"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        for (int level = 0; level < 2; level++) {
            snprintf(text, sizeof text, fmt, level ? "" : bad[i], level ? bad[i] : "");
            if (load_rubric_text(text, &r, err, sizeof err) == 0)
                fail_msg("rubric with {%s} (%s) was accepted", bad[i] + 2, level ? "a test's" : "the lab's");
            if (!strstr(err, "\"ranks\" must be a whole number of MPI ranks from 1 to 64"))
                fail_msg("rubric with {%s}: error '%s' does not say what ranks may be", bad[i] + 2, err);
        }
}

/* Strict validation: each bad absolute rubric is refused with a message that
 * names what is wrong; the good one (the control) loads. */
static void test_rubric_absolute_validation(void **state) {
    (void)state;
    static rubric_t r;
    char err[512];
    if (load_speed_rubric("\"metric\": \"mfu\", \"full_at\": 0.35, \"zero_at\": 0.1", &r, err, sizeof err) != 0)
        fail_msg("a valid absolute rubric was refused: %s", err);
    assert_int_equal(r.ntests, 2);
    assert_string_equal(r.tests[1].metric, "mfu");
    assert_string_equal(r.tests[1].kernel, "");
    assert_string_equal(r.tests[1].baseline, "");
    assert_true(r.tests[1].full_at == 0.35 && r.tests[1].zero_at == 0.1);
    /* full_at may be the metric's ceiling (an MFU of 1 can be reached); zero_at left out is 0. */
    if (load_speed_rubric("\"metric\": \"mfu\", \"full_at\": 1", &r, err, sizeof err) != 0)
        fail_msg("full_at 1 for mfu was refused: %s", err);
    assert_true(r.tests[1].full_at == 1.0 && r.tests[1].zero_at == 0.0);
    if (load_speed_rubric("\"kernel\": \"k\", \"over\": \"u\", \"full_at\": 3, \"zero_at\": 1.5, "
                          "\"implausible_above\": 50", &r, err, sizeof err) != 0)
        fail_msg("a valid speed-up rubric was refused: %s", err);
    assert_string_equal(r.tests[1].over, "u");
    assert_string_equal(r.tests[1].baseline, "u"); /* what messages name */

    const struct { const char *fields, *want; } bad[] = {
        {"\"metric\": \"mfu\", \"baseline\": \"cuBLAS\", \"full_at\": 0.35, \"zero_at\": 0.1",
         "\"metric\" (an absolute measure) and \"baseline\" (a ratio to one) exclude each other"},
        {"\"metric\": \"mfu\", \"kernel\": \"train\", \"full_at\": 0.35, \"zero_at\": 0.1", "and \"kernel\""},
        {"\"metric\": \"flops\", \"full_at\": 0.35, \"zero_at\": 0.1",
         "unknown \"metric\" \"flops\"; known: mfu, tokens_per_s"},
        {"\"metric\": \"MFU\", \"full_at\": 0.35, \"zero_at\": 0.1", "unknown \"metric\" \"MFU\""},
        {"\"metric\": 1, \"full_at\": 0.35, \"zero_at\": 0.1", "\"metric\" must be a string"},
        {"\"metric\": \"\", \"kernel\": \"k\", \"full_at\": 0.35, \"zero_at\": 0.1", "unknown \"metric\" \"\""},
        {"\"metric\": \"mfu\", \"full_at\": 0.1, \"zero_at\": 0.35", "\"full_at\" > \"zero_at\" >= 0"},
        {"\"metric\": \"mfu\", \"full_at\": 0.35, \"zero_at\": 0.35", "\"full_at\" > \"zero_at\" >= 0"},
        {"\"metric\": \"mfu\", \"full_at\": 0.35, \"zero_at\": -0.1", "\"full_at\" > \"zero_at\" >= 0"},
        {"\"metric\": \"mfu\", \"full_at\": 35, \"zero_at\": 10", "0.35 is 35%"},
        {"\"metric\": \"mfu\", \"zero_at\": 0.1", "missing \"full_at\""},
        {"\"metric\": \"mfu\", \"full_at\": \"35%\", \"zero_at\": 0.1", "\"full_at\" must be a number"},
        {"\"metric\": \"mfu\", \"full_at\": null, \"zero_at\": 0.1", "\"full_at\" must be a number"},
        {"\"metric\": \"mfu\", \"full_at\": 0.35, \"zero_at\": null", "\"zero_at\" must be a number"},
        {"\"full_at\": 0.35, \"zero_at\": 0.1", "needs \"kernel\" (a ratio to the baseline) or \"metric\""},
        {"\"metric\": \"mfu\", \"over\": \"k\", \"full_at\": 0.35, \"zero_at\": 0.1", "and \"kernel\" or \"over\""},
        {"\"over\": \"k\", \"full_at\": 3, \"zero_at\": 1.5, \"implausible_above\": 50",
         "needs \"kernel\" (a ratio to the baseline) or \"metric\""},
        {"\"kernel\": \"k\", \"over\": \"k\", \"full_at\": 3, \"zero_at\": 1.5, \"implausible_above\": 50",
         "\"over\" names the test's own \"kernel\""},
        {"\"kernel\": \"k\", \"over\": \"u\", \"full_at\": 3, \"zero_at\": 1.5",
         "\"implausible_above\" 1.25 must be above \"full_at\" 3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (load_speed_rubric(bad[i].fields, &r, err, sizeof err) == 0)
            fail_msg("rubric with {%s} was accepted; it must be refused", bad[i].fields);
        if (!strstr(err, bad[i].want))
            fail_msg("rubric with {%s}: error '%s' does not say '%s'", bad[i].fields, err, bad[i].want);
        if (!strstr(err, "99.json, test 2")) fail_msg("error '%s' does not name the file and test", err);
    }
}

/* The rubric's own fields: a test worth 0 points loads (a check that only
 * gates others), a negative one does not; an empty list of tests would grade
 * nothing; a student file named ".." or a dot-file is no plain file name. */
static void test_rubric_file_fields(void **state) {
    (void)state;
    static rubric_t r;
    char err[512];
    const char *head = "{\"lab\": \"99-test\", ";
    const char *one = "\"tests\": [{\"name\": \"a\", \"kind\": \"numerics\", \"check\": \"check a\", \"points\": %s}]}";
    char text[1024];
    snprintf(text, sizeof text, "%s", head);
    snprintf(text + strlen(text), sizeof text - strlen(text), one, "0");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("a test of 0 points was refused: %s", err);
    assert_true(r.ntests == 1 && r.tests[0].points == 0.0);
    snprintf(text, sizeof text, "%s", head);
    snprintf(text + strlen(text), sizeof text - strlen(text), one, "-1");
    assert_int_equal(load_rubric_text(text, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "\"points\" must be a number >= 0"));
    snprintf(text, sizeof text, "%s\"tests\": []}", head);
    assert_int_equal(load_rubric_text(text, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "\"tests\" must be a list of 1 to"));
    snprintf(text, sizeof text, "%s\"student_files\": null, ", head);
    snprintf(text + strlen(text), sizeof text - strlen(text), one, "1");
    assert_int_equal(load_rubric_text(text, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "\"student_files\" must be a list of at most 16 file names"));
    const char *files[] = {"..", ".hidden", "a/b.cu"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(text, sizeof text, "%s\"student_files\": [\"%s\"], ", head, files[i]);
        snprintf(text + strlen(text), sizeof text - strlen(text), one, "1");
        if (load_rubric_text(text, &r, err, sizeof err) == 0) fail_msg("student file '%s' was accepted", files[i]);
        assert_non_null(strstr(err, "\"student_files\" must hold plain file names"));
    }
}

/* A field a rubric does not know is refused, naming it and the fields that
 * may be there: a misspelt "zero_At" or "may_skp", or a field of the other
 * kind of test (a speed test's "check", a numerics test's "kernel"), would
 * be ignored and the test graded on defaults. The course's rubrics and the
 * MPI fixture's load. */
static void test_rubric_unknown_fields(void **state) {
    (void)state;
    static rubric_t r;
    char err[512], text[1024];
    const char *fmt = "{\"lab\": \"99-test\"%s, \"tests\": [\n"
                      "  {\"name\": \"a\", \"kind\": \"numerics\", \"check\": \"check a\", \"points\": 1%s},\n"
                      "  {\"name\": \"speed\", \"kind\": \"speed\", \"points\": 5, \"kernel\": \"k\", \"full_at\": 0.8,"
                      " \"requires\": [\"check a\"]%s}]}\n";
    snprintf(text, sizeof text, fmt, "", "", ", \"zero_at\": 0.2");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("the control rubric was refused: %s", err);
    const struct { const char *top, *num, *speed, *want; } bad[] = {
        {", \"timeout\": 30", "", "", "99.json: \"timeout\" is no field of a rubric (misspelt?); it may have: lab, "
                                     "title, timeout_s, ranks, student_files, tests"},
        {", \"files\": [\"k.cu\"]", "", "", "99.json: \"files\" is no field of a rubric"}, /* it is student_files */
        {"", ", \"may_skp\": true", "", "test 1: \"may_skp\" is no field of a numerics test"},
        {"", ", \"kernel\": \"k\"", "", "test 1: \"kernel\" is no field of a numerics test"},
        {"", ", \"Points\": 2", "", "test 1: \"Points\" is no field of a numerics test"},
        {"", "", ", \"zero_At\": 0.2", "test 2: \"zero_At\" is no field of a speed test (misspelt?); it may have: name, "
                                        "kind, points, bonus, timeout_s, ranks, requires, kernel, over, baseline, "
                                        "metric, full_at, zero_at, implausible_above, bench_args"},
        {"", "", ", \"check\": \"check a\"", "test 2: \"check\" is no field of a speed test"},
        {"", "", ", \"may_skip\": true", "test 2: \"may_skip\" is no field of a speed test"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, fmt, bad[i].top, bad[i].num, bad[i].speed[0] ? bad[i].speed : ", \"zero_at\": 0.2");
        if (load_rubric_text(text, &r, err, sizeof err) == 0)
            fail_msg("a rubric with {%s%s%s} was accepted", bad[i].top + 2, bad[i].num, bad[i].speed);
        if (!strstr(err, bad[i].want)) fail_msg("error '%s' does not say '%s'", err, bad[i].want);
    }
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s/autograder/tests/mpi-lab", GRADE_ROOT);
    if (rubric_load(root, "90", &r, err, sizeof err) != 0) fail_msg("the MPI fixture's rubric: %s", err);
}

/* "timeout_s": the file's value is its tests' default and a test may set
 * its own; each is a whole number of seconds from 1 to 86400. A negative
 * one was an hour per test (the sandbox's fallback) with no CPU limit, a
 * fraction below 1 the run's default of 120 s. */
static void test_rubric_timeouts(void **state) {
    (void)state;
    static rubric_t r;
    char err[512], text[1024];
    const char *fmt = "{\"lab\": \"99-test\"%s, \"tests\": [{\"name\": \"a\", \"check\": \"a\", \"points\": 1},"
                      " {\"name\": \"b\", \"check\": \"b\", \"points\": 1%s}]}";
    snprintf(text, sizeof text, fmt, ", \"timeout_s\": 30", ", \"timeout_s\": 300");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("valid timeouts refused: %s", err);
    assert_int_equal(r.tests[0].timeout_s, 30);
    assert_int_equal(r.tests[1].timeout_s, 300);
    snprintf(text, sizeof text, fmt, "", ", \"timeout_s\": 86400");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("a timeout of a day refused: %s", err);
    assert_int_equal(r.tests[0].timeout_s, 0); /* none: the run's default */
    assert_int_equal(r.tests[1].timeout_s, 86400);
    snprintf(text, sizeof text, fmt, ", \"timeout_s\": 1", "");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("a timeout of 1 s refused: %s", err);
    assert_int_equal(r.tests[1].timeout_s, 1);
    const char *bad[] = {", \"timeout_s\": 0", ", \"timeout_s\": -60", ", \"timeout_s\": 0.5", ", \"timeout_s\": 30.5",
                         ", \"timeout_s\": 86401", ", \"timeout_s\": 1e12", ", \"timeout_s\": \"60\"",
                         ", \"timeout_s\": null"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        for (int level = 0; level < 2; level++) {
            snprintf(text, sizeof text, fmt, level ? "" : bad[i], level ? bad[i] : "");
            if (load_rubric_text(text, &r, err, sizeof err) == 0)
                fail_msg("rubric with {%s} (%s) was accepted", bad[i] + 2, level ? "a test's" : "the lab's");
            if (!strstr(err, "\"timeout_s\" must be a whole number of seconds from 1 to 86400"))
                fail_msg("rubric with {%s}: error '%s' does not say what timeout_s may be", bad[i] + 2, err);
        }
}

/* A rubric of text must be refused with a message that says want (and
 * names the file); fails the test otherwise. */
static void rubric_refused(const char *text, const char *want) {
    static rubric_t r;
    char err[512];
    if (load_rubric_text(text, &r, err, sizeof err) == 0) fail_msg("this rubric was accepted:\n%s", text);
    if (!strstr(err, want) || !strstr(err, "autograder/rubrics/99.json"))
        fail_msg("the error '%s' does not say '%s' (and the file) for this rubric:\n%s", err, want, text);
}

/* Malformed rubrics are refused, each with a message that says what is
 * wrong: not an object, a test that is not one, a key given twice (its
 * first value was dropped), an empty name, check, kernel, "over" or
 * "baseline", a field of the wrong type, lists that are not lists or are
 * too long, a check that is required but graded by no numerics test, JSON
 * that does not parse (with its line), and no file at all. */
static void test_rubric_malformed(void **state) {
    (void)state;
    const char *num = "{\"name\": \"a\", \"kind\": \"numerics\", \"check\": \"check a\", \"points\": 1}";
    char text[8192];
    const struct { const char *lab, *tests, *want; } bad[] = {
        {"", "", "a rubric is one JSON object"}, /* the text is the list below */
        {"\"lab\": \"99-test\"", "[1]", "test 1: a test is a JSON object"},
        {"\"lab\": \"99-test\", \"lab\": \"98-other\"", NULL, "duplicate object key"},
        {"\"lab\": \"99-test\"",
         "[{\"name\": \"a\", \"kind\": \"numerics\", \"check\": \"check a\", \"points\": 1, \"points\": 9}]",
         "duplicate object key"},
        {"\"lab\": \"\"", NULL, "\"lab\" must not be empty"},
        {"\"title\": \"t\"", NULL, "missing \"lab\""},
        {"\"lab\": 99", NULL, "\"lab\" must be a string shorter than 96 characters"},
        {"\"lab\": \"99-test\", \"title\": 5", NULL, "\"title\" must be a string shorter than 160 characters"},
        {"\"lab\": \"99-test\"", "[{\"name\": \"\", \"check\": \"check a\", \"points\": 1}]", "test 1: \"name\" must not be empty"},
        {"\"lab\": \"99-test\"", "[{\"check\": \"check a\", \"points\": 1}]", "test 1: missing \"name\""},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"\", \"points\": 1}]", "test 1: \"check\" must not be empty"},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"points\": 1}]", "test 1: missing \"check\""},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\"}]", "test 1: missing \"points\": give each test its points"},
        {"\"lab\": \"99-test\"",
         "[{\"name\": \"a\", \"check\": \"check a\", \"points\": 1}, {\"name\": \"a\", \"check\": \"check b\", \"points\": 1}]",
         "tests 1 and 2 are both named \"a\""},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\", \"points\": \"1\"}]",
         "test 1: \"points\" must be a number"},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\", \"points\": null}]",
         "test 1: \"points\" must be a number"}, /* not 0 points */
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"kind\": \"sped\", \"check\": \"check a\", \"points\": 1}]",
         "test 1: \"kind\" must be \"numerics\" or \"speed\", not \"sped\""},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\", \"points\": 1, \"bonus\": 1}]",
         "test 1: \"bonus\" must be true or false"},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\", \"points\": 1, \"may_skip\": \"yes\"}]",
         "test 1: \"may_skip\" must be true or false"},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\", \"points\": 1, \"requires\": \"check b\"}]",
         "test 1: \"requires\" must be a list of check names"},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\", \"points\": 1, \"requires\": [1]}]",
         "test 1: \"requires\" must be a list of check names"},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\", \"points\": 1, \"requires\": [\"check b\"]}]",
         "test \"a\" requires \"check b\", which no numerics test checks"},
        {"\"lab\": \"99-test\"", "[{\"name\": \"a\", \"check\": \"check a\", \"points\": 1, \"requires\": [\"\"]}]",
         "test \"a\" requires \"\", which no numerics test checks"},
        {"\"lab\": \"99-test\"", "{}", "\"tests\" must be a list of 1 to 64 tests"},
        {"\"lab\": \"99-test\"", "null", "\"tests\" must be a list of 1 to 64 tests"},
        {"\"lab\": \"99-test\", \"student_files\": \"a.cu\"", NULL, "\"student_files\" must be a list of at most 16"},
        {"\"lab\": \"99-test\", \"student_files\": [\"\"]", NULL, "\"student_files\" must hold plain file names"},
        {"\"lab\": \"99-test\", \"student_files\": [3]", NULL, "\"student_files\" must hold plain file names"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (i == 0) snprintf(text, sizeof text, "[%s]", num);
        else snprintf(text, sizeof text, "{%s%s%s%s}", bad[i].lab, bad[i].tests ? ", \"tests\": " : "",
                      bad[i].tests ? bad[i].tests : "", bad[i].tests ? "" : ", \"tests\": [{\"name\": \"a\", \"check\": "
                                                                         "\"check a\", \"points\": 1}]");
        rubric_refused(text, bad[i].want);
    }
    /* A speed test: an empty kernel, "over" or "baseline" is refused, not read as absent
     * ("over": "" would make a plain ratio test against the baseline). */
    const char *empty[] = {"\"kernel\": \"\"", "\"kernel\": \"k\", \"over\": \"\"", "\"kernel\": \"k\", \"baseline\": \"\""};
    const char *empty_want[] = {"\"kernel\" must not be empty", "\"over\" must not be empty",
                                "\"baseline\" must not be empty"};
    for (int i = 0; i < 3; i++) {
        snprintf(text, sizeof text,
                 "{\"lab\": \"99-test\", \"tests\": [%s, {\"name\": \"s\", \"kind\": \"speed\", \"points\": 1, %s, "
                 "\"full_at\": 0.8, \"zero_at\": 0.2, \"implausible_above\": 50, \"requires\": [\"check a\"]}]}",
                 num, empty[i]);
        rubric_refused(text, empty_want[i]);
    }
    /* A check is required of a numerics test: a speed test, which has none, does not
     * answer for an empty name. */
    snprintf(text, sizeof text,
             "{\"lab\": \"99-test\", \"tests\": [{\"name\": \"a\", \"check\": \"check a\", \"points\": 1, "
             "\"requires\": [\"\"]}, {\"name\": \"s\", \"kind\": \"speed\", \"points\": 1, \"kernel\": \"k\", "
             "\"full_at\": 0.8, \"requires\": [\"check a\"]}]}");
    rubric_refused(text, "test \"a\" requires \"\", which no numerics test checks");
    /* JSON that does not parse: the reason and its line. */
    rubric_refused("{\"lab\": \"99-test\",\n \"tests\": [\n}", "(line 3)");
    static rubric_t r;
    char err[512];
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s/rubric-root", tmp);
    assert_int_equal(rubric_load(root, "98", &r, err, sizeof err), -1);
    assert_string_equal(err, "no rubric yet (autograder/rubrics/98.json)");
}

/* A rubric path past 4096 bytes is refused with ENAMETOOLONG and says so
 * with its start: cut, it read as "no rubric yet" of a rubric that may be
 * there (or could name another file). */
static void test_rubric_long_path(void **state) {
    (void)state;
    static rubric_t r;
    static char root[4200], want[8192];
    char err[512];
    int k = snprintf(root, sizeof root, "%s/", tmp);
    while (k < 4090) root[k++] = 'r';
    root[k] = '\0';
    errno = 0;
    assert_int_equal(rubric_load(root, "99", &r, err, sizeof err), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    snprintf(want, sizeof want, "autograder/rubrics/99.json: the path %.80s... is 4096 bytes or more, past the 4096 "
             "a path may have here; move the course tree to a shorter path", root);
    assert_string_equal(err, want);
}

/* The limits of a rubric's lists and strings, one past and at each: 64
 * tests, 16 student files of up to 127 characters, 32 requires of up to
 * 95, names up to 95, ranks 1 and 64. A longer string is refused, never
 * cut (a cut check name would name another check, or none). */
static void test_rubric_limits(void **state) {
    (void)state;
    static rubric_t r;
    static char text[65536];
    char err[512], s96[97], s128[129];
    memset(s96, 'x', 96);
    s96[96] = '\0';
    memset(s128, 'f', 128);
    s128[128] = '\0';
    /* n tests, each requiring the first */
    for (int n = 64; n <= 65; n++) {
        snprintf(text, sizeof text, "{\"lab\": \"99-test\", \"tests\": [");
        for (int i = 0; i < n; i++)
            snprintf(text + strlen(text), sizeof text - strlen(text),
                     "%s{\"name\": \"t%d\", \"check\": \"c%d\", \"points\": 1, \"requires\": [\"c0\"]}", i ? ", " : "", i, i);
        snprintf(text + strlen(text), sizeof text - strlen(text), "]}");
        int rc = load_rubric_text(text, &r, err, sizeof err);
        if (n == 64 && (rc != 0 || r.ntests != 64)) fail_msg("64 tests: %s", rc ? err : "not all read");
        if (n == 65 && (rc == 0 || !strstr(err, "\"tests\" must be a list of 1 to 64 tests")))
            fail_msg("65 tests were not refused as such: %s", rc ? err : "accepted");
    }
    for (int n = 16; n <= 17; n++) {
        snprintf(text, sizeof text, "{\"lab\": \"99-test\", \"student_files\": [");
        for (int i = 0; i < n; i++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s\"f%d.cu\"", i ? ", " : "", i);
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "], \"tests\": [{\"name\": \"a\", \"check\": \"a\", \"points\": 1}]}");
        int rc = load_rubric_text(text, &r, err, sizeof err);
        if (n == 16 && (rc != 0 || r.nfiles != 16 || strcmp(r.files[15], "f15.cu")))
            fail_msg("16 student files: %s", rc ? err : "not all read");
        if (n == 17 && (rc == 0 || !strstr(err, "\"student_files\" must be a list of at most 16 file names")))
            fail_msg("17 student files were not refused as such: %s", rc ? err : "accepted");
    }
    for (int len = 127; len <= 128; len++) {
        snprintf(text, sizeof text, "{\"lab\": \"99-test\", \"student_files\": [\"%.*s\"], "
                 "\"tests\": [{\"name\": \"a\", \"check\": \"a\", \"points\": 1}]}", len, s128);
        int rc = load_rubric_text(text, &r, err, sizeof err);
        if (len == 127 && (rc != 0 || strlen(r.files[0]) != 127)) fail_msg("a file name of 127: %s", rc ? err : "cut");
        if (len == 128 && (rc == 0 || !strstr(err, "\"student_files\" must hold plain file names")))
            fail_msg("a file name of 128 characters was not refused: %s", rc ? err : "accepted");
    }
    for (int n = 32; n <= 33; n++) {
        snprintf(text, sizeof text, "{\"lab\": \"99-test\", \"tests\": [{\"name\": \"a\", \"check\": \"a\", \"points\": 1, "
                 "\"requires\": [");
        for (int i = 0; i < n; i++) snprintf(text + strlen(text), sizeof text - strlen(text), "%s\"a\"", i ? ", " : "");
        snprintf(text + strlen(text), sizeof text - strlen(text), "]}]}");
        int rc = load_rubric_text(text, &r, err, sizeof err);
        if (n == 32 && (rc != 0 || r.tests[0].nrequires != 32)) fail_msg("32 requires: %s", rc ? err : "not all read");
        if (n == 33 && (rc == 0 || !strstr(err, "test 1: \"requires\" must be a list of check names")))
            fail_msg("33 requires were not refused as such: %s", rc ? err : "accepted");
    }
    /* Strings of 95 characters fit the 96-byte fields; 96 are refused. The
     * second test checks what the first requires. */
    const char *where[] = {"name", "check", "requires"};
    for (int w = 0; w < 3; w++)
        for (int len = 95; len <= 96; len++) {
            char name[100], check[100], req[100];
            snprintf(name, sizeof name, "%.*s", w == 0 ? len : 1, s96);
            snprintf(check, sizeof check, "%.*s", w == 1 ? len : 1, s96);
            snprintf(req, sizeof req, "%.*s", w == 2 ? len : 2, s96);
            snprintf(text, sizeof text, "{\"lab\": \"99-test\", \"tests\": [{\"name\": \"%s\", \"check\": \"%s\", "
                     "\"points\": 1, \"requires\": [\"%s\"]}, {\"name\": \"b\", \"check\": \"%s\", \"points\": 1}]}",
                     name, check, req, req);
            int rc = load_rubric_text(text, &r, err, sizeof err);
            if (len == 95) {
                if (rc != 0) fail_msg("a %s of 95 characters was refused: %s", where[w], err);
                assert_string_equal(r.tests[0].name, name);
                assert_string_equal(r.tests[0].check, check);
                assert_string_equal(r.tests[0].requires[0], req);
                continue;
            }
            if (rc == 0) fail_msg("a %s of 96 characters was accepted", where[w]);
            const char *want = w < 2 ? "must be a string shorter than 96 characters" : "\"requires\" must be a list of check names";
            if (!strstr(err, want) || !strstr(err, "test 1:")) fail_msg("a %s of 96 characters: error '%s'", where[w], err);
        }
    const char *ranks[] = {"1", "64"};
    for (int i = 0; i < 2; i++) {
        snprintf(text, sizeof text, "{\"lab\": \"99-test\", \"ranks\": %s, \"tests\": [{\"name\": \"a\", \"check\": \"a\", "
                 "\"points\": 1}, {\"name\": \"b\", \"check\": \"b\", \"points\": 1, \"ranks\": %s}]}", ranks[1 - i], ranks[i]);
        if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("ranks %s and %s: %s", ranks[0], ranks[1], err);
        assert_int_equal(r.tests[0].ranks, atoi(ranks[1 - i]));
        assert_int_equal(r.tests[1].ranks, atoi(ranks[i]));
    }
}

/* Every field of a valid rubric is read into its place, with its default
 * where it is left out: the lab, its number and title, the student files,
 * a numerics test's check, points, bonus, may_skip and requires, a speed
 * test's kernel, thresholds, bench arguments and "the baseline" in
 * messages when it names none. */
static void test_rubric_fields_read(void **state) {
    (void)state;
    static rubric_t r;
    char err[512];
    const char *text =
        "{\"lab\": \"99-test\", \"title\": \"a test lab\", \"student_files\": [\"k.cu\", \"h.h\"], \"tests\": [\n"
        "  {\"name\": \"plain\", \"check\": \"check a\", \"points\": 2.5},\n"
        "  {\"name\": \"extra\", \"kind\": \"numerics\", \"check\": \"check b\", \"points\": 1, \"bonus\": true,"
        " \"may_skip\": true, \"requires\": [\"check a\"]},\n"
        "  {\"name\": \"not extra\", \"kind\": \"numerics\", \"check\": \"check c\", \"points\": 0, \"bonus\": false,"
        " \"may_skip\": false},\n"
        "  {\"name\": \"fast\", \"kind\": \"speed\", \"kernel\": \"02 k\", \"points\": 3, \"full_at\": 0.5,"
        " \"zero_at\": 0.1, \"bench_args\": \"--sizes 64\", \"requires\": [\"check a\", \"check c\"]},\n"
        "  {\"name\": \"coalescing\", \"kind\": \"speed\", \"kernel\": \"01 k\", \"over\": \"01 k uncoalesced\","
        " \"points\": 1, \"full_at\": 3, \"zero_at\": 1.5, \"implausible_above\": 100, \"requires\": [\"check a\"]}]}\n";
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("a valid rubric was refused: %s", err);
    assert_string_equal(r.lab, "99-test");
    assert_string_equal(r.nn, "99");
    assert_string_equal(r.title, "a test lab");
    assert_int_equal(r.nfiles, 2);
    assert_string_equal(r.files[0], "k.cu");
    assert_string_equal(r.files[1], "h.h");
    assert_int_equal(r.ntests, 5);
    const rubric_test_t *a = &r.tests[0], *b = &r.tests[1], *c = &r.tests[2], *s = &r.tests[3], *o = &r.tests[4];
    assert_string_equal(a->name, "plain");
    assert_string_equal(a->check, "check a");
    assert_int_equal(a->kind, KIND_NUMERICS);
    assert_true(a->points == 2.5);
    assert_true(!a->bonus && !a->may_skip && a->nrequires == 0 && a->ranks == 1 && a->timeout_s == 0);
    assert_true(b->bonus && b->may_skip && b->nrequires == 1);
    assert_string_equal(b->requires[0], "check a");
    assert_true(!c->bonus && !c->may_skip && c->points == 0.0);
    assert_int_equal(s->kind, KIND_SPEED);
    assert_string_equal(s->kernel, "02 k");
    assert_string_equal(s->baseline, "the baseline");
    assert_string_equal(s->bench_args, "--sizes 64");
    assert_string_equal(s->check, "");
    assert_true(s->full_at == 0.5 && s->zero_at == 0.1 && s->implausible_above == GRADE_IMPLAUSIBLE_RATIO);
    assert_int_equal(s->nrequires, 2);
    assert_string_equal(s->requires[1], "check c");
    assert_string_equal(o->over, "01 k uncoalesced");
    assert_string_equal(o->baseline, "01 k uncoalesced"); /* what its messages name */
    assert_true(o->implausible_above == 100.0);
}

/* "implausible_above": 1.25 unless a ratio test says otherwise; it must lie
 * above full_at (or full points could not be earned) and is refused on an
 * absolute test, whose metric has its own ceiling. */
static void test_rubric_implausible_above(void **state) {
    (void)state;
    static rubric_t r;
    char err[512];
    if (load_speed_rubric("\"kernel\": \"k\", \"full_at\": 0.8, \"zero_at\": 0.2", &r, err, sizeof err) != 0)
        fail_msg("a ratio rubric without implausible_above was refused: %s", err);
    assert_true(r.tests[1].implausible_above == 1.25);
    if (load_speed_rubric("\"kernel\": \"k\", \"full_at\": 0.8, \"zero_at\": 0.2, \"implausible_above\": 3", &r, err,
                          sizeof err) != 0)
        fail_msg("implausible_above 3 was refused: %s", err);
    assert_true(r.tests[1].implausible_above == 3.0);
    const struct { const char *fields, *want; } bad[] = {
        {"\"kernel\": \"k\", \"full_at\": 0.8, \"zero_at\": 0.2, \"implausible_above\": 0.8",
         "\"implausible_above\" 0.8 must be above \"full_at\" 0.8"},
        {"\"kernel\": \"k\", \"full_at\": 1.5, \"zero_at\": 0.2", "\"implausible_above\" 1.25 must be above"},
        {"\"kernel\": \"k\", \"full_at\": 0.8, \"zero_at\": 0.2, \"implausible_above\": \"2\"",
         "\"implausible_above\" must be a number"},
        {"\"metric\": \"mfu\", \"full_at\": 0.35, \"zero_at\": 0.1, \"implausible_above\": 0.9",
         "\"implausible_above\" is for a ratio test"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (load_speed_rubric(bad[i].fields, &r, err, sizeof err) == 0)
            fail_msg("rubric with {%s} was accepted; it must be refused", bad[i].fields);
        if (!strstr(err, bad[i].want))
            fail_msg("rubric with {%s}: error '%s' does not say '%s'", bad[i].fields, err, bad[i].want);
    }
}

/* The course's rubrics load; lab 05's speed test is absolute, requires every
 * numerics check of the lab that runs on a GPU (not the may_skip ones, which
 * skip there: the memory pattern is counted on the emulator only), and lab
 * 04's are still ratio tests. */
static void test_rubric_course_speed_tests(void **state) {
    (void)state;
    static rubric_t r;
    char err[512] = "";
    if (rubric_load(GRADE_ROOT, "05", &r, err, sizeof err) != 0) fail_msg("rubric 05: %s", err);
    const rubric_test_t *sp = NULL;
    int nnum = 0;
    for (int i = 0; i < r.ntests; i++) {
        if (r.tests[i].kind == KIND_SPEED) sp = &r.tests[i];
        else if (!r.tests[i].may_skip) nnum++;
    }
    if (!sp) fail_msg("rubric 05 has no speed test");
    assert_string_equal(sp->metric, "mfu");
    assert_true(sp->full_at == 0.35 && sp->zero_at == 0.10);
    assert_true(sp->points > 0);
    assert_true(sp->timeout_s >= 300);
    assert_non_null(strstr(sp->bench_args, "--d-model 768"));
    assert_non_null(strstr(sp->bench_args, "--layers 12"));
    assert_non_null(strstr(sp->bench_args, "--seq 1024"));
    assert_int_equal(sp->nrequires, nnum);
    for (int i = 0; i < r.ntests; i++) {
        if (r.tests[i].kind != KIND_NUMERICS) continue;
        int found = 0;
        for (int q = 0; q < sp->nrequires; q++) found |= !strcmp(sp->requires[q], r.tests[i].check);
        if (!found && !r.tests[i].may_skip) fail_msg("lab 05's speed test does not require '%s'", r.tests[i].check);
        if (found && r.tests[i].may_skip)
            fail_msg("lab 05's speed test requires '%s', which may skip itself (on a GPU: then no speed)",
                     r.tests[i].check);
    }
    if (rubric_load(GRADE_ROOT, "04", &r, err, sizeof err) != 0) fail_msg("rubric 04: %s", err);
    int nratio = 0;
    for (int i = 0; i < r.ntests; i++)
        if (r.tests[i].kind == KIND_SPEED) {
            assert_string_equal(r.tests[i].metric, "");
            assert_string_equal(r.tests[i].baseline, "cuBLAS bf16");
            nratio++;
        }
    assert_int_equal(nratio, 2);
}

/* The files each course lab takes from a submission (the rubric's
 * student_files, else every file of labs/NN besides the harness) are exactly
 * the files of its reference solution, solutions/NN. A helper script in a
 * lab folder that the rubric does not leave out (lab 04's sweep_mma.sh did)
 * would be taken from the submission into the graded build, and every
 * grading of solutions/ would say it was missing there. */
static void test_rubric_student_files_are_the_solution(void **state) {
    (void)state;
    static rubric_t r;
    int nlabs = 0;
    for (int lab = 0; lab < 100; lab++) {
        char num[8], err[512] = "", path[4096];
        snprintf(num, sizeof num, "%02d", lab);
        snprintf(path, sizeof path, "%s/autograder/rubrics/%s.json", GRADE_ROOT, num);
        if (access(path, F_OK) != 0) continue;
        if (rubric_load(GRADE_ROOT, num, &r, err, sizeof err) != 0) fail_msg("rubric %s: %s", num, err);
        nlabs++;
        char files[16][128];
        int nf = r.nfiles;
        if (nf) memcpy(files, r.files, sizeof files);
        else nf = lab_student_files(GRADE_ROOT, r.lab, files, 16);
        snprintf(path, sizeof path, "%s/solutions/%s", GRADE_ROOT, r.lab);
        DIR *d = opendir(path);
        if (!d) fail_msg("lab %s has no solutions/%s", num, r.lab);
        int nsol = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            nsol++;
            int found = 0;
            for (int f = 0; f < nf; f++) found |= !strcmp(files[f], e->d_name);
            if (!found) {
                closedir(d);
                fail_msg("solutions/%s/%s is not among the files lab %s takes from a submission", r.lab, e->d_name,
                         num);
            }
        }
        closedir(d);
        if (nsol != nf) {
            char list[2048] = "";
            for (int f = 0; f < nf; f++) snprintf(list + strlen(list), sizeof list - strlen(list), " %s", files[f]);
            fail_msg("lab %s takes %d files from a submission (%s ) but solutions/%s has %d: a file of labs/%s "
                     "that is no student's work needs the rubric's student_files to leave it out",
                     num, nf, list, r.lab, nsol, r.lab);
        }
    }
    assert_true(nlabs >= 6);
}

/* A refusal is one line of text: the grader prints it as a line of its
 * output and puts it in results.json. jansson quotes the bytes near a parse
 * error as they are, and a misspelt key is quoted too; a control byte there
 * (an escape sequence, a newline) is shown as '?'. */
static void test_rubric_error_one_line(void **state) {
    (void)state;
    static rubric_t r;
    char err[512];
    const char *bad[] = {"{\"lab\": \"99-test\",\x0e \"tests\": []}",
                         "{\"lab\": \"99-test\", \"\\u001b[2J\\n\": 1, \"tests\": []}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (load_rubric_text(bad[i], &r, err, sizeof err) == 0) fail_msg("rubric %zu was accepted", i);
        if (!strstr(err, "autograder/rubrics/99.json")) fail_msg("the error '%s' does not name the file", err);
        for (const char *c = err; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) fail_msg("the error holds the control byte 0x%02x: %s", *c, err);
    }
    assert_non_null(strstr(err, "\"?[2J?\" is no field of a rubric"));
}

/* A speed-up test's messages name the kernel it is over (its "over") when
 * the rubric names no "baseline": the whole name, up to the 95 characters
 * "over" may have. It was cut to 47 to fit the baseline's field. */
static void test_rubric_over_names_baseline_whole(void **state) {
    (void)state;
    static rubric_t r;
    char err[512], fields[512], over[96];
    memset(over, 'u', 95);
    over[95] = '\0';
    snprintf(fields, sizeof fields, "\"kernel\": \"k\", \"over\": \"%s\", \"full_at\": 3, \"implausible_above\": 50", over);
    if (load_speed_rubric(fields, &r, err, sizeof err) != 0) fail_msg("a valid speed-up rubric was refused: %s", err);
    assert_string_equal(r.tests[1].over, over);
    assert_string_equal(r.tests[1].baseline, over);
    memset(over, 'b', 95);
    snprintf(fields, sizeof fields, "\"kernel\": \"k\", \"baseline\": \"%s\", \"full_at\": 0.8", over);
    if (load_speed_rubric(fields, &r, err, sizeof err) != 0) fail_msg("a baseline of 95 characters was refused: %s", err);
    assert_string_equal(r.tests[1].baseline, over);
}

/* "lab" is the folder of the rubric's own lab, labs/NN-name: a rubric 99
 * whose "lab" named lab 98's folder graded that lab's files as lab 99, and
 * one with a '/' reached out of labs/. */
static void test_rubric_lab_is_its_folder(void **state) {
    (void)state;
    static rubric_t r;
    char err[512], text[512];
    const char *fmt = "{\"lab\": \"%s\", \"tests\": [{\"name\": \"a\", \"check\": \"check a\", \"points\": 1}]}";
    snprintf(text, sizeof text, fmt, "99-test");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("the control rubric was refused: %s", err);
    const char *bad[] = {"98-other", "99", "99test", "099-test", "9-test", "99-a/../../98-other", "x99-test"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, fmt, bad[i]);
        if (load_rubric_text(text, &r, err, sizeof err) == 0) fail_msg("\"lab\": \"%s\" was accepted in 99.json", bad[i]);
        if (!strstr(err, "99.json: \"lab\" must be this lab's folder in labs/, \"99-...\""))
            fail_msg("\"lab\": \"%s\": the error '%s' does not say what it must be", bad[i], err);
    }
}

/* A rubric's strings are one line of printable text: a check's name is
 * matched in the line its verdict comes on (one with a newline could never
 * pass), a test's name is a row of the grader's table, and bench_args are
 * split at spaces (a tab stayed inside an argument). A newline, a tab, an
 * escape or DEL in any of them is refused, naming the field. */
static void test_rubric_strings_one_line(void **state) {
    (void)state;
    static rubric_t r;
    char err[512], text[1024];
    const char *fmt = "{\"lab\": \"99-test%s\", \"title\": \"t%s\", \"student_files\": [\"k.cu%s\"], \"tests\": [\n"
                      "  {\"name\": \"a%s\", \"check\": \"check a%s\", \"points\": 1},\n"
                      "  {\"name\": \"s\", \"kind\": \"speed\", \"points\": 1, \"kernel\": \"k%s\", \"over\": \"u%s\","
                      " \"baseline\": \"b%s\", \"bench_args\": \"--n%s1\", \"full_at\": 3, \"implausible_above\": 50,"
                      " \"requires\": [\"check a%s\"]}]}";
    const char *field[] = {"lab", "title", "student_files", "name", "check", "kernel", "over", "baseline",
                           "bench_args", "requires"};
    const char *ctl[] = {"\\n", "\\t", "\\u001b[2J", "\\u007f", "\\r"};
    const char *ok[10] = {"", "", "", "", "", "", "", "", " ", ""};
    snprintf(text, sizeof text, fmt, ok[0], ok[1], ok[2], ok[3], ok[4], ok[5], ok[6], ok[7], ok[8], ok[9]);
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("the control rubric was refused: %s", err);
    for (int f = 0; f < 10; f++)
        for (size_t c = 0; c < sizeof ctl / sizeof *ctl; c++) {
            const char *v[10];
            for (int i = 0; i < 10; i++) v[i] = i == f ? ctl[c] : ok[i];
            snprintf(text, sizeof text, fmt, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]);
            if (load_rubric_text(text, &r, err, sizeof err) == 0)
                fail_msg("a %s holding %s was accepted", field[f], ctl[c]);
            if (!strstr(err, field[f]) || !strstr(err, "one line of printable text"))
                fail_msg("a %s holding %s: the error '%s' does not say so", field[f], ctl[c], err);
        }
}

/* A misspelt key is quoted in the refusal up to 40 bytes, and cut there at
 * a character's start: cut inside one (an accented letter across the 40th
 * byte), the message was no UTF-8, and results.json, which carries it to
 * the course's page, showed U+FFFD in its place. */
static void test_rubric_error_key_cut_whole(void **state) {
    (void)state;
    static rubric_t r;
    char err[512], text[512], key[64];
    memset(key, 'k', 39);
    snprintf(key + 39, sizeof key - 39, "\xc3\xa9tc"); /* e-acute is bytes 40 and 41 */
    snprintf(text, sizeof text, "{\"lab\": \"99-test\", \"%s\": 1, \"tests\": [{\"name\": \"a\", \"check\": \"a\", "
             "\"points\": 1}]}", key);
    if (load_rubric_text(text, &r, err, sizeof err) == 0) fail_msg("a misspelt key was accepted");
    char want[64];
    snprintf(want, sizeof want, "\"%.39s\" is no field of a rubric", key);
    if (!strstr(err, want)) fail_msg("the error '%s' does not quote the key up to its last whole character", err);
    key[38] = '\0'; /* 38 ASCII bytes and e-acute fit whole */
    snprintf(key + 38, sizeof key - 38, "\xc3\xa9tc");
    snprintf(text, sizeof text, "{\"lab\": \"99-test\", \"%s\": 1, \"tests\": [{\"name\": \"a\", \"check\": \"a\", "
             "\"points\": 1}]}", key);
    if (load_rubric_text(text, &r, err, sizeof err) == 0) fail_msg("a misspelt key was accepted");
    snprintf(want, sizeof want, "\"%.40s\" is no field of a rubric", key);
    if (!strstr(err, want)) fail_msg("the error '%s' does not quote the key's first 40 bytes", err);
}

/* "points" is a number from 0 to 1000: 64 tests of 1e308 points added up
 * to inf, which results.json cannot hold (the total went missing), and a
 * test worth more is likelier a slip. A -0 (points or zero_at) reads as 0,
 * not a "-0" in the table and results.json. */
static void test_rubric_points_range(void **state) {
    (void)state;
    static rubric_t r;
    char err[512], text[512];
    const char *fmt = "{\"lab\": \"99-test\", \"tests\": [{\"name\": \"a\", \"check\": \"check a\", \"points\": %s},"
                      " {\"name\": \"b\", \"check\": \"check b\", \"points\": %s}]}";
    snprintf(text, sizeof text, fmt, "1000", "999.5");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("1000 points were refused: %s", err);
    assert_true(r.tests[0].points == 1000.0 && r.tests[1].points == 999.5);
    const char *bad[] = {"1000.5", "1001", "1e308", "-0.5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, fmt, "1", bad[i]);
        if (load_rubric_text(text, &r, err, sizeof err) == 0) fail_msg("%s points were accepted", bad[i]);
        if (!strstr(err, "test 2: \"points\" must be a number >= 0 and at most 1000"))
            fail_msg("%s points: the error '%s' does not say what points may be", bad[i], err);
    }
    snprintf(text, sizeof text, fmt, "-0.0", "1");
    if (load_rubric_text(text, &r, err, sizeof err) != 0) fail_msg("-0.0 points were refused: %s", err);
    assert_true(r.tests[0].points == 0.0 && !signbit(r.tests[0].points));
    if (load_speed_rubric("\"kernel\": \"k\", \"full_at\": 0.8, \"zero_at\": -0.0", &r, err, sizeof err) != 0)
        fail_msg("zero_at -0.0 was refused: %s", err);
    assert_true(r.tests[1].zero_at == 0.0 && !signbit(r.tests[1].zero_at));
}

/* A refusal is UTF-8 even where jansson's is not: it quotes the bytes it
 * read near a parse error, and a bad escape ("\\u0f" and then an accented
 * letter) ends them inside a character. Such a byte is shown as '?', as a
 * control byte is; results.json showed U+FFFD. */
static void test_rubric_error_utf8(void **state) {
    (void)state;
    static rubric_t r;
    char err[512];
    if (load_rubric_text("{\"lab\": \"99-\\u0f\xc3\xa9t\", \"tests\": []}", &r, err, sizeof err) == 0)
        fail_msg("a bad escape was accepted");
    if (!strstr(err, "autograder/rubrics/99.json: invalid escape")) fail_msg("the error '%s' does not say why", err);
    for (const unsigned char *c = (const unsigned char *)err; *c; c += course_utf8_len(c))
        if (!course_utf8_len(c)) fail_msg("the error '%s' is no UTF-8 at byte %zu", err, (size_t)(c - (const unsigned char *)err));
}

/* Points a handout or a slide deck states ("Numerics (23 points",
 * "Numerics, 23 points", "Speed 6 points", across line breaks) against the
 * rubric: the totals of the tests of that kind that are not extra credit. A
 * rubric edited without its handout and deck, or the reverse, fails here.
 * Returns how many totals the file stated (0 when there is no such file). */
static int stated_points_match(const rubric_t *r, const char *path) {
    static char text[1 << 17];
    if (read_text(path, text, sizeof text) != 0) return 0;
    for (char *p = text; *p; p++)
        if (*p == '\n') *p = ' ';
    const struct { const char *word; test_kind_t kind; } kinds[] = {{"Numerics", KIND_NUMERICS},
                                                                    {"Speed", KIND_SPEED}};
    int stated = 0;
    for (int k = 0; k < 2; k++) {
        double want = 0;
        for (int i = 0; i < r->ntests; i++)
            if (r->tests[i].kind == kinds[k].kind && !r->tests[i].bonus) want += r->tests[i].points;
        for (const char *p = strstr(text, kinds[k].word); p; p = strstr(p + 1, kinds[k].word)) {
            const char *q = p + strlen(kinds[k].word);
            while (*q == ' ' || *q == ',' || *q == '(') q++;
            char *end;
            double got = strtod(q, &end);
            if (end == q || strncmp(end, " points", 7)) continue;
            if (got != want)
                fail_msg("%s says %.*s points; rubrics/%s.json has %g (extra credit apart)", path,
                         (int)(end - p), p, r->nn, want);
            stated++;
        }
    }
    return stated;
}

/* Every handout and slide deck that states a lab's numerics or speed total
 * states the rubric's. */
static void test_handout_points(void **state) {
    (void)state;
    static rubric_t r;
    int stated = 0;
    for (int lab = 0; lab < 100; lab++) {
        char nn[8], err[512], path[512];
        snprintf(nn, sizeof nn, "%02d", lab);
        if (rubric_load(GRADE_ROOT, nn, &r, err, sizeof err) != 0) continue;
        snprintf(path, sizeof path, "%s/labs/%s/README.md", GRADE_ROOT, r.lab);
        stated += stated_points_match(&r, path);
        snprintf(path, sizeof path, "%s/slides/%s.md", GRADE_ROOT, r.lab);
        stated += stated_points_match(&r, path);
    }
    if (stated < 8) fail_msg("only %d point totals found in the handouts and decks: has their wording changed?", stated);
}

/* results.json: a leaderboard entry per measured speed test, in the unit the
 * table shows, higher is better; nothing for one that was not measured. */
static void test_leaderboard_entries(void **state) {
    (void)state;
    const rubric_test_t tm = mfu_test(), tr = ratio_test();
    result_t res[4];
    res[0] = score_bench(&tm, "{\"device\": \"NVIDIA H200\", \"mfu\": 0.312}");
    res[1] = score_bench(&tr, "{\"results\": [{\"kernel\": \"04 matmul_mma (bf16)\", \"ratio\": 0.325}]}");
    res[2] = score_bench(&tm, "{\"device\": \"NVIDIA GB300\", \"mfu\": null}");
    memset(&res[3], 0, sizeof res[3]); /* as grade_lab() leaves a speed test without a GPU */
    res[3].t = &tm;
    res[3].max_score = tm.points;
    res[3].measured = -1;
    res[3].status = ST_NEEDS_GPU;
    for (int i = 0; i < 4; i++) {
        snprintf(res[i].nn, sizeof res[i].nn, "%s", i == 1 ? "04" : "05");
        res[i].number = i + 1;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/leaderboard.json", tmp);
    assert_int_equal(report_json(path, res, 4, 1.0, "summary"), 0);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("report_json wrote no readable %s", path);
    json_t *board = json_object_get(j, "leaderboard");
    assert_int_equal(json_array_size(board), 2);
    json_t *e0 = json_array_get(board, 0), *e1 = json_array_get(board, 1);
    assert_string_equal(json_string_value(json_object_get(e0, "name")), "lab 05 training speed (MFU %)");
    assert_true(fabs(json_number_value(json_object_get(e0, "value")) - 31.2) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(e0, "order")), "desc");
    assert_string_equal(json_string_value(json_object_get(e1, "name")), "lab 04 04 matmul_mma (bf16) (% of cuBLAS bf16)");
    assert_true(fabs(json_number_value(json_object_get(e1, "value")) - 32.5) < 1e-9);
    /* Score: only the two measured tests count: 4.24 + 2.5 of 10. */
    assert_true(fabs(json_number_value(json_object_get(j, "score")) - (5.0 * 0.212 / 0.25 + 2.5)) < 1e-9);
    json_t *t2 = json_array_get(json_object_get(j, "tests"), 2);
    /* Left out, so never "passed": a max_score of 0, and a status that says so (without
     * one Gradescope shows a test of max_score 0 as passed). */
    assert_true(json_number_value(json_object_get(t2, "max_score")) == 0.0);
    assert_string_equal(json_string_value(json_object_get(t2, "status")), "failed");
    assert_non_null(strstr(json_string_value(json_object_get(t2, "output")), "grader error | no MFU"));
    json_decref(j);
}

/* A bonus test is extra credit: its points add to the score and not to the
 * maximum, and results.json gives it a maximum of 0, so a submission without
 * it still reaches full marks and one with it goes past them. */
static void test_bonus_is_extra_credit(void **state) {
    (void)state;
    rubric_test_t plain = {0}, bonus = {0};
    snprintf(plain.name, sizeof plain.name, "mma: primes");
    snprintf(bonus.name, sizeof bonus.name, "wgmma: primes");
    plain.points = 2;
    bonus.points = 1;
    bonus.bonus = 1;
    result_t res[2];
    memset(res, 0, sizeof res);
    for (int i = 0; i < 2; i++) {
        res[i].t = i ? &bonus : &plain;
        res[i].max_score = res[i].t->points;
        res[i].counted = 1;
        res[i].status = ST_FAIL;
        res[i].number = i + 1;
        snprintf(res[i].nn, sizeof res[i].nn, "04");
    }
    double max;
    res[0].score = 2;
    res[0].status = ST_PASS;
    assert_true(results_total(res, 2, &max) == 2.0 && max == 2.0); /* bonus not done: still 2 / 2 */
    char none[96];
    results_points(none, sizeof none, res, 2); /* and no "+ 0.00 bonus" */
    assert_string_equal(none, "2.00 / 2.00 points");
    res[1].score = 1;
    res[1].status = ST_PASS;
    assert_true(results_total(res, 2, &max) == 3.0 && max == 2.0); /* bonus done: 3 / 2 */
    char pts[96];
    results_points(pts, sizeof pts, res, 2); /* the summary keeps the bonus apart */
    assert_string_equal(pts, "2.00 / 2.00 points + 1.00 bonus");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/bonus.json", tmp);
    assert_int_equal(report_json(path, res, 2, 1.0, "summary"), 0);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("report_json wrote no readable %s", path);
    json_t *t1 = json_array_get(json_object_get(j, "tests"), 1);
    assert_string_equal(json_string_value(json_object_get(t1, "name")), "lab 04: wgmma: primes (bonus)");
    assert_true(json_number_value(json_object_get(t1, "score")) == 1.0);
    assert_true(json_number_value(json_object_get(t1, "max_score")) == 0.0);
    assert_true(json_number_value(json_object_get(j, "score")) == 3.0);
    json_decref(j);
}

/* Every test of results.json has a status, as autograder/README.md says: a
 * test left out of the total ("needs GPU", a check the rubric lets skip) has
 * a max_score of 0, which Gradescope shows as passed unless its status says
 * "failed"; it never counts as passed. */
static void test_json_status_every_test(void **state) {
    (void)state;
    rubric_test_t num = {0}, speed = {0}, hopper = {0};
    snprintf(num.name, sizeof num.name, "mma: primes");
    num.points = 2;
    snprintf(speed.name, sizeof speed.name, "mma speed");
    speed.kind = KIND_SPEED;
    speed.points = 5;
    snprintf(hopper.name, sizeof hopper.name, "wgmma: primes");
    hopper.points = 1;
    hopper.may_skip = 1;
    result_t res[4] = {made_result(&num, ST_PASS, 2, 1), made_result(&num, ST_FAIL, 0, 1),
                       made_result(&speed, ST_NEEDS_GPU, 0, 0), made_result(&hopper, ST_SKIPPED, 0, 0)};
    const char *want[4] = {"passed", "failed", "failed", "failed"};
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/status.json", tmp);
    assert_int_equal(report_json(path, res, 4, 1.0, "summary"), 0);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("report_json wrote no readable %s", path);
    for (size_t i = 0; i < 4; i++) {
        json_t *t = json_array_get(json_object_get(j, "tests"), i);
        const char *st = json_string_value(json_object_get(t, "status"));
        if (!st || strcmp(st, want[i]))
            fail_msg("test %zu (%s, %s): status %s, want %s", i, res[i].t->name, status_name(res[i].status),
                     st ? st : "(none)", want[i]);
    }
    json_decref(j);
}

/* A check's message and output quote the student's program, which may print
 * Latin-1 or cut a character in two: results.json still shows the student
 * the status, the message and the output (bad bytes as U+FFFD), where jansson
 * alone would refuse the text and leave the test's output empty; the same
 * for the notes, which quote a build log. */
static void test_json_output_not_utf8(void **state) {
    (void)state;
    rubric_test_t num = {0};
    snprintf(num.name, sizeof num.name, "mma: primes");
    num.points = 2;
    result_t r = made_result(&num, ST_FAIL, 0, 1);
    snprintf(r.message, sizeof r.message, "C[0] = 1.5, want 2 (caf\xe9)");
    r.output = strdup("[  ERROR   ] --- r\xc3\n\xff\xfe tail");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/latin1.json", tmp);
    assert_int_equal(report_json(path, &r, 1, 1.0, "lab 04: compile errors:\nmma.cu:3: error: \xb5s"), 0);
    free(r.output);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("report_json wrote no readable %s", path);
    const char *out = json_string_value(json_object_get(json_array_get(json_object_get(j, "tests"), 0), "output"));
    const char *notes = json_string_value(json_object_get(j, "output"));
    assert_non_null(out);
    assert_non_null(notes);
    print_message("  %s\n", out);
    assert_non_null(strstr(out, "fail | C[0] = 1.5, want 2 (caf\xef\xbf\xbd)"));
    assert_non_null(strstr(out, "r\xef\xbf\xbd\n\xef\xbf\xbd\xef\xbf\xbd tail"));
    assert_non_null(strstr(notes, "error: \xef\xbf\xbds"));
    json_decref(j);
}

/* The TOTAL line counts only counted tests (a "needs GPU" test's points are
 * in neither figure), names each status left out, and shows points without
 * trailing zeros ("2.5", "3"). */
static void test_table_total(void **state) {
    (void)state;
    rubric_test_t num = {0}, speed = {0}, broken = {0};
    snprintf(num.name, sizeof num.name, "mma: primes");
    num.points = 3;
    snprintf(speed.name, sizeof speed.name, "mma speed");
    speed.kind = KIND_SPEED;
    speed.points = 5;
    snprintf(broken.name, sizeof broken.name, "mma: launch");
    broken.points = 2;
    result_t r[4] = {made_result(&num, ST_PARTIAL, 2.5, 1), made_result(&num, ST_FAIL, 0, 1),
                     made_result(&speed, ST_NEEDS_GPU, 0, 0), made_result(&broken, ST_ERROR, 0, 0)};
    double max;
    assert_true(results_total(r, 4, &max) == 2.5 && max == 6.0);
    const char *text = table_of(r, 4);
    if (!strstr(text, "TOTAL 2.5 / 6 points (41.7%); left out of the total: 1 needs GPU, 1 grader error;"))
        fail_msg("the TOTAL line should be 2.5 / 6 and name the two tests left out:\n%s", text);
    if (!strstr(text, " 2.5/3 ")) fail_msg("a partial score should read 2.5/3:\n%s", text);
    text = table_of(&r[2], 1); /* nothing counted: no percentage to take */
    if (!strstr(text, "TOTAL 0 / 0 points (0.0%); left out of the total: 1 needs GPU; graded in 1 s\n"))
        fail_msg("a table of one test left out should total 0 / 0 and say why:\n%s", text);
}

/* Test names of any length keep the table's columns: a name up to 56
 * characters is shown whole with two spaces after it, a longer one is cut
 * with "...", and every status starts under the header's "status". */
static void test_table_long_names(void **state) {
    (void)state;
    static const char *const names[] = {"one element", "uncoalesced: 1024^3 GPU, 256^3 emu",
                                        "a name of forty characters, more or less",
                                        "a name of exactly fifty-six characters, to the very last",
                                        "a name of exactly fifty-seven characters: one too many ..",
                                        "a name far longer than any column of the table should hold, about ninety chars"};
    enum { N = sizeof names / sizeof *names };
    rubric_test_t t[N];
    result_t r[N];
    for (int i = 0; i < N; i++) {
        memset(&t[i], 0, sizeof t[i]);
        snprintf(t[i].name, sizeof t[i].name, "%s", names[i]);
        t[i].points = 1;
        r[i] = made_result(&t[i], ST_PASS, 1, 1);
    }
    char text[8192];
    snprintf(text, sizeof text, "%s", table_of(r, N));
    const char *header = strstr(text, "\nlab ");
    if (!header) fail_msg("no header in the table:\n%s", text);
    header++;
    size_t col = (size_t)(strstr(header, "status") - header);
    const char *line = header;
    for (int i = 0; i < N; i++) {
        line = strstr(line, "\n04-tensor-cores");
        if (!line) fail_msg("row %d is missing:\n%s", i, text);
        line++;
        const char *name = line + 27; /* after the lab column and its space */
        size_t len = strlen(names[i]);
        int whole = len <= 56;
        if (whole && (strncmp(name, names[i], len) || strncmp(name + len, "  ", 2)))
            fail_msg("'%s' is not shown whole with two spaces after it:\n%s", names[i], text);
        if (!whole && strncmp(name + 53, "...  ", 5))
            fail_msg("'%s' is not cut with '...' before the status:\n%s", names[i], text);
        if (strncmp(line + col, "pass ", 5)) fail_msg("row %d's status is not under 'status':\n%s", i, text);
    }
}

/* What report_rerun_hint() prints for these results, in a static buffer. */
static const char *hint_of(const result_t *r, int n, const char *src) {
    capture_t c = begin_capture();
    report_rerun_hint(r, n, 42, src);
    return end_capture(c);
}

/* After the table, each failed numerics check (at most three) gets the make
 * check command that reruns it alone on the run's inputs: its lab, the seed,
 * ONLY= with the check's cmocka name, SRC=solutions when graded from there,
 * and a note when the files came from a folder make check cannot read.
 * Passed tests and speed tests get none. */
static void test_rerun_hint(void **state) {
    (void)state;
    rubric_test_t t[5];
    result_t r[5];
    for (int i = 0; i < 5; i++) {
        memset(&t[i], 0, sizeof t[i]);
        snprintf(t[i].name, sizeof t[i].name, "test %d", i);
        snprintf(t[i].check, sizeof t[i].check, "mma: test_%d", i);
        t[i].points = 1;
    }
    t[4].kind = KIND_SPEED;
    r[0] = made_result(&t[0], ST_PASS, 1, 1);
    r[1] = made_result(&t[1], ST_FAIL, 0, 1);
    r[2] = made_result(&t[2], ST_TIMEOUT, 0, 1);
    r[3] = made_result(&t[3], ST_NOT_STARTED, 0, 1);
    r[4] = made_result(&t[4], ST_FAIL, 0, 1);
    const char *h = hint_of(r, 5, "labs");
    const char *head = strstr(h, "To run a failed check alone");
    if (!head || strstr(head + 1, "To run a failed check alone")) fail_msg("the hint's first line should come once:\n%s", h);
    if (!strstr(h, "make check LAB=04 SEED=42 ONLY='mma: test_1'\n") ||
        !strstr(h, "make check LAB=04 SEED=42 ONLY='mma: test_2'\n") || strstr(h, "test_0") || strstr(h, "test_3") ||
        strstr(h, "test_4") || strstr(h, "SRC=") || strstr(h, "put the files"))
        fail_msg("labs/: the hint should name exactly the failed and timed-out numerics checks:\n%s", h);
    h = hint_of(r, 5, "/somewhere/solutions");
    if (!strstr(h, "make check LAB=04 SRC=solutions SEED=42 ONLY='mma: test_1'"))
        fail_msg("solutions/: the hint should say SRC=solutions:\n%s", h);
    h = hint_of(r, 5, "/tmp/submission");
    if (!strstr(h, "put the files of /tmp/submission there first"))
        fail_msg("another folder: the hint should say to put its files in labs/:\n%s", h);
    h = hint_of(r, 1, "labs");
    if (h[0]) fail_msg("nothing failed, yet a hint:\n%s", h);
    /* A crashed check is a failed one; past three, the rest are counted, not listed. */
    r[0] = made_result(&t[0], ST_CRASH, 0, 1);
    r[3] = made_result(&t[3], ST_FAIL, 0, 1);
    r[4] = made_result(&t[4], ST_FAIL, 0, 1);
    t[4].kind = KIND_NUMERICS;
    h = hint_of(r, 5, "labs");
    if (!strstr(h, "ONLY='mma: test_0'") || !strstr(h, "ONLY='mma: test_2'") || strstr(h, "ONLY='mma: test_3'") ||
        !strstr(h, "(and 2 more failed checks"))
        fail_msg("five failed checks, one crashed: the hint should list the first three and count two more:\n%s", h);
}

/* The folder --src names decides the hint's SRC= and its note, whatever
 * the path before it and a trailing slash ("make grade SRC=solutions/", as
 * the shell completes a folder, gave the note for another folder and no
 * SRC=solutions); a folder whose name only ends in "labs" is another. */
static void test_rerun_hint_folders(void **state) {
    (void)state;
    rubric_test_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "test 1");
    snprintf(t.check, sizeof t.check, "mma: test_1");
    t.points = 1;
    result_t r = made_result(&t, ST_FAIL, 0, 1);
    const struct { const char *src; int solutions, elsewhere; } cases[] = {
        {"solutions", 1, 0}, {"/c/solutions", 1, 0}, {"/c/solutions/", 1, 0}, {"solutions//", 1, 0},
        {"labs", 0, 0},      {"/c/labs", 0, 0},      {"/c/labs/", 0, 0},      {"labs/", 0, 0},
        {"/c/mysolutions", 0, 1}, {"/c/xlabs", 0, 1}, {"/c/labs/x", 0, 1},    {"/c/solutions/x/", 0, 1},
        {"/", 0, 1},         {"/c/sub", 0, 1},        {"/c/labz", 0, 1},       {"/c/solutionz/", 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *h = hint_of(&r, 1, cases[i].src);
        char want[160];
        snprintf(want, sizeof want, "make check LAB=04%s SEED=42 ONLY='mma: test_1'\n",
                 cases[i].solutions ? " SRC=solutions" : "");
        char note[160];
        snprintf(note, sizeof note, "(make check reads labs/: put the files of %s there first)", cases[i].src);
        char alone[200];
        snprintf(alone, sizeof alone, "(or grade one alone where it is: grade --src '%s' --lab 04 --seed 42 --only "
                 "'<check>' --json FILE;", cases[i].src);
        if (!strstr(h, want) || !strstr(h, note) != !cases[i].elsewhere || !strstr(h, alone) != !cases[i].elsewhere)
            fail_msg("--src %s: want '%s'%s, got:\n%s", cases[i].src, want,
                     cases[i].elsewhere ? " and the note to put its files in labs/" : " and no note", h);
    }
}

/* The word of each status, as autograder/README.md lists them for the
 * table, results.json and the CSV's notes. */
static void test_report_status_names(void **state) {
    (void)state;
    const char *want[] = {"pass",        "partial", "fail",      "not started", "timeout",     "crashed",
                          "build error", "skipped", "needs GPU", "not graded",  "grader error"};
    assert_int_equal(sizeof want / sizeof *want, ST_ERROR + 1);
    for (int s = 0; s <= ST_ERROR; s++) assert_string_equal(status_name((status_t)s), want[s]);
    assert_string_equal(status_name((status_t)(ST_ERROR + 1)), "?");
}

/* A row's points: "+1/1" for extra credit, "-/5" for a test left out of the
 * total, two decimals at most ("1.25/2"); a figure is cut to its 12
 * characters, so the message column stays in place. The TOTAL keeps the
 * bonus apart from the regular points and their percentage, and a test left
 * out adds nothing, bonus or not. */
static void test_table_rows(void **state) {
    (void)state;
    rubric_test_t num = {0}, bonus = {0}, speed = {0}, skipped_bonus = {0};
    snprintf(num.name, sizeof num.name, "mma: primes");
    num.points = 2;
    snprintf(bonus.name, sizeof bonus.name, "wgmma: primes");
    bonus.points = 1;
    bonus.bonus = 1;
    snprintf(speed.name, sizeof speed.name, "mma speed");
    speed.kind = KIND_SPEED;
    speed.points = 5;
    snprintf(skipped_bonus.name, sizeof skipped_bonus.name, "wgmma: large");
    skipped_bonus.points = 1;
    skipped_bonus.bonus = 1;
    result_t r[5] = {made_result(&num, ST_PASS, 2, 1), made_result(&bonus, ST_PASS, 1, 1),
                     made_result(&speed, ST_NEEDS_GPU, 0, 0), made_result(&skipped_bonus, ST_SKIPPED, 1, 0),
                     made_result(&speed, ST_PARTIAL, 1.25, 1)};
    r[4].max_score = 2;
    snprintf(r[4].figure, sizeof r[4].figure, "25000.0%% cuBLAS bf16");
    snprintf(r[4].message, sizeof r[4].message, "full points at 50%%");
    double max;
    assert_true(results_total(r, 5, &max) == 4.25 && max == 4.0);
    assert_true(results_bonus(r, 5) == 1.0);
    char pts[96];
    results_points(pts, sizeof pts, r, 5);
    assert_string_equal(pts, "3.25 / 4.00 points + 1.00 bonus");
    char text[8192];
    snprintf(text, sizeof text, "%s", table_of(r, 5));
    if (strncmp(text, "\ntitle\nlab ", 11)) fail_msg("the table should start with its title, then the header:\n%s", text);
    const char *rows[] = {"mma: primes", "wgmma: primes", "mma speed", "wgmma: large", "mma speed"};
    const char *points[] = {"      2/2 ", "     +1/1 ", "      -/5 ", "      -/1 ", "   1.25/2 "};
    const char *line = text;
    for (int i = 0; i < 5; i++) {
        line = strstr(line, "\n04-tensor-cores");
        if (!line) fail_msg("row %d is missing:\n%s", i, text);
        line++;
        char row[512];
        snprintf(row, sizeof row, "%.*s", (int)strcspn(line, "\n"), line);
        /* lab (26), a space, the test column (35 here), a space, status (12), a space, then the points (9) */
        if (strncmp(row + 27, rows[i], strlen(rows[i])) || strncmp(row + 27 + 36 + 13, points[i], 10))
            fail_msg("row %d should show '%s' with points '%s':\n%s", i, rows[i], points[i], row);
    }
    char rule[160] = "\n"; /* as wide as the table was with its old 34-character test column, plus 1 */
    memset(rule + 1, '-', 131);
    snprintf(rule + 132, sizeof rule - 132, "\n");
    if (!strstr(text, rule)) fail_msg("the rules should be 131 dashes for a 35-character test column:\n%s", text);
    if (!strstr(text, "  1.25/2 25000.0% cuB  full points at 50%\n"))
        fail_msg("the figure should be cut to 12 characters before the message:\n%s", text);
    if (!strstr(text, "TOTAL 3.25 / 4 points (81.2%) + 1 bonus; left out of the total: 1 skipped, 1 needs GPU; "
                      "graded in 1 s\n"))
        fail_msg("the TOTAL line should be 3.25 / 4 (81.2%%) + 1 bonus, two tests left out:\n%s", text);
}

/* Points are shown to hundredths and the percentage to a tenth, but never
 * rounded onto either end: 4.9996 of 5 read "5/5" beside "partial", and its
 * TOTAL "5 / 5 points (100.0%)"; 0.004 of 50 read "0/50" and "(0.0%)". A
 * difference of rounding noise (1e-9) is still rounded away. */
static void test_table_points_edges(void **state) {
    (void)state;
    rubric_test_t speed = {0};
    snprintf(speed.name, sizeof speed.name, "mma speed");
    speed.kind = KIND_SPEED;
    speed.points = 5;
    result_t r = made_result(&speed, ST_PARTIAL, 4.9996, 1);
    char pts[96];
    results_points(pts, sizeof pts, &r, 1);
    assert_string_equal(pts, "4.99 / 5.00 points");
    const char *text = table_of(&r, 1);
    if (!strstr(text, "   4.99/5 ") || !strstr(text, "TOTAL 4.99 / 5 points (99.9%);"))
        fail_msg("4.9996 of 5 should read 4.99/5 and TOTAL 4.99 / 5 points (99.9%%):\n%s", text);
    speed.points = 50;
    r = made_result(&speed, ST_PARTIAL, 0.004, 1);
    results_points(pts, sizeof pts, &r, 1);
    assert_string_equal(pts, "<0.01 / 50.00 points");
    text = table_of(&r, 1);
    if (!strstr(text, "  <0.01/50 ") || !strstr(text, "TOTAL <0.01 / 50 points (<0.1%);"))
        fail_msg("0.004 of 50 should read <0.01/50 and TOTAL <0.01 / 50 points (<0.1%%):\n%s", text);
    /* A difference of rounding noise in the sums is no difference. */
    r = made_result(&speed, ST_PARTIAL, 50 - 1e-9, 1);
    results_points(pts, sizeof pts, &r, 1);
    assert_string_equal(pts, "50.00 / 50.00 points");
    /* Away from the ends, rounding is as before: 2.345 of 5 is 2.35 (to nearest), 4.995 is not 5. */
    speed.points = 5;
    r = made_result(&speed, ST_PARTIAL, 2.346, 1);
    results_points(pts, sizeof pts, &r, 1);
    assert_string_equal(pts, "2.35 / 5.00 points");
    r = made_result(&speed, ST_PASS, 5, 1);
    results_points(pts, sizeof pts, &r, 1);
    assert_string_equal(pts, "5.00 / 5.00 points");
    r = made_result(&speed, ST_FAIL, 0, 1);
    results_points(pts, sizeof pts, &r, 1);
    assert_string_equal(pts, "0.00 / 5.00 points");
}

/* Messages are cut at 100 characters in the table, with a line under it
 * that says so and where to read them whole; one of 100 is shown whole,
 * without that line. */
static void test_table_message_cut(void **state) {
    (void)state;
    rubric_test_t num = {0};
    snprintf(num.name, sizeof num.name, "mma: primes");
    num.points = 2;
    result_t r = made_result(&num, ST_FAIL, 0, 1);
    for (int len = 100; len <= 101; len++) {
        memset(r.message, 0, sizeof r.message);
        for (int i = 0; i < len; i++) r.message[i] = (char)('a' + i % 26);
        const char *text = table_of(&r, 1);
        char whole[128];
        snprintf(whole, sizeof whole, "  %.100s\n", r.message);
        if (!strstr(text, whole)) fail_msg("a message of %d characters should show its first 100:\n%s", len, text);
        int note = strstr(text, "(messages are cut at 100 characters here") != NULL;
        if (note != (len > 100)) fail_msg("a message of %d characters: the note on cut messages is %s:\n%s", len,
                                          note ? "there" : "missing", text);
    }
}

/* Under the table: a numerics test without a check name gets no command
 * (there is nothing for ONLY=); a check with a quote in it is named, not
 * put in ONLY='...'; one failed check past three is "1 more failed check". */
static void test_rerun_hint_edges(void **state) {
    (void)state;
    rubric_test_t t[4];
    result_t r[4];
    for (int i = 0; i < 4; i++) {
        memset(&t[i], 0, sizeof t[i]);
        snprintf(t[i].name, sizeof t[i].name, "test %d", i);
        snprintf(t[i].check, sizeof t[i].check, "test_%d", i);
        t[i].points = 1;
        r[i] = made_result(&t[i], ST_FAIL, 0, 1);
    }
    t[0].check[0] = '\0';
    const char *h = hint_of(r, 1, "labs");
    if (h[0]) fail_msg("a test with no check name got a hint:\n%s", h);
    snprintf(t[0].check, sizeof t[0].check, "it's: test_0");
    h = hint_of(r, 4, "labs");
    if (!strstr(h, "  make check LAB=04 SEED=42 (the check 'it's: test_0')\n") || strstr(h, "ONLY='it's"))
        fail_msg("a check with a quote should be named, not passed to ONLY=:\n%s", h);
    if (!strstr(h, "  (and 1 more failed check: the ONLY= names are the rubric's \"check\" fields)\n"))
        fail_msg("four failed checks: the hint should count one more:\n%s", h);
}

/* results.json, field by field: the run's score, its time rounded to whole
 * seconds, visibility; each test's name, number ("04.1"), score (0 when left
 * out of the total, whatever it held), max_score, status ("passed" only for
 * a counted pass: partial points are "failed"), visibility, and output: the
 * status, figure and message parted by " | " where each is there, then the
 * check's own output. Only a measured speed test goes to the leaderboard,
 * and without one there is no leaderboard. */
static void test_json_fields(void **state) {
    (void)state;
    rubric_test_t num = {0}, speed = ratio_test();
    snprintf(num.name, sizeof num.name, "mma: primes");
    num.points = 2;
    result_t r[5] = {made_result(&num, ST_PASS, 2, 1), made_result(&speed, ST_PARTIAL, 2.5, 1),
                     made_result(&num, ST_ERROR, 3, 0), made_result(&num, ST_FAIL, 0, 1),
                     made_result(&num, ST_PASS, 0, 0)};
    snprintf(r[0].figure, sizeof r[0].figure, "0.11 s");
    r[0].measured = 0.5; /* a numerics test has no measure for the leaderboard, whatever this holds */
    r[1].measured = 0.325;
    snprintf(r[1].figure, sizeof r[1].figure, "32.5%% cuBLAS bf16");
    snprintf(r[1].message, sizeof r[1].message, "full points at 50%% of cuBLAS bf16, none at 15%%");
    snprintf(r[2].message, sizeof r[2].message, "no check 'x\xe9' in check.c");
    r[2].output = ""; /* none: the head alone */
    snprintf(r[3].message, sizeof r[3].message, "C[0] = 1.5, want 2 (caf\xe9)");
    r[3].output = "[ RUN      ] mma: primes\n";
    for (int i = 0; i < 5; i++) r[i].number = i + 1;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/fields.json", tmp);
    assert_int_equal(report_json(path, r, 5, 1.5, "notes"), 0);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("report_json wrote no readable %s", path);
    assert_true(json_number_value(json_object_get(j, "score")) == 4.5);
    assert_int_equal(json_integer_value(json_object_get(j, "execution_time")), 2);
    assert_string_equal(json_string_value(json_object_get(j, "output")), "notes");
    assert_string_equal(json_string_value(json_object_get(j, "visibility")), "visible");
    assert_string_equal(json_string_value(json_object_get(j, "stdout_visibility")), "hidden");
    const struct { const char *name, *number, *status, *output; double score, max; } want[5] = {
        {"lab 04: mma: primes", "04.1", "passed", "pass | 0.11 s\n", 2, 2},
        {"lab 04: mma speed", "04.2", "failed",
         "partial | 32.5% cuBLAS bf16 | full points at 50% of cuBLAS bf16, none at 15%\n", 2.5, 5},
        {"lab 04: mma: primes", "04.3", "failed", "grader error | no check 'x\xef\xbf\xbd' in check.c\n", 0, 0},
        {"lab 04: mma: primes", "04.4", "failed",
         "fail | C[0] = 1.5, want 2 (caf\xef\xbf\xbd)\n\n[ RUN      ] mma: primes\n", 0, 2},
        {"lab 04: mma: primes", "04.5", "failed", "pass\n", 0, 0}, /* left out: never "passed" */
    };
    json_t *tests = json_object_get(j, "tests");
    assert_int_equal(json_array_size(tests), 5);
    for (size_t i = 0; i < 5; i++) {
        json_t *t = json_array_get(tests, i);
        const char *name = json_string_value(json_object_get(t, "name")),
                   *number = json_string_value(json_object_get(t, "number")),
                   *status = json_string_value(json_object_get(t, "status")),
                   *output = json_string_value(json_object_get(t, "output")),
                   *vis = json_string_value(json_object_get(t, "visibility"));
        double score = json_number_value(json_object_get(t, "score")), max = json_number_value(json_object_get(t, "max_score"));
        if (!name || strcmp(name, want[i].name) || !number || strcmp(number, want[i].number) || !status ||
            strcmp(status, want[i].status) || !output || strcmp(output, want[i].output) || !vis ||
            strcmp(vis, "visible") || score != want[i].score || max != want[i].max)
            fail_msg("test %zu: name '%s', number '%s', status '%s', score %g of %g, visibility '%s', output '%s'; "
                     "want '%s', '%s', '%s', %g of %g, 'visible', '%s'", i, name, number, status, score, max, vis,
                     output, want[i].name, want[i].number, want[i].status, want[i].score, want[i].max, want[i].output);
    }
    json_t *board = json_object_get(j, "leaderboard");
    assert_int_equal(json_array_size(board), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(board, 0), "name")),
                        "lab 04 04 matmul_mma (bf16) (% of cuBLAS bf16)");
    json_decref(j);
    r[1].measured = -1;
    assert_int_equal(report_json(path, r, 4, 1.49, NULL), 0);
    j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("report_json wrote no readable %s", path);
    assert_null(json_object_get(j, "leaderboard"));
    assert_int_equal(json_integer_value(json_object_get(j, "execution_time")), 1);
    assert_string_equal(json_string_value(json_object_get(j, "output")), "");
    json_decref(j);
    snprintf(path, sizeof path, "%s/no such folder/results.json", tmp);
    assert_int_not_equal(report_json(path, r, 4, 1.0, "notes"), 0);
}

/* What a student's program prints reaches results.json as it was where it
 * is valid UTF-8: quotes, backslashes, control bytes, DEL and characters of
 * 2, 3 and 4 bytes come back byte for byte; each byte that is not, however
 * many, becomes one U+FFFD. */
static void test_json_output_bytes(void **state) {
    (void)state;
    rubric_test_t num = {0};
    snprintf(num.name, sizeof num.name, "mma: primes");
    num.points = 2;
    result_t r = made_result(&num, ST_FAIL, 0, 1);
    const char *valid = "quote \" backslash \\ tab \t bell \x07 esc \x1b[2J del \x7f cr \r "
                        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 end";
    static char out[16384];
    snprintf(out, sizeof out, "%s", valid);
    r.output = out;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/bytes.json", tmp);
    assert_int_equal(report_json(path, &r, 1, 1.0, valid), 0);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("report_json wrote no readable %s", path);
    const char *got = json_string_value(json_object_get(json_array_get(json_object_get(j, "tests"), 0), "output"));
    assert_non_null(got);
    if (strncmp(got, "fail\n\n", 6) || strcmp(got + 6, valid))
        fail_msg("the output did not come back byte for byte: '%s'", got);
    assert_string_equal(json_string_value(json_object_get(j, "output")), valid);
    json_decref(j);
    /* 5000 bytes that are no UTF-8 at all: 5000 replacement characters. */
    memset(out, 0xff, 5000);
    out[5000] = '\0';
    assert_int_equal(report_json(path, &r, 1, 1.0, out), 0);
    j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("report_json wrote no readable %s", path);
    got = json_string_value(json_object_get(json_array_get(json_object_get(j, "tests"), 0), "output"));
    const char *notes = json_string_value(json_object_get(j, "output"));
    assert_non_null(got);
    assert_non_null(notes);
    assert_int_equal(strlen(got), 6 + 3 * 5000);
    assert_int_equal(strlen(notes), 3 * 5000);
    for (size_t i = 6; i < strlen(got); i += 3)
        if (memcmp(got + i, "\xef\xbf\xbd", 3)) fail_msg("byte %zu of the output is not U+FFFD", i);
    json_decref(j);
}

/* Run the grader; returns its exit status; the table goes to log. */
static int grade(const char *src, const char *labs, const char *extra, const char *json, const char *log) {
    return sh("timeout -k 10 600 '%s' --root '%s' --src '%s' %s --target emu --jobs 2 %s --json '%s' %s > '%s' 2>&1",
              GRADE_BIN, GRADE_ROOT, src, labs, cache_flag, json, extra, log);
}

/* The grader's log of the last grade_run(): TMP/RUN.log. */
static char run_log[PATH_MAX + 16];

/* Grade src with these labs and flags into TMP/RUN.json and TMP/RUN.log;
 * fails the test unless the grader finishes normally and writes the JSON.
 * Returns the parsed results (json_decref them). */
static json_t *grade_run(const char *src, const char *labs, const char *extra, const char *run) {
    char json[PATH_MAX + 16];
    snprintf(json, sizeof json, "%s/%s.json", tmp, run);
    snprintf(run_log, sizeof run_log, "%s/%s.log", tmp, run);
    if (grade(src, labs, extra, json, run_log) != 0)
        fail_msg("the grader failed on %s with '%s %s' (%s)", src, labs, extra, run_log);
    json_t *res = json_load_file(json, 0, NULL);
    if (!res) fail_msg("the grader wrote no results.json (%s)", json);
    return res;
}

/* Grade lab 00 of the submission in DIR/sub with the extra flags, into
 * DIR/RUN.json (returned, in json) and DIR/RUN.log; fails the test if the
 * grader does not finish normally. */
static void grade_lab00(const char *dir, const char *run, const char *extra, char *json, size_t n) {
    char src[PATH_MAX + 8], log[PATH_MAX + 64];
    snprintf(src, sizeof src, "%s/sub", dir);
    snprintf(json, n, "%s/%s.json", dir, run);
    snprintf(log, sizeof log, "%s/%s.log", dir, run);
    if (grade(src, "--lab 00", extra, json, log) != 0) fail_msg("grader failed with '%s' (%s)", extra, log);
}

/* Lay the known-wrong case in case_dir out in dest (made afresh): the lab's
 * solution files, then the case's own files over them. NAME.patch is applied
 * to the solution's NAME, NAME.starter.patch to the starter's (labs/), for a
 * case that must fail its checks anyway, such as one that tampers with
 * them. A patch that no longer applies fails the set-up, visibly, and so
 * does one whose context no longer matches (-F0): with fuzz, a patch made
 * for an older solution could land on other lines than its defect's. */
static int lay_out_case(const char *case_dir, const char *lab, const char *dest) {
    return sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d\"; cp '%s'/solutions/%s/* \"$d\"/; cp -R '%s'/. \"$d\"/;"
              " for p in \"$d\"/*.starter.patch; do [ -e \"$p\" ] || continue; f=\"${p%%.starter.patch}\";"
              " cp '%s'/labs/%s/\"$(basename \"$f\")\" \"$f\"; patch -s -F0 \"$f\" < \"$p\"; rm \"$p\"; done;"
              " for p in \"$d\"/*.patch; do [ -e \"$p\" ] || continue; patch -s -F0 \"${p%%.patch}\" < \"$p\"; rm \"$p\"; done",
              dest, GRADE_ROOT, lab, case_dir, GRADE_ROOT, lab);
}

/* The wrong submissions of one lab are graded in one --batch run (each case
 * folder is a "student"), so the course libraries are built once per lab.
 * Two students are graded at a time, so that one's build and another's
 * 5 s infinite loop overlap: on 2 cores the six batches take 4.5 min
 * instead of 6.3. Two at a time, the slowest check of labs 00-05 takes
 * 1.3 s on the emulator (lab 04's mma shapes; 0.7 s one at a time);
 * 5 s leaves room on a loaded machine and keeps the infinite loops short. */
#define CASE_TIMEOUT "--timeout 5"
static char batch_done[16][8];
static int batch_rc[16], nbatch;

/* Grade the lab of case c once (cached); returns the grader's exit status. */
static int batch_lab(const wrong_case_t *c) {
    for (int i = 0; i < nbatch; i++)
        if (!strcmp(batch_done[i], c->nn)) return batch_rc[i];
    char only[8192] = "";
    /* Only the checks some case of this lab names: the rest would pass or
     * fail the same way and only cost time. */
    for (int i = 0; i < ncases; i++) {
        const wrong_case_t *o = &cases[i];
        if (strcmp(o->nn, c->nn)) continue;
        for (int k = 0; k < o->nlose + o->nkeep; k++) {
            const char *t = k < o->nlose ? o->lose[k] : o->keep[k - o->nlose];
            char item[128];
            snprintf(item, sizeof item, " --only '%s'", t);
            if (strstr(only, item)) continue;
            snprintf(only + strlen(only), sizeof only - strlen(only), "%s", item);
        }
    }
    /* A case folder holds only the files it breaks (see lay_out_case), so
     * every test it does not break passes. */
    char stage[PATH_MAX];
    snprintf(stage, sizeof stage, "%s/stage-%s", tmp, c->nn);
    if (sh("rm -rf '%s'", stage) != 0) return -1;
    for (int i = 0; i < ncases; i++) {
        char dest[PATH_MAX * 2];
        snprintf(dest, sizeof dest, "%s/%s", stage, cases[i].name);
        if (!strcmp(cases[i].nn, c->nn) && lay_out_case(cases[i].dir, cases[i].lab, dest) != 0) return -1;
    }
    int rc = sh("timeout -k 10 600 '%s' --root '%s' --batch '%s' --parallel 2 --lab %s %s --target emu --jobs 2 %s " CASE_TIMEOUT
                " --csv '%s/wrong-%s.csv' --json '%s/wrong-%s' > '%s/wrong-%s.log' 2>&1",
                GRADE_BIN, GRADE_ROOT, stage, c->nn, only, cache_flag, tmp, c->nn, tmp, c->nn, tmp, c->nn);
    if (nbatch < 16) {
        snprintf(batch_done[nbatch], 8, "%s", c->nn);
        batch_rc[nbatch++] = rc;
    }
    return rc;
}

/* One wrong submission: loses what it breaks, keeps the rest, grader fine. */
static const char *output_of(json_t *res, const char *name);
static void test_wrong_case(void **state) {
    const wrong_case_t *c = *state;
    char json[PATH_MAX], log[PATH_MAX], labs[32], extra[4600];
    snprintf(json, sizeof json, "%s/wrong-%s/%s.json", tmp, c->nn, c->name);
    snprintf(log, sizeof log, "%s/wrong-%s.log", tmp, c->nn);
    snprintf(labs, sizeof labs, "--lab %s", c->nn);
    int rc = batch_lab(c);
    if (rc != 0) fail_msg("grader exited %d on %s (log %s)", rc, c->dir, log);
    json_t *res = json_load_file(json, 0, NULL);
    if (!res) fail_msg("no readable results.json from the grader (%s)", json);
    for (int i = 0; i < c->nlose + c->nkeep; i++) {
        int lose = i < c->nlose;
        const char *t = lose ? c->lose[i] : c->keep[i - c->nlose];
        char name[256];
        double max;
        double points;
        int kind = json_name_of(c->nn, t, name, sizeof name, &points);
        if (!kind) fail_msg("expect names '%s', which rubric %s lacks", t, c->nn);
        double s = score_of(res, name, &max);
        if (kind == 2 && max == 0) max = points; /* extra credit: results.json's maximum is 0 */
        if (!(max > 0)) fail_msg("%s: no test '%s' in results.json", c->name, name);
        if (lose && s != 0) fail_msg("%s: '%s' scored %g of %g; it must lose its points", c->name, name, s, max);
        /* A build error loses every test for any defect: a case about a
         * kernel's behaviour that stopped building (a stricter compiler
         * flag) would still pass its "lose" lines while testing nothing. */
        const char *out = lose ? output_of(res, name) : NULL;
        int unbuilt = out && !strncmp(out, "build error", 11);
        if (lose && unbuilt && !c->build_error)
            fail_msg("%s: '%s' lost its points to a build error, not to its defect; fix the case, or say "
                     "build-error in its expect file if not building is the defect:\n%.600s", c->name, name, out);
        if (lose && !unbuilt && c->build_error)
            fail_msg("%s: '%s' built, but its expect file says build-error:\n%.600s", c->name, name, out ? out : "");
        /* The output starts with the status: a hang must lose its points as a
         * timeout and a crash as crashed, not to some other failure. */
        size_t sl = strlen(c->lose_status);
        if (lose && sl && (strncmp(out, c->lose_status, sl) || (out[sl] != ' ' && out[sl] != '\n' && out[sl])))
            fail_msg("%s: '%s' lost its points, but not as '%s':\n%.600s", c->name, name, c->lose_status, out);
        if (!lose && s != max) fail_msg("%s: '%s' scored %g of %g; it must keep them", c->name, name, s, max);
        print_message("  %-22s %-40s %s %g of %g points\n", c->name, t, lose ? "lost" : "kept", lose ? max : s, max);
    }
    if (c->output_has[0]) {
        /* What the student sees: e.g. the compiler's message for a build error. */
        char name[256];
        json_name_of(c->nn, c->lose[0], name, sizeof name, NULL);
        json_t *tests = json_object_get(res, "tests"), *t;
        size_t i;
        int shown = 0;
        json_array_foreach(tests, i, t) {
            const char *nm = json_string_value(json_object_get(t, "name"));
            const char *out = json_string_value(json_object_get(t, "output"));
            if (nm && out && !strcmp(nm, name)) shown = strstr(out, c->output_has) != NULL;
        }
        if (!shown) fail_msg("%s: the output of '%s' does not show '%s'", c->name, name, c->output_has);
    }
    json_decref(res);
    /* A hard-coded answer passes with the default seed only: proof that the
     * case is real and that the grader's fresh seed is what catches it. */
    for (int i = 0; i < c->nseed; i++) {
        snprintf(log, sizeof log, "%s/%s-%s-seed2024.log", tmp, c->nn, c->name);
        snprintf(json, sizeof json, "%s/%s-%s-seed2024.json", tmp, c->nn, c->name);
        snprintf(extra, sizeof extra, "--only '%s' --seed 2024 " CASE_TIMEOUT, c->seed[i]);
        char staged[PATH_MAX]; /* the case laid over the solution by batch_lab() */
        snprintf(staged, sizeof staged, "%s/stage-%s/%s", tmp, c->nn, c->name);
        if (grade(staged, labs, extra, json, log) != 0) fail_msg("grader failed with --seed 2024 (%s)", log);
        res = json_load_file(json, 0, NULL);
        char name[256];
        double max;
        double points;
        int kind = json_name_of(c->nn, c->seed[i], name, sizeof name, &points);
        double s = score_of(res, name, &max);
        if (kind == 2 && max == 0) max = points;
        json_decref(res);
        if (!(max > 0) || s != max) fail_msg("%s: with seed 2024 '%s' should pass, scored %g", c->name, name, s);
    }
}

/* A wrong submission whose defect only the benchmark can show ("lose-speed"
 * in its expect file): laid over the solution, graded with the speed path on
 * the emulator (--emu-speed-args with the case's "speed-args"), its speed test
 * must be counted and earn nothing, with the case's "speed-output-has" in its
 * output. On the emulator there is no cuBLAS to divide by, so a speed test
 * counts only when the bench itself finds the kernel wrong (a correct kernel
 * is left out as a grader error): what these cases are about. */
static const char *output_of(json_t *res, const char *name);
static void test_wrong_speed_case(void **state) {
    const wrong_case_t *c = *state;
    char stage[PATH_MAX], json[PATH_MAX], log[PATH_MAX], extra[512], labs[32], name[256];
    snprintf(stage, sizeof stage, "%s/speed-stage-%s-%s", tmp, c->nn, c->name);
    if (lay_out_case(c->dir, c->lab, stage) != 0)
        fail_msg("%s: could not lay the case over the solution in %s", c->name, stage);
    snprintf(json, sizeof json, "%s/speed-%s-%s.json", tmp, c->nn, c->name);
    snprintf(log, sizeof log, "%s/speed-%s-%s.log", tmp, c->nn, c->name);
    snprintf(labs, sizeof labs, "--lab %s", c->nn);
    snprintf(extra, sizeof extra, "--emu-speed-args '%s' --timeout 60", c->speed_args);
    if (grade(stage, labs, extra, json, log) != 0) fail_msg("%s: the grader failed (%s)", c->name, log);
    json_t *res = json_load_file(json, 0, NULL);
    if (!res) fail_msg("%s: no results.json (%s)", c->name, json);
    snprintf(name, sizeof name, "lab %s: %s", c->nn, c->lose_speed);
    double max, sc = score_of(res, name, &max);
    const char *out = output_of(res, name);
    int shown = !c->speed_output_has[0] || strstr(out, c->speed_output_has) != NULL;
    print_message("  %-22s %-40s %g of %g points: %.160s\n", c->name, c->lose_speed, sc, max, out);
    json_decref(res);
    if (!(max > 0)) fail_msg("%s: '%s' was left out of the total (%s); it must count and earn nothing", c->name, name, log);
    if (sc != 0) fail_msg("%s: '%s' scored %g of %g; it must lose its points", c->name, name, sc, max);
    if (!shown) fail_msg("%s: the output of '%s' does not show '%s'", c->name, name, c->speed_output_has);
}

/* Every counted test of every graded lab at full marks. */
static void test_solutions_full_marks(void **state) {
    (void)state;
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/solutions", GRADE_ROOT);
    json_t *res = grade_run(src, "--all", "", "solutions"), *t;
    size_t i, n = 0;
    int needs_gpu = 0;
    json_array_foreach(json_object_get(res, "tests"), i, t) {
        double s = json_number_value(json_object_get(t, "score")), m = json_number_value(json_object_get(t, "max_score"));
        const char *out = json_string_value(json_object_get(t, "output"));
        const char *tname = json_string_value(json_object_get(t, "name"));
        size_t tl = strlen(tname);
        /* A bonus test (extra credit) has a maximum of 0 and must score its points. */
        int bonus = tl >= 7 && !strcmp(tname + tl - 7, "(bonus)");
        if (bonus && !(s > 0) && !(out && !strncmp(out, "needs GPU", 9)))
            fail_msg("solutions: bonus test '%s' scored %g", tname, s);
        if (!bonus && s != m) fail_msg("solutions: '%s' scored %g of %g", tname, s, m);
        n += m > 0;
        if (out && !strncmp(out, "needs GPU", 9)) {
            if (m != 0) fail_msg("solutions: '%s' needs a GPU but counts %g points", json_string_value(json_object_get(t, "name")), m);
            needs_gpu++;
        }
    }
    json_decref(res);
    if (n == 0) fail_msg("solutions: no graded tests at all");
    /* Without a GPU every speed test of every rubric, ratio or absolute,
     * says "needs GPU" and is left out of the total. */
    static rubric_t r;
    int speed = 0;
    for (int lab = 0; lab < 100; lab++) {
        char nn[8], err[512];
        snprintf(nn, sizeof nn, "%02d", lab);
        if (rubric_load(GRADE_ROOT, nn, &r, err, sizeof err) != 0) continue;
        for (int k = 0; k < r.ntests; k++) speed += r.tests[k].kind == KIND_SPEED;
    }
    if (needs_gpu != speed) fail_msg("solutions on emu: %d test(s) say 'needs GPU'; the rubrics have %d speed tests", needs_gpu, speed);
}

/* The whole speed path without a GPU: --emu-speed-args runs the graded bench on the emulator
 * with small arguments; lab 05's MFU (against a tiny --peak-tflops) comes back through the
 * channel, is scored and counted, and makes a leaderboard entry; lab 02's ratio has no cuBLAS
 * to divide by and is left out as a grader error. Lab 05 runs with the stored T x T attention,
 * so that the student's softmax backward is screened and audited too, and the solution passes
 * both (the known-wrong cases' speed tests run the fused attention). */
static void test_speed_path_on_emulator(void **state) {
    (void)state;
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/solutions", GRADE_ROOT);
    json_t *res = grade_run(src, "--lab 05",
                            "--emu-speed-args '--d-model 32 --layers 1 --heads 2 --ffn 64 --seq 16 --batch 2 "
                            "--warmup 0 --steps 1 --peak-tflops 0.01 --attention naive'", "emu-speed"), *t;
    size_t i;
    int seen = 0;
    json_array_foreach(json_object_get(res, "tests"), i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        if (!strstr(name, "training speed")) continue;
        seen = 1;
        const char *out = json_string_value(json_object_get(t, "output"));
        double sc = json_number_value(json_object_get(t, "score")), mx = json_number_value(json_object_get(t, "max_score"));
        if (mx != 5.0 || !(sc >= 0.0 && sc <= 5.0)) fail_msg("lab 05 speed: score %g of %g", sc, mx);
        if (!out || !strstr(out, "MFU ")) fail_msg("lab 05 speed: no MFU figure in '%s'", out ? out : "");
    }
    if (!seen) fail_msg("lab 05 speed test missing (%s)", run_log);
    json_t *board = json_object_get(res, "leaderboard");
    if (json_array_size(board) != 1 || !(json_number_value(json_object_get(json_array_get(board, 0), "value")) > 0))
        fail_msg("lab 05 speed: expected one leaderboard entry with a positive MFU (%s)", run_log);
    json_decref(res);

    res = grade_run(src, "--lab 02", "--emu-speed-args '--sizes 64 --reps 1'", "emu-speed-02");
    seen = 0;
    json_array_foreach(json_object_get(res, "tests"), i, t) {
        const char *out = json_string_value(json_object_get(t, "output"));
        if (!out || !strstr(out, "no baseline was measured")) continue;
        seen = 1;
        if (json_number_value(json_object_get(t, "max_score")) != 0.0) fail_msg("lab 02 speed without a baseline counts");
    }
    if (!seen) fail_msg("lab 02 speed on the emulator: no 'no baseline' grader error (%s)", run_log);
    json_decref(res);

    /* Lab 01's two speed tests have the same bench arguments: the bench runs
     * once and the second test is scored from that run (the speed-up is left
     * out on the emulator, whose times are CPU times). */
    res = grade_run(src, "--lab 01", "--emu-speed-args '--sizes 16 --reps 1'", "emu-speed-01");
    const char *up = output_of(res, "lab 01: coalescing speed-up, 4096^3");
    if (!up || !strstr(up, "(from the benchmark run of 'coalesced speed, 4096^3', which had the same arguments)"))
        fail_msg("lab 01's speed-up test should reuse the bench run of its first speed test (%s)", run_log);
    if (!strstr(up, "graded only on a GPU")) fail_msg("lab 01's speed-up on the emulator: '%s'", up);
    json_decref(res);
}

/* A grader started with standard input, output and error closed (a cron
 * job) grades as any other: its pipes took fds 0-2, the child's output and
 * stderr clashed, and a correct check "ended without the check's verdict". */
static void test_std_fds_closed(void **state) {
    (void)state;
    char json[PATH_MAX + 16];
    snprintf(json, sizeof json, "%s/std-closed.json", tmp);
    unlink(json);
    int rc = sh("timeout -k 10 600 '%s' --root '%s' --src '%s/solutions' --lab 00 --only test_single_element "
                "--target emu --jobs 2 %s --json '%s' <&- >&- 2>&-",
                GRADE_BIN, GRADE_ROOT, GRADE_ROOT, cache_flag, json);
    json_t *res = json_load_file(json, 0, NULL);
    double score = json_number_value(json_object_get(res, "score"));
    const char *out = output_of(res, "lab 00: one element");
    if (rc != 0 || score != 2.0)
        fail_msg("graded with fds 0-2 closed: exit status %d, score %g, want 0 and 2: %s", rc, score, out ? out : "");
    json_decref(res);
}

/* The unmodified starters earn nothing. */
static void test_starters_score_zero(void **state) {
    (void)state;
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/labs", GRADE_ROOT);
    json_t *res = grade_run(src, "--all", "", "starters");
    double s = json_number_value(json_object_get(res, "score"));
    json_decref(res);
    if (s != 0) fail_msg("the starters scored %g; they must score 0", s);
    if (!file_has(run_log, "not started")) fail_msg("the starters' table does not say 'not started' (%s)", run_log);
}

/* --batch: one CSV row per student folder, whatever its layout. */
static void test_batch_csv(void **state) {
    (void)state;
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/batch.log", tmp);
    if (sh("set -e; d='%s/batch'; mkdir -p \"$d/alice/00-hello\" \"$d/bob\" \"$d/carol/labs/00-hello\";"
           "cp '%s/solutions/00-hello/vector_add.cu' \"$d/alice/00-hello/\";"
           "cp '%s/solutions/00-hello/vector_add.cu' \"$d/bob/\";"
           "patch -s \"$d/bob/vector_add.cu\" < '%s/autograder/wrong/00-hello/zeros/vector_add.cu.patch';"
           "cp '%s/solutions/00-hello/vector_add.cu' \"$d/carol/labs/00-hello/\"",
           tmp, GRADE_ROOT, GRADE_ROOT, GRADE_ROOT, GRADE_ROOT) != 0)
        fail_msg("could not lay out the batch folder");
    int rc = sh("timeout -k 10 600 '%s' --root '%s' --batch '%s/batch' --csv '%s/batch.csv' --lab 00 --target emu --jobs 2 %s"
                " > '%s' 2>&1",
                GRADE_BIN, GRADE_ROOT, tmp, tmp, cache_flag, log);
    if (rc != 0) fail_msg("grade --batch exited %d (%s)", rc, log);
    char csv[PATH_MAX];
    snprintf(csv, sizeof csv, "%s/batch.csv", tmp);
    if (!file_has(csv, "student,lab 00,total,max,notes\n")) fail_msg("batch.csv has no header row");
    if (!file_has(csv, "\"alice\",10.00,10.00,10.00,\"\"\n")) fail_msg("batch.csv: alice should have 10 of 10");
    if (!file_has(csv, "\"bob\",0.00,0.00,10.00,\"\"\n")) fail_msg("batch.csv: bob should have 0 of 10");
    if (!file_has(csv, "\"carol\",10.00,10.00,10.00,\"\"\n")) fail_msg("batch.csv: carol (labs/ layout) should have 10 of 10");
}

/* --batch tells a build error, an empty submission and an untouched starter
 * from a low score, on the console and in the CSV's notes column, and an
 * entry that is not a folder (a zip) gets a row too, marked not graded with
 * no points: no student is missing from the CSV. A name that starts as a spreadsheet
 * formula does ("=1+1.zip") is written as text. The same with --parallel 2. */
static void test_batch_notes(void **state) {
    (void)state;
    char d[PATH_MAX], log[PATH_MAX + 16], args[PATH_MAX * 3], csv[PATH_MAX + 16];
    snprintf(d, sizeof d, "%s/batch-notes", tmp);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d/in/alice/00-hello\" \"$d/in/carol\" \"$d/in/dave\" \"$d/in/frank\";"
           " cp '%s/labs/00-hello/vector_add.cu' \"$d/in/frank/\";"
           " cp '%s/solutions/00-hello/vector_add.cu' \"$d/in/alice/00-hello/\"; cp \"$d/in/alice/00-hello/vector_add.cu\" \"$d/in/carol/\";"
           " patch -s \"$d/in/carol/vector_add.cu\" < '%s/autograder/wrong/00-hello/compile_error/vector_add.cu.patch';"
           " echo 'my answers' > \"$d/in/dave/notes.txt\"; touch \"$d/in/erin.zip\" \"$d/in/=1+1.zip\"",
           d, GRADE_ROOT, GRADE_ROOT, GRADE_ROOT) != 0)
        fail_msg("could not lay out %s", d);
    const char *how[2] = {"", "--parallel 2"};
    char first[4096] = "";
    for (int k = 0; k < 2; k++) {
        snprintf(log, sizeof log, "%s/run%d.log", d, k);
        snprintf(csv, sizeof csv, "%s/run%d.csv", d, k);
        snprintf(args, sizeof args, "--batch '%s/in' --csv '%s' --lab 00 --only test_single_element %s", d, csv, how[k]);
        int rc = grade_args(args, log);
        if (rc != 0) fail_msg("grade %s exited %d (%s)", args, rc, log);
        const char *text = file_text(csv);
        static const char *const rows[] = {
            /* A name a spreadsheet would take for a formula is written as text. */
            "student,lab 00,total,max,notes\n\"'=1+1.zip\",,,,\"not graded: not a folder; unzip it first\"\n"
            "\"alice\",2.00,2.00,2.00,\"\"\n\"carol\",0.00,0.00,2.00,\"build error: ",
            "\n\"dave\",0.00,0.00,2.00,\"no student files: graded the starters\"\n"
            "\"erin.zip\",,,,\"not graded: not a folder; unzip it first\"\n"
            "\"frank\",0.00,0.00,2.00,\"unchanged from the starter\"\n"};

        if (strncmp(text, rows[0], strlen(rows[0])) || !strstr(text, rows[1]))
            fail_msg("grade %s wrote the CSV\n%s\nwant it to start\n%s\nand to hold\n%s", args, text, rows[0], rows[1]);
        if (!strstr(text, "error: expected")) fail_msg("carol's note does not quote the compiler's error:\n%s", text);
        /* gcc's U+2018 and U+2019 quotes (a UTF-8 locale) become ASCII ones */
        if (strstr(text, "\xe2\x80") || !strstr(text, "expected '"))
            fail_msg("carol's note should quote with ' only:\n%s", text);
        if (k == 0) snprintf(first, sizeof first, "%s", text);
        else if (strcmp(first, text)) fail_msg("--parallel 2 wrote\n%s\none at a time wrote\n%s", text, first);
        text = file_text(log);
        static const char *const lines[] = {"\nalice                    2.00 / 2.00 points\n",
                                            "\ncarol                    0.00 / 2.00 points  (build error: ",
                                            "\ndave                     0.00 / 2.00 points  (no student files: graded the starters)\n",
                                            "\nerin.zip                 not graded: not a folder; unzip it first\n",
                                            "\nfrank                    0.00 / 2.00 points  (unchanged from the starter)\n",
                                            "grade: 4 submission(s), 2 entries not graded (not a folder); scores in "};
        for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
            if (!strstr(text, lines[i])) fail_msg("grade %s: the console does not show '%s' (%s)", args, lines[i], log);
    }
}

/* As root: student code runs as an unprivileged user and still passes. */
static void test_run_as_user(void **state) {
    (void)state;
    if (getuid() != 0 || !getpwnam("nobody")) skip();
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/solutions", GRADE_ROOT);
    json_t *res = grade_run(src, "--lab 00", "--run-as nobody", "runas");
    double s = json_number_value(json_object_get(res, "score"));
    json_decref(res);
    if (s != 10) fail_msg("lab 00 solution as user nobody scored %g of 10 (%s)", s, run_log);
}

/* As root with --run-as, the student's files are compiled as that user too:
 * a submission that #includes a root-only file gets "Permission denied", not
 * the file's lines quoted in the compile errors it is shown. Without
 * --run-as (the grader as root) the same submission does see them: proof
 * that the leak is real and that --run-as is what stops it. */
static void test_build_runs_as_user(void **state) {
    (void)state;
    if (getuid() != 0 || !getpwnam("nobody")) skip();
    char d[PATH_MAX], json[PATH_MAX];
    snprintf(d, sizeof d, "%s/leak", tmp);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d/sub/00-hello\"; printf 'ROOT-ONLY-MARKER-7f3a\\n' > \"$d/secret\";"
           " chmod 600 \"$d/secret\"; { echo \"#include \\\"$d/secret\\\"\"; cat '%s/solutions/00-hello/vector_add.cu'; }"
           " > \"$d/sub/00-hello/vector_add.cu\"", d, GRADE_ROOT) != 0)
        fail_msg("could not lay out %s", d);
    grade_lab00(d, "root", "", json, sizeof json);
    if (!strstr(file_text(json), "ROOT-ONLY-MARKER-7f3a"))
        fail_msg("built as root, the compile errors should quote the included file (%s)", json);
    grade_lab00(d, "nobody", "--run-as nobody", json, sizeof json);
    const char *out = file_text(json);
    if (strstr(out, "ROOT-ONLY-MARKER-7f3a")) fail_msg("built as nobody, a root-only file reached the output (%s)", json);
    if (!strstr(out, "Permission denied")) fail_msg("built as nobody, the error should say 'Permission denied' (%s)", json);
    if (json_load_score(json) != 0.0) fail_msg("a submission that does not build scored points (%s)", json);
}

/* --mem-mb bounds a test's address space: a submission that allocates and
 * touches memory until malloc fails gets less than the limit, loses that
 * test only, and the grader finishes. --help names the default it would
 * use on this machine: half its memory, from 2048 to 16384 MiB. */
static void test_memory_limit(void **state) {
    (void)state;
    /* At most half the machine's memory (a container's limit may make it
     * less), clamped to [2048, 16384]. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    long long most = (long long)pages * page / 2 / (1LL << 20);
    most = most < 2048 ? 2048 : most > 16384 ? 16384 : most;
    char d[PATH_MAX], json[PATH_MAX], help[PATH_MAX];
    snprintf(d, sizeof d, "%s/hog", tmp);
    snprintf(help, sizeof help, "%s/help.txt", d);
    if (sh("mkdir -p '%s' && '%s' --help > '%s'", d, GRADE_BIN, help) != 0) fail_msg("grade --help failed");
    const char *here = strstr(file_text(help), "from 2048 to 16384; here ");
    long long said = here ? strtoll(here + strlen("from 2048 to 16384; here "), NULL, 10) : -1;
    if (said < 2048 || said > most)
        fail_msg("grade --help should give a default --mem-mb from 2048 to %lld, gives %lld (%s)", most, said, help);
    /* For n == 1 (the check "one element") the submission takes 64 MiB at
     * a time, touching each, until malloc fails (or it has 4 GiB, so that a
     * limit that does not hold fails this test, not the machine), prints
     * how much it got and returns without computing c; every other n is
     * the solution's. */
    char f[PATH_MAX + 32];
    snprintf(f, sizeof f, "%s/sub/00-hello/vector_add.cu", d);
    if (sh("rm -rf '%s/sub' && mkdir -p '%s/sub/00-hello'", d, d) != 0) fail_msg("could not make %s", d);
    FILE *fp = fopen(f, "w");
    if (!fp) fail_msg("could not write %s", f);
    fputs("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
          "static int hog(void) {\n"
          "    size_t got = 0;\n"
          "    void *p;\n"
          "    while (got < 4096 && (p = malloc(64u << 20)) != NULL) { memset(p, 1, 64u << 20); got += 64; }\n"
          "    printf(\"HOG-MIB %zu\\n\", got);\n"
          "    fflush(stdout);\n"
          "    return 0;\n"
          "}\n", fp);
    fclose(fp);
    if (sh("sed 's/^    if (n < 0) return LAB_BAD_ARGUMENT;/    if (n == 1) return hog();\\n&/'"
           " '%s/solutions/00-hello/vector_add.cu' >> '%s' && grep -q 'return hog()' '%s'", GRADE_ROOT, f, f) != 0)
        fail_msg("could not lay out %s", d);
    grade_lab00(d, "hog", "--mem-mb 2048 --timeout 60", json, sizeof json);
    const char *out = file_text(json);
    const char *h = strstr(out, "HOG-MIB ");
    if (!h) fail_msg("the hog's line should be in the failed test's output (%s)", json);
    long got = strtol(h + 8, NULL, 10);
    print_message("the hog got %ld MiB under --mem-mb 2048\n", got);
    if (got <= 0 || got >= 2048) fail_msg("under --mem-mb 2048 the hog got %ld MiB (%s)", got, json);
    /* "one element" is worth 2 of lab 00's 10 points, and "n = 0, n < 0, refused launch"
     * (1 point) counts only once it passes; the other two tests pass. */
    if (json_load_score(json) != 7.0) fail_msg("expected 7 of 10 points, got %g (%s)", json_load_score(json), json);
}

/* tree_hash: a file's bytes, mode and name count, a names-only file's bytes
 * do not, nor does a skipped top-level folder. */
static void test_tree_hash(void **state) {
    (void)state;
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/hash", tmp);
    if (sh("set -e; rm -rf '%s'; mkdir -p '%s/a' '%s/build'; echo one > '%s/a/f'; echo two > '%s/a/s';"
           " echo out > '%s/build/o'", d, d, d, d, d, d) != 0)
        fail_msg("could not lay out %s", d);
    static const char *const skip[] = {"build", NULL};
    const char *names_only[] = {"a/s"};
    int err = 1;
    uint64_t h0 = tree_hash(d, skip, names_only, 1, "emu", &err);
    assert_int_equal(err, 0);
    assert_true(tree_hash(d, skip, names_only, 1, "emu", &err) == h0); /* the same tree, the same name */
    assert_true(tree_hash(d, skip, names_only, 1, "cuda", &err) != h0); /* the salt counts */
    sh("echo changed > '%s/a/s'; echo changed > '%s/build/o'", d, d);
    assert_true(tree_hash(d, skip, names_only, 1, "emu", &err) == h0); /* names-only and skipped: no change */
    assert_true(tree_hash(d, skip, NULL, 0, "emu", &err) != tree_hash(d, skip, names_only, 1, "emu", &err));
    sh("echo One > '%s/a/f'", d);
    uint64_t h1 = tree_hash(d, skip, names_only, 1, "emu", &err);
    assert_true(h1 != h0); /* a file's bytes */
    sh("chmod 0664 '%s/a/f'", d);
    uint64_t h1g = tree_hash(d, skip, names_only, 1, "emu", &err);
    assert_true(h1g != h1); /* its group's bits */
    sh("chmod 0755 '%s/a/f'", d);
    uint64_t h2 = tree_hash(d, skip, names_only, 1, "emu", &err);
    assert_true(h2 != h1 && h2 != h1g); /* its mode */
    sh("touch '%s/a/new'", d);
    uint64_t h3 = tree_hash(d, skip, names_only, 1, "emu", &err);
    assert_true(h3 != h2); /* a new, empty file */
    sh("mv '%s/a/new' '%s/a/renamed'", d, d);
    assert_true(tree_hash(d, skip, names_only, 1, "emu", &err) != h3); /* a name */
    assert_int_equal(err, 0);
    tree_hash("/nonexistent-course-tree", skip, NULL, 0, "emu", &err);
    assert_int_equal(err, 1);
    /* A name ending in '*' is a prefix, at the top level only: build-debug/
     * and .gpu-bundle/ are left out as the grader's base copy leaves them;
     * a/build-x and a/.h, below the top, are not. */
    static const char *const prefixes[] = {"build*", ".*", NULL};
    err = 0;
    uint64_t p0 = tree_hash(d, prefixes, NULL, 0, "emu", &err);
    sh("mkdir -p '%s/build-debug' '%s/.gpu-bundle'; echo x > '%s/build-debug/o'; echo y > '%s/.gpu-bundle/z'", d, d,
       d, d);
    assert_true(tree_hash(d, prefixes, NULL, 0, "emu", &err) == p0);
    assert_true(tree_hash(d, skip, NULL, 0, "emu", &err) != tree_hash(d, prefixes, NULL, 0, "emu", &err));
    sh("echo z > '%s/a/build-x'", d);
    uint64_t p1 = tree_hash(d, prefixes, NULL, 0, "emu", &err);
    assert_true(p1 != p0);
    sh("echo h > '%s/a/.h'", d);
    assert_true(tree_hash(d, prefixes, NULL, 0, "emu", &err) != p1);
    assert_int_equal(err, 0);
    char copy[PATH_MAX + 8], probe[PATH_MAX + 64];
    snprintf(copy, sizeof copy, "%s-copy", d);
    tree_remove(copy);
    assert_int_equal(tree_copy(d, copy, prefixes), 0);
    snprintf(probe, sizeof probe, "%s/a/.h", copy);
    assert_int_equal(access(probe, F_OK), 0);
    snprintf(probe, sizeof probe, "%s/a/build-x", copy);
    assert_int_equal(access(probe, F_OK), 0);
    snprintf(probe, sizeof probe, "%s/build-debug", copy);
    assert_int_not_equal(access(probe, F_OK), 0);
    snprintf(probe, sizeof probe, "%s/.gpu-bundle", copy);
    assert_int_not_equal(access(probe, F_OK), 0);
    snprintf(probe, sizeof probe, "%s/build", copy);
    assert_int_not_equal(access(probe, F_OK), 0);
    tree_remove(copy);
}

/* mkdirs: a path and its parents made, one already there is fine; a file
 * where the folder should be, at the end or on the way, is refused with
 * ENOTDIR (it said 0 for a file at the end, and the caller went on to
 * write into it: "--base-cache FILE" failed later at its lock, with a
 * message about the lock). */
static void test_tree_mkdirs(void **state) {
    (void)state;
    char d[PATH_MAX], p[PATH_MAX + 64];
    snprintf(d, sizeof d, "%s/mkdirs", tmp);
    tree_remove(d);
    snprintf(p, sizeof p, "%s/a/b/c", d);
    assert_int_equal(mkdirs(p, 0755), 0);
    struct stat st;
    assert_true(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
    assert_int_equal(mkdirs(p, 0755), 0); /* there already */
    snprintf(p, sizeof p, "%s/a/b/c/", d);
    assert_int_equal(mkdirs(p, 0755), 0);
    snprintf(p, sizeof p, "%s/a/file", d);
    if (sh("echo x > '%s'", p) != 0) fail_msg("cannot write %s", p);
    errno = 0;
    assert_int_equal(mkdirs(p, 0755), -1);
    assert_int_equal(errno, ENOTDIR);
    snprintf(p, sizeof p, "%s/a/file/below", d);
    assert_int_equal(mkdirs(p, 0755), -1);
    errno = 0;
    assert_int_equal(mkdirs("", 0755), -1); /* as mkdir(""): no such folder */
    assert_int_equal(errno, ENOENT);
    /* A path longer than mkdirs holds (folders of 100 bytes, 5000 in all) is
     * refused, not cut to its first 4095 bytes and that folder made. */
    static char longp[5000];
    int k = snprintf(longp, sizeof longp, "%s/long", d);
    for (int i = k; i < (int)sizeof longp - 1; i++) longp[i] = (i - k) % 100 ? 'x' : '/';
    errno = 0;
    assert_int_equal(mkdirs(longp, 0755), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    snprintf(p, sizeof p, "%s/long", d);
    assert_int_not_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/a/link", d);
    if (sh("ln -s b '%s'", p) != 0) fail_msg("cannot link %s", p);
    assert_int_equal(mkdirs(p, 0755), 0); /* a link to a folder is a folder */
    tree_remove(d);
}

/* Write len bytes of a pattern that depends on seed into path. */
static void write_pattern(const char *path, size_t len, unsigned seed) {
    FILE *f = fopen(path, "w");
    if (!f) fail_msg("cannot write %s", path);
    for (size_t i = 0; i < len; i++) fputc((int)((i * 2654435761u + seed) >> 13 & 0xff), f);
    fclose(f);
}

/* Do the files at a and b hold the same bytes? */
static int same_bytes(const char *a, const char *b) {
    return sh("cmp -s '%s' '%s'", a, b) == 0;
}

/* Call fn(arg) with stderr going to the file err (emptied first). */
static void stderr_to(const char *err, void (*fn)(void *), void *arg) {
    fflush(stderr);
    int saved = dup(2);
    int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

/* One tree_copy or tree_hash call of test_tree_long_paths, and what it gave. */
typedef struct {
    const char *src, *dst; /* dst NULL: hash src */
    int rc, err, errno_was;
} long_call_t;

static void long_call(void *arg) {
    long_call_t *c = arg;
    errno = 0;
    if (c->dst) c->rc = tree_copy(c->src, c->dst, NULL);
    else tree_hash(c->src, NULL, NULL, 0, "emu", &c->err);
    c->errno_was = errno;
}

/* A path past 4096 bytes is refused with ENAMETOOLONG and a message naming
 * its start, never cut: a file 25 folders of 200 bytes down was left out of
 * a copy and of the hash without a word, and a copy into a folder of 4093
 * bytes wrote its file "long-name" as "l" (the first 4095 bytes of the path). */
static void test_tree_long_paths(void **state) {
    (void)state;
    char d[PATH_MAX], deep[PATH_MAX + 16], small[PATH_MAX + 16], err[PATH_MAX + 16];
    static char dst[8192], p[8192];
    snprintf(d, sizeof d, "%s/tree-long", tmp);
    snprintf(deep, sizeof deep, "%s/deep", d);
    snprintf(small, sizeof small, "%s/small", d);
    snprintf(err, sizeof err, "%s/long.err", tmp);
    tree_remove(d);
    if (sh("set -e; mkdir -p '%s' '%s'; echo x > '%s/long-name'", deep, small, small) != 0)
        fail_msg("could not lay out %s", d);
    /* One folder at a time, by descriptor: no single call could name the file. */
    char name[201];
    memset(name, 'x', 200);
    name[200] = '\0';
    int fd = open(deep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; i < 25 && fd >= 0; i++) {
        int next = mkdirat(fd, name, 0755) == 0 ? openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        close(fd);
        fd = next;
    }
    int f = fd >= 0 ? openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (f < 0 || write(f, "deep\n", 5) != 5) fail_msg("could not lay out %s", deep);
    close(f);
    close(fd);
    long_call_t c = {deep, NULL, 0, 0, 0};
    stderr_to(err, long_call, &c);
    if (!c.err || c.errno_was != ENAMETOOLONG)
        fail_msg("tree_hash of a tree with a path past 4096 bytes: err %d, errno %d; want 1 and ENAMETOOLONG", c.err,
                 c.errno_was);
    char start[81]; /* the message names the path's first 80 bytes */
    snprintf(start, sizeof start, "%s/%s", deep, name);
    snprintf(p, sizeof p, "grade: cannot hash %s... (4096 bytes or more, past the 4096 a path may have here): "
             "move the tree to a shorter path (the course tree, TMPDIR or --base-cache), or flatten its folders", start);
    if (!file_has(err, p)) fail_msg("tree_hash: no message '%s' in %s", p, err);

    snprintf(dst, sizeof dst, "%s/copy", d);
    c = (long_call_t){deep, dst, 0, 0, 0};
    stderr_to(err, long_call, &c);
    if (c.rc != -1 || c.errno_was != ENAMETOOLONG)
        fail_msg("tree_copy of a tree with a path past 4096 bytes: %d, errno %d; want -1 and ENAMETOOLONG", c.rc,
                 c.errno_was);
    snprintf(p, sizeof p, "grade: cannot copy %s... (4096 bytes or more", start);
    if (!file_has(err, p)) fail_msg("tree_copy: no message '%s' in %s", p, err);

    /* Into a folder of 4093 bytes (made by mkdirs, which takes it): dst/long-name does not fit. */
    int k = snprintf(dst, sizeof dst, "%s/into", d);
    while (k < 4093) {
        int n = 4093 - k - 1 > 200 ? 200 : 4093 - k - 1;
        dst[k++] = '/';
        for (int i = 0; i < n; i++) dst[k++] = 'y';
        dst[k] = '\0';
    }
    assert_int_equal((int)strlen(dst), 4093);
    c = (long_call_t){small, dst, 0, 0, 0};
    stderr_to(err, long_call, &c);
    if (c.rc != -1 || c.errno_was != ENAMETOOLONG)
        fail_msg("tree_copy into a folder of 4093 bytes: %d, errno %d; want -1 and ENAMETOOLONG", c.rc, c.errno_was);
    snprintf(p, sizeof p, "grade: cannot copy into %.80s... (4096 bytes or more", dst);
    if (!file_has(err, p)) fail_msg("tree_copy: no message '%s' in %s", p, err);
    snprintf(p, sizeof p, "%s/l", dst);
    if (access(p, F_OK) == 0) fail_msg("tree_copy wrote long-name as 'l', its cut name");
    tree_remove(d);
}

/* out = start, then folders of up to 200 bytes of c until it is len bytes
 * long (len < 4096: made at once by mkdirs, which takes it). */
static void long_dir(char *out, size_t n, const char *start, int len, char c) {
    int k = snprintf(out, n, "%s", start);
    while (k < len) {
        int m = len - k - 1 > 200 ? 200 : len - k - 1;
        out[k++] = '/';
        for (int i = 0; i < m; i++) out[k++] = c;
        out[k] = '\0';
    }
    assert_int_equal((int)strlen(out), len);
    if (mkdirs(out, 0755) != 0) fail_msg("could not make a folder of %d bytes under %s: %s", len, start, strerror(errno));
}

/* Make the empty file name in the folder dir, by descriptor: dir/name may be
 * past what a path may have. */
static void touch_at(const char *dir, const char *name) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int f = fd >= 0 ? openat(fd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (f < 0) fail_msg("could not make %s in %s", name, dir);
    close(f);
    close(fd);
}

/* One tree_chown or lab_student_files call of the tests below, and what it gave. */
typedef struct {
    const char *path;    /* the tree to chown, or the course tree */
    uid_t uid;           /* chown: to whom */
    int files;           /* 1: lab_student_files(path, "99-x") */
    int rc, errno_was;
} owner_call_t;

static void owner_call(void *arg) {
    owner_call_t *c = arg;
    char names[4][128];
    errno = 0;
    if (c->files) c->rc = lab_student_files(c->path, "99-x", names, 4);
    else c->rc = tree_chown(c->path, c->uid, c->uid);
    c->errno_was = errno;
}

/* tree_chown of a tree with an entry past 4096 bytes says so (ENAMETOOLONG,
 * and stderr names the path's start) instead of changing the owner of its cut
 * path and leaving the entry as it was without a word (with --run-as, a
 * file the student user made could stay theirs while student code runs).
 * The entries that fit still change owner. */
static void test_tree_chown_long_path(void **state) {
    (void)state;
    static char d[PATH_MAX], deep[8192], err[PATH_MAX + 16], p[8192];
    snprintf(d, sizeof d, "%s/chown-long", tmp);
    snprintf(err, sizeof err, "%s/chown-long.err", tmp);
    tree_remove(d);
    long_dir(deep, sizeof deep, d, 4080, 'c');
    touch_at(deep, "a-name-past-the-limit"); /* 4080 + 1 + 21 bytes */
    uid_t to = getuid() == 0 ? 65534 : getuid(); /* as another user, only one's own uid may be given */
    owner_call_t c = {d, to, 0, 0, 0};
    stderr_to(err, owner_call, &c);
    if (c.errno_was != ENAMETOOLONG) fail_msg("tree_chown of a tree with a path past 4096 bytes: errno %d, want ENAMETOOLONG", c.errno_was);
    char start[81];
    snprintf(start, sizeof start, "%s", deep);
    snprintf(p, sizeof p, "grade: cannot change the owner of %s... (4096 bytes or more, past the 4096 a path may "
             "have here): move the tree to a shorter path", start);
    if (!file_has(err, p)) fail_msg("tree_chown: no message '%s' in %s", p, err);
    struct stat st;
    if (lstat(deep, &st) != 0 || st.st_uid != to) fail_msg("tree_chown left %.80s... (which fits) as it was", deep);
    tree_remove(d);
}

/* tree_chown says when an owner could not change: -1, errno saying why,
 * and stderr naming the entry, for a tree that is not there (it returned 0,
 * and --run-as went on with a build its user could not write, or student
 * code with a build still that user's). */
static void test_tree_chown_fails(void **state) {
    (void)state;
    char d[PATH_MAX], err[PATH_MAX + 16], p[PATH_MAX * 2];
    snprintf(d, sizeof d, "%s/chown-missing", tmp);
    snprintf(err, sizeof err, "%s/chown-missing.err", tmp);
    tree_remove(d);
    owner_call_t c = {d, 65534, 0, 0, 0};
    stderr_to(err, owner_call, &c);
    if (c.rc != -1 || c.errno_was != ENOENT)
        fail_msg("tree_chown of a missing tree: %d, errno %d; want -1 and ENOENT", c.rc, c.errno_was);
    snprintf(p, sizeof p, "grade: cannot change the owner of %s to 65534:65534: No such file or directory", d);
    if (!file_has(err, p)) fail_msg("tree_chown: no message '%s' in %s", p, err);
}

/* lab_student_files under a long course tree: a student file whose path is
 * past 4096 bytes was left out of the list (and so of the grade) without a
 * word, and a lab folder past it read as a lab with none; both are now -1
 * with ENAMETOOLONG and a message naming the path's start. */
static void test_lab_long_path(void **state) {
    (void)state;
    static char d[PATH_MAX], root[8192], lab[8192], err[PATH_MAX + 16], p[8192];
    snprintf(d, sizeof d, "%s/lab-long", tmp);
    snprintf(err, sizeof err, "%s/lab-long.err", tmp);
    tree_remove(d);
    long_dir(root, sizeof root, d, 4070, 'l');
    snprintf(lab, sizeof lab, "%s/labs/99-x", root);
    if (mkdirs(lab, 0755) != 0) fail_msg("could not make %.80s...", lab);
    touch_at(lab, "a-student-file-name.cu"); /* 4083 + 1 + 22 bytes */
    touch_at(lab, "b.cu");                   /* fits */
    owner_call_t c = {root, 0, 1, 0, 0};
    stderr_to(err, owner_call, &c);
    if (c.rc != -1 || c.errno_was != ENAMETOOLONG)
        fail_msg("lab_student_files with a file past 4096 bytes: %d, errno %d; want -1 and ENAMETOOLONG", c.rc, c.errno_was);
    char start[81];
    snprintf(start, sizeof start, "%s", lab);
    snprintf(p, sizeof p, "grade: cannot list the student file %s... (4096 bytes or more", start);
    if (!file_has(err, p)) fail_msg("lab_student_files: no message '%s' in %s", p, err);

    /* The lab folder itself past 4096 bytes: root/labs/99-x of 4103, root of 4090. */
    snprintf(root + 4070, sizeof root - 4070, "/%019d", 0);
    assert_int_equal((int)strlen(root), 4090);
    c = (owner_call_t){root, 0, 1, 0, 0};
    stderr_to(err, owner_call, &c);
    if (c.rc != -1 || c.errno_was != ENAMETOOLONG)
        fail_msg("lab_student_files of a lab folder past 4096 bytes: %d, errno %d; want -1 and ENAMETOOLONG", c.rc,
                 c.errno_was);
    snprintf(start, sizeof start, "%s", root);
    snprintf(p, sizeof p, "grade: cannot list the student files of %s... (4096 bytes or more", start);
    if (!file_has(err, p)) fail_msg("lab_student_files: no message '%s' in %s", p, err);
    tree_remove(d);
}

/* file_copy: the bytes (more than one 64 KiB buffer), the mode (also over an
 * existing file of another mode), the modification time to the nanosecond
 * (make must see prebuilt outputs as up to date), a longer old file cut to
 * the new length; a read error fails it. It copies only a regular file, and
 * never through a link: a link or a folder as the source, or a link as the
 * destination, is refused and nothing is written. */
static void test_tree_file_copy(void **state) {
    (void)state;
    char d[PATH_MAX], a[PATH_MAX + 32], b[PATH_MAX + 32], c[PATH_MAX + 32], l[PATH_MAX + 32];
    snprintf(d, sizeof d, "%s/file-copy", tmp);
    tree_remove(d);
    assert_int_equal(mkdirs(d, 0755), 0);
    snprintf(a, sizeof a, "%s/a", d);
    snprintf(b, sizeof b, "%s/b", d);
    write_pattern(a, 200000, 1);
    chmod(a, 0750);
    struct timespec ts[2] = {{1000000000, 123456789}, {1100000000, 987654321}};
    assert_int_equal(utimensat(AT_FDCWD, a, ts, 0), 0);
    assert_int_equal(file_copy(a, b), 0);
    struct stat sa, sb;
    assert_true(stat(a, &sa) == 0 && stat(b, &sb) == 0);
    if (!same_bytes(a, b)) fail_msg("the copy's bytes differ from %s", a);
    assert_int_equal(sb.st_mode & 07777, 0750);
    assert_true(sb.st_mtim.tv_sec == 1100000000 && sb.st_mtim.tv_nsec == 987654321);
    /* Over an existing file: shorter, another mode. */
    write_pattern(a, 1000, 2);
    chmod(a, 0600);
    chmod(b, 0644);
    assert_int_equal(file_copy(a, b), 0);
    assert_true(stat(b, &sb) == 0);
    assert_int_equal(sb.st_size, 1000);
    if (!same_bytes(a, b)) fail_msg("a shorter copy over a longer file differs from %s", a);
    assert_int_equal(sb.st_mode & 07777, 0600);
    /* A link as the source, a folder as the source: refused, nothing made. */
    snprintf(l, sizeof l, "%s/link", d);
    snprintf(c, sizeof c, "%s/c", d);
    assert_int_equal(symlink(a, l), 0);
    assert_int_equal(file_copy(l, c), -1);
    assert_int_not_equal(access(c, F_OK), 0);
    assert_int_equal(file_copy(d, c), -1);
    assert_int_not_equal(access(c, F_OK), 0);
    /* A regular file that cannot be read (reading /proc/self/mem at 0 is an I/O error):
     * a failed copy, not an empty file. */
    struct stat smem;
    if (lstat("/proc/self/mem", &smem) == 0 && S_ISREG(smem.st_mode)) assert_int_equal(file_copy("/proc/self/mem", c), -1);
    unlink(c);
    /* A link as the destination: refused, its target unchanged. */
    write_pattern(c, 10, 3);
    snprintf(l, sizeof l, "%s/link-to-c", d);
    assert_int_equal(symlink(c, l), 0);
    assert_int_equal(file_copy(a, l), -1);
    assert_true(stat(c, &sb) == 0 && sb.st_size == 10);
    tree_remove(d);
}

/* tree_copy keeps what make and the checks see: bytes, modes, times of
 * files and of folders; a link is copied as a link with its target, never
 * followed (a link to a folder outside the tree does not bring that
 * folder's files in, a dangling one stays dangling); a FIFO is left out.
 * It says it failed when a file cannot be written (a link already where
 * it should go), without writing through the link. */
static void test_tree_copy_links(void **state) {
    (void)state;
    char d[PATH_MAX], src[PATH_MAX + 16], dst[PATH_MAX + 16], out[PATH_MAX + 16], p[PATH_MAX + 64], q[PATH_MAX + 64];
    snprintf(d, sizeof d, "%s/tree-copy", tmp);
    snprintf(src, sizeof src, "%s/src", d);
    snprintf(dst, sizeof dst, "%s/dst", d);
    snprintf(out, sizeof out, "%s/outside", d);
    tree_remove(d);
    if (sh("set -e; cd '%s/..'; mkdir -p tree-copy; cd tree-copy; mkdir -p src/sub/deeper outside;"
           " echo secret > outside/secret; echo top > src/top; echo deep > src/sub/deeper/f; chmod 0700 src/sub/deeper/f;"
           " ln -s ../top src/sub/rel; ln -s '%s' src/out; ln -s nowhere src/dangling; ln -s t src/one; mkfifo src/fifo;"
           " touch -d '2001-02-03 04:05:06' src/sub/deeper src/sub",
           d, out) != 0)
        fail_msg("could not lay out %s", d);
    struct stat ssub;
    snprintf(p, sizeof p, "%s/sub", src);
    assert_int_equal(stat(p, &ssub), 0);
    char err[PATH_MAX + 16];
    snprintf(err, sizeof err, "%s/copy.err", d);
    long_call_t call = {src, dst, 0, 0, 0};
    stderr_to(err, long_call, &call);
    assert_int_equal(call.rc, 0);
    snprintf(p, sizeof p, "grade: warning: left %s/fifo out of the copy: it is a FIFO, and only files, folders and "
             "links are copied", src);
    if (!file_has(err, p)) fail_msg("the FIFO left out of the copy was not named on stderr: no '%s' in %s", p, err);
    const char *links[][2] = {{"sub/rel", "../top"}, {"out", out}, {"dangling", "nowhere"}, {"one", "t"}};
    for (int i = 0; i < 4; i++) {
        struct stat st;
        char target[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dst, links[i][0]);
        ssize_t n = readlink(p, target, sizeof target - 1);
        if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode) || n < 0)
            fail_msg("%s was not copied as a link", links[i][0]);
        target[n] = '\0';
        if (strcmp(target, links[i][1])) fail_msg("the link %s points to '%s', not '%s'", links[i][0], target, links[i][1]);
    }
    snprintf(p, sizeof p, "%s/sub/deeper/f", src);
    snprintf(q, sizeof q, "%s/sub/deeper/f", dst);
    struct stat sf, sq;
    assert_true(stat(p, &sf) == 0 && stat(q, &sq) == 0);
    if (!same_bytes(p, q) || (sq.st_mode & 07777) != 0700 || sq.st_mtim.tv_sec != sf.st_mtim.tv_sec ||
        sq.st_mtim.tv_nsec != sf.st_mtim.tv_nsec)
        fail_msg("sub/deeper/f was not copied with its bytes, mode and time");
    snprintf(q, sizeof q, "%s/sub", dst);
    assert_int_equal(stat(q, &sq), 0);
    if (sq.st_mtim.tv_sec != ssub.st_mtim.tv_sec) fail_msg("the folder sub/ did not keep its time");
    snprintf(q, sizeof q, "%s/fifo", dst);
    assert_int_not_equal(access(q, F_OK), 0);
    /* Into a copy that has a link where a file goes: refused, and the link's target untouched. */
    tree_remove(dst);
    snprintf(q, sizeof q, "%s/top", dst);
    assert_int_equal(mkdirs(dst, 0755), 0);
    snprintf(p, sizeof p, "%s/secret", out);
    assert_int_equal(symlink(p, q), 0);
    assert_int_equal(tree_copy(src, dst, NULL), -1);
    if (!file_has(p, "secret\n") || file_has(p, "top")) fail_msg("tree_copy wrote through a link in its destination");
    /* Into a copy that has a file where a link goes: refused. */
    tree_remove(dst);
    assert_int_equal(mkdirs(dst, 0755), 0);
    snprintf(q, sizeof q, "%s/dangling", dst);
    write_pattern(q, 10, 4);
    assert_int_equal(tree_copy(src, dst, NULL), -1);
    /* A folder below the top that cannot be made (a file in its place) fails the whole copy. */
    tree_remove(dst);
    snprintf(q, sizeof q, "%s/sub", dst);
    assert_int_equal(mkdirs(q, 0755), 0);
    snprintf(q, sizeof q, "%s/sub/deeper", dst);
    write_pattern(q, 10, 5);
    assert_int_equal(tree_copy(src, dst, NULL), -1);
    tree_remove(d);
}

/* Run fn(arg) in a child process as the user nobody when this test runs as
 * root (where permissions would not stop anything), else as this user; fn
 * returns NULL or what went wrong, which fails the test. */
static void as_plain_user(const char *(*fn)(const char *), const char *arg) {
    char msg_path[PATH_MAX + 16];
    snprintf(msg_path, sizeof msg_path, "%s/child-msg", tmp);
    /* Made here and given to nobody: the child could not create it in tmp. */
    int mfd = open(msg_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (mfd < 0 || (getuid() == 0 && fchown(mfd, 65534, 65534) != 0)) fail_msg("cannot make %s", msg_path);
    close(mfd);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
        const char *why = fn(arg);
        if (!why) _exit(0);
        FILE *f = fopen(msg_path, "w");
        if (f) fputs(why, f), fclose(f);
        _exit(1);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) fail_msg("could not run a child");
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3) fail_msg("could not become the user nobody");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("as %s: %s", getuid() == 0 ? "nobody" : "this user", file_text(msg_path));
}

/* A folder, empty, that the user nobody may write (for as_plain_user). */
static void nobody_folder(const char *d) {
    tree_remove(d);
    if (mkdirs(d, 0755) != 0) fail_msg("cannot create %s", d);
    if (getuid() == 0 && chown(d, 65534, 65534) != 0) fail_msg("cannot give %s to nobody", d);
}

/* An entry of the tree that cannot be read fails the copy, and stderr names
 * it: an entry of a folder without search permission (lstat fails with
 * EACCES) was skipped without a word, and a file that cannot be opened
 * failed the copy without saying which. Either way the copy lacked a file
 * and the build in it would grade another tree. As nobody (permissions do
 * not stop root). */
static const char *copy_unreadable(const char *d) {
    if (sh("set -e; cd '%s'; mkdir -p t/locked t/open; echo a > t/locked/f; echo b > t/open/secret; chmod 000 "
           "t/open/secret; chmod 0644 t/locked", d) != 0)
        return "no tree";
    static char src[PATH_MAX + 8], dst[PATH_MAX + 8], err[PATH_MAX + 8], p[3 * PATH_MAX];
    snprintf(src, sizeof src, "%s/t", d);
    snprintf(dst, sizeof dst, "%s/c", d);
    snprintf(err, sizeof err, "%s/err", d);
    long_call_t c = {src, dst, 0, 0, 0};
    stderr_to(err, long_call, &c);
    if (c.rc != -1) return "a tree with entries it could not read was copied as if whole";
    snprintf(p, sizeof p, "grade: cannot copy %s/locked/f: Permission denied; the copy is incomplete", src);
    if (!file_has(err, p)) return "no message naming the entry it could not lstat (locked/f)";
    snprintf(p, sizeof p, "grade: cannot copy %s/open/secret to %s/open/secret: Permission denied; the copy is incomplete", src, dst);
    if (!file_has(err, p)) return "no message naming the file it could not open (open/secret)";
    return NULL;
}

static void test_tree_copy_unreadable(void **state) {
    (void)state;
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/copy-unreadable", tmp);
    nobody_folder(d);
    as_plain_user(copy_unreadable, d);
    if (sh("chmod -R u+rwx '%s'", d) != 0) fail_msg("could not make %s removable", d);
    tree_remove(d);
}

/* An entry removed while the tree is copied (between the listing of its
 * folder and its lstat, open or opendir) is no longer in the tree: the copy
 * leaves it out and succeeds. A file removed between lstat and open failed
 * the whole copy. Another process makes and removes files and folders in
 * the tree while it is copied again and again. */
static void test_tree_copy_vanishing(void **state) {
    (void)state;
    char d[PATH_MAX], src[PATH_MAX + 8], dst[PATH_MAX + 8], err[PATH_MAX + 8];
    snprintf(d, sizeof d, "%s/copy-vanishing", tmp);
    snprintf(src, sizeof src, "%s/src", d);
    snprintf(dst, sizeof dst, "%s/dst", d);
    snprintf(err, sizeof err, "%s/err", d);
    tree_remove(d);
    if (sh("set -e; mkdir -p '%s/keep'; echo k > '%s/keep/k'", src, src) != 0) fail_msg("could not lay out %s", src);
    fflush(stdout);
    pid_t churn = fork();
    if (churn == 0) {
        /* Each entry lives a moment: most copies list some that are gone
         * when they are read. */
        char p[PATH_MAX + 32], q[PATH_MAX + 32];
        for (unsigned i = 0;; i++) {
            snprintf(p, sizeof p, "%s/f%u", src, i % 256);
            snprintf(q, sizeof q, "%s/d%u", src, i % 256);
            int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) close(fd);
            mkdir(q, 0755);
            if (i % 256 == 255)
                for (unsigned k = 0; k < 256; k++) {
                    snprintf(p, sizeof p, "%s/f%u", src, k);
                    snprintf(q, sizeof q, "%s/d%u", src, k);
                    unlink(p);
                    rmdir(q);
                }
        }
    }
    if (churn < 0) fail_msg("could not start the process that changes the tree");
    int failed_at = -1;
    double until = (double)time(NULL) + 2;
    for (int k = 0; k < 100000 && failed_at < 0 && (double)time(NULL) < until; k++) {
        tree_remove(dst);
        long_call_t c = {src, dst, 0, 0, 0};
        stderr_to(err, long_call, &c);
        if (c.rc != 0) failed_at = k;
    }
    kill(churn, SIGKILL);
    waitpid(churn, NULL, 0);
    if (failed_at >= 0) fail_msg("copy %d of a tree whose entries come and go failed: %s", failed_at, file_text(err));
    tree_remove(d);
}

/* A file the hash cannot read is an error the caller hears about. */
static const char *hash_unreadable(const char *d) {
    if (sh("set -e; cd '%s'; mkdir t; echo a > t/a; echo b > t/b; chmod 000 t/b", d) != 0) return "no tree";
    char t[PATH_MAX + 8];
    snprintf(t, sizeof t, "%s/t", d);
    int err = 0;
    tree_hash(t, NULL, NULL, 0, "emu", &err);
    return err ? NULL : "a file it could not read did not set *err";
}

/* A folder that can be listed but not searched: its entries' names are
 * there and their lstat fails, as the copy fails on them. */
static const char *hash_unsearchable(const char *d) {
    if (sh("set -e; cd '%s'; mkdir u; mkdir u/in; echo a > u/in/a; chmod 644 u/in", d) != 0) return "no tree";
    char t[PATH_MAX + 8];
    snprintf(t, sizeof t, "%s/u", d);
    int err = 0;
    tree_hash(t, NULL, NULL, 0, "emu", &err);
    sh("chmod 755 '%s/in'", t);
    return err ? NULL : "an entry it could not lstat did not set *err";
}

/* What the hash names, beyond test_tree_hash: a link's target, a file's
 * place in the tree (the same name moved into a folder), a names-only path
 * matched whole (not as a prefix of a longer one), where a name ends (not
 * run on into a link's target), a skipped name without '*' matched whole,
 * and an unreadable file (an error, not a hash of what could be read). */
static void test_tree_hash_more(void **state) {
    (void)state;
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/hash-more", tmp);
    tree_remove(d);
    if (sh("set -e; mkdir -p '%s/a'; cd '%s'; echo m > a/m; echo z > z; echo s > a/s; ln -s a/m link", d, d) != 0)
        fail_msg("could not lay out %s", d);
    int err = 0;
    uint64_t h0 = tree_hash(d, NULL, NULL, 0, "emu", &err);
    assert_int_equal(err, 0);
    sh("cd '%s'; ln -sfn a/s link", d);
    uint64_t h1 = tree_hash(d, NULL, NULL, 0, "emu", &err);
    assert_true(h1 != h0); /* a link's target */
    sh("cd '%s'; rm link; mv z a/z", d); /* a/m a/s z, then a/m a/s a/z: the same names in the same order */
    uint64_t h2 = tree_hash(d, NULL, NULL, 0, "emu", &err);
    sh("cd '%s'; mv a/z z", d);
    assert_true(tree_hash(d, NULL, NULL, 0, "emu", &err) != h2);
    sh("cd '%s'; mv z a/z", d);
    const char *names_only[] = {"a/s.cu", "a/"};
    uint64_t h3 = tree_hash(d, NULL, names_only, 2, "emu", &err);
    sh("echo changed > '%s/a/s'", d);
    assert_true(tree_hash(d, NULL, names_only, 2, "emu", &err) != h3); /* a/s is not a/s.cu */
    assert_int_equal(err, 0);
    /* A name ends where its NUL does: a link "x" to "lb" and a link "xl" to
     * "b" would otherwise both read "x", 'l', "lb". */
    sh("cd '%s'; ln -s lb x", d);
    uint64_t h4 = tree_hash(d, NULL, NULL, 0, "emu", &err);
    sh("cd '%s'; rm x; ln -s b xl", d);
    assert_true(tree_hash(d, NULL, NULL, 0, "emu", &err) != h4);
    /* A skipped name without '*' is that name only, not a prefix. */
    static const char *const exact[] = {"x", NULL};
    uint64_t h5 = tree_hash(d, exact, NULL, 0, "emu", &err);
    sh("cd '%s'; rm xl", d);
    assert_true(tree_hash(d, exact, NULL, 0, "emu", &err) != h5);
    assert_int_equal(err, 0);
    nobody_folder(d);
    as_plain_user(hash_unreadable, d);
    as_plain_user(hash_unsearchable, d);
    tree_remove(d);
}

/* tree_hash: one file's bytes cannot pass for the next entry. a holding "X"
 * beside b holding "Y" once hashed as a alone holding "X", then b's name, its
 * kind, its mode bytes and "Y": one run of bytes, so one name for two trees.
 * A file's size now comes before its bytes. */
static void test_tree_hash_file_bounds(void **state) {
    (void)state;
    char one[PATH_MAX], two[PATH_MAX], p[PATH_MAX + 16];
    snprintf(one, sizeof one, "%s/hash-two-files", tmp);
    snprintf(two, sizeof two, "%s/hash-one-file", tmp);
    tree_remove(one);
    tree_remove(two);
    assert_int_equal(mkdirs(one, 0755), 0);
    assert_int_equal(mkdirs(two, 0755), 0);
    unsigned mode = 0644;
    char glued[16] = "Xb";
    size_t n = 3; /* "X", "b" and the NUL that ends b's name */
    glued[n++] = 'f';
    memcpy(glued + n, &mode, sizeof mode);
    n += sizeof mode;
    glued[n++] = 'Y';
    const struct { const char *dir, *name, *bytes; size_t len; } files[] = {
        {one, "a", "X", 1}, {one, "b", "Y", 1}, {two, "a", glued, n}};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", files[i].dir, files[i].name);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, files[i].bytes, files[i].len), (ssize_t)files[i].len);
        assert_int_equal(fchmod(fd, 0644), 0);
        close(fd);
    }
    int err = 1;
    uint64_t h1 = tree_hash(one, NULL, NULL, 0, "emu", &err);
    assert_int_equal(err, 0);
    uint64_t h2 = tree_hash(two, NULL, NULL, 0, "emu", &err);
    assert_int_equal(err, 0);
    assert_true(h1 != h2);
    /* A file that holds other than its size says (one that grew or shrank
     * while it was read; a /proc file says 0 bytes and holds more) is an
     * error: the hash would not name what is there. */
    if (access("/proc/sys/kernel/random/boot_id", R_OK) == 0) {
        err = 0;
        tree_hash("/proc/sys/kernel/random", NULL, NULL, 0, "emu", &err);
        assert_int_equal(err, 1);
    }
    tree_remove(one);
    tree_remove(two);
}

/* tree_remove empties what a child left: deep folders, more entries than
 * one read of the folder returns, folders made read-only (the top one too)
 * or unreadable (as a plain user, whom permissions stop), and never follows
 * a link: the folder a link points to keeps its files. mkdirs says why it
 * could not make a folder. */
static const char *remove_as_user(const char *d) {
    char t[PATH_MAX + 8];
    snprintf(t, sizeof t, "%s/t", d);
    if (sh("set -e; cd '%s'; mkdir -p t/1/2/3/4/5/6/7/8/9/10 t/many t/ro/sub t/unreadable/sub outside;"
           " echo keep > outside/keep; echo x > t/1/2/3/4/5/6/7/8/9/10/f; ln -s '%s/outside' t/link;"
           " for i in $(seq 1 600); do : > t/many/a-rather-long-file-name-to-fill-the-buffer-$i; done;"
           " echo r > t/ro/sub/f; chmod 555 t/ro/sub t/ro; echo u > t/unreadable/sub/f; chmod 000 t/unreadable; chmod 555 t",
           d, d) != 0)
        return "could not lay out the tree";
    tree_remove(t);
    if (access(t, F_OK) == 0 || errno != ENOENT) return "the tree is still there";
    char keep[PATH_MAX + 32];
    snprintf(keep, sizeof keep, "%s/outside/keep", d);
    if (access(keep, F_OK) != 0) return "a file behind a link was removed";
    char ro[PATH_MAX + 32];
    snprintf(ro, sizeof ro, "%s/ro", d);
    if (mkdir(ro, 0555) != 0) return "could not make a read-only folder";
    for (int depth = 1; depth <= 2; depth++) {
        snprintf(ro, sizeof ro, "%s/ro/a%s", d, depth == 2 ? "/b" : "");
        errno = 0;
        if (mkdirs(ro, 0755) != -1 || errno != EACCES) return "mkdirs in a read-only folder did not fail with EACCES";
    }
    return NULL;
}

static void test_tree_remove(void **state) {
    (void)state;
    char d[PATH_MAX], p[PATH_MAX + 32], q[PATH_MAX + 32];
    snprintf(d, sizeof d, "%s/remove", tmp);
    nobody_folder(d);
    as_plain_user(remove_as_user, d);
    /* A link named itself: the link goes, its folder stays. */
    snprintf(p, sizeof p, "%s/outside", d);
    snprintf(q, sizeof q, "%s/link", d);
    assert_int_equal(symlink(p, q), 0);
    tree_remove(q);
    struct stat st;
    assert_int_not_equal(lstat(q, &st), 0);
    snprintf(q, sizeof q, "%s/outside/keep", d);
    assert_int_equal(access(q, F_OK), 0);
    tree_remove(q); /* a file */
    assert_int_not_equal(access(q, F_OK), 0);
    /* Only "." and ".." are passed over: "..x" and "...", a file and a
     * folder, are entries like any other. */
    snprintf(p, sizeof p, "%s/dots", d);
    if (sh("set -e; mkdir -p '%s/...'; echo x > '%s/..x'; echo y > '%s/.../..y'", p, p, p) != 0)
        fail_msg("could not lay out %s", p);
    tree_remove(p);
    assert_int_not_equal(access(p, F_OK), 0);
    tree_remove(d);
    assert_int_not_equal(access(d, F_OK), 0);
}

/* However deep the tree, tree_remove takes it all, with a bounded number
 * of descriptors: it gave up 256 levels down, and a test's code can leave
 * thousands of nested folders (3000 here, a path of 6000 bytes and more).
 * The folders it moves up from deep down to remove them from the top pass
 * over names already taken there, are made writable where a child took
 * that away, and a link among them is removed, never followed. As nobody
 * where the tests run as root, so that permissions count. */
static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    while (d && readdir(d)) n++;
    if (d) closedir(d);
    return n;
}

static const char *remove_deep_as_user(const char *d) {
    if (sh("set -e; cd '%s'; mkdir -p outside t; echo keep > outside/keep;"
           " for i in $(seq 0 99); do : > t/.tree-remove-$i; done;"
           " cd t && perl -e 'for my $i (1..3000) { mkdir(q(x)) && chdir(q(x)) or die;"
           " if ($i %% 97 == 0) { mkdir(q(ro)) && open(F, q(>ro/f)) && chmod(0500, q(ro)) or die }"
           " if ($i %% 101 == 0) { symlink(q(%s/outside), q(link)) or die } } open(F, q(>f)) or die'",
           d, d) != 0)
        return "could not lay out 3000 nested folders";
    char t[PATH_MAX + 8], keep[PATH_MAX + 32];
    snprintf(t, sizeof t, "%s/t", d);
    snprintf(keep, sizeof keep, "%s/outside/keep", d);
    int before = open_fds();
    tree_remove(t);
    if (access(t, F_OK) == 0 || errno != ENOENT) return "3000 nested folders are still there";
    if (access(keep, F_OK) != 0) return "a file behind a link deep down was removed";
    if (open_fds() != before) return "tree_remove left descriptors open";
    return NULL;
}

static void test_tree_remove_deep(void **state) {
    (void)state;
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/remove-deep", tmp);
    nobody_folder(d);
    as_plain_user(remove_deep_as_user, d);
    /* And as root, for whom permissions are no obstacle. */
    if (getuid() == 0) {
        tree_remove(d);
        if (mkdirs(d, 0755) != 0) fail_msg("cannot create %s", d);
        const char *why = remove_deep_as_user(d);
        if (why) fail_msg("as root: %s", why);
    }
    tree_remove(d);
    assert_int_not_equal(access(d, F_OK), 0);
}

/* tree_chown (root only, for --run-as): every entry of the tree, links
 * themselves and not what they point to: a link to a file or a folder
 * outside leaves them and what the folder holds their owner. */
static void test_tree_chown(void **state) {
    (void)state;
    if (getuid() != 0) skip();
    char d[PATH_MAX], p[PATH_MAX + 32];
    snprintf(d, sizeof d, "%s/chown", tmp);
    tree_remove(d);
    if (sh("set -e; mkdir -p '%s/t/a/b' '%s/dir'; cd '%s'; echo o > outside; echo f > t/a/b/f; echo g > dir/g;"
           " ln -s '%s/outside' t/a/link; ln -s '%s/dir' t/a/dirlink",
           d, d, d, d, d) != 0)
        fail_msg("could not lay out %s", d);
    snprintf(p, sizeof p, "%s/t", d);
    tree_chown(p, 65534, 65534);
    const char *owned[] = {"t", "t/a", "t/a/b", "t/a/b/f", "t/a/link", "t/a/dirlink"};
    for (int i = 0; i < 6; i++) {
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", d, owned[i]);
        if (lstat(p, &st) != 0 || st.st_uid != 65534 || st.st_gid != 65534) fail_msg("%s was not given to nobody", owned[i]);
    }
    const char *outside[] = {"outside", "dir", "dir/g"};
    for (int i = 0; i < 3; i++) {
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", d, outside[i]);
        assert_int_equal(stat(p, &st), 0);
        if (st.st_uid != 0) fail_msg("tree_chown followed a link out of the tree to %s", outside[i]);
    }
    tree_remove(d);
}

/* lab_student_files(root, "99-x", names, max) for stderr_to(). */
typedef struct {
    const char *root;
    char (*names)[128];
    int max, got;
} files_call_t;

static void files_call(void *arg) {
    files_call_t *c = arg;
    c->got = lab_student_files(c->root, "99-x", c->names, c->max);
}

/* The student files of a lab: its regular files but the harness (check.c,
 * bench.c, README.md, lab.mk), in name order; no dot-file, folder, link, or
 * name of 128 characters or more (the caller's slots hold 127); at most
 * max of them, none written past. A lab with no folder has none. */
static void test_lab_student_files(void **state) {
    (void)state;
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s/student-files", tmp);
    tree_remove(root);
    char n127[128], n128[129];
    memset(n127, 'n', 127);
    n127[127] = '\0';
    memset(n128, 'o', 128);
    n128[128] = '\0';
    if (sh("set -e; mkdir -p '%s/labs/99-x/sub'; cd '%s/labs/99-x'; for f in check.c bench.c README.md lab.mk c.h b.cu"
           " a.cu .hidden.cu %s %s; do echo x > \"$f\"; done; ln -s a.cu link.cu", root, root, n127, n128) != 0)
        fail_msg("could not lay out %s", root);
    char names[5][128];
    memset(names, 0, sizeof names);
    assert_int_equal(lab_student_files(root, "99-x", names, 5), 4);
    assert_string_equal(names[0], "a.cu");
    assert_string_equal(names[1], "b.cu");
    assert_string_equal(names[2], "c.h");
    assert_string_equal(names[3], n127);
    /* Past max, the first by name, on every file system, and stderr says
     * how many were left: a file left out of the grade is not left silently. */
    if (sh("set -e; cd '%s/labs/99-x'; for f in z.cu y.cu x.cu w.cu v.cu u.cu; do echo x > \"$f\"; done", root) != 0)
        fail_msg("could not add files to %s", root);
    memset(names, 0, sizeof names);
    snprintf(names[2], sizeof names[2], "untouched");
    char err[PATH_MAX + 16];
    snprintf(err, sizeof err, "%s/files.err", tmp);
    files_call_t c = {root, names, 2, 0};
    stderr_to(err, files_call, &c);
    assert_int_equal(c.got, 2);
    assert_string_equal(names[0], "a.cu");
    assert_string_equal(names[1], "b.cu");
    assert_string_equal(names[2], "untouched");
    if (!file_has(err, "grade: labs/99-x has 10 student files, more than the 2 the grader takes; the first 2 by "
                       "name are graded and the other 8 are not; list the student files in the rubric's "
                       "\"student_files\""))
        fail_msg("no warning of the files left out in %s", err);
    /* One file past max is warned of too. */
    char many[10][128];
    c = (files_call_t){root, many, 9, 0};
    stderr_to(err, files_call, &c);
    assert_int_equal(c.got, 9);
    if (!file_has(err, "grade: labs/99-x has 10 student files, more than the 9 the grader takes; the first 9 by "
                       "name are graded and the other 1 are not"))
        fail_msg("no warning of the one file left out in %s", err);
    assert_int_equal(lab_student_files(root, "98-none", names, 4), 0);
    tree_remove(root);
}

/* The total score in a results.json; -1 when it cannot be read. */
static double json_load_score(const char *path) {
    json_t *j = json_load_file(path, 0, NULL);
    double v = j && json_is_number(json_object_get(j, "score")) ? json_number_value(json_object_get(j, "score")) : -1;
    json_decref(j);
    return v;
}

/* --base-cache: the second run reuses the libraries the first built; a
 * student file changed in the tree is still graded as it is now (it is
 * copied fresh, not taken from the cache); any other change builds anew. */
static void test_base_cache(void **state) {
    (void)state;
    char root[PATH_MAX], cache[PATH_MAX], empty[PATH_MAX], log[PATH_MAX], json[PATH_MAX];
    snprintf(root, sizeof root, "%s/cache-root", tmp);
    snprintf(cache, sizeof cache, "%s/cache-test", tmp);
    snprintf(empty, sizeof empty, "%s/cache-empty", tmp);
    snprintf(log, sizeof log, "%s/cache.log", tmp);
    snprintf(json, sizeof json, "%s/cache.json", tmp);
    /* A copy of the course whose lab 00 holds the starter; the submission is
     * empty, so the tree's own lab 00 file is what gets graded. */
    if (sh("set -e; rm -rf '%s' '%s' '%s'; mkdir -p '%s' '%s';"
           " tar -C '%s' --exclude=./build --exclude=./.git -cf - . | tar -C '%s' -xf -",
           root, cache, empty, root, empty, GRADE_ROOT, root) != 0)
        fail_msg("could not copy the course into %s", root);
#define CACHED_GRADE()                                                                                          \
    sh("timeout -k 10 600 '%s' --root '%s' --src '%s' --lab 00 --only test_single_element --target emu --jobs 2" \
       " --base-cache '%s' --json '%s' > '%s' 2>&1", GRADE_BIN, root, empty, cache, json, log)
#define SCORE() (json_load_score(json))
    if (CACHED_GRADE() != 0) fail_msg("grader failed (%s)", log);
    if (!file_has(log, "building the course libraries for emu into")) fail_msg("the first run did not build into the cache (%s)", log);
    assert_true(SCORE() == 0.0); /* the starter */
    int entries = sh("test $(ls -d '%s'/*-emu | wc -l) = 1", cache);
    if (entries != 0) fail_msg("expected one entry in %s", cache);
    /* The student file changes in the tree: same cache entry, new file graded. */
    if (sh("cp '%s/solutions/00-hello/vector_add.cu' '%s/labs/00-hello/vector_add.cu'", GRADE_ROOT, root) != 0)
        fail_msg("could not copy the lab 00 solution");
    if (CACHED_GRADE() != 0) fail_msg("grader failed (%s)", log);
    if (!file_has(log, "course libraries for emu: reused from")) fail_msg("the second run did not reuse the cache (%s)", log);
    if (!(SCORE() > 0.0)) fail_msg("the solution now in the tree scored 0: the cached, older file was graded (%s)", log);
    /* PATH changes but finds the same programs (a folder of none first): the
     * same build, reused. A PATH whose gcc is another program: a new entry. */
    char tools[PATH_MAX], old_path[8192];
    snprintf(tools, sizeof tools, "%s/cache-tools", tmp);
    snprintf(old_path, sizeof old_path, "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    if (sh("rm -rf '%s' && mkdir -p '%s'", tools, tools) != 0) fail_msg("could not make %s", tools);
    char new_path[sizeof old_path + PATH_MAX + 2];
    snprintf(new_path, sizeof new_path, "%s:%s", tools, old_path);
    setenv("PATH", new_path, 1);
    int rc = CACHED_GRADE();
    if (rc == 0 && !file_has(log, "course libraries for emu: reused from")) rc = -1;
    if (rc == 0 && sh("real=$(PATH='%s' command -v gcc) && printf '#!/bin/sh\\nexec %%s \"$@\"\\n' \"$real\" > '%s/gcc'"
                      " && chmod +x '%s/gcc'", old_path, tools, tools) != 0) rc = -2;
    if (rc == 0) rc = CACHED_GRADE() == 0 ? 0 : -3;
    setenv("PATH", old_path, 1);
    if (rc == -1) fail_msg("a PATH that finds the same programs did not reuse the cache (%s)", log);
    if (rc != 0) fail_msg("grader failed with a changed PATH (%d, %s)", rc, log);
    if (!file_has(log, "building the course libraries for emu into")) fail_msg("a PATH with another gcc reused the cache (%s)", log);
    if (sh("test $(ls -d '%s'/*-emu | wc -l) = 2", cache) != 0) fail_msg("expected two entries in %s", cache);
    /* A course file changes: a new entry is built. */
    if (sh("echo '/* changed */' >> '%s/common/error.c'", root) != 0) fail_msg("could not change common/error.c");
    if (CACHED_GRADE() != 0) fail_msg("grader failed (%s)", log);
    if (!file_has(log, "building the course libraries for emu into")) fail_msg("a changed course file reused the cache (%s)", log);
    if (sh("test $(ls -d '%s'/*-emu | wc -l) = 3", cache) != 0) fail_msg("expected three entries in %s", cache);
#undef CACHED_GRADE
#undef SCORE
}

/* make_zip.sh on this tree: --allow-changed, since whoever runs the tests may
 * have starters of labs/ edited and not yet committed (the refusal itself
 * is tested on a small tree of its own: test_gradescope_zip_refuses). */
#define MAKE_ZIP "bash autograder/gradescope/make_zip.sh --allow-changed"

/* make grade passes CUDA_ARCH (the Makefile's default, '80 90a'); a direct
 * call of build/bin/grade has none. Both build the same libraries, so they
 * share one --base-cache entry: the key hashes the value the build uses,
 * not the environment's (and "80  90a" is "80 90a"). */
static void test_base_cache_cuda_arch(void **state) {
    (void)state;
    char log[PATH_MAX], cmd[PATH_MAX * 3];
    snprintf(log, sizeof log, "%s/cache-arch.log", tmp);
    snprintf(cmd, sizeof cmd, "'%s' --root '%s' --prepare --target emu --jobs 2 %s > '%s' 2>&1", GRADE_BIN, GRADE_ROOT,
             cache_flag, log);
    if (sh("env -u CUDA_ARCH %s", cmd) != 0) fail_msg("grade --prepare without CUDA_ARCH failed (%s)", log);
    const char *as[] = {"", "  "}; /* the Makefile's words, then with extra spaces */
    for (int i = 0; i < 2; i++) {
        if (sh("CUDA_ARCH=\"%s$(sed -n 's/^CUDA_ARCH *?= *//p' '%s/Makefile' | sed 's/ /%s /g')\" %s", as[i], GRADE_ROOT,
               as[i], cmd) != 0)
            fail_msg("grade --prepare with the Makefile's CUDA_ARCH failed (%s)", log);
        if (!file_has(log, "course libraries for emu: reused from"))
            fail_msg("with CUDA_ARCH set as make grade sets it (%s), the base built without it was not reused (%s)",
                     i ? "spaced out" : "as is", log);
    }
}

/* The zip holds the scripts and the course, never solutions or build outputs. */
static void test_gradescope_zip(void **state) {
    (void)state;
    if (sh("command -v zip >/dev/null && command -v unzip >/dev/null") != 0) {
        print_message("zip or unzip is missing (sudo apt-get install -y zip unzip): skipped\n");
        skip();
    }
    char list[PATH_MAX];
    snprintf(list, sizeof list, "%s/zip.txt", tmp);
    if (sh("cd '%s' && " MAKE_ZIP " '%s/gs/autograder.zip' > /dev/null && unzip -Z1 '%s/gs/autograder.zip' > '%s'",
           GRADE_ROOT, tmp, tmp, list) != 0)
        fail_msg("make_zip.sh failed");
    const char *must[] = {"\nsetup.sh\n", "\nrun_autograder\n", "course/Makefile\n", "course/autograder/rubrics/00.json\n",
                          "course/autograder/src/grade.c\n", "course/labs/00-hello/check.c\n"};
    FILE *f = fopen(list, "r");
    static char buf[1 << 20];
    buf[0] = '\n';
    size_t n = f ? fread(buf + 1, 1, sizeof buf - 2, f) : 0;
    if (f) fclose(f);
    buf[n + 1] = '\0';
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        if (!strstr(buf, must[i])) fail_msg("the zip lacks %s", must[i]);
    const char *never[] = {"course/solutions/", "course/build/", "course/.git/", "course/autograder/wrong/",
                           "course/autograder/tests/mpi-lab/", "course/.ci/"};
    for (size_t i = 0; i < sizeof never / sizeof *never; i++)
        if (strstr(buf, never[i])) fail_msg("the zip must not contain %s", never[i]);
}

/* setup.sh and run_autograder in a fake /autograder: unzip, run setup.sh
 * (GRADE_SETUP_SYSTEM=0: no packages, no user), which builds the grader and
 * fills the course libraries' cache, submit a flat vector_add.cu, expect
 * results.json with 10 points. As root, student code runs as nobody
 * (Gradescope's grader-student), and the grade uses the cache. */
static void test_run_autograder(void **state) {
    (void)state;
    if (sh("command -v zip >/dev/null && command -v unzip >/dev/null") != 0) skip();
    int as_user = getuid() == 0 && getpwnam("nobody");
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/gradescope.log", tmp);
    int rc = sh("set -e; ag='%s/ag'; mkdir -p \"$ag/source\" \"$ag/submission\";"
                "unzip -q -o '%s/gs/autograder.zip' -d \"$ag/source\";"
                "GRADESCOPE_ROOT=\"$ag\" GRADE_TARGET=emu GRADE_SETUP_SYSTEM=0"
                " bash \"$ag/source/setup.sh\" > '%s.setup' 2>&1;"
                "cp '%s/solutions/00-hello/vector_add.cu' \"$ag/submission/\";"
                "echo 'not a lab file' > \"$ag/submission/notes.txt\";"
                "GRADESCOPE_ROOT=\"$ag\" GRADE_TARGET=emu GRADE_RUN_AS=%s timeout -k 10 600"
                " bash \"$ag/source/run_autograder\" > '%s' 2>&1",
                tmp, tmp, log, GRADE_ROOT, as_user ? "nobody" : "no-such-user", log);
    if (rc != 0) fail_msg("setup.sh or run_autograder failed (%d; %s.setup, %s)", rc, log, log);
    if (!file_has(log, as_user ? "course libraries for emu: reused from" : "building the course libraries"))
        fail_msg("run_autograder %s the libraries setup.sh built (%s)", as_user ? "did not reuse" : "reused", log);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/ag/results/results.json", tmp);
    json_t *res = json_load_file(path, 0, NULL);
    if (!res) fail_msg("no results/results.json in the fake /autograder");
    double s = json_number_value(json_object_get(res, "score"));
    size_t nt = json_array_size(json_object_get(res, "tests"));
    json_decref(res);
    if (s != 10 || nt != 4) fail_msg("gradescope: lab 00 solution got %g points in %zu tests; want 10 in 4", s, nt);
}

/* ---- the command line: checked before anything is built ------------------------------ */

/* Run the grader with these arguments (and --root, --target emu); its exit status, its output in log. */
static int grade_args(const char *args, const char *log) {
    return sh("timeout -k 10 600 '%s' --root '%s' --target emu --jobs 2 %s %s > '%s' 2>&1", GRADE_BIN, GRADE_ROOT,
              cache_flag, args, log);
}

/* The whole text of a file ("" when unreadable), in a static buffer. */
static const char *file_text(const char *path) {
    static char buf[1 << 20];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return buf;
}

/* A usage error: exit status 2, the message in the output, and no build
 * started (it would have taken time and, for --batch, emptied the CSV). */
static void expect_usage_error(const char *args, const char *says) {
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/usage.log", tmp);
    int rc = grade_args(args, log);
    const char *out = file_text(log);
    if (rc != 2) fail_msg("grade %s: exit status %d, want 2 (bad usage); output:\n%s", args, rc, out);
    if (!strstr(out, says)) fail_msg("grade %s: the output does not say '%s':\n%s", args, says, out);
    if (strstr(out, "building the course libraries")) fail_msg("grade %s: built the libraries before refusing:\n%s", args, out);
}

/* Folders, files and flags that cannot work are refused with exit status 2
 * and the reason (strerror) before anything is built; an existing CSV is left
 * as it was. */
static void test_usage_checked_before_build(void **state) {
    (void)state;
    char d[PATH_MAX], args[PATH_MAX * 4];
    snprintf(d, sizeof d, "%s/usage", tmp);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d/empty\" \"$d/zips\" \"$d/labs-batch/00-hello\" \"$d/one/alice\";"
           " printf 'old data\\n' > \"$d/old.csv\"; touch \"$d/zips/alice.zip\" \"$d/zips/.DS_Store\" \"$d/afile\"",
           d) != 0)
        fail_msg("could not lay out %s", d);

    /* A mistyped --batch folder: refused, and the old CSV keeps its rows. */
    snprintf(args, sizeof args, "--batch '%s/no-such' --csv '%s/old.csv'", d, d);
    expect_usage_error(args, "no-such: No such file or directory");
    snprintf(args, sizeof args, "%s/old.csv", d);
    if (strcmp(file_text(args), "old data\n")) fail_msg("a refused --batch changed the CSV to '%s'", file_text(args));

    /* A --base-cache inside the course tree (but for build/) would be copied into every lab's copy. */
    snprintf(args, sizeof args, "--src '%s/solutions' --lab 00 --base-cache '%s/labs/cache'", GRADE_ROOT, GRADE_ROOT);
    expect_usage_error(args, "is inside the course tree");

    /* --batch with nothing to grade names what it skipped. */
    snprintf(args, sizeof args, "--batch '%s/empty' --csv '%s/x.csv'", d, d);
    expect_usage_error(args, "holds no student folders: nothing to grade");
    snprintf(args, sizeof args, "--batch '%s/zips' --csv '%s/x.csv'", d, d);
    expect_usage_error(args, "alice.zip: not a folder; unzip it first");
    snprintf(args, sizeof args, "--batch '%s/afile'", d);
    expect_usage_error(args, "is not a folder");
    /* Lab folders passed to --batch: a warning (here the unwritable CSV stops it). */
    snprintf(args, sizeof args, "--batch '%s/labs-batch' --csv '%s/no-dir/x.csv'", d, d);
    expect_usage_error(args, "00-hello looks like the lab folders of a single submission; for one submission use --src");

    /* Destinations: a missing folder, a file where a folder should be, a folder where a file should be. */
    snprintf(args, sizeof args, "--batch '%s/one' --csv '%s/no-dir/x.csv'", d, d);
    expect_usage_error(args, "no-dir: No such file or directory");
    snprintf(args, sizeof args, "--batch '%s/one' --csv '%s/empty'", d, d);
    expect_usage_error(args, "is a folder");
    snprintf(args, sizeof args, "--batch '%s/one' --csv '%s/x.csv' --json '%s/afile/results'", d, d, d);
    expect_usage_error(args, "afile/results: Not a directory");
    snprintf(args, sizeof args, "--src '%s/empty' --json '%s/no-dir/x.json'", d, d);
    expect_usage_error(args, "no-dir: No such file or directory");

    /* The only lab asked for has a rubric that cannot be read (here a misspelt field): its
     * reason, at once, not a build and an empty table. */
    if (sh("set -e; r='%s/badroot'; mkdir -p \"$r/autograder/rubrics\" \"$r/labs/01-naive-matmul\";"
           " printf '{\"lab\": \"01-naive-matmul\", \"tests\": [{\"name\": \"a\", \"check\": \"x\","
           " \"points\": 1, \"may_skp\": true}]}\\n' > \"$r/autograder/rubrics/01.json\"", d) != 0)
        fail_msg("could not lay out %s/badroot", d);
    snprintf(args, sizeof args, "--root '%s/badroot' --src '%s/empty' --lab 01", d, d);
    expect_usage_error(args, "grade: lab 01-naive-matmul: not graded: autograder/rubrics/01.json, test 1: "
                             "\"may_skp\" is no field of a numerics test (misspelt?)");

    /* --src must be a folder. */
    snprintf(args, sizeof args, "--src '%s/zips/alice.zip'", d);
    expect_usage_error(args, "is not a folder; a submission is a folder of files (unzip it first)");
    snprintf(args, sizeof args, "--src '%s/no-such'", d);
    expect_usage_error(args, "no-such: No such file or directory; give the folder of the submission");

    /* --timeout 0 and --mem-mb 0 are refused rather than read as "the rubric's" or "none". */
    snprintf(args, sizeof args, "--src '%s/empty' --timeout 0", d);
    expect_usage_error(args, "--timeout 0 is not a time limit");

    snprintf(args, sizeof args, "--src '%s/empty' --mem-mb 0", d);
    expect_usage_error(args, "--mem-mb 0 is not a memory limit");

    /* A one-digit lab number means the lab with a leading zero: 9 is lab 09 (which does not exist). */
    snprintf(args, sizeof args, "--src '%s/empty' --lab 9", d);
    expect_usage_error(args, "no lab 09 under");

    /* --all and --lab contradict each other: refused, not one of them quietly dropped. */
    snprintf(args, sizeof args, "--src '%s/empty' --all --lab 00", d);
    expect_usage_error(args, "--all and --lab 00 together");

    /* --parallel: only for a batch, from 1 to 64, and never to time speed tests side by side. */
    snprintf(args, sizeof args, "--src '%s/empty' --parallel 2", d);
    expect_usage_error(args, "--parallel 2 grades several submissions at once, so it needs --batch DIR");
    snprintf(args, sizeof args, "--batch '%s/one' --csv '%s/x.csv' --parallel 0", d, d);
    expect_usage_error(args, "--parallel 0: give how many submissions to grade at once, from 1 to 64");
    snprintf(args, sizeof args, "--batch '%s/one' --csv '%s/x.csv' --parallel 2 --lab 01 --target cuda", d, d);
    expect_usage_error(args, "--parallel 2 on --target cuda would run lab 01's speed test");

    /* --prepare only fills a cache: without one, or with an output to write, it is refused. */
    snprintf(args, sizeof args, "--prepare --json '%s/p.json'", d);
    expect_usage_error(args, "--prepare grades nothing, so --json would get nothing");
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/prepare.log", d);
    int rc = sh("'%s' --root '%s' --target emu --prepare > '%s' 2>&1", GRADE_BIN, GRADE_ROOT, log);
    if (rc != 2 || !file_has(log, "--prepare needs --base-cache DIR"))
        fail_msg("grade --prepare without --base-cache: exit status %d, want 2 and the reason (%s)", rc, log);
    /* A cache that cannot be made (its parent is a file): --prepare fails at
     * once and builds nothing, instead of building libraries no run would find. */
    rc = sh("'%s' --root '%s' --target emu --prepare --base-cache '%s/afile/cache' > '%s' 2>&1", GRADE_BIN, GRADE_ROOT, d,
            log);
    if (rc != 1 || !file_has(log, "cannot create it") || !file_has(log, "--prepare: nothing was built") ||
        file_has(log, "building the course libraries"))
        fail_msg("grade --prepare with a cache that cannot be made: exit status %d, want 1, the reason and no build (%s)",
                 rc, log);
}

/* Flags that one another make pointless are refused, not half obeyed: --src
 * with --batch (ignored), --csv without --batch (nothing written), and
 * --gpu-build with --target cuda (for the emulator only). A lab that does not
 * exist is refused with the list of those that do. */
static void test_usage_conflicting_flags(void **state) {
    (void)state;
    char d[PATH_MAX], args[PATH_MAX * 4];
    snprintf(d, sizeof d, "%s/usage-conflict", tmp);
    if (sh("rm -rf '%s' && mkdir -p '%s/sub/alice' '%s/empty'", d, d, d) != 0) fail_msg("could not lay out %s", d);
    snprintf(args, sizeof args, "--batch '%s/sub' --src '%s/empty' --csv '%s/x.csv'", d, d, d);
    expect_usage_error(args, "so --src");
    expect_usage_error(args, "would be ignored; give --batch DIR for a folder of submissions or --src DIR for one, not both");
    snprintf(args, sizeof args, "--src '%s/empty' --csv '%s/x.csv'", d, d);
    expect_usage_error(args, "x.csv writes one row per student of a batch, and needs --batch DIR");
    snprintf(args, sizeof args, "--src '%s/empty' --lab 00 --gpu-build --target cuda", d);
    expect_usage_error(args, "--gpu-build adds nvcc's compile of the student's .cu files to the emulator's build "
                             "(--target emu); --target cuda compiles them with nvcc anyway: leave --gpu-build out");
    /* The labs of the tree, as "labs: 00 01 ...". */
    char have[256] = "; labs:", dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/labs", GRADE_ROOT);
    struct dirent **ents;
    int m = scandir(dir, &ents, NULL, alphasort);
    for (int i = 0; i < m; i++) {
        const char *n = ents[i]->d_name;
        if (n[0] >= '0' && n[0] <= '9' && n[1] >= '0' && n[1] <= '9' && n[2] == '-')
            snprintf(have + strlen(have), sizeof have - strlen(have), " %.2s", n);
        free(ents[i]);
    }
    if (m >= 0) free(ents);
    snprintf(args, sizeof args, "--src '%s/empty' --lab 77", d);
    char says[PATH_MAX + 300];
    snprintf(says, sizeof says, "grade: no lab 77 under %s/labs%s\n", GRADE_ROOT, have);
    expect_usage_error(args, says);
}

/* Paths from the command line and the environment that do not fit 4096
 * bytes are refused with what was too long and what to do, before anything
 * is built: cut, --src F-other graded the folder F (of 4095 bytes), and so
 * did a relative --src past it once made absolute; --base-cache likewise; a
 * TMPDIR that left no room for grade.XXXXXX failed with "Invalid argument",
 * one that left none for its base/ copied the course tree into the run's
 * folder itself, or built with HOME a cut name, a --base-cache with no room
 * for its entry locked a cut name, and a long --csv had the folder of its cut
 * checked in its stead. (--lab 77, checked after them, stops a run that got
 * past them.) */
static void test_usage_long_paths(void **state) {
    (void)state;
    static char d[PATH_MAX], f[8192], g[8192], rel[256], args[16384], says[8192], log[PATH_MAX];
    snprintf(d, sizeof d, "%s/usage-long", tmp);
    snprintf(log, sizeof log, "%s/usage-long.log", tmp);
    tree_remove(d);
    long_dir(f, sizeof f, d, 4095, 'f'); /* F: the cut of F-other */
    char start[81];
    snprintf(start, sizeof start, "%s", f);

    snprintf(args, sizeof args, "--src '%s-other' --lab 77", f);
    snprintf(says, sizeof says, "grade: cannot read --src %s... (4096 bytes or more, past the 4096 a path may have "
             "here): give a shorter path", start);
    expect_usage_error(args, says);

    snprintf(args, sizeof args, "--src '%s' --base-cache '%s-cache' --lab 77", d, f);
    snprintf(says, sizeof says, "grade: cannot read --base-cache %s... (4096 bytes or more", start);
    expect_usage_error(args, says);

    /* Relative: from a folder of 4000 bytes, a --src of 200 more. */
    long_dir(g, sizeof g, d, 4000, 'g');
    memset(rel, 'r', 200);
    rel[200] = '\0';
    int rc = sh("cd '%s' && mkdir -p '%s' && '%s' --root '%s' --target emu --src '%s' --lab 77 > '%s' 2>&1", g, rel,
                GRADE_BIN, GRADE_ROOT, rel, log);
    snprintf(start, sizeof start, "%s", g);
    snprintf(says, sizeof says, "grade: cannot read --src %s... (4096 bytes or more, past the 4096 a path may have "
             "here): give a full path that is shorter, or run from a shorter directory", start);
    if (rc != 2 || !file_has(log, says))
        fail_msg("grade --src of %s from a folder of 4000 bytes: exit status %d, want 2 and '%s' (%s)", rel, rc, says, log);

    /* TMPDIR of 4095 bytes: no room for /grade.XXXXXX. */
    rc = sh("TMPDIR='%s' '%s' --root '%s' --target emu --src '%s' --lab 00 > '%s' 2>&1", f, GRADE_BIN, GRADE_ROOT, d, log);
    snprintf(start, sizeof start, "%s", f);
    snprintf(says, sizeof says, "grade: cannot make this run's folder %s... (4096 bytes or more, past the 4096 a path "
             "may have here): set TMPDIR to a shorter path (or unset it for /tmp)", start);
    if (rc != 1 || !file_has(log, says) || file_has(log, "building the course libraries"))
        fail_msg("grade with a TMPDIR of 4095 bytes: exit status %d, want 1, '%s' and no build (%s)", rc, says, log);
    /* TMPDIR of 4080 bytes: grade.XXXXXX fits, its base/ does not (cut, it was the run's folder itself). */
    long_dir(g, sizeof g, d, 4080, 'h');
    rc = sh("TMPDIR='%s' '%s' --root '%s' --target emu --src '%s' --lab 00 > '%s' 2>&1", g, GRADE_BIN, GRADE_ROOT, d, log);
    snprintf(start, sizeof start, "%s", g);
    snprintf(says, sizeof says, "grade: cannot make the base copy %s... (4096 bytes or more, past the 4096 a path may "
             "have here): set TMPDIR to a shorter path", start);
    if (rc != 1 || !file_has(log, says) || file_has(log, "building the course libraries"))
        fail_msg("grade with a TMPDIR of 4080 bytes: exit status %d, want 1, '%s' and no build (%s)", rc, says, log);
    /* --base-cache of 4080 bytes: its entry (/<16 hex digits>-emu) does not fit. */
    rc = sh("'%s' --root '%s' --target emu --prepare --base-cache '%s' > '%s' 2>&1", GRADE_BIN, GRADE_ROOT, g, log);
    snprintf(says, sizeof says, "grade: cannot use the cache entry %s... (4096 bytes or more, past the 4096 a path may "
             "have here): give --base-cache a shorter path", start);
    if (rc != 1 || !file_has(log, says) || !file_has(log, "--prepare: nothing was built") ||
        file_has(log, "building the course libraries"))
        fail_msg("grade --prepare with a --base-cache of 4080 bytes: exit status %d, want 1, '%s' and no build (%s)", rc,
                 says, log);
    /* TMPDIR of 4078 bytes: the run's folder (4092) and the cache fit, the build's HOME does not. */
    long_dir(g, sizeof g, d, 4078, 'k');
    rc = sh("TMPDIR='%s' '%s' --root '%s' --target emu --prepare --base-cache '%s/cache' > '%s' 2>&1", g, GRADE_BIN,
            GRADE_ROOT, d, log);
    snprintf(start, sizeof start, "%s", g);
    snprintf(says, sizeof says, "grade: cannot give the build the HOME %s... (4096 bytes or more, past the 4096 a path "
             "may have here): set TMPDIR to a shorter path", start);
    if (rc != 1 || !file_has(log, says))
        fail_msg("grade --prepare with a TMPDIR of 4078 bytes: exit status %d, want 1 and '%s' (%s)", rc, says, log);

    /* --csv past the limit: cut, its folder was checked in its stead. */
    snprintf(args, sizeof args, "--batch '%s' --csv '%s/%s/grades.csv' --lab 77", d, f, rel);
    snprintf(start, sizeof start, "%s", f);
    snprintf(says, sizeof says, "grade: cannot write --csv %s... (4096 bytes or more, past the 4096 a path may have "
             "here): give a shorter path", start);
    expect_usage_error(args, says);
    tree_remove(d);
}

/* --batch replaces the CSV when it is done, and leaves no partial file. */
static void test_batch_csv_replaced_when_done(void **state) {
    (void)state;
    char d[PATH_MAX], log[PATH_MAX], args[PATH_MAX * 3], csv[PATH_MAX + 16];
    snprintf(d, sizeof d, "%s/batch-replace", tmp);
    snprintf(log, sizeof log, "%s/batch-replace.log", tmp);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d/in/alice/00-hello\"; printf 'old data\\n' > \"$d/old.csv\";"
           " cp '%s/solutions/00-hello/vector_add.cu' \"$d/in/alice/00-hello/\"",
           d, GRADE_ROOT) != 0)
        fail_msg("could not lay out %s", d);
    snprintf(args, sizeof args, "--batch '%s/in' --csv '%s/old.csv' --lab 00 --only test_single_element", d, d);
    int rc = grade_args(args, log);
    if (rc != 0) fail_msg("grade --batch exited %d (%s)", rc, log);
    snprintf(csv, sizeof csv, "%s/old.csv", d);
    if (strcmp(file_text(csv), "student,lab 00,total,max,notes\n\"alice\",2.00,2.00,2.00,\"\"\n"))
        fail_msg("the CSV is '%s'", file_text(csv));
    snprintf(csv, sizeof csv, "%s/old.csv.partial", d);
    if (access(csv, F_OK) == 0) fail_msg("%s is left behind", csv);
}

/* ---- how a submission is laid out ------------------------------------------------------ */

/* run_autograder in a fake /autograder (GRADESCOPE_ROOT) with this tree's
 * grader: setup (shell commands, $ag the fake root, $sol lab 00's solution)
 * lays out $ag/submission. Its results.json (the caller frees it), or a
 * failed test; the log's path in log. */
static json_t *autograder_on(const char *name, const char *setup, char *log, size_t loglen) {
    snprintf(log, loglen, "%s/ag-%s.log", tmp, name);
    int rc = sh("set -e; ag='%s/ag-%s'; sol='%s/solutions/00-hello/vector_add.cu'; rm -rf \"$ag\";"
                " mkdir -p \"$ag/source\" \"$ag/submission\"; %s;"
                " GRADESCOPE_ROOT=\"$ag\" COURSE_DIR='%s' GRADE_BIN='%s' GRADE_TARGET=emu"
                " timeout -k 10 600 bash '%s/autograder/gradescope/run_autograder' > '%s' 2>&1",
                tmp, name, GRADE_ROOT, setup, GRADE_ROOT, GRADE_BIN, GRADE_ROOT, log);
    if (rc != 0) fail_msg("run_autograder failed (%d; %s)", rc, log);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/ag-%s/results/results.json", tmp, name);
    json_t *res = json_load_file(path, 0, NULL);
    if (!res) fail_msg("no results.json in the fake /autograder (%s)", log);
    return res;
}

/* make gradescope-zip LAB=01: the zip names its lab, and run_autograder
 * grades lab 01 only: lab 00's solution uploaded to this assignment earns
 * nothing, and the output says its file was ignored. The lab is given as
 * "1": a one-digit number names the lab with its leading zero, in the zip's
 * name too. Without LAB= the zip says that any lab can be graded; an
 * unknown lab is refused. */
static void test_gradescope_lab_assignment(void **state) {
    (void)state;
    if (sh("command -v zip >/dev/null && command -v unzip >/dev/null") != 0) skip();
    char log[PATH_MAX], zip[PATH_MAX];
    snprintf(log, sizeof log, "%s/zip-lab.log", tmp);
    snprintf(zip, sizeof zip, "%s/gs-lab/autograder-01.zip", tmp);
    if (sh("cd '%s' && " MAKE_ZIP " '%s' 1 > '%s' 2>&1", GRADE_ROOT, zip, log) != 0)
        fail_msg("make_zip.sh with lab 1 failed (%s)", log);
    /* BUILD elsewhere: make test runs this beside builds in the tree's build/, whose
     * dependency files make would otherwise read while they are being written. (A folder
     * of its own, as make cannot take the space in tmp's name.) */
    if (sh("b=$(mktemp -d) && cd '%s' && make -s -n gradescope-zip LAB=1 BUILD=\"$b\" | grep -q '/autograder-01.zip 1$';"
           " rc=$?; rm -rf \"$b\"; exit $rc", GRADE_ROOT) != 0)
        fail_msg("make gradescope-zip LAB=1 does not name its zip autograder-01.zip");
    if (!file_has(log, "it grades lab 01 only")) fail_msg("make_zip.sh does not say which lab the zip grades (%s)", log);
    if (sh("test \"$(unzip -p '%s' graded_labs)\" = 01", zip) != 0) fail_msg("the zip's graded_labs does not say 01");
    if (sh("cd '%s' && " MAKE_ZIP " '%s/gs-any/autograder.zip' > '%s' 2>&1", GRADE_ROOT, tmp, log) != 0)
        fail_msg("make_zip.sh without labs failed (%s)", log);
    if (!file_has(log, "warning: no LAB= given, so this autograder grades any lab a submission has files for"))
        fail_msg("make_zip.sh without labs gives no warning (%s)", log);
    if (sh("unzip -Z1 '%s/gs-any/autograder.zip' | grep -qx graded_labs", tmp) == 0) fail_msg("a zip without labs has graded_labs");
    if (sh("cd '%s' && " MAKE_ZIP " '%s/gs-bad.zip' 77 > '%s' 2>&1", GRADE_ROOT, tmp, log) != 2 ||
        !file_has(log, "no graded lab '77'"))
        fail_msg("make_zip.sh with an unknown lab did not refuse it (%s)", log);

    char setup[PATH_MAX * 2];
    snprintf(setup, sizeof setup, "unzip -q -o '%s' graded_labs -d \"$ag/source\"; cp \"$sol\" \"$ag/submission/\"", zip);
    json_t *res = autograder_on("lab01", setup, log, sizeof log);
    double s = json_number_value(json_object_get(res, "score"));
    const char *out = json_string_value(json_object_get(res, "output"));
    json_t *t;
    size_t i, n = 0;
    json_array_foreach(json_object_get(res, "tests"), i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        if (!name || strncmp(name, "lab 01: ", 8)) fail_msg("the lab 01 assignment graded '%s' (%s)", name ? name : "", log);
        n++;
    }
    if (s != 0 || n == 0) fail_msg("lab 00's file in the lab 01 assignment: %g points in %zu tests; want 0 in lab 01's", s, n);
    if (!out || !strstr(out, "lab 00: ignored vector_add.cu: this assignment grades lab 01 only"))
        fail_msg("the output does not say lab 00's file was ignored: '%s'", out ? out : "");
    json_decref(res);
}

/* A small course tree for make_zip.sh in d/course, a git checkout: the
 * Gradescope scripts, a Makefile, lab 01-x's rubric, starters a.cu and b.cu
 * and a solution a.cu that differs. before (shell, run in the tree) adds
 * files to the commit, after adds files after it. */
static void zip_course(const char *d, const char *before, const char *after) {
    if (sh("set -e; d='%s/course'; rm -rf '%s'; mkdir -p \"$d/autograder/gradescope\" \"$d/autograder/rubrics\" \"$d/labs/01-x\""
           " \"$d/solutions/01-x\"; cp '%s'/autograder/gradescope/* \"$d/autograder/gradescope/\"; echo 'all:' > \"$d/Makefile\";"
           " echo '{}' > \"$d/autograder/rubrics/01.json\"; echo 'a' > \"$d/labs/01-x/a.cu\"; echo 'b' > \"$d/labs/01-x/b.cu\";"
           " echo 's' > \"$d/solutions/01-x/a.cu\"; cd \"$d\"; %s git init -q; git add -A;"
           " git -c user.name=course -c user.email=course@example.com commit -qm course; %s",
           d, d, GRADE_ROOT, before, after) != 0)
        fail_msg("could not make the course tree in %s", d);
}

/* The zip holds what git tracks and nothing else lying in the working tree
 * (a grades.csv, students' submissions), which student code on Gradescope
 * could read; it warns about uncommitted changes, and outside a git checkout
 * that every file goes in. A small course tree of its own, made here. */
static void test_gradescope_zip_tracked_only(void **state) {
    (void)state;
    if (sh("command -v zip >/dev/null && command -v unzip >/dev/null && command -v git >/dev/null") != 0) skip();
    char d[PATH_MAX], log[PATH_MAX], list[PATH_MAX];
    snprintf(d, sizeof d, "%s/zip-git", tmp);
    snprintf(log, sizeof log, "%s/zip-git.log", tmp);
    snprintf(list, sizeof list, "%s/zip-git.txt", tmp);
    zip_course(d, "", "echo 'alice,10' > grades.csv; mkdir -p submissions/alice; echo 'x' > submissions/alice/a.cu");
    /* GIT_CEILING_DIRECTORIES: the test's folder may itself lie in a checkout. */
    const char *zip = "GIT_CEILING_DIRECTORIES='%s' bash '%s/course/autograder/gradescope/make_zip.sh' %s '%s/%s.zip' 01 > '%s' 2>&1"
                      " && unzip -Z1 '%s/%s.zip' > '%s'";
    if (sh(zip, d, d, "", d, "clean", log, d, "clean", list) != 0) fail_msg("make_zip.sh failed (%s)", log);
    const char *want[] = {"course/Makefile", "course/labs/01-x/a.cu", "course/autograder/rubrics/01.json", "run_autograder"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (sh("grep -qx '%s' '%s'", want[i], list) != 0) fail_msg("the zip lacks %s (%s)", want[i], list);
    const char *never[] = {"course/grades.csv", "course/submissions/", "course/solutions/", "course/.git/"};
    for (size_t i = 0; i < sizeof never / sizeof *never; i++)
        if (sh("grep -q '^%s' '%s'", never[i], list) == 0) fail_msg("the zip holds %s, which git does not track (%s)", never[i], list);
    if (file_has(log, "warning")) fail_msg("a clean checkout gave a warning (%s)", log);

    /* A changed file and a deleted one, not committed: a warning; the zip holds the tree as it is. (The
     * deleted one is a student file: refused without --allow-changed; test_gradescope_zip_refuses.) */
    if (sh("cd '%s/course' && echo changed >> Makefile && rm labs/01-x/b.cu", d) != 0) fail_msg("could not change the tree");
    if (sh(zip, d, d, "--allow-changed", d, "changed", log, d, "changed", list) != 0)
        fail_msg("make_zip.sh failed on a changed tree (%s)", log);
    if (!file_has(log, "tracked files have uncommitted changes") || !file_has(log, "Makefile"))
        fail_msg("no warning about the uncommitted change (%s)", log);
    if (sh("grep -qx course/labs/01-x/b.cu '%s'", list) == 0) fail_msg("the zip holds a deleted file");
    if (sh("unzip -p '%s/changed.zip' course/Makefile | grep -qx changed", d) != 0) fail_msg("the zip does not hold the changed Makefile");

    /* Not a checkout: everything goes in, with a warning that says so. */
    if (sh("rm -rf '%s/course/.git'", d) != 0) fail_msg("could not remove .git");
    if (sh(zip, d, d, "", d, "nogit", log, d, "nogit", list) != 0) fail_msg("make_zip.sh failed outside git (%s)", log);
    if (!file_has(log, "is not a git checkout, so the zip holds every file of the tree"))
        fail_msg("no warning outside a git checkout (%s)", log);
    if (sh("grep -qx course/grades.csv '%s'", list) != 0) fail_msg("outside git the zip should hold the whole tree (%s)", list);
}

/* make_zip.sh refuses a zip whose starters are their solutions (copied over
 * labs/ while testing and not committed: every student could read them, and
 * an empty submission would score full marks), --allow-changed or not, in a
 * checkout and outside one. A student file that differs from the last
 * commit is refused too unless --allow-changed; a harness file (check.c)
 * that differs only gets the warning. A small course tree of its own. */
static void test_gradescope_zip_refuses(void **state) {
    (void)state;
    if (sh("command -v zip >/dev/null && command -v unzip >/dev/null && command -v git >/dev/null") != 0) skip();
    char d[PATH_MAX], log[PATH_MAX];
    snprintf(d, sizeof d, "%s/zip-refuse", tmp);
    snprintf(log, sizeof log, "%s/zip-refuse.log", tmp);
    zip_course(d, "echo 'h' > labs/01-x/check.c;", "");
    const char *zip = "cd '%s/course' && GIT_CEILING_DIRECTORIES='%s' bash autograder/gradescope/make_zip.sh %s '%s/%s.zip' 01"
                      " > '%s' 2>&1";
#define ZIP(flags, name) sh(zip, d, d, flags, d, name, log)
    /* The instructor's copy of the solution over the starter. */
    if (sh("cp '%s/course/solutions/01-x/a.cu' '%s/course/labs/01-x/a.cu'", d, d) != 0) fail_msg("could not copy");
    for (int k = 0; k < 2; k++) {
        const char *flags = k ? "--allow-changed" : "";
        int rc = ZIP(flags, "solved");
        if (rc != 1 || !file_has(log, "starters are byte for byte their solutions/ files") ||
            !file_has(log, "  labs/01-x/a.cu\n") || !file_has(log, "checkout -- labs/01-x/a.cu"))
            fail_msg("make_zip.sh %s with a solution in labs/: exit status %d, want 1, the file and what to do (%s):\n%s",
                     flags, rc, log, file_text(log));
        char z[PATH_MAX + 16];
        snprintf(z, sizeof z, "%s/solved.zip", d);
        if (access(z, F_OK) == 0) fail_msg("make_zip.sh refused, yet wrote %s", z);
    }
    /* A starter edited and a harness file edited, not committed. */
    if (sh("cd '%s/course' && git checkout -q -- labs && echo more >> labs/01-x/b.cu && echo more >> labs/01-x/check.c", d) != 0)
        fail_msg("could not edit the starter");
    int rc = ZIP("", "edited");
    if (rc != 1 || !file_has(log, "student files of labs/ differ from the last commit") || !file_has(log, "  labs/01-x/b.cu\n") ||
        file_has(log, "  labs/01-x/check.c\n") || !file_has(log, "make gradescope-zip LAB=01 ALLOW_CHANGED=1"))
        fail_msg("make_zip.sh with an edited starter: exit status %d, want 1, naming b.cu (not check.c) and the override "
                 "(%s):\n%s", rc, log, file_text(log));
    rc = ZIP("--allow-changed", "edited");
    if (rc != 0 || !file_has(log, "tracked files have uncommitted changes"))
        fail_msg("make_zip.sh --allow-changed with an edited starter: exit status %d, want 0 and the warning (%s)", rc, log);
    if (sh("unzip -p '%s/edited.zip' course/labs/01-x/b.cu | grep -qx more", d) != 0)
        fail_msg("the zip made with --allow-changed does not hold the edited starter");
    /* A harness file alone: the warning only. */
    if (sh("cd '%s/course' && git checkout -q -- labs/01-x/b.cu", d) != 0) fail_msg("could not restore b.cu");
    rc = ZIP("", "harness");
    if (rc != 0 || !file_has(log, "tracked files have uncommitted changes"))
        fail_msg("make_zip.sh with an edited check.c: exit status %d, want 0 and the warning (%s)", rc, log);
    /* Outside a checkout: no last commit to compare with, but the solution is still refused. */
    if (sh("cd '%s/course' && rm -rf .git && cp solutions/01-x/a.cu labs/01-x/a.cu", d) != 0) fail_msg("could not remove .git");
    rc = ZIP("", "nogit");
    if (rc != 1 || !file_has(log, "starters are byte for byte their solutions/ files"))
        fail_msg("make_zip.sh outside git with a solution in labs/: exit status %d, want 1 (%s)", rc, log);
#undef ZIP
}

/* A zip of a folder: the files are one folder down (my-hw/00-hello/...),
 * beside macOS's __MACOSX and a .DS_Store. They are found and graded; with
 * nothing to grade the output lists what the submission holds. */
static void test_gradescope_folder_in_zip(void **state) {
    (void)state;
    char log[PATH_MAX];
    json_t *res = autograder_on("folder",
                                "mkdir -p \"$ag/submission/my-hw/00-hello\" \"$ag/submission/__MACOSX/my-hw/00-hello\";"
                                " cp \"$sol\" \"$ag/submission/my-hw/00-hello/\"; touch \"$ag/submission/.DS_Store\""
                                " \"$ag/submission/__MACOSX/my-hw/00-hello/._vector_add.cu\"",
                                log, sizeof log);
    double s = json_number_value(json_object_get(res, "score"));
    size_t nt = json_array_size(json_object_get(res, "tests"));
    const char *out = json_string_value(json_object_get(res, "output"));
    if (s != 10 || nt != 4) fail_msg("lab 00's solution in my-hw/: %g points in %zu tests; want 10 in 4 (%s)", s, nt, log);
    if (!out || !strstr(out, "The submission's files are in its folder my-hw/"))
        fail_msg("the output does not say where the files were found: '%s'", out ? out : "");
    json_decref(res);
    /* The table's title names the lab, not the temp folder run_autograder copies the submission to. */
    if (!file_has(log, "\nGrade of the submission, lab 00-hello (target emu, seed ") || file_has(log, "Grade of /"))
        fail_msg("the table's title does not name the lab graded (%s)", log);

    res = autograder_on("nothing", "mkdir -p \"$ag/submission/a\" \"$ag/submission/b\"; touch \"$ag/submission/notes.txt\"", log,
                        sizeof log);
    s = json_number_value(json_object_get(res, "score"));
    out = json_string_value(json_object_get(res, "output"));
    if (s != 0) fail_msg("a submission without lab files scored %g", s);
    if (!out || !strstr(out, "No lab files found in the submission. Expected: vector_add.cu") ||
        !strstr(out, "Found: a/, b/, notes.txt"))
        fail_msg("the output does not say what was expected and found: '%s'", out ? out : "");
    json_decref(res);
}

/* A submission whose one entry has a path past 4096 bytes (a folder of 200
 * bytes in a --src of 3950) read as "nothing (an empty submission)"; the
 * warning now names the entry and why it was not read. */
static void test_submission_long_folder(void **state) {
    (void)state;
    static char d[PATH_MAX], src[8192], name[201], log[PATH_MAX], says[1024];
    snprintf(d, sizeof d, "%s/submission-long", tmp);
    snprintf(log, sizeof log, "%s/submission-long.log", tmp);
    tree_remove(d);
    long_dir(src, sizeof src, d, 3950, 's');
    memset(name, 'm', 200);
    name[200] = '\0';
    int fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || mkdirat(fd, name, 0755) != 0) fail_msg("could not make a folder of 200 bytes in %.80s...", src);
    close(fd);
    char args[8400];
    snprintf(args, sizeof args, "--src '%s' --lab 00 --only test_single_element", src);
    int rc = grade_args(args, log);
    snprintf(says, sizeof says, "Found: %s (its path is 4096 bytes or more, too long to read: rename it shorter)", name);
    if (rc != 0 || !file_has(log, says)) fail_msg("grade --src with a folder past 4096 bytes: exit status %d, want 0 and '%s' (%s)", rc, says, log);
    tree_remove(d);
}

/* The same file in two layouts: the first (NN-topic/) is graded, and a
 * warning names it and the one ignored. */
static void test_duplicate_layouts_warned(void **state) {
    (void)state;
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/dup", tmp);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d/00-hello\"; cp '%s/solutions/00-hello/vector_add.cu' \"$d/00-hello/\";"
           " cp \"$d/00-hello/vector_add.cu\" \"$d/\"; patch -s \"$d/vector_add.cu\" < '%s/autograder/wrong/00-hello/zeros/vector_add.cu.patch'",
           d, GRADE_ROOT, GRADE_ROOT) != 0)
        fail_msg("could not lay out %s", d);
    json_t *res = grade_run(d, "--lab 00", "--only test_single_element", "dup");
    double s = json_number_value(json_object_get(res, "score"));
    json_decref(res);
    if (s != 2) fail_msg("graded the wrong copy: %g of 2 points (%s)", s, run_log);
    if (!file_has(run_log, "vector_add.cu is in the submission more than once: graded 00-hello/vector_add.cu, "
                           "ignored vector_add.cu (a different file)"))
        fail_msg("no warning naming the copy graded and the one ignored (%s)", run_log);
}

/* A student file that tests __SIMT_EMULATOR__ (or __CUDA_ARCH__) in an #if
 * runs other code on the emulator than on a GPU: grading on the emulator
 * says so, with the line, in the output and in results.json. A comment that
 * names the macro is not such a test. */
static void test_arch_branch_warned(void **state) {
    (void)state;
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/arch", tmp);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d\";"
           " printf '/* not __CUDA_ARCH__ here */\\n#ifdef __SIMT_EMULATOR__\\n#endif\\n' > \"$d/vector_add.cu\";"
           " cat '%s/solutions/00-hello/vector_add.cu' >> \"$d/vector_add.cu\"",
           d, GRADE_ROOT) != 0)
        fail_msg("could not lay out %s", d);
    json_t *res = grade_run(d, "--lab 00", "--only test_single_element", "arch");
    double s = json_number_value(json_object_get(res, "score"));
    const char *out = json_string_value(json_object_get(res, "output"));
    static const char says[] = "lab 00: warning: labs/00-hello/vector_add.cu:2: note: this line tests "
                               "__SIMT_EMULATOR__: the emulator leaves __CUDA_ARCH__ undefined";
    if (s != 2) fail_msg("the file scored %g of 2 (%s)", s, run_log);
    if (!file_has(run_log, says)) fail_msg("no warning '%s' (%s)", says, run_log);
    if (!out || !strstr(out, says)) fail_msg("results.json's output does not hold '%s': %s", says, out ? out : "(none)");
    json_decref(res);
}

/* A --src folder without any student file grades the starters, with a warning that says so. */
static void test_src_without_lab_files_warned(void **state) {
    (void)state;
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/nofiles", tmp);
    if (sh("rm -rf '%s' && mkdir -p '%s/hw' && touch '%s/hw/answers.txt'", d, d, d) != 0) fail_msg("could not lay out %s", d);
    json_decref(grade_run(d, "--lab 00", "--only test_single_element", "nofiles"));
    if (!file_has(run_log, "grade: WARNING: the submission holds no student file of the graded lab, so the lab is graded on "
                       "its starter. Expected: vector_add.cu. Found in hw/: answers.txt"))
        fail_msg("no warning that only starters were graded (%s)", run_log);
}

/* --gpu-build: the lab 02 solution with its final scaling done by a host
 * function called through a namespace, which the emulator runs and simtcc's
 * own check leaves alone (a qualified name), keeps its marks on the emulator and loses
 * them all once nvcc compiles the file; the solution keeps its marks with
 * --gpu-build too. Needs the CUDA toolkit, not a GPU; CUDA_ARCH=80 compiles
 * once instead of twice. Without a toolkit the flag is a usage error. */
static void test_gpu_build(void **state) {
    (void)state;
    char d[PATH_MAX], f[PATH_MAX + 64], src[PATH_MAX + 64];
    snprintf(d, sizeof d, "%s/gpubuild", tmp);
    snprintf(f, sizeof f, "%s/02-shared-memory-tiling/matmul_smem.cu", d);
    snprintf(src, sizeof src, "%s/solutions/02-shared-memory-tiling/matmul_smem.cu", GRADE_ROOT);
    if (sh("rm -rf '%s' && mkdir -p '%s/02-shared-memory-tiling'", d, d) != 0) fail_msg("could not make %s", d);
    if (sh("sed -e 's|^__global__ void matmul_smem_kernel|namespace host_side { static float scaled(float x) { return x; } }\\n&|'"
           " -e 's|alpha \\* acc :|alpha * host_side::scaled(acc) :|' '%s' > '%s'", src, f) != 0 ||
        !file_has(f, "host_side::scaled(acc)") || !file_has(f, "static float scaled"))
        fail_msg("could not write the case into %s", f);
    const char *only = "--only test_one_by_one --only test_large"; /* 1 + 2 points */
    json_t *r = grade_run(d, "--lab 02", only, "gpubuild-emu");
    double s = json_number_value(json_object_get(r, "score"));
    json_decref(r);
    if (s != 3.0) fail_msg("on the emulator alone the case should keep its 3 points, got %g (%s)", s, run_log);

    int toolkit = sh("command -v nvcc >/dev/null || test -x /usr/local/cuda/bin/nvcc") == 0;
    if (!toolkit) {
        char log[PATH_MAX];
        snprintf(log, sizeof log, "%s/gpubuild-none.log", tmp);
        if (sh("'%s' --root '%s' --src '%s' --lab 02 --target emu --gpu-build > '%s' 2>&1", GRADE_BIN, GRADE_ROOT, d,
               log) != 2 || !file_has(log, "has no CUDA toolkit"))
            fail_msg("--gpu-build without a toolkit is not a usage error (%s)", log);
        skip();
    }
    setenv("CUDA_ARCH", "80", 1);
    char extra[256];
    snprintf(extra, sizeof extra, "%s --gpu-build", only);
    r = grade_run(d, "--lab 02", extra, "gpubuild-nvcc");
    s = json_number_value(json_object_get(r, "score"));
    json_decref(r);
    if (s != 0.0) fail_msg("with --gpu-build the case should lose its points, got %g (%s)", s, run_log);
    if (!file_has(run_log, "does not compile for a GPU (nvcc, --gpu-build)") ||
        !file_has(run_log, "calling a __host__ function"))
        fail_msg("the table does not show nvcc's error (%s)", run_log);
    char sol[PATH_MAX + 16];
    snprintf(sol, sizeof sol, "%s/solutions", GRADE_ROOT);
    r = grade_run(sol, "--lab 02", extra, "gpubuild-solution");
    s = json_number_value(json_object_get(r, "score"));
    json_decref(r);
    unsetenv("CUDA_ARCH");
    if (s != 3.0) fail_msg("the solution should keep its 3 points with --gpu-build, got %g (%s)", s, run_log);
}

/* ---- --target cuda where the checks find no device ------------------------------------- */

/* A course of its own, with a fake lab 00 whose "check" program is a shell
 * script that speaks the verdict channel (the secret on fd 3, the verdict on
 * fd 4) and answers as a check on a machine without a device does (skip),
 * or as on one with a device (pass) when the student file says "device":
 * --target cuda's logic without a CUDA build or a GPU. */
static void fake_cuda_course(const char *root) {
    if (sh("set -e; r='%s'; rm -rf \"$r\"; mkdir -p \"$r/autograder/rubrics\" \"$r/labs/00-fake\";"
           " printf '%%s\\n' '{\"lab\": \"00-fake\", \"title\": \"fake\", \"timeout_s\": 30, \"tests\": ['"
           "  '{\"name\": \"one\", \"kind\": \"numerics\", \"check\": \"test_one\", \"points\": 2},'"
           "  '{\"name\": \"two\", \"kind\": \"numerics\", \"check\": \"test_two\", \"points\": 3}]}'"
           "  > \"$r/autograder/rubrics/00.json\";"
           " echo starter > \"$r/labs/00-fake/fake.cu\"; echo harness > \"$r/labs/00-fake/check.c\";"
           " printf '%%s\\n' '#!/bin/sh' 'read -r tok <&3 || true'"
           "  'if grep -q device \"$(dirname \"$0\")/../../../../../labs/00-fake/fake.cu\"; then v=PASS; else'"
           "  '  echo \"no GPU here: build with TARGET=emu to run this check on the CPU\"; v=SKIP; fi'"
           "  'echo \"$tok $v $GRADE_TEST\" >&4' > \"$r/check.sh\";"
           " printf 'grade-libs-cuda:\\n\\t@mkdir -p build\\nbuild/cuda/labs/00-fake/graded/check: labs/00-fake/fake.cu\\n"
           "\\tmkdir -p $(@D) && cp check.sh $@ && chmod +x $@\\n' > \"$r/Makefile\"",
           root) != 0)
        fail_msg("could not make the fake course in %s", root);
}

/* A fake course on the emulator, in root: lab 00-fake with one numerics
 * test ("one", 2 points) whose check is a script that leaves the file ran in
 * the folder mark, runs check_hook (which may set v=FAIL) and passes unless
 * it did; libs_hook and build_hook are shell lines the Makefile runs after
 * the base's build (as root) and after the check's build (as --run-as's
 * user, with it). No hook may hold a single quote. */
static void fake_emu_course(const char *root, const char *mark, const char *libs_hook, const char *build_hook,
                            const char *check_hook) {
    if (sh("set -e; r='%s'; m='%s'; rm -rf \"$r\" \"$m\"; mkdir -p \"$r/autograder/rubrics\" \"$r/labs/00-fake\" \"$m\";"
           " chmod 1777 \"$m\";"
           " printf '%%s\\n' '{\"lab\": \"00-fake\", \"title\": \"fake\", \"timeout_s\": 30, \"tests\": ['"
           "  '{\"name\": \"one\", \"kind\": \"numerics\", \"check\": \"test_one\", \"points\": 2}]}'"
           "  > \"$r/autograder/rubrics/00.json\";"
           " echo starter > \"$r/labs/00-fake/fake.cu\"; echo harness > \"$r/labs/00-fake/check.c\";"
           " printf '%%s\\n' '#!/bin/sh' 'read -r tok <&3 || true' \"touch '$m/ran'\" 'v=PASS' '%s'"
           "  'echo \"$tok $v $GRADE_TEST\" >&4' > \"$r/check.sh\";"
           " printf 'grade-libs-emu:\\n\\t@mkdir -p build\\n\\t%%s\\nbuild/emu/labs/00-fake/graded/check: labs/00-fake/fake.cu\\n"
           "\\tmkdir -p $(@D) && cp check.sh $@ && chmod +x $@\\n\\t%%s\\n' '%s' '%s' > \"$r/Makefile\"",
           root, mark, check_hook, libs_hook, build_hook) != 0)
        fail_msg("could not make the fake course in %s", root);
}

/* Grade the submission src of the fake course at root with the extra flags
 * (--target emu); its exit status, its output in log. */
static int fake_emu_grade(const char *root, const char *what, const char *log) {
    return sh("timeout -k 10 300 '%s' --root '%s' %s --target emu --jobs 2 > '%s' 2>&1", GRADE_BIN, root, what, log);
}

/* Grade DIR/sub (one copy of fake.cu) of the fake course at root with
 * --lab 00, the extra flags and --json DIR/r.json, the output in
 * DIR/grade.log; the exit status, and in out the log, then results.json
 * (whose messages are whole). */
static int fake_grade_sub(const char *d, const char *root, const char *extra, char *out, size_t n) {
    char log[PATH_MAX + 16], json[PATH_MAX + 16], what[PATH_MAX * 3];
    snprintf(log, sizeof log, "%s/grade.log", d);
    snprintf(json, sizeof json, "%s/r.json", d);
    if (sh("mkdir -p '%s/sub' && echo mine > '%s/sub/fake.cu'", d, d) != 0) fail_msg("could not lay out %s", d);
    snprintf(what, sizeof what, "--src '%s/sub' --lab 00 %s --json '%s'", d, extra, json);
    int rc = fake_emu_grade(root, what, log);
    snprintf(out, n, "%s\n", file_text(log)); /* file_text's buffer is shared: one at a time */
    snprintf(out + strlen(out), n - strlen(out), "%s", file_text(json));
    return rc;
}

/* Students a and b of a batch in DIR/batch, each with a copy of fake.cu. */
static void fake_batch_layout(const char *d) {
    if (sh("mkdir -p '%s/batch/a' '%s/batch/b' && echo mine > '%s/batch/a/fake.cu' && echo mine > '%s/batch/b/fake.cu'",
           d, d, d, d) != 0)
        fail_msg("could not lay out %s", d);
}

/* With --run-as, a lab's copy and the builds' HOME that cannot be handed to
 * that user (here: HOME is gone) are a grader error that names the folder
 * and why, and the exit status is 1; the build does not run (as that user,
 * it could not write the files it was not given, and the student would get
 * the blame), and no test runs. The hand-over's failure used to be ignored. */
static void test_run_as_handover_fails(void **state) {
    (void)state;
    if (getuid() != 0 || !getpwnam("nobody")) skip();
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], log[PATH_MAX + 16], ran[PATH_MAX + 16];
    snprintf(d, sizeof d, "%s/handover", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(ran, sizeof ran, "%s/ran", mark);
    snprintf(log, sizeof log, "%s/grade.log", d);
    fake_emu_course(root, mark, "rm -rf \"$$HOME\"", "true", "true");
    static char out[1 << 16];
    int rc = fake_grade_sub(d, root, "--run-as nobody", out, sizeof out);
    if (rc != 1) fail_msg("a failed hand-over to --run-as's user: exit status %d, want 1 (%s):\n%s", rc, log, out);
    if (!strstr(out, "grader error") || !strstr(out, "grader problem: could not hand ") ||
        !strstr(out, "/home to the --run-as user nobody for the build (No such file or directory"))
        fail_msg("the table does not say that the grader could not hand HOME to nobody, and why (%s):\n%s", log, out);
    if (!strstr(out, "grade: cannot change the owner of ") || !strstr(out, "/home to 65534:65534: No such file or directory"))
        fail_msg("stderr does not name the entry whose owner could not change (%s):\n%s", log, out);
    if (access(ran, F_OK) == 0) fail_msg("the check ran although the build was not handed to nobody (%s)", log);
    tree_remove(d);
}

/* With --run-as, a build that cannot be taken back from that user before
 * student code runs (here: the build, as nobody, made a path past 4096
 * bytes in the lab's copy, whose owner tree_chown cannot change) is a grader
 * error naming the folder and why, exit status 1, and no test runs: student
 * code could otherwise change its own build. The failure used to be
 * ignored, and the check ran on a copy still partly nobody's. */
static void test_run_as_takeback_fails(void **state) {
    (void)state;
    if (getuid() != 0 || !getpwnam("nobody")) skip();
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], log[PATH_MAX + 16], ran[PATH_MAX + 16];
    snprintf(d, sizeof d, "%s/takeback", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(ran, sizeof ran, "%s/ran", mark);
    snprintf(log, sizeof log, "%s/grade.log", d);
    fake_emu_course(root, mark, "true",
                    "mkdir -p build/deep && cd build/deep && for i in $$(seq 22); do n=$$(printf %0200d $$i); "
                    "mkdir $$n && cd $$n; done && touch f",
                    "true");
    static char out[1 << 16];
    int rc = fake_grade_sub(d, root, "--run-as nobody", out, sizeof out);
    if (rc != 1) fail_msg("a failed take-back from --run-as's user: exit status %d, want 1 (%s):\n%s", rc, log, out);
    if (!strstr(out, "grader error") || !strstr(out, "grader problem: could not take ") ||
        !strstr(out, "back from the --run-as user nobody after the build (File name too long"))
        fail_msg("the table does not say that the grader could not take the build back, and why (%s):\n%s", log, out);
    if (!strstr(out, "grade: cannot change the owner of "))
        fail_msg("stderr does not name the entry whose owner could not change (%s):\n%s", log, out);
    if (access(ran, F_OK) == 0) fail_msg("the check ran on a build still partly nobody's (%s)", log);
    tree_remove(d);
}

/* A test's working folder that cannot be made (here: a file where its
 * folder goes) is a grader error naming the folder and why, and exit status
 * 1; in a batch, alone or --parallel, the row says so and the exit status
 * is 1 too. It used to run the test in a folder that was not there, as an
 * unexplained "could not start" with exit status 0. */
static void test_workdir_fails(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], log[PATH_MAX + 16], what[PATH_MAX * 3];
    snprintf(d, sizeof d, "%s/workdir", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(log, sizeof log, "%s/grade.log", d);
    /* A file where the run's working folders go, and where those of --parallel's first worker go. */
    fake_emu_course(root, mark, "touch \"$$HOME/../run\" && mkdir \"$$HOME/../student-0\" && touch \"$$HOME/../student-0/run\"",
                    "true", "true");
    if (sh("mkdir -p '%s/batch/a' && echo mine > '%s/batch/a/fake.cu'", d, d) != 0) fail_msg("could not lay out %s", d);
    static char out[1 << 16];
    int rc = fake_grade_sub(d, root, "", out, sizeof out);
    if (rc != 1) fail_msg("a working folder that cannot be made: exit status %d, want 1 (%s):\n%s", rc, log, out);
    if (!strstr(out, "grader error") || !strstr(out, "grader problem: could not make the test's working folder ") ||
        !strstr(out, "/run/00-check-1 (Not a directory); not run"))
        fail_msg("the table does not say that the working folder could not be made, and why (%s):\n%s", log, out);
    const char *how[] = {"", "--parallel 2"};
    for (int k = 0; k < 2; k++) {
        snprintf(what, sizeof what, "--batch '%s/batch' --csv '%s/grades.csv' --lab 00 %s", d, d, how[k]);
        rc = fake_emu_grade(root, what, log);
        char csv[PATH_MAX + 16];
        snprintf(csv, sizeof csv, "%s/grades.csv", d);
        if (rc != 1) fail_msg("a batch with a grader error: exit status %d, want 1 (%s):\n%s", rc, log, file_text(log));
        if (!file_has(csv, "grader error: grader problem: could not make the test's working folder"))
            fail_msg("the batch's row does not say what the grader could not do (%s):\n%s", csv, file_text(csv));
        if (!file_has(log, "grade: ERROR: 1 submission(s) have tests the grader could not grade"))
            fail_msg("the batch does not say that a submission was not graded for the grader's fault (%s):\n%s", log,
                     file_text(log));
    }
    tree_remove(d);
}

/* A batch of two students a and b of the fake course (each a copy of
 * fake.cu), graded with the extra flags into DIR/grades.csv; fails the test
 * unless the grader exits 0 and both get the test's 2 points. */
static void fake_batch_both_pass(const char *d, const char *root, const char *extra, const char *why) {
    char what[PATH_MAX * 3], log[PATH_MAX + 16], csv[PATH_MAX + 16];
    snprintf(log, sizeof log, "%s/grade.log", d);
    snprintf(csv, sizeof csv, "%s/grades.csv", d);
    fake_batch_layout(d);
    snprintf(what, sizeof what, "--batch '%s/batch' --csv '%s' --lab 00 %s", d, csv, extra);
    int rc = fake_emu_grade(root, what, log);
    if (rc != 0 || !file_has(csv, "\"a\",2.00,2.00,2.00,\"\"\n\"b\",2.00,2.00,2.00,\"\"\n"))
        fail_msg("%s: exit status %d, want 0, and 2 points each (%s, %s):\n%s\n%s", why, rc, log, csv, file_text(csv),
                 file_text(log));
}

/* --parallel 2 with --run-as USER1,USER2: the two students' checks run at
 * once, each as a user of its own, so neither may signal the other's (kill
 * -0 of the other's pid fails). Each check writes its pid, waits for the
 * other's, and fails when it could signal it. With one user for both, as
 * --run-as gave every worker before, each could (and could kill or trace
 * it); that is now refused. */
static void test_parallel_run_as_users(void **state) {
    (void)state;
    struct passwd *pw1 = getuid() == 0 ? getpwnam("nobody") : NULL;
    uid_t u1 = pw1 ? pw1->pw_uid : 0;
    struct passwd *pw2 = pw1 ? getpwnam("daemon") : NULL;
    if (!pw1 || !pw2 || pw2->pw_uid == 0 || pw2->pw_uid == u1) skip();
    uid_t u2 = pw2->pw_uid;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], hook[PATH_MAX * 3];
    snprintf(d, sizeof d, "%s/parallel-users", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    tree_remove(d);
    snprintf(hook, sizeof hook,
             "m=\"%s\"; echo $$ > \"$m/t$$\" && mv \"$m/t$$\" \"$m/pid-$$\"; touch \"$m/uid-$(id -u)\"; i=0;"
             " while [ $(ls \"$m\" | grep -c ^pid-) -lt 2 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done;"
             " [ $i -lt 200 ] || v=FAIL;"
             " for f in \"$m\"/pid-*; do [ \"$f\" = \"$m/pid-$$\" ] && continue; kill -0 $(cat \"$f\") && v=FAIL; done; true",
             mark);
    fake_emu_course(root, mark, "true", "true", hook);
    char users[64];
    snprintf(users, sizeof users, "--parallel 2 --run-as nobody,%s", pw2->pw_name);
    fake_batch_both_pass(d, root, users, "two students at once, each as a user of its own");
    char f1[PATH_MAX + 32], f2[PATH_MAX + 32];
    snprintf(f1, sizeof f1, "%s/uid-%u", mark, (unsigned)u1);
    snprintf(f2, sizeof f2, "%s/uid-%u", mark, (unsigned)u2);
    if (access(f1, F_OK) != 0 || access(f2, F_OK) != 0)
        fail_msg("the checks did not run as nobody (uid %u) and %s (uid %u), one each (%s)", (unsigned)u1,
                 pw2->pw_name, (unsigned)u2, mark);
    tree_remove(d);
}

/* --run-as is refused, before anything is built, for a user that another
 * grader holds now (each kills every process of its user after a test, so
 * two at once would kill each other's), a user some process runs as (it
 * would be killed, and student code could signal it), one user for two
 * --parallel workers, and a list that is not one. */
static void test_run_as_refused(void **state) {
    (void)state;
    if (getuid() != 0 || !getpwnam("nobody")) skip();
    char d[PATH_MAX], args[PATH_MAX * 2];
    snprintf(d, sizeof d, "%s/run-as-refused", tmp);
    tree_remove(d);
    if (sh("mkdir -p '%s/src' '%s/batch/a' '%s/batch/b'", d, d, d) != 0) fail_msg("could not lay out %s", d);
    /* Another grader's claim on nobody: the abstract socket it holds. */
    struct passwd *pw = getpwnam("nobody");
    char name[64];
    snprintf(name, sizeof name, "grade-run-as-%u", (unsigned)pw->pw_uid);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path + 1, name, strlen(name));
    assert_int_equal(bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))), 0);
    snprintf(args, sizeof args, "--src '%s/src' --lab 00 --run-as nobody", d);
    expect_usage_error(args, "another grader is running tests as this user now");
    close(fd);
    /* A process of nobody's (a daemon's, say). */
    pid_t p = fork();
    if (p == 0) {
        if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(1);
        execl("/bin/sleep", "sleep", "60", (char *)NULL);
        _exit(1);
    }
    assert_true(p > 0);
    usleep(200000);
    expect_usage_error(args, "(sleep) runs as it; the grader kills every process of its --run-as user");
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    snprintf(args, sizeof args, "--batch '%s/batch' --csv '%s/g.csv' --lab 00 --parallel 2 --run-as nobody", d, d);
    expect_usage_error(args, "--parallel 2 with --run-as needs 2 users, one per worker");
    snprintf(args, sizeof args, "--batch '%s/batch' --csv '%s/g.csv' --lab 00 --parallel 2 --run-as nobody,nobody", d, d);
    expect_usage_error(args, "nobody and nobody are one user");
    snprintf(args, sizeof args, "--src '%s/src' --lab 00 --run-as nobody,", d);
    expect_usage_error(args, "ends with a comma");
    snprintf(args, sizeof args, "--src '%s/src' --lab 00 --run-as ,nobody", d);
    expect_usage_error(args, "give user names separated by commas");
    snprintf(args, sizeof args, "--src '%s/src' --lab 00 --run-as no-such-user-here", d);
    expect_usage_error(args, "no-such-user-here is no user here");
    snprintf(args, sizeof args, "--src '%s/src' --lab 00 --run-as root", d);
    expect_usage_error(args, "root is root's uid");
    if (sh("test -e '%s/g.csv'", d) == 0) fail_msg("a refused batch wrote %s/g.csv", d);
    tree_remove(d);
}

/* With --run-as, what a test's code leaves in its own working folder (here
 * a path past 4096 bytes, whose owner no chown can change) does not make the
 * later builds a grader error: only the lab's copy and the builds' HOME,
 * which the build was given, are taken back after it, not the whole run's
 * folder with the earlier tests' working folders in it. Student a's test
 * turned student b's lab into a grader error. */
static void test_run_as_test_leftovers(void **state) {
    (void)state;
    if (getuid() != 0 || !getpwnam("nobody")) skip();
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8];
    snprintf(d, sizeof d, "%s/leftovers", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    tree_remove(d);
    fake_emu_course(root, mark, "true", "true",
                    "cd \"$HOME\" && for i in $(seq 22); do n=$(printf %0200d $i); mkdir $n && cd $n; done");
    fake_batch_both_pass(d, root, "--run-as nobody", "a test that left a path past 4096 bytes in its working folder");
    tree_remove(d);
}

/* Each test starts in an empty working folder (its HOME and TMPDIR): in a
 * batch, student b's test got the folder student a's test of the same name
 * had used, with what a's code left in it. Here a's check leaves a file
 * that b's check fails on. */
static void test_workdir_fresh(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8];
    snprintf(d, sizeof d, "%s/workdir-fresh", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    tree_remove(d);
    fake_emu_course(root, mark, "true", "true", "if [ -e \"$HOME/planted\" ]; then v=FAIL; fi; touch \"$HOME/planted\"");
    fake_batch_both_pass(d, root, "", "student a's test left a file where student b's test runs");
    tree_remove(d);
}

/* However deep the folders a test's code leaves in its working folder, the
 * folder is emptied for the same test of the next student: the removal gave
 * up 256 levels down, so 300 nested folders left by student a's check made
 * student b's test a grader error (and the run's exit status 1). 3000
 * levels: a path of 6000 bytes and more, past what any path call takes. */
static void test_workdir_deep_leftovers(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8];
    snprintf(d, sizeof d, "%s/workdir-deep", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    tree_remove(d);
    fake_emu_course(root, mark, "true", "true",
                    "cd \"$HOME\" && perl -e \"for (1..3000) { mkdir(q(x)) && chdir(q(x)) or die } open(F, q(>f)) or die\" || v=FAIL");
    fake_batch_both_pass(d, root, "", "student a's test left 3000 nested folders where student b's test runs");
    tree_remove(d);
    struct stat st;
    if (lstat(d, &st) == 0) fail_msg("tree_remove left %s with 3000 nested folders in it", d);
}

/* A test's working folder is removed when the test ends, so what its code
 * left there (a disk filled with files) is gone before the next build,
 * which in a batch is the next student's. It stayed until the same test of
 * the next student, so student b's build ran beside student a's leftovers.
 * a's check leaves a file and says where; each build says whether that
 * file is still there. */
static void test_workdir_dropped_after_test(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], seen[PATH_MAX + 16], check_hook[PATH_MAX + 64],
        build_hook[3 * PATH_MAX];
    snprintf(d, sizeof d, "%s/workdir-dropped", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(seen, sizeof seen, "%s/seen", mark);
    tree_remove(d);
    snprintf(check_hook, sizeof check_hook, ": > \"$HOME/junk\"; echo \"$HOME\" > \"%s/home\"", mark);
    snprintf(build_hook, sizeof build_hook,
             "if [ -s \"%s/home\" ]; then if [ -e \"$$(cat \"%s/home\")/junk\" ]; then echo there; else echo gone; fi"
             " >> \"%s\"; fi",
             mark, mark, seen);
    fake_emu_course(root, mark, "true", build_hook, check_hook);
    fake_batch_both_pass(d, root, "", "a test that leaves a file in its working folder");
    if (!file_has(seen, "gone\n") || file_has(seen, "there"))
        fail_msg("student b's build ran beside the file student a's test left (%s): %s", seen, file_text(seen));
    tree_remove(d);
}

/* A working folder that cannot be emptied (here student a's check made a
 * file in it immutable, as code that runs as root can) is a grader error
 * for student b's test, with exit status 1: b's test ran among a's leftovers
 * and failed on them, a zero that blamed b. Skipped where chattr +i cannot
 * be set (not root, or a file system without the flag). */
static void test_workdir_not_emptied(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], probe[PATH_MAX + 8], log[PATH_MAX + 16],
        csv[PATH_MAX + 16], what[PATH_MAX * 3], hook[PATH_MAX + 256];
    snprintf(d, sizeof d, "%s/workdir-not-emptied", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(probe, sizeof probe, "%s/probe", d);
    snprintf(log, sizeof log, "%s/grade.log", d);
    snprintf(csv, sizeof csv, "%s/grades.csv", d);
    tree_remove(d);
    int can = getuid() == 0 && sh("mkdir -p '%s' && touch '%s' && chattr +i '%s' 2>/dev/null", d, probe, probe) == 0;
    sh("chattr -i '%s' 2>/dev/null", probe);
    if (!can) {
        tree_remove(d);
        skip();
    }
    /* The check names each file it made immutable in the mark folder, for the clean-up. */
    snprintf(hook, sizeof hook,
             "if [ -e \"$HOME/planted\" ]; then v=FAIL; fi; touch \"$HOME/planted\"; "
             "echo \"$HOME/planted\" >> \"%s/planted\"; chattr +i \"$HOME/planted\"", mark);
    fake_emu_course(root, mark, "true", "true", hook);
    fake_batch_layout(d);
    snprintf(what, sizeof what, "--batch '%s/batch' --csv '%s' --lab 00", d, csv);
    int rc = fake_emu_grade(root, what, log);
    /* The run's folder (three levels above each file) could not be removed: now it can. */
    sh("while read -r p; do chattr -i \"$p\"; rm -rf \"$(dirname \"$(dirname \"$(dirname \"$p\")\")\")\"; done "
       "< '%s/planted'", mark);
    if (rc != 1 || !file_has(log, "could not empty the test's working folder"))
        fail_msg("student b's test among a's immutable leftovers: exit status %d, want 1 and a grader error (%s, %s):"
                 "\n%s\n%s", rc, log, csv, file_text(csv), file_text(log));
    tree_remove(d);
}

/* A lab whose private copy cannot be made is a grader error: no test runs,
 * and the exit status is 1. Here the base holds a file whose path is 4094
 * bytes, which fits there but not under the lab's copy ("lab-00" is two
 * bytes longer than "base"), so the copy refuses it. Before, each test said
 * "could not copy the course tree" and the run's exit status was 0. */
static void test_lab_copy_fails(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], ran[PATH_MAX + 16], script[PATH_MAX + 16],
        hook[PATH_MAX + 32];
    static char out[1 << 16];
    snprintf(d, sizeof d, "%s/lab-copy-fails", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(ran, sizeof ran, "%s/ran", mark);
    snprintf(script, sizeof script, "%s/deep.sh", d);
    tree_remove(d);
    /* Run in the base after its build: a file whose path there is 4094 bytes. */
    FILE *f = sh("mkdir -p '%s'", d) == 0 ? fopen(script, "w") : NULL;
    if (!f) fail_msg("could not write %s", script);
    fputs("set -e\np=$(pwd -P)\nn=$((4094 - ${#p} - 1))\nrel=deep\n"
          "while [ $((${#rel} + 211)) -lt $n ]; do rel=$rel/$(printf %0200d 0); done\n"
          "rel=$rel/$(printf %0$((n - ${#rel} - 1))d 0)\n"
          "mkdir -p \"$(dirname \"$p/$rel\")\"\n: > \"$p/$rel\"\n", f);
    fclose(f);
    snprintf(hook, sizeof hook, "sh \"%s\"", script);
    fake_emu_course(root, mark, hook, "true", "");
    int rc = fake_grade_sub(d, root, "", out, sizeof out);
    if (rc != 1 || !strstr(out, "could not copy the course tree into the lab's private copy") ||
        !strstr(out, "4096 bytes or more") || access(ran, F_OK) == 0)
        fail_msg("a lab whose copy fails: exit status %d, want 1, a grader error that says so, the entry named, and no "
                 "test run:\n%s", rc, out);
    tree_remove(d);
}

/* A check that exits 127 without a word was started: it is the student's
 * crash, not "the grader could not start the test program", which the
 * grader said from the exit code alone. */
static void test_exit_127_is_no_grader_error(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8];
    static char out[1 << 16];
    snprintf(d, sizeof d, "%s/exit-127", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    tree_remove(d);
    fake_emu_course(root, mark, "true", "true", "exit 127");
    int rc = fake_grade_sub(d, root, "", out, sizeof out);
    if (rc != 0 || !strstr(out, "the program ended (exit code 127) without the check's verdict") ||
        strstr(out, "could not start"))
        fail_msg("a check that exits 127: exit status %d, want 0 and the student's crash:\n%s", rc, out);
    tree_remove(d);
}

/* The --base-cache key's environment is hashed whole, however long: a
 * CUDA_HOME of 4100 bytes that differs only at its end is another entry (it
 * was cut at 4096 bytes of the key's text, and the two shared one). And a
 * PATH folder so long that a program's path in it does not fit 4096 bytes
 * is passed over, as execvp passes it: it was cut, and a file named by the
 * cut path ("gc" for "gcc") was taken for the compiler, making another key
 * for the same build. On a fake course, whose libraries build at once. */
static void test_base_cache_long_env(void **state) {
    (void)state;
    static char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], cache[PATH_MAX + 8], log[PATH_MAX + 16],
        home[8192], cmd[3 * 8192], deep[8192];
    snprintf(d, sizeof d, "%s/cache-long-env", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(cache, sizeof cache, "%s/cache", d);
    snprintf(log, sizeof log, "%s/grade.log", d);
    tree_remove(d);
    fake_emu_course(root, mark, "true", "true", "true");
    memset(home, 'h', 4100);
    home[0] = '/';
    home[4100] = '\0';
    const char *ends[] = {"A", "A", "B"}; /* built, reused, built: B is another environment */
    const char *want[] = {"building the course libraries", "course libraries for emu: reused from",
                          "building the course libraries"};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "CUDA_HOME='%s%s' '%s' --root '%s' --prepare --target emu --base-cache '%s' > '%s' 2>&1",
                 home, ends[k], GRADE_BIN, root, cache, log);
        if (sh("%s", cmd) != 0) fail_msg("grade --prepare with a CUDA_HOME of 4101 bytes failed (%s)", log);
        if (!file_has(log, want[k]))
            fail_msg("run %d, CUDA_HOME of 4100 bytes then '%s': no '%s' (%s):\n%s", k + 1, ends[k], want[k], log,
                     file_text(log));
    }
    /* A PATH folder of 4092 bytes holding "gc": "<it>/gcc" does not fit, "<it>/gc" does. */
    char top[PATH_MAX + 8];
    snprintf(top, sizeof top, "%s/p", d);
    long_dir(deep, sizeof deep, top, 4092, 'p');
    int dfd = open(deep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int f = dfd >= 0 ? openat(dfd, "gc", O_WRONLY | O_CREAT | O_CLOEXEC, 0755) : -1;
    if (f < 0) fail_msg("could not make gc in %.80s...", deep);
    close(f);
    close(dfd);
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "%s'%s' --root '%s' --prepare --target emu --base-cache '%s' > '%s' 2>&1",
                 k ? "PATH=\"$LONG:$PATH\" " : "", GRADE_BIN, root, cache, log);
        setenv("LONG", deep, 1);
        int rc = sh("%s", cmd);
        unsetenv("LONG");
        if (rc != 0 && k == 0) fail_msg("grade --prepare failed (%s)", log);
        if (k == 1 && !file_has(log, "course libraries for emu: reused from"))
            fail_msg("a PATH with a folder of 4092 bytes first did not find the same programs, and reused no entry "
                     "(%s):\n%s", log, file_text(log));
    }
    tree_remove(d);
}

/* CC, CXX and NVCC of the grader's environment never reach the build (the
 * Makefile sets its own, and they are not on the allow-list), so they make
 * no other --base-cache entry: they did, and a CI job that set CC for its
 * own tools built the same libraries again. The base's build says what it saw. */
static void test_base_cache_ignores_cc(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], saw[PATH_MAX + 16], log[PATH_MAX + 16],
        hook[PATH_MAX + 64];
    snprintf(d, sizeof d, "%s/cache-ignores-cc", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(saw, sizeof saw, "%s/saw", mark);
    snprintf(log, sizeof log, "%s/grade.log", d);
    tree_remove(d);
    snprintf(hook, sizeof hook, "env | grep -c \"^CC=\\|^CXX=\\|^NVCC=\" > \"%s\" || true", saw);
    fake_emu_course(root, mark, hook, "true", "true");
    const char *envs[] = {"CC=clang CXX=clang++ NVCC=/nowhere/nvcc ", ""};
    const char *want[] = {"building the course libraries", "course libraries for emu: reused from"};
    for (int k = 0; k < 2; k++) {
        if (sh("%s'%s' --root '%s' --prepare --target emu --base-cache '%s/cache' > '%s' 2>&1", envs[k], GRADE_BIN,
               root, d, log) != 0)
            fail_msg("grade --prepare %s failed (%s):\n%s", envs[k], log, file_text(log));
        if (!file_has(log, want[k]))
            fail_msg("grade --prepare %s: no '%s' (%s):\n%s", envs[k], want[k], log, file_text(log));
    }
    if (!file_has(saw, "0\n")) fail_msg("the base's build saw CC, CXX or NVCC: %s", file_text(saw));
    tree_remove(d);
}

/* Every variable of the allow-list reaches a child, however many: a fixed
 * room of 64 dropped those past 48 without a word (a Slurm job has about a
 * hundred SLURM_* variables, srun as --mpirun needs them). The base's build,
 * a child like the tests, counts them. */
static void test_child_env_all_kept(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], log[PATH_MAX + 16], hook[PATH_MAX + 64],
        count[PATH_MAX + 16];
    snprintf(d, sizeof d, "%s/child-env", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(log, sizeof log, "%s/grade.log", d);
    snprintf(count, sizeof count, "%s/count", mark);
    snprintf(hook, sizeof hook, "env | grep -c ^SLURM_TEST_ > \"%s\"", count);
    fake_emu_course(root, mark, hook, "true", "true");
    static char vars[100 * 32];
    vars[0] = '\0';
    for (int k = 0; k < 100; k++) snprintf(vars + strlen(vars), sizeof vars - strlen(vars), "SLURM_TEST_%d=%d ", k, k);
    if (sh("env %s '%s' --root '%s' --prepare --target emu --base-cache '%s/cache' > '%s' 2>&1", vars, GRADE_BIN, root,
           d, log) != 0)
        fail_msg("grade --prepare failed (%s)", log);
    if (!file_has(count, "100\n"))
        fail_msg("the build saw %s of the 100 SLURM_TEST_* variables of the grader's environment (%s)", file_text(count),
                 log);
    tree_remove(d);
}

/* --gpu-build with a CUDA_HOME too long for its toolkit's paths says so,
 * and what to do, instead of looking for the headers at a cut path (that
 * could be another file). A --src that is not there ends the run before
 * any build, whether or not nvcc is on PATH here. */
static void test_gpu_build_long_cuda_home(void **state) {
    (void)state;
    static char home[4200], log[PATH_MAX + 16], args[PATH_MAX * 2];
    memset(home, 'c', 4100);
    home[0] = '/';
    home[4100] = '\0';
    snprintf(log, sizeof log, "%s/long-cuda-home.log", tmp);
    snprintf(args, sizeof args, "--src '%s/no-such-folder' --lab 00 --gpu-build", tmp);
    setenv("CUDA_HOME", home, 1);
    int rc = grade_args(args, log);
    unsetenv("CUDA_HOME");
    const char *out = file_text(log);
    if (rc != 2 || !strstr(out, "grade: cannot look for the CUDA toolkit's headers at /ccc") ||
        !strstr(out, "give CUDA_HOME a shorter path"))
        fail_msg("--gpu-build with a CUDA_HOME of 4100 bytes (and no --src): exit status %d, want 2 and a message "
                 "that says the path is too long (%s):\n%s", rc, log, out);
}

/* On --target cuda, a lab whose every check skipped itself for want of a
 * device is no grade: the grader says that no GPU was visible and what to do,
 * and exits 1, instead of a quiet 0 of 5 with status 0. A batch marks such a
 * student not graded (no points) and exits 1; on a machine that shows no GPU
 * it stops there, leaving the old CSV and the rows so far in CSV.partial,
 * since every later student would get the same. A check that runs (here:
 * the student file says "device") is graded as before. */
static void test_no_device_fails_loudly(void **state) {
    (void)state;
    char d[PATH_MAX], root[PATH_MAX + 8], log[PATH_MAX + 16], json[PATH_MAX + 16], csv[PATH_MAX + 16];
    snprintf(d, sizeof d, "%s/nodev", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(log, sizeof log, "%s/one.log", d);
    snprintf(json, sizeof json, "%s/one.json", d);
    fake_cuda_course(root);
    if (sh("set -e; d='%s'; mkdir -p \"$d/none\" \"$d/gpu\" \"$d/batch/a-gpu\" \"$d/batch/b-none\" \"$d/batch/c-gpu\";"
           " echo 'my code' > \"$d/none/fake.cu\"; echo 'device' > \"$d/gpu/fake.cu\";"
           " cp \"$d/gpu/fake.cu\" \"$d/batch/a-gpu/\"; cp \"$d/none/fake.cu\" \"$d/batch/b-none/\";"
           " cp \"$d/gpu/fake.cu\" \"$d/batch/c-gpu/\"; printf 'old data\\n' > \"$d/old.csv\"",
           d) != 0)
        fail_msg("could not lay out %s", d);
#define FAKE_GRADE(what, out) \
    sh("timeout -k 10 300 '%s' --root '%s' %s --target cuda --jobs 2 > '%s' 2>&1", GRADE_BIN, root, what, out)
    char what[PATH_MAX * 3];
    snprintf(what, sizeof what, "--src '%s/none' --lab 00 --json '%s'", d, json);
    int rc = FAKE_GRADE(what, log);
    const char *out = file_text(log);
    if (rc != 1) fail_msg("--target cuda with every check skipped: exit status %d, want 1 (%s):\n%s", rc, log, out);
    if (!strstr(out, "grade: ERROR: no GPU was visible to the checks: every check of 00-fake skipped itself") ||
        !strstr(out, "Grade the numerics with --target emu (the CPU emulator), or run on a GPU node"))
        fail_msg("the grader does not say that no GPU was visible, and what to do (%s):\n%s", log, out);
    json_t *res = json_load_file(json, 0, NULL);
    const char *summary = res ? json_string_value(json_object_get(res, "output")) : NULL;
    int said = summary && strstr(summary, "ERROR: no GPU was visible to the checks");
    json_decref(res);
    if (!said) fail_msg("results.json's output does not say that no GPU was visible (%s)", json);

    /* A machine with a device: graded as before, exit status 0. */
    snprintf(what, sizeof what, "--src '%s/gpu' --lab 00 --json '%s'", d, json);
    rc = FAKE_GRADE(what, log);
    if (rc != 0 || json_load_score(json) != 5.0 || file_has(log, "no GPU was visible"))
        fail_msg("checks that ran on --target cuda: exit status %d, score %g; want 0 and 5 of 5 (%s)", rc,
                 json_load_score(json), log);

    /* A batch: b-none is not graded. Where the machine shows no GPU the batch stops after it. */
    int sight = sh("nvidia-smi -L 2>/dev/null | grep -q '^GPU' || ls /dev/nvidia[0-9]* /dev/dxg >/dev/null 2>&1") == 0;
    snprintf(log, sizeof log, "%s/batch.log", d);
    snprintf(csv, sizeof csv, "%s/old.csv", d);
    snprintf(what, sizeof what, "--batch '%s/batch' --csv '%s' --lab 00", d, csv);
    rc = FAKE_GRADE(what, log);
    static char batch_out[1 << 16]; /* file_text's buffer is reused for the CSV below */
    snprintf(batch_out, sizeof batch_out, "%s", file_text(log));
    out = batch_out;
    if (rc != 1) fail_msg("a batch with a student whose checks all skipped: exit status %d, want 1 (%s)", rc, log);
    if (!strstr(out, "b-none                   not graded: no GPU was visible to the checks (every check of 00-fake "
                     "skipped itself)"))
        fail_msg("the batch does not say that b-none was not graded, and why (%s):\n%s", log, out);
    const char *a = "\"a-gpu\",5.00,5.00,5.00,\"\"\n\"b-none\",,,,\"not graded: no GPU was visible to the checks";
    if (!sight) {
        if (strcmp(file_text(csv), "old data\n")) fail_msg("the stopped batch changed the CSV (%s)", log);
        snprintf(csv, sizeof csv, "%s/old.csv.partial", d);
        if (!strstr(file_text(csv), a) || strstr(file_text(csv), "c-gpu") ||
            !strstr(out, "stopped the batch after 2 submission(s): no GPU was visible to the checks"))
            fail_msg("the batch should stop after b-none, with a's and b's rows in %s (%s):\n%s", csv, log, file_text(csv));
    } else if (!strstr(file_text(csv), a) || !strstr(file_text(csv), "\"c-gpu\",5.00,5.00,5.00,\"\"\n")) {
        fail_msg("on a machine that shows a GPU the batch should grade every student (%s):\n%s", log, file_text(csv));
    }
    /* --parallel 2 the same, but for c-gpu: it may start when a-gpu is done, before b-none is. */
    snprintf(log, sizeof log, "%s/parallel.log", d);
    snprintf(csv, sizeof csv, "%s/parallel.csv", d);
    snprintf(what, sizeof what, "--batch '%s/batch' --csv '%s' --lab 00 --parallel 2", d, csv);
    rc = FAKE_GRADE(what, log);
    if (!sight) snprintf(csv, sizeof csv, "%s/parallel.csv.partial", d);
    if (rc != 1 || !strstr(file_text(csv), a) || (!sight && !file_has(log, "stopped the batch after")))
        fail_msg("--parallel 2: exit status %d, want 1, with a's and b's rows in %s%s (%s)", rc, csv,
                 sight ? "" : " and the batch stopped", log);
#undef FAKE_GRADE
}

/* ---- stopping the grader: SIGTERM, SIGINT, SIGHUP, SIGKILL ------------------------------ */

/* How many processes other than this one have a command line (NULs read as
 * spaces) holding needle and, when given, also; their pids in out. */
static int procs_with(const char *needle, const char *also, pid_t *out, int max) {
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid()) continue;
        char path[64], buf[8192];
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < len; i++)
            if (!buf[i]) buf[i] = ' ';
        buf[len] = '\0';
        if (strstr(buf, needle) && (!also || strstr(buf, also))) {
            if (n < max) out[n] = (pid_t)pid;
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Wait up to 30 s for the grader g to end (its status in *status); 1 when it
 * did, else 0, with g killed and reaped so that no later test finds it. */
static int grader_ended(pid_t g, int *status) {
    for (int i = 0; i < 300; i++) {
        if (waitpid(g, status, WNOHANG) == g) return 1;
        usleep(100000);
    }
    kill(g, SIGKILL);
    waitpid(g, status, 0);
    return 0;
}

/* The parent's pid of a process (-1 when it is gone). */
static pid_t parent_of_pid(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* "pid (name) state ppid ...": the name may hold spaces */
    char state;
    int ppid;
    return p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 ? (pid_t)ppid : -1;
}

/* Start the grader as a shell starts a job in the foreground (signals at
 * their defaults, none blocked): sh -c cmd, where cmd execs it, with TMPDIR
 * set to tdir. Its pid. */
static pid_t start_grader(const char *cmd, const char *tdir) {
    pid_t g = fork();
    if (g < 0) fail_msg("fork failed");
    if (g == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setenv("TMPDIR", tdir, 1);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return g;
}

/* The --parallel worker of the grader g that runs a check program of this
 * run (a command line holding tdir and /graded/check): its pid, or -1 when
 * none runs. */
static pid_t worker_of_check(pid_t g, const char *tdir) {
    pid_t chk[8];
    if (procs_with(tdir, "/graded/check --seed", chk, 8) <= 0) return -1;
    pid_t w = parent_of_pid(chk[0]);
    return w > 0 && w != g && parent_of_pid(w) == g ? w : -1;
}

/* Wait up to tries tenths of a second for ready(arg) to hold while a
 * --parallel worker of the grader g runs a check of this run (tdir): that
 * worker's pid. Fails the test, with the grader killed and reaped, when the
 * grader ends first or the time runs out; what names the test awaited, log
 * the grader's output. */
static pid_t await_worker(pid_t g, const char *tdir, int (*ready)(const void *), const void *arg, int tries,
                          const char *what, const char *log) {
    int status = 0;
    for (int i = 0; i < tries; i++) {
        if (waitpid(g, &status, WNOHANG) == g) fail_msg("the grader ended before %s ran (%s)", what, log);
        pid_t w = ready(arg) ? worker_of_check(g, tdir) : -1;
        if (w > 0) return w;
        usleep(100000);
    }
    kill(g, SIGKILL);
    waitpid(g, &status, 0);
    fail_msg("%s never ran under a worker of the grader (%s)", what, log);
    return -1;
}

/* Wait up to 5 s for every process whose command line holds needle (and
 * also, when given) to go. Those still there are killed, so that no later
 * test finds them; returns how many, the first's pid in *first. */
static int left_running(const char *needle, const char *also, pid_t *first) {
    pid_t pids[64];
    int left = 0;
    for (int i = 0; i < 50 && (left = procs_with(needle, also, pids, 64)) > 0; i++) usleep(100000);
    for (int i = 0; i < left && i < 64; i++) kill(pids[i], SIGKILL);
    if (left) *first = pids[0];
    return left;
}

/* A grader with --run-as killed outright (SIGKILL runs no handler) while
 * its test runs: the test's own process dies with it (PR_SET_PDEATHSIG),
 * and the grader's watchman ends what that process had started (here a
 * sleeper in a session of its own, as the --run-as user) and removes the
 * temp folder, and says so. Before, the sleeper ran on and the folder
 * stayed, and the next grader refused the user for the sleeper. */
static void test_sigkill_run_as_watchman(void **state) {
    (void)state;
    if (getuid() != 0 || !getpwnam("nobody")) skip();
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], tdir[PATH_MAX + 8], log[PATH_MAX + 16],
        cmd[PATH_MAX * 4];
    snprintf(d, sizeof d, "%s/watchman", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(tdir, sizeof tdir, "%s/tmp", d);
    snprintf(log, sizeof log, "%s/grade.log", d);
    tree_remove(d);
    fake_emu_course(root, mark, "true", "true", "setsid sleep 3131 & while :; do sleep 1; done");
    if (sh("mkdir -p '%s/sub' '%s' && echo mine > '%s/sub/fake.cu'", d, tdir, d) != 0) fail_msg("could not lay out %s", d);
    snprintf(cmd, sizeof cmd, "exec '%s' --root '%s' --src '%s/sub' --lab 00 --target emu --jobs 2 --run-as nobody > '%s' 2>&1",
             GRADE_BIN, root, d, log);
    pid_t g = start_grader(cmd, tdir), pids[8];
    int status = 0, running = 0;
    for (int i = 0; i < 1200 && !running; i++) {
        if (waitpid(g, &status, WNOHANG) == g) fail_msg("the grader ended before the test ran (%s)", log);
        running = procs_with("sleep 3131", NULL, pids, 8) > 0;
        if (!running) usleep(100000);
    }
    kill(g, SIGKILL);
    waitpid(g, &status, 0);
    if (!running) fail_msg("the test's sleeper never started (%s)", log);
    pid_t first = 0;
    int left = left_running("sleep 3131", NULL, &first), tmp_left = 1;
    for (int i = 0; i < 50 && tmp_left; i++) {
        tmp_left = sh("test -z \"$(ls -A '%s')\"", tdir) != 0;
        if (tmp_left) usleep(100000);
    }
    if (left) fail_msg("what the test started still runs after the grader was killed, e.g. pid %d (%s)", (int)first, log);
    if (tmp_left) fail_msg("the killed grader's temp folder is left in %s (%s)", tdir, log);
    if (!file_has(log, "was killed before it could clean up; ended every process of the --run-as user and removed"))
        fail_msg("the watchman did not say what it did (%s):\n%s", log, file_text(log));
    tree_remove(d);
}

/* await_worker's condition: the sleeper the test starts runs. */
static int sleeper_runs(const void *arg) {
    (void)arg;
    pid_t pids[8];
    return procs_with("sleep 3133", NULL, pids, 8) > 0;
}

/* --parallel with --run-as: a worker killed outright while its test runs.
 * The test's own process dies with the worker, and the grader ends what that
 * process had started (a sleeper in a session of its own, as the slot's
 * user) as soon as it sees the worker gone: the next student of that slot
 * must not run beside it. Before, the sleeper outlived the whole batch. */
static void test_parallel_run_as_worker_killed(void **state) {
    (void)state;
    struct passwd *pw2 = getuid() == 0 && getpwnam("nobody") ? getpwnam("daemon") : NULL;
    if (!pw2 || pw2->pw_uid == 0) skip();
    char d[PATH_MAX], root[PATH_MAX + 8], mark[PATH_MAX + 8], tdir[PATH_MAX + 8], log[PATH_MAX + 16],
        cmd[PATH_MAX * 4];
    snprintf(d, sizeof d, "%s/worker-killed-run-as", tmp);
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(mark, sizeof mark, "%s/mark", d);
    snprintf(tdir, sizeof tdir, "%s/tmp", d);
    snprintf(log, sizeof log, "%s/grade.log", d);
    tree_remove(d);
    fake_emu_course(root, mark, "true", "true", "setsid sleep 3133 & while :; do sleep 1; done");
    if (sh("mkdir -p '%s/batch/a' '%s' && echo mine > '%s/batch/a/fake.cu'", d, tdir, d) != 0)
        fail_msg("could not lay out %s", d);
    snprintf(cmd, sizeof cmd, "exec '%s' --root '%s' --batch '%s/batch' --csv '%s/g.csv' --lab 00 --target emu --jobs 2"
             " --parallel 2 --run-as nobody,%s > '%s' 2>&1", GRADE_BIN, root, d, d, pw2->pw_name, log);
    pid_t g = start_grader(cmd, tdir);
    pid_t worker = await_worker(g, tdir, sleeper_runs, NULL, 1200, "the test", log);
    int status = 0;
    kill(worker, SIGKILL);
    int ended = grader_ended(g, &status);
    pid_t first = 0;
    if (left_running("sleep 3133", NULL, &first))
        fail_msg("what the dead worker's test started still runs, e.g. pid %d (%s)", (int)first, log);
    if (!ended || !WIFEXITED(status) || WEXITSTATUS(status) != 1)
        fail_msg("the grader %s; want exit status 1, a student not graded (%s)", ended ? "ended otherwise" : "did not end",
                 log);
    tree_remove(d);
}

typedef struct {
    const char *name;
    int sig;
    int batch; /* grade a batch: a finished student, then the one that hangs (2: --parallel 2) */
} stop_case_t;

static const stop_case_t stop_cases[] = {
    {"test_stop_sigterm_batch", SIGTERM, 1},
    {"test_stop_sigterm_parallel_batch", SIGTERM, 2},
    {"test_stop_sigint", SIGINT, 0},
    {"test_stop_sighup", SIGHUP, 0},
    {"test_stop_sigkill", SIGKILL, 0},
};

/* Grade lab 00's infinite_loop case, stop the grader with a signal while its
 * test spins (in a session of its own), and check that nothing the grader
 * started is left running and, unless it was SIGKILL (where only the child's
 * parent-death signal can act), that the temp folder is gone and the exit
 * status is 128 + the signal. A stopped batch leaves the old CSV alone and
 * the finished student's row in CSV.partial. */
static void test_stop(void **state) {
    const stop_case_t *c = *state;
    char d[PATH_MAX], tdir[PATH_MAX + 8], log[PATH_MAX + 8], cmd[PATH_MAX * 4];
    snprintf(d, sizeof d, "%s/stop-%d", tmp, c->sig);
    snprintf(tdir, sizeof tdir, "%s/tmp", d);
    snprintf(log, sizeof log, "%s/grade.log", d);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d/tmp\" \"$d/sub/b/00-hello\" \"$d/sub/a/00-hello\";"
           " cp '%s/solutions/00-hello/vector_add.cu' \"$d/sub/a/00-hello/\"; cp \"$d/sub/a/00-hello/vector_add.cu\" \"$d/sub/b/00-hello/\";"
           " patch -s \"$d/sub/b/00-hello/vector_add.cu\" < '%s/autograder/wrong/00-hello/infinite_loop/vector_add.cu.patch';"
           " printf 'old data\\n' > \"$d/old.csv\"",
           d, GRADE_ROOT, GRADE_ROOT) != 0)
        fail_msg("could not lay out %s", d);
    if (c->batch)
        snprintf(cmd, sizeof cmd, "exec '%s' --root '%s' --batch '%s/sub' --csv '%s/old.csv' --lab 00 --only test_single_element"
                                  " --only test_large --timeout 300 --target emu --jobs 2 %s %s > '%s' 2>&1",
                 GRADE_BIN, GRADE_ROOT, d, d, c->batch == 2 ? "--parallel 2" : "", cache_flag, log);
    else
        snprintf(cmd, sizeof cmd, "exec '%s' --root '%s' --src '%s/sub/b' --lab 00 --only test_large --timeout 300"
                                  " --target emu --jobs 2 %s > '%s' 2>&1",
                 GRADE_BIN, GRADE_ROOT, d, cache_flag, log);
    pid_t g = start_grader(cmd, tdir);
    /* Wait for the spinning test: the graded check program of this run (make's
     * command line names it too, without --seed), and in a batch student b's. */
    pid_t pids[64];
    int status = 0, running = 0;
    for (int i = 0; i < 3000 && !running; i++) {
        if (waitpid(g, &status, WNOHANG) == g) fail_msg("the grader ended before the test ran (%s)", log);
        char partial[PATH_MAX + 32];
        snprintf(partial, sizeof partial, "%s/old.csv.partial", d);
        running = procs_with(tdir, "/graded/check --seed", pids, 64) > 0 &&
                  (!c->batch || strstr(file_text(log), "grade: student b")) &&
                  (c->batch != 2 || strstr(file_text(partial), "\"a\","));
        if (!running) usleep(100000);
    }
    if (!running) {
        kill(g, SIGKILL);
        waitpid(g, &status, 0);
        fail_msg("the test never started (%s)", log);
    }
    usleep(300000);
    kill(g, c->sig);
    int ended = grader_ended(g, &status);
    /* SIGKILL'd processes take a moment to go. Its own processes (a
     * --parallel worker is one) run with its command line. */
    char sub[PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s/sub", d);
    pid_t first = 0, other = 0;
    int left = left_running(tdir, NULL, &first) + left_running(sub, GRADE_BIN, &other);
    if (!first) first = other;
    if (left) fail_msg("%d process(es) of the stopped grader still run, e.g. pid %d (%s)", left, (int)first, log);
    if (!ended) fail_msg("the grader did not end within 30 s of the signal (%s)", log);
    if (c->sig == SIGKILL) {
        sh("rm -rf '%s'", tdir);
        return;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 128 + c->sig)
        fail_msg("after signal %d the grader %s %d; want exit status %d (%s)", c->sig,
                 WIFEXITED(status) ? "exited with" : "died of signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                 128 + c->sig, log);
    if (sh("test -z \"$(ls -A '%s')\"", tdir) != 0) fail_msg("the grader's temp folder is left in %s", tdir);
    if (!strstr(file_text(log), "killed the processes it started")) fail_msg("the grader did not say it stopped (%s)", log);
    if (c->batch) {
        char csv[PATH_MAX + 32];
        snprintf(csv, sizeof csv, "%s/old.csv", d);
        if (strcmp(file_text(csv), "old data\n")) fail_msg("the stopped batch changed the CSV to '%s'", file_text(csv));
        snprintf(csv, sizeof csv, "%s/old.csv.partial", d);
        if (!strstr(file_text(csv), "\"a\",5.00,5.00,5.00,\"\"\n"))
            fail_msg("the finished student's row is not in %s: '%s'", csv, file_text(csv));
        if (!strstr(file_text(log), "the rows graded so far are in")) fail_msg("the batch did not say where its rows are (%s)", log);
    }
}

/* ---- --batch --parallel ---------------------------------------------------------------- */

/* --parallel 3 grades the same batch as one at a time does: the same CSV,
 * byte for byte (rows in name order, whichever student finished first), the
 * same results.json scores, and each student's messages under its name. */
static void test_batch_parallel(void **state) {
    (void)state;
    char d[PATH_MAX], log[PATH_MAX + 16], args[PATH_MAX * 3], a[PATH_MAX + 16], b[PATH_MAX + 16];
    snprintf(d, sizeof d, "%s/batch-parallel", tmp);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d/in/alice/00-hello\" \"$d/in/bob\" \"$d/in/carol/labs/00-hello\";"
           " cp '%s/solutions/00-hello/vector_add.cu' \"$d/in/alice/00-hello/\";"
           " cp '%s/solutions/00-hello/vector_add.cu' \"$d/in/bob/\";"
           " patch -s \"$d/in/bob/vector_add.cu\" < '%s/autograder/wrong/00-hello/zeros/vector_add.cu.patch';"
           " cp '%s/labs/00-hello/vector_add.cu' \"$d/in/carol/labs/00-hello/\"",
           d, GRADE_ROOT, GRADE_ROOT, GRADE_ROOT, GRADE_ROOT) != 0)
        fail_msg("could not lay out %s", d);
    const char *how[2] = {"", "--parallel 3"};
    for (int k = 0; k < 2; k++) {
        snprintf(log, sizeof log, "%s/run%d.log", d, k);
        snprintf(args, sizeof args, "--batch '%s/in' --csv '%s/run%d.csv' --json '%s/json%d' --lab 00 --seed 7 %s", d, d, k,
                 d, k, how[k]);
        int rc = grade_args(args, log);
        if (rc != 0) fail_msg("grade %s exited %d (%s)", args, rc, log);
    }
    snprintf(a, sizeof a, "%s/run0.csv", d);
    snprintf(b, sizeof b, "%s/run1.csv", d);
    char serial[4096];
    snprintf(serial, sizeof serial, "%s", file_text(a));
    if (!strstr(serial, "\"alice\",10.00,10.00,10.00,\"\"\n\"bob\",0.00,0.00,10.00,\"\"\n\"carol\",0.00,0.00,10.00,\"unchanged from the starter\"\n"))
        fail_msg("the batch graded one at a time wrote '%s'", serial);
    if (strcmp(serial, file_text(b))) fail_msg("--parallel 3 wrote '%s'; one at a time wrote '%s'", file_text(b), serial);
    const char *names[3] = {"alice", "bob", "carol"};
    for (int i = 0; i < 3; i++) {
        json_t *r[2];
        for (int k = 0; k < 2; k++) {
            snprintf(a, sizeof a, "%s/json%d/%s.json", d, k, names[i]);
            r[k] = json_load_file(a, 0, NULL);
            if (!r[k]) fail_msg("no results.json for %s (%s)", names[i], a);
        }
        double s0 = json_number_value(json_object_get(r[0], "score")), s1 = json_number_value(json_object_get(r[1], "score"));
        size_t n0 = json_array_size(json_object_get(r[0], "tests")), n1 = json_array_size(json_object_get(r[1], "tests"));
        json_decref(r[0]);
        json_decref(r[1]);
        if (s0 != s1 || n0 != n1 || n0 == 0)
            fail_msg("%s: --parallel scored %g over %zu tests, one at a time %g over %zu", names[i], s1, n1, s0, n0);
    }
    snprintf(log, sizeof log, "%s/run1.log", d);
    /* carol's starter: the warning that only starters were graded, under her name. */
    if (!file_has(log, "grade: carol: lab 00-hello ...") || !file_has(log, "grade: bob: lab 00-hello ..."))
        fail_msg("--parallel did not show each student's messages under its name (%s)", log);
    /* Really at once: all three started before the first was done. */
    const char *txt = file_text(log), *started = strstr(txt, "grade: student carol\n"), *done = strstr(txt, " points\n");
    if (!started || !done || started > done) fail_msg("--parallel 3 did not start all three students at once (%s)", log);
    snprintf(a, sizeof a, "%s/run1.csv.partial", d);
    if (access(a, F_OK) == 0) fail_msg("%s is left behind", a);
}

/* await_worker's condition: student a's row is in the CSV being written (arg). */
static int a_row_written(const void *arg) {
    return strstr(file_text(arg), "\"a\",") != NULL;
}

/* With --parallel, a worker that dies (here SIGKILL, as the OOM killer
 * would) costs its student's grade only: the grader says which student was
 * not graded and how to grade it alone, and its row says so, with no
 * points; the others are graded and written, its test goes with it, and the
 * exit status is 1 (not everything graded). */
static void test_batch_parallel_worker_killed(void **state) {
    (void)state;
    char d[PATH_MAX], log[PATH_MAX + 16], csv[PATH_MAX + 16], cmd[PATH_MAX * 4];
    snprintf(d, sizeof d, "%s/batch-worker-killed", tmp);
    snprintf(log, sizeof log, "%s/grade.log", d);
    snprintf(csv, sizeof csv, "%s/scores.csv", d);
    if (sh("set -e; d='%s'; rm -rf \"$d\"; mkdir -p \"$d/sub/a/00-hello\" \"$d/sub/b/00-hello\";"
           " cp '%s/solutions/00-hello/vector_add.cu' \"$d/sub/a/00-hello/\"; cp \"$d/sub/a/00-hello/vector_add.cu\" \"$d/sub/b/00-hello/\";"
           " patch -s \"$d/sub/b/00-hello/vector_add.cu\" < '%s/autograder/wrong/00-hello/infinite_loop/vector_add.cu.patch'",
           d, GRADE_ROOT, GRADE_ROOT) != 0)
        fail_msg("could not lay out %s", d);
    snprintf(cmd, sizeof cmd, "exec '%s' --root '%s' --batch '%s/sub' --csv '%s' --lab 00 --only test_large --timeout 300"
                              " --parallel 2 --target emu --jobs 2 %s > '%s' 2>&1",
             GRADE_BIN, GRADE_ROOT, d, csv, cache_flag, log);
    char tdir[PATH_MAX + 8];
    snprintf(tdir, sizeof tdir, "%s/tmp", d);
    if (mkdir(tdir, 0755) != 0) fail_msg("could not create %s", tdir);
    pid_t g = start_grader(cmd, tdir);
    /* b's spinning check: a's row is in by then or soon; its parent is b's worker. */
    char partial[PATH_MAX + 32];
    snprintf(partial, sizeof partial, "%s.partial", csv);
    pid_t worker = await_worker(g, tdir, a_row_written, partial, 3000, "b's test (after a's row)", log);
    int status = 0;
    kill(worker, SIGKILL);
    if (!grader_ended(g, &status)) fail_msg("the grader did not end within 30 s of its worker's death (%s)", log);
    pid_t first = 0;
    if (left_running(tdir, "/graded/check", &first)) fail_msg("b's test (pid %d) outlived its worker", (int)first);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
        fail_msg("the grader ended with status %d (signal %d); want 1: a student was not graded (%s)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0, log);
    if (!file_has(log, "grade: student b was not graded: its worker process was killed by signal 9") ||
        !file_has(log, "Grade it alone: grade --src"))
        fail_msg("the grader did not say that b was not graded, and how to grade it (%s)", log);
    /* b's row says it was not graded, with no points (an empty field, not a 0 to take for a grade). */
    if (strcmp(file_text(csv), "student,lab 00,total,max,notes\n\"a\",3.00,3.00,3.00,\"\"\n\"b\",,,,\"not graded: its worker "
                               "process was killed by signal 9; grade it alone with --src\"\n"))
        fail_msg("the CSV should hold a's row and b's not graded: '%s'", file_text(csv));
}

/* ---- a lab on several MPI ranks: autograder/tests/mpi-lab ----------------------------
 *
 * No course lab runs under mpirun yet, so the fixture brings one: lab 90, a
 * ring all-reduce on 4 ranks (and one test on 2), with a solution, a starter
 * and wrong submissions that break one rank or the channel. The grader grades
 * a copy of this tree with the fixture laid over it (--root). */

static char mpi_root[PATH_MAX];

/* The fixture course, made once; skips visibly where Open MPI is missing. */
static void mpi_fixture(void) {
    if (sh("command -v mpirun >/dev/null 2>&1") != 0) {
        print_message("mpirun is missing (sudo apt-get install -y openmpi-bin): skipped\n");
        skip();
    }
    if (mpi_root[0]) return;
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s/mpi-root", tmp);
    if (sh("set -e; mkdir -p '%s'; cd '%s'; tar --exclude=./build --exclude=./.git -cf - . | tar -C '%s' -xf -;"
           " cp -R autograder/tests/mpi-lab/labs autograder/tests/mpi-lab/solutions autograder/tests/mpi-lab/autograder '%s'/",
           root, GRADE_ROOT, root, root) != 0)
        fail_msg("could not lay out the MPI fixture course in %s", root);
    snprintf(mpi_root, sizeof mpi_root, "%s", root);
}

/* Grade src (a folder of lab 90's files, or --batch's) in the fixture; the grader's exit status. */
static int grade_mpi(const char *what, const char *extra, const char *json, const char *log) {
    return sh("timeout -k 10 600 '%s' --root '%s' %s --lab 90 --target emu --jobs 2 --timeout 5 %s --json '%s' %s > '%s' 2>&1",
              GRADE_BIN, mpi_root, what, cache_flag, json, extra, log);
}

/* Grade lab 90's solution with these extra flags; its results.json (the
 * caller frees it), or a failed test. name tags the files in tmp. */
static json_t *grade_mpi_solution(const char *name, const char *extra, char *log, size_t loglen) {
    mpi_fixture();
    char what[PATH_MAX + 16], json[PATH_MAX];
    snprintf(what, sizeof what, "--src '%s/solutions'", mpi_root);
    snprintf(json, sizeof json, "%s/mpi-%s.json", tmp, name);
    snprintf(log, loglen, "%s/mpi-%s.log", tmp, name);
    if (grade_mpi(what, extra, json, log) != 0) fail_msg("grader failed (%s)", log);
    json_t *res = json_load_file(json, 0, NULL);
    if (!res) fail_msg("no results.json (%s)", json);
    return res;
}

/* The four tests of rubric 90, as results.json names them. */
static const char *const mpi_tests[4] = {"lab 90: one element", "lab 90: uneven shards", "lab 90: 100003 elements",
                                         "lab 90: one element, on 2 ranks"};

/* The output results.json shows for a test ("" when none). */
static const char *output_of(json_t *res, const char *name) {
    json_t *t;
    size_t i;
    json_array_foreach(json_object_get(res, "tests"), i, t) {
        const char *nm = json_string_value(json_object_get(t, "name"));
        if (nm && !strcmp(nm, name)) {
            const char *o = json_string_value(json_object_get(t, "output"));
            return o ? o : "";
        }
    }
    return "";
}

/* The solution passes on every rank (also as an unprivileged user when run
 * as root); the starter is "not started" everywhere, not crashed or wrong. */
static void test_mpi_solution_and_starter(void **state) {
    (void)state;
    mpi_fixture();
    char what[PATH_MAX + 16], json[PATH_MAX], log[PATH_MAX];
    const char *runs[][2] = {{"solutions", ""}, {"labs", ""}, {"solutions", "--run-as nobody"}};
    for (int k = 0; k < 3; k++) {
        if (runs[k][1][0] && (getuid() != 0 || !getpwnam("nobody"))) continue;
        snprintf(what, sizeof what, "--src '%s/%s'", mpi_root, runs[k][0]);
        snprintf(json, sizeof json, "%s/mpi-%d.json", tmp, k);
        snprintf(log, sizeof log, "%s/mpi-%d.log", tmp, k);
        if (grade_mpi(what, runs[k][1], json, log) != 0) fail_msg("grader failed on lab 90's %s (%s)", runs[k][0], log);
        json_t *res = json_load_file(json, 0, NULL);
        if (!res) fail_msg("no results.json (%s)", json);
        for (int i = 0; i < 4; i++) {
            double max, sc = score_of(res, mpi_tests[i], &max);
            if (!(max > 0)) fail_msg("%s: no test '%s' in results.json", runs[k][0], mpi_tests[i]);
            int solution = !strcmp(runs[k][0], "solutions");
            if (solution && sc != max)
                fail_msg("lab 90 solution %s: '%s' scored %g of %g (%s)", runs[k][1], mpi_tests[i], sc, max, log);
            if (!solution && (sc != 0 || strncmp(output_of(res, mpi_tests[i]), "not started", 11)))
                fail_msg("lab 90 starter: '%s' scored %g, output '%.80s'; want 0, not started", mpi_tests[i], sc,
                         output_of(res, mpi_tests[i]));
        }
        /* On the emulator the speed test is left out, whatever the checks did. */
        if (strncmp(output_of(res, "lab 90: speed, 4M floats"), "needs GPU", 9))
            fail_msg("lab 90 %s: the speed test says '%.80s'", runs[k][0], output_of(res, "lab 90: speed, 4M floats"));
        json_decref(res);
    }
}

/* A wrong submission of lab 90: the points of each test (in mpi_tests'
 * order) and what the first test it loses must say. */
typedef struct {
    const char *name;
    double score[4];
    const char *says;
    const char *also_says; /* NULL, or more words the same message must hold */
} mpi_case_t;

static const mpi_case_t mpi_cases[] = {
    /* Only rank 2 is wrong: the 4-rank tests name it; the 2-rank test has no rank 2. */
    {"wrong_on_rank_2", {0, 0, 0, 1}, "rank 2 of 4: n = 1: x[0] = ", NULL},
    /* Rank 1 dies in the large test, where no handler can send a verdict. */
    {"killed_on_rank_1", {1, 2, 0, 1}, "rank 1 of 4 ended without a verdict: it exited on signal 9", NULL},
    /* A cycle of blocking receives in the uneven test: a timeout, stopped by the communicator's
     * watchdog (COMM_TIMEOUT), whose lines name each waiting rank's call. */
    {"deadlock", {1, 0, 2, 1}, "deadlock: the ranks waited for each other for ", " in comm_recv from rank "},
    /* Receives as many as it sends where the shards differ: the communicator ends the job on
     * the first receive of another size, naming the sender and both sizes. */
    {"recv_count_of_send_shard", {0, 0, 0, 0}, "comm_sendrecv from rank ",
     "a send and its receive must pass the same count and dtype"},
    /* Prints cmocka's pass lines and leaves. */
    {"fake_pass", {0, 0, 0, 0}, "without the check's verdict", NULL},
    /* Does the work right, but first claims every rank on the channel and sends passes. */
    {"forge_verdict", {0, 0, 0, 0}, "the verdict channel was tampered with", NULL},
    /* Right, but rank 0 forks a sleeper into a session of its own: it costs
     * nothing, and it must not outlive the test (the check below). */
    {"leaves_a_sleeper", {1, 2, 2, 1}, "", NULL},
};

/* Grade every case in one --batch run (cached): each laid over the solution. */
static int mpi_batch(void) {
    static int done, rc;
    if (done) return rc;
    done = 1;
    char what[PATH_MAX + 64], json[PATH_MAX], log[PATH_MAX];
    if (sh("set -e; s='%s/mpi-stage'; rm -rf \"$s\"; for k in '%s'/autograder/tests/mpi-lab/wrong/*/; do"
           " n=$(basename \"$k\"); mkdir -p \"$s/$n\"; cp '%s'/solutions/90-ring-sum/ring_sum.c \"$s/$n/\";"
           " patch -s \"$s/$n/ring_sum.c\" < \"$k/ring_sum.c.patch\"; done",
           tmp, GRADE_ROOT, mpi_root) != 0)
        return rc = -1;
    snprintf(what, sizeof what, "--batch '%s/mpi-stage' --csv '%s/mpi-wrong.csv'", tmp, tmp);
    snprintf(json, sizeof json, "%s/mpi-wrong", tmp);
    snprintf(log, sizeof log, "%s/mpi-wrong.log", tmp);
    return rc = grade_mpi(what, "", json, log);
}

/* One wrong submission: it loses exactly what it breaks, the message names
 * the rank or the misuse, and no rank outlives the grading. */
static void test_mpi_wrong_case(void **state) {
    const mpi_case_t *c = *state;
    mpi_fixture();
    /* Every case folder has its expectations here, so none is graded unchecked. */
    char count[PATH_MAX + 64];
    snprintf(count, sizeof count, "test $(ls -d '%s'/autograder/tests/mpi-lab/wrong/*/ | wc -l) -eq %zu", GRADE_ROOT,
             sizeof mpi_cases / sizeof *mpi_cases);
    if (sh("%s", count) != 0) fail_msg("autograder/tests/mpi-lab/wrong/ and mpi_cases[] list different cases");
    int rc = mpi_batch();
    if (rc != 0) fail_msg("grade --batch on lab 90's wrong submissions exited %d (%s/mpi-wrong.log)", rc, tmp);
    char json[PATH_MAX];
    snprintf(json, sizeof json, "%s/mpi-wrong/%s.json", tmp, c->name);
    json_t *res = json_load_file(json, 0, NULL);
    if (!res) fail_msg("no results for %s (%s)", c->name, json);
    int shown = 0;
    for (int i = 0; i < 4; i++) {
        double max, sc = score_of(res, mpi_tests[i], &max);
        if (!(max > 0)) fail_msg("%s: no test '%s' in results.json", c->name, mpi_tests[i]);
        if (sc != c->score[i]) fail_msg("%s: '%s' scored %g of %g; want %g", c->name, mpi_tests[i], sc, max, c->score[i]);
        if (sc == 0 && !shown++ &&
            (!strstr(output_of(res, mpi_tests[i]), c->says) ||
             (c->also_says && !strstr(output_of(res, mpi_tests[i]), c->also_says))))
            fail_msg("%s: '%s' says '%.300s'; want '%s'%s%s", c->name, mpi_tests[i], output_of(res, mpi_tests[i]),
                     c->says, c->also_says ? " and " : "", c->also_says ? c->also_says : "");
        print_message("  %-18s %-36s %g of %g\n", c->name, mpi_tests[i], sc, max);
    }
    json_decref(res);
    /* Nothing a test started may outlive it: not mpirun's ranks (each in a
     * process group of its own), not a sleeper in a session of its own. */
    if (sh("! pgrep -f '[9]0-ring-sum/graded/check' > /dev/null") != 0)
        fail_msg("ranks of lab 90's checks are still running after grading");
}

/* The speed path on several ranks, without a GPU (--emu-speed-args): the bench
 * runs on 4 ranks, rank 0's JSON comes back on the channel, and the ratio to
 * MPI's own all-reduce is scored, counted and put on the leaderboard. The
 * figure is a CPU timing; only that it was measured is checked. */
static void test_mpi_speed_path(void **state) {
    (void)state;
    char log[PATH_MAX];
    json_t *res = grade_mpi_solution(
        "speed", "--emu-speed-args '--n 65536 --reps 9' --only test_uneven --only test_large --only 'speed, 4M floats'",
        log, sizeof log);
    double max, sc = score_of(res, "lab 90: speed, 4M floats", &max);
    const char *out = output_of(res, "lab 90: speed, 4M floats");
    if (max != 2 || !(sc >= 0 && sc <= 2) || !strstr(out, "% MPI allreduce |"))
        fail_msg("speed on 4 ranks: %g of %g, '%.200s'; want a measured ratio, counted (%s)", sc, max, out, log);
    json_t *lb = json_array_get(json_object_get(res, "leaderboard"), 0);
    const char *lname = json_string_value(json_object_get(lb, "name"));
    if (!lname || strcmp(lname, "lab 90 90 ring_sum (% of MPI allreduce)") || !(json_number_value(json_object_get(lb, "value")) > 0))
        fail_msg("speed on 4 ranks: no leaderboard entry for the ring (%s)", log);
    json_decref(res);
}

/* A launcher whose words say where N goes ("{n}", as srun's "-n {n}"): the
 * grader puts the rank count there instead of adding "-np N", which mpirun
 * would refuse next to "-n {n}" left as it is. */
static void test_mpi_launcher_words(void **state) {
    (void)state;
    char log[PATH_MAX];
    json_t *res = grade_mpi_solution("words", "--mpirun 'mpirun --oversubscribe --bind-to none -n {n}' --only test_one_element",
                                     log, sizeof log);
    double score = json_number_value(json_object_get(res, "score"));
    size_t nt = json_array_size(json_object_get(res, "tests"));
    json_decref(res);
    if (score != 2 || nt != 2) fail_msg("with '-n {n}': %g points in %zu tests; want 2 in 2 (%s)", score, nt, log);
}

/* Without the launcher the grader says what to install; the tests are left
 * out of the total (the machine fell short, not the submission). */
static void test_mpi_without_mpirun(void **state) {
    (void)state;
    char log[PATH_MAX];
    json_t *res = grade_mpi_solution("nolauncher", "--mpirun no-such-mpirun --only test_large", log, sizeof log);
    const char *out = output_of(res, "lab 90: 100003 elements");
    double max, sc = score_of(res, "lab 90: 100003 elements", &max);
    if (sc != 0 || max != 0) fail_msg("without mpirun the test scored %g of %g; want 0 of 0 (left out)", sc, max);
    if (!strstr(out, "'no-such-mpirun' (the --mpirun command) was not found") || !strstr(out, "openmpi-bin"))
        fail_msg("without mpirun the test says '%.300s'", out);
    json_decref(res);
}

/* Read one case's expect file. */
static int load_case(wrong_case_t *c) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/expect", c->dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!strncmp(line, "lose ", 5) && c->nlose < MAXN) snprintf(c->lose[c->nlose++], 96, "%s", line + 5);
        else if (!strncmp(line, "keep ", 5) && c->nkeep < MAXN) snprintf(c->keep[c->nkeep++], 96, "%s", line + 5);
        else if (!strncmp(line, "output-has ", 11)) snprintf(c->output_has, sizeof c->output_has, "%s", line + 11);
        else if (!strncmp(line, "lose-status ", 12)) snprintf(c->lose_status, sizeof c->lose_status, "%s", line + 12);
        else if (!strcmp(line, "build-error")) c->build_error = 1;
        else if (!strncmp(line, "pass-with-seed-2024 ", 20) && c->nseed < MAXN) snprintf(c->seed[c->nseed++], 96, "%s", line + 20);
        else if (!strncmp(line, "speed-args ", 11)) snprintf(c->speed_args, sizeof c->speed_args, "%s", line + 11);
        else if (!strncmp(line, "lose-speed ", 11)) snprintf(c->lose_speed, sizeof c->lose_speed, "%s", line + 11);
        else if (!strncmp(line, "speed-output-has ", 17))
            snprintf(c->speed_output_has, sizeof c->speed_output_has, "%s", line + 17);
    }
    fclose(f);
    /* A case whose defect only the benchmark shows keeps its checks. */
    if (c->lose_speed[0] && !c->speed_args[0]) return -1;
    return c->nlose + c->nkeep > 0 ? 0 : -1;
}

/* One cmocka test per wrong case found on disk, then the whole-grader tests. */
int main(void) {
    const char *tbase = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    /* A space in the path, as a course in "/home/jane/GPU course" has one:
     * make cannot name such a file, so the grader must not give it one. */
    snprintf(tmp, sizeof tmp, "%s/test grade.XXXXXX", tbase);
    if (!mkdtemp(tmp)) { perror("test_grade: mkdtemp"); return 1; }
    chmod(tmp, 0755);
    snprintf(cache_flag, sizeof cache_flag, "--base-cache '%s/base-cache'", tmp);

    static struct CMUnitTest tests[300];
    int nc = 0, nt = 0;
    /* The unit tests first: they take milliseconds and name a broken part directly. */
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_handout_points);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_fraction_clamps);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_mfu_scores);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_mfu_unmeasured);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_bench_says_wrong);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_message_control_bytes);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_tokens_per_s);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_ratio_unchanged);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_over_kernel);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_emulator_forged);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_over_unmeasured);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_ratio_unmeasured);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_mfu_zero_is_no_measure);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_unit_edges);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_absolute_validation);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_course_speed_tests);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_student_files_are_the_solution);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_leaderboard_entries);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_bonus_is_extra_credit);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_ranks);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_speed_needs_requires);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_ratio_implausible);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_implausible_above);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_file_fields);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_unknown_fields);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_timeouts);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_malformed);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_limits);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_long_path);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_fields_read);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_error_one_line);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_over_names_baseline_whole);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_lab_is_its_folder);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_strings_one_line);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_error_key_cut_whole);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_points_range);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rubric_error_utf8);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_hash);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_mkdirs);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_long_paths);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_file_copy);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_copy_links);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_copy_unreadable);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_copy_vanishing);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_hash_more);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_hash_file_bounds);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_remove);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_remove_deep);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_chown);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_chown_long_path);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_tree_chown_fails);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_lab_student_files);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_lab_long_path);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_json_status_every_test);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_json_output_not_utf8);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_table_long_names);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_table_total);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rerun_hint);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rerun_hint_folders);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_rerun_hint_edges);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_report_status_names);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_table_rows);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_table_points_edges);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_table_message_cut);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_json_fields);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_json_output_bytes);
    char wdir[PATH_MAX];
    snprintf(wdir, sizeof wdir, "%s/autograder/wrong", GRADE_ROOT);
    struct dirent **labs;
    int nl = scandir(wdir, &labs, NULL, alphasort);
    for (int i = 0; i < nl; i++) {
        char ld[PATH_MAX * 2];
        snprintf(ld, sizeof ld, "%s/%s", wdir, labs[i]->d_name);
        struct dirent **cs;
        int ncs = labs[i]->d_name[0] == '.' ? -1 : scandir(ld, &cs, NULL, alphasort);
        for (int k = 0; k < ncs; k++) {
            wrong_case_t *c = &cases[nc];
            memset(c, 0, sizeof *c);
            snprintf(c->lab, sizeof c->lab, "%s", labs[i]->d_name);
            snprintf(c->nn, sizeof c->nn, "%.2s", labs[i]->d_name);
            snprintf(c->name, sizeof c->name, "%s", cs[k]->d_name);
            snprintf(c->dir, sizeof c->dir, "%s/%s", ld, cs[k]->d_name);
            if (cs[k]->d_name[0] != '.' && nc < 255 && load_case(c) == 0) {
                snprintf(c->test_name, sizeof c->test_name, "wrong %s/%s", labs[i]->d_name, cs[k]->d_name);
                tests[nt++] = (struct CMUnitTest){c->test_name, test_wrong_case, NULL, NULL, c};
                if (c->lose_speed[0]) {
                    snprintf(c->speed_test_name, sizeof c->speed_test_name, "wrong %s/%s: speed", labs[i]->d_name,
                             cs[k]->d_name);
                    tests[nt++] = (struct CMUnitTest){c->speed_test_name, test_wrong_speed_case, NULL, NULL, c};
                }
                nc++;
            }
            free(cs[k]);
        }
        if (ncs >= 0) free(cs);
        free(labs[i]);
    }
    if (nl >= 0) free(labs);
    ncases = nc;
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_solutions_full_marks);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_starters_score_zero);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_speed_path_on_emulator);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_std_fds_closed);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_batch_csv);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_batch_notes);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_batch_parallel);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_batch_parallel_worker_killed);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_base_cache);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_base_cache_cuda_arch);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_run_as_user);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_build_runs_as_user);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_memory_limit);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gradescope_zip);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_run_autograder);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_usage_checked_before_build);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_usage_conflicting_flags);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_usage_long_paths);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_batch_csv_replaced_when_done);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gradescope_folder_in_zip);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gradescope_lab_assignment);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gradescope_zip_tracked_only);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gradescope_zip_refuses);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_submission_long_folder);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_duplicate_layouts_warned);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_arch_branch_warned);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_src_without_lab_files_warned);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gpu_build);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_no_device_fails_loudly);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_run_as_handover_fails);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_run_as_takeback_fails);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_workdir_fails);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_run_as_test_leftovers);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_parallel_run_as_users);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_run_as_refused);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_sigkill_run_as_watchman);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_parallel_run_as_worker_killed);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_workdir_fresh);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_workdir_not_emptied);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_workdir_deep_leftovers);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_workdir_dropped_after_test);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_lab_copy_fails);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_exit_127_is_no_grader_error);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_base_cache_long_env);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_base_cache_ignores_cc);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_child_env_all_kept);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_gpu_build_long_cuda_home);
    for (size_t i = 0; i < sizeof stop_cases / sizeof *stop_cases; i++)
        tests[nt++] = (struct CMUnitTest){stop_cases[i].name, test_stop, NULL, NULL, (void *)&stop_cases[i]};
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_mpi_solution_and_starter);
    static char mpi_names[sizeof mpi_cases / sizeof *mpi_cases][96];
    for (size_t i = 0; i < sizeof mpi_cases / sizeof *mpi_cases; i++) {
        snprintf(mpi_names[i], sizeof mpi_names[i], "mpi wrong 90-ring-sum/%s", mpi_cases[i].name);
        tests[nt++] = (struct CMUnitTest){mpi_names[i], test_mpi_wrong_case, NULL, NULL, (void *)&mpi_cases[i]};
    }
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_mpi_speed_path);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_mpi_launcher_words);
    tests[nt++] = (struct CMUnitTest)cmocka_unit_test(test_mpi_without_mpirun);
    const char *filter = getenv("GRADE_TEST_FILTER");
    if (filter && filter[0]) {
        /* cmocka runs nothing, and passes, for a filter that matches no test: refuse it instead. */
        int any = 0;
        for (int i = 0; i < nt && !any; i++) any = fnmatch(filter, tests[i].name, 0) == 0;
        if (!any) {
            fprintf(stderr, "test_grade: GRADE_TEST_FILTER='%s' matches none of these tests (* and ? as in the "
                    "shell):\n", filter);
            for (int i = 0; i < nt; i++) fprintf(stderr, "  %s\n", tests[i].name);
            return 2;
        }
        cmocka_set_test_filter(filter);
    }
    int failed = _cmocka_run_group_tests("grade", tests, (size_t)nt, NULL, NULL);
    if (!failed && !getenv("GRADE_TEST_KEEP")) sh("rm -rf '%s'", tmp);
    else fprintf(stderr, "test_grade: logs in %s\n", tmp);
    return failed ? 1 : 0;
}
