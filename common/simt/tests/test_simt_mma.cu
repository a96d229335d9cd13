/*
 * Tests of the emulator's tensor-core paths against double-precision
 * references: every nvcuda::wmma shape (bf16 and fp16 16x16x16, 32x8x16 and
 * 8x32x16 with row and column-major operands, tf32 16x16x8, accumulators
 * loaded and stored both ways) and
 * every wrapper of common/warp_mma.cuh (mma.sync m16n8k16 for bf16 and
 * fp16, ldmatrix x1/x2/x4 with and without .trans, cp.async 4/8/16 bytes
 * with commit and wait groups), and the same instructions written as inline
 * PTX (asm statements, which simtcc rewrites into the emulator's model; also
 * mma.sync m16n8k8, special registers, bar.sync, and the misuses that stop a
 * launch). Fragments for mma.sync are built here from the PTX ISA's layout
 * formulas, independently of the emulator's code.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include <cmocka.h>
}
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

#include "warp_mma.cuh"
#include "no_fault_left.h"
#include "capture_stderr.h"

using namespace nvcuda;

/* Deterministic inputs in [-1, 1) that are exact in bf16 and fp16 (8 bits). */
static float input_value(int i, int salt)
{
    return (float)(((i * 37 + salt * 11) % 255) - 127) / 128.0f;
}

/* --- WMMA --------------------------------------------------------------------- */

/* One warp: D (M x N) = A (M x K) * B (K x N) + C, A and B in the requested
 * layouts (leading dimension = their row or column length); C is loaded and
 * D stored row- or column-major. */
template <class T, int M, int N, int K, class LA, class LB>
__global__ void wmma_tile(const typename wmma::fragment<wmma::matrix_a, M, N, K, T, LA>::element_type *A,
                          const typename wmma::fragment<wmma::matrix_b, M, N, K, T, LB>::element_type *B,
                          const float *C, float *D, int c_row_major, int d_row_major)
{
    wmma::fragment<wmma::matrix_a, M, N, K, T, LA> a;
    wmma::fragment<wmma::matrix_b, M, N, K, T, LB> b;
    wmma::fragment<wmma::accumulator, M, N, K, float> c;
    bool a_row = std::is_same<LA, wmma::row_major>::value, b_row = std::is_same<LB, wmma::row_major>::value;
    wmma::load_matrix_sync(a, A, a_row ? K : M);
    wmma::load_matrix_sync(b, B, b_row ? N : K);
    wmma::load_matrix_sync(c, C, c_row_major ? N : M, c_row_major ? wmma::mem_row_major : wmma::mem_col_major);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(D, c, d_row_major ? N : M, d_row_major ? wmma::mem_row_major : wmma::mem_col_major);
}

/* Element (r, c) of an R x C matrix stored row- or column-major. */
static int at(int r, int c, int R, int C, bool row_major)
{
    return row_major ? r * C + c : c * R + r;
}

template <class T, int M, int N, int K, class LA, class LB> static void run_wmma_case(int c_row, int d_row)
{
    typedef typename wmma::fragment<wmma::matrix_a, M, N, K, T, LA>::element_type E;
    bool a_row = std::is_same<LA, wmma::row_major>::value, b_row = std::is_same<LB, wmma::row_major>::value;
    bool tf32 = std::is_same<T, wmma::precision::tf32>::value;
    E *A, *B;
    float *C, *D;
    cudaMallocManaged(&A, M * K * sizeof(E));
    cudaMallocManaged(&B, K * N * sizeof(E));
    cudaMallocManaged(&C, M * N * sizeof(float));
    cudaMallocManaged(&D, M * N * sizeof(float));
    static double a[32][32], b[32][32], c[32][32];
    for (int r = 0; r < M; r++)
        for (int k = 0; k < K; k++) {
            float v = input_value(r * K + k, 1);
            if (tf32) v = wmma::__float_to_tf32(v * 1.0009765625f); /* uses the extra tf32 bits */
            A[at(r, k, M, K, a_row)] = E(v);
            a[r][k] = (double)(float)A[at(r, k, M, K, a_row)];
        }
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) {
            float v = input_value(k * N + n, 2);
            if (tf32) v = wmma::__float_to_tf32(v * 1.0009765625f);
            B[at(k, n, K, N, b_row)] = E(v);
            b[k][n] = (double)(float)B[at(k, n, K, N, b_row)];
        }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            c[i][j] = input_value(i * N + j, 3) * 4.0;
            C[at(i, j, M, N, c_row)] = (float)c[i][j];
        }
    wmma_tile<T, M, N, K, LA, LB><<<1, 32>>>(A, B, C, D, c_row, d_row);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = c[i][j], mag = fabs(c[i][j]);
            for (int k = 0; k < K; k++) {
                ref += a[i][k] * b[k][j];
                mag += fabs(a[i][k] * b[k][j]);
            }
            /* Products of 8- or 11-bit inputs are exact in fp32; the fp32
             * accumulation of K+1 terms errs by at most (K+1) * 2^-24 * sum. */
            double got = D[at(i, j, M, N, d_row)];
            assert_true(fabs(got - ref) <= (K + 1) * 6e-8 * mag);
        }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(D);
}

static void test_wmma_bf16_16x16x16(void **state)
{
    (void)state;
    run_wmma_case<__nv_bfloat16, 16, 16, 16, wmma::row_major, wmma::row_major>(1, 1);
    run_wmma_case<__nv_bfloat16, 16, 16, 16, wmma::row_major, wmma::col_major>(1, 0);
    run_wmma_case<__nv_bfloat16, 16, 16, 16, wmma::col_major, wmma::row_major>(0, 1);
    run_wmma_case<__nv_bfloat16, 16, 16, 16, wmma::col_major, wmma::col_major>(0, 0);
}

static void test_wmma_fp16_16x16x16(void **state)
{
    (void)state;
    run_wmma_case<__half, 16, 16, 16, wmma::row_major, wmma::row_major>(1, 1);
    run_wmma_case<__half, 16, 16, 16, wmma::row_major, wmma::col_major>(0, 1);
    run_wmma_case<__half, 16, 16, 16, wmma::col_major, wmma::row_major>(1, 0);
    run_wmma_case<__half, 16, 16, 16, wmma::col_major, wmma::col_major>(0, 0);
}

static void test_wmma_other_half_shapes(void **state)
{
    (void)state;
    run_wmma_case<__half, 32, 8, 16, wmma::row_major, wmma::col_major>(1, 1);
    run_wmma_case<__half, 8, 32, 16, wmma::col_major, wmma::row_major>(0, 1);
    run_wmma_case<__nv_bfloat16, 32, 8, 16, wmma::row_major, wmma::row_major>(1, 0);
    run_wmma_case<__nv_bfloat16, 8, 32, 16, wmma::col_major, wmma::col_major>(0, 0);
}

static void test_wmma_tf32_16x16x8(void **state)
{
    (void)state;
    run_wmma_case<wmma::precision::tf32, 16, 16, 8, wmma::row_major, wmma::row_major>(1, 1);
    run_wmma_case<wmma::precision::tf32, 16, 16, 8, wmma::row_major, wmma::col_major>(1, 0);
    run_wmma_case<wmma::precision::tf32, 16, 16, 8, wmma::col_major, wmma::row_major>(0, 1);
    run_wmma_case<wmma::precision::tf32, 16, 16, 8, wmma::col_major, wmma::col_major>(0, 0);
    assert_true(wmma::__float_to_tf32(1.0f + 1.0f / 2048) == 1.0f + 1.0f / 1024); /* ties away */
    assert_true(wmma::__float_to_tf32(1.0f + 1.0f / 4096) == 1.0f);
}

