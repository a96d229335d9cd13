/* Rank prefixes and level filtering of the log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

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
    log_set_rank(-1, 1);
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
    log_set_level(LOG_INFO);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_prefix_outside_a_job),
        cmocka_unit_test(test_rank_prefix),
        cmocka_unit_test(test_levels_filter),
        cmocka_unit_test(test_long_line_is_truncated_not_overflowed),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
