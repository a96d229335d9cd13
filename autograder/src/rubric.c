/*
 * Reading a lab's rubric, autograder/rubrics/NN.json.
 *
 * A rubric lists the lab's graded tests. A numerics test names one cmocka
 * test of the lab's check.c and its points. A speed test is one of two
 * kinds: a ratio test names one kernel row of the lab's bench --json output
 * and the ratios to the baseline that earn full and zero points (with
 * "over", another kernel row of the same run: the ratio is then that
 * kernel's time over this one's, a speed-up, such as lab 01's coalesced
 * kernel over its uncoalesced one); an
 * absolute test names a "metric", a top-level number of that JSON (lab 05's
 * "mfu"), and the values of it that earn full and zero points. Linear in
 * between, either way. "requires" lists checks
 * that must pass for a test to count: a speed test is worth nothing for a
 * wrong kernel, and a check of argument validation (lab 00's) is worth
 * nothing until the real work passes. "may_skip"
 * marks a check that legitimately skips itself on some machines (Hopper-only
 * code): skipped there, it is left out of the total. "ranks" (for the whole
 * lab, or per test) runs a test's program on that many MPI ranks under
 * mpirun, for the distributed labs. A ratio test's "implausible_above"
 * (default GRADE_IMPLAUSIBLE_RATIO) is the ratio past which a measurement is
 * taken for a broken one and fails. The format is
 * documented in autograder/README.md; a malformed rubric is reported, never
 * half-used.
 */
#include "grade.h"
#include "json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* get_str's flags: the member must be there; it must not be "" (a name:
 * "over": "" would silently make a plain ratio test). */
#define STR_REQUIRED 1
#define STR_NONEMPTY 2

/* A rubric's strings are one line of printable text: a check's name is
 * matched in the line its verdict comes on (with a newline it could never
 * pass), a test's name is a row of the grader's table, bench_args are split
 * at spaces (a tab would stay inside an argument). */
static int printable(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return 0;
    return 1;
}

/* Copy a string member into a fixed field; 0 when absent (and not required). */
static int get_str(json_t *o, const char *key, char *dst, size_t n, int flags, char *err, size_t errlen) {
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (flags & STR_REQUIRED) snprintf(err, errlen, "missing \"%s\"", key);
        return flags & STR_REQUIRED ? -1 : 0;
    }
    if (!json_is_string(v) || strlen(json_string_value(v)) >= n) {
        snprintf(err, errlen, "\"%s\" must be a string shorter than %zu characters", key, n);
        return -1;
    }
    if (!printable(json_string_value(v))) {
        snprintf(err, errlen, "\"%s\" must be one line of printable text, without control characters", key);
        return -1;
    }
    if ((flags & STR_NONEMPTY) && !json_string_value(v)[0]) {
        snprintf(err, errlen, "\"%s\" must not be empty", key);
        return -1;
    }
    snprintf(dst, n, "%s", json_string_value(v));
    return 0;
}

/* A number member, with a default when absent. */
static int get_num(json_t *o, const char *key, double *dst, double dflt, char *err, size_t errlen) {
    json_t *v = json_object_get(o, key);
    if (!v) { *dst = dflt; return 0; }
    if (!json_is_number(v)) {
        snprintf(err, errlen, "\"%s\" must be a number", key);
        return -1;
    }
    *dst = json_number_value(v) + 0.0; /* -0 is 0: printed, it said "-0" points or "-0%" */
    return 0;
}

/* A whole-number member from lo to hi ("ranks", "timeout_s"); dflt when absent.
 * what names the unit in the message: "MPI ranks", "seconds". */
static int get_int(json_t *o, const char *key, const char *what, long lo, long hi, int *dst, int dflt, char *err,
                   size_t errlen) {
    json_t *v = json_object_get(o, key);
    if (!v) { *dst = dflt; return 0; }
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        snprintf(err, errlen, "\"%s\" must be a whole number of %s from %ld to %ld", key, what, lo, hi);
        return -1;
    }
    *dst = (int)json_integer_value(v);
    return 0;
}

