/*
 * Sanitizer check (negative): a shared-memory reverse without the
 * __syncthreads between the writes and the reads. Built with
 * simtcc --sanitize=thread, ThreadSanitizer must report a data race.
 */
#include <stdio.h>

__global__ void reverse_no_barrier(float *d, int n)
{
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = d[t];
    d[t] = s[n - 1 - t]; /* reads another thread's write: no barrier in between */
}

int main(void)
{
    const int n = 128;
    float *d;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemset(d, 0, n * sizeof(float));
    reverse_no_barrier<<<1, n>>>(d, n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("race: %s\n", cudaGetErrorString(e));
    cudaFree(d);
    return 0;
}
