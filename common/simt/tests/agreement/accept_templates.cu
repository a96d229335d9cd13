// Kernel templates launched with their arguments named, launch bounds,
// dynamic shared memory of a template type, and a kernel in a namespace.
#include <cuda_runtime.h>

namespace ladder {
template <int BM, int BN, typename T>
__global__ void __launch_bounds__(BM * BN / 4) tile_copy(const T *__restrict__ in, T *__restrict__ out, int n)
{
    extern __shared__ __align__(16) unsigned char smem[];
    T *tile = reinterpret_cast<T *>(smem);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    if (i < n) out[i] = tile[blockDim.x - 1 - threadIdx.x];
}
} // namespace ladder

template <int BM, int BN> static void run(const float *in, float *out, int n, cudaStream_t s = 0)
{
    const int threads = BM * BN / 4;
    ladder::tile_copy<BM, BN, float><<<(n + threads - 1) / threads, threads, threads * sizeof(float), s>>>(in, out, n);
}

int main()
{
    float *in, *out;
    cudaMalloc(&in, 4096 * sizeof(float));
    cudaMalloc(&out, 4096 * sizeof(float));
    run<32, 32>(in, out, 4096);
    run<16, 16>(in, out, 4096);
    return (int)cudaDeviceSynchronize();
}
