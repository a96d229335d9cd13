/*
 * Lab 00 checks: vector_add against the CPU on awkward sizes.
 *
 * One correctly rounded fp32 addition gives the same bits on any IEEE
 * machine, so the result must match a[i] + b[i] exactly: tolerance 0.
 * Each of a, b and c sits between guard zones (labguard.h): a kernel that
 * forgets `if (i < n)` writes into c's, and fails here on a GPU too; one
 * that loads a[i] or b[i] before its test reads theirs, which the emulator
 * stops at the load.
 */
#include "labcheck.h"
#include "labguard.h"
#include "memory.h"
#include "rng.h"
#include "vector_add.h"

#include <string.h>

/* What c starts as, so that an element the kernel never wrote shows. */
static const float SENTINEL = -12345.0f;

/* Runs vector_add on n random elements and compares with the CPU. */
static void check_size(int n, uint64_t seed) {
    size_t bytes = (size_t)n * sizeof(float);
    float *a = host_malloc(bytes), *b = host_malloc(bytes), *c = host_malloc(bytes);
    rng_t r;
    rng_init(&r, seed);
    rng_fill_uniform(&r, a, (size_t)n, -1.0f, 1.0f);
    rng_fill_uniform(&r, b, (size_t)n, -1000.0f, 1000.0f);
    for (int i = 0; i < n; i++) c[i] = SENTINEL;

    lab_unwatch_all_guards(); /* zones an earlier failed case left behind */
    float *da = lab_upload_guarded(a, (size_t)n, sizeof(float), "a (vector_add)");
    float *db = lab_upload_guarded(b, (size_t)n, sizeof(float), "b (vector_add)");
    float *dc = lab_upload_guarded(c, (size_t)n, sizeof(float), "c (vector_add)");

    LAB_REQUIRE_OK(vector_add(da, db, dc, n), "vector_add");
    LAB_REQUIRE_FINISHED("vector_add");
    gpu_download(c, dc, bytes);

    double *want = host_malloc((size_t)n * sizeof(double) + 1);
    for (int i = 0; i < n; i++) want[i] = (double)(a[i] + b[i]); /* the fp32 sum, exactly */
    cmp_report_t rep;
    char what[64];
    snprintf(what, sizeof what, "c = a + b, n = %d", n);
    /* Exact: one rounding on both sides (see the file comment). */
    if (!compare_close(c, want, (size_t)n, 0.0, 0.0, &rep)) {
        char line[640];
        cmp_report_format(line, sizeof line, what, &rep);
        /* Elements that still hold c's starting value were most likely never written: say which. */
        int unwritten = 0, first = -1;
        for (int i = 0; i < n; i++)
            if (c[i] == SENTINEL && want[i] != SENTINEL && unwritten++ == 0) first = i;
        if (unwritten)
            snprintf(line + strlen(line), sizeof line - strlen(line),
                     "; %d element(s) still hold %g, the value c started with, first c[%d]: never written (does "
                     "the grid cover every element? a block count rounded down?)", unwritten, SENTINEL, first);
        fail_msg("%s", line);
    }
    lab_check_guard(dc, (size_t)n, sizeof(float), "vector_add", "c");
    lab_check_guard(da, (size_t)n, sizeof(float), "vector_add", "a");
    lab_check_guard(db, (size_t)n, sizeof(float), "vector_add", "b");
    host_free(a); host_free(b); host_free(c); host_free(want);
}

static void test_single_element(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_size(1, lab_seed);
}

static void test_partial_blocks(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    /* Primes and neighbours of the usual block sizes: the last block is partial. */
    int sizes[] = {7, 31, 33, 127, 255, 257, 1021, 4099};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) check_size(sizes[i], lab_seed + 100 + i);
}

static void test_large(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    /* Many blocks; the emulator runs this too, so keep it modest. */
    check_size(200003, lab_seed + 7);
}

/* A launch the device refuses must come back as LAB_LAUNCH_FAILED: the
 * emulator refuses the next one on request, as a GPU refuses a launch it
 * cannot fit. On a GPU the refusal cannot be made, and the case is left out
 * (the rest of the test still runs there). */
static void check_refused_launch(void) {
    float *d = gpu_malloc(4 * sizeof(float));
    if (!gpu_refuse_next_launch(1)) {
        print_message("a refused launch is checked under the emulator only (TARGET=emu)\n");
        gpu_free(d);
        return;
    }
    int st = vector_add(d, d + 1, d + 2, 1);
    gpu_refuse_next_launch(0); /* unused if vector_add launched nothing */
    char err[160];
    gpu_sticky_error(err, sizeof err); /* clears the refusal, if the function did not */
    gpu_free(d);
    if (st == LAB_NOT_IMPLEMENTED) fail_msg("not implemented: vector_add still has its TODO (see the lab's README)");
    if (st != LAB_LAUNCH_FAILED)
        fail_msg("vector_add returned '%s' for a launch the device refused (cudaErrorLaunchOutOfResources): check "
                 "cudaGetLastError() right after the launch and return LAB_LAUNCH_FAILED when it is not cudaSuccess",
                 lab_status_name(st));
}

/* The n == 0 and n < 0 branches sit outside the TODO, so a small real size
 * runs first: the test says "not implemented" on the starter instead of
 * passing before any of the lab is written. */
static void test_empty_and_negative(void **state) {
    (void)state;
    LAB_REQUIRE_DEVICE();
    check_size(3, lab_seed + 200);
    int st = vector_add(NULL, NULL, NULL, 0);
    LAB_REQUIRE_OK(st, "vector_add");
    assert_int_equal(vector_add(NULL, NULL, NULL, -5), LAB_BAD_ARGUMENT);
    check_refused_launch();
}

int main(int argc, char **argv) {
    lab_check_init(argc, argv, "lab 00: vector_add against the CPU on awkward sizes");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_element),
        cmocka_unit_test(test_partial_blocks),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_empty_and_negative),
    };
    return LAB_RUN_TESTS("lab00_vector_add", tests);
}
