// expect: calling a __host__ function
float twice(float x) { return 2 * x; }
__global__ void k(float *o) { o[0] = twice(o[0]); }
