// expect: a __global__ function must have a void return type
__global__ int count(const float *x, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++) c += x[i] > 0;
    return c;
}
