extern __shared__ __align__(16) float dyn[];

__device__ float twice(float v) { return 2 * v; }

__global__ void sum(const float *x, float *out)
{
    extern __shared__ float buf[];
    buf[threadIdx.x] = twice(x[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) { float s = 0; for (int k = 0; k < blockDim.x; k++) s += buf[k]; *out = s; }
}

int main()
{
    float *x = 0, *o = 0;
    sum<<<1, 32, 32 * sizeof(float)>>>(x, o); // a comment with <<< and "quotes"
    const char *s = "sum<<<1, 1>>>()";
    return s[0] == 'x';
}