/* A multi-warp WMMA matmul, C (M x N) = alpha * A (M x K) * B (K x N), bf16
 * in, fp32 out, one 16x16 tile per warp and four warps per block; exercises
 * fill_fragment, K loops and elementwise work on the accumulator. */
__global__ void wmma_matmul(int M, int N, int K, float alpha, const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int tiles_n = N / 16, tm = warp / tiles_n, tn = warp % tiles_n;
    if (tm * 16 >= M) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + tm * 16 * K + k, K);
        wmma::load_matrix_sync(b, B + k * N + tn * 16, N);
        wmma::mma_sync(acc, a, b, acc);
    }
    for (int i = 0; i < acc.num_elements; i++) acc.x[i] *= alpha;
    wmma::store_matrix_sync(C + tm * 16 * N + tn * 16, acc, N, wmma::mem_row_major);
}

static void test_wmma_matmul_multi_warp(void **state)
{
    (void)state;
    const int M = 48, N = 32, K = 64;
    __nv_bfloat16 *A, *B;
    float *C;
    cudaMallocManaged(&A, M * K * sizeof(*A));
    cudaMallocManaged(&B, K * N * sizeof(*B));
    cudaMallocManaged(&C, M * N * sizeof(*C));
    for (int i = 0; i < M * K; i++) A[i] = __float2bfloat16(input_value(i, 5));
    for (int i = 0; i < K * N; i++) B[i] = __float2bfloat16(input_value(i, 6));
    int warps = (M / 16) * (N / 16);
    wmma_matmul<<<(warps + 3) / 4, 128>>>(M, N, K, 0.5f, A, B, C);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)__bfloat162float(A[i * K + k]) * __bfloat162float(B[k * N + j]);
                ref += p;
                mag += fabs(p);
            }
            /* fp32 accumulation over K, then an exact scaling by 1/2. */
            assert_true(fabs(C[i * N + j] - 0.5 * ref) <= K * 6e-8 * mag);
        }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
}

/* --- mma.sync m16n8k16 --------------------------------------------------------- */

static __host__ __device__ uint32_t pack16(uint16_t lo, uint16_t hi) { return (uint32_t)lo | ((uint32_t)hi << 16); }

/* A (16x16) and B (16x8, stored k-major: B[k*8+n]) as raw 16-bit values; each
 * lane builds its registers from the PTX ISA formulas, then one mma. */
__global__ void mma_one(const uint16_t *A, const uint16_t *B, const float *C, float *D, int bf16)
{
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    uint32_t a[4], b[2];
    float c[4], d[4];
    a[0] = pack16(A[g * 16 + 2 * t], A[g * 16 + 2 * t + 1]);
    a[1] = pack16(A[(g + 8) * 16 + 2 * t], A[(g + 8) * 16 + 2 * t + 1]);
    a[2] = pack16(A[g * 16 + 2 * t + 8], A[g * 16 + 2 * t + 9]);
    a[3] = pack16(A[(g + 8) * 16 + 2 * t + 8], A[(g + 8) * 16 + 2 * t + 9]);
    b[0] = pack16(B[(2 * t) * 8 + g], B[(2 * t + 1) * 8 + g]);
    b[1] = pack16(B[(2 * t + 8) * 8 + g], B[(2 * t + 9) * 8 + g]);
    c[0] = C[g * 8 + 2 * t];
    c[1] = C[g * 8 + 2 * t + 1];
    c[2] = C[(g + 8) * 8 + 2 * t];
    c[3] = C[(g + 8) * 8 + 2 * t + 1];
    if (bf16)
        mma_m16n8k16_bf16_f32(d, a, b, c);
    else
        mma_m16n8k16_f16_f32(d, a, b, c);
    D[g * 8 + 2 * t] = d[0];
    D[g * 8 + 2 * t + 1] = d[1];
    D[(g + 8) * 8 + 2 * t] = d[2];
    D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

static void run_mma_case(int bf16)
{
    uint16_t *A, *B;
    float *C, *D;
    cudaMallocManaged(&A, 256 * 2);
    cudaMallocManaged(&B, 128 * 2);
    cudaMallocManaged(&C, 128 * 4);
    cudaMallocManaged(&D, 128 * 4);
    double a[256], b[128];
    for (int i = 0; i < 256; i++) {
        float v = input_value(i, 7 + bf16);
        A[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16(v)) : __half_as_ushort(__float2half(v));
        a[i] = bf16 ? __bfloat162float(__ushort_as_bfloat16(A[i])) : __half2float(__ushort_as_half(A[i]));
    }
    for (int i = 0; i < 128; i++) {
        float v = input_value(i, 9 + bf16) * 0.75f;
        B[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16(v)) : __half_as_ushort(__float2half(v));
        b[i] = bf16 ? __bfloat162float(__ushort_as_bfloat16(B[i])) : __half2float(__ushort_as_half(B[i]));
        C[i] = input_value(i, 4) * 2.0f;
    }
    mma_one<<<1, 32>>>(A, B, C, D, bf16);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 8; n++) {
            double ref = C[m * 8 + n], mag = fabs(ref);
            for (int k = 0; k < 16; k++) {
                ref += a[m * 16 + k] * b[k * 8 + n];
                mag += fabs(a[m * 16 + k] * b[k * 8 + n]);
            }
            /* 17-term fp32 accumulation of exact products. */
            assert_true(fabs(D[m * 8 + n] - ref) <= 17 * 6e-8 * mag);
        }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(D);
}

static void test_mma_m16n8k16_bf16(void **state)
{
    (void)state;
    run_mma_case(1);
}

static void test_mma_m16n8k16_f16(void **state)
{
    (void)state;
    run_mma_case(0);
}

/* --- ldmatrix ---------------------------------------------------------------------- */

/* A 32x8 tile of 16-bit values, value = row * 8 + col (matrix j = rows 8j..8j+7),
 * staged in shared memory; each form's registers are written out per lane. */
__global__ void ldmatrix_forms(const uint16_t *src, uint32_t *out)
{
    __shared__ __align__(16) uint16_t tile[32 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 32 * 8; i += 32) tile[i] = src[i];
    __syncwarp();
    const uint16_t *row = tile + lane * 8; /* lane l gives row l: matrix l/8, row l%8 */
    uint32_t r[4];
    ldmatrix_x1(r, row);
    out[0 * 128 + lane * 4] = r[0];
    ldmatrix_x2(r, row);
    for (int j = 0; j < 2; j++) out[1 * 128 + lane * 4 + j] = r[j];
    ldmatrix_x4(r, row);
    for (int j = 0; j < 4; j++) out[2 * 128 + lane * 4 + j] = r[j];
    ldmatrix_x1_trans(r, row);
    out[3 * 128 + lane * 4] = r[0];
    ldmatrix_x2_trans(r, row);
    for (int j = 0; j < 2; j++) out[4 * 128 + lane * 4 + j] = r[j];
    ldmatrix_x4_trans(r, row);
    for (int j = 0; j < 4; j++) out[5 * 128 + lane * 4 + j] = r[j];
}

