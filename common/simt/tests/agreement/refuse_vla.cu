// expect: variable length array
__global__ void k(float *o, int n)
{
    float t[n];
    t[0] = 1;
    o[0] = t[0];
}