/* "ranks": 1 (no mpirun) to GRADE_MAX_RANKS. */
static int get_ranks(json_t *o, int *dst, int dflt, char *err, size_t errlen) {
    return get_int(o, "ranks", "MPI ranks", 1, GRADE_MAX_RANKS, dst, dflt, err, errlen);
}

/* "timeout_s": 1 s to a day (what --timeout allows). */
static int get_timeout(json_t *o, int *dst, int dflt, char *err, size_t errlen) {
    return get_int(o, "timeout_s", "seconds", 1, 86400, dst, dflt, err, errlen);
}

/* "lab" is labs/<lab>/, the folder of this rubric's own lab, NN-name: the
 * grader takes a submission's files for lab NN from there, so another lab's
 * folder would grade that lab's work as this one's, and a '/' would reach
 * out of labs/. */
static int check_lab(const char *lab, const char *nn, char *err, size_t errlen) {
    size_t k = strlen(nn);
    if (strncmp(lab, nn, k) || lab[k] != '-' || strchr(lab, '/')) {
        snprintf(err, errlen, "\"lab\" must be this lab's folder in labs/, \"%s-...\" with no '/', not \"%s\"", nn,
                 lab);
        return -1;
    }
    return 0;
}

/* A test's most points. Past it a slip (an extra zero, 1e3 for 1e-3) is
 * likelier than a test worth so much, and 64 tests of the largest double add
 * up to inf, a total results.json cannot hold (jansson writes no number for
 * it). */
#define MAX_POINTS 1000

/* The fields a rubric, a numerics test and a speed test may have (NULL-ended). */
static const char *const top_fields[] = {"lab", "title", "timeout_s", "ranks", "student_files", "tests", NULL};
static const char *const numerics_fields[] = {"name", "kind", "points", "bonus", "timeout_s", "ranks", "requires",
                                              "check", "may_skip", NULL};
static const char *const speed_fields[] = {"name", "kind", "points", "bonus", "timeout_s", "ranks", "requires",
                                           "kernel", "over", "baseline", "metric", "full_at", "zero_at",
                                           "implausible_above", "bench_args", NULL};

/* Every member of o is one of fields: a misspelt "zero_At" or "may_skp",
 * or a speed test's "check", would otherwise be ignored, and the test
 * graded on defaults (zero_at 0, not left out when it skips) without a word. */
static int known_fields(json_t *o, const char *const *fields, const char *what, char *err, size_t errlen) {
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        int known = 0;
        for (const char *const *f = fields; *f; f++) known |= !strcmp(*f, key);
        if (known) continue;
        char list[256] = "";
        for (const char *const *f = fields; *f; f++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", f == fields ? "" : ", ", *f);
        /* Its first 40 bytes, cut at a character's start: the message goes to
         * results.json, where a character cut in two is no UTF-8. */
        int n = (int)strnlen(key, 40);
        while (n > 0 && ((unsigned char)key[n] & 0xc0) == 0x80) n--;
        snprintf(err, errlen, "\"%.*s\" is no field of %s (misspelt?); it may have: %s", n, key, what, list);
        return -1;
    }
    return 0;
}

/* The two kinds of speed test, and thresholds that can be reached: a test
 * that is neither kind, or both, or whose full marks lie beyond what can be
 * measured, would grade every submission the same. */
