/*
 * The emulator's runtime API from plain C11, built with the project's strict
 * flags: cuda_runtime_api.h must stay C-compatible, with the toolkit's names
 * and error values, so host files build unchanged for TARGET=emu. Also
 * checks that the emulator's fp16/bf16 conversions agree bit for bit with
 * common/half.h, the course's C conversions.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cuda_runtime_api.h"
#include "simt_half_conv.h"
#include "half.h"

static void test_error_values_match_toolkit(void **state)
{
    (void)state;
    assert_int_equal(cudaSuccess, 0);
    assert_int_equal(cudaErrorInvalidValue, 1);
    assert_int_equal(cudaErrorMemoryAllocation, 2);
    assert_int_equal(cudaErrorInvalidConfiguration, 9);
    assert_int_equal(cudaErrorNoDevice, 100);
    assert_int_equal(cudaErrorInvalidDevice, 101);
    assert_int_equal(cudaErrorLaunchOutOfResources, 701);
    assert_int_equal(cudaErrorAssert, 710);
    assert_int_equal(cudaErrorLaunchFailure, 719);
    assert_string_equal(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
    assert_string_equal(cudaGetErrorName(cudaErrorInvalidDevice), "cudaErrorInvalidDevice");
}

static void test_device_and_memory(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    assert_int_equal(n, 1);
    struct cudaDeviceProp p;
    assert_int_equal(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    assert_int_equal(p.warpSize, 32);
    assert_true(p.totalGlobalMem > 0);
    assert_int_equal(cudaSetDevice(2), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaSuccess);

    float *d = NULL, h[100];
    assert_int_equal(cudaMalloc((void **)&d, sizeof(h)), cudaSuccess);
    assert_true(((uintptr_t)d & 255) == 0);
    assert_int_equal(cudaMemset(d, 0, sizeof(h)), cudaSuccess);
    for (int i = 0; i < 100; i++) h[i] = (float)i;
    assert_int_equal(cudaMemcpy(d + 1, h, 99 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost), cudaSuccess);
    assert_true(h[0] == 0.0f && h[99] == 98.0f);
    assert_int_equal(cudaMemcpy(h, d, 4, (enum cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
    cudaGetLastError();
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
}

/* Where a pointer points, as CUDA says it: device memory has no host
 * address, pinned and managed memory have both, malloc's is unregistered;
 * stream-ordered allocation, stream priorities and cache hints are there. */
