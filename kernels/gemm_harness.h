/** @file
 * The test and benchmark harness every matmul lab shares (labs 01-04).
 *
 * A lab's check.c calls gemm_check_shape() or gemm_check_case() (a chosen
 * input fill) once per shape; its bench.c is a list of kernels handed to
 * gemm_bench_main(). The harness owns everything
 * around the student's function: random inputs, rounding them to the
 * kernel's input precision, device buffers with guard zones, the
 * double-precision reference, the error bound, CUDA-event timing and the
 * cuBLAS baseline. So all matmul labs test and time the same way, and a fix
 * here reaches every lab.
 *
 * Every kernel computes C = alpha * A * B + beta * C, row-major, A M x K,
 * B K x N, C M x N, for any M, N, K >= 1. As in BLAS, C is not read when
 * beta == 0 (it may hold NaN, which must not leak into the result).
 *
 * Built once per target: for TARGET=cuda it times cuBLAS alongside the lab
 * kernels; under the emulator there is no cuBLAS, and the benchmark says so.
 * Not here yet: fp16 inputs and transposed operands.
 */
#ifndef COURSE_GEMM_HARNESS_H
#define COURSE_GEMM_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A lab's fp32 matmul: C = alpha * A * B + beta * C on device pointers.
 * Returns a lab_status_t (LAB_OK, LAB_NOT_IMPLEMENTED, ...).
 */
typedef int (*gemm_f32_fn)(int M, int N, int K, float alpha, const float *A, const float *B,
                           float beta, float *C);

/**
 * A lab's bf16-input matmul (lab 04): A and B are bf16 bit patterns on the
 * device, C and the accumulation are fp32. Returns a lab_status_t.
 */
typedef int (*gemm_bf16_fn)(int M, int N, int K, float alpha, const uint16_t *A,
                            const uint16_t *B, float beta, float *C);

/** One kernel under test or on the benchmark ladder: exactly one of f32, bf16 is set. */
typedef struct {
    const char *name;  /**< the function's name, e.g. "matmul_smem" (messages, table rows) */
    gemm_f32_fn f32;   /**< fp32-input kernel, or NULL */
    gemm_bf16_fn bf16; /**< bf16-input kernel, or NULL */
} gemm_kernel_t;

/** The precision a kernel's inputs are rounded to before it and the reference see them. */
typedef enum {
    GEMM_INPUT_FP32 = 0, /**< plain fp32: inputs used as generated */
    GEMM_INPUT_TF32 = 1, /**< fp32 arrays whose values are rounded to tf32 (tensor cores in tf32 mode) */
    GEMM_INPUT_BF16 = 2, /**< bf16 arrays (needs a gemm_bf16_fn) */
} gemm_input_t;

/** What the check puts in A, B and C besides uniform random values in [-1, 1). */
typedef enum {
    GEMM_FILL_RANDOM = 0,      /**< nothing else */
    GEMM_FILL_NAN_C = 1,       /**< C starts as NaN: with beta == 0 it must not be read */
    GEMM_FILL_NAN_ROW_COL = 2, /**< one NaN in A (row M/2) and one in B (column N/2): that row and column of C must be NaN, the rest correct */
    GEMM_FILL_NAN_ALL = 3,     /**< A is all NaN: every element of C must be NaN */
    GEMM_FILL_MISALIGNED = 4,  /**< random values, but A, B and C each start one element past a 16-byte boundary, as a view into a larger buffer does: a kernel must check the base pointers, not only the row lengths, before 16-byte accesses */
} gemm_fill_t;

/**
 * @brief Run one kernel on one shape and fail the current cmocka test if it is wrong.
 *
 * Fills A, B, C with uniform values in [-1, 1) from seed (plus the NaNs that
 * fill asks for), rounds A and B to the input precision, uploads them into
 * buffers with guard zones on both sides (NaN around A and B, so reading past
 * them poisons the result; a sentinel around C, so writing past it is seen;
 * on the emulator all six zones are also watched, so any access to them
 * stops the launch and names the matrix and the line), runs the kernel, and compares with gemm_ref_double() under
 * check_gemm_bound(). Where the reference is NaN the result must be NaN too.
 * Fails with "not implemented: ..." while the kernel still has its TODO, with
 * the comparison report (worst element, errors, mismatch count) when the
 * numbers are off, and with the index when a guard was overwritten.
 * @param k the kernel (f32 or bf16 set to match input)
 * @param M rows of A and C, >= 1
 * @param N columns of B and C, >= 1
 * @param K inner dimension, >= 1
 * @param alpha scale of A*B
 * @param beta scale of C
 * @param seed seed of the random inputs
 * @param input precision of the inputs (GEMM_INPUT_BF16 needs k->bf16)
 * @param fill extra NaNs, see gemm_fill_t
 */
void gemm_check_case(const gemm_kernel_t *k, int M, int N, int K, float alpha, float beta,
                     uint64_t seed, gemm_input_t input, gemm_fill_t fill);

/**
 * @brief gemm_check_case() for an fp32-array kernel with random inputs.
 * @param fn the lab's function
 * @param name its name, for messages
 * @param M rows of A and C, >= 1
 * @param N columns of B and C, >= 1
 * @param K inner dimension, >= 1
 * @param alpha scale of A*B
 * @param beta scale of C (C starts random, so beta != 0 tests the update)
 * @param seed seed of the random inputs
 * @param input_rounding GEMM_INPUT_FP32, or GEMM_INPUT_TF32 for a tf32 tensor-core kernel
 */
void gemm_check_shape(gemm_f32_fn fn, const char *name, int M, int N, int K, float alpha,
                      float beta, uint64_t seed, gemm_input_t input_rounding);

