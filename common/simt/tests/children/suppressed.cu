/*
 * Sanitizer check: the TSan flavour carries common/simt/tsan.supp itself.
 * Two threads write one variable unsynchronised in a function whose name
 * holds "_omp_fn", as the bodies GCC outlines from an OpenMP region do (a
 * suppression names them: libgomp's synchronisation is invisible to TSan).
 * Built with simtcc --sanitize=thread and run without TSAN_OPTIONS, it must
 * exit 0 with no report; without the built-in suppressions TSan reports the
 * race and the exit status is 66. It launches a kernel, as every program of
 * the emulator does, which links the part of the library that holds them.
 */
#include <pthread.h>
#include <stdio.h>

static int shared_count;

__global__ void noop(void) {}

static void *racer_omp_fn_0(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) shared_count++;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, racer_omp_fn_0, NULL);
    pthread_create(&b, NULL, racer_omp_fn_0, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    noop<<<1, 1>>>();
    printf("suppressed: ran (%d), launch: %s\n", shared_count > 0, cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
