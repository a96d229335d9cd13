/* The trace writer produces valid trace-event JSON, also after merging ranks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "timer.h"
#include "trace.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "trace_test_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static json_t *load(const char *path) {
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) fail_msg("%s is not valid JSON: line %d: %s", path, err.line, err.text);
    return root;
}

static void write_rank(const char *path, int rank) {
    trace_t *t = trace_open(path, rank, rank == 0 ? "rank 0" : "rank \"1\"\n");
    assert_non_null(t);
    trace_thread_name(t, 0, "compute");
    trace_complete(t, "forward", "compute", 0, 10.0, 5.5);
    trace_complete(t, "all-reduce \\ bucket", "comm", 1, 12.0, 3.0);
    trace_instant(t, "step", 0, 20.0);
    trace_counter(t, "memory", 20.0, 1.5e9);
    assert_int_equal(trace_close(t), 0);
}

static void test_single_file_is_valid(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/r0.json", dir);
    write_rank(path, 0);
    json_t *root = load(path);
    json_t *ev = json_object_get(root, "traceEvents");
    assert_true(json_is_array(ev));
    assert_int_equal(json_array_size(ev), 7); /* 2 process metadata, 1 thread name, 4 events */
    json_t *fwd = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (name && !strcmp(name, "forward")) fwd = e;
    }
    assert_non_null(fwd);
    assert_string_equal(json_string_value(json_object_get(fwd, "ph")), "X");
    assert_true(json_number_value(json_object_get(fwd, "ts")) == 10.0);
    assert_true(json_number_value(json_object_get(fwd, "dur")) == 5.5);
    assert_int_equal(json_integer_value(json_object_get(fwd, "pid")), 0);
    json_decref(root);
}

static void test_merge_keeps_every_rank(void **state) {
    (void)state;
    char p0[128], p1[128], out[128];
    snprintf(p0, sizeof p0, "%s/m0.json", dir);
    snprintf(p1, sizeof p1, "%s/m1.json", dir);
    snprintf(out, sizeof out, "%s/merged.json", dir);
    write_rank(p0, 0);
    write_rank(p1, 1); /* its process name needs escaping: quotes and a newline */
    const char *in[2] = {p0, p1};
    assert_int_equal(trace_merge(out, in, 2), 0);
    json_t *root = load(out);
    json_t *ev = json_object_get(root, "traceEvents");
    assert_int_equal(json_array_size(ev), 14);
    int pid1 = 0;
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e) pid1 += json_integer_value(json_object_get(e, "pid")) == 1;
    assert_int_equal(pid1, 7);
    json_decref(root);
}

/* A counter that is NaN or Inf (a diverged loss) and an event name longer
 * than any line buffer: the file, and its merge, stay valid JSON with every
 * event. */
static void test_nonfinite_and_long_names(void **state) {
    (void)state;
    char p0[128], out[128];
    snprintf(p0, sizeof p0, "%s/n0.json", dir);
    snprintf(out, sizeof out, "%s/n-merged.json", dir);
    static char longname[20000];
    memset(longname, 'x', sizeof longname - 1);
    trace_t *t = trace_open(p0, 0, "rank 0");
    assert_non_null(t);
    trace_counter(t, "loss", 1.0, NAN);
    trace_counter(t, "loss", 2.0, -INFINITY);
    trace_complete(t, longname, "compute", 0, 3.0, 1.0);
    assert_int_equal(trace_close(t), 0);
    json_t *root = load(p0);
    json_t *ev = json_object_get(root, "traceEvents");
    size_t nev = json_array_size(ev), i;
    json_t *e;
    int nulls = 0;
    json_array_foreach(ev, i, e) nulls += json_is_null(json_object_get(json_object_get(e, "args"), "value"));
    assert_int_equal(nulls, 2);
    json_decref(root);
    const char *in[1] = {p0};
    assert_int_equal(trace_merge(out, in, 1), 0);
    root = load(out);
    assert_int_equal(json_array_size(json_object_get(root, "traceEvents")), nev);
    int found = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        found += name && strlen(name) == sizeof longname - 1;
    }
    assert_int_equal(found, 1);
    json_decref(root);
}

