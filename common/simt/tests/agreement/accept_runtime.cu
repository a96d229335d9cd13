// Host calls of CUDA 13's runtime API that a student's program may make.
#include <cuda_runtime.h>
#include <cstdio>

__constant__ float table[4];
__device__ int counter;

__global__ void scale(float *o, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) o[i] = o[i] * v + table[i % 4] + (float)counter;
}

int main()
{
    float host[4] = {1, 2, 3, 4}, *o;
    cudaMemcpyToSymbol(table, host, sizeof host);
    size_t size = 0;
    cudaGetSymbolSize(&size, counter);
    cudaMalloc(&o, 256 * sizeof(float));
    cudaMemset(o, 0, 256 * sizeof(float));
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, s);
    scale<<<2, 128, 0, s>>>(o, 256, 2.0f);
    scale<<<2>>>(o, 2, 1.0f); // a block of one thread
    int n = 256;
    float v = 0.5f;
    void *args[] = {&o, &n, &v};
    cudaLaunchKernel(scale, dim3(2), dim3(128), args, 0, s);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaFuncAttributes fa;
    cudaFuncGetAttributes(&fa, scale);
    cudaFuncSetAttribute(scale, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("%s %zu %g %s\n", p.name, size, ms, cudaGetErrorString(cudaGetLastError()));
    cudaFree(o);
    return 0;
}
