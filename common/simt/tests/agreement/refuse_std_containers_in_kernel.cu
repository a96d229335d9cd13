// expect: calling a __host__ function("std::vector::vector") from a __global__ function("gather") is not allowed
// Objects of the C++ standard library's containers in device code: their
// constructors and destructors are host functions, which nvcc refuses
// there. Each line is one refusal (see test_simt_agreement.c). nvcc names
// std::unique_ptr's constexpr constructor in an earlier pass, which stops
// before these are reported: see refuse_std_unique_ptr_in_kernel.cu.
#include <functional>
#include <map>
#include <string>
#include <vector>

__global__ void gather(const float *x, float *out, int n)
{
    std::vector<float> seen(n); // refused
    out[0] = x[0] + seen[0];
}

__device__ float name_length() { return (float)std::string("tile").size(); } // refused

__device__ float count_keys() { std::map<int, int> counts; return (float)counts.size(); } // refused

__host__ __device__ float callback()
{
    std::function<float()> f; // refused
    return f ? 1.0f : 0.0f;
}

// A pointer to one is only an address: nvcc builds it.
__global__ void holds(std::vector<float> *v, float *out) { out[0] = v ? 1.0f : 0.0f; }
