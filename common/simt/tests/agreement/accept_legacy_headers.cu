// Headers that nvcc's cuda_runtime.h includes, named by older sources.
#include <builtin_types.h>
#include <device_launch_parameters.h>
#include <driver_types.h>
#include <cuda_profiler_api.h>

__global__ void k(float *o) { o[threadIdx.x] = (float)blockDim.x; }

int main()
{
    cudaProfilerStart();
    cudaError_t e = cudaSuccess;
    cudaProfilerStop();
    return (int)e;
}
