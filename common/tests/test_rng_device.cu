/*
 * The RNG gives the same numbers in a kernel as on the CPU: element i of a
 * stream is a pure function of (seed, stream, i), so a kernel with one thread
 * per element fills exactly what rng_fill_uniform() fills. Built for the
 * emulator (always) and for a real GPU (skipped when none is present).
 */
#include <cuda_runtime.h>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h> /* cmocka 1.1 has no extern "C" of its own */
}
#include <string.h>

#include "gpu.h"
#include "memory.h"
#include "rng.h"

__global__ void fill_uniform_kernel(float *x, int n, unsigned long long seed,
                                    unsigned long long stream, unsigned long long start) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = rng_uniform_at(seed, stream, start + (unsigned long long)i);
}

static void test_kernel_matches_cpu(void **state) {
    (void)state;
    if (!gpu_available()) {
        print_message("no GPU: skipped (the emulator build runs this test)\n");
        skip();
    }
    const int n = 1000;
    rng_t r;
    rng_init(&r, 99);
    rng_t child = rng_split(&r, 3); /* a per-rank stream, as the distributed labs use */
    rng_u32(&child);                /* start at index 1, mid-block */
    float *want = (float *)host_malloc(n * sizeof(float));
    float *got = (float *)host_malloc(n * sizeof(float));
    unsigned long long start = child.counter;
    rng_fill_uniform(&child, want, n, 0.0f, 1.0f);

    float *d = (float *)gpu_malloc(n * sizeof(float));
    fill_uniform_kernel<<<(n + 127) / 128, 128>>>(d, n, child.seed, child.stream, start);
    gpu_sync_check("fill_uniform_kernel");
    gpu_download(got, d, n * sizeof(float));
    assert_memory_equal(got, want, n * sizeof(float)); /* bit for bit */
    gpu_free(d);
    host_free(want);
    host_free(got);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_matches_cpu),
    };
    return cmocka_run_group_tests_name("rng_device", tests, NULL, NULL);
}
