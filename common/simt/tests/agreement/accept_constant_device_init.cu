// A GPU variable's initializer may be worked out when the file is compiled:
// literals, casts, sizeof, a constexpr function, an aggregate, abs, dim3.
#include <cstdlib>

constexpr float twice(float x) { return 2 * x; }

struct pair_of_floats {
    float a, b;
};

__device__ float doubled = twice(1.5f);
__device__ float words = float(3) * sizeof(int);
__device__ float cast = static_cast<float>(2);
__device__ pair_of_floats pair = {1.0f, 2.0f};
__constant__ float weights[3] = {twice(1.0f), 2.0f, 3.0f};
__device__ float2 half_way = {0.5f, 0.5f};
__device__ float braced{twice(2.0f)};
__device__ int distance = abs(-3);
__device__ dim3 block_shape = dim3(16, 16);

__global__ void use_them(float *out)
{
    out[0] = doubled + words + cast + pair.a + weights[threadIdx.x % 3] + half_way.x + braced + distance + block_shape.x;
}
