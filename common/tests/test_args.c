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
#include "child.h"

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

/* Parse a NULL-terminated argument list against t; return the result and the message text. */
static int parse_with(const args_t *t, char *msg, size_t len, const char **argv_in) {
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
    int rc = args_parse(t, argc, argv, f);
    rewind(f);
    size_t n = fread(msg, 1, len - 1, f);
    msg[n] = '\0';
    fclose(f);
    return rc;
}

static int parse(char *msg, size_t len, const char **argv_in) { return parse_with(&table, msg, len, argv_in); }

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
    assert_non_null(strstr(msg, "train: --steps needs a value, but the next argument is the flag '--lr'; write "
                                "--steps VALUE (or --steps=VALUE for a value that starts with --)"));
    assert_null(strstr(msg, "expects an integer"));
    const char *str[] = {"train", "--data", "--verbose", NULL};
    assert_int_equal(parse(msg, sizeof msg, str), ARGS_ERROR);
    assert_non_null(strstr(msg, "--data needs a value"));
    /* A bare "--" is no value either (it ends the options elsewhere), and the
     * message calls it what it is; --data=-- still names a file "--". */
    const char *dashes[] = {"train", "--data", "--", NULL};
    assert_int_equal(parse(msg, sizeof msg, dashes), ARGS_ERROR);
    assert_non_null(strstr(msg, "train: --data needs a value, but the next argument is the end-of-options "
                                "marker '--'; write --data VALUE (or --data=VALUE"));
    assert_null(data);
    const char *dashes_eq[] = {"train", "--data=--", NULL};
    assert_int_equal(parse(msg, sizeof msg, dashes_eq), ARGS_OK);
    assert_string_equal(data, "--");
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
    assert_non_null(strstr(msg, "--data STR"));
    assert_non_null(strstr(msg, "--tokens N"));
    assert_null(strstr(msg, "(null)")); /* no --data given: no default shown */
    const char *with_tokens[] = {"train", "--tokens", "123", "--help", NULL};
    assert_int_equal(parse(msg, sizeof msg, with_tokens), ARGS_HELP);
    assert_non_null(strstr(msg, "token budget (default 123)"));
    const char *with_data[] = {"train", "--data", "x.txt", "-h", NULL};
    assert_int_equal(parse(msg, sizeof msg, with_data), ARGS_HELP);
    assert_non_null(strstr(msg, "text file to train on (default x.txt)"));
}

/* The edges of what is accepted: the low end of a range, the most negative
 * int, and what strtoll would forgive (a trailing blank, an uppercase 0X). */
static void test_accepted_edges(void **state) {
    (void)state;
    char msg[2048];
    const char *low[] = {"train", "--steps", "1", NULL};
    assert_int_equal(parse(msg, sizeof msg, low), ARGS_OK);
    assert_int_equal(steps, 1);
    const char *trailing[] = {"train", "--steps", "12 ", NULL};
    assert_int_equal(parse(msg, sizeof msg, trailing), ARGS_ERROR);
    assert_non_null(strstr(msg, "--steps expects an integer, got '12 '"));
    const char *below_int[] = {"train", "--seed", "-2147483649", NULL};
    assert_int_equal(parse(msg, sizeof msg, below_int), ARGS_ERROR);
    assert_non_null(strstr(msg, "--seed -2147483649 does not fit in a 32-bit integer"));
    assert_int_equal(seed, 0);
    const char *hex_upper[] = {"train", "--lr", "0X1p-3", NULL};
    assert_int_equal(parse(msg, sizeof msg, hex_upper), ARGS_ERROR);
    assert_non_null(strstr(msg, "--lr expects a finite number, got '0X1p-3'"));
    const char *one_dash[] = {"train", "-steps", "5", NULL};
    assert_int_equal(parse(msg, sizeof msg, one_dash), ARGS_ERROR);
    assert_non_null(strstr(msg, "train: unexpected argument '-steps'; flags look like --name value"));
}

/* A range of one value, a fractional range (its message keeps the fraction),
 * and a number flag with no range, which takes any finite value. */
static int world;
static double dropout, scale;
static const arg_spec_t more_specs[] = {
    {"world", ARG_INT, &world, "ranks", 4, 4},
    {"dropout", ARG_DOUBLE, &dropout, "dropout rate", 0, 0.5},
    {"scale", ARG_DOUBLE, &scale, NULL, 0, -1},
};
static const args_t more = {"lab", NULL, more_specs, 3};

