/*
 * libFuzzer harness: common/json.c, the JSON the benchmarks and the trace
 * writer write by hand. course_json_valid() decides which lines of a rank's
 * trace go into the merged file (a rank's program, the student's, wrote
 * them); course_json_string() writes text from outside (a device name, an
 * error message) into JSON.
 *
 * Feeds: the whole input, as a text to check (in a buffer of exactly its
 * size, so a read past the end is a sanitizer report); each of its bytes, as
 * the start of a UTF-8 sequence; and the input up to its first NUL, as a
 * string to write.
 * Asserts: no crash; course_json_valid agrees with jansson (told to allow
 * \u0000 and to read integers as doubles, as RFC 8259 does), but for nesting
 * past its 256 levels and a NUL byte anywhere, which it refuses; course_utf8_len agrees with the
 * table of well-formed sequences in the Unicode standard (3.9, table 3-7)
 * and reads nothing past a NUL; what course_json_string writes is valid,
 * and jansson reads it back as the string, each byte of an ill-formed
 * sequence read as U+FFFD.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Length of the well-formed UTF-8 sequence at s[0, n), or 0 (table 3-7). */
static int utf8_len_ref(const unsigned char *s, size_t n)
{
    static const struct {
        unsigned char lead_lo, lead_hi, second_lo, second_hi;
        int len;
    } rows[] = {
        {0x00, 0x7f, 0, 0, 1},       {0xc2, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3},
        {0xe1, 0xec, 0x80, 0xbf, 3}, {0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3},
        {0xf0, 0xf0, 0x90, 0xbf, 4}, {0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        if (s[0] < rows[r].lead_lo || s[0] > rows[r].lead_hi) continue;
        const int k = rows[r].len;
        if (k == 1) return 1;
        if ((size_t)k > n || s[1] < rows[r].second_lo || s[1] > rows[r].second_hi) return 0;
        for (int i = 2; i < k; i++)
            if (s[i] < 0x80 || s[i] > 0xbf) return 0;
        return k;
    }
    return 0;
}

/* Nesting depth of a value jansson read (a scalar is 0). */
static int depth_of(json_t *j)
{
    int d = 0;
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) {
            int k = depth_of(json_array_get(j, i));
            if (k > d) d = k;
        }
        return d + 1;
    }
    if (json_is_object(j)) {
        const char *key;
        json_t *v;
        json_object_foreach(j, key, v)
        {
            int k = depth_of(v);
            if (k > d) d = k;
        }
        return d + 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The input as a text to check: data is exactly size bytes. */
    const int ours = course_json_valid((const char *)data, size);
    json_error_t err;
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &err);
    /* A NUL byte is never JSON (a control character in a string, no
     * whitespace outside one), but jansson stops at one after a value. */
    const int nul = memchr(data, 0, size) != NULL;
    if (nul ? ours : ours != (j != NULL) && !(!ours && depth_of(j) > 256)) {
        fprintf(stderr, "course_json_valid says %d, jansson %d (%s) on %zu bytes: %.*s\n", ours, j != NULL,
                j ? "" : err.text, size, (int)size, (const char *)data);
        abort();
    }
    json_decref(j);

    /* Each byte as the start of a sequence, in a buffer that ends at the first NUL. */
    for (size_t i = 0; i < size; i++) {
        size_t n = 0;
        while (n < 4 && i + n < size && data[i + n]) n++;
        unsigned char *s = malloc(n + 1);
        memcpy(s, data + i, n);
        s[n] = 0;
        const int got = course_utf8_len(s), want = utf8_len_ref(s, n + 1);
        if (got != want) {
            fprintf(stderr, "course_utf8_len = %d, the table says %d, at byte %zu (%02x %02x %02x %02x)\n", got, want,
                    i, s[0], n > 1 ? s[1] : 0, n > 2 ? s[2] : 0, n > 3 ? s[3] : 0);
            abort();
        }
        free(s);
    }

    /* The input up to its first NUL, written as a JSON string. */
    const size_t n = strnlen((const char *)data, size);
    char *s = malloc(n + 1);
    memcpy(s, data, n);
    s[n] = 0;
    char *text = NULL, *expect = malloc(3 * n + 1);
    size_t text_len = 0, expect_len = 0;
    FILE *f = open_memstream(&text, &text_len);
    if (!f || !expect) abort();
    course_json_string(f, s);
    if (fclose(f) != 0) abort();
    for (size_t i = 0; i < n;) {
        const int k = utf8_len_ref((const unsigned char *)s + i, n - i);
        if (k) memcpy(expect + expect_len, s + i, (size_t)k), expect_len += (size_t)k, i += (size_t)k;
        else memcpy(expect + expect_len, "\xef\xbf\xbd", 3), expect_len += 3, i++;
    }
    if (!course_json_valid(text, text_len)) {
        fprintf(stderr, "course_json_string wrote what course_json_valid refuses: %s\n", text);
        abort();
    }
    j = json_loadb(text, text_len, JSON_DECODE_ANY, &err);
    if (!json_is_string(j) || json_string_length(j) != expect_len || memcmp(json_string_value(j), expect, expect_len)) {
        fprintf(stderr, "course_json_string wrote %s, which jansson reads %s\n", text,
                j ? (json_is_string(j) ? "as another string" : "as no string") : err.text);
        abort();
    }
    json_decref(j);
    free(text);
    free(expect);
    free(s);
    return 0;
}
