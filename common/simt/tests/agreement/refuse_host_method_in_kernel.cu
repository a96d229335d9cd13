// expect: calling a __host__ function("Params::scale") from a __global__ function("apply") is not allowed
// A member function without __device__ is host code to nvcc, so a kernel
// cannot call it, through an object, a pointer or a reference, of a class
// or a class template. Each line is one refusal (see
// test_simt_agreement.c).
struct Params {
    float s;
    float scale(float x) const { return s * x; }
};

template <int N> struct Window {
    float v[N];
    float sum() const
    {
        float t = 0.0f;
        for (int i = 0; i < N; i++) t += v[i];
        return t;
    }
};

__global__ void apply(Params p, const Params *q, float *x)
{
    x[threadIdx.x] = p.scale(x[threadIdx.x]); // refused
    x[threadIdx.x] += q->scale(1.0f); // refused
}

__device__ float total(const Window<4> &w) { return w.sum(); } // refused