static void test_ldmatrix_forms(void **state)
{
    (void)state;
    uint16_t *src;
    uint32_t *out;
    cudaMallocManaged(&src, 256 * 2);
    cudaMallocManaged(&out, 6 * 128 * 4);
    memset(out, 0, 6 * 128 * 4);
    for (int i = 0; i < 256; i++) src[i] = (uint16_t)(i + 0x100);
    ldmatrix_forms<<<1, 32>>>(src, out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    int counts[3] = {1, 2, 4};
    for (int trans = 0; trans < 2; trans++)
        for (int f = 0; f < 3; f++)
            for (int lane = 0; lane < 32; lane++)
                for (int j = 0; j < counts[f]; j++) {
                    int r = lane / 4, c = 2 * (lane % 4);
                    /* element (row, col) of matrix j is src[(8j + row) * 8 + col] */
                    uint16_t lo = trans ? src[(8 * j + c) * 8 + r] : src[(8 * j + r) * 8 + c];
                    uint16_t hi = trans ? src[(8 * j + c + 1) * 8 + r] : src[(8 * j + r) * 8 + c + 1];
                    assert_int_equal(out[(trans * 3 + f) * 128 + lane * 4 + j], pack16(lo, hi));
                }
    cudaFree(src);
    cudaFree(out);
}

/* ldmatrix feeding mma: A row-major 16x16 through x4, B stored k-major
 * (B[k][n], 16x8) through x2.trans, the usual pairing in a GEMM kernel. */
__global__ void ldmatrix_mma(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *D)
{
    __shared__ __align__(16) __nv_bfloat16 As[16 * 16];
    __shared__ __align__(16) __nv_bfloat16 Bs[16 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) As[i] = A[i];
    for (int i = lane; i < 128; i += 32) Bs[i] = B[i];
    __syncwarp();
    uint32_t a[4], b[2];
    /* x4 on A: matrices (rows 0-7, cols 0-7), (rows 8-15, cols 0-7),
     * (rows 0-7, cols 8-15), (rows 8-15, cols 8-15) = a[0..3]. */
    ldmatrix_x4(a, As + (lane % 16) * 16 + (lane / 16) * 8);
    /* x2.trans on B: matrices (k 0-7) and (k 8-15), rows are k. */
    ldmatrix_x2_trans(b, Bs + (lane % 16) * 8);
    float c[4] = {0, 0, 0, 0}, d[4];
    mma_m16n8k16_bf16_f32(d, a, b, c);
    int g = lane / 4, t = lane % 4;
    D[g * 8 + 2 * t] = d[0];
    D[g * 8 + 2 * t + 1] = d[1];
    D[(g + 8) * 8 + 2 * t] = d[2];
    D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

static void test_ldmatrix_then_mma(void **state)
{
    (void)state;
    __nv_bfloat16 *A, *B;
    float *D;
    cudaMallocManaged(&A, 256 * sizeof(*A));
    cudaMallocManaged(&B, 128 * sizeof(*B));
    cudaMallocManaged(&D, 128 * sizeof(*D));
    for (int i = 0; i < 256; i++) A[i] = __float2bfloat16(input_value(i, 12));
    for (int i = 0; i < 128; i++) B[i] = __float2bfloat16(input_value(i, 13));
    ldmatrix_mma<<<1, 32>>>(A, B, D);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 8; n++) {
            double ref = 0, mag = 0;
            for (int k = 0; k < 16; k++) {
                double p = (double)__bfloat162float(A[m * 16 + k]) * __bfloat162float(B[k * 8 + n]);
                ref += p;
                mag += fabs(p);
            }
            assert_true(fabs(D[m * 8 + n] - ref) <= 16 * 6e-8 * mag);
        }
    cudaFree(A);
    cudaFree(B);
    cudaFree(D);
}

/* --- cp.async ---------------------------------------------------------------------- */

/* Three groups (4-, 8- and 16-byte copies); after wait_group(2) only the
 * first has landed, after wait_group(1) two, after wait_group(0) all; the
 * zero-fill form reads 6 bytes and clears the other 10. */
__global__ void cp_async_groups(const int *src, int *out)
{
    __shared__ __align__(16) int s[4 + 8 + 16];
    int t = threadIdx.x;
    if (t == 0) {
        for (int i = 0; i < 28; i++) s[i] = -1;
        cp_async_4(&s[0], &src[0]);
        cp_async_commit_group();
        cp_async_8(&s[4], &src[4]);
        cp_async_commit_group();
        cp_async_16(&s[8], &src[8]);
        cp_async_16_zfill(&s[12], &src[12], 6);
        cp_async_commit_group();
        cp_async_wait_group(2);
        out[0] = s[0];
        out[1] = s[4];
        cp_async_wait_group(1);
        out[2] = s[4];
        out[3] = s[5];
        out[4] = s[8];
        cp_async_wait_group(0);
        for (int i = 0; i < 8; i++) out[5 + i] = s[8 + i];
        cp_async_16(&s[16], &src[16]);
        cp_async_wait_all();
        out[13] = s[19];
    }
}

static void test_cp_async_groups(void **state)
{
    (void)state;
    int *src, *out;
    cudaMallocManaged(&src, 32 * sizeof(int));
    cudaMallocManaged(&out, 16 * sizeof(int));
    for (int i = 0; i < 32; i++) src[i] = 100 + i;
    cp_async_groups<<<1, 32>>>(src, out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(out[0], 100);
    /* Emulator-specific: copies land at the wait; until then a destination
     * holds all-ones bytes (-1 here), what a GPU leaves undefined. */
    assert_int_equal(out[1], -1);
    assert_int_equal(out[2], 104);
    assert_int_equal(out[3], 105);
    assert_int_equal(out[4], -1);
    for (int i = 0; i < 4; i++) assert_int_equal(out[5 + i], 108 + i);
    assert_int_equal(out[9], 112);
    assert_int_equal(out[10], 113 & 0xffff); /* low 2 bytes of src[13] (little-endian) */
    assert_int_equal(out[11], 0);
    assert_int_equal(out[12], 0);
    assert_int_equal(out[13], 119);
    cudaFree(src);
    cudaFree(out);
}

/* cuda_pipeline.h's primitives are the same cp.async: batches that land at
 * their wait (-1 bytes before it), the zero fill of the last zfill bytes,
 * and nvcuda::experimental::pipeline's memcpy_async of a float4, which
 * copies at once where the destination is not shared memory. */
__global__ void pipeline_copies(const int *src, int *out, float4 *g4)
{
    __shared__ __align__(16) int s[16];
    __shared__ float4 s4;
    if (threadIdx.x != 0) return;
    for (int i = 0; i < 16; i++) s[i] = -1;
    __pipeline_memcpy_async(&s[0], &src[0], 16);
    __pipeline_commit();
    __pipeline_memcpy_async(&s[4], &src[4], 8);
    __pipeline_memcpy_async(&s[8], &src[8], 16, 10); /* reads 6 bytes */
    __pipeline_commit();
    __pipeline_wait_prior(1);
    out[0] = s[3];
    out[1] = s[4];
    __pipeline_wait_prior(0);
    out[2] = s[5];
    out[3] = s[8];
    out[4] = s[9];
    out[5] = s[10];
    nvcuda::experimental::pipeline pipe;
    nvcuda::experimental::memcpy_async(s4, g4[0], pipe);
    size_t batch = pipe.commit();
    pipe.wait(batch + 1);
    float4 v = s4;
    nvcuda::experimental::memcpy_async(g4[1], s4, pipe); /* shared to global: at once */
    pipe.commit_and_wait();
    out[6] = (int)v.w;
    out[7] = (int)batch;
}

static void test_pipeline_primitives(void **state)
{
    (void)state;
    int *src, *out;
    float4 *g4;
    cudaMallocManaged(&src, 16 * sizeof(int));
    cudaMallocManaged(&out, 8 * sizeof(int));
    cudaMallocManaged(&g4, 2 * sizeof(float4));
    for (int i = 0; i < 16; i++) src[i] = 100 + i;
    g4[0] = make_float4(1, 2, 3, 4);
    pipeline_copies<<<1, 32>>>(src, out, g4);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(out[0], 103);
    assert_int_equal(out[1], -1); /* its batch is still in flight */
    assert_int_equal(out[2], 105);
    assert_int_equal(out[3], 108);
    assert_int_equal(out[4], 109 & 0xffff); /* 6 bytes read: src[9]'s low two */
    assert_int_equal(out[5], 0);
    assert_int_equal(out[6], 4);
    assert_int_equal(out[7], 0);
    assert_true(g4[1].x == 1 && g4[1].w == 4);
    cudaFree(src);
    cudaFree(out);
    cudaFree(g4);
}

/* What a GPU faults on, or what CUDA's asserts refuse, stops the launch:
 * mode 0, a copy of 12 bytes; 1, more zero fill than the copy; 2, a
 * destination in global memory; 3, a source 8 bytes off for a 16-byte copy. */
__global__ void pipeline_misuse(const int *src, int *dst, int mode)
{
    __shared__ __align__(16) int s[8];
    if (mode == 0) __pipeline_memcpy_async(s, src, 12);
    if (mode == 1) __pipeline_memcpy_async(s, src, 8, 9);
    if (mode == 2) __pipeline_memcpy_async(dst, src, 16);
    if (mode == 3) __pipeline_memcpy_async(s, src + 2, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    dst[threadIdx.x] = s[0];
}

static void test_pipeline_misuse(void **state)
{
    (void)state;
    static const char *const said[] = {"__pipeline_memcpy_async of 12 bytes", "with zfill 9",
                                       "shared-memory destination", "global source"};
    int *src, *dst;
    cudaMalloc(&src, 64);
    cudaMalloc(&dst, 256);
    for (int mode = 0; mode < 4; mode++) {
        capture_begin();
        pipeline_misuse<<<1, 32>>>(src, dst, mode);
        cudaError_t e = cudaDeviceSynchronize();
        const char *err = capture_end();
        if (e == cudaSuccess || !strstr(err, said[mode]))
            fail_msg("mode %d: expected a failed launch saying \"%s\", got %s: %s", mode, said[mode],
                     cudaGetErrorString(e), err);
        cudaDeviceReset();
        cudaMalloc(&src, 64);
        cudaMalloc(&dst, 256);
    }
    cudaFree(src);
    cudaFree(dst);
}

/* cp.async and ldmatrix addresses must be aligned to the bytes they move
 * (PTX ISA, "Addresses as Operands"); a GPU stops the kernel otherwise.
 * mode 0: all aligned; 1: a 16-byte copy from a source 4 bytes off;
 * 2: its destination 8 bytes off; 3: a zero-fill copy that reads nothing,
 * from a misaligned source (allowed); 4: lane 3's ldmatrix row 2 bytes off;
 * 5: lane 9's row 2 bytes off in an x1, which reads only lanes 0-7 (allowed). */
__global__ void copies_and_rows(const uint16_t *src, uint32_t *out, int mode)
{
    __shared__ __align__(16) uint16_t s[64 * 8 + 8];
    int lane = threadIdx.x;
    const uint16_t *from = src + 8 * lane + (mode == 1 && lane == 5 ? 2 : 0);
    uint16_t *to = s + 8 * lane + (mode == 2 && lane == 7 ? 4 : 0);
    if (mode == 3 && lane == 0)
        cp_async_16_zfill(to, src + 1, 0);
    else
        cp_async_16(to, from);
    cp_async_wait_all();
    __syncwarp();
    uint32_t r[4];
    const uint16_t *row = s + 8 * (lane % 32) + ((mode == 4 && lane == 3) || (mode == 5 && lane == 9) ? 1 : 0);
    if (mode == 5)
        ldmatrix_x1(r, row);
    else
        ldmatrix_x4(r, row);
    out[lane] = r[0];
}

static void test_cp_async_and_ldmatrix_alignment(void **state)
{
    (void)state;
    uint16_t *src;
    uint32_t *out;
    cudaMallocManaged(&src, 64 * 8 * 2);
    cudaMallocManaged(&out, 32 * 4);
    for (int i = 0; i < 64 * 8; i++) src[i] = (uint16_t)i;
    const cudaError_t want[6] = {cudaSuccess, cudaErrorMisalignedAddress, cudaErrorMisalignedAddress,
                                 cudaSuccess, cudaErrorMisalignedAddress, cudaSuccess};
    for (int mode = 0; mode < 6; mode++) {
        copies_and_rows<<<1, 32>>>(src, out, mode);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != want[mode]) fail_msg("mode %d: got %s, want %s", mode, cudaGetErrorName(e), cudaGetErrorName(want[mode]));
        cudaDeviceReset();
    }
    copies_and_rows<<<1, 32>>>(src, out, 0);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(out[0], pack16(src[0], src[1])); /* lane 0: row 0, columns 0-1 of matrix 0 */
    cudaFree(src);
    cudaFree(out);
}

/* The zero-fill form reads src_bytes and clears the rest; PTX ISA, cp.async:
 * "Specifying src-size larger than cp-size results in undefined behavior".
 * mode 0: 16 of 16 (fine); 1: 20, the bytes left in a row, unclamped;
 * 2: -4, a count gone negative past the edge (a .u32 operand: 2^32 - 4). */
__global__ void zfill_counts(const int *src, int *out, int mode)
{
    __shared__ __align__(16) int s[4 * 32];
    int t = threadIdx.x;
    cp_async_16_zfill(&s[4 * t], &src[4 * t], mode == 0 ? 16 : mode == 1 ? 20 : -4);
    cp_async_wait_all();
    out[t] = s[4 * t];
}

static void test_cp_async_src_size_past_copy(void **state)
{
    (void)state;
    int *src, *out;
    cudaMalloc(&src, 4 * 32 * sizeof(int));
    cudaMalloc(&out, 32 * sizeof(int));
    cudaMemset(src, 0, 4 * 32 * sizeof(int));
    for (int mode = 0; mode < 3; mode++) {
        zfill_counts<<<1, 32>>>(src, out, mode);
        cudaError_t e = cudaDeviceSynchronize(), want = mode == 0 ? cudaSuccess : cudaErrorLaunchFailure;
        if (e != want) fail_msg("mode %d: got %s, want %s", mode, cudaGetErrorName(e), cudaGetErrorName(want));
        cudaDeviceReset();
    }
}

/* A refill issued before the barrier that ends the reads of its stage
 * (early = 1): on a GPU a fast thread's copy may land while a slower thread
 * still reads the old value. Each thread reads its neighbour's element. Until
 * its wait a destination holds all-ones bytes here (a NaN), so the last
 * thread reads thread 0's element after thread 0 has issued its refill and
 * gets that NaN. early = 0 is the right order: read, barrier, refill. */
__global__ void refill_order(const float *src, float *out, int early)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    cp_async_4(&s[t], &src[t]);
    cp_async_wait_all();
    __syncthreads();
    if (early) {
        cp_async_4(&s[t], &src[64 + t]);
        cp_async_commit_group();
        out[t] = s[(t + 1) % 64];
        __syncthreads();
    } else {
        out[t] = s[(t + 1) % 64];
        __syncthreads();
        cp_async_4(&s[t], &src[64 + t]);
        cp_async_commit_group();
    }
    cp_async_wait_all();
    __syncthreads();
    out[64 + t] = s[t];
}

static void test_cp_async_refill_before_barrier(void **state)
{
    (void)state;
    float *src, *out;
    cudaMallocManaged(&src, 128 * sizeof(float));
    cudaMallocManaged(&out, 128 * sizeof(float));
    for (int i = 0; i < 128; i++) src[i] = (float)i;
#ifdef __SANITIZE_THREAD__
    const int orders = 1; /* the early refill is a race: test_simt_sanitizers checks TSan's report of it */
#else
    const int orders = 2;
#endif
    for (int early = 0; early < orders; early++) {
        refill_order<<<1, 64>>>(src, out, early);
        assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
        int wrong = 0;
        for (int t = 0; t < 64; t++) {
            wrong += out[t] != src[(t + 1) % 64];
            assert_true(out[64 + t] == src[64 + t]); /* every refill lands by the wait */
        }
        if (early) {
            if (wrong == 0) fail_msg("a refill before the barrier went unseen: every thread read the old value");
            assert_true(isnan(out[63]));
        } else {
            assert_int_equal(wrong, 0);
        }
    }
    cudaFree(src);
    cudaFree(out);
}

/* An ldmatrix of shared bytes whose cp.async has not landed: the emulator
 * stops at the ldmatrix and names both lines. Two stages of 8 x 8 bf16;
 * lane l copies row l % 8 of stage l / 8 (lanes 16-31 copy nothing).
 * mode 0: commit each stage, wait_group 1, read stage 0 (ready; stage 1 is
 * still in flight and not read: fine); 1: read stage 1, which that wait
 * left in flight; 2: no commit_group before wait_group 0, so no group is
 * waited for; 3: read before any wait, from lanes whose rows other threads
 * copied; 4: lanes 0-7 commit their stage-0 copy, then copy a stage-1 row
 * and do not commit it, so wait_group 1 leaves the stage-0 group pending. */
__global__ void ldmatrix_too_early(const uint16_t *src, uint32_t *out, int mode)
{
    __shared__ __align__(16) uint16_t stage[2][64];
    int lane = threadIdx.x, st = lane / 8 % 2, row = lane % 8;
    if (mode == 4) {
        if (lane < 8) {
            cp_async_16(&stage[0][8 * row], &src[8 * row]);
            cp_async_commit_group();
            cp_async_16(&stage[1][8 * row], &src[64 + 8 * row]);
        }
        cp_async_wait_group(1);
    } else if (lane < 16) {
        cp_async_16(&stage[st][8 * row], &src[64 * st + 8 * row]);
    }
    if (mode != 2 && mode != 4) {
        /* stage 0's copies are group 0 of lanes 0-7, stage 1's group 0 of
         * lanes 8-15; each lane commits once more, so that wait_group 1 leaves
         * a lane's one copy in flight only in mode 1 (whose stage-1 lanes
         * skip the second commit) */
        cp_async_commit_group();
        if (!(mode == 1 && st == 1)) cp_async_commit_group();
    }
    if (mode != 3 && mode != 4) cp_async_wait_group(mode == 2 ? 0 : 1);
    __syncwarp();
    uint32_t r[1];
    ldmatrix_x1(r, &stage[mode == 1 ? 1 : 0][8 * (mode == 3 ? (lane + 1) % 8 : lane % 8)]);
    out[lane] = r[0];
}

/* A launch that read a copy in flight (mode says which): it failed, and
 * its message says so and holds each of the says[] (NULL ends them). */
static void expect_read_too_early(int mode, cudaError_t e, const char *err, const char *const *says)
{
    if (e != cudaErrorLaunchFailure) fail_msg("mode %d: got %s, want a launch failure", mode, cudaGetErrorName(e));
    int ok = strstr(err, "reads shared bytes that a cp.async has not finished writing") != NULL;
    for (int k = 0; says[k]; k++) ok &= strstr(err, says[k]) != NULL;
    if (!ok) fail_msg("mode %d: the message does not say what and where: %s", mode, err);
    cudaDeviceReset();
}

static void test_ldmatrix_before_its_copy_lands(void **state)
{
    (void)state;
    uint16_t *src;
    uint32_t *out;
    cudaMallocManaged(&src, 128 * 2);
    cudaMallocManaged(&out, 32 * 4);
    for (int i = 0; i < 128; i++) src[i] = (uint16_t)(i + 1);
    const char *says[5] = {NULL, "in its group 0, which its cp.async.wait_group has not waited for yet",
                           "in a group not committed yet", "copied by thread (1,0,0)",
                           "(a cp_async_commit_group missing after them)"};
    for (int mode = 0; mode < 5; mode++) {
        capture_begin();
        ldmatrix_too_early<<<1, 32>>>(src, out, mode);
        cudaError_t e = cudaDeviceSynchronize();
        const char *err = capture_end();
        if (mode == 0) {
            if (e != cudaSuccess) fail_msg("mode 0: got %s (%s)", cudaGetErrorName(e), err);
            assert_int_equal(out[0], pack16(src[0], src[1]));
            assert_int_equal(out[31], pack16(src[62], src[63])); /* row 7, columns 6-7 of stage 0 */
            continue;
        }
        const char *const want[] = {"of __shared__ 'stage'", says[mode], "test_simt_mma.cu:", NULL};
        expect_read_too_early(mode, e, err, want);
    }
    cudaFree(src);
    cudaFree(out);
}

/* The same for wmma::load_matrix_sync, row- and column-major: two 16 x 16
 * bf16 tiles, lane l copies 16 bytes of each (row l / 2), tile A in group
 * 0 and tile B in group 1. mode 0: wait_group 0, then load both (fine);
 * 1: no wait, so the load of A reads copies in flight; 2: wait_group 1,
 * which lands A and leaves B in flight. */
__global__ void wmma_too_early(const __nv_bfloat16 *src, float *out, int mode)
{
    __shared__ __align__(32) __nv_bfloat16 A[16 * 16], B[16 * 16];
    int lane = threadIdx.x, at = 8 * lane;
    cp_async_16(&A[at], &src[at]);
    cp_async_commit_group();
    cp_async_16(&B[at], &src[256 + at]);
    cp_async_commit_group();
    if (mode != 1) cp_async_wait_group(mode == 2 ? 1 : 0);
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(out, c, 16, wmma::mem_row_major);
}

static void test_wmma_load_before_its_copy_lands(void **state)
{
    (void)state;
    __nv_bfloat16 *src;
    float *out;
    cudaMallocManaged(&src, 512 * sizeof(__nv_bfloat16));
    cudaMallocManaged(&out, 256 * sizeof(float));
    for (int i = 0; i < 512; i++) src[i] = __float2bfloat16((float)(i % 7 - 3)); /* small integers: exact sums */
    const char *tile[3] = {NULL, "of __shared__ 'A'", "of __shared__ 'B'"};
    const char *group[3] = {NULL, "in its group 0,", "in its group 1,"};
    for (int mode = 0; mode < 3; mode++) {
        capture_begin();
        wmma_too_early<<<1, 32>>>(src, out, mode);
        cudaError_t e = cudaDeviceSynchronize();
        const char *err = capture_end();
        if (mode == 0) {
            if (e != cudaSuccess) fail_msg("mode 0: got %s (%s)", cudaGetErrorName(e), err);
            for (int m = 0; m < 16; m++)
                for (int n = 0; n < 16; n++) {
                    float want = 0; /* B is column-major: B(k, n) at 16 n + k */
                    for (int k = 0; k < 16; k++)
                        want += __bfloat162float(src[16 * m + k]) * __bfloat162float(src[256 + 16 * n + k]);
                    if (out[16 * m + n] != want) fail_msg("mode 0: D(%d,%d) = %g, want %g", m, n, out[16 * m + n], want);
                }
            continue;
        }
        const char *const want[] = {"wmma::load_matrix_sync at test_simt_mma.cu:", tile[mode], group[mode], NULL};
        expect_read_too_early(mode, e, err, want);
    }
    cudaFree(src);
    cudaFree(out);
}

/* mma.sync, ldmatrix and wmma are .aligned: all 32 lanes of the warp must
 * execute the same one (PTX ISA), or the result is undefined. mode 0: the
 * whole warp (fine); 1: lanes 16-31 return first; 2: a block of 16 threads;
 * 3: lanes 0-15 at an ldmatrix, 16-31 at an mma; 4: no tensor core, but
 * __shfl_sync in lanes 0-15 and __ballot_sync in 16-31 with the same mask. */
__global__ void warp_wide(const uint16_t *src, float *out, int mode)
{
    __shared__ __align__(16) uint16_t s[32 * 8];
    int lane = threadIdx.x;
    for (int i = 0; i < 8; i++) s[8 * lane + i] = src[8 * lane + i];
    __syncthreads();
    if (mode == 4) {
        out[lane] = lane < 16 ? (float)__shfl_sync(0xffffffffu, lane, 0) : (float)__ballot_sync(0xffffffffu, 1);
        return;
    }
    if (mode == 1 && lane >= 16) return;
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    float c[4] = {0, 0, 0, 0}, d[4];
    if (mode == 3 && lane >= 16) {
        mma_m16n8k16_bf16_f32(d, a, b, c);
        out[lane] = d[0];
        return;
    }
    ldmatrix_x4(a, s + 8 * lane);
    out[lane] = (float)(a[0] & 0xffffu);
}

static void test_warp_wide_needs_the_whole_warp(void **state)
{
    (void)state;
    uint16_t *src;
    float *out;
    cudaMallocManaged(&src, 32 * 8 * 2);
    cudaMallocManaged(&out, 32 * sizeof(float));
    for (int i = 0; i < 32 * 8; i++) src[i] = (uint16_t)i;
    const int threads[5] = {32, 32, 16, 32, 32};
    for (int mode = 0; mode < 5; mode++) {
        warp_wide<<<1, threads[mode]>>>(src, out, mode);
        cudaError_t e = cudaDeviceSynchronize(), want = mode == 0 ? cudaSuccess : cudaErrorLaunchFailure;
        if (e != want) fail_msg("mode %d: got %s, want %s", mode, cudaGetErrorName(e), cudaGetErrorName(want));
        cudaDeviceReset();
    }
    warp_wide<<<1, 32>>>(src, out, 0);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_true(out[5] == (float)src[8 * (5 / 4) + 2 * (5 % 4)]); /* lane 5: row 1, column 2 of matrix 0 */
    cudaFree(src);
    cudaFree(out);
}

/* What CUDA asks of a WMMA pointer and leading dimension: a 32-byte aligned
 * pointer and an ldm that is a multiple of 16 bytes (8 bf16, 4 floats).
 * mode 0: both met; 1: A's ldm 20 bf16 (40 bytes); 2: A 16 bytes past an
 * aligned start; 3: the fp32 store with ldm 18 floats (72 bytes); 4: lanes
 * 16-31 return before the store, which, like every wmma call, needs the
 * whole warp. */
__global__ void wmma_rules(const __nv_bfloat16 *A, float *C, int mode)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    wmma::load_matrix_sync(a, A + (mode == 2 ? 8 : 0), mode == 1 ? 20 : 24);
    wmma::load_matrix_sync(b, A, 24);
    wmma::mma_sync(c, a, b, c);
    if (mode == 4 && threadIdx.x >= 16) return;
    wmma::store_matrix_sync(C, c, mode == 3 ? 18 : 20, wmma::mem_row_major);
}

