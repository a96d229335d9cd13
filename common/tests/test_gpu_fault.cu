/*
 * What gpu.h does after a kernel faults, on the emulator and on a GPU alike:
 * the fault is sticky (the device refuses every later call, memory calls
 * included), gpu_sync_status() reports it without ending the process,
 * gpu_free() returns quietly so that the caller can report the fault, and a
 * later checked copy ends the process with a message that points back at
 * the kernel. A refused launch, by contrast, leaves the device usable.
 *
 * A fault spoils the device for the rest of the process, so each case runs
 * in a forked child; the parent makes no CUDA call at all (a CUDA context
 * does not survive fork). Built for the emulator (always) and for a real
 * GPU, where make gpu-check runs it: the emulator's model of sticky faults
 * is checked against the hardware there.
 */
#include <cuda_runtime.h>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h> /* cmocka 1.1 has no extern "C" of its own */
}
#include <string.h>

#include "child.h"
#include "gpu.h"

enum { NO_DEVICE = 77 };

/* Thread 0 loads a float4 from p + off: with off = 1 the address is 4 bytes
 * past a 16-byte boundary, which a GPU stops with "misaligned address". */
__global__ void load_float4(const float *p, float *out, int off) {
    float4 v = *reinterpret_cast<const float4 *>(p + off);
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

/* Child: fault, then check what each call reports. Exit codes say which
 * expectation failed (the parent prints the child's output with it). */
static int fault_then_calls(void *arg) {
    (void)arg;
    if (!gpu_available()) return NO_DEVICE;
    float *p = (float *)gpu_malloc(64 * sizeof(float)), *out = (float *)gpu_malloc(64 * sizeof(float));
    gpu_memset(p, 0, 64 * sizeof(float));
    char err[160];
    load_float4<<<1, 1>>>(p, out, 0);
    if (gpu_sync_status(err, sizeof err) != GPU_DONE) { printf("aligned load: %s\n", err); return 10; }

    load_float4<<<1, 1>>>(p, out, 1);
    int st = gpu_sync_status(err, sizeof err);
    printf("after the misaligned load: status %d, %s\n", st, err);
    if (st != GPU_FAULTED || !strstr(err, "cudaErrorMisalignedAddress")) return 11;
    if (!strstr(gpu_sticky_error(err, sizeof err), "cudaErrorMisalignedAddress")) return 12;
    void *q = NULL;
    if (cudaMalloc(&q, 256) == cudaSuccess) { printf("cudaMalloc succeeded after a fault\n"); return 13; }
    float h[4];
    if (cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess) {
        printf("cudaMemcpy succeeded after a fault\n");
        return 14;
    }
    gpu_free(p); /* must return: the fault is reported by whoever launched the kernel */
    printf("gpu_free returned\n");
    gpu_download(h, out, sizeof h); /* must end the process, pointing at the kernel */
    printf("gpu_download returned after a fault\n");
    return 15;
}

static void test_fault_is_sticky_and_reported(void **state) {
    (void)state;
    child_result_t r = run_in_child(fault_then_calls, NULL);
    if (r.exited && r.exit_code == NO_DEVICE) {
        print_message("no GPU: skipped (the emulator build runs this test)\n");
        skip();
    }
    /* The message names the call's own line here, not gpu.c's. */
    if (!r.exited || r.exit_code != 1 || !strstr(r.out, "gpu_free returned") ||
        !strstr(r.out, "since a kernel faulted before this call") || !strstr(r.out, "test_gpu_fault.cu:62"))
        fail_msg("child %s %d; its output:\n%s", r.exited ? "exited with" : "died on signal",
                 r.exited ? r.exit_code : r.signal, r.out);
}

/* Child: a launch the device refuses (more threads per block than any GPU
 * allows) is reported once, then the device works on. */
static int refused_then_fine(void *arg) {
    (void)arg;
    if (!gpu_available()) return NO_DEVICE;
    float *p = (float *)gpu_malloc(64 * sizeof(float)), *out = (float *)gpu_malloc(2048 * sizeof(float));
    char err[160];
    load_float4<<<1, 2048>>>(p, out, 0);
    int st = gpu_sync_status(err, sizeof err);
    printf("after the refused launch: status %d, %s\n", st, err);
    if (st != GPU_REFUSED || !strstr(err, "cudaErrorInvalidConfiguration")) return 10;
    if (strcmp(gpu_sticky_error(err, sizeof err), "no error") != 0) { printf("sticky: %s\n", err); return 11; }
    load_float4<<<1, 32>>>(p, out, 0);
    if (gpu_sync_status(err, sizeof err) != GPU_DONE) { printf("next launch: %s\n", err); return 12; }
    gpu_free(p);
    gpu_free(out);
    return 0;
}

static void test_refused_launch_is_not_sticky(void **state) {
    (void)state;
    child_result_t r = run_in_child(refused_then_fine, NULL);
    if (r.exited && r.exit_code == NO_DEVICE) {
        print_message("no GPU: skipped (the emulator build runs this test)\n");
        skip();
    }
    if (!r.exited || r.exit_code != 0)
        fail_msg("child %s %d; its output:\n%s", r.exited ? "exited with" : "died on signal",
                 r.exited ? r.exit_code : r.signal, r.out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_is_sticky_and_reported),
        cmocka_unit_test(test_refused_launch_is_not_sticky),
    };
    return cmocka_run_group_tests_name("gpu_fault", tests, NULL, NULL);
}
