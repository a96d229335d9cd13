/*
 * Fatal-error path shared by every program: one readable line, then the
 * whole job ends (see error.h for why MPI jobs need the abort hook).
 */
#include "error.h"
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void (*abort_hook)(int code) = NULL;

void course_set_abort_hook(void (*hook)(int code)) { abort_hook = hook; }

void course_fatal(const char *file, int line, const char *fmt, ...) {
    char prefix[64];
    log_prefix(prefix, (int)sizeof prefix);
    /* Build the whole line first and write it with one call so that lines
     * from different ranks do not interleave mid-line. */
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%serror: %s:%d: %s\n", prefix, file, line, msg);
    fflush(stderr);
    fflush(stdout);
    if (abort_hook) abort_hook(1);
    exit(1);
}

int course_error(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
