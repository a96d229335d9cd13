// expect: ambiguous overload for
#include <cuda_fp16.h>
__global__ void k(float *o, const __half *h) { o[0] = o[1] + h[0]; }
