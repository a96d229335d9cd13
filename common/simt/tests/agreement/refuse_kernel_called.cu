// expect: a __global__ function call must be configured
__global__ void k(float *o) { o[0] = 1; }
int main() { k(nullptr); return 0; }
