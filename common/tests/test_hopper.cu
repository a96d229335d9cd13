/*
 * The Hopper building blocks of common/hopper.cuh against what the PTX ISA
 * and the driver API documentation say they do: TMA tile loads (the box,
 * zeros past the tensor's edges, negative coordinates, the 128-, 64- and
 * 32-byte swizzles written out from their definitions), mbarrier phases and
 * parities, and wgmma m64n128k16 and m64n256k16 with operands staged by
 * TMA exactly as lab 04's step C stages them (the accumulator layout, K
 * steps inside a swizzled row, B's 64-column boxes the leading offset
 * apart, scale-d).
 *
 * Built for the emulator (always run) and by nvcc for sm_90a, where it runs
 * on a Hopper GPU and is skipped elsewhere. The expected values are computed
 * here on the host from the documented rules, so the same test passing on
 * both says the emulator models the hardware for these cases. Inputs are
 * small integers, so every product and sum is exact and results are
 * compared bit for bit.
 */
#include <cuda.h>
#include <cuda_runtime.h>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h> /* cmocka 1.1 has no extern "C" of its own */
}
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "half.h"
#include "hopper.cuh"
#include "memory.h"

/* ---- where this can run --------------------------------------------------- */

__global__ void probe_kernel(int *out) {
#if defined(HOPPER_DEVICE)
    *out = 1;
#else
    *out = 0;
#endif
}

/* Skip unless a compute-capability 9.0 device runs this binary's sm_90a code
 * (or this is the emulator, which is such a device). */
static void require_hopper(void) {
    if (!gpu_available()) {
        print_message("no GPU: skipped (the emulator build runs this test)\n");
        skip();
    }
    int dev = 0, major = 0, minor = 0, h = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    int *d = (int *)gpu_malloc(sizeof(int));
    probe_kernel<<<1, 1>>>(d);
    gpu_sync_check("probe_kernel");
    gpu_download(&h, d, sizeof(int));
    gpu_free(d);
    if (major != 9 || minor != 0 || !h || !hopper_tensor_map_encoder()) {
        print_message("needs compute capability 9.0 and an sm_90a build: skipped\n");
        skip();
    }
}

/* A 2-D bf16/uint16 map over rows x cols (row pitch ld elements), boxes of
 * box_rows x box_cols, with the given swizzle. */
static CUtensorMap make_map(const uint16_t *base, int rows, int cols, int ld, int box_rows, int box_cols,
                            CUtensorMapSwizzle swz) {
    CUtensorMap m;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    cuuint64_t strides[1] = {(cuuint64_t)ld * 2};
    cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows};
    cuuint32_t es[2] = {1, 1};
    CUresult r = hopper_tensor_map_encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)base, dims,
                                             strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, swz,
                                             CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    assert_int_equal(r, CUDA_SUCCESS);
    return m;
}

/* Dynamic shared memory rounded up to 1024 bytes, the 128-byte swizzle's period. */
__device__ uint8_t *aligned_smem(void) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    return smem_raw + ((1024 - (hopper_smem_addr(smem_raw) & 1023)) & 1023);
}

/* ---- TMA ---------------------------------------------------------------------- */

/* One box into shared memory, then its raw bytes out to global memory. */
__global__ void tma_box_kernel(const __grid_constant__ CUtensorMap map, int x, int y, int bytes, uint8_t *out) {
#if defined(HOPPER_DEVICE)
    __shared__ __align__(8) uint64_t bar;
    uint8_t *buf = aligned_smem();
    for (int i = threadIdx.x; i < bytes; i += blockDim.x) buf[i] = 0xAB; /* poison: every byte must be written */
    hopper_fence_proxy_async(); /* the poison before the TMA unit's writes */
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, (uint32_t)bytes);
        tma_load_2d(buf, &map, x, y, &bar);
    }
    mbar_wait(&bar, 0);
    for (int i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = buf[i];
#else
    (void)map; (void)x; (void)y; (void)bytes; (void)out;
#endif
}

/* Global element (r, c): unique and never 0, so zero fill is visible. */
static uint16_t gval(int r, int c) { return (uint16_t)(r * 256 + c + 1); }

/* Where box element (r, j) of a box with row_bytes-byte rows lands in a
 * buffer aligned to 1024 bytes: packed row after row, then the swizzle
 * XORs the 16-byte chunk number within each 128-byte line of the address
 * with the line number, masked to the swizzle's width (span / 16 - 1: 7, 3
 * or 1 for 128, 64 or 32 bytes). For 128-byte rows that is the familiar
 * "chunk c of row r goes to chunk c ^ (r % 8)". */
