/* Flag parsing: values land in the right place, bad input gets a helpful message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "args.h"

static int steps, verbose, seed;
static long long tokens;
static double lr;
static const char *data;

static const arg_spec_t specs[] = {
    {"steps", ARG_INT, &steps, "training steps", 1, 1000000},
    {"tokens", ARG_LONG, &tokens, "token budget", 0, -1},
    {"lr", ARG_DOUBLE, &lr, "learning rate", 0, 1},
    {"data", ARG_STRING, &data, "text file to train on", 0, -1},
    {"verbose", ARG_FLAG, &verbose, "print more", 0, -1},
    {"seed", ARG_INT, &seed, "random seed", 0, -1},
};
static const args_t table = {"train", "train a small model", specs, 6};

/* Parse a NULL-terminated argument list; return the result and the message text. */
static int parse(char *msg, size_t len, const char **argv_in) {
    char *argv[16];
    int argc = 0;
    while (argv_in[argc]) {
        argv[argc] = (char *)argv_in[argc];
        argc++;
    }
    steps = 10;
    tokens = 0;
    lr = 3e-4;
    data = NULL;
    verbose = 0;
    seed = 0;
    FILE *f = tmpfile();
    int rc = args_parse(&table, argc, argv, f);
    rewind(f);
    size_t n = fread(msg, 1, len - 1, f);
    msg[n] = '\0';
    fclose(f);
    return rc;
}

static void test_values_are_stored(void **state) {
    (void)state;
    char msg[2048];
    const char *argv[] = {"train", "--steps", "200", "--lr=0.001", "--data", "x.txt",
                          "--verbose", "--tokens", "5000000000", NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_OK);
    assert_int_equal(steps, 200);
    assert_true(lr == 0.001);
    assert_string_equal(data, "x.txt");
    assert_int_equal(verbose, 1);
    assert_true(tokens == 5000000000LL);
    assert_string_equal(msg, "");
}

static void test_defaults_kept(void **state) {
    (void)state;
    char msg[2048];
    const char *argv[] = {"train", NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_OK);
    assert_int_equal(steps, 10);
    assert_null(data);
}

static void test_bad_integer(void **state) {
    (void)state;
    char msg[2048];
    const char *argv[] = {"train", "--steps", "4x", NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_ERROR);
    assert_non_null(strstr(msg, "--steps expects an integer, got '4x'"));
    const char *empty[] = {"train", "--steps=", NULL};
    assert_int_equal(parse(msg, sizeof msg, empty), ARGS_ERROR);
}

/* strtoll and strtod would take a leading blank or '+'; the flags do not. A
 * double too small to hold in full is still that number; ".5" is a number. */
static void test_number_forms(void **state) {
    (void)state;
    char msg[2048];
    const char *blank[] = {"train", "--steps", " 12", NULL};
    assert_int_equal(parse(msg, sizeof msg, blank), ARGS_ERROR);
    assert_non_null(strstr(msg, "--steps expects an integer, got ' 12'"));
    const char *plus[] = {"train", "--steps=+12", NULL};
    assert_int_equal(parse(msg, sizeof msg, plus), ARGS_ERROR);
    const char *plus_lr[] = {"train", "--lr", "+0.1", NULL};
    assert_int_equal(parse(msg, sizeof msg, plus_lr), ARGS_ERROR);
    assert_non_null(strstr(msg, "--lr expects a finite number, got '+0.1'"));
    const char *tiny[] = {"train", "--lr", "1e-310", NULL};
    assert_int_equal(parse(msg, sizeof msg, tiny), ARGS_OK);
    assert_true(lr > 0 && lr < 1e-300);
    const char *point[] = {"train", "--lr", ".5", "--steps", "-0", NULL};
    assert_int_equal(parse(msg, sizeof msg, point), ARGS_ERROR); /* -0 steps: out of [1, 1000000] */
    const char *point_ok[] = {"train", "--lr", ".5", NULL};
    assert_int_equal(parse(msg, sizeof msg, point_ok), ARGS_OK);
    assert_true(lr == 0.5);
    const char *huge[] = {"train", "--lr", "1e400", NULL};
    assert_int_equal(parse(msg, sizeof msg, huge), ARGS_ERROR);
}

/* args_parse_or_exit looks for -h before parsing, but not in a flag's value:
 * "--data -h" trains on a file named -h (run in a child: help would exit). */
static void test_help_peek_skips_values(void **state) {
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *argv[] = {"train", "--data", "-h", "--steps", "3", NULL};
        if (!freopen("/dev/null", "w", stdout)) _exit(4);
        data = NULL;
        args_parse_or_exit(&table, 5, argv);
        _exit(data && !strcmp(data, "-h") && steps == 3 ? 3 : 5);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3); /* 0: it printed help instead */
}

