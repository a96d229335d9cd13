/* Known-wrong submission for the grader's own tests: ships its own check.c and lab.mk and overwrites check.c at run time; the kernels are the starter. */
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
        {"uncoalesced: test_one_by_one", passes, NULL, NULL, NULL},
        {"uncoalesced: test_k_is_one", passes, NULL, NULL, NULL},
        {"uncoalesced: test_primes", passes, NULL, NULL, NULL},
        {"uncoalesced: test_partial_blocks", passes, NULL, NULL, NULL},
        {"uncoalesced: test_rectangular", passes, NULL, NULL, NULL},
        {"uncoalesced: test_alpha_beta", passes, NULL, NULL, NULL},
        {"uncoalesced: test_beta_zero_ignores_c", passes, NULL, NULL, NULL},
        {"uncoalesced: test_nan_propagates", passes, NULL, NULL, NULL},
        {"uncoalesced: test_large", passes, NULL, NULL, NULL},
        {"uncoalesced: test_memory_pattern", passes, NULL, NULL, NULL},
        {"coalesced: test_one_by_one", passes, NULL, NULL, NULL},
        {"coalesced: test_k_is_one", passes, NULL, NULL, NULL},
        {"coalesced: test_primes", passes, NULL, NULL, NULL},
        {"coalesced: test_partial_blocks", passes, NULL, NULL, NULL},
        {"coalesced: test_rectangular", passes, NULL, NULL, NULL},
        {"coalesced: test_alpha_beta", passes, NULL, NULL, NULL},
        {"coalesced: test_beta_zero_ignores_c", passes, NULL, NULL, NULL},
        {"coalesced: test_nan_propagates", passes, NULL, NULL, NULL},
        {"coalesced: test_large", passes, NULL, NULL, NULL},
        {"coalesced: test_memory_pattern", passes, NULL, NULL, NULL},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