static void test_ranges_of_other_kinds(void **state) {
    (void)state;
    char msg[2048];
    const char *four[] = {"lab", "--world", "4", "--scale", "-1e300", NULL};
    assert_int_equal(parse_with(&more, msg, sizeof msg, four), ARGS_OK);
    assert_int_equal(world, 4);
    assert_true(scale == -1e300);
    const char *three[] = {"lab", "--world", "3", NULL};
    assert_int_equal(parse_with(&more, msg, sizeof msg, three), ARGS_ERROR);
    assert_string_equal(msg, "lab: --world 3 is out of range; pick a value in [4, 4]\n");
    const char *half[] = {"lab", "--dropout", "0.5", "--scale", "1e300", NULL};
    assert_int_equal(parse_with(&more, msg, sizeof msg, half), ARGS_OK);
    assert_true(dropout == 0.5 && scale == 1e300);
    const char *over[] = {"lab", "--dropout", "0.75", NULL};
    assert_int_equal(parse_with(&more, msg, sizeof msg, over), ARGS_ERROR);
    assert_string_equal(msg, "lab: --dropout 0.75 is out of range; pick a value in [0, 0.5]\n");
    /* No summary and no help line: nothing printed as "(null)". */
    const char *help[] = {"lab", "--help", NULL};
    assert_int_equal(parse_with(&more, msg, sizeof msg, help), ARGS_HELP);
    assert_non_null(strstr(msg, "usage: lab [options]\n\n\noptions:\n"));
    assert_non_null(strstr(msg, "  --scale X"));
    assert_null(strstr(msg, "(null)"));
}

/* What a typo is taken for: two letters missing or two too many is close
 * enough; the closest flag wins over one seen earlier that is farther. */
static void test_suggestion_distances(void **state) {
    (void)state;
    char msg[2048];
    static const struct { const char *typed, *meant; } cases[] = {
        {"--sps", "--steps"},     /* two letters left out */
        {"--steeeps", "--steps"}, /* two letters too many */
        {"--steds", "--steps"},   /* one edit from --steps, two from --seed (later in the table) */
        {"--sede", "--seed"},     /* two from --seed, three from --steps */
        {"--verbsoe", "--verbose"},
        {"--tat", "--data"},      /* two edits, one of them a letter added */
        {"--sde", "--seed"},
        {"--ose", "--verbose"},   /* part of --verbose: not --seed, though that is two edits too */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[] = {"train", cases[i].typed, NULL};
        assert_int_equal(parse(msg, sizeof msg, argv), ARGS_ERROR);
        char want[128];
        snprintf(want, sizeof want, "unknown option '%s'; did you mean '%s'?", cases[i].typed, cases[i].meant);
        if (!strstr(msg, want)) fail_msg("%s: got \"%s\", expected \"%s\"", cases[i].typed, msg, want);
    }
    /* A long name is shown cut to its first 100 characters. */
    char name[160] = "--";
    memset(name + 2, 'q', 150);
    name[152] = '\0';
    const char *argv[] = {"train", name, NULL};
    assert_int_equal(parse(msg, sizeof msg, argv), ARGS_ERROR);
    char want[192];
    snprintf(want, sizeof want, "unknown option '--%.100s'; run 'train --help' for the list", name + 2);
    assert_non_null(strstr(msg, want));
}

/* args_parse_or_exit, in a child: help to stdout and exit 0 (also after a
 * flag that takes no value); an error to stderr and exit 2. */
static int or_exit_child(void *arg) {
    char **argv = arg;
    int argc = 0;
    while (argv[argc]) argc++;
    /* Keep only the stream this case is about: the other goes to /dev/null. */
    const int want_stdout = strcmp(argv[argc - 1], "-h") == 0;
    if (!freopen("/dev/null", "w", want_stdout ? stderr : stdout)) return 9;
    args_parse_or_exit(&table, argc, argv);
    return 7;
}

static void test_parse_or_exit(void **state) {
    (void)state;
    char *help[] = {"train", "--verbose", "-h", NULL};
    child_result_t r = run_in_child(or_exit_child, help);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "usage: train [options]"));
    char *bad[] = {"train", "--steps", "x", NULL};
    r = run_in_child(or_exit_child, bad);
    assert_int_equal(r.exit_code, 2);
    assert_non_null(strstr(r.out, "train: --steps expects an integer, got 'x'"));
    char *ok[] = {"train", "--steps", "4", NULL};
    r = run_in_child(or_exit_child, ok);
    assert_int_equal(r.exit_code, 7);
    assert_string_equal(r.out, "");
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
        cmocka_unit_test(test_accepted_edges),
        cmocka_unit_test(test_ranges_of_other_kinds),
        cmocka_unit_test(test_suggestion_distances),
        cmocka_unit_test(test_parse_or_exit),
    };
    return cmocka_run_group_tests_name("args", tests, NULL, NULL);
}