static void test_out_of_range(void **state) {
    (void)state;
    char msg[2048];
    const char *argv[] = {"train", "--steps", "0", NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_ERROR);
    assert_non_null(strstr(msg, "--steps 0 is out of range; pick a value in [1, 1000000]"));
    const char *lr_bad[] = {"train", "--lr", "2", NULL};
    assert_int_equal(parse(msg, sizeof msg, lr_bad), ARGS_ERROR);
    const char *nan_bad[] = {"train", "--lr", "nan", NULL};
    assert_int_equal(parse(msg, sizeof msg, nan_bad), ARGS_ERROR);
    assert_non_null(strstr(msg, "finite number"));
    /* Too large for a double is not a number at all, whatever the flag's range. */
    const char *inf_bad[] = {"train", "--lr", "1e400", NULL};
    assert_int_equal(parse(msg, sizeof msg, inf_bad), ARGS_ERROR);
    assert_non_null(strstr(msg, "--lr expects a finite number, got '1e400'"));
    /* The range in the message is inclusive: both ends are accepted. */
    const char *ends[] = {"train", "--steps", "1000000", "--lr", "0", NULL};
    assert_int_equal(parse(msg, sizeof msg, ends), ARGS_OK);
    assert_int_equal(steps, 1000000);
    assert_true(lr == 0.0);
    const char *lr_top[] = {"train", "--lr", "1", NULL};
    assert_int_equal(parse(msg, sizeof msg, lr_top), ARGS_OK);
    assert_true(lr == 1.0);
}

/* An integer too large for its type is well formed: the message gives the
 * flag's range (or the type's size), not "expects an integer". */
static void test_integer_overflow_is_a_range_error(void **state) {
    (void)state;
    char msg[2048];
    const char *big_int[] = {"train", "--steps", "4294967360", NULL};
    assert_int_equal(parse(msg, sizeof msg, big_int), ARGS_ERROR);
    assert_non_null(strstr(msg, "--steps 4294967360 is out of range; pick a value in [1, 1000000]"));
    assert_int_equal(steps, 10);
    const char *big_long[] = {"train", "--tokens", "99999999999999999999", NULL};
    assert_int_equal(parse(msg, sizeof msg, big_long), ARGS_ERROR);
    assert_non_null(strstr(msg, "--tokens 99999999999999999999 does not fit in a 64-bit integer"));
    assert_null(strstr(msg, "expects an integer"));
    assert_true(tokens == 0);
    /* A flag with no range still holds only what an int holds: 2^31 would wrap to -2^31. */
    const char *big_seed[] = {"train", "--seed", "2147483648", NULL};
    assert_int_equal(parse(msg, sizeof msg, big_seed), ARGS_ERROR);
    assert_non_null(strstr(msg, "--seed 2147483648 does not fit in a 32-bit integer"));
    assert_int_equal(seed, 0);
    const char *int_ends[] = {"train", "--seed", "2147483647", NULL};
    assert_int_equal(parse(msg, sizeof msg, int_ends), ARGS_OK);
    assert_int_equal(seed, 2147483647);
    const char *int_low[] = {"train", "--seed", "-2147483648", NULL};
    assert_int_equal(parse(msg, sizeof msg, int_low), ARGS_OK);
    assert_int_equal(seed, -2147483647 - 1);
}

static void test_unknown_flag_suggests(void **state) {
    (void)state;
    char msg[2048];
    const char *argv[] = {"train", "--step", "5", NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_ERROR);
    assert_non_null(strstr(msg, "unknown option '--step'; did you mean '--steps'?"));
    /* What was typed begins a flag's name: that flag, not one a couple of edits away ("--lr"). */
    const char *prefix[] = {"train", "--st", "5", NULL};
    assert_int_equal(parse(msg, sizeof msg, prefix), ARGS_ERROR);
    assert_non_null(strstr(msg, "unknown option '--st'; did you mean '--steps'?"));
    const char *far[] = {"train", "--zzzzzz", NULL};
    assert_int_equal(parse(msg, sizeof msg, far), ARGS_ERROR);
    assert_non_null(strstr(msg, "run 'train --help'"));
    /* A typo that is not a prefix: two letters swapped is two edits from --steps. */
    const char *swapped[] = {"train", "--setps", "5", NULL};
    assert_int_equal(parse(msg, sizeof msg, swapped), ARGS_ERROR);
    assert_non_null(strstr(msg, "unknown option '--setps'; did you mean '--steps'?"));
    /* Three edits is too far to guess ("--stxxx" is not --steps). */
    const char *three[] = {"train", "--stxxx", "5", NULL};
    assert_int_equal(parse(msg, sizeof msg, three), ARGS_ERROR);
    assert_null(strstr(msg, "did you mean"));
    /* Part of a flag's name, when no flag is close: "oke" is three edits from --tokens. */
    const char *part[] = {"train", "--oke", NULL};
    assert_int_equal(parse(msg, sizeof msg, part), ARGS_ERROR);
    assert_non_null(strstr(msg, "did you mean '--tokens'?"));
}

