/*
 * cuBLAS baselines for the matmul labs (see cublas_gemm.h). One handle for
 * the whole process, created on first use: creating a handle costs
 * milliseconds and allocates workspace, which must not land inside a timing.
 * Not here: streams, batched or transposed variants; the labs need none yet.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

#include "cublas_gemm.h"
#include "error.h"
#include "lab.h"

static cublasHandle_t handle = NULL;

static cublasHandle_t get_handle(void) {
    if (!handle) {
        CUBLAS_CHECK(cublasCreate(&handle));
        /* Default math: cublasSgemm stays in fp32. TF32 would need
         * CUBLAS_TF32_TENSOR_OP_MATH and would not be a fair fp32 baseline;
         * pedantic math would forbid some fast fp32 paths and be unfairly slow. */
        CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    }
    return handle;
}

extern "C" int cublas_sgemm_rowmajor(int M, int N, int K, float alpha, const float *A,
                                     const float *B, float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* Row-major C (M x N) is column-major C^T (N x M) = B^T (N x K) * A^T (K x M):
     * pass B first, and every leading dimension is a row length. */
    CUBLAS_CHECK(cublasSgemm(get_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K,
                             &beta, C, N));
    return LAB_OK;
}

extern "C" int cublas_gemm_bf16_rowmajor(int M, int N, int K, float alpha, const uint16_t *A,
                                         const uint16_t *B, float beta, float *C) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    /* Same transpose trick; bf16 in, fp32 out, fp32 accumulation on tensor cores. */
    CUBLAS_CHECK(cublasGemmEx(get_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha,
                              B, CUDA_R_16BF, N, A, CUDA_R_16BF, K, &beta, C, CUDA_R_32F, N,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return LAB_OK;
}

extern "C" void cublas_version(char *out, size_t n) {
    int major = 0, minor = 0, patch = 0;
    CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
    CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
    CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
    snprintf(out, n, "cuBLAS %d.%d.%d", major, minor, patch);
}

extern "C" void cublas_gemm_shutdown(void) {
    if (handle) CUBLAS_CHECK(cublasDestroy(handle));
    handle = NULL;
}
