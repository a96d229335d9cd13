/* JSON strings written by hand; see json.h. */
#include "json.h"

/* Length of the well-formed UTF-8 sequence at s (1 to 4), or 0: a stray
 * continuation byte, a truncated sequence, an overlong form, a surrogate
 * (U+D800..DFFF) or a code point past U+10FFFF. JSON text must be UTF-8, and
 * a parser refuses the whole file at the first bad byte. */
static int utf8_len(const unsigned char *s) {
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
            const int n = utf8_len(p);
            if (n == 0) fputs("\\ufffd", f), p++; /* one replacement character per bad byte */
            else fwrite(p, 1, (size_t)n, f), p += n;
        }
    }
    fputc('"', f);
}
