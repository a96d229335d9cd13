/*
 * Table-driven flag parsing (see args.h). Numbers are parsed with strtoll /
 * strtod and must consume the whole string, so "4x", "" and "1e" are errors
 * rather than silently becoming 4, 0 and 1. Numbers are decimal only: with
 * C's base-0 rules "--seed 010" would be 8 and "--steps 08" an error, and
 * strtod would take "--lr 0x10" for 16.
 */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int has_range(const arg_spec_t *s) { return s->min <= s->max; }

/* Edit distance, to suggest the flag the user probably meant. */
static int edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int d[64][64];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

static const arg_spec_t *find_spec(const args_t *a, const char *name, size_t len) {
    for (int i = 0; i < a->nspecs; i++)
        if (strlen(a->specs[i].name) == len && !strncmp(a->specs[i].name, name, len))
            return &a->specs[i];
    return NULL;
}

static void suggest(const args_t *a, const char *name, FILE *msg) {
    const char *best = NULL;
    int best_d = 3; /* only suggest close matches */
    /* A flag that begins with what was typed ("--st" for --steps) is what was meant,
     * before one that is merely close ("--lr" is two edits from "--st" too). */
    for (int i = 0; i < a->nspecs && !best; i++)
        if (strlen(name) >= 2 && !strncmp(a->specs[i].name, name, strlen(name))) best = a->specs[i].name;
    const int prefix = best != NULL;
    for (int i = 0; i < a->nspecs && !prefix; i++) {
        int d = edit_distance(name, a->specs[i].name);
        if (d < best_d || (strstr(a->specs[i].name, name) && !best)) {
            best_d = d < best_d ? d : best_d;
            best = a->specs[i].name;
        }
    }
    if (best) fprintf(msg, "; did you mean '--%s'?\n", best);
    else fprintf(msg, "; run '%s --help' for the list\n", a->prog);
}

static void range_error(const args_t *a, const arg_spec_t *s, const char *val, FILE *msg) {
    if (s->type == ARG_DOUBLE)
        fprintf(msg, "%s: --%s %s is out of range; pick a value in [%g, %g]\n", a->prog, s->name,
                val, s->min, s->max);
    else
        fprintf(msg, "%s: --%s %s is out of range; pick a value in [%.0f, %.0f]\n", a->prog,
                s->name, val, s->min, s->max);
}

/* strtoll and strtod skip leading blanks and take a '+': "--steps ' 12'" or
 * "+12" would pass for 12, so a number must start with a digit, '-' or '.'. */
static int number_start(const char *val) { return (*val >= '0' && *val <= '9') || *val == '-' || *val == '.'; }

static int store(const args_t *a, const arg_spec_t *s, const char *val, FILE *msg) {
    char *end = NULL;
    errno = 0;
    switch (s->type) {
    case ARG_INT:
    case ARG_LONG: {
        long long v = strtoll(val, &end, 10);
        if (!number_start(val) || *end != '\0') {
            fprintf(msg, "%s: --%s expects an integer, got '%s'; run '%s --help' for usage\n",
                    a->prog, s->name, val, a->prog);
            return ARGS_ERROR;
        }
        /* A well-formed integer too large to store is a range error, not a
         * malformed one: say what range the flag takes. */
        if (errno == ERANGE || (s->type == ARG_INT && (v < -2147483648LL || v > 2147483647LL))) {
            if (has_range(s)) range_error(a, s, val, msg);
            else
                fprintf(msg, "%s: --%s %s does not fit in a %d-bit integer; pick a smaller value\n",
                        a->prog, s->name, val, s->type == ARG_INT ? 32 : 64);
            return ARGS_ERROR;
        }
        if (has_range(s) && ((double)v < s->min || (double)v > s->max)) {
            range_error(a, s, val, msg);
            return ARGS_ERROR;
        }
        if (s->type == ARG_INT) *(int *)s->dest = (int)v;
        else *(long long *)s->dest = v;
        return ARGS_OK;
    }
    case ARG_DOUBLE: {
        double v = strtod(val, &end);
        /* ERANGE alone is also set for a value too small to hold in full (1e-310, a
         * subnormal, or 1e-400, 0): that is still the number asked for, to within
         * what a double holds; only one too large (Inf) is refused. */
        /* strtod also reads hex ("0x10" is 16): decimal only, as for integers. */
        if (!number_start(val) || *end != '\0' || !isfinite(v) || strpbrk(val, "xX")) {
            fprintf(msg, "%s: --%s expects a finite number, got '%s'; run '%s --help' for usage\n",
                    a->prog, s->name, val, a->prog);
            return ARGS_ERROR;
        }
        if (has_range(s) && (v < s->min || v > s->max)) {
            range_error(a, s, val, msg);
            return ARGS_ERROR;
        }
        *(double *)s->dest = v;
        return ARGS_OK;
    }
    case ARG_STRING:
        *(const char **)s->dest = val;
        return ARGS_OK;
    case ARG_FLAG:
        *(int *)s->dest = 1;
        return ARGS_OK;
    }
    return ARGS_ERROR;
}

