/*
 * Emulator check (negative and positive): host code that reads or writes
 * cudaMalloc memory through the device pointer. On a GPU that is a
 * segmentation fault; the emulator must end the process the same way, and
 * first say what was touched and at which line. "read" prints an element
 * after the kernel instead of copying it back; "write" fills the buffer
 * with memcpy (the C library's, so the line is found by unwinding) where
 * cudaMemcpy belongs; "past" reads just past the end. "handler" does the
 * read under a SIGSEGV handler of the program's own, as a test runner has
 * one, which must still run after the message. "freed" reads after the
 * cudaFree, and "freed_kernel" hands a kernel a freed pointer inside a
 * struct (which the launch's check of pointer arguments does not see): both
 * must be named as a use after cudaFree; "freed_copy" copies from it, which
 * a GPU refuses. "managed" and "copy" are the right
 * ways, and must run clean.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

__global__ void add_one(float *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] += 1.0f;
}

struct view {
    const float *p;
    int n;
};

__global__ void first_of(view v, float *out)
{
    out[0] = v.p[0];
}

static sigjmp_buf back;
static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(back, 1);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "copy";
    const int n = 100;
    float h[100];
    for (int i = 0; i < n; i++) h[i] = (float)i;
    float *d;
    if (strcmp(mode, "managed") == 0) {
        cudaMallocManaged((void **)&d, n * sizeof(float));
        for (int i = 0; i < n; i++) d[i] = (float)i; /* managed memory is the host's too */
        add_one<<<1, 128>>>(d, n);
        cudaDeviceSynchronize();
        printf("managed: d[5] = %.1f\n", d[5]);
        return 0;
    }
    cudaMalloc((void **)&d, n * sizeof(float));
    if (strcmp(mode, "freed_kernel") == 0) {
        float *out;
        cudaMalloc((void **)&out, sizeof(float));
        cudaFree(d);
        view v = {d, n};
        first_of<<<1, 1>>>(v, out);
        printf("freed_kernel: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
        return 0;
    }
    volatile size_t bytes = n * sizeof(float); /* not a constant: memcpy stays the library's */
    if (strcmp(mode, "write") == 0) {
        memcpy(d, h, bytes); /* the host writes device memory */
        printf("write: unreached\n");
        return 0;
    }
    /* Installed before the runtime's calls, as a test runner installs its
     * own for each test: the emulator's handler goes in front of it. */
    if (strcmp(mode, "handler") == 0) signal(SIGSEGV, on_segv);
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    add_one<<<1, 128>>>(d, n);
    cudaDeviceSynchronize();
    if (strcmp(mode, "read") == 0) {
        printf("read: d[5] = %.1f, unreached\n", d[5]); /* the host reads device memory */
        return 0;
    }
    if (strcmp(mode, "past") == 0) {
        volatile float *p = d;
        printf("past: %.1f, unreached\n", p[n + 3]); /* 12 bytes past the end */
        return 0;
    }
    if (strcmp(mode, "freed") == 0) {
        cudaFree(d);
        printf("freed: %.1f, unreached\n", d[5]); /* a read after the cudaFree */
        return 0;
    }
    if (strcmp(mode, "freed_copy") == 0) {
        cudaFree(d);
        printf("freed_copy: %s\n", cudaGetErrorName(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost)));
        return 0;
    }
    if (strcmp(mode, "handler") == 0) {
        if (sigsetjmp(back, 1) == 0) {
            volatile float x = d[5];
            (void)x;
            printf("handler: unreached\n");
        } else {
            printf("handler: the program's own SIGSEGV handler ran\n");
        }
        /* The runtime still works after it: the copy back opens the memory. */
    }
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%s: h[5] = %.1f\n", mode, h[5]);
    cudaFree(d);
    return 0;
}
