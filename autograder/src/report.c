/*
 * What the grader writes: the table a person reads, and Gradescope's
 * results.json.
 *
 * One row per rubric test: lab, test, status, points, a key figure (the
 * test's time; for speed the % of the baseline, or the absolute measure such
 * as "MFU 31.2%") and a message (the check's first failure, the compile
 * error, "needs GPU"). Speed tests graded without a GPU are shown but left
 * out of the total, never counted as passed.
 */
#include "grade.h"
#include "json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The word the table and results.json show for a status. */
const char *status_name(status_t s) {
    switch (s) {
    case ST_PASS: return "pass";
    case ST_PARTIAL: return "partial";
    case ST_FAIL: return "fail";
    case ST_NOT_STARTED: return "not started";
    case ST_TIMEOUT: return "timeout";
    case ST_CRASH: return "crashed";
    case ST_BUILD_ERROR: return "build error";
    case ST_SKIPPED: return "skipped";
    case ST_NEEDS_GPU: return "needs GPU";
    case ST_NOT_GRADED: return "not graded";
    case ST_ERROR: return "grader error";
    }
    return "?";
}

/* The total counts only tests that were graded here (not "needs GPU"); a
 * bonus test's points add to the score but not to the maximum. */
double results_total(const result_t *r, int n, double *max) {
    double s = 0, m = 0;
    for (int i = 0; i < n; i++) {
        if (!r[i].counted) continue;
        s += r[i].score;
        if (!r[i].t->bonus) m += r[i].max_score;
    }
    if (max) *max = m;
    return s;
}

/* The part of the total that bonus tests earned. */
double results_bonus(const result_t *r, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        if (r[i].counted && r[i].t->bonus) s += r[i].score;
    return s;
}

static void fmt_earned(char *buf, size_t n, double v, double max, int zeros);

/* "21.50 / 22.00 points", with " + 3.00 bonus" when extra credit was earned:
 * the bonus is kept out of the first figure so that it never reads as more
 * than full marks. */
void results_points(char *buf, size_t len, const result_t *r, int n) {
    double max, bon = results_bonus(r, n), tot = results_total(r, n, &max) - bon;
    char a[24];
    fmt_earned(a, sizeof a, tot, max, 1);
    int k = snprintf(buf, len, "%s / %.2f points", a, max);
    if (bon > 0 && k > 0 && (size_t)k < len) snprintf(buf + k, len - (size_t)k, " + %.2f bonus", bon);
}

/* Points without trailing zeros: "3", "2.5", "1.25". */
static void fmt_points(char *buf, size_t n, double v) {
    snprintf(buf, n, "%.2f", v);
    char *e = buf + strlen(buf) - 1;
    while (e > buf && *e == '0') *e-- = '\0';
    if (*e == '.') *e = '\0';
}

/* Below this share of the maximum a difference is the rounding of the
 * sums that made the score (1/3 + 2/3), not points earned or lost. */
#define POINTS_NOISE 1e-6

/* That bound for a maximum of max points (of 1 point below 1). */
static double points_noise(double max) { return POINTS_NOISE * (max > 1 ? max : 1); }

/* Points earned of max, to hundredths, but never rounded onto either end:
 * 4.996 of 5 reads "4.99", not a full "5" beside a partial status, and
 * 0.004 reads "<0.01", not "0" (a difference of rounding noise, 2 - 1e-9,
 * still reads "2"). zeros: keep two decimals ("4.99", "22.00"). */
static void fmt_earned(char *buf, size_t n, double v, double max, int zeros) {
    char two[32];
    snprintf(two, sizeof two, "%.2f", v);
    double shown = strtod(two, NULL); /* printf's rounding, as everywhere else */
    const double noise = points_noise(max);
    if (max - v > noise && shown >= max) shown = floor(v * 100) / 100;
    if (v > noise && shown <= 0) {
        snprintf(buf, n, "<0.01");
        return;
    }
    if (zeros) snprintf(buf, n, "%.2f", shown);
    else fmt_points(buf, n, shown);
}