static void test_wmma_pointer_and_ldm_rules(void **state)
{
    (void)state;
    __nv_bfloat16 *A;
    float *C;
    cudaMallocManaged(&A, 24 * 24 * sizeof(__nv_bfloat16));
    cudaMallocManaged(&C, 20 * 20 * sizeof(float));
    for (int i = 0; i < 24 * 24; i++) A[i] = __float2bfloat16(input_value(i, 7));
    const cudaError_t want[5] = {cudaSuccess, cudaErrorLaunchFailure, cudaErrorMisalignedAddress,
                                 cudaErrorLaunchFailure, cudaErrorLaunchFailure};
    for (int mode = 0; mode < 5; mode++) {
        wmma_rules<<<1, 32>>>(A, C, mode);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != want[mode]) fail_msg("mode %d: got %s, want %s", mode, cudaGetErrorName(e), cudaGetErrorName(want[mode]));
        cudaDeviceReset();
    }
    cudaFree(A);
    cudaFree(C);
}

/* ldmatrix and cp.async take a shared-memory address for their tile. mode
 * 0: the shared tile; 1: ldmatrix given the global matrix instead; 2: a
 * cp.async whose destination is global memory. */
__global__ void shared_or_global(const uint16_t *src, uint16_t *dst, uint32_t *out, int mode)
{
    __shared__ __align__(16) uint16_t s[32 * 8];
    int lane = threadIdx.x;
    cp_async_16(mode == 2 ? dst + 8 * lane : s + 8 * lane, src + 8 * lane);
    cp_async_wait_all();
    __syncwarp();
    uint32_t r[4];
    ldmatrix_x4(r, mode == 1 ? src + 8 * lane : s + 8 * lane);
    out[lane] = r[0];
}

