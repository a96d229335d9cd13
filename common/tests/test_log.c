/* Rank prefixes and level filtering of the log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "child.h"
#include "log.h"

/* Capture log lines into a temporary file and read them back. */
static void capture(char *buf, size_t len, void (*emit)(void)) {
    FILE *f = tmpfile();
    assert_non_null(f);
    log_set_stream(f);
    emit();
    log_set_stream(NULL);
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void emit_two(void) {
    log_info("step %d", 3);
    log_warn("slow");
}

static void test_no_prefix_outside_a_job(void **state) {
    (void)state;
    char out[256];
    log_set_rank(-1, 1);
    log_set_level(LOG_INFO);
    capture(out, sizeof out, emit_two);
    assert_string_equal(out, "step 3\nwarning: slow\n");
}

static void test_rank_prefix(void **state) {
    (void)state;
    char out[256];
    log_set_rank(1, 4);
    log_set_level(LOG_INFO);
    capture(out, sizeof out, emit_two);
    assert_string_equal(out, "[rank 1/4] step 3\n[rank 1/4] warning: slow\n");
    assert_int_equal(log_rank(), 1);
    /* Rank 0 is a rank like any other. */
    log_set_rank(0, 2);
    capture(out, sizeof out, emit_two);
    assert_string_equal(out, "[rank 0/2] step 3\n[rank 0/2] warning: slow\n");
    log_set_rank(-1, 1);
    assert_int_equal(log_rank(), -1);
}

/* A process that never called log_set_rank is in no job: no prefix, rank -1
 * (the test program runs itself again with --print-fresh). */
static int print_fresh(void *arg) {
    (void)arg;
    unsetenv("COURSE_LOG_LEVEL"); /* info, whatever the runner's environment says */
    execl("/proc/self/exe", "test_log", "--print-fresh", (char *)NULL);
    return 99;
}

static void test_fresh_process_has_no_rank(void **state) {
    (void)state;
    child_result_t r = run_in_child(print_fresh, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "rank -1\nhello\n");
}

/* Each line is flushed as it is written: a reader sees it at once, and a
 * process that dies right after it has not lost it in a buffer. */
static void test_each_line_is_flushed(void **state) {
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    FILE *w = fdopen(fds[1], "w");
    assert_non_null(w);
    log_set_rank(-1, 1);
    log_set_level(LOG_INFO);
    log_set_stream(w);
    log_info("now");
    log_set_stream(NULL);
    assert_int_equal(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
    char buf[16] = {0};
    assert_int_equal(read(fds[0], buf, sizeof buf - 1), 4);
    assert_string_equal(buf, "now\n");
    fclose(w);
    close(fds[0]);
}

static void emit_all_levels(void) {
    log_error("e");
    log_warn("w");
    log_info("i");
    log_debug("d");
}

static void test_levels_filter(void **state) {
    (void)state;
    char out[256];
    log_set_rank(-1, 1);
    log_set_level(LOG_WARN);
    capture(out, sizeof out, emit_all_levels);
    assert_string_equal(out, "error: e\nwarning: w\n");
    log_set_level(LOG_DEBUG);
    capture(out, sizeof out, emit_all_levels);
    assert_string_equal(out, "error: e\nwarning: w\ni\ndebug: d\n");
    /* LOG_ERROR is 0: it must count as set, not as "read the environment". */
    log_set_level(LOG_ERROR);
    capture(out, sizeof out, emit_all_levels);
    assert_string_equal(out, "error: e\n");
    log_set_level(LOG_INFO);
}

/* A level outside the enum is taken as the nearest one: below error is an error,
 * above debug is debug (filtered out at the default level). */
static void emit_out_of_range(void) {
    log_msg((log_level_t)-1, "below");
    log_msg((log_level_t)-1000, "far below");
    log_msg((log_level_t)4, "above");
}

static void test_level_out_of_range(void **state) {
    (void)state;
    char out[256];
    log_set_rank(-1, 1);
    log_set_level(LOG_INFO);
    capture(out, sizeof out, emit_out_of_range);
    assert_string_equal(out, "error: below\nerror: far below\n");
    log_set_level(LOG_DEBUG);
    capture(out, sizeof out, emit_out_of_range);
    assert_string_equal(out, "error: below\nerror: far below\ndebug: above\n");
    log_set_level(LOG_INFO);
}

/* The level a fresh process takes from COURSE_LOG_LEVEL: the test program
 * runs itself again with --print-level (the level is read once per process,
 * so this one cannot be asked twice). */
static int print_level_with(void *value) {
    if (value) setenv("COURSE_LOG_LEVEL", value, 1);
    else unsetenv("COURSE_LOG_LEVEL");
    execl("/proc/self/exe", "test_log", "--print-level", (char *)NULL);
    return 99;
}

static void test_level_from_environment(void **state) {
    (void)state;
    /* Names are matched ignoring case; none, or an empty one, gives info; an unknown name gives
     * info and says so once, with the names to use. */
#define UNKNOWN(v) "COURSE_LOG_LEVEL is '" v "', which is not a level; set it to error, warn, info or debug " \
                   "(info is used)\n2\n"
    static const struct { const char *value, *level; } cases[] = {
        {"Error", "0\n"}, {"WARN", "1\n"}, {"Warning", "1\n"}, {"info", "2\n"}, {"Debug", "3\n"},
        {"loud", UNKNOWN("loud")}, {NULL, "2\n"}, {"", "2\n"},
        {"warnx", UNKNOWN("warnx")}, {"err", UNKNOWN("err")}, /* a name is the whole word */
        {"debugx", UNKNOWN("debugx")}, {"deb", UNKNOWN("deb")}, {"infos", UNKNOWN("infos")},
    };
#undef UNKNOWN
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        child_result_t r = run_in_child(print_level_with, (void *)cases[i].value);
        assert_int_equal(r.exit_code, 0);
        if (strcmp(r.out, cases[i].level))
            fail_msg("COURSE_LOG_LEVEL=%s: level %s, expected %s", cases[i].value ? cases[i].value : "(unset)", r.out,
                     cases[i].level);
    }
}

/* Without log_set_stream the log goes to stderr: stdout carries a program's
 * own output (a benchmark's JSON records), which log lines must not break. */
static int log_with_stdout_closed(void *arg) {
    (void)arg;
    if (!freopen("/dev/null", "w", stdout)) return 2;
    log_set_rank(-1, 1);
    log_set_level(LOG_INFO);
    log_info("to stderr");
    return 0;
}

static void test_default_stream_is_stderr(void **state) {
    (void)state;
    child_result_t r = run_in_child(log_with_stdout_closed, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "to stderr\n");
}

/* log_prefix into a small buffer: cut, NUL-ended, and the length is what was written. */
static void test_prefix_in_a_small_buffer(void **state) {
    (void)state;
    char b[8];
    log_set_rank(12, 16);
    assert_int_equal(log_prefix(b, sizeof b), 7);
    assert_string_equal(b, "[rank 1");
    assert_int_equal(log_prefix(b, 0), 0);
    /* One byte short of "[rank 12/16] " and its NUL: 12 characters written. */
    char e[13];
    assert_int_equal(log_prefix(e, sizeof e), 12);
    assert_string_equal(e, "[rank 12/16]");
    char f[14];
    assert_int_equal(log_prefix(f, sizeof f), 13);
    assert_string_equal(f, "[rank 12/16] ");
    log_set_rank(-1, 1);
    /* Outside a job the prefix is empty, and the buffer says so: course_fatal
     * prints it as a string whatever it held before. */
    memset(f, 'x', sizeof f);
    assert_int_equal(log_prefix(f, sizeof f), 0);
    assert_string_equal(f, "");
}

static void emit_long(void) {
    char big[6000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    log_info("%s", big);
}

static void test_long_line_is_truncated_not_overflowed(void **state) {
    (void)state;
    char out[8192];
    log_set_rank(-1, 1);
    capture(out, sizeof out, emit_long);
    size_t n = strlen(out);
    assert_true(n > 1000 && n < 4096);
    assert_int_equal(out[n - 1], '\n');
}

/* At the edge of the 4096-byte line: 4094 characters and the newline fit,
 * one more is cut (taking it would put the NUL past the buffer). */
static int edge_len;
static void emit_edge(void) {
    char big[4100];
    memset(big, 'x', (size_t)edge_len);
    big[edge_len] = '\0';
    log_info("%s", big);
}

static void test_line_length_edge(void **state) {
    (void)state;
    char out[8192];
    log_set_rank(-1, 1);
    log_set_level(LOG_INFO);
    for (edge_len = 4094; edge_len <= 4095; edge_len++) {
        capture(out, sizeof out, emit_edge);
        assert_int_equal(strlen(out), 4095);
        assert_int_equal(out[4093], 'x');
        assert_int_equal(out[4094], '\n');
    }
}

/* A message vsnprintf cannot format (wide text the "C" locale cannot write)
 * still gives a line, which says so and names the format; it printed
 * nothing at all, not even its newline. */
static void emit_unformattable(void) {
    log_warn("%ls", L"caf\u00e9");
    log_info("next");
}

static void test_unformattable_message(void **state) {
    (void)state;
    char out[512];
    log_set_rank(2, 4);
    log_set_level(LOG_INFO);
    capture(out, sizeof out, emit_unformattable);
    assert_string_equal(out, "[rank 2/4] warning: (log message could not be formatted: \"%ls\")\n[rank 2/4] next\n");
    log_set_rank(-1, 1);
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--print-level")) { /* see test_level_from_environment */
        printf("%d\n", (int)log_level());
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--print-fresh")) { /* see test_fresh_process_has_no_rank */
        printf("rank %d\n", log_rank());
        fflush(stdout);
        log_set_stream(stdout);
        log_info("hello");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_prefix_outside_a_job),
        cmocka_unit_test(test_rank_prefix),
        cmocka_unit_test(test_fresh_process_has_no_rank),
        cmocka_unit_test(test_each_line_is_flushed),
        cmocka_unit_test(test_levels_filter),
        cmocka_unit_test(test_level_out_of_range),
        cmocka_unit_test(test_long_line_is_truncated_not_overflowed),
        cmocka_unit_test(test_line_length_edge),
        cmocka_unit_test(test_level_from_environment),
        cmocka_unit_test(test_default_stream_is_stderr),
        cmocka_unit_test(test_prefix_in_a_small_buffer),
        cmocka_unit_test(test_unformattable_message),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
