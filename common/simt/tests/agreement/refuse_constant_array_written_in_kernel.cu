// expect: cannot store to pointer that points to constant memory space (an element of the __constant__ array "weights"
// A kernel writing an element of a __constant__ array: nvcc's back end
// warns that it cannot store to constant memory, which the course's
// -Werror all-warnings makes an error.
__constant__ float weights[16];

__global__ void update(const float *grad, float lr)
{
    weights[threadIdx.x] -= lr * grad[threadIdx.x];
}
