// Kernels, launches and inline PTX in an included header, and a kernel
// template of a header launched here with its template arguments deduced.
#include "kernels/fill.cuh"
#include "kernels/step.cuh"

int main()
{
    float *a, *b;
    cudaMalloc(&a, 512);
    cudaMalloc(&b, 512);
    run_reverse_tile(a, b);
    fills::fill<<<1, 128>>>(b, 1.0f, 128);
    return (int)cudaDeviceSynchronize();
}
