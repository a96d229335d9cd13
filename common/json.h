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

#ifdef __cplusplus
}
#endif

#endif
