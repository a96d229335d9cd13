// expect: initializer not allowed for __shared__ variable
__global__ void k(float *o)
{
    __shared__ float s = 0;
    s += o[threadIdx.x];
    o[0] = s;
}
