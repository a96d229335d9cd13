/*
 * libFuzzer harness: merging trace files (trace_merge in common/trace.c).
 *
 * Feeds: the input split at NUL bytes into up to 4 files, one per rank,
 * which trace_merge() joins into one.
 * Asserts: the merge never crashes; when it succeeds the merged file is
 * valid JSON (by jansson, told to allow \u0000 and to read an integer of any
 * length as a double, as RFC 8259 does) with a "traceEvents" array, so that
 * the viewer can open it.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace.h"

#define MAX_FILES 4
static int fds[MAX_FILES + 1] = {-1};
static char paths[MAX_FILES + 1][64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (fds[0] < 0) {
        for (int i = 0; i <= MAX_FILES; i++) {
            fds[i] = memfd_create("trace", 0);
            if (fds[i] < 0) abort();
            snprintf(paths[i], sizeof paths[i], "/proc/self/fd/%d", fds[i]);
        }
    }
    const char *in[MAX_FILES];
    int n = 0;
    for (size_t at = 0; n < MAX_FILES && at <= size;) {
        const uint8_t *z = memchr(data + at, 0, size - at);
        size_t len = z ? (size_t)(z - (data + at)) : size - at;
        if (ftruncate(fds[n], 0) != 0 || pwrite(fds[n], data + at, len, 0) != (ssize_t)len) abort();
        in[n] = paths[n];
        n++;
        at += len + 1;
    }
    const int out = MAX_FILES;
    if (ftruncate(fds[out], 0) != 0) abort();
    if (trace_merge(paths[out], in, n) != 0) return 0;
    json_error_t je;
    json_t *root = json_load_file(paths[out], JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je);
    if (!root || !json_is_array(json_object_get(root, "traceEvents"))) {
        fprintf(stderr, "merged file is not a trace: %s (line %d)\n", je.text, je.line);
        abort();
    }
    json_decref(root);
    return 0;
}
