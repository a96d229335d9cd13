/*
 * CPU matmuls (see gemm_ref.h). The reference is the plain triple loop in
 * double, parallel over rows with OpenMP: simple enough to trust, fast enough
 * for the sizes the checks use (up to a few hundred in each dimension).
 */
#include "gemm_ref.h"

#include <cblas.h>
#include <math.h>

void gemm_ref_double(int M, int N, int K, double alpha, const float *A, const float *B,
                     double beta, const float *C_in, double *C_out, double *absAB_out) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double acc = 0.0, mag = 0.0;
            for (int k = 0; k < K; k++) {
                double a = A[(long)i * K + k], b = B[(long)k * N + j];
                acc += a * b;
                mag += fabs(a * b);
            }
            double c = (beta != 0.0) ? (double)C_in[(long)i * N + j] : 0.0;
            C_out[(long)i * N + j] = alpha * acc + beta * c;
            if (absAB_out) absAB_out[(long)i * N + j] = fabs(alpha) * mag + fabs(beta * c);
        }
    }
}

void gemm_cpu_sgemm(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                    float *C) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, alpha, A, K, B, N, beta, C, N);
}
