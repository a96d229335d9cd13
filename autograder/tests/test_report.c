/*
 * Unit tests of autograder/src/report.c that test_grade.c's test_table_*,
 * test_json_* and test_rerun_* leave open (part of `make test`, milliseconds):
 * how points are rounded in the table, the test column of a table whose
 * longest name is shorter than the widest column, the lab column cut to its
 * width, the header's labels over the columns they name, the summary's
 * points in a buffer too short for them, and results.json's output for a
 * test with the longest message and figure a result holds. Linked with
 * report.c, speed.c (the leaderboard's metrics) and common/json.c only: no
 * grading run, no temp tree.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "grade.h"
#include "report_fixture.h"

/* The line of text that starts with prefix (without its newline), in a static buffer. */
static const char *line_of(const char *text, const char *prefix) {
    static char line[1024];
    for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, prefix, strlen(prefix))) {
            snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
            return line;
        }
    fail_msg("no line starting with '%s' in:\n%s", prefix, text);
    return NULL;
}

/* Points are rounded to two decimals, then their trailing zeros dropped: a
 * third of a point is 0.33, two thirds 0.67, and 2 - 1e-9 is 2, in a row
 * and in the TOTAL. */
static void test_table_points_rounded(void **state) {
    (void)state;
    rubric_test_t t = {0};
    snprintf(t.name, sizeof t.name, "mma: primes");
    t.points = 2;
    result_t r[3] = {made_result(&t, ST_PARTIAL, 1.0 / 3, 1), made_result(&t, ST_PARTIAL, 2.0 / 3, 1),
                     made_result(&t, ST_PARTIAL, 2.0 - 1e-9, 1)};
    char text[16384];
    snprintf(text, sizeof text, "%s", table_of(r, 3));
    const char *want[] = {"   0.33/2 ", "   0.67/2 ", "      2/2 "};
    const char *row = text;
    for (int i = 0; i < 3; i++) {
        row = strstr(row, "\n04-tensor-cores");
        if (!row) fail_msg("row %d is missing:\n%s", i, text);
        row++;
        /* lab (26), a space, the test column (35), a space, status (12), a space, then the points (9) */
        if (strncmp(row + 27 + 36 + 13, want[i], 10)) fail_msg("row %d's points should read '%s':\n%s", i, want[i], text);
    }
    if (!strstr(text, "TOTAL 3 / 6 points (50.0%); graded in 1 s\n"))
        fail_msg("1/3 + 2/3 + 2 points should total 3 / 6:\n%s", text);
}

/* The CSV's cells: hundredths, never rounded up onto the maximum (4.996 of
 * 5 read "5.00" beside a partial in the table), a number below a
 * hundredth, and rounding noise and bonus points past the maximum as they are. */
