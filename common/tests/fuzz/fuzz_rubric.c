/*
 * libFuzzer harness: reading a lab's rubric (rubric_load in
 * autograder/src/rubric.c). Instructors edit autograder/rubrics/NN.json by
 * hand: a mistake in one must be refused with a message, never graded on.
 *
 * Feeds: the input, byte for byte, as autograder/rubrics/NN.json of a
 * scratch course tree; NN is the first two characters of its "lab" when
 * they are digits (a rubric names its own lab), else 00.
 * Asserts: no crash, hang or leak; a refusal says so in err, one
 * NUL-ended line of UTF-8 that names the file. A rubric that loads is what jansson
 * reads in the same bytes, field by field: every string whole and
 * NUL-ended in its field (a longer one refused, never cut), every list
 * whole within its array, the defaults where a field is absent (a required
 * one is never defaulted), no key given twice, no field that is not one of
 * its kind's, points finite and >= 0 with a finite total, reachable speed
 * thresholds, each required check graded by a numerics test, strings of
 * one printable line, no two tests of one name, and a lab folder that is a
 * plain name starting NN-.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grade.h"
#include "json.h"

static char root[256], dir[320], path[400];

/* Stop with a reason: libFuzzer saves the input. */
#define CHECK(cond, ...)                                                                                      \
    do {                                                                                                      \
        if (!(cond)) {                                                                                        \
            fprintf(stderr, "fuzz_rubric: " __VA_ARGS__);                                                     \
            fputc('\n', stderr);                                                                              \
            abort();                                                                                          \
        }                                                                                                     \
    } while (0)

static void remove_root(void) {
    unlink(path);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/autograder", root);
    rmdir(dir);
    rmdir(root);
}

/* The scratch course tree: root/autograder/rubrics/, made once. */
static void make_root(void) {
    const char *t = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/fuzz_rubric.XXXXXX", t && t[0] ? t : "/tmp");
    if (!mkdtemp(root)) abort();
    snprintf(dir, sizeof dir, "%s/autograder", root);
    if (mkdir(dir, 0700) != 0) abort();
    snprintf(dir, sizeof dir, "%s/autograder/rubrics", root);
    if (mkdir(dir, 0700) != 0) abort();
    atexit(remove_root);
}

/* A string field fits its array with its NUL, and is what jansson read
 * (want; "" when the member is absent and may be). */
static void same_str(const char *what, const char *got, size_t size, const char *want) {
    CHECK(memchr(got, '\0', size), "%s is not NUL-ended within its %zu bytes", what, size);
    CHECK(!strcmp(got, want), "%s is \"%s\"; the rubric says \"%s\"", what, got, want);
}

/* A member's string, or dflt when it is absent; a member of another type
 * must have been refused. */
static const char *str_or(json_t *o, const char *key, const char *dflt) {
    json_t *v = json_object_get(o, key);
    if (!v) return dflt;
    CHECK(json_is_string(v), "\"%s\" was accepted as a %d (not a string)", key, json_typeof(v));
    return json_string_value(v);
}

/* A member's number, or dflt when absent. */
static double num_or(json_t *o, const char *key, double dflt) {
    json_t *v = json_object_get(o, key);
    if (!v) return dflt;
    CHECK(json_is_number(v), "\"%s\" was accepted, and is no number", key);
    return json_number_value(v);
}

/* A member's whole number from lo to hi, or dflt when absent. */
static long int_or(json_t *o, const char *key, long lo, long hi, long dflt) {
    json_t *v = json_object_get(o, key);
    if (!v) return dflt;
    CHECK(json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi,
          "\"%s\" was accepted outside %ld..%ld or not whole", key, lo, hi);
    return (long)json_integer_value(v);
}

/* A member true or false, or absent (false). */
static int bool_of(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    CHECK(!v || json_is_boolean(v), "\"%s\" was accepted, and is not true or false", key);
    return json_is_true(v);
}

