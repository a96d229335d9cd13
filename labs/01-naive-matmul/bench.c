/*
 * Lab 01 benchmark: both naive matmuls against cuBLAS, in the same run.
 *
 * The two kernels do the same arithmetic; only the mapping of threads to
 * elements of C differs, so the gap between their rows is what coalescing is
 * worth. Sizes, repetitions and JSON output: see --help
 * (kernels/gemm_harness.h does the timing).
 */
#include "gemm_harness.h"
#include "matmul_ladder.h"

int main(int argc, char **argv) {
    const gemm_kernel_t ladder[] = {
        {"01 matmul_naive_uncoalesced", matmul_naive_uncoalesced, NULL},
        {"01 matmul_naive", matmul_naive, NULL},
    };
    return gemm_bench_main("01", "lab 01: naive matmuls (uncoalesced, coalesced) against cuBLAS",
                           ladder, 2, argc, argv);
}
