#define LB __launch_bounds__(256)
#define LB_N(n) __launch_bounds__(n)
#define KERNEL __global__ void __launch_bounds__(128)
struct pair { int a, b; };
__global__ void LB k1(int *p) { p[0] = 1; }
KERNEL k2(int *p) { p[0] = 2; }
__global__ void LB_N(64) k3(int *p) { p[0] = 3; }
int twice(int x) { return 2 * x; }
__global__ void __launch_bounds__(32) k4(int *p)
#define OPEN {
{ p[0] = 4; }