static void test_shared_operands_must_be_shared(void **state)
{
    (void)state;
    uint16_t *src, *dst;
    uint32_t *out;
    cudaMalloc(&src, 32 * 8 * 2);
    cudaMalloc(&dst, 32 * 8 * 2);
    cudaMalloc(&out, 32 * 4);
    cudaMemset(src, 0, 32 * 8 * 2);
    const cudaError_t want[3] = {cudaSuccess, cudaErrorIllegalAddress, cudaErrorIllegalAddress};
    for (int mode = 0; mode < 3; mode++) {
        shared_or_global<<<1, 32>>>(src, dst, out, mode);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != want[mode]) fail_msg("mode %d: got %s, want %s", mode, cudaGetErrorName(e), cudaGetErrorName(want[mode]));
        cudaDeviceReset();
    }
}

/* --- inline PTX ------------------------------------------------------------------
 * The same instructions written as asm statements, as a kernel that does not
 * use common/warp_mma.cuh writes them; simtcc's rewrite turns each into the
 * emulator's model. One warp: D (16 x 8) = A (16 x 16, row-major) B (16 x 8,
 * given as Bt, 8 rows of 16 k) through cp.async into shared memory, ldmatrix
 * and mma.sync. mode 0: m16n8k16, static __shared__ tiles; 1: m16n8k8 (k <
 * 8 only); 2: m16n8k16 from dynamic shared memory, rows addressed as
 * [%n+offset], C given apart from D. */
