/*
 * libFuzzer harness: command-line flags (common/args.c).
 *
 * Feeds: the input split at NUL bytes into argv[1..] (at most 32 arguments),
 * parsed against a table with one flag of every type, with and without a
 * range.
 * Asserts: args_parse() never crashes; an error is one or more lines that
 * start with the program's name and end with a newline; after a success
 * every number is finite and inside its flag's range.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[34] = {"fz"};
    int argc = 1;
    for (char *p = buf; p <= buf + size && argc < 33; p += strlen(p) + 1) argv[argc++] = p;
    argv[argc] = NULL;

    int steps = 10, seed = 0, layers = 2, flag = 0;
    long long tokens = 0, big = 5;
    double lr = 0.1, eps = 1e-8;
    const char *name = NULL;
    const arg_spec_t specs[] = {
        {"steps", ARG_INT, &steps, "steps", 1, 100000},
        {"seed", ARG_INT, &seed, "any int", 1, 0},
        {"layers", ARG_INT, &layers, "layers", 1, 64},
        {"tokens", ARG_LONG, &tokens, "tokens", 0, 1e15},
        {"big", ARG_LONG, &big, "any long long", 1, 0},
        {"lr", ARG_DOUBLE, &lr, "learning rate", 0, 10},
        {"eps", ARG_DOUBLE, &eps, "any double", 1, 0},
        {"name", ARG_STRING, &name, "a name", 0, 0},
        {"verbose", ARG_FLAG, &flag, "talk", 0, 0},
    };
    const args_t a = {"fz", "fuzzing the flags", specs, (int)(sizeof specs / sizeof specs[0])};

    char *msg = NULL;
    size_t msg_len = 0;
    FILE *m = open_memstream(&msg, &msg_len);
    int rc = args_parse(&a, argc, argv, m);
    fclose(m);
    if (rc == ARGS_ERROR) {
        if (msg_len == 0 || strncmp(msg, "fz: ", 4) != 0 || msg[msg_len - 1] != '\n') abort();
    } else if (rc == ARGS_OK) {
        if (steps < 1 || steps > 100000 || layers < 1 || layers > 64 || tokens < 0 || tokens > 1000000000000000LL)
            abort();
        if (!isfinite(lr) || lr < 0 || lr > 10 || !isfinite(eps)) abort();
    } else if (rc != ARGS_HELP) {
        abort();
    }
    free(msg);
    free(buf);
    return 0;
}
