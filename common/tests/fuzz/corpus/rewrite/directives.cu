#define OPEN {
#define CLOSE }
#if 0
#ifd NOTE
#endif
#ifdef WIDE
__device__ void f(long x) {
#elifdef NARROW
__device__ void f(short x) {
#else
__device__ void f(int x) {
#endif
    (void)x;
}
extern /* dynamic */ __shared__ float dyn[] /* s[i]; */;
__global__ void __launch_bounds__(64) k(float *p)
{
    extern __shared__ float // the tile
        s[];
    __shared__ float t[32] /* = 0, */;
    t[threadIdx.x] = s[0] + dyn[0];
#define K3 __global__ void k3(float *o) { __shared__ float w[2]; w[0] = 1; o[0] = w[1]; }
    p[0] = t[1];
}
int one() OPEN return 1; CLOSE
