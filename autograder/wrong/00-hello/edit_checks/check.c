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
        {"test_single_element", passes, NULL, NULL, NULL},
        {"test_partial_blocks", passes, NULL, NULL, NULL},
        {"test_large", passes, NULL, NULL, NULL},
        {"test_empty_and_negative", passes, NULL, NULL, NULL},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