/* A CSV's points (a gradebook's import reads numbers): hundredths, never
 * rounded up onto max, as in the table ("4.99" of 5, not "5.00"); below a
 * hundredth, "0.00", since a number must stand there. */
void points_for_csv(char *buf, size_t n, double v, double max) {
    fmt_earned(buf, n, v, max, 1);
    if (!strcmp(buf, "<0.01")) snprintf(buf, n, "0.00");
}

/* "; left out of the total: 1 needs GPU, 9 skipped" (by status), or "" when
 * every test counts: a reader of the total should see why it is smaller. */
static void describe_left_out(const result_t *r, int n, char *out, size_t len) {
    out[0] = '\0';
    for (int s = 0; s <= ST_ERROR; s++) {
        int k = 0;
        for (int i = 0; i < n; i++) k += !r[i].counted && (int)r[i].status == s;
        if (k)
            snprintf(out + strlen(out), len - strlen(out), "%s%d %s", out[0] ? ", " : "; left out of the total: ", k,
                     status_name((status_t)s));
    }
}

/* The test column: as wide as the longest name and a space (at least 35,
 * at most 57 characters), so that two spaces always part a name from its
 * status; a longer name is cut with "..." rather than run into the next
 * column. */
#define TABLE_NAME_MIN 35
#define TABLE_NAME_MAX 57

/* A line of dashes as wide as the table. */
static void table_rule(int width) {
    for (int i = 0; i < width; i++) putchar('-');
    putchar('\n');
}

/* Fixed columns, so a pasted table lines up in an issue or an e-mail. */
void report_table(const result_t *r, int n, const char *title, double wall_s) {
    int w = TABLE_NAME_MIN;
    for (int i = 0; i < n; i++) {
        int l = (int)strlen(r[i].t->name) + 1;
        if (l > w) w = l < TABLE_NAME_MAX ? l : TABLE_NAME_MAX;
    }
    int width = 130 - 34 + w; /* the rule under the header: as it was with the old 34-character column */
    printf("\n%s\n", title);
    printf("%-26s %-*s %-12s %9s %12s  %s\n", "lab", w, "test", "status", "points", "figure", "message");
    table_rule(width);
    int cut = 0;
    for (int i = 0; i < n; i++) {
        char name[TABLE_NAME_MAX + 1];
        if ((int)strlen(r[i].t->name) < w) snprintf(name, sizeof name, "%s", r[i].t->name);
        else snprintf(name, sizeof name, "%.*s...", w - 4, r[i].t->name);
        char pts[48], a[16], b[16];
        cut |= strlen(r[i].message) > 100;
        fmt_earned(a, sizeof a, r[i].score, r[i].max_score, 0);
        fmt_points(b, sizeof b, r[i].max_score);
        if (r[i].counted) snprintf(pts, sizeof pts, "%s%s/%s", r[i].t->bonus ? "+" : "", a, b);
        else snprintf(pts, sizeof pts, "-/%s", b);
        printf("%-26.26s %-*s %-12s %9s %12.12s  %.100s\n", r[i].lab, w, name, status_name(r[i].status), pts,
               r[i].figure, r[i].message);
    }
    /* The regular points against their maximum, then the extra credit. */
    double max, bon = results_bonus(r, n), tot = results_total(r, n, &max) - bon;
    char a[16], b[16];
    fmt_earned(a, sizeof a, tot, max, 0);
    fmt_points(b, sizeof b, max);
    table_rule(width);
    char left_out[160], bonus[48] = "";
    describe_left_out(r, n, left_out, sizeof left_out);
    if (bon > 0) {
        char c[16];
        fmt_points(c, sizeof c, bon);
        snprintf(bonus, sizeof bonus, " + %s bonus", c);
    }
    /* The percentage to a tenth, never rounded onto either end either. */
    double pct = max > 0 ? 100.0 * tot / max : 0.0;
    char p[32];
    snprintf(p, sizeof p, "%.1f", pct);
    double pct_shown = strtod(p, NULL);
    const double noise = points_noise(max);
    if (max - tot > noise && pct_shown >= 100) pct_shown = floor(pct * 10) / 10;
    if (tot > noise && pct_shown <= 0) snprintf(p, sizeof p, "<0.1");
    else snprintf(p, sizeof p, "%.1f", pct_shown);
    printf("TOTAL %s / %s points (%s%%)%s%s; graded in %.0f s\n", a, b, p, bonus, left_out, wall_s);
    if (cut)
        printf("(messages are cut at 100 characters here: make check LAB=NN prints them whole, and --json keeps "
               "them whole)\n");
}

