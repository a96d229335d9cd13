/** @file
 * JSON written by hand: a string, quoted and escaped.
 *
 * The benchmarks and the trace writer print their JSON with fprintf (flat
 * records, no library needed to write them). Numbers and fixed keys are safe
 * as they are; a string that comes from outside the program, such as the
 * device name the driver reports or a kernel's error message, is not: one
 * quote in it and the grader cannot read the file.
 */
#ifndef COURSE_JSON_H
#define COURSE_JSON_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Write s as a JSON string, with its quotes: '"' and '\\' get a
 *        backslash, control characters become \\u00XX, well-formed UTF-8 is
 *        written as it is, and each byte that is not (Latin-1 text, a cut
 *        sequence, a surrogate) becomes \\ufffd, so the file stays valid.
 * @param f the open output
 * @param s the text; NULL is written as ""
 */
void course_json_string(FILE *f, const char *s);

/**
 * @brief Length of the well-formed UTF-8 sequence that starts at s.
 *
 * The rule course_json_string() and the grader's results.json share: what is
 * not well formed is written as U+FFFD, since a JSON parser refuses the whole
 * text at its first bad byte.
 * @param s the text; reads at most 4 bytes, and stops at a terminating 0
 * @return 1 to 4, or 0 for a stray continuation byte, a truncated sequence, an
 *         overlong form, a surrogate (U+D800..DFFF) or a code point past U+10FFFF
 */
int course_utf8_len(const unsigned char *s);

/**
 * @brief Is s[0..n) exactly one JSON value (RFC 8259: objects, arrays,
 *        strings in well-formed UTF-8, numbers, true, false, null), with
 *        nothing but whitespace around it?
 *
 * For a file that must stay readable when lines from elsewhere are copied
 * into it: trace_merge() checks each event line of a rank's trace with it,
 * so a line cut short by a rank that died is left out rather than breaking
 * the merged file. Nesting deeper than 256 levels, and a number too large
 * for a double (which parsers refuse or read as infinity), count as not valid.
 * @param s the text (need not be NUL-ended; a NUL inside is not valid)
 * @param n its length in bytes
 * @return 1 if valid, else 0
 */
int course_json_valid(const char *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif
