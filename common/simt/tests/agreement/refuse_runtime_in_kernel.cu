// expect: calling a __host__ function("cudaMemcpy") from a __global__ function("kernel_0") is not allowed
// The CUDA runtime's host functions called in a kernel: nvcc refuses each,
// and the emulator, whose kernels run on the host and could call them.
// Each line is one refusal (see test_simt_agreement.c).
__device__ float total;
__global__ void child() {}

__global__ void kernel_0(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaMemcpy(p, p + 1, 4, cudaMemcpyDeviceToDevice); } // refused
__global__ void kernel_1(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaMemset(p, 0, 4); } // refused
__global__ void kernel_2(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaDeviceSynchronize(); } // refused
__global__ void kernel_3(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaStreamSynchronize(0); } // refused
__global__ void kernel_4(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaMallocManaged(&q, 4); } // refused
__global__ void kernel_5(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaSetDevice(0); } // refused
__global__ void kernel_6(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaLaunchKernel((const void *)child, dim3(1), dim3(1), (void **)0, 0, 0); } // refused
__global__ void kernel_7(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaMemcpy2D(p, 4, p, 4, 4, 1, cudaMemcpyDeviceToDevice); } // refused
__global__ void kernel_8(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaMemcpyToSymbol(total, p, 4); } // refused
__global__ void kernel_9(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaMemcpyFromSymbol(p, total, 4); } // refused
__global__ void kernel_10(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaDeviceReset(); } // refused
__global__ void kernel_11(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaMallocHost(&q, 4); } // refused
__global__ void kernel_12(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaFreeHost(p); } // refused
__global__ void kernel_13(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaStreamCreate(&s); } // refused
__global__ void kernel_14(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaEventCreate(&e); } // refused
__global__ void kernel_15(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaEventSynchronize(e); } // refused
__global__ void kernel_16(float *p, float *q, cudaStream_t s, cudaEvent_t e) { (void)q; (void)s; (void)e; (void)cudaEventElapsedTime(p, e, e); } // refused
