/* course_json_string() writes text that a JSON parser reads back unchanged;
 * course_json_valid() tells JSON from what is not. */
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
        {"\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""},            /* an overlong '/' in 3 bytes */
        {"\xf0\x8f\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* U+FFFF overlong in 4 bytes */
        {"\xc3\xc3", "\"\\ufffd\\ufffd\""},                         /* a lead byte where a continuation belongs */
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

/* course_json_valid() accepts exactly one JSON value, and agrees with
 * jansson on each case (jansson told to allow \u0000 and to read integers as
 * doubles, as RFC 8259 does); a number too large for a double is refused. */
static void test_valid(void **state) {
    (void)state;
    static const char *const good[] = {
        "{}", " {\"a\": [1, -0.5e+3, true, false, null, \"x\"]} ", "[[[]]]", "\"\\u00e9\\ud83d\\ude00\\n\"",
        "{\"ph\":\"X\",\"name\":\"caf\xc3\xa9\",\"ts\":1.000}", "0", "-12", "\"\\u0000\"", "1e-400", "123456789012345678901234567890",
        "\"\\/\\b\\f\\r\\t\"",
    };
    static const char *const bad[] = {
        "", " ", "{", "{\"ph\":\"X\",\"na", "{\"a\":}", "{\"a\" 1}", "{a:1}", "[1,]", "[1 2]", "{} {}", "01",
        "1.", ".5", "-", "1e", "+1", "tru", "nul", "\"\\x\"", "\"\\u12g4\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"", "\"\xff\"", "\"\xc3\"", "\"\xed\xa0\x80\"", "\"a\tb\"", "NaN", "[1,2", "1e400", "-1e400",
        "\"\\ud800\\ue000\"", "\"\\udfff\"", "\"\x1f\"", "[1;2]", "\f1",
    };
    json_error_t err;
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        if (!course_json_valid(good[i], strlen(good[i]))) fail_msg("refused valid JSON: %s", good[i]);
        json_t *j = json_loads(good[i], JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &err);
        assert_non_null(j);
        json_decref(j);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (course_json_valid(bad[i], strlen(bad[i]))) fail_msg("accepted invalid JSON: %s", bad[i]);
        assert_null(json_loads(bad[i], JSON_DECODE_ANY, &err));
    }
    /* A NUL inside the text, and nesting past the limit (no stack overflow). */
    assert_false(course_json_valid("[1]\0", 4));
    assert_true(course_json_valid("[1]", 3));
    static char deep[100001];
    memset(deep, '[', sizeof deep - 1);
    assert_false(course_json_valid(deep, strlen(deep)));
    /* The limit itself: 256 nested arrays are valid, 257 are not. */
    char nest[515];
    for (int d = 256; d <= 257; d++) {
        memset(nest, '[', (size_t)d);
        memset(nest + d, ']', (size_t)d);
        assert_int_equal(course_json_valid(nest, 2 * (size_t)d), d == 256);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