/* Whether the folder src is called name: "labs", "/course/labs", "labs/"
 * (a trailing slash, as the shell completes a folder, names the same one). */
static int folder_named(const char *src, const char *name) {
    size_t sl = strlen(src), nl = strlen(name);
    while (sl > 1 && src[sl - 1] == '/') sl--;
    if (sl < nl || strncmp(src + sl - nl, name, nl)) return 0;
    return sl == nl || src[sl - nl - 1] == '/';
}

void report_rerun_hint(const result_t *r, int n, unsigned long long seed, const char *src) {
    /* make check reads labs/ or solutions/ of this tree; from elsewhere the files must be put there first. */
    const char *tree = "", *elsewhere = NULL;
    if (folder_named(src, "solutions")) tree = " SRC=solutions";
    else if (!folder_named(src, "labs")) elsewhere = src;
    int shown = 0, more = 0;
    for (int i = 0; i < n; i++) {
        const rubric_test_t *t = r[i].t;
        if (t->kind != KIND_NUMERICS || !t->check[0]) continue;
        if (r[i].status != ST_FAIL && r[i].status != ST_TIMEOUT && r[i].status != ST_CRASH) continue;
        if (shown == 3) {
            more++;
            continue;
        }
        if (shown++ == 0) {
            printf("\nTo run a failed check alone, with its whole message, on this run's inputs:\n");
            if (elsewhere) {
                printf("  (make check reads labs/: put the files of %s there first)\n", elsewhere);
                printf("  (or grade one alone where it is: grade --src '%s' --lab %s --seed %llu --only '<check>' "
                       "--json FILE; the JSON's \"output\" holds the whole message)\n", elsewhere, r[i].nn, seed);
            }
        }
        /* A name with a quote would need escaping; the rubrics have none, but say it plainly if one does. */
        if (strchr(t->check, '\'')) printf("  make check LAB=%s%s SEED=%llu (the check '%s')\n", r[i].nn, tree, seed,
                                           t->check);
        else printf("  make check LAB=%s%s SEED=%llu ONLY='%s'\n", r[i].nn, tree, seed, t->check);
    }
    if (more) printf("  (and %d more failed check%s: the ONLY= names are the rubric's \"check\" fields)\n", more,
                     more == 1 ? "" : "s");
}

/* One leaderboard quantity of a measured speed test, in the unit the table
 * shows: % of the baseline, or the metric's own ("MFU %"). Higher is better
 * for both kinds, which is Gradescope's default order, stated anyway. */
static json_t *leaderboard_entry(const result_t *r) {
    const rubric_test_t *t = r->t;
    const speed_metric_t *m = speed_metric_find(t->metric);
    char name[256];
    double value;
    if (m) {
        snprintf(name, sizeof name, "lab %s %s (%s%s)", r->nn, t->name, m->label, m->unit);
        value = m->scale * r->measured;
    } else if (t->over[0]) {
        snprintf(name, sizeof name, "lab %s %s (times the speed of %s)", r->nn, t->kernel, t->over);
        value = r->measured;
    } else {
        snprintf(name, sizeof name, "lab %s %s (%% of %s)", r->nn, t->kernel, t->baseline);
        value = 100.0 * r->measured;
    }
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string(name));
    json_object_set_new(e, "value", json_real(value));
    json_object_set_new(e, "order", json_string("desc"));
    return e;
}

