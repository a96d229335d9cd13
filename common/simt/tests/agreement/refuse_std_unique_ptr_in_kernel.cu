// expect: calling a __host__ function("std::unique_ptr::unique_ptr") from a __device__ function("owned") is not allowed
// std::unique_ptr in device code: nvcc refuses its constructor (a constexpr
// host function, which the course's flags leave host-only).
#include <memory>

__device__ float owned()
{
    std::unique_ptr<float> p; // refused
    return p ? 1.0f : 0.0f;
}
