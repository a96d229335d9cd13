/*
 * Scoring a speed test from the JSON its benchmark wrote (bench --json).
 *
 * Two kinds of speed test, told apart by the rubric:
 *  - ratio ("kernel", optional "baseline"): the bench's "results" list has a
 *    row per kernel with its "ratio" to a baseline timed in the same process
 *    (labs 01-04: TFLOP/s over cuBLAS). Dividing by a baseline measured on
 *    the same device cancels out which GPU the grader happens to run on.
 *    With "over" the baseline is another kernel row of the same run: the
 *    ratio is its time over this kernel's (lab 01: how much coalescing
 *    gains), and on the emulator, whose times are CPU times, it is left out.
 *  - absolute ("metric"): one top-level number of the bench's JSON, e.g. lab
 *    05's "mfu". Training a model has no baseline to divide by, and MFU is
 *    already normalised by the device's peak, so its value is graded as is.
 * Both earn points * clamp((value - zero_at) / (full_at - zero_at), 0, 1).
 * A ratio above the rubric's "implausible_above" (default 1.25: faster than
 * cuBLAS at its own precision by a quarter) is not a measurement of the
 * work but of a shortcut, and fails; an absolute metric has its ceiling in
 * the table below (MFU: 1, the device's peak).
 *
 * Apart from grade.c, which runs the bench, so that the grader's tests can
 * score made-up JSON on a machine without a GPU.
 */
#include "grade.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The metrics an absolute speed test may name. A new one needs a row here and
 * its field in the lab's bench JSON. */
