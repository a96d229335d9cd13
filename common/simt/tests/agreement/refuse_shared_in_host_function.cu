// expect: a static "__shared__" variable declaration is not allowed inside a host function body
// Shared memory belongs to a block of a running kernel, so a host function,
// or a __host__ __device__ one (compiled for the host too), cannot declare
// it; the emulator's host could. Each line is one refusal (see
// test_simt_agreement.c).
float host_sum(const float *x)
{
    __shared__ float partial[32]; // refused
    partial[0] = x[0];
    return partial[0];
}

__host__ __device__ float both_sum(const float *x)
{
    __shared__ float partial[32]; // refused
    partial[0] = x[0];
    return partial[0];
}

template <int N> float host_template_sum(const float *x)
{
    __shared__ float partial[N]; // refused
    partial[0] = x[0];
    return partial[0];
}
