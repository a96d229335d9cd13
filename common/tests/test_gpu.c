/*
 * gpu.c: device detection, memory round trips and event timing.
 *
 * Built against the real CUDA runtime (and, with the emulator, against its
 * runtime). On a machine without an NVIDIA driver gpu_available() must say
 * no and leave no pending CUDA error behind; the device tests are skipped
 * there, visibly, rather than passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

#ifndef COURSE_SIMT
static int nvidia_driver_present(void) { return access("/dev/nvidiactl", F_OK) == 0; }
#endif

static void test_detection_is_consistent(void **state) {
    (void)state;
    int a = gpu_available();
    assert_int_equal(gpu_available(), a);
    char name[256];
    gpu_device_name(name, sizeof name);
#ifndef COURSE_SIMT
    if (!nvidia_driver_present()) {
        assert_int_equal(a, 0); /* no driver: must report no GPU */
        assert_string_equal(name, "none");
    }
#endif
    if (a) {
        assert_string_not_equal(name, "none");
        /* A later checked call must not see a stale error from detection. */
        assert_int_equal(cudaGetLastError(), cudaSuccess);
    }
}

static void test_memory_round_trip(void **state) {
    (void)state;
    if (!gpu_available()) skip();
    enum { N = 1000 };
    float h[N], back[N];
    for (int i = 0; i < N; i++) h[i] = (float)i * 0.5f;
    float *d = gpu_malloc(N * sizeof(float));
    gpu_upload(d, h, sizeof h);
    memset(back, 0, sizeof back);
    gpu_download(back, d, sizeof back);
    assert_memory_equal(h, back, sizeof h);
    /* Device to device: the second buffer gets the first's bytes. */
    float *d2 = gpu_malloc(N * sizeof(float));
    gpu_copy(d2, d, sizeof h);
    gpu_memset(d, 0, sizeof h);
    gpu_download(back, d, sizeof back);
    for (int i = 0; i < N; i++) assert_true(back[i] == 0.0f);
    gpu_download(back, d2, sizeof back);
    assert_memory_equal(h, back, sizeof h);
    gpu_free(d);
    gpu_free(d2);
    gpu_free(NULL);
}

/* gpu_upload_bf16_rounded: the host array is rounded in place (nearest even)
 * and the device holds exactly the bits of those values. */
static void test_upload_bf16_rounded(void **state) {
    (void)state;
    if (!gpu_available()) skip();
    /* 1 + 2^-8 is a tie that rounds down to even (1.0), 1 + 3 * 2^-8 one that
     * rounds up (1 + 2^-6); 1 + 2^-7 is exact; the last two need no rounding. */
    float h[5] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-7f, -2.5f, 0.0f};
    const float want[5] = {1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f, -2.5f, 0.0f};
    const uint16_t bits[5] = {0x3f80, 0x3f82, 0x3f81, 0xc020, 0x0000};
    uint16_t *d = gpu_upload_bf16_rounded(h, 5), back[5];
    gpu_download(back, d, sizeof back);
    for (int i = 0; i < 5; i++) {
        assert_true(h[i] == want[i]);
        assert_int_equal(back[i], bits[i]);
    }
    gpu_free(d);
}

/* gpu_emu_too_slow: quiet under its limit, and the estimate in the unit a
 * person reads at a glance above it (GPU_EMU_FLOPS is 0.5 GFLOP/s). */
static void test_emu_too_slow(void **state) {
    (void)state;
    char buf[48] = "untouched";
    assert_int_equal(gpu_emu_too_slow(0.5e9 * 60, 60, buf, sizeof buf), 0); /* exactly the limit: fine */
    assert_string_equal(buf, "untouched");
    assert_int_equal(gpu_emu_too_slow(0.5e9 * 61, 60, buf, sizeof buf), 1);
    assert_string_equal(buf, "about a minute");
    assert_int_equal(gpu_emu_too_slow(0.5e9 * 40 * 60, 60, buf, sizeof buf), 1);
    assert_string_equal(buf, "about 40 minutes");
    assert_int_equal(gpu_emu_too_slow(0.5e9 * 21 * 3600, 60, buf, sizeof buf), 1);
    assert_string_equal(buf, "about 21 hours");
    assert_int_equal(gpu_emu_too_slow(0.5e9 * 5 * 86400, 60, buf, sizeof buf), 1);
    assert_string_equal(buf, "about 5 days");
    assert_int_equal(gpu_emu_too_slow(0.0 / 0.0, 60, buf, sizeof buf), 0); /* NaN: nothing to say */
}

/* A refused request leaves an error that is not sticky: gpu_sticky_error()
 * does not report it, and clears it, so the next checked call is clean. */
static void test_sticky_error_ignores_refusals(void **state) {
    (void)state;
    if (!gpu_available()) skip();
    char err[160];
    assert_string_equal(gpu_sticky_error(err, sizeof err), "no error");
    void *p = NULL;
    assert_int_not_equal(cudaMalloc(&p, (size_t)1 << 62), cudaSuccess); /* 4 EiB: refused */
    assert_int_not_equal(cudaPeekAtLastError(), cudaSuccess);
    assert_string_equal(gpu_sticky_error(err, sizeof err), "no error");
    assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
}

/* Memory in use is positive, and on a real GPU a 256 MB allocation shows in it. */
static void test_memory_used(void **state) {
    (void)state;
    if (!gpu_available()) skip();
    const size_t before = gpu_memory_used();
    assert_true(before > 0);
    char name[128];
    if (strstr(gpu_device_name(name, sizeof name), "SIMT")) return; /* the host's figure moves on its own */
    void *d = gpu_malloc(256u << 20);
    const size_t after = gpu_memory_used();
    gpu_free(d);
    /* The allocator rounds up; other processes may allocate meanwhile: at least the 256 MB. */
    if (!(after >= before + (256u << 20))) fail_msg("in use %zu before, %zu after a 256 MB allocation", before, after);
}

static void test_event_timer(void **state) {
    (void)state;
    if (!gpu_available()) skip();
    gpu_timer_t t;
    gpu_timer_init(&t, NULL);
    gpu_timer_start(&t);
    float *d = gpu_malloc(1 << 20);
    gpu_memset(d, 1, 1 << 20);
    float ms = gpu_timer_stop_ms(&t);
    assert_true(ms >= 0.0f && ms < 10000.0f);
    gpu_free(d);
    gpu_timer_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detection_is_consistent),
        cmocka_unit_test(test_memory_round_trip),
        cmocka_unit_test(test_upload_bf16_rounded),
        cmocka_unit_test(test_emu_too_slow),
        cmocka_unit_test(test_sticky_error_ignores_refusals),
        cmocka_unit_test(test_memory_used),
        cmocka_unit_test(test_event_timer),
    };
    return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
