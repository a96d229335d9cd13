/*
 * Sanitizer check (negative): the classic missing bounds check. The grid
 * rounds n up to whole blocks and the kernel writes past the end of its
 * cudaMalloc buffer; built with simtcc --sanitize=address, AddressSanitizer
 * must report a heap-buffer-overflow.
 */
#include <stdio.h>

__global__ void scale_no_bounds_check(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    (void)n; /* the missing "if (i < n)" */
    x[i] = 2.0f * x[i];
}

int main(void)
{
    const int n = 1000;
    float *x;
    cudaMalloc(&x, n * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    scale_no_bounds_check<<<(n + 255) / 256, 256>>>(x, n);
    printf("oob: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    cudaFree(x);
    return 0;
}