static int check_speed(json_t *o, const rubric_test_t *x, char *err, size_t errlen) {
    const speed_metric_t *m = NULL;
    if (json_object_get(o, "metric")) { /* even "": a typo must not turn it into a ratio test */
        if (!(m = speed_metric_find(x->metric))) {
            char names[128];
            speed_metric_names(names, sizeof names);
            snprintf(err, errlen, "unknown \"metric\" \"%s\"; known: %s", x->metric, names);
            return -1;
        }
        if (json_object_get(o, "baseline")) {
            snprintf(err, errlen, "\"metric\" (an absolute measure) and \"baseline\" (a ratio to one) "
                                  "exclude each other; keep one");
            return -1;
        }
        if (json_object_get(o, "kernel") || json_object_get(o, "over")) {
            snprintf(err, errlen, "\"metric\" (a top-level field of the bench's JSON) and \"kernel\" or \"over\" "
                                  "(rows of its results, for a ratio) exclude each other; keep one");
            return -1;
        }
    } else if (!x->kernel[0]) {
        snprintf(err, errlen, "a speed test needs \"kernel\" (a ratio to the baseline) or \"metric\" "
                              "(an absolute measure)");
        return -1;
    }
    if (x->over[0] && !strcmp(x->over, x->kernel)) {
        snprintf(err, errlen, "\"over\" names the test's own \"kernel\" (%s): the ratio would always be 1", x->kernel);
        return -1;
    }
    if (!json_object_get(o, "full_at")) {
        snprintf(err, errlen, "missing \"full_at\"");
        return -1;
    }
    if (!(x->full_at > x->zero_at && x->zero_at >= 0)) {
        snprintf(err, errlen, "speed needs \"full_at\" > \"zero_at\" >= 0");
        return -1;
    }
    if (!m && !(x->implausible_above > x->full_at)) {
        snprintf(err, errlen, "\"implausible_above\" %g must be above \"full_at\" %g (a ratio above it fails "
                              "the test; at or below full_at no run could earn full points)", x->implausible_above,
                 x->full_at);
        return -1;
    }
    if (m && json_object_get(o, "implausible_above")) {
        snprintf(err, errlen, "\"implausible_above\" is for a ratio test (a \"kernel\"); an absolute "
                              "\"metric\" has its own ceiling");
        return -1;
    }
    if (m && x->full_at > m->max) {
        snprintf(err, errlen, "\"full_at\" %g is beyond what \"%s\" can reach (%g): %s", x->full_at, m->name,
                 m->max, m->meaning);
        return -1;
    }
    return 0;
}

/* All or nothing: a rubric with one bad test is reported, not half-used,
 * so points can never silently go missing. */
