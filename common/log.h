/** @file
 * Rank-prefixed logging.
 *
 * Every line starts with "[rank r/n]" once the communicator has told the log
 * which rank this process is, so the interleaved output of an MPI job can be
 * read (and grepped) per rank. Verbosity comes from COURSE_LOG_LEVEL
 * (error, warn or warning, info, debug, in any case; default info, and an
 * unknown name is said on stderr once and gives info).
 */
#ifndef COURSE_LOG_H
#define COURSE_LOG_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Message levels, most severe first. */
typedef enum { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 } log_level_t;

/**
 * @brief Tell the log which rank this process is; lines get a "[rank r/n]" prefix.
 * @param rank this process's rank, or -1 for "not in a job" (no prefix)
 * @param size number of ranks in the job
 */
void log_set_rank(int rank, int size);

/** @brief This process's rank as set by log_set_rank(), or -1. */
int log_rank(void);

/**
 * @brief Set the most verbose level that is printed.
 * @param level messages above this level are dropped
 */
void log_set_level(log_level_t level);

/** @brief The current level (from COURSE_LOG_LEVEL on first use, else LOG_INFO). */
log_level_t log_level(void);

/**
 * @brief Redirect log output (default stderr). Tests use this to capture lines.
 * @param out stream to write to; NULL restores stderr
 */
void log_set_stream(FILE *out);

/**
 * @brief Print one prefixed line at the given level; a newline is added.
 * @param level message level (one outside the enum is taken as the nearest: below
 *              LOG_ERROR as LOG_ERROR, above LOG_DEBUG as LOG_DEBUG)
 * @param fmt printf-style format
 */
void log_msg(log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * @brief Write the "[rank r/n] " prefix (or nothing) into buf.
 * @param buf destination
 * @param len size of buf in bytes
 * @return number of characters written (excluding the terminator)
 */
int log_prefix(char *buf, int len);

/** @brief Log at error level. */
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
/** @brief Log at warning level. */
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
/** @brief Log at info level. */
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
/** @brief Log at debug level. */
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#ifdef __cplusplus
}
#endif
#endif /* COURSE_LOG_H */
