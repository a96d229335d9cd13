/*
 * Rank-prefixed logging (see log.h). Each line is formatted into one buffer
 * and written with a single fputs, so concurrent ranks sharing a terminal do
 * not tear each other's lines.
 */
#include "log.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int log_rank_ = -1;
static int log_size_ = 1;
static int log_level_ = -1; /* -1: not read from the environment yet */
static FILE *log_out_ = NULL;

void log_set_rank(int rank, int size) {
    log_rank_ = rank;
    log_size_ = size;
}

int log_rank(void) { return log_rank_; }

void log_set_level(log_level_t level) { log_level_ = (int)level; }

log_level_t log_level(void) {
    if (log_level_ < 0) {
        const char *env = getenv("COURSE_LOG_LEVEL");
        log_level_ = LOG_INFO;
        if (env && *env) {
            if (!strcasecmp(env, "error")) log_level_ = LOG_ERROR;
            else if (!strcasecmp(env, "warn") || !strcasecmp(env, "warning")) log_level_ = LOG_WARN;
            else if (!strcasecmp(env, "info")) log_level_ = LOG_INFO;
            else if (!strcasecmp(env, "debug")) log_level_ = LOG_DEBUG;
            /* Said once, not ignored: a misspelt "debug" would otherwise look like a program
             * that has nothing more to say. */
            else fprintf(stderr, "COURSE_LOG_LEVEL is '%s', which is not a level; set it to error, warn, "
                                 "info or debug (info is used)\n", env);
        }
    }
    return (log_level_t)log_level_;
}

void log_set_stream(FILE *out) { log_out_ = out; }

int log_prefix(char *buf, int len) {
    if (len <= 0) return 0;
    buf[0] = '\0';
    if (log_rank_ < 0) return 0;
    int n = snprintf(buf, (size_t)len, "[rank %d/%d] ", log_rank_, log_size_);
    return n < len ? n : len - 1;
}

void log_msg(log_level_t level, const char *fmt, ...) {
    /* A level outside the enum (an int cast in) is clamped to the nearest one, rather than
     * reading a name from outside the table below. */
    if ((int)level < (int)LOG_ERROR) level = LOG_ERROR;
    if ((int)level > (int)LOG_DEBUG) level = LOG_DEBUG;
    if ((int)level > (int)log_level()) return;
    static const char *names[] = {"error: ", "warning: ", "", "debug: "};
    char line[4096];
    int n = log_prefix(line, (int)sizeof line);
    n += snprintf(line + n, sizeof line - (size_t)n, "%s", names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    /* A message that cannot be formatted (a %ls whose text the locale cannot
     * write) is said to be missing, and from which call, not left out. */
    if (m < 0) m = snprintf(line + n, sizeof line - (size_t)n, "(log message could not be formatted: \"%s\")", fmt);
    n = (m < 0 || n + m >= (int)sizeof line - 1) ? (int)sizeof line - 2 : n + m;
    line[n] = '\n';
    line[n + 1] = '\0';
    FILE *out = log_out_ ? log_out_ : stderr;
    fputs(line, out);
    fflush(out);
}
