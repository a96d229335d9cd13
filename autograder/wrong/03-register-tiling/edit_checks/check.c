/* Known-wrong submission for the grader's own tests: ships its own check.c and lab.mk and overwrites check.c at run time; matmul_2d_blocktile.cu is the starter. */
/* A check.c that a student might ship to pass everything. The grader
 * takes check.c from its own tree, so this file is never compiled. */
#include <stdio.h>
int main(void) {
    printf("[==========] 99 test(s) run.\n[  PASSED  ] 99 test(s).\n");
    return 0;
}
