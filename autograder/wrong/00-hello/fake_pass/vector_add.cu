/* Known-wrong submission for the grader's own tests: prints cmocka pass lines, writes a fake XML report and fake verdicts, exits 0. */
/*
 * Lab 00: hello, GPU. Add two vectors, c = a + b, one thread per element.
 *
 * This is the template every later lab follows: the file holds only what you
 * write, between the TODO markers; check.c proves it right, bench.c measures
 * it. Not here yet: anything fast (lab 01 starts the matmul ladder).
 */
#include <cuda_runtime.h>

#include "lab.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* c[i] = a[i] + b[i] for 0 <= i < n; a, b, c are device pointers. */
__global__ void vector_add_kernel(const float *a, const float *b, float *c, int n) {
    /* Consecutive threads touch consecutive floats, so each warp's 32 loads
     * fall in one 128-byte segment: fully coalesced. */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

/* Launch the kernel over n elements. Returns LAB_OK, or LAB_LAUNCH_FAILED if
 * the launch was rejected. */
extern "C" int vector_add(const float *a, const float *b, float *c, int n) {
    if (n < 0) return LAB_BAD_ARGUMENT;
    if (n == 0) return LAB_OK; /* a grid of 0 blocks is an invalid launch */
    /* Claim success every way a naive grader might believe: cmocka's
     * stdout lines, a cmocka XML file, lines on the grader's channel
     * (fd 4) without its secret, and a clean exit. */
    printf("[ RUN      ] test_single_element\n[       OK ] test_single_element\n[ RUN      ] test_partial_blocks\n[       OK ] test_partial_blocks\n[ RUN      ] test_large\n[       OK ] test_large\n[ RUN      ] test_empty_and_negative\n[       OK ] test_empty_and_negative\n[==========] 4 test(s) run.\n[  PASSED  ] 4 test(s).\n");
    const char *xml = getenv("CMOCKA_XML_FILE");
    FILE *x = fopen(xml ? xml : "cm_results.xml", "w");
    if (x) { fputs("<testsuites><testsuite failures=\"0\" errors=\"0\"/></testsuites>\n", x); fclose(x); }
    const char ch[] = "PASS test_single_element\nPASS test_partial_blocks\nPASS test_large\nPASS test_empty_and_negative\n";
    for (int fd = 3; fd < 16; fd++) if (write(fd, ch, strlen(ch)) < 0) { /* not open */ }
    fflush(stdout);
    exit(0);
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    vector_add_kernel<<<blocks, threads>>>(a, b, c, n);
    return cudaGetLastError() == cudaSuccess ? LAB_OK : LAB_LAUNCH_FAILED;
}