static void test_pointer_attributes(void **state)
{
    (void)state;
    void *d = NULL, *h = NULL, *m = NULL, *a = NULL, *plain = malloc(64);
    assert_int_equal(cudaMalloc(&d, 64), cudaSuccess);
    assert_int_equal(cudaMallocHost(&h, 64), cudaSuccess);
    assert_int_equal(cudaMallocManaged(&m, 64, cudaMemAttachGlobal), cudaSuccess);
    assert_int_equal(cudaMallocAsync(&a, 64, 0), cudaSuccess);
    void *at[5] = {(char *)d + 10, h, m, a, plain};
    const enum cudaMemoryType want[5] = {cudaMemoryTypeDevice, cudaMemoryTypeHost, cudaMemoryTypeManaged,
                                         cudaMemoryTypeDevice, cudaMemoryTypeUnregistered};
    for (int k = 0; k < 5; k++) {
        struct cudaPointerAttributes pa;
        assert_int_equal(cudaPointerGetAttributes(&pa, at[k]), cudaSuccess);
        assert_int_equal(pa.type, want[k]);
        assert_ptr_equal(pa.devicePointer, want[k] == cudaMemoryTypeUnregistered ? NULL : at[k]);
        assert_ptr_equal(pa.hostPointer, want[k] == cudaMemoryTypeDevice ? NULL : at[k]);
    }
    assert_int_equal(cudaPointerGetAttributes(NULL, d), cudaErrorInvalidValue);
    cudaGetLastError();
    int least = 1, greatest = 1;
    cudaStream_t s = NULL;
    assert_int_equal(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
    assert_true(least == 0 && greatest == -5);
    assert_int_equal(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    assert_int_equal(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared), cudaSuccess);
    assert_int_equal(cudaDeviceSetCacheConfig((enum cudaFuncCache)9), cudaErrorInvalidValue);
    cudaGetLastError();
    assert_int_equal(cudaFreeAsync(a, 0), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaFreeHost(h), cudaSuccess);
    assert_int_equal(cudaFree(m), cudaSuccess);
    free(plain);
}

static void test_events(void **state)
{
    (void)state;
    cudaEvent_t a, b;
    assert_int_equal(cudaEventCreate(&a), cudaSuccess);
    assert_int_equal(cudaEventCreate(&b), cudaSuccess);
    assert_int_equal(cudaEventRecord(a, 0), cudaSuccess);
    volatile double x = 0;
    for (int i = 0; i < 2000000; i++) x += sqrt((double)i);
    assert_int_equal(cudaEventRecord(b, 0), cudaSuccess);
    float ms = 0;
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    assert_true(ms > 0.0f);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
}

/* cudaGetLastError returns the last error and resets it; cudaPeekAtLastError
 * returns it and leaves it; a call that succeeds does not reset it (CUDA
 * Runtime API, Error Handling). */
static void test_last_error_get_and_peek(void **state)
{
    (void)state;
    int dev = -1;
    cudaGetLastError();
    assert_int_equal(cudaSetDevice(3), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
}

/* The toolkit's descriptions of the errors a course program meets most, and
 * "unrecognized error code" from both functions for a code that is not one
 * (CUDA Runtime API, cudaGetErrorName and cudaGetErrorString). */
static void test_error_strings(void **state)
{
    (void)state;
    static const struct {
        cudaError_t e;
        const char *name, *text;
    } want[] = {
        {cudaSuccess, "cudaSuccess", "no error"},
        {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
        {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
        {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
        {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
        {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
        {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
        {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
        {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
        {cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
        {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_string_equal(cudaGetErrorName(want[i].e), want[i].name);
        assert_string_equal(cudaGetErrorString(want[i].e), want[i].text);
    }
    assert_int_equal(cudaErrorIllegalAddress, 700);
    assert_int_equal(cudaErrorMisalignedAddress, 716);
    assert_int_equal(cudaErrorInvalidMemcpyDirection, 21);
    assert_int_equal(cudaErrorInvalidResourceHandle, 400);
    assert_string_equal(cudaGetErrorString((cudaError_t)12345), "unrecognized error code");
    assert_string_equal(cudaGetErrorName((cudaError_t)12345), "unrecognized error code");
}

/* Copies of every kind, cudaMemcpyDefault included, move all count bytes;
 * a kind outside the enum is refused; cudaMemset sets each byte to value
 * converted to unsigned char; a 2-D copy whose rows are wider than either
 * pitch is refused (CUDA Runtime API, Memory Management). */
static void test_memcpy_kinds_and_memset_bytes(void **state)
{
    (void)state;
    unsigned char h[256], back[256], *a = NULL, *b = NULL;
    for (int i = 0; i < 256; i++) h[i] = (unsigned char)(i * 7 + 1);
    assert_int_equal(cudaMalloc((void **)&a, sizeof(h)), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&b, sizeof(h)), cudaSuccess);
    assert_int_equal(cudaMemcpy(a, h, sizeof(h), cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(b, a, sizeof(h), cudaMemcpyDeviceToDevice), cudaSuccess);
    memset(back, 0, sizeof(back));
    assert_int_equal(cudaMemcpy(back, b, sizeof(h), cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(back, h, sizeof(h));
    assert_int_equal(cudaMemset(b, 0, sizeof(h)), cudaSuccess);
    assert_int_equal(cudaMemcpy(b, a, sizeof(h), cudaMemcpyDefault), cudaSuccess);
    memset(back, 0, sizeof(back));
    assert_int_equal(cudaMemcpy(back, b, sizeof(h), cudaMemcpyDefault), cudaSuccess);
    assert_memory_equal(back, h, sizeof(h));
    assert_int_equal(cudaMemcpy(back, b, 4, (enum cudaMemcpyKind)-1), cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaMemcpy(back, b, 4, (enum cudaMemcpyKind)5), cudaErrorInvalidMemcpyDirection);
    cudaGetLastError();

    assert_int_equal(cudaMemset(a, 0xa5, 100), cudaSuccess);
    assert_int_equal(cudaMemset(a + 100, 0x1ff, 156), cudaSuccess); /* only the low byte, 0xff */
    assert_int_equal(cudaMemcpy(back, a, sizeof(back), cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 256; i++) assert_int_equal(back[i], i < 100 ? 0xa5 : 0xff);

    assert_int_equal(cudaMemcpy2D(a, 64, h, 16, 32, 4, cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);
    assert_int_equal(cudaMemcpy2D(a, 16, h, 64, 32, 4, cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidPitchValue);
    assert_int_equal(cudaFree(a), cudaSuccess);
    assert_int_equal(cudaFree(b), cudaSuccess);
}

/* cudaEventElapsedTime gives the milliseconds from start to end: at least
 * the host's own measure of the work between the two records and not much
 * more. It refuses events created with cudaEventDisableTiming and an end
 * event never recorded (cudaErrorInvalidResourceHandle). */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void test_event_timing(void **state)
{
    (void)state;
    cudaEvent_t a, b, c, off;
    assert_int_equal(cudaEventCreate(&a), cudaSuccess);
    assert_int_equal(cudaEventCreate(&b), cudaSuccess);
    assert_int_equal(cudaEventCreate(&c), cudaSuccess);
    assert_int_equal(cudaEventCreateWithFlags(&off, cudaEventDisableTiming), cudaSuccess);
    assert_int_equal(cudaEventRecord(a, 0), cudaSuccess);
    double t0 = now_ms();
    volatile double x = 0;
    while (now_ms() - t0 < 20.0) x += 1.0;
    double t1 = now_ms();
    assert_int_equal(cudaEventRecord(b, 0), cudaSuccess);
    float ms = -1.0f;
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    assert_true(ms >= (float)(t1 - t0) * 0.999f);
    assert_true(ms < (float)(t1 - t0) + 1000.0f);
    assert_int_equal(cudaEventElapsedTime(&ms, a, c), cudaErrorInvalidResourceHandle); /* c never recorded */
    assert_int_equal(cudaEventRecord(off, 0), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, off), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaEventElapsedTime(&ms, off, b), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaEventDestroy(c);
    cudaEventDestroy(off);
}

static void test_vector_types(void **state)
{
    (void)state;
    float4 f = make_float4(1, 2, 3, 4);
    int2 i = make_int2(5, 6);
    assert_int_equal(sizeof(float4), 16);
    assert_int_equal(_Alignof(float4), 16);
    assert_int_equal(_Alignof(int2), 8);
    assert_int_equal(sizeof(dim3), 12);
    assert_true(f.w == 4.0f && i.y == 6);
}

/* Conversions: every half and bf16 value, and a stride through all floats
 * (plus the neighbourhood of every rounding tie), against common/half.h. */
static void test_conversions_agree_with_common_half(void **state)
{
    (void)state;
    for (uint32_t u = 0; u < 0x10000u; u++) {
        float a = simt_half_bits_to_float((uint16_t)u), b = float_from_fp16((uint16_t)u);
        assert_memory_equal(&a, &b, 4);
        a = simt_bf16_bits_to_float((uint16_t)u);
        b = float_from_bf16((uint16_t)u);
        if (a == a) assert_memory_equal(&a, &b, 4);
    }
    for (uint64_t v = 0; v < 0x100000000ull; v += 4099) {
        for (int d = -1; d <= 1; d++) {
            uint32_t u = (uint32_t)v;
            uint32_t tie = (u & 0xffff0000u) | 0x8000u; /* a bf16 tie near u */
            uint32_t cases[2] = {u, tie + (uint32_t)d};
            for (int c = 0; c < 2; c++) {
                float f;
                memcpy(&f, &cases[c], 4);
                assert_int_equal(simt_float_to_bf16_bits(f), bf16_from_float(f));
                assert_int_equal(simt_float_to_half_bits(f), fp16_from_float(f));
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_values_match_toolkit),
        cmocka_unit_test(test_device_and_memory),
        cmocka_unit_test(test_pointer_attributes),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_last_error_get_and_peek),
        cmocka_unit_test(test_error_strings),
        cmocka_unit_test(test_memcpy_kinds_and_memset_bytes),
        cmocka_unit_test(test_event_timing),
        cmocka_unit_test(test_vector_types),
        cmocka_unit_test(test_conversions_agree_with_common_half),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
