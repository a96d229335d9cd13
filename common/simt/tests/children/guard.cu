/*
 * Emulator check (negative): a kernel that reads one element past its
 * input, into a guard zone the host marked (simt_memtrace_guard), as a tile
 * load without its bounds test does in the matmul checks. Built with
 * --memtrace: the tracer's hooks stop the launch and name line 19; built
 * with --sanitize=address: the zone is poisoned, and ASan stops the program
 * there. An in-bounds launch first, and one after the zone is lifted, run
 * clean (stdout unbuffered, so their lines survive ASan's exit).
 */
#include <stdio.h>
#include <string.h>

#include "simt_memtrace.h"

__global__ void read_one_past(const float *in, float *out, int n, int extra)
{
    int i = threadIdx.x;
    if (i < n + extra)
        out[i] = 2.0f * in[i]; /* with extra = 1, thread n reads in[n] */
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    float *buf, *out;
    cudaMalloc((void **)&buf, 64 * sizeof(float));
    cudaMalloc((void **)&out, 64 * sizeof(float));
    cudaMemset(buf, 0, 64 * sizeof(float));
    const int n = 32;
    simt_memtrace_guard(buf + n, 32 * sizeof(float), "in (32 floats)", 0);
    read_one_past<<<1, 64>>>(buf, out, n, 0);
    printf("in bounds: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    simt_memtrace_unguard(buf, 64 * sizeof(float));
    read_one_past<<<1, 64>>>(buf, out, n, 1);
    printf("unguarded: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    simt_memtrace_guard(buf + n, 32 * sizeof(float), "in (32 floats)", 0);
    read_one_past<<<1, 64>>>(buf, out, n, 1);
    printf("one past: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
