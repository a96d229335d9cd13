/*
 * Lab 04 benchmark: the whole matmul ladder against cuBLAS, in the same run.
 *
 * Labs 01-03 (solutions, linked through labs/04-tensor-cores/lab.mk) are
 * fp32 kernels: they are timed at their own precision and their ratio is
 * against cuBLAS sgemm (fp32, TF32 off). This lab's kernels take bf16
 * inputs and accumulate in fp32: their ratio is against cuBLAS's bf16
 * GemmEx. Both baselines are measured in this process, so each row compares
 * like with like, and the TFLOP/s column shows what tensor cores buy.
 * (Lab 01's uncoalesced kernel is left out: at 8192^3 it alone would take
 * minutes; labs 01-03 show it.)
 *
 * Default sizes: 4096 and 8192 on a GPU (the target: matmul_mma at 50% of
 * cuBLAS bf16 or more at 8192^3 on an H200, matmul_wgmma at 80%), 128 under
 * the emulator. matmul_wgmma runs on a Hopper GPU from an sm_90a build and
 * on the emulator; elsewhere its row is left out and a line says why. Other
 * flags: --help.
 */
#include <stdio.h>
#include <string.h>

#include "gemm_harness.h"
#include "lab.h"
#include "matmul_ladder.h"

int main(int argc, char **argv) {
    gemm_kernel_t ladder[] = {
        {"01 matmul_naive", matmul_naive, NULL},
        {"02 matmul_smem", matmul_smem, NULL},
        {"03 matmul_blocktile_1d", matmul_blocktile_1d, NULL},
        {"03 matmul_blocktile_2d", matmul_blocktile_2d, NULL},
        {"03 matmul_vectorized", matmul_vectorized, NULL},
        {"03 matmul_warptile", matmul_warptile, NULL},
        {"04 matmul_wmma (bf16)", NULL, matmul_wmma},
        {"04 matmul_mma (bf16)", NULL, matmul_mma},
        {"04 matmul_wgmma (bf16)", NULL, matmul_wgmma},
    };
    int n = (int)(sizeof ladder / sizeof ladder[0]);
    int st = matmul_wgmma_supported();
    if (st != LAB_OK) {
        printf("# 04 matmul_wgmma: not timed (%s: compute capability 9.0 and an sm_90a build)\n",
               lab_status_name(st));
        n--;
    }

    /* This lab's default sizes on a GPU are 4096 and 8192 (the harness's
     * default list stops at 4096); --sizes on the command line wins. */
    int has_sizes = 0;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--sizes", 7) == 0) has_sizes = 1;
    char *args[64];
    int nargs = 0;
    static char default_sizes[] = "--sizes=4096,8192";
    args[nargs++] = argv[0];
#ifndef COURSE_SIMT
    if (!has_sizes) args[nargs++] = default_sizes;
#else
    (void)has_sizes;
    (void)default_sizes;
#endif
    for (int i = 1; i < argc && nargs < 63; i++) args[nargs++] = argv[i];
    args[nargs] = NULL;
    return gemm_bench_main("04", "lab 04: the matmul ladder (labs 01-04) against cuBLAS fp32 and bf16",
                           ladder, n, nargs, args);
}
