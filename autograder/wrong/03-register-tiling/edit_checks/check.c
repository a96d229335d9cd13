/* Known-wrong submission for the grader's own tests: ships its own check.c and lab.mk and overwrites check.c at run time; matmul_2d_blocktile.cu is the starter. */
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
        {"1d: test_one_by_one", passes, NULL, NULL, NULL},
        {"1d: test_k_is_one", passes, NULL, NULL, NULL},
        {"1d: test_primes", passes, NULL, NULL, NULL},
        {"1d: test_tile_edges", passes, NULL, NULL, NULL},
        {"1d: test_unaligned_rows", passes, NULL, NULL, NULL},
        {"1d: test_rectangular", passes, NULL, NULL, NULL},
        {"1d: test_alpha_beta", passes, NULL, NULL, NULL},
        {"1d: test_beta_zero_ignores_c", passes, NULL, NULL, NULL},
        {"1d: test_nan_propagates", passes, NULL, NULL, NULL},
        {"1d: test_large", passes, NULL, NULL, NULL},
        {"1d: test_memory_pattern", passes, NULL, NULL, NULL},
        {"2d: test_one_by_one", passes, NULL, NULL, NULL},
        {"2d: test_k_is_one", passes, NULL, NULL, NULL},
        {"2d: test_primes", passes, NULL, NULL, NULL},
        {"2d: test_tile_edges", passes, NULL, NULL, NULL},
        {"2d: test_unaligned_rows", passes, NULL, NULL, NULL},
        {"2d: test_rectangular", passes, NULL, NULL, NULL},
        {"2d: test_alpha_beta", passes, NULL, NULL, NULL},
        {"2d: test_beta_zero_ignores_c", passes, NULL, NULL, NULL},
        {"2d: test_nan_propagates", passes, NULL, NULL, NULL},
        {"2d: test_large", passes, NULL, NULL, NULL},
        {"2d: test_memory_pattern", passes, NULL, NULL, NULL},
        {"vectorized: test_one_by_one", passes, NULL, NULL, NULL},
        {"vectorized: test_k_is_one", passes, NULL, NULL, NULL},
        {"vectorized: test_primes", passes, NULL, NULL, NULL},
        {"vectorized: test_tile_edges", passes, NULL, NULL, NULL},
        {"vectorized: test_unaligned_rows", passes, NULL, NULL, NULL},
        {"vectorized: test_rectangular", passes, NULL, NULL, NULL},
        {"vectorized: test_alpha_beta", passes, NULL, NULL, NULL},
        {"vectorized: test_beta_zero_ignores_c", passes, NULL, NULL, NULL},
        {"vectorized: test_nan_propagates", passes, NULL, NULL, NULL},
        {"vectorized: test_large", passes, NULL, NULL, NULL},
        {"vectorized: test_memory_pattern", passes, NULL, NULL, NULL},
        {"warptile: test_one_by_one", passes, NULL, NULL, NULL},
        {"warptile: test_k_is_one", passes, NULL, NULL, NULL},
        {"warptile: test_primes", passes, NULL, NULL, NULL},
        {"warptile: test_tile_edges", passes, NULL, NULL, NULL},
        {"warptile: test_unaligned_rows", passes, NULL, NULL, NULL},
        {"warptile: test_rectangular", passes, NULL, NULL, NULL},
        {"warptile: test_alpha_beta", passes, NULL, NULL, NULL},
        {"warptile: test_beta_zero_ignores_c", passes, NULL, NULL, NULL},
        {"warptile: test_nan_propagates", passes, NULL, NULL, NULL},
        {"warptile: test_large", passes, NULL, NULL, NULL},
        {"warptile: test_memory_pattern", passes, NULL, NULL, NULL},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