/* Every member of o is one of fields (NULL-ended). */
static void only_fields(json_t *o, const char *const *fields, const char *what) {
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        int known = 0;
        for (const char *const *f = fields; *f; f++) known |= !strcmp(*f, key);
        CHECK(known, "%s was accepted with a field \"%s\" it does not have", what, key);
    }
}

/* One printable line: a name is printed in the grader's table, and a check's
 * is matched in a verdict line. */
static void one_line(const char *what, const char *s) {
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        CHECK(*c >= 0x20 && *c != 0x7f, "%s holds the control byte 0x%02x", what, *c);
}

static const char *const top_fields[] = {"lab", "title", "timeout_s", "ranks", "student_files", "tests", NULL};
static const char *const num_fields[] = {"name", "kind", "points", "bonus", "timeout_s", "ranks", "requires",
                                         "check", "may_skip", NULL};
static const char *const speed_fields[] = {"name", "kind", "points", "bonus", "timeout_s", "ranks", "requires",
                                           "kernel", "over", "baseline", "metric", "full_at", "zero_at",
                                           "implausible_above", "bench_args", NULL};

/* A loaded test against its JSON object t; lab_timeout and lab_ranks are
 * the rubric's defaults. */
static void same_test(const rubric_test_t *x, json_t *t, long lab_timeout, long lab_ranks) {
    CHECK(json_is_object(t), "a test that is no object was accepted");
    same_str("a name", x->name, sizeof x->name, str_or(t, "name", ""));
    CHECK(x->name[0], "a test without a name was accepted");
    one_line("a name", x->name);
    const char *kind = str_or(t, "kind", "numerics");
    CHECK(!strcmp(kind, "numerics") || !strcmp(kind, "speed"), "kind \"%s\" was accepted", kind);
    CHECK(x->kind == (!strcmp(kind, "speed") ? KIND_SPEED : KIND_NUMERICS), "test \"%s\": kind %d for \"%s\"",
          x->name, x->kind, kind);
    CHECK(json_object_get(t, "points"), "test \"%s\" has no points, and was accepted", x->name);
    CHECK(x->points == num_or(t, "points", -1), "test \"%s\": points %g", x->name, x->points);
    CHECK(isfinite(x->points) && x->points >= 0 && !signbit(x->points), "test \"%s\": points %g", x->name, x->points);
    CHECK(x->bonus == bool_of(t, "bonus"), "test \"%s\": bonus %d", x->name, x->bonus);
    CHECK(x->timeout_s == int_or(t, "timeout_s", 1, 86400, lab_timeout), "test \"%s\": timeout_s %d", x->name,
          x->timeout_s);
    CHECK(x->ranks == int_or(t, "ranks", 1, GRADE_MAX_RANKS, lab_ranks), "test \"%s\": ranks %d", x->name, x->ranks);

    json_t *req = json_object_get(t, "requires");
    CHECK(!req || json_is_array(req), "test \"%s\": \"requires\" that is no list was accepted", x->name);
    CHECK(x->nrequires >= 0 && x->nrequires <= GRADE_MAX_REQUIRES && (size_t)x->nrequires == json_array_size(req),
          "test \"%s\": %d requires of %zu", x->name, x->nrequires, json_array_size(req));
    for (int q = 0; q < x->nrequires; q++) {
        json_t *v = json_array_get(req, (size_t)q);
        CHECK(json_is_string(v), "test \"%s\": a required check that is no string was accepted", x->name);
        same_str("a required check", x->requires[q], sizeof x->requires[q], json_string_value(v));
        one_line("a required check", x->requires[q]);
    }

    if (x->kind == KIND_NUMERICS) {
        only_fields(t, num_fields, "a numerics test");
        same_str("a check", x->check, sizeof x->check, str_or(t, "check", ""));
        CHECK(x->check[0], "test \"%s\": no check, and accepted", x->name);
        one_line("a check", x->check);
        CHECK(x->may_skip == bool_of(t, "may_skip"), "test \"%s\": may_skip %d", x->name, x->may_skip);
        return;
    }
    only_fields(t, speed_fields, "a speed test");
    CHECK(x->nrequires > 0, "speed test \"%s\" requires nothing, and was accepted", x->name);
    CHECK(!x->check[0] && !x->may_skip, "speed test \"%s\" has a check or may_skip", x->name);
    const char *metric = str_or(t, "metric", ""), *over = str_or(t, "over", "");
    same_str("a kernel", x->kernel, sizeof x->kernel, str_or(t, "kernel", ""));
    same_str("a metric", x->metric, sizeof x->metric, metric);
    same_str("an over", x->over, sizeof x->over, over);
    same_str("bench_args", x->bench_args, sizeof x->bench_args, str_or(t, "bench_args", ""));
    /* What messages name: the baseline, else the kernel it is over, else "the baseline" (ratio only). */
    const char *base = str_or(t, "baseline", over[0] ? over : json_object_get(t, "metric") ? "" : "the baseline");
    same_str("a baseline", x->baseline, sizeof x->baseline, base);
    const char *s[] = {x->kernel, x->metric, x->over, x->baseline, x->bench_args};
    for (int i = 0; i < 5; i++) one_line("a speed test's field", s[i]);
    CHECK(json_object_get(t, "full_at"), "speed test \"%s\" without full_at was accepted", x->name);
    CHECK(x->full_at == num_or(t, "full_at", -1) && x->zero_at == num_or(t, "zero_at", 0),
          "speed test \"%s\": full_at %g, zero_at %g", x->name, x->full_at, x->zero_at);
    CHECK(x->full_at > x->zero_at && x->zero_at >= 0 && !signbit(x->zero_at) && isfinite(x->full_at),
          "speed test \"%s\": full_at %g, zero_at %g", x->name, x->full_at, x->zero_at);
    if (json_object_get(t, "metric")) {
        const speed_metric_t *m = speed_metric_find(x->metric);
        CHECK(m, "unknown metric \"%s\" was accepted", x->metric);
        CHECK(x->full_at <= m->max, "full_at %g past %s's %g was accepted", x->full_at, m->name, m->max);
        CHECK(!x->kernel[0] && !x->over[0] && !json_object_get(t, "baseline") &&
              !json_object_get(t, "implausible_above"), "speed test \"%s\" is both a metric and a ratio", x->name);
        return;
    }
    CHECK(x->kernel[0], "speed test \"%s\" is neither kind", x->name);
    CHECK(strcmp(x->over, x->kernel), "speed test \"%s\" is over its own kernel", x->name);
    CHECK(x->implausible_above == num_or(t, "implausible_above", GRADE_IMPLAUSIBLE_RATIO) &&
          x->implausible_above > x->full_at, "speed test \"%s\": implausible_above %g", x->name, x->implausible_above);
}