static const speed_metric_t metrics[] = {
    {"mfu", "MFU ", 100.0, "%", 1.0, "a fraction of the device's bf16 peak: 0.35 is 35%",
     "bf16 peak unknown; add --peak-tflops N to bench_args in the rubric"},
    {"tokens_per_s", "", 1e-3, "k tok/s", INFINITY, "tokens per second: 200000 is 200k tok/s",
     "the benchmark measured no throughput"},
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

const speed_metric_t *speed_metric_find(const char *name) {
    for (size_t i = 0; name && i < NMETRICS; i++)
        if (!strcmp(metrics[i].name, name)) return &metrics[i];
    return NULL;
}

void speed_metric_names(char *out, size_t n) {
    out[0] = '\0';
    for (size_t i = 0; i < NMETRICS; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? ", " : "", metrics[i].name);
}

/* Written as !(f > 0) so that NaN, which compares false to everything,
 * earns nothing instead of slipping through both clamps. */
double speed_fraction(double value, double zero_at, double full_at) {
    double f = (value - zero_at) / (full_at - zero_at);
    if (!(f > 0)) return 0.0;
    return f > 1 ? 1.0 : f;
}

void speed_format(const speed_metric_t *m, double value, char *out, size_t n) {
    snprintf(out, n, "%s%.1f%s", m->label, m->scale * value, m->unit);
}

/* Points, status and the measured value, once the value is known to be sane. */
static void give_points(result_t *res, double value) {
    double f = speed_fraction(value, res->t->zero_at, res->t->full_at);
    res->measured = value;
    res->score = res->t->points * f;
    res->status = f >= 1 ? ST_PASS : f > 0 ? ST_PARTIAL : ST_FAIL;
}

/* The grading machine could not take the measure (the emulator's bench with
 * no cuBLAS baseline, emulator times, no known peak): a grader error, left
 * out of the total, so it neither costs the student points nor passes. The
 * caller says why. */
static void left_out(result_t *res) {
    res->status = ST_ERROR;
    res->counted = 0;
    res->score = 0;
}

/* The rubric's "implausible_above"; the default for a test made without
 * rubric_load() (0 there). */
static double implausible_above(const rubric_test_t *t) {
    return t->implausible_above > 0 ? t->implausible_above : GRADE_IMPLAUSIBLE_RATIO;
}

/* The row of "results" for kernel: its status ("ok" when it has none), its
 * "ratio" and "ms" (-1 where not numbers); 0, or -1 when there is no row. */
static int find_row(json_t *j, const char *kernel, const char **st, double *ratio, double *ms) {
    json_t *rows = json_object_get(j, "results"), *row;
    size_t i;
    json_array_foreach(rows, i, row) {
        json_t *k = json_object_get(row, "kernel");
        if (!json_is_string(k) || strcmp(json_string_value(k), kernel)) continue;
        json_t *rt = json_object_get(row, "ratio"), *s = json_object_get(row, "status"), *m = json_object_get(row, "ms");
        *st = json_is_string(s) ? json_string_value(s) : "ok";
        *ratio = json_is_number(rt) ? json_number_value(rt) : -1;
        *ms = json_is_number(m) ? json_number_value(m) : -1;
        return 0;
    }
    return -1;
}

/* A row that gives no measurement: its status if that is not "ok", else
 * which figure is missing or impossible (the bench says "ok" but wrote no
 * time or ratio above 0: a broken JSON, not a slow kernel). */
static void say_unmeasured(result_t *res, const char *st, const char *kernel, const char *figure,
                           const char *then) {
    if (strcmp(st, "ok"))
        snprintf(res->message, sizeof res->message, "the benchmark says '%s' for %s%s", st, kernel, then);
    else
        snprintf(res->message, sizeof res->message,
                 "the benchmark says 'ok' for %s, but its %s is missing, 0 or below: nothing was measured%s", kernel,
                 figure, then);
}

/* Ratio kind with "over": the other kernel's time over this one's. */
static void score_over(result_t *res, json_t *j, int emulated) {
    const rubric_test_t *t = res->t;
    const char *st = NULL, *ost = NULL;
    double ratio, ms = -1, oms = -1;
    if (find_row(j, t->kernel, &st, &ratio, &ms) || find_row(j, t->over, &ost, &ratio, &oms)) {
        res->status = ST_ERROR;
        snprintf(res->message, sizeof res->message, "no row for kernel '%s' in the benchmark's JSON",
                 st ? t->over : t->kernel);
    } else if (emulated) {
        /* CPU times of emulated kernels: they say nothing about what a GPU's memory system does. */
        left_out(res);
        snprintf(res->message, sizeof res->message,
                 "the times are the emulator's CPU times, so the speed-up over %s is graded only on a GPU", t->over);
    } else if (strcmp(st, "ok") || !(ms > 0) || !isfinite(ms)) {
        res->status = ST_FAIL;
        say_unmeasured(res, st, t->kernel, "time (ms)", "");
    } else if (strcmp(ost, "ok") || !(oms > 0) || !isfinite(oms)) {
        res->status = ST_FAIL;
        say_unmeasured(res, ost, t->over, "time (ms)", ", so there is no speed-up to grade");
    } else {
        const double up = oms / ms;
        snprintf(res->figure, sizeof res->figure, "%.2fx %s", up, t->over);
        if (up > implausible_above(t)) {
            res->status = ST_FAIL;
            snprintf(res->message, sizeof res->message,
                     "%.2fx the speed of %s is more than the %.2fx any honest pair of kernels reaches here: the "
                     "time did not measure the work; no points", up, t->over, implausible_above(t));
        } else {
            give_points(res, up);
            snprintf(res->message, sizeof res->message, "full points at %.2fx the speed of %s, none at %.2fx",
                     t->full_at, t->over, t->zero_at);
        }
    }
}

/* Ratio kind: the kernel's row of "results" and its "ratio". */
static void score_ratio(result_t *res, json_t *j, int emulated) {
    const rubric_test_t *t = res->t;
    if (t->over[0]) {
        score_over(res, j, emulated);
        return;
    }
    double ratio = -1, ms;
    const char *st = NULL;
    find_row(j, t->kernel, &st, &ratio, &ms);
    json_t *base = json_object_get(j, "baseline");
    if (!st) {
        res->status = ST_ERROR;
        snprintf(res->message, sizeof res->message, "no row for kernel '%s' in the benchmark's JSON", t->kernel);
    } else if (!strcmp(st, "ok") && ratio < 0 && json_is_null(base) && emulated) {
        /* The kernel ran fine but the emulator build has no cuBLAS to divide by:
         * that says nothing about the submission. */
        left_out(res);
        snprintf(res->message, sizeof res->message,
                 "no baseline was measured (no %s in this run), so there is no ratio to grade", t->baseline);
    } else if (!strcmp(st, "ok") && ratio < 0 && json_is_null(base)) {
        /* A GPU bench times its baseline before any kernel; none there means it
         * did not run in the bench's process, which the code under test shares.
         * Left out of the total, breaking it would lift a slow kernel's
         * percentage above an honest one's: a counted zero instead. */
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message,
                 "no baseline was measured (no %s in this run): it did not run in the benchmark's process, which "
                 "the submission's code shares, so there is no ratio to grade; no points (if the reference "
                 "solution shows the same, it is a grader problem)", t->baseline);
    } else if (strcmp(st, "ok") || !(ratio > 0) || !isfinite(ratio)) {
        res->status = ST_FAIL;
        say_unmeasured(res, st, t->kernel, "ratio", "");
    } else if (ratio > implausible_above(t)) {
        /* Faster than the baseline by more than any kernel of the lab can be:
         * the time did not measure the work (a result kept from an earlier
         * run and copied back, a timer tampered with). A counted zero. */
        res->status = ST_FAIL;
        snprintf(res->figure, sizeof res->figure, "%.1f%% %s", 100 * ratio, t->baseline);
        snprintf(res->message, sizeof res->message,
                 "%.2fx the speed of %s is more than the %.2fx any kernel can plausibly reach here: the time "
                 "did not measure the work (a result reused from an earlier run?); no points",
                 ratio, t->baseline, implausible_above(t));
    } else {
        give_points(res, ratio);
        snprintf(res->figure, sizeof res->figure, "%.1f%% %s", 100 * ratio, t->baseline);
        snprintf(res->message, sizeof res->message, "full points at %.0f%% of %s, none at %.0f%%",
                 100 * t->full_at, t->baseline, 100 * t->zero_at);
    }
}

