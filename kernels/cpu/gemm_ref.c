/*
 * CPU matmuls (see gemm_ref.h). The reference is the plain triple loop in
 * double, parallel over rows with OpenMP: simple enough to trust, fast enough
 * for the sizes the checks use (up to a few hundred in each dimension on the
 * emulator, 1024 on a GPU).
 */
#include "gemm_ref.h"

#include <cblas.h>
#include <math.h>

#include "memory.h"

void gemm_ref_double(int M, int N, int K, double alpha, const float *A, const float *B,
                     double beta, const float *C_in, double *C_out, double *absAB_out) {
    /* One row of C at a time, with k outside j: B is then read along its
     * rows, not down its columns (a stride of N floats per step, a cache
     * miss each at the sizes the GPU checks use). Every element still adds
     * its K products in the order k = 0, 1, ..., K - 1, so each sum is the
     * dot-product loop's, bit for bit. */
#pragma omp parallel
    {
        double *acc = host_malloc((size_t)2 * N * sizeof(double)), *mag = acc + N;
#pragma omp for schedule(static)
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) acc[j] = mag[j] = 0.0;
            for (int k = 0; k < K; k++) {
                double a = A[(long)i * K + k];
                const float *b = B + (long)k * N;
                for (int j = 0; j < N; j++) {
                    double ab = a * (double)b[j];
                    acc[j] += ab;
                    mag[j] += fabs(ab);
                }
            }
            for (int j = 0; j < N; j++) {
                double c = (beta != 0.0) ? (double)C_in[(long)i * N + j] : 0.0;
                C_out[(long)i * N + j] = alpha * acc[j] + beta * c;
                if (absAB_out) absAB_out[(long)i * N + j] = fabs(alpha) * mag[j] + fabs(beta * c);
            }
        }
        host_free(acc);
    }
}

void gemm_cpu_sgemm(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                    float *C) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, alpha, A, K, B, N, beta, C, N);
}