/* A JSON string of s with each byte that is not well-formed UTF-8 (a
 * Latin-1 program's output, a line cut inside a character) written as
 * U+FFFD: jansson refuses invalid UTF-8 outright, and the test's output,
 * status and message with it. */
static json_t *json_string_lossy(const char *s) {
    size_t n = strlen(s);
    char *buf = malloc(3 * n + 1), *o = buf;
    if (!buf) return json_string("");
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int k = course_utf8_len(p);
        if (k) memcpy(o, p, (size_t)k), o += k, p += k;
        else memcpy(o, "\xef\xbf\xbd", 3), o += 3, p++;
    }
    *o = '\0';
    json_t *j = json_string(buf);
    free(buf);
    return j ? j : json_string("");
}

/* Gradescope's results.json; speed tests with a measured value also go to
 * the leaderboard. */
int report_json(const char *path, const result_t *r, int n, double wall_s, const char *summary) {
    json_t *root = json_object(), *tests = json_array(), *board = json_array();
    double max, tot = results_total(r, n, &max);
    json_object_set_new(root, "score", json_real(tot));
    json_object_set_new(root, "execution_time", json_integer((json_int_t)(wall_s + 0.5)));
    /* The notes may quote a build log of the student's code. */
    json_object_set_new(root, "output", json_string_lossy(summary ? summary : ""));
    json_object_set_new(root, "visibility", json_string("visible"));
    json_object_set_new(root, "stdout_visibility", json_string("hidden"));
    for (int i = 0; i < n; i++) {
        json_t *t = json_object();
        char name[256], number[32];
        snprintf(name, sizeof name, "lab %s: %s%s", r[i].nn, r[i].t->name, r[i].t->bonus ? " (bonus)" : "");
        snprintf(number, sizeof number, "%s.%d", r[i].nn, r[i].number);
        json_object_set_new(t, "name", json_string(name));
        json_object_set_new(t, "number", json_string(number));
        json_object_set_new(t, "score", json_real(r[i].counted ? r[i].score : 0.0));
        /* Left out of the total: worth nothing here, so it cannot count as passed.
         * A bonus test is extra credit: a score over a maximum of 0. */
        json_object_set_new(t, "max_score", json_real(r[i].counted && !r[i].t->bonus ? r[i].max_score : 0.0));
        /* Every test says passed or failed (the only two Gradescope knows): one
         * left out of the total ("needs GPU", a grader error) has a maximum of
         * 0, which Gradescope shows as passed when no status says otherwise. */
        json_object_set_new(t, "status", json_string(r[i].counted && r[i].status == ST_PASS ? "passed" : "failed"));
        char head[700];
        snprintf(head, sizeof head, "%s%s%s%s%s\n", status_name(r[i].status), r[i].figure[0] ? " | " : "",
                 r[i].figure, r[i].message[0] ? " | " : "", r[i].message);
        /* The message and the output may quote the student's program, in any encoding. */
        json_t *out = NULL;
        if (r[i].output && r[i].output[0]) {
            size_t len = strlen(head) + strlen(r[i].output) + 2;
            char *both = malloc(len);
            if (both) {
                snprintf(both, len, "%s\n%s", head, r[i].output);
                out = json_string_lossy(both);
                free(both);
            }
        }
        json_object_set_new(t, "output", out ? out : json_string_lossy(head));
        json_object_set_new(t, "visibility", json_string("visible"));
        json_array_append_new(tests, t);
        if (r[i].t->kind == KIND_SPEED && r[i].measured >= 0) json_array_append_new(board, leaderboard_entry(&r[i]));
    }
    json_object_set_new(root, "tests", tests);
    if (json_array_size(board)) json_object_set_new(root, "leaderboard", board);
    else json_decref(board);
    int rc = json_dump_file(root, path, JSON_INDENT(2));
    json_decref(root);
    return rc;
}
