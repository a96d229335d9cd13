// expect: calling a __host__ function("rand") from a __global__ function("init") is not allowed
#include <cstdlib>
__global__ void init(float *w, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] = (float)rand() / (float)RAND_MAX;
}