/* An event whose time is NaN or infinite cannot be written as JSON: it is left out, with one
 * warning for the trace, and the file stays valid with every other event. */
static void test_nonfinite_times_are_left_out(void **state) {
    (void)state;
    char p0[128];
    snprintf(p0, sizeof p0, "%s/t0.json", dir);
    fflush(stderr);
    int saved = dup(2);
    char errs[128];
    snprintf(errs, sizeof errs, "%s/stderr.txt", dir);
    FILE *e = fopen(errs, "w");
    assert_non_null(e);
    dup2(fileno(e), 2);
    trace_t *t = trace_open(p0, 0, NULL);
    assert_non_null(t);
    trace_complete(t, "bad start", "compute", 0, NAN, 1.0);
    trace_complete(t, "bad length", "compute", 0, 1.0, INFINITY);
    trace_instant(t, "bad instant", 0, -INFINITY);
    trace_counter(t, "bad counter", NAN, 1.0);
    trace_complete(t, "good", "compute", 0, 2.0, 1.0);
    assert_int_equal(trace_close(t), 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(e);
    json_t *root = load(p0);
    json_t *ev = json_object_get(root, "traceEvents");
    assert_int_equal(json_array_size(ev), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "name")), "good");
    json_decref(root);
    char text[1024] = "";
    FILE *r = fopen(errs, "r");
    assert_non_null(r);
    size_t n = fread(text, 1, sizeof text - 1, r);
    text[n] = '\0';
    fclose(r);
    assert_non_null(strstr(text, "trace: warning: event 'bad start' has a time that is not a finite number"));
    assert_null(strstr(text, "bad length")); /* once per trace */
}

/* The first event in ev with this phase and name, else NULL. */
static json_t *find_event(json_t *ev, const char *ph, const char *name) {
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e) {
        const char *p = json_string_value(json_object_get(e, "ph"));
        const char *n = json_string_value(json_object_get(e, "name"));
        if (p && n && !strcmp(p, ph) && !strcmp(n, name)) return e;
    }
    return NULL;
}

/* Each kind of event carries what the viewer reads: the metadata names it
 * knows (process_name, process_sort_index, thread_name), phases, the instant's
 * scope, times below a microsecond, a counter's value to the last bit, and
 * the time unit. A wrong key is still valid JSON: the viewer would just drop
 * the row's label, its order, or the event. */
static void test_events_carry_what_was_given(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/fields.json", dir);
    const double value = 1234567.891234567; /* needs all 17 digits to come back */
    trace_t *t = trace_open(path, 3, "rank 3");
    assert_non_null(t);
    trace_thread_name(t, 1, "comm \"NCCL\"");
    trace_complete(t, "backward", NULL, 1, 10.25, 0.125);
    trace_instant(t, "step", 2, 30.5);
    trace_counter(t, "loss", 40.75, value);
    assert_int_equal(trace_close(t), 0);

    json_t *root = load(path);
    assert_string_equal(json_string_value(json_object_get(root, "displayTimeUnit")), "ms");
    json_t *ev = json_object_get(root, "traceEvents");
    json_t *e = find_event(ev, "M", "process_name");
    assert_non_null(e);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")), "rank 3");
    e = find_event(ev, "M", "process_sort_index");
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "pid")), 3);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "sort_index")), 3);
    e = find_event(ev, "M", "thread_name");
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "tid")), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")), "comm \"NCCL\"");

    e = find_event(ev, "X", "backward");
    assert_non_null(e);
    assert_string_equal(json_string_value(json_object_get(e, "cat")), ""); /* no category given */
    assert_int_equal(json_integer_value(json_object_get(e, "tid")), 1);
    assert_true(json_number_value(json_object_get(e, "ts")) == 10.25);
    assert_true(json_number_value(json_object_get(e, "dur")) == 0.125);

    e = find_event(ev, "i", "step");
    assert_non_null(e);
    assert_string_equal(json_string_value(json_object_get(e, "s")), "t"); /* drawn on its thread row */
    assert_int_equal(json_integer_value(json_object_get(e, "pid")), 3);
    assert_int_equal(json_integer_value(json_object_get(e, "tid")), 2);
    assert_true(json_number_value(json_object_get(e, "ts")) == 30.5);

    e = find_event(ev, "C", "loss");
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "pid")), 3);
    assert_true(json_number_value(json_object_get(e, "ts")) == 40.75);
    assert_true(json_number_value(json_object_get(json_object_get(e, "args"), "value")) == value);
    json_decref(root);
}

