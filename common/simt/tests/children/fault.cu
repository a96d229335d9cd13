/*
 * Emulator check (negative): kernels that touch memory nothing maps. "far"
 * stores through an index far outside its array; "stack" declares a local
 * array larger than an emulated thread's stack. A GPU reports an illegal
 * memory access; the emulator must fail the launch the same way, with this
 * file's line, and the process must live on to print the error (before,
 * SIGSEGV ended it with no word of where). "shared" stores a page past the
 * end of the launch's dynamic shared memory, which before wrote the
 * emulator's heap.
 */
#include <stdio.h>
#include <string.h>

__global__ void store_far(float *a, long off)
{
    a[threadIdx.x + off] = 1.0f;
}

__global__ void big_locals(float *out)
{
    volatile float big[64 * 1024]; /* 256 KB: more than the 64 KB of a thread's stack */
    for (int i = 0; i < 64 * 1024; i += 1024) big[i] = (float)i;
    out[threadIdx.x] = big[threadIdx.x * 1024];
}

__global__ void shared_past_end(float *out)
{
    extern __shared__ float tile[];
    tile[threadIdx.x * 1024] = 1.0f; /* launched with 4 KB: thread 1 is past the end */
    __syncthreads();
    out[threadIdx.x] = tile[0];
}

int main(int argc, char **argv)
{
    float *a;
    cudaMalloc((void **)&a, 1024 * sizeof(float));
    if (argc > 1 && strcmp(argv[1], "shared") == 0) {
        shared_past_end<<<1, 32, 4096>>>(a);
        printf("shared_past_end: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    } else if (argc > 1 && strcmp(argv[1], "stack") == 0) {
        big_locals<<<1, 32>>>(a);
        printf("big_locals: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    } else {
        /* Far below: device memory lies high in the address space, and as
         * far above it the address may be past the top (a bus error, with
         * no address). */
        store_far<<<1, 32>>>(a, -(1L << 36));
        printf("store_far: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    }
    /* The fault is sticky, as on a GPU: the next call says so too. */
    printf("after: %s\n", cudaGetErrorString(cudaMemset(a, 0, 4)));
    return 0;
}