static __device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__global__ void ptx_tile(const __nv_bfloat16 *A, const __nv_bfloat16 *Bt, const float *C, float *D, int mode)
{
    __shared__ __align__(16) __nv_bfloat16 As[16][16];
    __shared__ __align__(16) __nv_bfloat16 Bs[8][16];
    extern __shared__ __align__(16) __nv_bfloat16 dyn[]; /* A's 16 x 16, then Bt's 8 x 16 */
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    const uint32_t a_base = mode == 2 ? smem_u32(dyn) : smem_u32(As), b_base = mode == 2 ? smem_u32(dyn + 256) : smem_u32(Bs);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a_base + lane * 16), "l"(A + lane * 8));
    if (lane < 16)
        asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2;\n" ::"r"(b_base + lane * 16),
                     "l"(Bt + lane * 8), "n"(16));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(0) : "memory");
    asm volatile("bar.sync 0;" ::: "memory");
    uint32_t a[4], b[2];
    float d[4] = {0, 0, 0, 0}, c[4];
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; i++) c[i] = C[(g + (i >= 2 ? 8 : 0)) * 8 + 2 * t + (i & 1)];
    if (mode == 0) {
        d[0] = c[0], d[1] = c[1], d[2] = c[2], d[3] = c[3];
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                     : "r"(smem_u32(&As[lane % 16][(lane / 16) * 8])));
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                     : "=r"(b[0]), "=r"(b[1])
                     : "r"(smem_u32(&Bs[lane % 8][((lane / 8) % 2) * 8])));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else if (mode == 1) {
        d[0] = c[0], d[1] = c[1], d[2] = c[2], d[3] = c[3];
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                     : "=r"(a[0]), "=r"(a[1])
                     : "r"(smem_u32(&As[lane % 16][0])));
        /* CUTLASS's order of the qualifiers, number before shape */
        asm volatile("ldmatrix.sync.aligned.x1.m8n8.shared.b16 {%0}, [%1];\n" : "=r"(b[0]) : "r"(smem_u32(&Bs[lane % 8][0])));
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(b[0]));
    } else {
        /* rows of 32 bytes: lanes 16-31 give the right halves of the rows */
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4+0];\n"
                     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                     : "r"(a_base + (lane % 16) * 32 + (lane / 16) * 16));
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2+16];\n"
                     : "=r"(b[0]), "=r"(b[1])
                     : "r"(b_base + (lane % 8) * 32 + (lane / 8 % 2) * 16 - 16));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%10,%11,%12,%13};\n"
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                       "f"(c[2]), "f"(c[3]));
    }
    for (int i = 0; i < 4; i++) D[(g + (i >= 2 ? 8 : 0)) * 8 + 2 * t + (i & 1)] = d[i];
}

