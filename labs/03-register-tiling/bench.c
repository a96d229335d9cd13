/*
 * Lab 03 benchmark: the whole ladder so far against cuBLAS, in the same run.
 *
 * Lab 01's two naive kernels and lab 02's tiled kernel (from solutions/,
 * linked in through labs/03-register-tiling/lab.mk), then this lab's four
 * steps, at each size, so the table shows what each step bought. The target
 * is matmul_warptile at 85% of cuBLAS or more at 4096^3 on an H100 or H200.
 * Sizes, repetitions and JSON output: see --help (kernels/gemm_harness.h does
 * the timing).
 */
#include "gemm_harness.h"
#include "matmul_ladder.h"

int main(int argc, char **argv) {
    const gemm_kernel_t ladder[] = {
        {"01 matmul_naive_uncoalesced", matmul_naive_uncoalesced, NULL},
        {"01 matmul_naive", matmul_naive, NULL},
        {"02 matmul_smem", matmul_smem, NULL},
        {"03 matmul_blocktile_1d", matmul_blocktile_1d, NULL},
        {"03 matmul_blocktile_2d", matmul_blocktile_2d, NULL},
        {"03 matmul_vectorized", matmul_vectorized, NULL},
        {"03 matmul_warptile", matmul_warptile, NULL},
    };
    return gemm_bench_main("03", "lab 03: the matmul ladder so far (labs 01-03) against cuBLAS",
                           ladder, (int)(sizeof ladder / sizeof ladder[0]), argc, argv);
}