/**
 * @brief gemm_check_case() for a bf16-input kernel with random inputs (rounded to bf16).
 * @param fn the lab's function
 * @param name its name, for messages
 * @param M rows of A and C, >= 1
 * @param N columns of B and C, >= 1
 * @param K inner dimension, >= 1
 * @param alpha scale of A*B
 * @param beta scale of C
 * @param seed seed of the random inputs
 */
void gemm_check_shape_bf16(gemm_bf16_fn fn, const char *name, int M, int N, int K, float alpha,
                           float beta, uint64_t seed);

/**
 * How one run of a kernel met memory, as the emulator's tracer counts it
 * (common/simt/include/simt_memtrace.h). Each ratio is what the warps'
 * requests cost over the fewest their bytes need: 1.0 is as good as it gets,
 * 8 is a warp that touches a sector per thread for a float each. The widths
 * are the bytes a thread asks for per access, on average: 4 for floats, 16
 * for float4s.
 */
typedef struct {
    double global_load;        /**< global loads: 32-byte sectors touched over the fewest */
    double global_store;       /**< global stores: the same */
    double shared_load;        /**< shared loads: bank passes over the fewest (0: none) */
    double shared_store;       /**< shared stores: the same (0: none) */
    double global_load_width;  /**< bytes per thread per global load */
    double global_store_width; /**< bytes per thread per global store */
    double shared_load_width;  /**< bytes per thread per shared load (0: none) */
} gemm_pattern_t;

/**
 * @brief Count how a matmul's warps reach memory; on the emulator only.
 *
 * Runs the kernel (fp32 or bf16 inputs) once on zero-filled M x N x K
 * matrices (alpha 1, beta 0)
 * between simt_memtrace_start() and simt_memtrace_stop(), fills *out and
 * prints it. Pick whole tiles and rows that start on 128-byte boundaries
 * (N and K multiples of 32) so that the fewest possible is exact.
 * Skips the current cmocka test, saying where the pattern shows instead,
 * on a GPU (make bench LAB=lab times it) and in a sanitizer build of the
 * emulator (which cannot trace). Fails the test, with the usual messages, if
 * the kernel is not implemented, returns an error or faults, and if it
 * recorded no global load or store (its .cu file not compiled with
 * simtcc --memtrace, as the labs' emulator builds are).
 * @param k the kernel (k->f32 or k->bf16 set). What the emulator does for a
 *        kernel is counted too where the course's headers note it: the
 *        reads and writes of cp.async and ldmatrix (common/warp_mma.cuh),
 *        not those of wmma, TMA or wgmma
 * @param M rows of A and C
 * @param N columns of B and C
 * @param K inner dimension
 * @param lab the lab's number, e.g. "02", for the messages
 * @param out the ratios and widths
 */
void gemm_trace_pattern(const gemm_kernel_t *k, int M, int N, int K, const char *lab, gemm_pattern_t *out);

/**
 * @brief A matmul benchmark's whole main(): time a ladder of kernels against cuBLAS.
 *
 * Flags: --sizes (comma-separated; each N for a square N^3 matmul or MxNxK;
 * default 1024,2048,4096 on a GPU, 128 under the emulator), --reps (timed
 * repetitions, median reported; default 10 on a GPU, 3 under the emulator),
 * --json FILE (the same rows for the grader). For each size it times the
 * cuBLAS baseline (fp32 with TF32 off; bf16 too if a bf16 kernel is listed)
 * and each kernel with CUDA events: warm-up runs, L2 flushed before every
 * repetition, median. Before every run of a kernel, outside the timed
 * region, the A it reads is refilled with fresh random values on the device
 * (kernels/cuda/fill.h), their product is computed by the baseline (cuBLAS;
 * OpenBLAS under the emulator) and C is filled with NaN; after it C is
 * screened against that product (the first and last runs in full, the
 * others on 64 random rows), so each run has to compute all of C from its
 * own inputs (anything saved from an earlier run, however rearranged, is
 * wrong). It prints one fixed-column row per kernel: M, N, K, time in ms,
 * TFLOP/s (2MNK / time), percent of cuBLAS, and the largest error against
 * the baseline's product relative to its largest element, over all runs (a
 * screen for gross errors: the numerics are check.c's job). In the JSON, a
 * figure that is not a finite number (the error of a run that left NaN or
 * an infinity in C) is null, as are those of a kernel that did not run.
 * The header line and the JSON's "baseline_version" name the cuBLAS library
 * the run loaded (null under the emulator): its figures differ by release. A
 * kernel still marked TODO gets a "not implemented" row and the rest still
 * run. Under the emulator there is no cuBLAS: the rows carry CPU timings of the
 * emulated kernels, compared with OpenBLAS's result for correctness, and in
 * place of the ratio, from one more run under the memory-access tracer,
 * FLOPs per byte of the sectors the loads of A and B touch, the fewest
 * sectors the loads and stores could take as a share of those they touch,
 * and the fewest shared-memory passes as a share of those taken.
 * @param lab the lab's number, e.g. "02" (table title and JSON)
 * @param summary one line for --help
 * @param kernels the ladder, earliest lab first
 * @param nkernels how many
 * @param argc from main
 * @param argv from main
 * @return the exit status for main: 0, 1 if a kernel failed or was wrong, or 2 for a usage error
 *         (a bad --sizes, a size over the emulator's limit, a --json file that cannot be written)
 */
int gemm_bench_main(const char *lab, const char *summary, const gemm_kernel_t *kernels,
                    int nkernels, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_GEMM_HARNESS_H */