static void test_inline_ptx_tile(void **state)
{
    (void)state;
    __nv_bfloat16 hA[256], hB[128];
    float fa[256], fb[128], hC[128], hD[128];
    for (int i = 0; i < 256; i++) hA[i] = __float2bfloat16(fa[i] = input_value(i, 1));
    for (int i = 0; i < 128; i++) hB[i] = __float2bfloat16(fb[i] = input_value(i, 2));
    for (int i = 0; i < 128; i++) hC[i] = input_value(i, 3);
    __nv_bfloat16 *A, *Bt;
    float *C, *D;
    cudaMalloc(&A, sizeof hA);
    cudaMalloc(&Bt, sizeof hB);
    cudaMalloc(&C, sizeof hC);
    cudaMalloc(&D, sizeof hD);
    cudaMemcpy(A, hA, sizeof hA, cudaMemcpyHostToDevice);
    cudaMemcpy(Bt, hB, sizeof hB, cudaMemcpyHostToDevice);
    cudaMemcpy(C, hC, sizeof hC, cudaMemcpyHostToDevice);
    for (int mode = 0; mode < 3; mode++) {
        ptx_tile<<<1, 32, mode == 2 ? 384 * 2 : 0>>>(A, Bt, C, D, mode);
        assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
        cudaMemcpy(hD, D, sizeof hD, cudaMemcpyDeviceToHost);
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                double want = hC[m * 8 + n];
                for (int k = 0; k < (mode == 1 ? 8 : 16); k++) want += (double)fa[m * 16 + k] * fb[n * 16 + k];
                if (fabs(want - hD[m * 8 + n]) > 1e-5)
                    fail_msg("mode %d: D[%d][%d] = %g, want %g", mode, m, n, hD[m * 8 + n], want);
            }
    }
    cudaFree(A);
    cudaFree(Bt);
    cudaFree(C);
    cudaFree(D);
}

/* The special registers a mov reads, against the built-in variables. */
__global__ void ptx_special_registers(unsigned int *out)
{
    unsigned int v[9];
    unsigned long long t0, t1;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(v[0]));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(v[1]));
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(v[2]));
    asm volatile("mov.u32 %0, %%tid.y;" : "=r"(v[3]));
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(v[4]));
    asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(v[5]));
    asm volatile("mov.u32 %0, %%ntid.x;" : "=r"(v[6]));
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(v[7]));
    asm volatile("mov.b32 %0, %1;" : "=r"(v[8]) : "r"(v[0] * 3u));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1));
    const unsigned int linear = threadIdx.x + threadIdx.y * blockDim.x;
    const unsigned int want[9] = {linear % 32, linear / 32, threadIdx.x, threadIdx.y, blockIdx.x, gridDim.x,
                                  blockDim.x, (1u << (linear % 32)) - 1u, (linear % 32) * 3u};
    unsigned int wrong = 0;
    for (int i = 0; i < 9; i++) wrong |= (v[i] != want[i]) << i;
    wrong |= (t0 == 0 || t1 == 0) << 9;
    out[blockIdx.x * blockDim.x * blockDim.y + linear] = wrong;
}

static void test_inline_ptx_special_registers(void **state)
{
    (void)state;
    unsigned int *out, h[2 * 48];
    cudaMalloc(&out, sizeof h);
    ptx_special_registers<<<2, dim3(16, 3)>>>(out);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 2 * 48; i++)
        if (h[i]) fail_msg("thread %d: special registers wrong (bit mask 0x%x)", i, h[i]);
    cudaFree(out);
}

/* Loads and stores (global and shared, vectors and words, an address
 * with an offset), fences and conversions to bf16 and fp16. Each thread
 * reads four floats of g with one ld.global.nc.v4, stores them to a shared
 * tile with one st.shared.v4, and after the barrier reads the word one past
 * its neighbour's first (t's is word 4 t + 5 of the tile, mod 128). */
__global__ void ptx_loads_stores(const float *g, float *o, uint32_t *packed)
{
    __shared__ __align__(16) float s[128];
    const unsigned int t = threadIdx.x;
    float v[4];
    asm volatile("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                 : "l"(g + 4 * t));
    asm volatile("st.shared.v4.f32 [%0], {%1,%2,%3,%4};" ::"r"(smem_u32(s + 4 * t)), "f"(v[0]), "f"(v[1]), "f"(v[2]),
                 "f"(v[3]));
    asm volatile("membar.cta;" ::: "memory");
    __syncthreads();
    float x;
    asm volatile("ld.shared.f32 %0, [%1+4];" : "=f"(x) : "r"(smem_u32(s + (4 * t + 4) % 128)));
    asm volatile("st.global.f32 [%0], %1;" ::"l"(o + t), "f"(x));
    uint32_t p;
    unsigned short h;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(x), "f"(-2.0f));
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    packed[2 * t] = p;
    packed[2 * t + 1] = h;
}

static void test_inline_ptx_loads_stores(void **state)
{
    (void)state;
    float hg[128], ho[32];
    uint32_t hp[64];
    for (int i = 0; i < 128; i++) hg[i] = input_value(i, 4) * 3.0f;
    float *g, *o;
    uint32_t *packed;
    cudaMalloc(&g, sizeof hg);
    cudaMalloc(&o, sizeof ho);
    cudaMalloc(&packed, sizeof hp);
    cudaMemcpy(g, hg, sizeof hg, cudaMemcpyHostToDevice);
    ptx_loads_stores<<<1, 32>>>(g, o, packed);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(ho, o, sizeof ho, cudaMemcpyDeviceToHost);
    cudaMemcpy(hp, packed, sizeof hp, cudaMemcpyDeviceToHost);
    for (int t = 0; t < 32; t++) {
        const float want = hg[(4 * t + 5) % 128];
        if (ho[t] != want) fail_msg("thread %d read %g, want %g", t, ho[t], want);
        /* References apart from the emulator's conversions: bf16 by
         * rounding the float's bits to nearest even (the values are finite),
         * fp16 by the compiler's _Float16. -2 is 0xc000 in bf16. */
        uint32_t u;
        memcpy(&u, &want, 4);
        const uint32_t pair = ((u + 0x7fffu + (u >> 16 & 1u)) >> 16) << 16 | 0xc000u;
        if (hp[2 * t] != pair) fail_msg("thread %d: bf16x2 0x%08x, want 0x%08x", t, hp[2 * t], pair);
        const _Float16 h = (_Float16)want;
        uint16_t hb;
        memcpy(&hb, &h, 2);
        if (hp[2 * t + 1] != hb) fail_msg("thread %d: f16 0x%04x, want 0x%04x", t, hp[2 * t + 1], hb);
    }
    cudaFree(g);
    cudaFree(o);
    cudaFree(packed);
}

