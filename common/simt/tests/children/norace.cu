/*
 * Sanitizer check (positive): the same reverse with its __syncthreads, plus
 * a warp shuffle reduction and an atomic. Built with simtcc
 * --sanitize=thread, ThreadSanitizer must stay silent: barriers and warp
 * collectives are happens-before edges, so correct code raises no report.
 */
#include <stdio.h>

__global__ void reverse_then_reduce(float *d, float *sum, int n)
{
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = d[blockIdx.x * n + t];
    __syncthreads();
    float v = s[n - 1 - t];
    __syncthreads();
    s[t] = v * 2.0f;
    __syncthreads();
    d[blockIdx.x * n + t] = s[t];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (t % 32 == 0) atomicAdd(sum, v);
}

int main(void)
{
    const int n = 128, blocks = 4;
    float *d, *sum, h[n * blocks], hs;
    for (int i = 0; i < n * blocks; i++) h[i] = 1.0f;
    cudaMalloc(&d, sizeof(h));
    cudaMalloc(&sum, sizeof(float));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    cudaMemset(sum, 0, sizeof(float));
    reverse_then_reduce<<<blocks, n>>>(d, sum, n);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(&hs, sum, sizeof(float), cudaMemcpyDeviceToHost);
    printf("norace: %s sum=%g\n", cudaGetErrorString(e), hs);
    cudaFree(d);
    cudaFree(sum);
    return (e == cudaSuccess && hs == (float)(n * blocks)) ? 0 : 1;
}
