// Kernel templates launched with their template arguments deduced.
#include <cuda_runtime.h>

template <typename T, int SCALE = 2> __global__ void fill(T *p, T v) { p[threadIdx.x] = v * (T)SCALE; }

namespace ops {
template <class... Ts> __global__ void count(float *o, Ts... xs) { o[threadIdx.x] = (float)sizeof...(xs); }
} // namespace ops

template <typename T> static void run(T *p, T v)
{
    fill<<<1, 32>>>(p, v);
    ops::count<<<1, 32>>>((float *)p, 1, 2.0, 'c');
}

int main()
{
    float *p;
    cudaMalloc(&p, 32 * sizeof(float));
    run(p, 1.5f);
    return (int)cudaDeviceSynchronize();
}