/* A rubric that loaded, against what jansson reads in the same bytes. */
static void same_rubric(const rubric_t *r, const char *nn, const uint8_t *data, size_t size) {
    json_error_t je;
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (!j && json_loadb((const char *)data, size, 0, &je)) CHECK(0, "a rubric with a key given twice was accepted");
    CHECK(j, "a rubric jansson does not read was accepted: %s", je.text);
    CHECK(json_is_object(j), "a rubric that is no object was accepted");
    only_fields(j, top_fields, "a rubric");
    same_str("the lab", r->lab, sizeof r->lab, str_or(j, "lab", ""));
    same_str("the title", r->title, sizeof r->title, str_or(j, "title", ""));
    same_str("the number", r->nn, sizeof r->nn, nn);
    one_line("the lab", r->lab);
    one_line("the title", r->title);
    /* The lab's folder, labs/<lab>/: this rubric's own, never another's or a path. */
    CHECK(!strncmp(r->lab, nn, 2) && r->lab[2] == '-' && !strchr(r->lab, '/'), "lab \"%s\" in rubric %s was accepted",
          r->lab, nn);

    json_t *files = json_object_get(j, "student_files");
    CHECK(!files || json_is_array(files), "student_files that is no list was accepted");
    CHECK(r->nfiles >= 0 && r->nfiles <= 16 && (size_t)r->nfiles == json_array_size(files), "%d student files of %zu",
          r->nfiles, json_array_size(files));
    for (int f = 0; f < r->nfiles; f++) {
        json_t *v = json_array_get(files, f);
        CHECK(json_is_string(v), "a student file that is no string was accepted");
        same_str("a student file", r->files[f], sizeof r->files[f], json_string_value(v));
        CHECK(r->files[f][0] && r->files[f][0] != '.' && !strchr(r->files[f], '/'), "student file \"%s\" was accepted",
              r->files[f]);
        one_line("a student file", r->files[f]);
    }

    long lab_timeout = int_or(j, "timeout_s", 1, 86400, 0), lab_ranks = int_or(j, "ranks", 1, GRADE_MAX_RANKS, 1);
    json_t *tests = json_object_get(j, "tests");
    CHECK(json_is_array(tests), "a rubric without a list of tests was accepted");
    CHECK(r->ntests >= 1 && r->ntests <= GRADE_MAX_TESTS && (size_t)r->ntests == json_array_size(tests),
          "%d tests of %zu", r->ntests, json_array_size(tests));
    double total = 0;
    for (int i = 0; i < r->ntests; i++) {
        same_test(&r->tests[i], json_array_get(tests, i), lab_timeout, lab_ranks);
        total += r->tests[i].points;
    }
    CHECK(isfinite(total), "the tests' points add up to %g", total);
    /* The results tell tests apart by name. */
    for (int a = 0; a < r->ntests; a++)
        for (int b = a + 1; b < r->ntests; b++)
            CHECK(strcmp(r->tests[a].name, r->tests[b].name), "tests %d and %d share the name \"%s\"", a + 1, b + 1,
                  r->tests[a].name);
    /* A required check that no numerics test grades could never pass. */
    for (int a = 0; a < r->ntests; a++)
        for (int q = 0; q < r->tests[a].nrequires; q++) {
            int found = 0;
            for (int b = 0; b < r->ntests; b++)
                found |= r->tests[b].kind == KIND_NUMERICS && !strcmp(r->tests[b].check, r->tests[a].requires[q]);
            CHECK(found, "test \"%s\" requires \"%s\", which no test checks", r->tests[a].name, r->tests[a].requires[q]);
        }
    json_decref(j);
}

