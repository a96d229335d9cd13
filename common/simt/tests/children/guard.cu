/*
 * Emulator check (negative): a kernel that reads one element past its
 * input, into a guard zone the host marked (simt_memtrace_guard), as a tile
 * load without its bounds test does in the matmul checks. Built with
 * --memtrace: the tracer's hooks stop the launch and name line 20; built
 * with --sanitize=address: the zone is poisoned, and ASan stops the program
 * there. An in-bounds launch first, and one after the zone is lifted, run
 * clean (stdout unbuffered, so their lines survive ASan's exit). Last, in
 * the tracer's build, a float4 load whose last 8 bytes run into the zone.
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

/* One float4 load of elements 28..31, of which the buffer has 30: its index
 * test (28 < 30) passes, and its last 8 bytes are in the zone. */
__global__ void read_float4_tail(const float *in, float *out)
{
    float4 v = *(const float4 *)(in + 28);
    out[0] = v.x + v.y + v.z + v.w;
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
    /* A vector load that straddles the end: the message says how much runs past. */
    cudaDeviceReset();
    simt_memtrace_unguard(buf, 64 * sizeof(float));
    simt_memtrace_guard(buf + 30, 32 * sizeof(float), "in (30 floats)", 0);
    read_float4_tail<<<1, 1>>>(buf, out);
    printf("float4 tail: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