/* A rerun that writes its trace where an older one lies replaces it: two
 * traces in one file would not be JSON. */
static void test_open_overwrites_an_old_trace(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/again.json", dir);
    write_rank(path, 0);
    write_rank(path, 1);
    json_t *root = load(path);
    json_t *ev = json_object_get(root, "traceEvents");
    assert_int_equal(json_array_size(ev), 7);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ev, 0), "pid")), 1);
    json_decref(root);
}

/* Write text to path. */
static void put_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* A rank killed while writing (MPI_Abort ends every rank) leaves a file
 * whose last line is cut and which has no closing line: the merge leaves
 * that line out and keeps the complete events, so the merged file opens. */
static void test_merge_leaves_out_a_cut_line(void **state) {
    (void)state;
    char p0[128], p1[128], out[128];
    snprintf(p0, sizeof p0, "%s/c0.json", dir);
    snprintf(p1, sizeof p1, "%s/c1.json", dir);
    snprintf(out, sizeof out, "%s/c-merged.json", dir);
    write_rank(p0, 0);
    put_file(p1, "{\"traceEvents\":[\n"
                 "{\"ph\":\"X\",\"name\":\"forward\",\"cat\":\"compute\",\"pid\":1,\"tid\":0,\"ts\":1.000,\"dur\":2.000},\n"
                 "{\"ph\":\"X\",\"name\":\"backw");
    const char *in[2] = {p0, p1};
    assert_int_equal(trace_merge(out, in, 2), 0);
    json_t *root = load(out);
    json_t *ev = json_object_get(root, "traceEvents");
    assert_int_equal(json_array_size(ev), 7 + 1); /* rank 0's seven, rank 1's one complete event */
    json_decref(root);
}

/* A file that is not a rank's trace, or is empty, is refused, not merged. */
static void test_merge_refuses_other_files(void **state) {
    (void)state;
    char p0[128], bad[128], out[128];
    snprintf(p0, sizeof p0, "%s/o0.json", dir);
    snprintf(bad, sizeof bad, "%s/other.json", dir);
    snprintf(out, sizeof out, "%s/o-merged.json", dir);
    write_rank(p0, 0);
    const char *in[2] = {p0, bad};
    put_file(bad, "{\"results\": [\n{\"kernel\": \"naive\"}\n]}\n"); /* a bench's JSON */
    assert_int_equal(trace_merge(out, in, 2), -1);
    put_file(bad, "");
    assert_int_equal(trace_merge(out, in, 2), -1);
}

/* A merge run in a child, so that the test can read what it printed. */
typedef struct {
    const char *out;
    const char *const *in;
    int n;
} merge_args_t;

static int merge_in_child(void *arg) {
    const merge_args_t *m = arg;
    return trace_merge(m->out, m->in, m->n) == 0 ? 0 : 1;
}

/* A directory given as a rank's file reads nothing: the merge says it could
 * not be read, not that its rank stopped before trace_open. */
static void test_merge_names_a_directory(void **state) {
    (void)state;
    char p0[128], out[128];
    snprintf(p0, sizeof p0, "%s/d0.json", dir);
    snprintf(out, sizeof out, "%s/d-merged.json", dir);
    write_rank(p0, 0);
    const char *in[2] = {p0, dir};
    merge_args_t m = {out, in, 2};
    child_result_t r = run_in_child(merge_in_child, &m);
    assert_int_equal(r.exit_code, 1);
    char want[160];
    snprintf(want, sizeof want, "trace: reading '%s' failed: Is a directory", dir);
    assert_non_null(strstr(r.out, want));
    assert_null(strstr(r.out, "is empty"));
}

