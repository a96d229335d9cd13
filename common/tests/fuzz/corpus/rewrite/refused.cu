int helper(int v) { return v + 1; }
__device__ int dev(int v) { return v; }
__global__ void kern(int *p)
{
    __shared__ float sum = 0;
    p[0] = helper(dev(1)) + std::max(1, 2);
}
void host(int *p) { kern(p); dev(2); helper<<<1, 1>>>(1); }