/* Absolute kind: one top-level number. A missing or null value says nothing
 * about the submission (lab 05's bench writes "mfu": null when it knows no
 * peak for the device), so the test is left out of the total rather than
 * failed (the table's total says so), and the message says the fix. An impossible value (not
 * positive, or above the metric's ceiling) is a broken measurement: it
 * earns nothing and counts, so it can never pass by accident. */
static void score_metric(result_t *res, json_t *j) {
    const rubric_test_t *t = res->t;
    const speed_metric_t *m = speed_metric_find(t->metric);
    char what[48], a[48], b[48];
    snprintf(what, sizeof what, "%s", m && m->label[0] ? m->label : t->metric);
    what[strcspn(what, " ")] = '\0';
    if (!m) { /* rubric_load rejects unknown metrics; kept so this can never crash */
        res->status = ST_ERROR;
        snprintf(res->message, sizeof res->message, "unknown metric '%s' in the rubric", t->metric);
        return;
    }
    json_t *v = json_object_get(j, m->name), *dev = json_object_get(j, "device");
    /* The bench screens the work it times (lab 05: every student function at
     * the step's own sizes) and says "wrong" instead of timing the wrong
     * work: that counts, and earns nothing. */
    json_t *st = json_object_get(j, "status"), *why = json_object_get(j, "message");
    if (json_is_string(st) && !strcmp(json_string_value(st), "wrong")) {
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message, "the benchmark says 'wrong': %s",
                 json_is_string(why) ? json_string_value(why) : "(no reason given)");
        return;
    }
    if (!v || json_is_null(v) || !json_is_number(v)) {
        left_out(res);
        if (!v)
            snprintf(res->message, sizeof res->message,
                     "the benchmark's JSON has no \"%s\" (rubric and bench disagree)", m->name);
        else if (!json_is_null(v))
            snprintf(res->message, sizeof res->message,
                     "\"%s\" in the benchmark's JSON is not a number", m->name);
        else
            snprintf(res->message, sizeof res->message, "no %s on '%s': %s", what,
                     json_is_string(dev) ? json_string_value(dev) : "this device", m->if_null);
        return;
    }
    double x = json_number_value(v);
    speed_format(m, x, res->figure, sizeof res->figure);
    if (x > m->max) {
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message,
                 "%s is above the possible %g%s: a broken timer, or a wrong device peak (--peak-tflops)",
                 res->figure, m->scale * m->max, m->unit);
        return;
    }
    if (!(x > 0) || !isfinite(x)) {
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message, "the benchmark reports %s, which no run can measure", res->figure);
        return;
    }
    give_points(res, x);
    snprintf(a, sizeof a, "%g%s", m->scale * t->full_at, m->unit);
    snprintf(b, sizeof b, "%g%s", m->scale * t->zero_at, m->unit);
    snprintf(res->message, sizeof res->message, "full points at %s%s, none at %s", m->label, a, b);
}

/* The bench's "emulator", where it writes one, must be the build the grader
 * ran. A JSON that says otherwise was not written by the bench but by the
 * submission's code, which shares its process: claiming the emulator on a
 * GPU would turn a slow kernel's counted score into a test left out of the
 * total. 1 when it disagrees, with the message set. */
static int emulator_forged(result_t *res, json_t *j, int emulated) {
    json_t *e = json_object_get(j, "emulator");
    if (!e || (json_is_boolean(e) && json_is_true(e) == emulated)) return 0;
    res->status = ST_FAIL;
    snprintf(res->message, sizeof res->message,
             "the benchmark's JSON says \"emulator\": %s, but the grader ran its %s build: the JSON is not the "
             "benchmark's own (the submission's code shares its process); no points",
             json_is_true(e) ? "true" : json_is_false(e) ? "false" : "(not true or false)",
             emulated ? "emulator" : "GPU");
    return 1;
}

void speed_score(result_t *res, const char *bench_json, int emulated) {
    json_error_t je;
    json_t *j = bench_json && bench_json[0] ? json_loads(bench_json, 0, &je) : NULL;
    res->score = 0;
    if (!json_is_object(j)) {
        res->status = ST_FAIL;
        snprintf(res->message, sizeof res->message, "the benchmark wrote no readable JSON");
    } else if (emulator_forged(res, j, emulated)) {
        /* counted, no points */
    } else if (res->t->metric[0]) {
        score_metric(res, j);
    } else {
        score_ratio(res, j, emulated);
    }
    json_decref(j);
    /* The message quotes the bench's own strings ("status", "message",
     * "device"), which the submission writes: a newline or a terminal escape
     * in them must not reach the grader's table, one line per test. */
    for (unsigned char *c = (unsigned char *)res->message; *c; c++)
        if (*c < 0x20 || *c == 0x7f) *c = '?';
}