static size_t landing(int r, int j, int row_bytes, int span) {
    size_t off = (size_t)r * row_bytes + (size_t)j * 2;
    if (!span) return off;
    size_t chunk = off % 128 / 16, line = off / 128, mask = (size_t)span / 16 - 1;
    return off / 128 * 128 + ((chunk ^ (line & mask)) * 16) + off % 16;
}

static void check_box(CUtensorMapSwizzle swz, int span, int box_cols, int box_rows, int x, int y) {
    const int rows = 40, cols = 72, ld = 80; /* pitch past the width: padding must never be read */
    uint16_t *h = (uint16_t *)host_malloc((size_t)rows * ld * 2);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < ld; c++) h[(size_t)r * ld + c] = c < cols ? gval(r, c) : 0xEEEE;
    uint16_t *g = (uint16_t *)gpu_malloc((size_t)rows * ld * 2);
    gpu_upload(g, h, (size_t)rows * ld * 2);
    CUtensorMap map = make_map(g, rows, cols, ld, box_rows, box_cols, swz);
    int bytes = box_rows * box_cols * 2;
    uint8_t *d = (uint8_t *)gpu_malloc((size_t)bytes);
    cudaFuncSetAttribute(tma_box_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes + 1024);
    tma_box_kernel<<<1, 128, (size_t)bytes + 1024>>>(map, x, y, bytes, d);
    gpu_sync_check("tma_box_kernel");
    uint8_t *got = (uint8_t *)host_malloc((size_t)bytes);
    gpu_download(got, d, (size_t)bytes);
    int wrong = 0;
    for (int r = 0; r < box_rows; r++)
        for (int j = 0; j < box_cols; j++) {
            int gr = y + r, gc = x + j;
            uint16_t want = (gr >= 0 && gr < rows && gc >= 0 && gc < cols) ? gval(gr, gc) : 0, have;
            memcpy(&have, got + landing(r, j, box_cols * 2, span), 2);
            if (have != want && wrong++ < 5)
                print_message("swizzle %d B, box at (%d, %d): element (%d, %d) is 0x%04x, expected 0x%04x\n", span,
                              x, y, r, j, have, want);
        }
    assert_int_equal(wrong, 0);
    gpu_free(d);
    gpu_free(g);
    host_free(h);
    host_free(got);
}

static void test_tma_swizzle_128(void **state) {
    (void)state;
    require_hopper();
    check_box(CU_TENSOR_MAP_SWIZZLE_128B, 128, 64, 16, 0, 0);    /* inside */
    check_box(CU_TENSOR_MAP_SWIZZLE_128B, 128, 64, 16, 40, 30);  /* past the right and bottom edges */
    check_box(CU_TENSOR_MAP_SWIZZLE_128B, 128, 64, 16, -16, -3); /* before the left and top edges */
}

static void test_tma_swizzle_64_32_none(void **state) {
    (void)state;
    require_hopper();
    check_box(CU_TENSOR_MAP_SWIZZLE_64B, 64, 32, 16, 8, 5);
    check_box(CU_TENSOR_MAP_SWIZZLE_32B, 32, 16, 16, 48, 30);
    check_box(CU_TENSOR_MAP_SWIZZLE_NONE, 0, 24, 10, 56, -2);
}

/* ---- mbarrier --------------------------------------------------------------------- */

/* Three phases of 64 arrivals. Waiting for parity 1 on a fresh barrier
 * returns at once; after phase k completes, waiting for k's parity returns. */
__global__ void mbar_phase_kernel(int *out) {
#if defined(HOPPER_DEVICE)
    __shared__ __align__(8) uint64_t bar;
    __shared__ int arrived[3];
    if (threadIdx.x == 0) {
        mbar_init(&bar, 64);
        mbar_fence_init();
        arrived[0] = arrived[1] = arrived[2] = 0;
    }
    __syncthreads();
    mbar_wait(&bar, 1); /* the phase "before" phase 0 counts as complete */
    for (int p = 0; p < 3; p++) {
        atomicAdd(&arrived[p], 1);
        mbar_arrive(&bar);
        mbar_wait(&bar, p & 1);
        /* Everyone arrived before anyone got past the wait. */
        if (atomicAdd(&arrived[p], 0) != 64) out[1] = 1;
    }
    __syncthreads();
    if (threadIdx.x == 0) out[0] = arrived[0] + arrived[1] + arrived[2];
#else
    (void)out;
#endif
}

