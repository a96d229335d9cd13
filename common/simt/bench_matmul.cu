/*
 * SIMT emulator benchmark: a 256 x 256 x 256 fp32 matmul with 16 x 16
 * shared-memory tiles (the lab-02 kernel), run on the CPU through the
 * emulator. It prints the seconds per launch (best of 5) and checks the
 * result against a double-precision reference, so a fast but wrong emulator
 * cannot post a figure. It measures the emulator, not a GPU.
 * Run: make simt-bench   (one worker thread: SIMT_WORKERS=1)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TILE 16

/* C (n x n) = A (n x n) * B (n x n), row-major; n a multiple of TILE. */
__global__ void matmul_tiled(int n, const float *A, const float *B, float *C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void)
{
    const int n = 256, reps = 5;
    size_t bytes = (size_t)n * n * sizeof(float);
    float *hA = (float *)malloc(bytes), *hB = (float *)malloc(bytes), *hC = (float *)malloc(bytes);
    srand(1);
    for (int i = 0; i < n * n; i++) {
        hA[i] = (float)rand() / RAND_MAX - 0.5f;
        hB[i] = (float)rand() / RAND_MAX - 0.5f;
    }
    float *A, *B, *C;
    cudaMalloc(&A, bytes);
    cudaMalloc(&B, bytes);
    cudaMalloc(&C, bytes);
    cudaMemcpy(A, hA, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(B, hB, bytes, cudaMemcpyHostToDevice);
    dim3 grid(n / TILE, n / TILE), block(TILE, TILE);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        matmul_tiled<<<grid, block>>>(n, A, B, C);
        cudaError_t e = cudaDeviceSynchronize();
        double t = now() - t0;
        if (e != cudaSuccess) {
            fprintf(stderr, "bench_matmul: launch failed: %s\n", cudaGetErrorString(e));
            return 1;
        }
        if (t < best) best = t;
    }
    cudaMemcpy(hC, C, bytes, cudaMemcpyDeviceToHost);
    double max_err = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double ref = 0.0, mag = 0.0;
            for (int k = 0; k < n; k++) {
                ref += (double)hA[i * n + k] * hB[k * n + j];
                mag += fabs((double)hA[i * n + k] * hB[k * n + j]);
            }
            double err = fabs(hC[i * n + j] - ref) / (mag > 0 ? mag : 1.0);
            if (!(err <= max_err)) max_err = err;
        }
    /* fp32 dot products of length n: relative to sum |a||b| the error is at
     * most about n * 2^-24 (Higham 3.1). */
    int ok = max_err <= n * 6e-8;
    printf("# emulated matmul %dx%dx%d, %dx%d tiles\n", n, n, n, TILE, TILE);
    printf("%-12s %-12s %-10s %s\n", "seconds", "GFLOP/s", "max_rel", "check");
    printf("%-12.4f %-12.4f %-10.2e %s\n", best, 2.0 * n * n * n / best * 1e-9, max_err, ok ? "ok" : "WRONG");
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    free(hA);
    free(hB);
    free(hC);
    return ok ? 0 : 1;
}
