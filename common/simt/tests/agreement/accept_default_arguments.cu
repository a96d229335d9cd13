// A kernel's default arguments, left out at a launch, are filled in as in
// any call: here from a declaration before the definition, and across a
// launch written on two lines.
#define TILE 32

__global__ void scale(float *x, int n, float by = 2.0f, int stride = TILE / 32);

__global__ void scale(float *x, int n, float by, int stride)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x) * stride;
    if (i < n) x[i] *= by;
}

__global__ void mark(int *flag = nullptr)
{
    if (flag) flag[threadIdx.x] = 1;
}

void launch_all(float *x, int *flag, int n)
{
    scale<<<(n + 255) / 256, 256>>>(x, n);
    scale<<<(n + 255) / 256, 256>>>(x, n,
                                     0.5f);
    mark<<<1, 32>>>();
    mark<<<1, 32>>>(flag);
}