static void test_csv_points(void **state) {
    (void)state;
    const struct { double v, max; const char *want; } cases[] = {
        {4.996, 5, "4.99"}, {5, 5, "5.00"}, {5 - 1e-9, 5, "5.00"}, {0.004, 5, "0.00"}, {0, 5, "0.00"},
        {2.345, 5, "2.35"}, {1.0 / 3 + 2.0 / 3, 1, "1.00"}, {6.5, 5, "6.50"}, {99.999, 100, "99.99"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char b[32];
        points_for_csv(b, sizeof b, cases[i].v, cases[i].max);
        if (strcmp(b, cases[i].want)) fail_msg("%.9g of %g: '%s', want '%s'", cases[i].v, cases[i].max, b, cases[i].want);
    }
}

/* The test column is as wide as the longest name and a space (when that
 * is over the 35 of the narrowest column): a 40-character name, the
 * longest of its table, is shown whole, with two spaces after it. */
static void test_table_name_column(void **state) {
    (void)state;
    rubric_test_t t = {0};
    const char *name = "a name of forty characters, more or less";
    assert_int_equal(strlen(name), 40);
    snprintf(t.name, sizeof t.name, "%s", name);
    t.points = 1;
    result_t r = made_result(&t, ST_PASS, 1, 1);
    const char *row = line_of(table_of(&r, 1), "04-tensor-cores");
    char want[128];
    snprintf(want, sizeof want, "%s  pass ", name);
    if (strncmp(row + 27, want, strlen(want))) fail_msg("a 40-character name should be shown whole:\n%s", row);
}

/* A lab's name longer than its column (26 characters) is cut there, so the
 * test's name still starts under "test". */
static void test_table_lab_cut(void **state) {
    (void)state;
    rubric_test_t t = {0};
    snprintf(t.name, sizeof t.name, "mma: primes");
    t.points = 1;
    result_t r = made_result(&t, ST_PASS, 1, 1);
    snprintf(r.lab, sizeof r.lab, "07-a-lab-with-a-name-far-too-long-for-it");
    const char *row = line_of(table_of(&r, 1), "07-");
    assert_int_equal(strncmp(row, "07-a-lab-with-a-name-far-t mma: primes ", 39), 0);
}

/* Each header label sits over its column: "test" and "status" where those
 * start, "points" and "figure" right-aligned as the values under them are,
 * "message" where a message starts; for the narrowest test column and the
 * widest. */
static void test_table_header(void **state) {
    (void)state;
    rubric_test_t t = {0};
    snprintf(t.name, sizeof t.name, "mma: primes");
    t.points = 2;
    for (int wide = 0; wide < 2; wide++) {
        if (wide) memset(t.name, 'n', 80), t.name[80] = '\0';
        result_t r = made_result(&t, ST_PARTIAL, 1.5, 1);
        snprintf(r.figure, sizeof r.figure, "figure=12chr");
        snprintf(r.message, sizeof r.message, "the message");
        char text[16384];
        snprintf(text, sizeof text, "%s", table_of(&r, 1));
        char header[1024], row[1024];
        snprintf(header, sizeof header, "%s", line_of(text, "lab "));
        snprintf(row, sizeof row, "%s", line_of(text, "04-tensor-cores"));
        size_t name_at = 27, w = wide ? 57 : 35, status_at = name_at + w + 1, points_end = status_at + 13 + 9,
               figure_end = points_end + 1 + 12, message_at = figure_end + 2;
        if (strncmp(header + name_at, "test ", 5) || strncmp(row + name_at, wide ? "nnn" : "mma: primes", 3) ||
            strncmp(header + status_at, "status ", 7) || strncmp(row + status_at, "partial ", 8) ||
            strncmp(header + points_end - 6, "points ", 7) || strncmp(row + points_end - 5, "1.5/2 ", 6) ||
            strncmp(header + figure_end - 6, "figure  ", 8) || strncmp(row + figure_end - 12, "figure=12chr  ", 14) ||
            strcmp(header + message_at, "message") || strcmp(row + message_at, "the message"))
            fail_msg("a %d-character test column: the header's labels should sit over their columns:\n%s\n%s",
                     (int)w, header, row);
    }
}

/* The summary's points in a buffer too short for them are cut, never
 * written past its end: the regular points, or the bonus after them. */
static void test_points_short_buffer(void **state) {
    (void)state;
    rubric_test_t t = {0}, b = {0};
    snprintf(t.name, sizeof t.name, "mma: primes");
    t.points = 2;
    snprintf(b.name, sizeof b.name, "wgmma: primes");
    b.points = 1;
    b.bonus = 1;
    result_t r[2] = {made_result(&t, ST_PASS, 2, 1), made_result(&b, ST_PASS, 1, 1)};
    char buf[64];
    memset(buf, '#', sizeof buf);
    results_points(buf, 12, r, 2);
    assert_string_equal(buf, "2.00 / 2.00");
    for (size_t i = 12; i < sizeof buf; i++)
        if (buf[i] != '#') fail_msg("byte %zu past the 12 of the buffer was written", i);
    memset(buf, '#', sizeof buf);
    results_points(buf, 25, r, 2); /* "2.00 / 2.00 points" and its NUL fit, the bonus does not */
    assert_string_equal(buf, "2.00 / 2.00 points + 1.0");
    for (size_t i = 25; i < sizeof buf; i++)
        if (buf[i] != '#') fail_msg("byte %zu past the 25 of the buffer was written", i);
    results_points(buf, sizeof buf, r, 2);
    assert_string_equal(buf, "2.00 / 2.00 points + 1.00 bonus");
}

/* A test's output in results.json holds its status, its whole figure and its
 * whole message, however long (up to what a result holds: 63 and 511
 * characters), then the check's output. */
static void test_json_long_message(void **state) {
    (void)state;
    rubric_test_t t = {0};
    snprintf(t.name, sizeof t.name, "mma: primes");
    t.points = 2;
    result_t r = made_result(&t, ST_FAIL, 0, 1);
    memset(r.figure, 'f', sizeof r.figure - 1);
    memset(r.message, 'm', sizeof r.message - 1);
    r.output = "the output\n";
    const char *tdir = getenv("TMPDIR");
    char tpath[4096];
    snprintf(tpath, sizeof tpath, "%s/test_report.XXXXXX", tdir && tdir[0] ? tdir : "/tmp");
    int fd = mkstemp(tpath);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(report_json(tpath, &r, 1, 1.0, "notes"), 0);
    json_t *j = json_load_file(tpath, 0, NULL);
    unlink(tpath);
    assert_non_null(j);
    const char *out = json_string_value(json_object_get(json_array_get(json_object_get(j, "tests"), 0), "output"));
    assert_non_null(out);
    char want[1024];
    snprintf(want, sizeof want, "fail | %s | %s\n\nthe output\n", r.figure, r.message);
    assert_string_equal(out, want);
    json_decref(j);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_points_rounded),
        cmocka_unit_test(test_table_name_column),
        cmocka_unit_test(test_table_lab_cut),
        cmocka_unit_test(test_table_header),
        cmocka_unit_test(test_csv_points),
        cmocka_unit_test(test_points_short_buffer),
        cmocka_unit_test(test_json_long_message),
    };
    if (getenv("REPORT_TEST_FILTER") && getenv("REPORT_TEST_FILTER")[0])
        cmocka_set_test_filter(getenv("REPORT_TEST_FILTER"));
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
