#define LAUNCH(k) k<<<1, 32>>>()
__constant__ int table[4];
#ifdef __SIMT_EMULATOR__
static void setup(int x) {
#else
static void setup(long x) {
#endif
    (void)x;
}
#if defined(__CUDA_ARCH__)
__device__ int where() { return 1; }
#elif 1
__host__ __device__ int where() { return 0; }
#endif
__global__ void k(void)
{
    __shared__ struct { int a; } s;
    __shared__ int flags[32];
    flags[threadIdx.x] = where();
    s.a = flags[0];
}
namespace lab { void host_only() { setup(1); LAUNCH(k); } }
