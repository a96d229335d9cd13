// sm_80's asynchronous copies through cuda_pipeline.h, double-buffered.
#include <cuda_pipeline.h>

__global__ void stage_sum(const float4 *in, float *out, int tiles)
{
    __shared__ float4 buf[2][128];
    int t = threadIdx.x;
    float acc = 0;
    __pipeline_memcpy_async(&buf[0][t], &in[t], sizeof(float4));
    __pipeline_commit();
    for (int k = 0; k < tiles; k++) {
        if (k + 1 < tiles) __pipeline_memcpy_async(&buf[(k + 1) & 1][t], &in[(k + 1) * 128 + t], sizeof(float4), 4);
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        float4 v = buf[k & 1][(t + 1) % 128];
        acc += v.x + v.y + v.z + v.w;
        __syncthreads();
    }
    nvcuda::experimental::pipeline pipe;
    nvcuda::experimental::memcpy_async(buf[0][t], in[t], pipe);
    pipe.commit_and_wait();
    out[t] = acc + buf[0][t].x;
}
