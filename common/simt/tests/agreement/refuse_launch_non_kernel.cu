// expect: a __device__ function call cannot be configured
__device__ void not_a_kernel(float *o) { o[0] = 1; }
int main() { not_a_kernel<<<1, 1>>>(nullptr); return 0; }
