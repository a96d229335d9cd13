/*
 * Our bf16/fp16 conversions against the CUDA toolkit's own host conversions,
 * bit for bit. Runs on the CPU (the toolkit's headers carry host code paths),
 * so no GPU is needed.
 *
 * Every 16-bit pattern is checked for widening. For narrowing, every value of
 * the top 16 bits of a float is combined with the low-bit patterns where
 * rounding decides (just below, at and above each halfway point, for bf16's
 * 16 dropped bits and fp16's 13, and the subnormal shifts) plus random ones:
 * about 10 million floats per format. COURSE_EXHAUSTIVE=1 checks all 2^32.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h> /* cmocka 1.1 has no extern "C" of its own */
}
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "half.h"
#include "rng.h"

static uint32_t bits_of(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
static float float_of(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

/* The _raw structs are the toolkit's way in and out of the bit patterns. */
static uint16_t cuda_bf16(float f) { __nv_bfloat16_raw r = __float2bfloat16_rn(f); return r.x; }
static uint16_t cuda_fp16(float f) { __half_raw r = __float2half_rn(f); return r.x; }
static float cuda_from_bf16(uint16_t u) {
    __nv_bfloat16_raw r;
    r.x = u;
    return __bfloat162float(__nv_bfloat16(r));
}
static float cuda_from_fp16(uint16_t u) {
    __half_raw r;
    r.x = u;
    return __half2float(__half(r));
}

static void test_widening_all_patterns(void **state) {
    (void)state;
    for (uint32_t x = 0; x < 0x10000; x++) {
        uint16_t h = (uint16_t)x;
        if (bits_of(float_from_bf16(h)) != bits_of(cuda_from_bf16(h)))
            fail_msg("bf16 0x%04x: ours 0x%08x, CUDA 0x%08x", h, bits_of(float_from_bf16(h)),
                     bits_of(cuda_from_bf16(h)));
        if (bits_of(float_from_fp16(h)) != bits_of(cuda_from_fp16(h)))
            fail_msg("fp16 0x%04x: ours 0x%08x, CUDA 0x%08x", h, bits_of(float_from_fp16(h)),
                     bits_of(cuda_from_fp16(h)));
    }
}

static void check_one(uint32_t u, long *checked) {
    float f = float_of(u);
    uint16_t a = bf16_from_float(f), b = cuda_bf16(f);
    if (a != b) fail_msg("bf16(0x%08x): ours 0x%04x, CUDA 0x%04x", u, a, b);
    uint16_t c = fp16_from_float(f), d = cuda_fp16(f);
    if (c != d) fail_msg("fp16(0x%08x): ours 0x%04x, CUDA 0x%04x", u, c, d);
    (*checked)++;
}

static void test_narrowing_many_patterns(void **state) {
    (void)state;
    long checked = 0;
    if (getenv("COURSE_EXHAUSTIVE")) {
        uint32_t u = 0;
        do check_one(u, &checked); while (++u != 0);
        return;
    }
    /* Low 16 bits around bf16's halfway point (0x8000), fp16's (0x1000 in the
     * low 13), the ends, and the subnormal fp16 shift boundaries. */
    static const uint32_t low[] = {
        0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x2001, 0x3000, 0x4000,
        0x7fff, 0x8000, 0x8001, 0x9000, 0xa000, 0xbfff, 0xc000, 0xe000, 0xf000, 0xffff,
        0x0800, 0x0400, 0x0200, 0x0100, 0x0080, 0x0040, 0x0020, 0x0010, 0x0008, 0x0004,
        0x0002, 0x0c00, 0x1800, 0x3800, 0x5000, 0x6000, 0x7000, 0x7800, 0x8800, 0xf800};
    rng_t r;
    rng_init(&r, 2024);
    for (uint32_t hi = 0; hi < 0x10000; hi++) {
        for (size_t k = 0; k < sizeof low / sizeof *low; k++) check_one((hi << 16) | low[k], &checked);
        for (int k = 0; k < 110; k++) check_one((hi << 16) | (rng_u32(&r) & 0xffffu), &checked);
    }
    assert_true(checked > 9000000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widening_all_patterns),
        cmocka_unit_test(test_narrowing_many_patterns),
    };
    return cmocka_run_group_tests_name("half_vs_cuda_host", tests, NULL, NULL);
}
