/* Known-wrong submission for the grader's own tests: ships its own check.c and lab.mk and overwrites check.c at run time; the kernel is the starter. */
/* A check.c a student might ship: every check the rubric grades, by its
 * name, each passing without calling the kernel. The grader builds its
 * own check.c, so this one must never run; if it did, the starter kernel
 * this case submits would pass every check, and the case's lose lines
 * would fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void passes(void **state) { (void)state; }

int main(void) {
    const struct CMUnitTest tests[] = {
        {"test_one_by_one", passes, NULL, NULL, NULL},
        {"test_k_is_one", passes, NULL, NULL, NULL},
        {"test_primes", passes, NULL, NULL, NULL},
        {"test_tile_edges", passes, NULL, NULL, NULL},
        {"test_rectangular", passes, NULL, NULL, NULL},
        {"test_alpha_beta", passes, NULL, NULL, NULL},
        {"test_beta_zero_ignores_c", passes, NULL, NULL, NULL},
        {"test_nan_propagates", passes, NULL, NULL, NULL},
        {"test_large", passes, NULL, NULL, NULL},
        {"test_memory_pattern", passes, NULL, NULL, NULL},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