int args_parse(const args_t *a, int argc, char **argv, FILE *msg) {
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            args_print_help(a, msg);
            return ARGS_HELP;
        }
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            fprintf(msg, "%s: unexpected argument '%s'; flags look like --name value; "
                    "run '%s --help' for usage\n", a->prog, arg, a->prog);
            return ARGS_ERROR;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (len == 0) { /* "--=5": no name to look up or to suggest a flag for */
            fprintf(msg, "%s: '%s' has no flag name before the '='; write --name=value; run '%s --help' for "
                    "the list\n", a->prog, arg, a->prog);
            return ARGS_ERROR;
        }
        const arg_spec_t *s = find_spec(a, name, len);
        if (!s) {
            char buf[128];
            snprintf(buf, sizeof buf, "%.*s", (int)(len < 100 ? len : 100), name);
            fprintf(msg, "%s: unknown option '--%s'", a->prog, buf);
            suggest(a, buf, msg);
            return ARGS_ERROR;
        }
        const char *val;
        if (s->type == ARG_FLAG) {
            if (eq) {
                fprintf(msg, "%s: --%s takes no value\n", a->prog, s->name);
                return ARGS_ERROR;
            }
            val = "1";
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
            val = argv[++i];
        } else if (i + 1 < argc) {
            /* "--warmup --steps 2": the value was forgotten; "--steps" is not the value. A bare
             * "--" is not one either: elsewhere it ends the options, and a file named "--" is
             * far rarer than a forgotten value. */
            fprintf(msg, "%s: --%s needs a value, but the next argument is %s '%s'; write --%s VALUE "
                    "(or --%s=VALUE for a value that starts with --)\n", a->prog, s->name,
                    argv[i + 1][2] ? "the flag" : "the end-of-options marker", argv[i + 1], s->name,
                    s->name);
            return ARGS_ERROR;
        } else {
            fprintf(msg, "%s: --%s needs a value; run '%s --help' for usage\n", a->prog, s->name,
                    a->prog);
            return ARGS_ERROR;
        }
        if (store(a, s, val, msg) != ARGS_OK) return ARGS_ERROR;
    }
    return ARGS_OK;
}

void args_print_help(const args_t *a, FILE *out) {
    fprintf(out, "usage: %s [options]\n%s\n\noptions:\n", a->prog, a->summary ? a->summary : "");
    for (int i = 0; i < a->nspecs; i++) {
        const arg_spec_t *s = &a->specs[i];
        char left[64], def[64] = "";
        static const char *kind[] = {"N", "N", "X", "STR", ""};
        snprintf(left, sizeof left, "--%s %s", s->name, kind[s->type]);
        switch (s->type) {
        case ARG_INT: snprintf(def, sizeof def, " (default %d)", *(int *)s->dest); break;
        case ARG_LONG: snprintf(def, sizeof def, " (default %lld)", *(long long *)s->dest); break;
        case ARG_DOUBLE: snprintf(def, sizeof def, " (default %g)", *(double *)s->dest); break;
        case ARG_STRING:
            if (*(const char **)s->dest)
                snprintf(def, sizeof def, " (default %s)", *(const char **)s->dest);
            break;
        case ARG_FLAG: break;
        }
        fprintf(out, "  %-24s %s%s\n", left, s->help ? s->help : "", def);
    }
    fprintf(out, "  %-24s %s\n", "--help", "print this help and exit");
}

void args_parse_or_exit(const args_t *a, int argc, char **argv) {
    /* Help goes to stdout (it was asked for); errors to stderr. Peek for help
     * first, but not in a flag's value: "--name -h" names something "-h". */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            args_print_help(a, stdout);
            exit(0);
        }
        if (strncmp(argv[i], "--", 2) || strchr(argv[i], '=')) continue;
        const arg_spec_t *s = find_spec(a, argv[i] + 2, strlen(argv[i] + 2));
        if (s && s->type != ARG_FLAG && i + 1 < argc && strncmp(argv[i + 1], "--", 2)) i++; /* its value */
    }
    if (args_parse(a, argc, argv, stderr) != ARGS_OK) exit(2);
}