static void test_missing_value_and_stray_args(void **state) {
    (void)state;
    char msg[2048];
    const char *argv[] = {"train", "--data", NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_ERROR);
    assert_non_null(strstr(msg, "--data needs a value"));
    const char *stray[] = {"train", "oops", NULL};
    assert_int_equal(parse(msg, sizeof msg, stray), ARGS_ERROR);
    assert_non_null(strstr(msg, "unexpected argument 'oops'"));
    const char *bare[] = {"train", "--", NULL};
    assert_int_equal(parse(msg, sizeof msg, bare), ARGS_ERROR);
    assert_non_null(strstr(msg, "unexpected argument '--'"));
    const char *flagval[] = {"train", "--verbose=1", NULL};
    assert_int_equal(parse(msg, sizeof msg, flagval), ARGS_ERROR);
    /* No name before the '=': said so, not "unknown option '--'; did you mean ...". */
    const char *noname[] = {"train", "--=5", NULL};
    assert_int_equal(parse(msg, sizeof msg, noname), ARGS_ERROR);
    assert_non_null(strstr(msg, "train: '--=5' has no flag name before the '='; write --name=value"));
    assert_null(strstr(msg, "did you mean"));
}

/* Numbers are decimal: a leading zero is not octal ("010" is ten, "08" is
 * eight) and "0x10" is not hex, as a person typing a seed or a step means. */
static void test_integers_are_decimal(void **state) {
    (void)state;
    char msg[2048];
    const char *octal[] = {"train", "--tokens", "010", "--steps", "08", NULL};
    assert_int_equal(parse(msg, sizeof msg, octal), ARGS_OK);
    assert_true(tokens == 10);
    assert_int_equal(steps, 8);
    const char *hex[] = {"train", "--steps", "0x10", NULL};
    assert_int_equal(parse(msg, sizeof msg, hex), ARGS_ERROR);
    assert_non_null(strstr(msg, "--steps expects an integer, got '0x10'"));
    /* strtod reads hex too ("0x1p-3" is 0.125): a number with a fraction is decimal as well,
     * and "0x10" is not reported as 16 out of range. */
    const char *hexf[] = {"train", "--lr", "0x1p-3", NULL};
    assert_int_equal(parse(msg, sizeof msg, hexf), ARGS_ERROR);
    assert_non_null(strstr(msg, "--lr expects a finite number, got '0x1p-3'"));
    const char *hex16[] = {"train", "--lr", "0x10", NULL};
    assert_int_equal(parse(msg, sizeof msg, hex16), ARGS_ERROR);
    assert_null(strstr(msg, "out of range"));
}

/* A flag followed by another flag lacks its value: say so, rather than that
 * "--lr" is not a number. A negative number is a value, not a flag. */
static void test_flag_as_value_is_missing_value(void **state) {
    (void)state;
    char msg[2048];
    const char *argv[] = {"train", "--steps", "--lr", "0.1", NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_ERROR);
    print_message("  %s", msg);
    assert_non_null(strstr(msg, "--steps needs a value"));
    assert_null(strstr(msg, "expects an integer"));
    const char *str[] = {"train", "--data", "--verbose", NULL};
    assert_int_equal(parse(msg, sizeof msg, str), ARGS_ERROR);
    assert_non_null(strstr(msg, "--data needs a value"));
    /* --name=--x is how to pass a value that starts with two dashes. */
    const char *eq[] = {"train", "--data=--odd-name.txt", NULL};
    assert_int_equal(parse(msg, sizeof msg, eq), ARGS_OK);
    assert_string_equal(data, "--odd-name.txt");
    const char *neg[] = {"train", "--lr", "-0.5", NULL};
    assert_int_equal(parse(msg, sizeof msg, neg), ARGS_ERROR);
    assert_non_null(strstr(msg, "--lr -0.5 is out of range"));
}

static void test_help_lists_flags_with_defaults(void **state) {
    (void)state;
    char msg[4096];
    const char *argv[] = {"train", "--steps", "3", "--help", NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_HELP);
    assert_non_null(strstr(msg, "usage: train [options]"));
    assert_non_null(strstr(msg, "train a small model"));
    assert_non_null(strstr(msg, "--steps N"));
    assert_non_null(strstr(msg, "(default 3)")); /* the value parsed so far */
    assert_non_null(strstr(msg, "--lr X"));
    assert_non_null(strstr(msg, "--verbose"));
    assert_non_null(strstr(msg, "--help"));
    /* Every kind of value shows its default; -h is --help. */
    assert_non_null(strstr(msg, "learning rate (default 0.0003)"));
    const char *with_data[] = {"train", "--data", "x.txt", "-h", NULL};
    assert_int_equal(parse(msg, sizeof msg, with_data), ARGS_HELP);
    assert_non_null(strstr(msg, "text file to train on (default x.txt)"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_are_stored),
        cmocka_unit_test(test_defaults_kept),
        cmocka_unit_test(test_bad_integer),
        cmocka_unit_test(test_number_forms),
        cmocka_unit_test(test_help_peek_skips_values),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_integer_overflow_is_a_range_error),
        cmocka_unit_test(test_unknown_flag_suggests),
        cmocka_unit_test(test_missing_value_and_stray_args),
        cmocka_unit_test(test_integers_are_decimal),
        cmocka_unit_test(test_flag_as_value_is_missing_value),
        cmocka_unit_test(test_help_lists_flags_with_defaults),
    };
    return cmocka_run_group_tests_name("args", tests, NULL, NULL);
}
