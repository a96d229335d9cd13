/*
 * Checks of the fixture lab 90: ring_sum on every rank of the job
 * (mpirun -np 4; the grader's rubric says so), against the sum that each
 * rank can compute alone.
 *
 * Every rank's input is a pure function of (seed, rank), so each rank knows
 * the whole input and the exact sum. The values are whole numbers below
 * 2^10 in magnitude: any order of the float additions gives the exact sum,
 * so the tolerance is 0. A check fails on the rank where the result is
 * wrong and names that rank; the other ranks pass.
 */
#include "comm.h"
#include "labcheck.h"
#include "memory.h"
#include "rng.h"

#include <math.h>

lab_status_t ring_sum(comm_t *comm, float *x, size_t n);

static comm_t *world;

/* Element i of rank r's input: a whole number in [-1000, 1000]. */
static void fill(float *x, size_t n, int r) {
    rng_t g;
    rng_init(&g, lab_seed * 1000003ULL + (unsigned long long)r);
    for (size_t i = 0; i < n; i++) x[i] = (float)(int)(rng_uniform(&g) * 2001.0f) - 1000.0f;
}

/* ring_sum on n elements; every rank compares the result with the exact sum. */
static void check_n(size_t n) {
    int rank = comm_rank(world), size = comm_size(world);
    float *x = host_malloc(n * sizeof *x + 1), *mine = host_malloc(n * sizeof *mine + 1);
    double *want = host_calloc(n + 1, sizeof *want);
    for (int r = 0; r < size; r++) {
        fill(mine, n, r);
        for (size_t i = 0; i < n; i++) want[i] += mine[i];
    }
    fill(x, n, rank);
    LAB_REQUIRE_OK(ring_sum(world, x, n), "ring_sum");
    for (size_t i = 0; i < n; i++)
        /* Exact: whole numbers far below 2^24 (see the file comment). */
        if (!(x[i] == want[i]))
            fail_msg("rank %d of %d: n = %zu: x[%zu] = %g, want %g", rank, size, n, i, x[i], want[i]);
    host_free(x);
    host_free(mine);
    host_free(want);
}

static void test_one_element(void **state) {
    (void)state;
    check_n(1); /* fewer elements than ranks: most shards are empty */
}

static void test_uneven(void **state) {
    (void)state;
    check_n((size_t)(7 * comm_size(world) + 3)); /* shards differ by one element */
}

static void test_large(void **state) {
    (void)state;
    check_n(100003);
}

int main(int argc, char **argv) {
    comm_init(&argc, &argv);
    lab_check_init(argc, argv, "lab 90 (grader fixture): ring_sum against the exact sum on every rank");
    world = comm_world(COMM_BACKEND_MPI);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_element),
        cmocka_unit_test(test_uneven),
        cmocka_unit_test(test_large),
    };
    int failed = cmocka_run_group_tests_name("lab90_ring_sum", tests, NULL, NULL);
    comm_finalize();
    return failed;
}
