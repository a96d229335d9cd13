// expect: expression must be a modifiable lvalue (the __constant__ variable "scale"
// A kernel writing a __constant__ variable, which is read-only to kernels
// (the host sets it with cudaMemcpyToSymbol). The emulator's kernels share
// one copy with the host, where the write would work. Each line is one
// refusal (see test_simt_agreement.c). An array's element is refused by
// nvcc's back end, which this file's errors stop before: see
// refuse_constant_array_written_in_kernel.cu.
__constant__ float scale;
__constant__ float weights[16];
__constant__ int steps;

__global__ void set_scale(const float *x) { scale = x[0]; } // refused

__device__ void add_steps(int n) { steps += n; } // refused

__global__ void count_steps() { steps++; } // refused

__global__ void reads_them(float *out)
{
    float local_scale = scale; // a read, and a local of its own: fine
    local_scale *= 2.0f;
    out[threadIdx.x] = local_scale * weights[threadIdx.x % 16] + (float)steps;
}