/* A merged file that cannot be created, or cannot be written whole (a full
 * disk: /dev/full fails every write), is an error with a message; a trace of
 * one rank that cannot be written whole is an error too. */
static void test_write_failures_are_reported(void **state) {
    (void)state;
    char p0[128], out[128];
    snprintf(p0, sizeof p0, "%s/w0.json", dir);
    snprintf(out, sizeof out, "%s/no-such-dir/merged.json", dir);
    write_rank(p0, 0);
    const char *in[1] = {p0};
    merge_args_t m = {out, in, 1};
    child_result_t r = run_in_child(merge_in_child, &m);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "trace: cannot create"));
    if (access("/dev/full", W_OK) != 0) skip();
    m.out = "/dev/full";
    r = run_in_child(merge_in_child, &m);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.out, "trace: writing '/dev/full' failed"));
    trace_t *t = trace_open("/dev/full", 0, "rank 0");
    assert_non_null(t);
    trace_complete(t, "forward", "compute", 0, 1.0, 2.0);
    assert_int_equal(trace_close(t), -1);
}

/* What a merge kept: the number of events in the merged file. */
static size_t merged_events(const char *path) {
    json_t *root = load(path);
    size_t n = json_array_size(json_object_get(root, "traceEvents"));
    json_decref(root);
    return n;
}

/* The merge reads a rank's file that went through a CRLF copy, a trace with
 * no events (closed, or cut right after its first line), and refuses a trace
 * on one line (as Chrome writes them): its events would be lost, not merged. */
static void test_merge_reads_crlf_and_empty_traces(void **state) {
    (void)state;
    char p0[128], crlf[128], none[128], head[128], one[128], out[128];
    snprintf(p0, sizeof p0, "%s/e0.json", dir);
    snprintf(crlf, sizeof crlf, "%s/e1-crlf.json", dir);
    snprintf(none, sizeof none, "%s/e2-none.json", dir);
    snprintf(head, sizeof head, "%s/e3-head.json", dir);
    snprintf(one, sizeof one, "%s/e4-one-line.json", dir);
    snprintf(out, sizeof out, "%s/e-merged.json", dir);
    write_rank(p0, 0);
    FILE *f = fopen(p0, "r"), *g = fopen(crlf, "w");
    assert_non_null(f);
    assert_non_null(g);
    for (int c; (c = fgetc(f)) != EOF;) {
        if (c == '\n') fputc('\r', g);
        fputc(c, g);
    }
    fclose(f);
    assert_int_equal(fclose(g), 0);
    trace_t *t = trace_open(none, 2, NULL); /* no metadata, no events */
    assert_non_null(t);
    assert_int_equal(trace_close(t), 0);
    put_file(head, "{\"traceEvents\":[");
    const char *in[4] = {p0, crlf, none, head};
    assert_int_equal(trace_merge(out, in, 4), 0);
    assert_int_equal(merged_events(out), 7 + 7);
    put_file(one, "{\"traceEvents\":[{\"ph\":\"i\",\"s\":\"t\",\"name\":\"step\",\"pid\":0,\"tid\":0,\"ts\":1.0}]}\n");
    const char *in1[2] = {p0, one};
    assert_int_equal(trace_merge(out, in1, 2), -1);
}

/* The warning for lines left out comes once per file that has them: how many
 * (singular or plural), the first one's line number, and whether the file
 * lacks its closing line. A file with none gets no warning. */
