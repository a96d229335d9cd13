// expect: device code does not support exception handling
__global__ void checked(const float *x, float *y, int n)
{
    int i = threadIdx.x;
    if (i >= n) throw i;
    y[i] = x[i];
}
