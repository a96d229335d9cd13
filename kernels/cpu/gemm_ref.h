/** @file
 * Matmul on the CPU: the double-precision reference every matmul check
 * compares against, and a fast fp32 sgemm (OpenBLAS) for CPU training.
 *
 * All matrices are row-major: A is M x K, B is K x N, C is M x N.
 */
#ifndef COURSE_GEMM_REF_H
#define COURSE_GEMM_REF_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief C_out = alpha * A * B + beta * C_in in double, and the error-bound magnitudes.
 *
 * Inputs are the floats the kernel saw (already rounded to its input
 * precision); every product and sum is done in double, so the reference is
 * far more accurate than any fp32 kernel it checks. absAB_out receives
 * |alpha| * (|A| |B|)_ij + |beta| * |C_in|_ij, the scale of the componentwise
 * bound used by check_gemm_bound().
 * @param M rows of A and C
 * @param N columns of B and C
 * @param K columns of A, rows of B
 * @param alpha scale of A*B
 * @param A M*K floats
 * @param B K*N floats
 * @param beta scale of C_in (C_in may be NULL when beta == 0)
 * @param C_in M*N floats
 * @param C_out M*N doubles
 * @param absAB_out M*N doubles (may be NULL)
 */
void gemm_ref_double(int M, int N, int K, double alpha, const float *A, const float *B,
                     double beta, const float *C_in, double *C_out, double *absAB_out);

/**
 * @brief C = alpha * A * B + beta * C in fp32 through OpenBLAS (cblas_sgemm).
 * @param M rows of A and C
 * @param N columns of B and C
 * @param K columns of A, rows of B
 * @param alpha scale of A*B
 * @param A M*K floats
 * @param B K*N floats
 * @param beta scale of C
 * @param C M*N floats, updated in place
 */
void gemm_cpu_sgemm(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                    float *C);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_GEMM_REF_H */
