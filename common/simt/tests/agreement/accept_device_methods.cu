// Member functions a kernel may call: marked __device__ or __host__
// __device__, a class template's, and the library's own (cooperative
// groups); host code calls the host ones.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

struct Params {
    float s;
    __host__ __device__ float scale(float x) const { return s * x; }
    float host_scale(float x) const { return 2.0f * s * x; }
};

template <int N> struct Window {
    float v[N];
    __device__ float sum() const
    {
        float t = 0.0f;
        for (int i = 0; i < N; i++) t += v[i];
        return t;
    }
};

__global__ void apply(Params p, const Window<4> *w, float *x)
{
    cg::thread_block block = cg::this_thread_block();
    x[threadIdx.x] = p.scale(x[threadIdx.x]) + w->sum();
    block.sync();
}

float on_host(const Params &p) { return p.host_scale(1.0f) + p.scale(2.0f); }
