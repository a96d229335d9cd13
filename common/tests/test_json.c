/* course_json_string() writes text that a JSON parser reads back unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* What course_json_string(s) writes, in a malloc'd buffer. */
static char *written(const char *s) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    course_json_string(f, s);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* The exact bytes for each kind of character. */
static void test_escapes(void **state) {
    (void)state;
    const char *cases[][2] = {
        {"NVIDIA H200", "\"NVIDIA H200\""},
        {"say \"hi\"", "\"say \\\"hi\\\"\""},
        {"C:\\cuda", "\"C:\\\\cuda\""},
        {"a\nb\tc\x01", "\"a\\u000ab\\u0009c\\u0001\""},
        {"caf\xc3\xa9", "\"caf\xc3\xa9\""},
        {"\xf0\x9f\x99\x82", "\"\xf0\x9f\x99\x82\""},    /* a 4-byte sequence, kept */
        {"caf\xe9", "\"caf\\ufffd\""},                     /* Latin-1: not UTF-8 */
        {"x\xc3", "\"x\\ufffd\""},                         /* a sequence cut short */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},      /* a surrogate, encoded */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                /* an overlong '/' */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* past U+10FFFF */
        {"", "\"\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = written(cases[i][0]);
        assert_string_equal(got, cases[i][1]);
        free(got);
    }
    char *got = written(NULL);
    assert_string_equal(got, "\"\"");
    free(got);
}

/* Every ASCII character, and UTF-8 text, survive a round trip through a
 * JSON parser, as a record's value (the way the benchmarks write it). */
static void test_round_trip(void **state) {
    (void)state;
    char s[160];
    for (int i = 1; i < 128; i++) s[i - 1] = (char)i;
    snprintf(s + 127, sizeof s - 127, " Gr\xc3\xb6\xc3\x9f" "e \xe2\x86\x92 caf\xc3\xa9"); /* valid UTF-8 */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fprintf(f, "{\"device\": ");
    course_json_string(f, s);
    fprintf(f, "}");
    assert_int_equal(fclose(f), 0);
    json_error_t err;
    json_t *root = json_loads(buf, 0, &err);
    if (!root) fail_msg("not valid JSON: %s: %s", err.text, buf);
    const char *back = json_string_value(json_object_get(root, "device"));
    assert_non_null(back);
    assert_string_equal(back, s);
    json_decref(root);
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
