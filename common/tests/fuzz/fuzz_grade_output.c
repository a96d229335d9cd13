/*
 * libFuzzer harness: how the grader reads what a graded check program left
 * behind (autograder/src/grade.c). A submission controls every byte of it.
 *
 * Feeds: byte 0 sets how the child ended (exit code, signal, timeout, too
 * much output) and on how many ranks it ran (1, 2 or 3); byte 1 whether the
 * rubric lets the check skip itself. The rest, split at NUL bytes, is the
 * verdict channel's report (one per rank), the program's output and a build
 * log. They go through what run_numerics() does after the run (the verdict,
 * judge_numerics, blame_rank, attach_output), first_error() on the log and
 * report_json() on the result.
 * Asserts: no crash; a pass needs the token's "PASS <check>" line on every
 * rank's channel, whatever the output says; a result always has a status and
 * a one-line message, and results.json shows the student that status and
 * message (report_json must not drop them).
 *
 * grade.c's readers are static, so it is included whole, its main renamed.
 */
#define main grade_program_main
#include "grade.c"
#undef main

#include <jansson.h>
#include <stdint.h>
#include <sys/mman.h>

#define TOKEN "0123456789abcdef0123456789abcdef"
#define CHECK "mma: 1x1x1, K = 1"

static int out_fd = -1;
static char out_path[64];

/* The next NUL-ended part of the input, as a malloc'd string ("" past the end). */
static char *part(const uint8_t **p, const uint8_t *e) {
    const uint8_t *z = *p < e ? memchr(*p, 0, (size_t)(e - *p)) : NULL;
    size_t len = *p < e ? (size_t)((z ? z : e) - *p) : 0;
    char *s = malloc(len + 1);
    memcpy(s, *p, len);
    s[len] = '\0';
    *p += len + (z != NULL);
    return s;
}

/* Does report hold the line TOKEN " PASS " CHECK? */
static int has_pass_line(const char *report) {
    const char *want = TOKEN " PASS " CHECK;
    for (const char *p = report; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, want, strlen(want)) && (p[strlen(want)] == '\n' || p[strlen(want)] == '\0')) return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    if (out_fd < 0) {
        out_fd = memfd_create("results", 0);
        snprintf(out_path, sizeof out_path, "/proc/self/fd/%d", out_fd);
    }
    const uint8_t how = data[0], rub = data[1];
    const uint8_t *p = data + 2, *e = data + size;
    const int ranks = how >> 6 == 0 ? 0 : 1 + (how >> 6 == 3 ? 2 : how >> 6); /* 0 (no launcher), 2 or 3 */

    rubric_test_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "mma 1x1x1");
    snprintf(t.check, sizeof t.check, CHECK);
    t.kind = KIND_NUMERICS;
    t.points = 2;
    t.may_skip = rub & 1;
    t.ranks = ranks ? ranks : 1;
    result_t res;
    memset(&res, 0, sizeof res);
    res.t = &t;
    snprintf(res.lab, sizeof res.lab, "04-tensor-cores");
    snprintf(res.nn, sizeof res.nn, "04");
    res.number = 1;
    res.max_score = t.points;
    res.counted = 1;
    res.measured = -1;
    res.status = ST_ERROR;

    sandbox_result_t r;
    memset(&r, 0, sizeof r);
    r.timed_out = how & 1;
    r.output_killed = (how >> 1) & 1;
    r.signaled = (how >> 2) & 1;
    r.sig = r.signaled ? 11 : 0;
    r.exited = !r.signaled;
    r.exit_code = (how >> 3) & 7;
    if (r.exit_code == 7) r.exit_code = 127;
    r.report = part(&p, e);
    for (int k = 0; k < ranks; k++) r.rank_report[k] = part(&p, e);
    r.out = part(&p, e);
    r.out_len = strlen(r.out);
    char *log = part(&p, e);

    /* What run_numerics() does once the child has ended. */
    char v[256], want[160];
    snprintf(want, sizeof want, "PASS %s", t.check);
    if (ranks) {
        int bad = rank_verdicts(&r, TOKEN, ranks, want, v, sizeof v);
        judge_numerics(&res, v, &r, 60);
        if (bad >= 0) blame_rank(&res, &r, TOKEN, ranks, bad, v);
    } else {
        find_verdict(r.report, TOKEN, v, sizeof v);
        judge_numerics(&res, v, &r, 60);
    }
    if (res.status != ST_PASS) attach_output(&res, &r);

    if (res.status == ST_PASS) {
        int all = ranks ? 1 : has_pass_line(r.report);
        for (int k = 0; k < ranks; k++) all &= has_pass_line(r.rank_report[k]);
        if (!all || res.score != t.points) abort();
    } else if (res.score != 0) {
        abort();
    }
    if (!res.message[0] && res.status != ST_PASS) abort();
    for (const unsigned char *c = (const unsigned char *)res.message; *c; c++)
        if ((*c < 0x20 && *c != '\t') || *c == 0x7f) abort(); /* one line, no terminal escapes */

    /* What the student reads in results.json: the status, then the message. */
    if (ftruncate(out_fd, 0) != 0 || report_json(out_path, &res, 1, 1.0, "summary") != 0) abort();
    json_error_t je;
    json_t *root = json_load_file(out_path, 0, &je);
    const char *shown = json_string_value(json_object_get(json_array_get(json_object_get(root, "tests"), 0), "output"));
    if (!shown || strncmp(shown, status_name(res.status), strlen(status_name(res.status)))) {
        fprintf(stderr, "results.json shows '%s' for status '%s', message '%s'\n", shown ? shown : "(nothing)",
                status_name(res.status), res.message);
        abort();
    }
    json_decref(root);

    /* A build log: the first error, one line. */
    char err[512];
    first_error(log, err, sizeof err);
    if (!err[0] || strchr(err, '\n')) abort();
    char *tail = tail_lines(log, 6000);
    free(tail);

    free(res.output);
    free(log);
    sandbox_result_free(&r);
    return 0;
}
