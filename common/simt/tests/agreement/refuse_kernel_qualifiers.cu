// expect: illegal combination of memory qualifiers (kernel "scale" is __global__ and __host__)
// A kernel is __global__ alone, and never inline (nvcc warns that it
// ignores the inline, and -Werror all-warnings makes that an error). Each
// line is one refusal (see test_simt_agreement.c).
__global__ __host__ void scale(float *x) { x[threadIdx.x] *= 2.0f; } // refused

__device__ __global__ void shift(float *x) { x[threadIdx.x] += 1.0f; } // refused

__global__ inline void zero(float *x) { x[threadIdx.x] = 0.0f; } // refused

static __forceinline__ __global__ void one(float *x) { x[threadIdx.x] = 1.0f; } // refused
