/** @file
 * cuBLAS as the matmul baseline: the figure every matmul lab is measured
 * against, run in the same process as the lab's kernel.
 *
 * The labs store matrices row-major and cuBLAS assumes column-major. A
 * row-major M x N matrix is the same bytes as a column-major N x M one (its
 * transpose), so C = A B row-major is computed as C^T = B^T A^T column-major:
 * the operands swap places and no data moves. The fp32 baseline keeps TF32
 * off, so it does the same arithmetic the fp32 labs do; the bf16 baseline is
 * what lab 04's tensor-core kernels are measured against.
 *
 * Only built for TARGET=cuda: the CPU emulator has no cuBLAS.
 */
#ifndef COURSE_CUBLAS_GEMM_H
#define COURSE_CUBLAS_GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief C = alpha * A * B + beta * C in fp32 through cublasSgemm, row-major, TF32 off.
 *
 * The handle is created on first use with CUBLAS_DEFAULT_MATH, which for
 * cublasSgemm means full fp32 arithmetic (no TF32 tensor cores), so the
 * baseline is the fastest honest fp32 matmul. As in BLAS, C is not read
 * when beta == 0. Runs on the default stream; returns when the call is
 * queued, like a kernel launch. Any cuBLAS error ends the program with the
 * call named.
 * @param M rows of A and C
 * @param N columns of B and C
 * @param K columns of A, rows of B
 * @param alpha scale of A*B
 * @param A device pointer, M*K floats, row-major
 * @param B device pointer, K*N floats, row-major
 * @param beta scale of C
 * @param C device pointer, M*N floats, row-major, updated in place
 * @return LAB_OK, or LAB_BAD_ARGUMENT when a size is below 1
 */
int cublas_sgemm_rowmajor(int M, int N, int K, float alpha, const float *A, const float *B,
                          float beta, float *C);

/**
 * @brief C = alpha * A * B + beta * C with bf16 A and B, fp32 C and fp32 accumulation.
 *
 * cublasGemmEx with CUDA_R_16BF inputs, CUDA_R_32F output and
 * CUBLAS_COMPUTE_32F: the tensor-core path lab 04 competes with. A and B
 * hold bf16 bit patterns (as produced by bf16_from_float() in half.h).
 * @param M rows of A and C
 * @param N columns of B and C
 * @param K columns of A, rows of B
 * @param alpha scale of A*B
 * @param A device pointer, M*K bf16 values, row-major
 * @param B device pointer, K*N bf16 values, row-major
 * @param beta scale of C
 * @param C device pointer, M*N floats, row-major, updated in place
 * @return LAB_OK, or LAB_BAD_ARGUMENT when a size is below 1
 */
int cublas_gemm_bf16_rowmajor(int M, int N, int K, float alpha, const uint16_t *A,
                              const uint16_t *B, float beta, float *C);

/**
 * @brief The cuBLAS library this process runs, as "cuBLAS 13.1.0".
 *
 * The version of the shared library loaded at run time (cublasGetProperty),
 * which may differ from the headers the program was built with. A baseline
 * figure means little without it: cuBLAS releases differ by several per cent
 * on the same GPU. Needs no handle.
 * @param out where the text goes
 * @param n size of out in bytes
 */
void cublas_version(char *out, size_t n);

/**
 * @brief Destroy the cuBLAS handle the two functions above created (safe to call twice).
 *
 * Optional: the process exiting frees it too. Benchmarks call it so that a
 * memory checker sees a clean exit.
 */
void cublas_gemm_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_CUBLAS_GEMM_H */
