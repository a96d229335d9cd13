#pragma once
// A kernel template whose template arguments a launch in another file
// leaves to deduce (accept_header_kernels.cu).
namespace fills {
template <typename T> __global__ void fill(T *p, T v, int n)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) p[i] = v;
}
} // namespace fills