/* The approximate math instructions a fast softmax writes in PTX, and
 * .ftz: the reciprocal of 2e38 is subnormal, flushed to zero with .ftz. */
__global__ void ptx_math(const float *x, float *y)
{
    const float v = x[threadIdx.x];
    float r[8];
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r[0]) : "f"(v));
    asm("lg2.approx.f32 %0, %1;" : "=f"(r[1]) : "f"(v));
    asm("rcp.approx.f32 %0, %1;" : "=f"(r[2]) : "f"(v));
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r[3]) : "f"(v));
    asm("tanh.approx.f32 %0, %1;" : "=f"(r[4]) : "f"(v));
    asm("sqrt.rn.f32 %0, %1;" : "=f"(r[5]) : "f"(v));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r[6]) : "f"(2e38f));
    asm("rcp.approx.f32 %0, %1;" : "=f"(r[7]) : "f"(2e38f));
    for (int i = 0; i < 8; i++) y[threadIdx.x * 8 + i] = r[i];
}

static void test_inline_ptx_math(void **state)
{
    (void)state;
    float hx[32], hy[32 * 8];
    for (int i = 0; i < 32; i++) hx[i] = 0.125f + 0.375f * (float)i;
    float *x, *y;
    cudaMalloc(&x, sizeof hx);
    cudaMalloc(&y, sizeof hy);
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    ptx_math<<<1, 32>>>(x, y);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
    for (int t = 0; t < 32; t++) {
        const double v = hx[t], want[6] = {exp2(v), log2(v), 1 / v, 1 / sqrt(v), tanh(v), sqrt(v)};
        for (int i = 0; i < 6; i++)
            if (fabs(hy[t * 8 + i] - want[i]) > 1e-6 * fabs(want[i]) + 1e-7)
                fail_msg("thread %d, instruction %d: %.9g, want %.9g", t, i, hy[t * 8 + i], want[i]);
        if (hy[t * 8 + 6] != 0.0f) fail_msg("rcp.approx.ftz of 2e38 gave %g, want 0 (flushed)", hy[t * 8 + 6]);
        if (!(hy[t * 8 + 7] > 0.0f && hy[t * 8 + 7] < 1.2e-38f))
            fail_msg("rcp.approx of 2e38 gave %g, want the subnormal 5e-39", hy[t * 8 + 7]);
    }
    cudaFree(x);
    cudaFree(y);
}

/* An operand a GPU would misread stops the launch with a message. mode 0:
 * ldmatrix given a generic pointer ("l"), not a shared address; 1: a
 * shared address past the tiles; 2: bar.sync on barrier 1; 3: cp.async of
 * a size PTX does not allow, a constant the rewrite cannot read (ptxas
 * refuses it when it builds for a GPU). */
static constexpr int odd_copy = 12;

__global__ void ptx_misuse(const uint16_t *src, uint32_t *out, int mode)
{
    __shared__ __align__(16) uint16_t s[32 * 8];
    const unsigned int lane = threadIdx.x;
    uint32_t r;
    if (mode == 0) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r) : "l"(s + 8 * lane));
    } else if (mode == 1) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                     : "=r"(r) : "r"(smem_u32(s + 8 * lane) + 512));
    } else if (mode == 2) {
        asm volatile("bar.sync %0;" ::"r"(1));
        r = 0;
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_u32(s + 8 * lane)), "l"(src + 8 * lane),
                     "n"(odd_copy));
        r = 0;
    }
    out[lane] = r;
}

static void test_inline_ptx_misuse(void **state)
{
    (void)state;
    uint16_t *src;
    uint32_t *out;
    cudaMalloc(&src, 32 * 8 * 2);
    cudaMalloc(&out, 32 * 4);
    static const char *const want[4] = {"is not a shared-memory address", "runs past its end",
                                        "named barriers (1 to 15) are not emulated", "a copy of 12 bytes"};
    for (int mode = 0; mode < 4; mode++) {
        capture_begin();
        ptx_misuse<<<1, 32>>>(src, out, mode);
        cudaError_t e = cudaDeviceSynchronize();
        const char *msg = capture_end();
        if (e == cudaSuccess) fail_msg("mode %d: the launch succeeded", mode);
        if (!strstr(msg, want[mode])) fail_msg("mode %d: no \"%s\" in: %s", mode, want[mode], msg);
        if (!strstr(msg, "test_simt_mma.cu:")) fail_msg("mode %d: the message names no line: %s", mode, msg);
        cudaDeviceReset();
    }
    cudaFree(src);
    cudaFree(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_wmma_bf16_16x16x16, no_fault_left),     cmocka_unit_test_teardown(test_wmma_fp16_16x16x16, no_fault_left),
        cmocka_unit_test_teardown(test_wmma_tf32_16x16x8, no_fault_left),      cmocka_unit_test_teardown(test_wmma_matmul_multi_warp, no_fault_left),
        cmocka_unit_test_teardown(test_wmma_other_half_shapes, no_fault_left),
        cmocka_unit_test_teardown(test_mma_m16n8k16_bf16, no_fault_left),      cmocka_unit_test_teardown(test_mma_m16n8k16_f16, no_fault_left),
        cmocka_unit_test_teardown(test_ldmatrix_forms, no_fault_left),         cmocka_unit_test_teardown(test_ldmatrix_then_mma, no_fault_left),
        cmocka_unit_test_teardown(test_cp_async_groups, no_fault_left),        cmocka_unit_test_teardown(test_cp_async_and_ldmatrix_alignment, no_fault_left),
        cmocka_unit_test_teardown(test_cp_async_refill_before_barrier, no_fault_left),
        cmocka_unit_test_teardown(test_cp_async_src_size_past_copy, no_fault_left),
        cmocka_unit_test_teardown(test_ldmatrix_before_its_copy_lands, no_fault_left),
        cmocka_unit_test_teardown(test_wmma_load_before_its_copy_lands, no_fault_left),
        cmocka_unit_test_teardown(test_warp_wide_needs_the_whole_warp, no_fault_left),
        cmocka_unit_test_teardown(test_wmma_pointer_and_ldm_rules, no_fault_left),
        cmocka_unit_test_teardown(test_shared_operands_must_be_shared, no_fault_left),
        cmocka_unit_test_teardown(test_inline_ptx_tile, no_fault_left),
        cmocka_unit_test_teardown(test_inline_ptx_special_registers, no_fault_left),
        cmocka_unit_test_teardown(test_inline_ptx_loads_stores, no_fault_left),
        cmocka_unit_test_teardown(test_inline_ptx_math, no_fault_left),
        cmocka_unit_test_teardown(test_inline_ptx_misuse, no_fault_left),
        cmocka_unit_test_teardown(test_pipeline_primitives, no_fault_left),
        cmocka_unit_test_teardown(test_pipeline_misuse, no_fault_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
