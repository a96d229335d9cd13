/*
 * Lab 02 benchmark: the ladder so far against cuBLAS, in the same run.
 *
 * Lab 01's two naive kernels (from solutions/, linked in through
 * labs/02-shared-memory-tiling/lab.mk) and this lab's tiled kernel, at each
 * size, so the table shows what each step bought. Sizes, repetitions and
 * JSON output: see --help (kernels/gemm_harness.h does the timing).
 */
#include "gemm_harness.h"
#include "matmul_ladder.h"

int main(int argc, char **argv) {
    const gemm_kernel_t ladder[] = {
        {"01 matmul_naive_uncoalesced", matmul_naive_uncoalesced, NULL},
        {"01 matmul_naive", matmul_naive, NULL},
        {"02 matmul_smem", matmul_smem, NULL},
    };
    return gemm_bench_main("02", "lab 02: the matmul ladder so far (labs 01-02) against cuBLAS",
                           ladder, 3, argc, argv);
}
