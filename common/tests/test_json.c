/* course_json_string() writes text that a JSON parser reads back unchanged;
 * course_json_valid() tells JSON from what is not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* n bytes of s placed so that the byte after them is the first of a page
 * that cannot be read: a check that reads past the text it was given (a
 * line cut short, with no NUL after it) dies here instead of reading on. */
static const char *guarded(const char *s, size_t n) {
    static char *pages = NULL;
    static size_t page = 0;
    if (!pages) {
        page = (size_t)sysconf(_SC_PAGESIZE);
        pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(pages != MAP_FAILED);
        assert_int_equal(mprotect(pages + page, page, PROT_NONE), 0);
    }
    assert_true(n <= page);
    char *p = pages + page - n;
    memcpy(p, s, n);
    return p;
}

static int valid_guarded(const char *s, size_t n) { return course_json_valid(guarded(s, n), n); }

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
        {"\x1f\x7f", "\"\\u001f\x7f\""},                 /* DEL is no control character to JSON */
        {"\xc2\x80\xdf\xbf", "\"\xc2\x80\xdf\xbf\""},           /* U+0080 and U+07FF, the 2-byte ends */
        {"\xe0\xa0\x80\xef\xbf\xbd", "\"\xe0\xa0\x80\xef\xbf\xbd\""}, /* U+0800 and U+FFFD, 3 bytes */
        {"\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""},             /* U+10FFFF, the last code point */
        {"\xed\x9f\xbf\xee\x80\x80", "\"\xed\x9f\xbf\xee\x80\x80\""}, /* either side of the surrogates */
        {"\xe0\x9f\xbf", "\"\\ufffd\\ufffd\\ufffd\""},            /* U+07FF overlong in 3 bytes */
        {"\xed\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\""},            /* the last surrogate, U+DFFF */
        {"\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* a lead byte past F4 */
        {"a\x80" "b", "\"a\\ufffd" "b\""},                              /* a stray continuation byte */
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

/* course_utf8_len: each length at its ends, and no byte read past a
 * sequence's own length (here the text ends at an unreadable page). */
static void test_utf8_len(void **state) {
    (void)state;
    static const struct { const char *s; int len; } cases[] = {
        {"\x7f", 1},     {"\xc2\x80", 2},     {"\xdf\xbf", 2},         {"\xe0\xa0\x80", 3}, {"\xef\xbf\xbf", 3},
        {"\xf0\x90\x80\x80", 4}, {"\xf4\x8f\xbf\xbf", 4}, {"\xc1\xbf", 0}, {"\xe0\x9f\xbf", 0}, {"\xed\xa0\x80", 0},
        {"\xed\xbf\xbf", 0}, {"\xf0\x8f\xbf\xbf", 0}, {"\xf4\x90\x80\x80", 0}, {"\xf5\x80\x80\x80", 0}, {"\x80", 0},
        {"\xc3\x28", 0}, {"\xe2\x82\x28", 0}, {"\xf0\x9f\x99\x28", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const size_t n = strlen(cases[i].s);
        const int got = course_utf8_len((const unsigned char *)guarded(cases[i].s, n));
        if (got != cases[i].len) fail_msg("course_utf8_len(case %zu) = %d, expected %d", i, got, cases[i].len);
    }
    assert_int_equal(course_utf8_len((const unsigned char *)"\xf0\x9f\x99"), 0); /* stops at the NUL */
    /* F5 to FF lead no sequence, whatever follows: read with the lead's low
     * bits, F8 90 80 80 would be U+10000 and FC 80 80 80 U+100000. */
    for (unsigned c = 0xf5; c <= 0xff; c++) {
        const unsigned char a[5] = {(unsigned char)c, 0x90, 0x80, 0x80, 0}, b[5] = {(unsigned char)c, 0x80, 0x80, 0x80, 0};
        if (course_utf8_len(a) || course_utf8_len(b)) fail_msg("course_utf8_len took 0x%02x for a lead byte", c);
    }
    char *got = written("\xf8\x90\x80\x80");
    assert_string_equal(got, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    free(got);
    assert_false(course_json_valid("\"\xfc\x80\x80\x80\"", 6));
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

/* Each kind of value and escape, cut at every byte: every cut is refused
 * (a rank that died mid-line), the whole is accepted, and nothing is read
 * past the end of the text. */
static void test_every_cut_is_refused(void **state) {
    (void)state;
    static const char *const docs[] = {
        "{\"ph\":\"X\",\"name\":\"caf\xc3\xa9 \xf0\x9f\x99\x82\",\"ts\":-12.5e+3,\"args\":{\"ok\":true,\"no\":false,\"v\":null}}",
        "[\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\", 0, -0.25E-2, 1e5, [], {}, [[1],{\"a\":[]}]]",
        "{\"\xe2\x86\x92\": \"\xef\xbf\xbd\\uFFFD\", \"k\" : [ true , false , null ] }",
    };
    for (size_t d = 0; d < sizeof docs / sizeof *docs; d++) {
        const size_t n = strlen(docs[d]);
        if (!valid_guarded(docs[d], n)) fail_msg("refused valid JSON: %s", docs[d]);
        for (size_t cut = 0; cut < n; cut++)
            if (valid_guarded(docs[d], cut)) fail_msg("accepted a cut at %zu of: %s", cut, docs[d]);
    }
    /* Cuts inside a literal, an escape and a surrogate pair, each alone. */
    static const char *const cut[] = {"tru", "fals", "nul", "-", "1e", "1e+", "1.", "\"\\", "\"\\u", "\"\\u00e",
                                      "\"\\ud83d", "\"\\ud83d\\", "\"\\ud83d\\u", "\"\\ud83d\\ude0", "\"\xc3",
                                      "\"\xf0\x9f\x99", "\"abc", "[1", "[1,", "{\"a\"", "{\"a\":", "{\"a\":1"};
    for (size_t i = 0; i < sizeof cut / sizeof *cut; i++)
        if (valid_guarded(cut[i], strlen(cut[i]))) fail_msg("accepted a cut value: %s", cut[i]);
    assert_true(valid_guarded("true", 4));
    assert_true(valid_guarded("1e5", 3));
}

/* The edges of each rule, as RFC 8259 and RFC 3629 draw them. */
static void test_valid_edges(void **state) {
    (void)state;
    static const char *const good[] = {
        "\"\\u00E9\\u00e9\"", "1E5", "1e-5", "1E+5", "-0", "0.5", "\"\\ud800\\udc00\"", "\"\\udbff\\udfff\"",
        "\"\\\"\\\\\"", " \t\r\n[1]\r\n", "\"\xef\xbf\xbd\"", "\"\xdf\xbf\"", "\"\xc2\x80\"", "\"\xe0\xa0\x80\"",
        "\"\xf0\x90\x80\x80\"", "\"\xf4\x8f\xbf\xbf\"", "\"\x7f\"", "\"\xed\x9f\xbf\"", "\"\xee\x80\x80\"",
        "{\"a\":{\"b\":[]}}", "[\t1\n,\r2 ]",
    };
    static const char *const bad[] = {
        "[1}", "{\"a\":1]", "{1:2}", "{null:1}", "{[]:1}", "\"\\v\"", "\"\\ud800\\/dc00\"", "\"\\ud800\\\\udc00\"",
        "\"\x80\"", "\"\xbf\"", "\"\xc1\xbf\"", "\"\xe0\x9f\xbf\"", "\"\xed\xbf\xbf\"", "\"\xf4\x90\x80\x80\"",
        "\"\xf5\x80\x80\x80\"", "\"\xf0\x8f\xbf\xbf\"", "\"\xc3\x41\"", "\"\xe2\x86\"", "[1]\v", "\v[1]",
        "\"\\U00e9\"", "\"\\u00e\"", "{\"a\":1,}", "[,1]", "{,}", "True", "nulll", "[01]", "[-]", "[1.e5]", "[.5]",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        if (!valid_guarded(good[i], strlen(good[i]))) fail_msg("refused valid JSON: %s", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (valid_guarded(bad[i], strlen(bad[i]))) fail_msg("accepted invalid JSON: %s", bad[i]);
    /* A NUL inside a string, or after a backslash, is not JSON. */
    assert_false(course_json_valid("\"a\0b\"", 5));
    assert_false(course_json_valid("\"\\\0\"", 4));
    assert_false(course_json_valid(NULL, 3));
    assert_false(course_json_valid(NULL, 0));
}

/* The same verdict as jansson on a few thousand near-misses: valid records
 * with a byte changed, inserted or removed (RFC 8259's grammar, with jansson
 * told to allow \u0000 and to read integers as doubles). */
static void test_agrees_with_jansson(void **state) {
    (void)state;
    static const char *const seeds[] = {
        "{\"ph\":\"X\",\"name\":\"gemm \\\"v2\\\"\",\"ts\":1.5e3,\"dur\":-2,\"args\":{\"k\":[true,false,null]}}",
        "[\"caf\xc3\xa9\",\"\\u00e9\\ud83d\\ude00\",0,-0.5,12e-1,{\"\xe2\x86\x92\":\"\xf0\x9f\x99\x82\"}]",
        "{\"a\": [1, 2.25, {\"b\": \"\\n\\t\\/\"}], \"c\": {}}",
    };
    static const unsigned char alphabet[] = "{}[]:,\"\\u019-+.eEdD8aftnl \t\n\rx\x80\xc3\xa9\xed\xa0\xf0\x9f\xff\x01\x1f\x7f";
    uint64_t x = 0x2545f4914f6cdd1dull;
    char buf[256];
    int checked = 0;
    for (int round = 0; round < 20000; round++) {
        const char *seed = seeds[round % 3];
        size_t n = strlen(seed);
        memcpy(buf, seed, n);
        for (int edits = 0; edits < 1 + round % 3; edits++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const size_t at = (size_t)(x >> 8) % n;
            const unsigned char c = alphabet[(x >> 40) % (sizeof alphabet - 1)];
            switch ((x >> 56) % 3) {
            case 0: buf[at] = (char)c; break;                                          /* change */
            case 1: memmove(buf + at + 1, buf + at, n - at), buf[at] = (char)c, n++; break; /* insert */
            default: memmove(buf + at, buf + at + 1, n - at - 1), n--; break;             /* remove */
            }
        }
        json_error_t err;
        json_t *j = json_loadb(buf, n, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &err);
        const int ours = valid_guarded(buf, n), theirs = j != NULL;
        json_decref(j);
        if (ours != theirs) fail_msg("course_json_valid says %d, jansson %d (%s) on: %.*s", ours, theirs, err.text, (int)n, buf);
        checked += ours;
    }
    assert_true(checked > 500); /* some edits keep the record valid */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_utf8_len),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_every_cut_is_refused),
        cmocka_unit_test(test_valid_edges),
        cmocka_unit_test(test_agrees_with_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
