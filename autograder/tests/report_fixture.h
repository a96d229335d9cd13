/* A result as grade_lab() makes one, for the report's unit tests (test_grade.c
 * and test_report.c): lab 04, test number 1, nothing measured. */
#ifndef REPORT_FIXTURE_H
#define REPORT_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "grade.h"

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

#endif
