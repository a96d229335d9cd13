// expect: std::numeric_limits<float>::max
#include <limits>
__global__ void k(float *o) { o[0] = std::numeric_limits<float>::max(); }