static void test_mbarrier_phases(void **state) {
    (void)state;
    require_hopper();
    int *d = (int *)gpu_malloc(2 * sizeof(int)), h[2] = {0, 0};
    gpu_upload(d, h, sizeof h);
    mbar_phase_kernel<<<1, 64>>>(d);
    gpu_sync_check("mbar_phase_kernel");
    gpu_download(h, d, sizeof h);
    assert_int_equal(h[0], 3 * 64);
    assert_int_equal(h[1], 0);
    gpu_free(d);
}

/* ---- wgmma ------------------------------------------------------------------------ */

/* D (64 x N) = A (64 x 64) B (64 x N) (+ D0 when accumulate) as lab 04
 * stages it: A in one TMA box of 64 rows x 64 K (K-major, 128-byte
 * swizzle), B in N / 64 boxes of 64 k-rows x 64 columns (N-major), then
 * four steps of 16 K each: m64n128k16 (N = 128) or, with wide set,
 * m64n256k16 (N = 256, as step C issues it). Thread t writes its
 * accumulators by the documented layout, so a layout mistake shows as
 * misplaced values. With pipelined set the four steps are two groups, the
 * second issued on the same accumulators while the first is in flight,
 * then wgmma_wait_group(1) and (0): the order of step C's consumer loop. */
static __device__ __forceinline__ void wgmma_body(const CUtensorMap *ta, const CUtensorMap *tb, int accumulate,
                                                  const int pipelined, const int wide, const float *d0, float *out) {
#if defined(HOPPER_DEVICE)
    __shared__ __align__(8) uint64_t bar;
    const int N = wide ? 256 : 128, boxes = N / 64;
    uint8_t *As = aligned_smem(), *Bs = As + 64 * 64 * 2;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, (1 + boxes) * 8192);
        tma_load_2d(As, ta, 0, 0, &bar);
        for (int b = 0; b < boxes; b++) tma_load_2d(Bs + b * 8192, tb, 64 * b, 0, &bar);
    }
    mbar_wait(&bar, 0);
    int t = threadIdx.x, w = t / 32, l = t % 32;
    float d[128];
    for (int j = 0; j < N / 8; j++)
        for (int e = 0; e < 4; e++)
            d[4 * j + e] = d0[(16 * w + l / 4 + 8 * (e / 2)) * N + 8 * j + 2 * (l % 4) + e % 2];
    wgmma_fence();
    for (int kk = 0; kk < 4; kk++) {
        /* A: 16 K = 32 bytes further along each swizzled row; stride 1024
         * between groups of 8 rows. B: 16 k-rows = 2048 bytes further; lead
         * 8192 to the next 64 columns, stride 1024 between groups of 8 k-rows. */
        uint64_t da = ((uint64_t)(hopper_smem_addr(As + kk * 32) >> 4)) | ((uint64_t)(16 >> 4) << 16) |
                      ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
        uint64_t db = ((uint64_t)(hopper_smem_addr(Bs + kk * 2048) >> 4)) | ((uint64_t)(8192 >> 4) << 16) |
                      ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
        if (wide) wgmma_m64n256k16(d, da, db, accumulate || kk > 0);
        else wgmma_m64n128k16(d, da, db, accumulate || kk > 0);
        if (pipelined && kk == 1) {
            wgmma_commit();
            wgmma_fence(); /* as step C does before each k-tile's group */
        }
    }
    wgmma_commit();
    if (pipelined) wgmma_wait_group(1); /* the first group */
    wgmma_wait_all();
    for (int j = 0; j < N / 8; j++)
        for (int e = 0; e < 4; e++) out[(16 * w + l / 4 + 8 * (e / 2)) * N + 8 * j + 2 * (l % 4) + e % 2] = d[4 * j + e];
#else
    (void)ta; (void)tb; (void)accumulate; (void)pipelined; (void)wide; (void)d0; (void)out;
#endif
}

/* One kernel per order, so that each compiles to straight-line code, as in
 * step C (ptxas then needs no fence or wait of its own). */
__global__ void wgmma_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                             int accumulate, const float *d0, float *out) {
    wgmma_body(&ta, &tb, accumulate, 0, 0, d0, out);
}

