/* A cmocka teardown for the emulator's CUDA test suites. */
#ifndef SIMT_TEST_NO_FAULT_LEFT_H
#define SIMT_TEST_NO_FAULT_LEFT_H

#include <stdio.h>

/* After each test: no fault may be left pending. One that is (a test that
 * failed part-way, with its kernel's fault still sticky, as on a GPU) is
 * cleared, so that the tests after it start clean instead of failing in
 * turn, and fails the test it came from. */
static int no_fault_left(void **state)
{
    (void)state;
    cudaError_t sync = cudaDeviceSynchronize(), last = cudaGetLastError();
    if (sync == cudaSuccess && last == cudaSuccess) return 0;
    cudaDeviceReset();
    fprintf(stderr, "a fault was left pending (%s): cleared for the next test\n",
            cudaGetErrorString(sync != cudaSuccess ? sync : last));
    return -1;
}

#endif