/* The rubric's number: the first two characters of its "lab" when digits. */
static void number_of(const uint8_t *data, size_t size, char nn[3]) {
    snprintf(nn, 3, "00");
    json_t *j = json_loadb((const char *)data, size, 0, NULL);
    const char *lab = json_string_value(json_object_get(j, "lab"));
    if (lab && lab[0] >= '0' && lab[0] <= '9' && lab[1] >= '0' && lab[1] <= '9') snprintf(nn, 3, "%.2s", lab);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!root[0]) make_root();
    char nn[3];
    number_of(data, size, nn);
    snprintf(path, sizeof path, "%s/%s.json", dir, nn);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();

    static rubric_t r;
    char err[512];
    memset(err, 'x', sizeof err); /* a refusal must write its message, NUL and all */
    int rc = rubric_load(root, nn, &r, err, sizeof err);
    unlink(path);
    if (rc != 0) {
        CHECK(rc == -1, "rubric_load returned %d", rc);
        CHECK(memchr(err, '\0', sizeof err), "the refusal's message is not NUL-ended");
        CHECK(err[0], "a refusal without a message");
        char file[64];
        snprintf(file, sizeof file, "autograder/rubrics/%s.json", nn);
        CHECK(strstr(err, file), "the refusal '%s' does not name %s", err, file);
        one_line("the refusal", err);
        for (const unsigned char *c = (const unsigned char *)err; *c; c += course_utf8_len(c))
            CHECK(course_utf8_len(c), "the refusal '%s' is not UTF-8 (a character cut?)", err);
        return 0;
    }
    same_rubric(&r, nn, data, size);
    return 0;
}
