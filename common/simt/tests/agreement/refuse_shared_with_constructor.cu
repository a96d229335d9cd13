// expect: dynamic initialization is not supported for a function-scope static __shared__ variable
// A __shared__ variable of a class with a default constructor of its own:
// nothing runs a constructor on shared memory, and nvcc refuses it (a
// warning, #20054-D, that -Werror all-warnings makes an error). Each line
// is one refusal (see test_simt_agreement.c).
struct Accumulator {
    float sum;
    Accumulator() : sum(0.0f) {}
};

struct Counter {
    int n;
    __device__ Counter() : n(0) {}
};

template <int N> struct Row {
    float v[N];
    Row() {}
};

__global__ void reduce(const float *x, float *out)
{
    __shared__ Accumulator acc[32]; // refused
    __shared__ Counter seen; // refused
    __shared__ Row<32> row; // refused
    row.v[threadIdx.x % 32] = x[threadIdx.x];
    acc[threadIdx.x % 32].sum = row.v[threadIdx.x % 32];
    seen.n = 1;
    __syncthreads();
    out[threadIdx.x] = acc[0].sum + (float)seen.n;
}