static void test_merge_warns_about_lines_left_out(void **state) {
    (void)state;
    char good[128], cut[128], bad2[128], out[128];
    snprintf(good, sizeof good, "%s/g-good.json", dir);
    snprintf(cut, sizeof cut, "%s/g-cut.json", dir);
    snprintf(bad2, sizeof bad2, "%s/g-bad2.json", dir);
    snprintf(out, sizeof out, "%s/g-merged.json", dir);
    write_rank(good, 0);
    put_file(cut, "{\"traceEvents\":[\n"
                  "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":1.000},\n"
                  "{\"ph\":\"i\",\"s\":\"t\",\"na");
    put_file(bad2, "{\"traceEvents\":[\n"
                   "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"a\",\"pid\":2,\"tid\":0,\"ts\":1.000},\n"
                   "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"b\",\"pid\":2,\n"
                   "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"c\",\"pid\":2,\"tid\":0,\"ts\":3.000},\n"
                   "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"d\"\n"
                   "],\"displayTimeUnit\":\"ms\"}\n");
    const char *in[3] = {good, cut, bad2};
    merge_args_t m = {out, in, 3};
    child_result_t r = run_in_child(merge_in_child, &m);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(merged_events(out), 7 + 1 + 2);
    char want[512];
    snprintf(want, sizeof want, "trace: warning: '%s': left out 1 line that is not a complete event (line 3 "
             "first); the file has no closing line, so its rank stopped before trace_close\n", cut);
    assert_non_null(strstr(r.out, want));
    snprintf(want, sizeof want, "trace: warning: '%s': left out 2 lines that are not a complete event (line 3 "
             "first)\n", bad2);
    assert_non_null(strstr(r.out, want));
    assert_null(strstr(r.out, good));
    int warnings = 0;
    for (const char *p = r.out; (p = strstr(p, "warning")); p++) warnings++;
    assert_int_equal(warnings, 2);
}

static double test_start_s; /* wall_time() when main began, before any trace_now_us() */

/* trace_now_us() counts microseconds from its first call in this process: it
 * lies between 0 and the time since main began, and a 2 ms sleep (at least
 * 2 ms on the same monotonic clock) moves it on by at least 2000. */
static void test_now_counts_microseconds_from_the_first_call(void **state) {
    (void)state;
    const double a = trace_now_us();
    const double since_start_a = (wall_time() - test_start_s) * 1e6;
    struct timespec nap = {0, 2000000};
    while (nanosleep(&nap, &nap) != 0) {}
    const double b = trace_now_us();
    const double since_start_b = (wall_time() - test_start_s) * 1e6;
    assert_true(a >= 0 && a <= since_start_a + 1.0);
    assert_true(b - a >= 1999.0);
    assert_true(b <= since_start_b + 1.0);
}

static void test_bad_path_and_null_trace(void **state) {
    (void)state;
    assert_null(trace_open("no/such/dir/t.json", 0, "x"));
    trace_complete(NULL, "x", "y", 0, 0, 0); /* tracing off: a no-op */
    trace_thread_name(NULL, 0, "compute");
    trace_instant(NULL, "step", 0, 0);
    trace_counter(NULL, "loss", 0, 1.0);
    assert_int_equal(trace_close(NULL), 0);
    const char *in[1] = {"no/such/file.json"};
    char out[128];
    snprintf(out, sizeof out, "%s/never.json", dir);
    assert_int_equal(trace_merge(out, in, 1), -1);
    double a = trace_now_us(), b = trace_now_us();
    assert_true(b >= a && a >= 0);
}

int main(void) {
    test_start_s = wall_time();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_file_is_valid),
        cmocka_unit_test(test_nonfinite_times_are_left_out),
        cmocka_unit_test(test_merge_keeps_every_rank),
        cmocka_unit_test(test_nonfinite_and_long_names),
        cmocka_unit_test(test_events_carry_what_was_given),
        cmocka_unit_test(test_open_overwrites_an_old_trace),
        cmocka_unit_test(test_merge_leaves_out_a_cut_line),
        cmocka_unit_test(test_merge_refuses_other_files),
        cmocka_unit_test(test_bad_path_and_null_trace),
        cmocka_unit_test(test_merge_names_a_directory),
        cmocka_unit_test(test_write_failures_are_reported),
        cmocka_unit_test(test_merge_reads_crlf_and_empty_traces),
        cmocka_unit_test(test_merge_warns_about_lines_left_out),
        cmocka_unit_test(test_now_counts_microseconds_from_the_first_call),
    };
    return cmocka_run_group_tests_name("trace", tests, setup, teardown);
}
