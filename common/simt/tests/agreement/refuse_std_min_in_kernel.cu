// expect: std::min
#include <algorithm>
__global__ void k(float *o) { o[0] = std::min(o[0], o[1]); }
