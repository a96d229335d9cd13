/* Known-wrong submission for the grader's own tests: ships its own check.c and lab.mk and overwrites check.c at run time; matmul_mma.cu is the starter. */
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
        {"wmma: 1x1x1, K = 1, 1x1x257", passes, NULL, NULL, NULL},
        {"wmma: primes", passes, NULL, NULL, NULL},
        {"wmma: tile edges", passes, NULL, NULL, NULL},
        {"wmma: K, N multiples of 8 or not", passes, NULL, NULL, NULL},
        {"wmma: rectangular", passes, NULL, NULL, NULL},
        {"wmma: alpha and beta", passes, NULL, NULL, NULL},
        {"wmma: beta = 0 ignores C", passes, NULL, NULL, NULL},
        {"wmma: NaN propagates", passes, NULL, NULL, NULL},
        {"wmma: many tiles", passes, NULL, NULL, NULL},
        {"wmma: large", passes, NULL, NULL, NULL},
        {"mma: 1x1x1, K = 1, 1x1x257", passes, NULL, NULL, NULL},
        {"mma: primes", passes, NULL, NULL, NULL},
        {"mma: tile edges", passes, NULL, NULL, NULL},
        {"mma: K, N multiples of 8 or not", passes, NULL, NULL, NULL},
        {"mma: rectangular", passes, NULL, NULL, NULL},
        {"mma: alpha and beta", passes, NULL, NULL, NULL},
        {"mma: beta = 0 ignores C", passes, NULL, NULL, NULL},
        {"mma: NaN propagates", passes, NULL, NULL, NULL},
        {"mma: many tiles", passes, NULL, NULL, NULL},
        {"mma: large", passes, NULL, NULL, NULL},
        {"mma: memory pattern (emulator)", passes, NULL, NULL, NULL},
        {"wgmma: 1x1x1, K = 1, 1x1x257", passes, NULL, NULL, NULL},
        {"wgmma: primes", passes, NULL, NULL, NULL},
        {"wgmma: tile edges", passes, NULL, NULL, NULL},
        {"wgmma: K, N multiples of 8 or not", passes, NULL, NULL, NULL},
        {"wgmma: rectangular", passes, NULL, NULL, NULL},
        {"wgmma: alpha and beta", passes, NULL, NULL, NULL},
        {"wgmma: beta = 0 ignores C", passes, NULL, NULL, NULL},
        {"wgmma: NaN propagates", passes, NULL, NULL, NULL},
        {"wgmma: many tiles", passes, NULL, NULL, NULL},
        {"wgmma: large", passes, NULL, NULL, NULL},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
