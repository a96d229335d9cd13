// expect: address of a host variable "std::cout" cannot be directly taken in a device function
// The host's streams in device code: a kernel prints with printf. nvcc
// refuses std::cout and its kin there (a warning, #20096-D, that -Werror
// all-warnings makes an error); the emulator's kernels could print through
// them. Each line is one refusal (see test_simt_agreement.c).
#include <cstdio>
#include <iostream>

__global__ void show(const float *x) { std::cout << x[threadIdx.x] << "\n"; } // refused

__device__ void warn(int i) { std::cerr << "bad index " << i << "\n"; } // refused

__global__ void show_with_printf(const float *x) { printf("%f\n", x[threadIdx.x]); }

void show_on_host(const float *x) { std::cout << x[0] << "\n"; }