__global__ void wgmma_kernel_pipelined(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                                       int accumulate, const float *d0, float *out) {
    wgmma_body(&ta, &tb, accumulate, 1, 0, d0, out);
}

__global__ void wgmma_kernel_wide(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                                  int accumulate, const float *d0, float *out) {
    wgmma_body(&ta, &tb, accumulate, 0, 1, d0, out);
}

static void run_wgmma(int accumulate, int pipelined, int wide) {
    const int M = 64, N = wide ? 256 : 128, K = 64;
    uint16_t *A = (uint16_t *)host_malloc((size_t)M * K * 2), *B = (uint16_t *)host_malloc((size_t)K * N * 2);
    float *d0 = (float *)host_malloc((size_t)M * N * 4), *got = (float *)host_malloc((size_t)M * N * 4);
    /* Small integers, each distinct in its row and column pattern: every
     * product and partial sum is an exact fp32 integer. */
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) A[i * K + k] = bf16_from_float((float)((i * 7 + k * 3) % 11 - 5));
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) B[k * N + j] = bf16_from_float((float)((k * 5 + j * 13) % 9 - 4));
    for (int i = 0; i < M * N; i++) d0[i] = (float)(i % 17 - 8);
    uint16_t *dA = (uint16_t *)gpu_malloc((size_t)M * K * 2), *dB = (uint16_t *)gpu_malloc((size_t)K * N * 2);
    float *dd0 = (float *)gpu_malloc((size_t)M * N * 4), *dout = (float *)gpu_malloc((size_t)M * N * 4);
    gpu_upload(dA, A, (size_t)M * K * 2);
    gpu_upload(dB, B, (size_t)K * N * 2);
    gpu_upload(dd0, d0, (size_t)M * N * 4);
    CUtensorMap ta = make_map(dA, M, K, K, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
    CUtensorMap tb = make_map(dB, K, N, N, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
    size_t smem = (1 + N / 64) * 8192 + 1024;
    if (wide) {
        cudaFuncSetAttribute(wgmma_kernel_wide, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        wgmma_kernel_wide<<<1, 128, smem>>>(ta, tb, accumulate, dd0, dout);
    } else if (pipelined) {
        cudaFuncSetAttribute(wgmma_kernel_pipelined, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        wgmma_kernel_pipelined<<<1, 128, smem>>>(ta, tb, accumulate, dd0, dout);
    } else {
        cudaFuncSetAttribute(wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        wgmma_kernel<<<1, 128, smem>>>(ta, tb, accumulate, dd0, dout);
    }
    gpu_sync_check("wgmma_kernel");
    gpu_download(got, dout, (size_t)M * N * 4);
    int wrong = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = accumulate ? d0[i * N + j] : 0.0;
            for (int k = 0; k < K; k++) s += (double)float_from_bf16(A[i * K + k]) * float_from_bf16(B[k * N + j]);
            if (got[i * N + j] != (float)s && wrong++ < 5)
                print_message("D[%d][%d] = %g, expected %g\n", i, j, got[i * N + j], s);
        }
    assert_int_equal(wrong, 0);
    gpu_free(dA);
    gpu_free(dB);
    gpu_free(dd0);
    gpu_free(dout);
    host_free(A);
    host_free(B);
    host_free(d0);
    host_free(got);
}

static void test_wgmma_product(void **state) {
    (void)state;
    require_hopper();
    run_wgmma(0, 0, 0);
}

static void test_wgmma_accumulates(void **state) {
    (void)state;
    require_hopper();
    run_wgmma(1, 0, 0);
}

static void test_wgmma_two_groups_in_flight(void **state) {
    (void)state;
    require_hopper();
    run_wgmma(1, 1, 0);
}

/* Step C's instruction: all 256 columns from four B boxes in one wgmma. */
static void test_wgmma_m64n256(void **state) {
    (void)state;
    require_hopper();
    run_wgmma(1, 0, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tma_swizzle_128),  cmocka_unit_test(test_tma_swizzle_64_32_none),
        cmocka_unit_test(test_mbarrier_phases),  cmocka_unit_test(test_wgmma_product),
        cmocka_unit_test(test_wgmma_accumulates), cmocka_unit_test(test_wgmma_two_groups_in_flight),
        cmocka_unit_test(test_wgmma_m64n256),
    };
    return cmocka_run_group_tests_name("hopper", tests, NULL, NULL);
}
