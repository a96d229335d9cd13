/* JSON strings written by hand; see json.h. */
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* JSON text must be UTF-8, and a parser refuses the whole file at the first
 * bad byte: the rule that decides which bytes are written as they are. */
int course_utf8_len(const unsigned char *s) {
    const unsigned char c = s[0];
    if (c < 0x80) return 1;
    int n;
    unsigned int cp;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating 0 */
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;
    if (cp >= 0xd800 && cp <= 0xdfff) return 0;
    return n;
}

void course_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
        const unsigned char c = *p;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c), p++;
        else if (c < 0x20) fprintf(f, "\\u%04x", c), p++;
        else {
            const int n = course_utf8_len(p);
            if (n == 0) fputs("\\ufffd", f), p++; /* one replacement character per bad byte */
            else fwrite(p, 1, (size_t)n, f), p += n;
        }
    }
    fputc('"', f);
}

/* The checker behind course_json_valid(): each function takes the text at
 * p (up to e) and returns the end of what it read, or NULL where the text is
 * not JSON. Recursion is bounded by depth, so "[[[[..." cannot exhaust the stack. */
#define JSON_MAX_DEPTH 256
typedef const unsigned char *jp_t;

static jp_t json_ws(jp_t p, jp_t e) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static jp_t json_digits(jp_t p, jp_t e) {
    jp_t q = p;
    while (q < e && *q >= '0' && *q <= '9') q++;
    return q > p ? q : NULL;
}

/* The 4 hex digits at p as a number, or -1. */
static long json_hex4(jp_t p, jp_t e) {
    if (e - p < 4) return -1;
    long u = 0;
    for (int i = 0; i < 4; i++) {
        const unsigned char c = p[i];
        const int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
        if (d < 0) return -1;
        u = u << 4 | d;
    }
    return u;
}

static jp_t json_str(jp_t p, jp_t e) {
    if (p >= e || *p++ != '"') return NULL;
    while (p < e && *p != '"') {
        if (*p == '\\') {
            if (++p >= e) return NULL;
            if (*p == 'u') {
                /* A surrogate must come as a pair, high then low: a lone half is no character,
                 * and parsers (jansson among them) refuse the file for it. */
                long u = json_hex4(p + 1, e);
                if (u < 0 || (u >= 0xdc00 && u <= 0xdfff)) return NULL;
                p += 5;
                if (u >= 0xd800 && u <= 0xdbff) {
                    long lo = e - p >= 2 && p[0] == '\\' && p[1] == 'u' ? json_hex4(p + 2, e) : -1;
                    if (lo < 0xdc00 || lo > 0xdfff) return NULL;
                    p += 6;
                }
            } else if (*p && strchr("\"\\/bfnrt", *p)) {
                p++;
            } else {
                return NULL;
            }
        } else if (*p < 0x20) {
            return NULL;
        } else {
            /* course_utf8_len reads up to 3 bytes past p: only when they are inside the text. */
            int k = 1;
            if (*p >= 0x80) {
                unsigned char seq[5] = {0};
                memcpy(seq, p, (size_t)(e - p) < 4 ? (size_t)(e - p) : 4);
                if (!(k = course_utf8_len(seq))) return NULL;
            }
            p += k;
        }
    }
    return p < e ? p + 1 : NULL;
}

static jp_t json_val(jp_t p, jp_t e, int depth);

/* An object or array: open and close are its brackets; keyed says an object. */
static jp_t json_seq(jp_t p, jp_t e, int depth, unsigned char close, int keyed) {
    if (depth >= JSON_MAX_DEPTH) return NULL;
    p = json_ws(p + 1, e);
    if (p < e && *p == close) return p + 1;
    for (;;) {
        if (keyed) {
            if (!(p = json_str(p, e))) return NULL;
            p = json_ws(p, e);
            if (p >= e || *p++ != ':') return NULL;
        }
        if (!(p = json_val(p, e, depth + 1))) return NULL;
        p = json_ws(p, e);
        if (p >= e) return NULL;
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
        p = json_ws(p, e);
    }
}

static jp_t json_val(jp_t p, jp_t e, int depth) {
    p = json_ws(p, e);
    if (p >= e) return NULL;
    if (*p == '{') return json_seq(p, e, depth, '}', 1);
    if (*p == '[') return json_seq(p, e, depth, ']', 0);
    if (*p == '"') return json_str(p, e);
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t l = strlen(words[i]);
        if ((size_t)(e - p) >= l && !memcmp(p, words[i], l)) return p + l;
    }
    /* A number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
    jp_t start = p;
    if (*p == '-') p++;
    if (p < e && *p == '0') p++;
    else if (!(p = json_digits(p, e))) return NULL;
    if (p < e && *p == '.' && !(p = json_digits(p + 1, e))) return NULL;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (!(p = json_digits(p, e))) return NULL;
    }
    /* One too large for a double (1e400, 400 digits) is JSON, but parsers refuse it
     * or read it as infinity (RFC 8259, section 6): not something to pass on. */
    char *num = strndup((const char *)start, (size_t)(p - start));
    const int finite = num && isfinite(strtod(num, NULL));
    free(num);
    return finite ? p : NULL;
}

int course_json_valid(const char *s, size_t n) {
    if (!s) return 0;
    jp_t p = (jp_t)s, e = p + n; /* after the check: NULL + n is undefined */
    if (!(p = json_val(p, e, 0))) return 0;
    return json_ws(p, e) == e;
}
