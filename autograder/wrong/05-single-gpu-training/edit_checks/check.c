/* Known-wrong submission for the grader's own tests: ships its own check.c and lab.mk and overwrites check.c at run time; train_ops.cu is the starter. */
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
        {"rmsnorm backward", passes, NULL, NULL, NULL},
        {"attention softmax backward", passes, NULL, NULL, NULL},
        {"swiglu backward", passes, NULL, NULL, NULL},
        {"adamw", passes, NULL, NULL, NULL},
        {"mixed precision: bf16 copy of fp32 masters", passes, NULL, NULL, NULL},
        {"memory pattern: coalesced loads and stores", passes, NULL, NULL, NULL},
        {"training step vs cpu", passes, NULL, NULL, NULL},
        {"short training run reaches the target loss", passes, NULL, NULL, NULL},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
