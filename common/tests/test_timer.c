/* Host timing and the statistics every benchmark reports: the clock is the
 * monotonic one in seconds, the median is the middle (or the mean of the two
 * middles), and the rates are in the units the tables print. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <time.h>

#include "timer.h"

/* A CLOCK_MONOTONIC reading in seconds, as the test reads it itself. */
static double monotonic_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* wall_time() lies between two readings of CLOCK_MONOTONIC taken around it
 * (an ordering, so no load can break it): not the calendar clock, not
 * another unit. A 2 ms sleep, measured on the same clock, moves it on by at
 * least 2 ms. */
static void test_wall_time_is_monotonic_seconds(void **state) {
    (void)state;
    const double before = monotonic_s();
    const double t0 = wall_time();
    const double after = monotonic_s();
    assert_true(before <= t0 && t0 <= after);
    struct timespec nap = {0, 2000000};
    while (nanosleep(&nap, &nap) != 0) {}
    const double t1 = wall_time();
    assert_true(t1 - t0 >= 0.002 * 0.999);
    assert_true(t1 <= monotonic_s());
}

/* The median of an odd count is the middle value; of an even count, the mean
 * of the two middle values; the array is left sorted, smallest first. */
static void test_median(void **state) {
    (void)state;
    double odd[5] = {9.0, -1.0, 4.0, 100.0, 2.0};
    assert_true(median(odd, 5) == 4.0);
    const double odd_sorted[5] = {-1.0, 2.0, 4.0, 9.0, 100.0};
    for (int i = 0; i < 5; i++) assert_true(odd[i] == odd_sorted[i]);
    double even[6] = {7.0, 1.0, 3.0, 8.0, 5.0, 2.0};
    assert_true(median(even, 6) == 4.0); /* (3 + 5) / 2 */
    const double even_sorted[6] = {1.0, 2.0, 3.0, 5.0, 7.0, 8.0};
    for (int i = 0; i < 6; i++) assert_true(even[i] == even_sorted[i]);
    double one[1] = {0.25};
    assert_true(median(one, 1) == 0.25);
    double two[2] = {3.0, 1.0};
    assert_true(median(two, 2) == 2.0);
    /* One slow repetition (a context switch) does not move it. */
    double reps[7] = {1.01, 1.00, 0.99, 250.0, 1.02, 0.98, 1.00};
    assert_true(median(reps, 7) == 1.00);
}

/* A 4096^3 matmul (2*M*N*K flops) in 0.1 s is 1.374 TFLOP/s; 1 GB moved in
 * 0.5 s is 2 GB/s (10^9 bytes, not 2^30). */
static void test_rates(void **state) {
    (void)state;
    const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    assert_true(fabs(tflops(flops, 0.1) - 1.37438953472) < 1e-11);
    assert_true(fabs(tflops(1e12, 1.0) - 1.0) < 1e-15);
    assert_true(fabs(gbps(1e9, 0.5) - 2.0) < 1e-15);
    assert_true(fabs(gbps(3.0 * 1073741824.0, 1.0) - 3.221225472) < 1e-12);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wall_time_is_monotonic_seconds),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_rates),
    };
    return cmocka_run_group_tests_name("timer", tests, NULL, NULL);
}
