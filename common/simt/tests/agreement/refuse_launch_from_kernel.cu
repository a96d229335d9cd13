// expect: kernel launch from __device__ or __global__ functions requires separate compilation mode
// A kernel launched from device code (dynamic parallelism): nvcc builds it
// only as relocatable device code (-rdc=true), which the course does not
// use. Each line is one refusal (see test_simt_agreement.c).
__global__ void child(float *p) { p[threadIdx.x] = 1.0f; }

__global__ void parent(float *p)
{
    if (threadIdx.x == 0) child<<<1, 32>>>(p); // refused
}

__device__ void helper(float *p) { child<<<1, 32>>>(p); } // refused

__host__ __device__ void both(float *p) { child<<<1, 32>>>(p); } // refused

void host_side(float *p) { child<<<1, 32>>>(p); }
