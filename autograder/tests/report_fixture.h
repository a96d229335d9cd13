/* Shared by the report's unit tests (test_grade.c and test_report.c, which
 * include cmocka first): a result as grade_lab() makes one, and a capture of
 * what the report prints on stdout. */
#ifndef REPORT_FIXTURE_H
#define REPORT_FIXTURE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "grade.h"

/* A result of lab 04, test number 1, nothing measured. */
static inline result_t made_result(const rubric_test_t *t, status_t st, double score, int counted) {
    result_t r;
    memset(&r, 0, sizeof r);
    r.t = t;
    snprintf(r.lab, sizeof r.lab, "04-tensor-cores");
    snprintf(r.nn, sizeof r.nn, "04");
    r.number = 1;
    r.status = st;
    r.score = score;
    r.max_score = t->points;
    r.counted = counted;
    r.measured = -1;
    return r;
}

/* stdout goes to a temporary file from begin_capture() to end_capture(). */
typedef struct {
    FILE *f;
    int saved; /* the descriptor stdout had before */
} capture_t;

static inline capture_t begin_capture(void) {
    capture_t c;
    fflush(stdout);
    c.f = tmpfile();
    c.saved = dup(1);
    if (!c.f || c.saved < 0 || dup2(fileno(c.f), 1) < 0) fail_msg("could not redirect stdout to a temporary file");
    return c;
}

/* Puts stdout back; returns what was printed, in a static buffer (16 KiB:
 * more than any table or hint of these tests, which fail on a cut one). */
static inline const char *end_capture(capture_t c) {
    static char text[16384];
    fflush(stdout);
    dup2(c.saved, 1);
    close(c.saved);
    rewind(c.f);
    size_t got = fread(text, 1, sizeof text - 1, c.f);
    text[got] = '\0';
    fclose(c.f);
    return text;
}

/* What report_table() prints for these results (end_capture()'s buffer). */
static inline const char *table_of(const result_t *r, int n) {
    capture_t c = begin_capture();
    report_table(r, n, "title", 1.0);
    return end_capture(c);
}

#endif
