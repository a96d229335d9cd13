/*
 * Device matmuls for test_gemm_harness.c: the mistakes only a launch can
 * show, and memory patterns only the tracer can count. A naive kernel (one
 * thread per element of C), right, and three wrong variants of it: float4
 * loads of A without a look at its base address (a misaligned address
 * faults), and a load one element past the end of A, one before the
 * start of B or, with beta != 0, a row past the end of C, whose value is
 * never used (it reaches no element of C, so only the harness's watch on
 * its guard zones can see it). Two more are
 * right but meet memory differently: rows of C along threadIdx.x
 * (uncoalesced), and a detour of each result through shared memory with a
 * 32-way bank conflict on the store and a conflict-free extra load.
 * Compiled as the labs' kernels are, with simtcc --memtrace, so that the
 * emulator's tracer and guard watch see their accesses. Each launcher has
 * a form that checks its launch (LAB_LAUNCH_FAILED, as a student's should)
 * and one that returns LAB_OK whatever happened.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "lab.h"

enum { HK_RIGHT = 0, HK_FLOAT4_A = 1, HK_PAST_A = 2, HK_BEFORE_B = 3, HK_UNCOALESCED = 4, HK_SHARED = 5, HK_PAST_C = 6 };

/* C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, row-major; how is
 * one of HK_*. Threads along x take neighbouring columns (coalesced). */
__global__ void hk_kernel(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                          float *C, int how) {
    __shared__ float tile[32 * 32]; /* HK_SHARED only */
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (how == HK_UNCOALESCED) { /* the 32 threads of a warp take 32 rows: a sector per thread */
        col = blockIdx.y * blockDim.y + threadIdx.y;
        row = blockIdx.x * blockDim.x + threadIdx.x;
    }
    if (how != HK_SHARED && (row >= M || col >= N)) return;
    float acc = 0.0f;
    if (how == HK_FLOAT4_A) { /* K % 4 == 0 assumed, and (wrongly) a 16-byte aligned A */
        for (int k = 0; k < K; k += 4) {
            float4 a = *reinterpret_cast<const float4 *>(A + (size_t)row * K + k);
            acc += a.x * B[(size_t)k * N + col] + a.y * B[(size_t)(k + 1) * N + col] +
                   a.z * B[(size_t)(k + 2) * N + col] + a.w * B[(size_t)(k + 3) * N + col];
        }
    } else {
        for (int k = 0; k < K; k++) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    }
    /* The stray loads: their values (NaN, from the guard zones) decide only
     * a branch that NaN never takes, so C stays right. */
    if (how == HK_PAST_A && A[(size_t)M * K] == 1234.5f) acc = 0.0f;
    if (how == HK_BEFORE_B && B[-1] == 1234.5f) acc = 0.0f;
    if (how == HK_SHARED) { /* the grid fits C exactly: every thread reaches the barrier */
        /* Stored down a column of a 32 x 32 tile: the 32 threads of a warp
         * hit one bank, 32 passes for 128 bytes. The extra load reads along
         * a row, one pass; its value decides only a branch never taken. */
        tile[threadIdx.x * 32 + threadIdx.y] = acc;
        __syncthreads();
        if (tile[threadIdx.y * 32 + threadIdx.x] == 1234.5f) acc = 0.0f;
    }
    float *c = &C[(size_t)row * N + col];
    /* The old C of the element a row below, loaded whether or not that row exists and used only when it does. */
    if (how == HK_PAST_C && beta != 0.0f) {
        float below = c[N];
        if (row + 1 < M && below == 1234.5f) acc = 0.0f;
    }
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

static int launch(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C,
                  int how, int checked) {
    if (M < 1 || N < 1 || K < 1) return LAB_BAD_ARGUMENT;
    if (how == HK_SHARED && (M % 8 || N % 32)) return LAB_BAD_ARGUMENT; /* whole blocks only */
    dim3 block(32, 8);
    dim3 grid((N + 31) / 32, (M + 7) / 8);
    if (how == HK_UNCOALESCED) grid = dim3((M + 31) / 32, (N + 7) / 8);
    hk_kernel<<<grid, block>>>(M, N, K, alpha, A, B, beta, C, how);
    if (!checked) return LAB_OK;
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
}

/* The right kernel; LAB_LAUNCH_FAILED when its launch fails. */
extern "C" int hk_naive(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_RIGHT, 1);
}

/* The right kernel, LAB_OK even when its launch was refused. */
extern "C" int hk_naive_unchecked(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                                  float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_RIGHT, 0);
}

/* float4 loads of A that assume it starts 16-byte aligned. */
extern "C" int hk_float4_a(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                           float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_FLOAT4_A, 1);
}

/* The same, LAB_OK even after its fault. */
extern "C" int hk_float4_a_unchecked(int M, int N, int K, float alpha, const float *A, const float *B,
                                     float beta, float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_FLOAT4_A, 0);
}

/* Right, but loads one element past the end of A. */
extern "C" int hk_past_a(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_PAST_A, 1);
}

/* Right, but loads the element before the start of B. */
extern "C" int hk_before_b(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                           float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_BEFORE_B, 1);
}

/* Right, but with beta != 0 the last row also loads the old C a row past the end of C. */
extern "C" int hk_past_c(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_PAST_C, 1);
}

/* Right; the threads of a warp take neighbouring rows of C. */
extern "C" int hk_uncoalesced(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                              float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_UNCOALESCED, 1);
}

/* Right, with a detour through shared memory (M a multiple of 8, N of 32). */
extern "C" int hk_shared(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    return launch(M, N, K, alpha, A, B, beta, C, HK_SHARED, 1);
}
