/** @file
 * Command-line flags for every program in the course.
 *
 * A program lists its flags in a table (name, type, where to store it, help);
 * the parser fills the variables, prints --help from the same table (with the
 * defaults taken from the variables' initial values) and rejects bad input
 * with a message that says what was wrong and what would be right:
 *
 *     train: --heads expects an integer, got '4x'; run 'train --help' for usage
 *     train: --layers 0 is out of range; pick a value in [1, 64]
 *     train: unknown option '--lr-warmup'; did you mean '--warmup'?
 *     train: --warmup needs a value, but the next argument is the flag '--steps'; ...
 *
 * Numbers are decimal ("010" is ten, "0x10" an error, also for a number
 * with a fraction). A value that starts with "--" must be written --name=value.
 */
#ifndef COURSE_ARGS_H
#define COURSE_ARGS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What kind of value a flag takes. */
typedef enum {
    ARG_INT,    /**< int, with an optional [min, max] range */
    ARG_LONG,   /**< long long, with an optional range */
    ARG_DOUBLE, /**< double, with an optional range */
    ARG_STRING, /**< const char *, pointing into argv */
    ARG_FLAG,   /**< int set to 1 when present; takes no value */
} arg_type_t;

/** One flag: "--name value" or "--name=value". */
typedef struct {
    const char *name;  /**< without the leading dashes, e.g. "steps" */
    arg_type_t type;   /**< the value's type */
    void *dest;        /**< int*, long long*, double*, const char** or int* (flag) */
    const char *help;  /**< one line for --help */
    double min;        /**< smallest allowed value (numbers); the range is off when min > max */
    double max;        /**< largest allowed value (numbers) */
} arg_spec_t;

/** A program's flag table. */
typedef struct {
    const char *prog;         /**< program name for messages */
    const char *summary;      /**< one line saying what the program does */
    const arg_spec_t *specs;  /**< the flags */
    int nspecs;               /**< how many */
} args_t;

/** Results of args_parse(). */
enum { ARGS_OK = 0, ARGS_HELP = 1, ARGS_ERROR = -1 };

/**
 * @brief Parse argv against the table, storing values into each spec's dest.
 * @param a the flag table
 * @param argc argument count
 * @param argv arguments (argv[0] is skipped)
 * @param msg where help and error messages go
 * @return ARGS_OK, ARGS_HELP (help was printed) or ARGS_ERROR (a message was printed)
 */
int args_parse(const args_t *a, int argc, char **argv, FILE *msg);

/**
 * @brief Parse, or exit: 0 after --help (to stdout), 2 after an error (to stderr).
 * @param a the flag table
 * @param argc argument count
 * @param argv arguments
 */
void args_parse_or_exit(const args_t *a, int argc, char **argv);

/**
 * @brief Print the usage text generated from the table.
 * @param a the flag table
 * @param out stream
 */
void args_print_help(const args_t *a, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_ARGS_H */
