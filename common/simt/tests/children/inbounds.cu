/*
 * Sanitizer check (positive): the same kernel with its bounds check, using
 * dynamic shared memory and several blocks. Built with simtcc
 * --sanitize=address it must run clean, so the fiber stacks and shared
 * memory raise no false reports.
 */
#include <stdio.h>

__global__ void scale_checked(float *x, int n)
{
    extern __shared__ float stage[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) x[i] = 2.0f * stage[threadIdx.x];
}

int main(void)
{
    const int n = 1000;
    float *x, h[n];
    for (int i = 0; i < n; i++) h[i] = (float)i;
    cudaMalloc(&x, n * sizeof(float));
    cudaMemcpy(x, h, sizeof(h), cudaMemcpyHostToDevice);
    scale_checked<<<(n + 255) / 256, 256, 256 * sizeof(float)>>>(x, n);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(h, x, sizeof(h), cudaMemcpyDeviceToHost);
    printf("inbounds: %s x[999]=%g\n", cudaGetErrorString(e), h[n - 1]);
    cudaFree(x);
    return (e == cudaSuccess && h[n - 1] == 1998.0f) ? 0 : 1;
}
