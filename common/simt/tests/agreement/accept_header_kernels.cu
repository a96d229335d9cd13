// Kernels, launches and inline PTX in an included header.
#include "kernels/step.cuh"

int main()
{
    float *a, *b;
    cudaMalloc(&a, 512);
    cudaMalloc(&b, 512);
    run_reverse_tile(a, b);
    return (int)cudaDeviceSynchronize();
}