static int load(const char *root, const char *nn, rubric_t *r, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/autograder/rubrics/%s.json", root, nn) >= (int)sizeof path) {
        /* Cut, it would read another file, or say "no rubric yet" of one that is there. */
        snprintf(err, errlen, "autograder/rubrics/%s.json: the path %.80s... is %zu bytes or more, past the %zu a "
                 "path may have here; move the course tree to a shorter path", nn, path, sizeof path, sizeof path);
        errno = ENAMETOOLONG;
        return -1;
    }
    json_error_t je;
    if (access(path, F_OK) != 0) {
        snprintf(err, errlen, "no rubric yet (autograder/rubrics/%s.json)", nn);
        return -1;
    }
    /* A key given twice would be read as its last value, with no word about the first. */
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        snprintf(err, errlen, "autograder/rubrics/%s.json: %s (line %d)", nn, je.text, je.line);
        return -1;
    }
    char e[384] = "";
    int rc = -1;
    int dflt_timeout = 0;
    int dflt_ranks = 1;
    json_t *tests = json_object_get(j, "tests");
    if (!json_is_object(j)) {
        snprintf(e, sizeof e, "a rubric is one JSON object: {\"lab\": ..., \"tests\": [...]}");
        goto out;
    }
    if (get_str(j, "lab", r->lab, sizeof r->lab, STR_REQUIRED | STR_NONEMPTY, e, sizeof e) ||
        check_lab(r->lab, nn, e, sizeof e) ||
        get_str(j, "title", r->title, sizeof r->title, 0, e, sizeof e) ||
        get_timeout(j, &dflt_timeout, 0, e, sizeof e) || get_ranks(j, &dflt_ranks, 1, e, sizeof e) ||
        known_fields(j, top_fields, "a rubric", e, sizeof e))
        goto out;
    snprintf(r->nn, sizeof r->nn, "%s", nn);
    json_t *files = json_object_get(j, "student_files"), *fv;
    size_t fi;
    if (files && (!json_is_array(files) || json_array_size(files) > 16)) {
        snprintf(e, sizeof e, "\"student_files\" must be a list of at most 16 file names");
        goto out;
    }
    json_array_foreach(files, fi, fv) {
        const char *s = json_is_string(fv) ? json_string_value(fv) : NULL;
        /* Plain names only: a rubric cannot make the grader copy ../anything. */
        if (!s || !s[0] || strchr(s, '/') || s[0] == '.' || strlen(s) >= sizeof r->files[0]) {
            snprintf(e, sizeof e, "\"student_files\" must hold plain file names");
            goto out;
        }
        if (!printable(s)) {
            snprintf(e, sizeof e, "\"student_files\" must hold file names of one line of printable text");
            goto out;
        }
        snprintf(r->files[r->nfiles++], sizeof r->files[0], "%s", s);
    }
    if (!json_is_array(tests) || json_array_size(tests) == 0 || json_array_size(tests) > GRADE_MAX_TESTS) {
        snprintf(e, sizeof e, "\"tests\" must be a list of 1 to %d tests", GRADE_MAX_TESTS);
        goto out;
    }
    size_t i;
    json_t *t;
    json_array_foreach(tests, i, t) {
        rubric_test_t *x = &r->tests[r->ntests];
        char kind[32] = "numerics";
        if (!json_is_object(t)) {
            snprintf(e, sizeof e, "a test is a JSON object: {\"name\": ..., \"kind\": ..., \"points\": ...}");
            goto bad_test;
        }
        if (get_str(t, "name", x->name, sizeof x->name, STR_REQUIRED | STR_NONEMPTY, e, sizeof e) ||
            get_str(t, "kind", kind, sizeof kind, 0, e, sizeof e) ||
            get_num(t, "points", &x->points, -1, e, sizeof e) ||
            get_timeout(t, &x->timeout_s, dflt_timeout, e, sizeof e) ||
            get_ranks(t, &x->ranks, dflt_ranks, e, sizeof e))
            goto bad_test;
        if (!json_object_get(t, "points")) {
            snprintf(e, sizeof e, "missing \"points\": give each test its points, from 0 to %d", MAX_POINTS);
            goto bad_test;
        }
        if (!(x->points >= 0 && x->points <= MAX_POINTS)) {
            snprintf(e, sizeof e, "\"points\" must be a number >= 0 and at most %d", MAX_POINTS);
            goto bad_test;
        }
        json_t *bo = json_object_get(t, "bonus");
        if (bo && !json_is_boolean(bo)) { snprintf(e, sizeof e, "\"bonus\" must be true or false"); goto bad_test; }
        x->bonus = json_is_true(bo);
        if (!strcmp(kind, "numerics")) {
            x->kind = KIND_NUMERICS;
            if (known_fields(t, numerics_fields, "a numerics test", e, sizeof e) ||
                get_str(t, "check", x->check, sizeof x->check, STR_REQUIRED | STR_NONEMPTY, e, sizeof e))
                goto bad_test;
            json_t *ms = json_object_get(t, "may_skip");
            if (ms && !json_is_boolean(ms)) { snprintf(e, sizeof e, "\"may_skip\" must be true or false"); goto bad_test; }
            x->may_skip = json_is_true(ms);
        } else if (!strcmp(kind, "speed")) {
            x->kind = KIND_SPEED;
            if (known_fields(t, speed_fields, "a speed test", e, sizeof e) ||
                get_str(t, "kernel", x->kernel, sizeof x->kernel, STR_NONEMPTY, e, sizeof e) ||
                get_str(t, "metric", x->metric, sizeof x->metric, 0, e, sizeof e) ||
                get_str(t, "baseline", x->baseline, sizeof x->baseline, STR_NONEMPTY, e, sizeof e) ||
                get_str(t, "over", x->over, sizeof x->over, STR_NONEMPTY, e, sizeof e) ||
                get_str(t, "bench_args", x->bench_args, sizeof x->bench_args, 0, e, sizeof e) ||
                get_num(t, "full_at", &x->full_at, -1, e, sizeof e) ||
                get_num(t, "zero_at", &x->zero_at, 0, e, sizeof e) ||
                get_num(t, "implausible_above", &x->implausible_above, GRADE_IMPLAUSIBLE_RATIO, e, sizeof e) ||
                check_speed(t, x, e, sizeof e))
                goto bad_test;
            /* Messages name the kernel it is over: the whole name, never one cut to fit. */
            _Static_assert(sizeof x->baseline == sizeof x->over, "\"over\" is copied whole into baseline");
            if (x->over[0] && !x->baseline[0]) memcpy(x->baseline, x->over, sizeof x->baseline);
            if (!x->metric[0] && !x->baseline[0]) snprintf(x->baseline, sizeof x->baseline, "the baseline");
        } else {
            snprintf(e, sizeof e, "\"kind\" must be \"numerics\" or \"speed\", not \"%s\"", kind);
            goto bad_test;
        }
        json_t *req = json_object_get(t, "requires"), *q;
        size_t k;
        if (req && (!json_is_array(req) || json_array_size(req) > GRADE_MAX_REQUIRES)) {
            snprintf(e, sizeof e, "\"requires\" must be a list of check names");
            goto bad_test;
        }
        json_array_foreach(req, k, q) {
            if (!json_is_string(q) || strlen(json_string_value(q)) >= sizeof x->requires[0]) {
                snprintf(e, sizeof e, "\"requires\" must be a list of check names");
                goto bad_test;
            }
            if (!printable(json_string_value(q))) {
                snprintf(e, sizeof e, "\"requires\" must hold check names of one line of printable text");
                goto bad_test;
            }
            snprintf(x->requires[x->nrequires++], sizeof x->requires[0], "%s", json_string_value(q));
        }
        /* A benchmark's own screen checks one large shape; the edge cases
         * (sizes of 1, primes, tile edges) are the numerics checks', so a
         * speed test that requires none would pay a kernel that is wrong
         * at the edges. */
        if (x->kind == KIND_SPEED && x->nrequires == 0) {
            snprintf(e, sizeof e, "speed test \"%s\" has no \"requires\": list the numerics checks its kernel "
                     "must pass first, or a kernel that is wrong at the edges earns its points", x->name);
            goto bad_test;
        }
        r->ntests++;
        continue;
    bad_test:
        snprintf(err, errlen, "autograder/rubrics/%s.json, test %zu: %s", nn, i + 1, e);
        json_decref(j);
        return -1;
    }
    /* Results, the table and a test chosen by name tell tests apart by their names. */
    for (int a = 0; a < r->ntests; a++)
        for (int b = a + 1; b < r->ntests; b++)
            if (!strcmp(r->tests[a].name, r->tests[b].name)) {
                snprintf(e, sizeof e, "tests %d and %d are both named \"%s\": give each its own name, since the "
                         "results tell tests apart by name", a + 1, b + 1, r->tests[a].name);
                goto out;
            }
    /* Every required check must be one this rubric grades, or it could never pass. */
    for (int a = 0; a < r->ntests; a++)
        for (int q = 0; q < r->tests[a].nrequires; q++) {
            int found = 0;
            for (int b = 0; b < r->ntests; b++)
                found |= r->tests[b].kind == KIND_NUMERICS && !strcmp(r->tests[b].check, r->tests[a].requires[q]);
            if (!found) {
                snprintf(e, sizeof e, "test \"%s\" requires \"%s\", which no numerics test checks",
                         r->tests[a].name, r->tests[a].requires[q]);
                goto out;
            }
        }
    rc = 0;
out:
    if (rc) snprintf(err, errlen, "autograder/rubrics/%s.json: %s", nn, e);
    json_decref(j);
    return rc;
}

/* A refusal is one line of UTF-8: the grader prints it as a line of its own
 * and puts it in results.json, and it may quote the rubric's bytes (jansson
 * quotes those near a parse error, known_fields a misspelt key) with a
 * newline or a terminal escape among them, or a character cut in two where
 * jansson's quote stops at a bad escape. Each such byte is shown as '?'. */
int rubric_load(const char *root, const char *nn, rubric_t *r, char *err, size_t errlen) {
    int rc = load(root, nn, r, err, errlen);
    if (rc && errlen)
        for (unsigned char *c = (unsigned char *)err; *c;) {
            int k = course_utf8_len(c);
            if (k == 0 || *c < 0x20 || *c == 0x7f) *c = '?', k = 1;
            c += k;
        }
    return rc;
}
