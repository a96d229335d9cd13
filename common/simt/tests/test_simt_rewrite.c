/*
 * Tests of simt-rewrite's execution-space check. nvcc refuses a kernel that
 * calls a plain (host) function or most of the C++ standard library, host
 * code that calls a __device__ function or reads or writes a __device__
 * variable, and a kernel called without <<<...>>>; the emulator compiles
 * all of them
 * for the CPU, where they would run. So simt-rewrite reports them with
 * nvcc's message (the first group of tests), and must stay quiet on
 * everything nvcc accepts or may accept (the second group): a false report
 * would stop a correct student file from building at all. Each test writes
 * a small .cu file and runs simt-rewrite on it as a child process.
 * Last, the marks it puts around host functions: with SIMT_HOST_WERROR (a
 * lab's build) g++ then checks host code as nvcc's -Xcompiler
 * -Wall,-Wextra,-Werror does, and leaves kernels alone as nvcc does.
 * And a static __shared__ array that is never read, which nvcc refuses
 * under the labs' -Werror all-warnings, and a variable-length array in a
 * kernel, which it always refuses; and, in a lab's build (--memtrace), an
 * attribute that would turn off the emulator's checks of the file's own
 * accesses (no_sanitize).
 * Inline PTX: an asm statement of PTX becomes the emulator's instruction,
 * byte for byte as expected; PTX it does not model stops the build at its
 * line, and PTX whose text comes from a macro gets a note from simtcc.
 * The headers of a .cu file: rewritten with it, named in messages and
 * dependency files by their own names.
 * Last, the C++ it writes, byte for byte: launches, extern __shared__, the
 * calls it adds, its #line directives, and what it leaves alone in
 * comments and literals; and its messages on what it cannot read.
 * SIMT_REWRITE and SIMTCC are set by simt.mk to the programs' paths,
 * SIMT_LAB_WERROR to the warning flags of a lab's build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#if !defined(SIMT_REWRITE) || !defined(SIMTCC) || !defined(SIMT_LAB_WERROR)
#error "SIMT_REWRITE and SIMTCC must name the simt-rewrite and simtcc programs, SIMT_LAB_WERROR a lab's flags"
#endif

static char dir[] = "/tmp/simt-rewrite-XXXXXX";
static int status;
static char out[1 << 18]; /* the toolkit's headers draw long messages, a note at their end */

/* Write the len bytes of text (NUL bytes too) to dir/name.cu and run cmd (a
 * format naming the .cu, then dir and name) on it, output into out. */
static void run_on_bytes(const char *name, const char *text, size_t len, const char *fmt)
{
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/%s.cu", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    snprintf(cmd, sizeof cmd, fmt, path, dir, name);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = 0, k;
    while (n < sizeof out - 1 && (k = fread(out + n, 1, sizeof out - 1 - n, p)) > 0) n += k;
    out[n] = 0;
    int st = pclose(p);
    status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void run_on(const char *name, const char *text, const char *fmt)
{
    run_on_bytes(name, text, strlen(text), fmt);
}

/* simt-rewrite on the text, its messages into out, its C++ in dir/name.cpp. */
static void rewrite(const char *name, const char *text)
{
    run_on(name, text, "'" SIMT_REWRITE "' '%s' '%s/%s.cpp' 2>&1");
}

/* simtcc -c as labs/labs.mk compiles a lab's file (--memtrace, its flags), a
 * command for run_on. */
#define AS_LAB_MEMTRACE "'" SIMTCC "' --memtrace -O2 " SIMT_LAB_WERROR " -c '%s' -o '%s/%s.o' 2>&1"

/* simtcc -c with a lab's flags (labs/labs.mk's SIMT_LAB_WERROR), its messages into out. */
static void compile_as_lab(const char *name, const char *text)
{
    run_on(name, text, "'" SIMTCC "' -O2 " SIMT_LAB_WERROR " -c '%s' -o '%s/%s.o' 2>&1");
}

static void expect_error(const char *needle)
{
    if (status != 1 || !strstr(out, needle)) {
        print_error("expected exit 1 and \"%s\", got exit %d:\n%s\n", needle, status, out);
        fail();
    }
}

/* The last compile_as_lab built; what says what it holds. */
static void expect_built(const char *what)
{
    if (status != 0) {
        print_error("%s must build, got exit %d:\n%s\n", what, status, out);
        fail();
    }
}

static int count(const char *needle)
{
    int c = 0;
    for (const char *p = out; (p = strstr(p, needle)) != NULL; p++) c++;
    return c;
}

static void expect_accepted(void)
{
    if (status != 0 || out[0]) {
        print_error("expected a clean rewrite, got exit %d:\n%s\n", status, out);
        fail();
    }
}

/* --- what nvcc refuses ------------------------------------------------------ */

static void test_kernel_calls_host_helper(void **state)
{
    (void)state;
    rewrite("host_helper", "static float twice(float x) { return 2 * x; }\n"
                           "__global__ void scale(float *p, int n)\n"
                           "{\n"
                           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    if (i < n) p[i] = twice(p[i]);\n"
                           "}\n");
    expect_error("host_helper.cu:5: error: calling a __host__ function(\"twice\") from a __global__ "
                 "function(\"scale\") is not allowed");
    expect_error("mark twice __device__");
}

static void test_device_function_calls_host_helper(void **state)
{
    (void)state;
    /* The helper is only declared here (defined in a .c file, say), inside
     * an anonymous namespace, or both: still a host function. */
    rewrite("device_helper", "float from_c(float x);\n"
                             "namespace { int idx(int r, int c, int ld) { return r * ld + c; } }\n"
                             "__device__ __forceinline__ float load(const float *a, int r, int c, int ld)\n"
                             "{\n"
                             "    return from_c(a[idx(r, c, ld)]);\n"
                             "}\n");
    expect_error("device_helper.cu:5: error: calling a __host__ function(\"from_c\") from a __device__ "
                 "function(\"load\")");
    expect_error("device_helper.cu:5: error: calling a __host__ function(\"idx\") from a __device__ function");
}

/* A __host__ __device__ function is compiled for both sides: nvcc refuses
 * its call of a __device__ function, and of a host function or std::min
 * warns (#20011-D, #20013-D), which -Werror all-warnings makes errors;
 * whether or not anything calls it. Under #ifdef __CUDA_ARCH__ / #ifndef,
 * or in a template (checked per instantiation), it is left alone. */
static void test_both_spaces_call_one(void **state)
{
    (void)state;
    rewrite("both", "#include <algorithm>\n"
                    "static float host_only(float x) { return 2 * x; }\n"
                    "__device__ float dev_only(float x) { return 3 * x; }\n"
                    "__host__ __device__ float a(float x) { return host_only(x); }\n"
                    "__host__ __device__ float b(float x) { return dev_only(x); }\n"
                    "__host__ __device__ int c(int x, int y) { return std::min(x, y); }\n");
    expect_error("both.cu:4: error: calling a __host__ function(\"host_only\") from a __host__ __device__ "
                 "function(\"a\") is not allowed");
    expect_error("mark host_only __host__ __device__, or put the call under #ifndef __CUDA_ARCH__");
    expect_error("both.cu:5: error: calling a __device__ function(\"dev_only\") from a __host__ __device__ "
                 "function(\"b\") is not allowed");
    expect_error("both.cu:6: error: calling a __host__ function(\"std::min\") from a __host__ __device__ "
                 "function(\"c\") is not allowed");
    rewrite("both_fine", "float host_only(float x) { return 2 * x; }\n"
                         "__device__ float dev_only(float x) { return 3 * x; }\n"
                         "__host__ __device__ float sq(float x) { return x * x; }\n"

                         "__host__ __device__ float a(float x)\n"
                         "{\n"
                         "#ifdef __CUDA_ARCH__\n"
                         "    return dev_only(x);\n"
                         "#else\n"
                         "    return host_only(x);\n"
                         "#endif\n"
                         "}\n"
                         "__host__ __device__ float b(float x) { return sq(x) + 1; }\n"
                         "template <typename T> __host__ __device__ T c(T x) { return host_only(x); }\n"
                         "__global__ void k(float *p) { p[0] = a(p[0]) + b(p[1]); }\n");
    expect_accepted();
}

/* constexpr alone leaves a function on the host: nvcc 13 refuses its call
 * in a kernel, in a constant expression too (an array size, a constexpr
 * local), as the course does not pass --expt-relaxed-constexpr. */
static void test_kernel_calls_constexpr_host(void **state)
{
    (void)state;
    rewrite("cexpr", "constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }\n"
                     "__global__ void k(float *o, int n)\n"
                     "{\n"
                     "    __shared__ float t[ceil_div(64, 8)];\n"
                     "    constexpr int m = ceil_div(10, 3);\n"
                     "    t[threadIdx.x % 8] = m;\n"
                     "    __syncthreads();\n"
                     "    o[threadIdx.x] = t[0] + ceil_div(n, 3);\n"
                     "}\n");
    expect_error("cexpr.cu:4: error: calling a constexpr __host__ function(\"ceil_div\") from a __global__ "
                 "function(\"k\") is not allowed");
    expect_error("cexpr.cu:5: error: calling a constexpr __host__ function");
    expect_error("cexpr.cu:8: error: calling a constexpr __host__ function");
    expect_error("mark it __host__ __device__");
    assert_int_equal(count("error:"), 3);
}

static void test_host_calls_device_function(void **state)
{
    (void)state;
    rewrite("host_device", "__device__ float relu(float x) { return x > 0 ? x : 0; }\n"
                           "extern \"C\" float relu_host(float x)\n"
                           "{\n"
                           "    return relu(x);\n"
                           "}\n");
    expect_error("host_device.cu:4: error: calling a __device__ function(\"relu\") from a __host__ "
                 "function(\"relu_host\") is not allowed");
}

static void test_kernel_called_without_launch(void **state)
{
    (void)state;
    rewrite("no_launch", "template <int TILE> __global__ void __launch_bounds__(256) fill(float *p) { p[0] = TILE; }\n"
                         "__global__ void child(float *p) { p[0] = 1; }\n"
                         "__global__ void parent(float *p) { child(p); }\n"
                         "void run(float *p)\n"
                         "{\n"
                         "    child<<<1, 1>>>(p);\n"
                         "    child(p);\n"
                         "    fill<16><<<1, 1>>>(p);\n"
                         "}\n");
    expect_error("no_launch.cu:3: error: a __global__ function call must be configured");
    expect_error("no_launch.cu:7: error: a __global__ function call must be configured: launch child with "
                 "child<<<grid, block>>>(...)");
    assert_int_equal(count("error:"), 2);
}

/* The reverse: <<<...>>> on a function that is not a kernel (the usual
 * cause: __device__ written where __global__ was meant). Here the launch
 * would run it; nvcc refuses it. A kernel (a template one too), a
 * qualified name and a name declared in two spaces are left alone. */
static void test_launch_of_non_kernel(void **state)
{
    (void)state;
    rewrite("not_kernel", "__device__ void scale(float *p) { p[threadIdx.x] *= 2; }\n"
                          "static void fill(float *p) { p[0] = 1; }\n"
                          "template <int N> __device__ void add(float *p) { p[threadIdx.x] += N; }\n"
                          "template <int N> __global__ void sub(float *p) { p[threadIdx.x] -= N; }\n"
                          "namespace g { __global__ void clear(float *p) { p[0] = 0; } }\n"
                          "void run(float *p)\n"
                          "{\n"
                          "    scale<<<1, 32>>>(p);\n"
                          "    fill<<<1, 1>>>(p);\n"
                          "    add<4><<<1, 32>>>(p);\n"
                          "    sub<4><<<1, 32>>>(p);\n"
                          "    g::clear<<<1, 1>>>(p);\n"
                          "}\n");
    expect_error("not_kernel.cu:8: error: a __device__ function call cannot be configured");
    expect_error("not_kernel.cu:8: note: only a kernel is launched with <<<...>>>: mark scale __global__");
    expect_error("not_kernel.cu:9: error: a host function call cannot be configured");
    expect_error("not_kernel.cu:10: error: a __device__ function call cannot be configured");
    assert_int_equal(count("error:"), 3);
}

/* Every call is reported, not just the first, each at its own line. */
static void test_every_call_reported(void **state)
{
    (void)state;
    rewrite("several", "int clampi(int v, int hi) { return v < hi ? v : hi; }\n"
                       "extern \"C\" {\n"
                       "__global__ void k(int *p, int n)\n"
                       "{\n"
                       "    p[0] = clampi(p[0], n);\n"
                       "    p[1] = clampi(p[1],\n"
                       "                  n) + clampi(p[2], n);\n"
                       "}\n"
                       "}\n");
    assert_int_equal(status, 1);
    assert_int_equal(count("error: calling a __host__ function(\"clampi\")"), 3);
    assert_non_null(strstr(out, "several.cu:5:"));
    assert_non_null(strstr(out, "several.cu:6:"));
    assert_non_null(strstr(out, "several.cu:7:"));
}

/* The standard library in a kernel: nvcc refuses std::min, std::max,
 * std::numeric_limits<T>::infinity() and the like there (the course does
 * not pass --expt-relaxed-constexpr); a CPU runs them. */
static void test_kernel_calls_std_library(void **state)
{
    (void)state;
    rewrite("std_lib", "#include <algorithm>\n"
                       "#include <limits>\n"
                       "__device__ float row_max(const float *x, int n)\n"
                       "{\n"
                       "    float m = -std::numeric_limits<float>::infinity();\n"
                       "    for (int i = 0; i < n; i++) m = std::max(m, x[i]);\n"
                       "    return m;\n"
                       "}\n"
                       "__global__ void k(float *p) { std::swap(p[0], p[1]); }\n");
    expect_error("std_lib.cu:5: error: calling a __host__ function(\"std::numeric_limits<float>::infinity\") from a "
                 "__device__ function(\"row_max\") is not allowed");
    expect_error("std_lib.cu:6: error: calling a __host__ function(\"std::max\")");
    expect_error("std_lib.cu:9: error: calling a __host__ function(\"std::swap\") from a __global__ function");
    expect_error("use min, max, fminf or fmaxf, INFINITY or FLT_MAX");
    assert_int_equal(count("error:"), 3);
}

/* Host code reading or writing a __device__ or __constant__ variable:
 * nvcc warns (an error with the course's -Werror all-warnings), and on a
 * GPU the host's copy is one no kernel sees; here both share one, so the
 * program would work. The symbol API, sizeof, '&' and __managed__
 * variables are fine (test_accepts_symbol_api). */
static void test_host_uses_device_variable(void **state)
{
    (void)state;
    rewrite("gpu_var", "__device__ float g_scale;\n"
                       "__constant__ float g_taps[4];\n"
                       "__global__ void k(float *p) { p[0] *= g_scale + g_taps[0]; }\n"
                       "extern \"C\" float setup(float s)\n"
                       "{\n"
                       "    g_scale = s;\n"
                       "    g_taps[1] += s;\n"
                       "    return g_scale;\n"
                       "}\n");
    expect_error("gpu_var.cu:6: error: a __device__ variable \"g_scale\" cannot be directly written in a host function");
    expect_error("gpu_var.cu:7: error: a __constant__ variable \"g_taps\" cannot be directly written in a host function");
    expect_error("gpu_var.cu:8: error: a __device__ variable \"g_scale\" cannot be directly read in a host function");
    expect_error("cudaMemcpyToSymbol(g_scale, &value, sizeof value)");
    assert_int_equal(count("error:"), 3);
}

/* --- what nvcc accepts, or may ---------------------------------------------- */

/* __device__, __host__ __device__ (constexpr too) and template __device__
 * functions from a kernel; a constexpr host function from host code. */
static void test_accepts_device_and_both(void **state)
{
    (void)state;
    rewrite("fine", "#include <stdio.h>\n"
                    "__device__ float sq(float x) { return x * x; }\n"
                    "__host__ __device__ inline float half_of(float x) { return x / 2; }\n"
                    "static __device__ __forceinline__ float cube(float x) { return sq(x) * x; }\n"
                    "template <int N> __device__ float times(float x) { return N * x; }\n"
                    "constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }\n"
                    "__host__ __device__ constexpr int round_up(int a, int b) { return (a + b - 1) / b * b; }\n"
                    "__global__ void k(float *p) {\n"
                    "    p[0] = sq(p[0]) + cube(p[1]) + half_of(p[2]) + times<3>(p[3]) + round_up(7, 2);\n"
                    "    printf(\"%f\\n\", p[0]);\n"
                    "}\n"
                    "int main(void) {\n"
                    "    float *p = 0;\n"
                    "    k<<<ceil_div(100, 32), 32>>>(p);\n"
                    "    return (int)half_of(4.0f);\n"
                    "}\n");
    expect_accepted();
}

/* Specifiers from a macro (this file's or a header's), a name declared in
 * both spaces, and code under #if __CUDA_ARCH__ or __SIMT_EMULATOR__. */
static void test_accepts_what_it_cannot_see(void **state)
{
    (void)state;
    rewrite("unseen", "#define HD __host__ __device__\n"
                      "HD float a(float x) { return x; }\n"
                      "DEVICE_INLINE float b(float x) { return x; }\n"
                      "float c(float x);\n"
                      "__device__ float c(float x) { return x; }\n"
                      "float d(float x) { return x; }\n"
                      "__device__ float d(double x) { return (float)x; }\n"
                      "float host_only(float x) { return x; }\n"
                      "__global__ void k(float *p)\n"
                      "{\n"
                      "    p[0] = a(p[0]) + b(p[1]) + c(p[2]) + d((double)p[3]);\n"
                      "#ifndef __CUDA_ARCH__\n"
                      "    p[1] = host_only(p[1]);\n"
                      "#elif defined(__SIMT_EMULATOR__)\n"
                      "    p[2] = host_only(p[2]);\n"
                      "#endif\n"
                      "}\n");
    expect_accepted();
}

/* Calls that only look like calls of a file's host function: members,
 * qualified names, a local of the same name, a
 * declaration with an initializer, a function-style cast. */
static void test_accepts_other_meanings(void **state)
{
    (void)state;
    rewrite("others", "#include <math.h>\n"
                      "struct acc { float v; __device__ float get() const { return v; } };\n"
                      "float get() { return 0; }\n"
                      "float scale(float x) { return x; }\n"
                      "float offset(float x) { return x; }\n"
                      "float twice(float x) { return 2 * x; }\n"
                      "namespace ops { __device__ float scale(float x) { return x; } }\n"
                      "static int (*picker)(int);\n"
                      "__global__ void k(float *p, acc a, float offset)\n"
                      "{\n"
                      "    auto twice = [](float x) { return 2 * x; };\n"
                      "    p[0] = a.get() + ops::scale(p[0]) + twice(p[1]) + offset;\n"
                      "    float get(2.0f);\n"
                      "    p[1] = get + float(p[3]) + int(p[4]) + sqrtf(p[5]);\n"
                      "}\n");
    expect_accepted();
}

/* <cmath> functions and std::move in a kernel, and the rest of the
 * standard library in host code and in __host__ __device__ functions under
 * #ifndef __CUDA_ARCH__, are what nvcc accepts. */
static void test_accepts_std_where_allowed(void **state)
{
    (void)state;
    rewrite("std_ok", "#include <algorithm>\n"
                      "#include <cmath>\n"
                      "#include <limits>\n"
                      "#include <utility>\n"
                      "__global__ void k(float *p)\n"
                      "{\n"
                      "    float a = std::fmax(p[0], 0.f) + std::sqrt(p[1]) + std::exp(p[2]);\n"
                      "    p[3] = std::move(a) + (float)std::size_t(3);\n"
                      "}\n"
                      "__host__ __device__ float both(float a, float b)\n"
                      "{\n"
                      "#ifndef __CUDA_ARCH__\n"
                      "    return std::max(a, b);\n"
                      "#else\n"
                      "    return fmaxf(a, b);\n"
                      "#endif\n"
                      "}\n"
                      "int main(void)\n"
                      "{\n"
                      "    float inf = std::numeric_limits<float>::infinity();\n"
                      "    return (int)std::min(both(1.f, 2.f), inf);\n"
                      "}\n");
    expect_accepted();
}

static void test_accepts_symbol_api(void **state)
{
    (void)state;
    rewrite("symbols", "__device__ float g_scale;\n"
                       "__constant__ float g_taps[4];\n"
                       "__managed__ int g_count;\n"
                       "__global__ void k(float *p) { g_scale = p[0] * g_taps[1]; g_count++; }\n"
                       "extern \"C\" float setup(float s)\n"
                       "{\n"
                       "    cudaMemcpyToSymbol(g_scale, &s, sizeof s);\n"
                       "    cudaMemcpyToSymbol(g_taps, &s, sizeof(g_taps[0]), 2 * sizeof(float));\n"
                       "    float *p;\n"
                       "    cudaGetSymbolAddress((void **)&p, g_taps);\n"
                       "    float *q = &g_scale;\n"
                       "    cudaMemcpyFromSymbol(&s, g_scale, sizeof s);\n"
                       "    g_count = 0;\n"
                       "    float g_scale_copy = s;\n"
                       "    return g_scale_copy + (float)sizeof(g_taps) + (float)g_count + *p + *q;\n"
                       "}\n");
    expect_accepted();
}

/* Host code may call host functions, launch kernels, pass them as
 * pointers, and hold device lambdas. */
static void test_accepts_host_code(void **state)
{
    (void)state;
    rewrite("host", "__global__ void k(float *p) { p[0] = 1; }\n"
                    "__device__ float dev(float x) { return x; }\n"
                    "static int plus(int a, int b) { return a + b; }\n"
                    "int main(void)\n"
                    "{\n"
                    "    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n"
                    "    void *f = (void *)k;\n"
                    "    auto lam = [] __device__ (float x) { return dev(x); };\n"
                    "    (void)lam;\n"
                    "    k<<<plus(1, 1), 32>>>((float *)f);\n"
                    "    return plus(0, 0);\n"
                    "}\n");
    expect_accepted();
}

/* --- host code under the host compiler's warnings ----------------------------- */

/* The marks: on a line of their own before each host function, with a
 * #line after them (messages keep their lines and columns), and after its
 * closing brace; nowhere near a kernel or a __device__ function. */
static void test_host_functions_marked(void **state)
{
    (void)state;
    rewrite("marks", "__global__ void k(float *p) { p[0] = 1; }\n"
                     "__device__ float d(float x) { return x; }\n"
                     "extern \"C\" int launch(float *p)\n"
                     "{\n"
                     "    k<<<1, 1>>>(p);\n"
                     "    return 0;\n"
                     "}\n");
    expect_accepted();
    char path[512];
    snprintf(path, sizeof path, "%s/marks.cpp", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char want[1024];
    snprintf(want, sizeof want, "\nSIMT_HOST_CODE_BEGIN\n#line 3 \"%s/marks.cu\"\nextern \"C\" int launch(float *p)\n",
             dir);
    if (!strstr(text, want)) {
        print_error("no mark before launch in:\n%s\n", text);
        fail();
    }
    assert_non_null(strstr(text, "\n} SIMT_HOST_CODE_END"));
    snprintf(out, sizeof out, "%s", text);
    assert_int_equal(count("SIMT_HOST_CODE_BEGIN"), 1);
    assert_int_equal(count("\n"), 10); /* #line, the mark and its #line, the file's 7 lines */
}

/* An unused parameter or a signed/unsigned comparison in a host function
 * stops a lab's build, as nvcc's host compiler (-Wall,-Wextra,-Werror)
 * stops it; the same in a kernel, which nvcc never shows its host compiler,
 * does not. */
static void test_host_code_warnings_are_errors(void **state)
{
    (void)state;
    compile_as_lab("host_unused", "extern \"C\" int launch(float *p, int n, int unused)\n"
                                  "{\n"
                                  "    (void)p;\n"
                                  "    return n;\n"
                                  "}\n");
    expect_error("host_unused.cu:1:44: error: unused parameter"); /* the column of "unused" */
    compile_as_lab("host_compare", "#include <stddef.h>\n"
                                   "extern \"C\" int count_up(int n, size_t m)\n"
                                   "{\n"
                                   "    int c = 0;\n"
                                   "    for (int i = 0; i < m; i++) c += n;\n"
                                   "    return c;\n"
                                   "}\n");
    expect_error("host_compare.cu:5");
    expect_error("different signedness");
    compile_as_lab("kernel_same", "__global__ void k(float *p, int n, int unused)\n"
                                  "{\n"
                                  "    for (int i = 0; i < blockDim.x; i++) p[i] = n;\n"
                                  "}\n"
                                  "extern \"C\" int launch(float *p, int n)\n"
                                  "{\n"
                                  "    k<<<1, 32>>>(p, n, 0);\n"
                                  "    return cudaGetLastError() == cudaSuccess ? 0 : 1;\n"
                                  "}\n");
    expect_built("a kernel's unused parameter and comparison");
}

/* A static __shared__ array never named again ("declared but never
 * referenced", #177-D) or only stored to ("set but never used", #550-D)
 * stops nvcc under the labs' -Werror all-warnings; it stops the lab's
 * emulated build too. The last file, whose arrays are read directly,
 * through a macro, a pointer or a compound assignment, nvcc accepts with the
 * same flags, and so must the emulator. */
static void test_unused_shared_is_an_error(void **state)
{
    (void)state;
    compile_as_lab("shared_unused", "__global__ void k(float *o)\n"
                                    "{\n"
                                    "    __shared__ float tile[32];\n"
                                    "    o[threadIdx.x] = 1.0f;\n"
                                    "}\n"
                                    "void launch(float *o) { k<<<1, 32>>>(o); }\n");
    expect_error("shared_unused.cu:3:22: error: unused variable");
    compile_as_lab("shared_stored", "__global__ void k(const float *a, float *o)\n"
                                    "{\n"
                                    "    __shared__ float As[2][32];\n"
                                    "    As[0][threadIdx.x] = a[threadIdx.x];\n"
                                    "    __syncthreads();\n"
                                    "    o[threadIdx.x] = a[threadIdx.x];\n"
                                    "}\n"
                                    "void launch(const float *a, float *o) { k<<<1, 32>>>(a, o); }\n");
    expect_error("shared_stored.cu:3");
    expect_error("As_is_stored_to_but_never_read");
    compile_as_lab("shared_used",
                   "#define AT(i) u[i]\n"
                   "__global__ void b(float *o) { __shared__ float u[32]; AT(threadIdx.x) = 1; __syncthreads(); o[0] = AT(0); }\n"
                   "__global__ void e(float *o) { __shared__ float x[32]; { x[threadIdx.x] = 2; } __syncthreads(); o[0] = x[0]; }\n"
                   "__global__ void f(float *o) { __shared__ float y[32]; float *p = &y[0]; p[threadIdx.x] = 1; __syncthreads(); o[0] = y[1]; }\n"
                   "__global__ void h(float *o) { __shared__ float acc[32]; acc[threadIdx.x] = 0; acc[threadIdx.x] += 1; o[0] = 1; }\n"
                   "template <int N> __global__ void t(float *o) { __shared__ float z[N]; z[threadIdx.x] = 1; __syncthreads(); o[0] = z[N - 1]; }\n"
                   "void launch(float *o) { b<<<1, 32>>>(o); e<<<1, 32>>>(o); f<<<1, 32>>>(o); h<<<1, 32>>>(o); t<32><<<1, 32>>>(o); }\n");
    expect_built("shared arrays that are read");
}

/* __shared__ float sum = 0: nvcc refuses an initializer on a __shared__
 * variable; the emulator's thread-local static would take it once per OS
 * thread and carry the last block's value into the next. Comparisons in
 * the array's size are not initializers. */
static void test_shared_initializer_refused(void **state)
{
    (void)state;
    rewrite("shared_init", "__global__ void total(const float *x, float *out)\n"
                           "{\n"
                           "    __shared__ float sum = 0.0f;\n"
                           "    atomicAdd(&sum, x[threadIdx.x]);\n"
                           "    __syncthreads();\n"
                           "    if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
                           "}\n");
    expect_error("shared_init.cu:3: error: simt-rewrite: initializer not allowed for __shared__ variable");
    rewrite("shared_sizes", "#define N 4\n"
                            "__global__ void k(float *o)\n"
                            "{\n"
                            "    __shared__ float s[N == 4 ? 32 : 64];\n"
                            "    __shared__ __align__(16) float t[(N >= 1) ? 8 : 4];\n"
                            "    s[threadIdx.x] = 1;\n"
                            "    t[threadIdx.x % 8] = 2;\n"
                            "    __syncthreads();\n"
                            "    o[threadIdx.x] = s[0] + t[0];\n"
                            "}\n");
    expect_accepted();
}

/* A variable-length array in a kernel: nvcc refuses it ("expression must
 * have a constant value"), g++ would take it; simtcc refuses it in every
 * build. nvcc accepts one in a host function, and so must the emulator. */
static void test_vla_in_kernel_is_an_error(void **state)
{
    (void)state;
    run_on("vla_kernel",
           "__global__ void k(float *o, int n)\n"
           "{\n"
           "    float t[n];\n"
           "    for (int i = 0; i < n; i++) t[i] = (float)i;\n"
           "    o[threadIdx.x] = t[n - 1];\n"
           "}\n"
           "void launch(float *o) { k<<<1, 32>>>(o, 4); }\n",
           "'" SIMTCC "' -O2 -c '%s' -o '%s/%s.o' 2>&1");
    expect_error("vla_kernel.cu:3");
    expect_error("variable length array");
    compile_as_lab("vla_host", "__global__ void k(float *o, float v) { o[threadIdx.x] = v; }\n"
                               "extern \"C\" int launch(float *o, int n)\n"
                               "{\n"
                               "    float t[n];\n"
                               "    for (int i = 0; i < n; i++) t[i] = (float)i;\n"
                               "    k<<<1, 32>>>(o, t[n - 1]);\n"
                               "    return cudaGetLastError() == cudaSuccess ? 0 : 1;\n"
                               "}\n");
    expect_built("a host function's variable-length array");
}

/* CUB, Thrust and libcu++ are the toolkit's, not the emulator's: a file
 * that includes one fails, and a note at its #include says why, where the
 * compiler says only "No such file or directory". A file that fails for
 * another reason gets no such note. */
static void test_toolkit_libraries_named(void **state)
{
    (void)state;
    const char *cmd = "'" SIMTCC "' -O2 -c '%s' -o '%s/%s.o' 2>&1";
    run_on("uses_thrust", "#include <cstdio>\n#  include <thrust/device_vector.h>\nint main() { return 0; }\n", cmd);
    expect_error("uses_thrust.cu:2: note: CUB, Thrust and libcu++ (<cub/...>, <thrust/...>, <cuda/...>) are "
                 "libraries of the CUDA toolkit that the emulator does not have");
    run_on("uses_cub", "#include \"cub/block/block_reduce.cuh\"\n", cmd);
    expect_error("uses_cub.cu:1: note: CUB, Thrust");
    run_on("uses_libcu", "#include <cuda/barrier>\n", cmd);
    expect_error("uses_libcu.cu:1: note: CUB, Thrust");
    run_on("other_error", "#include <cuda_runtime.h>\nint main() { return undeclared; }\n", cmd);
    expect_error("was not declared in this scope");
    if (strstr(out, "note: CUB")) fail_msg("a note on CUB for a file that includes none of it:\n%s", out);
    if (strstr(out, "header of the CUDA toolkit")) fail_msg("a note on the toolkit's headers:\n%s", out);
    /* Another header of the toolkit's that the emulator does not provide is
     * found where the toolkit is installed, and fails in the toolkit's own
     * code; simtcc names it. Where no toolkit is on the compiler's path,
     * the header is simply not found. */
    /* math_constants.h, the toolkit's too, builds: the note names the
     * header whose includes failed. */
    run_on("uses_cublas",
           "#include <cstdio>\n#include <math_constants.h>\n#include <cublas_v2.h>\n"
           "__global__ void k(float *o) { o[0] = CUDART_PI_F; }\n",
           cmd);
    if (status == 0) fail_msg("cublas_v2.h built:\n%s", out);
    if (!strstr(out, ": No such file or directory")) {
        expect_error("uses_cublas.cu:3: note: <cublas_v2.h> is a header of the CUDA toolkit (");
        if (strstr(out, "<math_constants.h> is a header")) fail_msg("the note names a header that built:\n%s", out);
    }
    /* Headers that nvcc's cuda_runtime.h includes are the emulator's own;
     * device_functions.h warns as nvcc's does, an error in a lab's build
     * (nvcc's -Werror). */
    run_on("uses_device_functions", "#include <device_functions.h>\n__global__ void k(float *o) { o[0] = __fdividef(1.0f, 3.0f); }\n", cmd);
    if (status != 0 || !strstr(out, "device_functions.h is an internal header"))
        fail_msg("device_functions.h: expected a build with a warning, got exit %d:\n%s", status, out);
    compile_as_lab("lab_device_functions", "#include <device_functions.h>\n__global__ void k(float *o) { o[0] = 1.0f; }\n");
    expect_error("device_functions.h is an internal header");
    /* The pipeline's barrier form is not emulated: its call stops the build. */
    run_on("uses_arrive_on",
           "#include <cuda_pipeline.h>\n"
           "__global__ void k(float *o, unsigned long long *bar) { __shared__ float s[4]; __pipeline_memcpy_async(s, o, 16); "
           "__pipeline_arrive_on(bar); o[0] = s[0]; }\n",
           cmd);
    expect_error("__pipeline_arrive_on and pipeline::arrive_on are not emulated");
    /* APIs whose answer the emulator cannot give as a GPU would stop the
     * build with why, at the call. */
    run_on("uses_occupancy",
           "__global__ void k(float *o) { o[0] = 1; }\n"
           "int main() { int n; return (int)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, 128, 0); }\n",
           cmd);
    expect_error("cudaOccupancy* is not emulated");
    run_on("uses_void_launch",
           "__global__ void k(float *o) { o[0] = 1; }\n"
           "int main() { float *o = 0; void *a[] = {&o}; return (int)cudaLaunchKernel((const void *)k, dim3(1), dim3(1), a); }\n",
           cmd);
    expect_error("pass the kernel itself");
    run_on("uses_cooperative",
           "__global__ void k(float *o) { o[0] = 1; }\n"
           "int main() { float *o = 0; void *a[] = {&o}; return (int)cudaLaunchCooperativeKernel(k, dim3(1), dim3(1), a); }\n",
           cmd);
    expect_error("cudaLaunchCooperativeKernel is not emulated");
}

/* A lab's file (simtcc --memtrace, as labs/labs.mk builds one) may not turn
 * off, for its own code, what the emulator compiles into it: with
 * no_sanitize("thread") on a kernel, its loads and stores went past the
 * memory tracer and the checks' guard zones, and a load past a buffer's end
 * passed every check. Spelled out, through a macro of the course's headers
 * or one of its own, it stops the build at its line; the headers' own uses
 * (mma.h's untraced stand-ins) and a build without --memtrace are left
 * alone. */
static void test_memtrace_refuses_no_sanitize(void **state)
{
    (void)state;
    const char *attr = "__global__ void k(const float *a, float *o, int n)\n"
                       "{\n"
                       "    int i = threadIdx.x;\n"
                       "    float v = a[i];\n"
                       "    if (i < n) o[i] = v;\n"
                       "}\n"
                       "__global__ __attribute__((no_sanitize(\"thread\"))) void k2(const float *a, float *o) { o[0] = a[0]; }\n"
                       "extern \"C\" void launch(const float *a, float *o) { k<<<1, 32>>>(a, o, 1); k2<<<1, 1>>>(a, o); }\n";
    run_on("ns_attr", attr, AS_LAB_MEMTRACE);
    expect_error("ns_attr.cu:7: error: this line turns a sanitizer off");
    if (count("turns a sanitizer off") != 1) {
        print_error("one line turns a sanitizer off, reported %d times:\n%s\n", count("turns a sanitizer off"), out);
        fail();
    }
    run_on("ns_header_macro",
           "SIMT_UNTRACED __global__ void k(const float *a, float *o) { o[threadIdx.x] = a[threadIdx.x]; }\n"
           "extern \"C\" void launch(const float *a, float *o) { k<<<1, 32>>>(a, o); }\n",
           AS_LAB_MEMTRACE);
    expect_error("ns_header_macro.cu:1: error: this line turns a sanitizer off");
    run_on("ns_own_macro",
           "#define QUIET(what) __attribute__((no_ ## sanitize(what)))\n"
           "\n"
           "__global__ QUIET(\"alignment\") void k(const float *a, float *o) { o[threadIdx.x] = a[threadIdx.x]; }\n"
           "extern \"C\" void launch(const float *a, float *o) { k<<<1, 32>>>(a, o); }\n",
           AS_LAB_MEMTRACE);
    expect_error("ns_own_macro.cu:3: error: this line turns a sanitizer off");
    run_on("ns_wmma",
           "#include <mma.h>\n"
           "using namespace nvcuda;\n"
           "__global__ void k(const __nv_bfloat16 *a, float *o)\n"
           "{\n"
           "    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;\n"
           "    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;\n"
           "    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;\n"
           "    wmma::fill_fragment(acc, 0.0f);\n"
           "    wmma::load_matrix_sync(fa, a, 16);\n"
           "    wmma::load_matrix_sync(fb, a, 16);\n"
           "    wmma::mma_sync(acc, fa, fb, acc);\n"
           "    wmma::store_matrix_sync(o, acc, 16, wmma::mem_row_major);\n"
           "}\n"
           "extern \"C\" void launch(const __nv_bfloat16 *a, float *o) { k<<<1, 32>>>(a, o); }\n",
           AS_LAB_MEMTRACE);
    expect_built("a wmma kernel (mma.h's stand-ins are untraced on purpose)");
    run_on("ns_text",
           "#include <stdio.h>\n"
           "__global__ void k(float *o) { o[threadIdx.x] = 1.0f; }\n"
           "extern \"C\" void launch(float *o) { printf(\"sanitize, sanitizer, -fsanitize=thread\\n\"); k<<<1, 32>>>(o); }\n",
           AS_LAB_MEMTRACE);
    expect_built("a string that mentions sanitizers");
    run_on("ns_plain", attr, "'" SIMTCC "' -O2 -c '%s' -o '%s/%s.o' 2>&1");
    expect_built("no_sanitize without --memtrace (not a lab's build)");
}

/* A lab's file whose code depends on __CUDA_ARCH__ or __SIMT_EMULATOR__
 * runs one branch here and another on a GPU: its build notes the first such
 * line (and builds); a comment naming the macro, or a build without
 * --memtrace (not a lab's), says nothing. */
static void test_memtrace_notes_arch_branches(void **state)
{
    (void)state;
    const char *text = "/* __CUDA_ARCH__ is not tested here */\n"
                       "__global__ void k(float *o)\n"
                       "{\n"
                       "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
                       "    o[threadIdx.x] = 2.0f;\n"
                       "#else\n"
                       "    o[threadIdx.x] = 1.0f;\n"
                       "#endif\n"
                       "#ifdef __SIMT_EMULATOR__\n"
                       "#endif\n"
                       "}\n"
                       "extern \"C\" void launch(float *o) { k<<<1, 32>>>(o); }\n";
    run_on("arch_branch", text, AS_LAB_MEMTRACE);
    expect_built("a kernel with an #if on __CUDA_ARCH__");
    if (!strstr(out, "arch_branch.cu:4: note: this line tests __CUDA_ARCH__: the emulator leaves") ||
        count("note: this line tests") != 1) {
        print_error("want one note, at line 4:\n%s\n", out);
        fail();
    }
    run_on("arch_plain", text, "'" SIMTCC "' -O2 -c '%s' -o '%s/%s.o' 2>&1");
    expect_built("the same file outside a lab's build");
    if (strstr(out, "note: this line tests")) {
        print_error("a build without --memtrace notes it:\n%s\n", out);
        fail();
    }
}

/* max or min of two bf16 (or two half) values: ambiguous to nvcc, which
 * the emulator's build now says too; with a float on one side, and fmaxf,
 * both compile. */
static void test_half_min_max(void **state)
{
    (void)state;
    compile_as_lab("hmax", "#include <cuda_bf16.h>\n"
                           "__global__ void k(__nv_bfloat16 *b, __half *h, float *o)\n"
                           "{\n"
                           "    o[0] = __bfloat162float(max(b[0], b[1])) + __half2float(min(h[0], h[1]));\n"
                           "}\n");
    expect_error("hmax.cu:4");
    expect_error("use of deleted function");
    compile_as_lab("hmax_fine", "#include <cuda_bf16.h>\n"
                                "__global__ void k(__nv_bfloat16 *b, __half *h, float *o)\n"
                                "{\n"
                                "    o[0] = max(b[0], 1.0f) + fmaxf(b[0], b[1]) + max(h[0], 2.0f) +\n"
                                "           __bfloat162float(__hmax(b[0], b[1])) + (float)max(3, 4);\n"
                                "}\n");
    expect_built("min/max with a float side and __hmax");
}

/* A __half and a __nv_bfloat16 in one sum or comparison: ambiguous to nvcc,
 * refused here too; converted to float first, it builds. */
static void test_half_bf16_mixed(void **state)
{
    (void)state;
    compile_as_lab("hbmix", "#include <cuda_bf16.h>\n"
                            "__global__ void k(__nv_bfloat16 *b, __half *h, float *o)\n"
                            "{\n"
                            "    o[0] = h[0] * b[0];\n"
                            "}\n");
    expect_error("hbmix.cu:4");
    expect_error("use of deleted function");
    compile_as_lab("hbmix_cmp", "#include <cuda_bf16.h>\n"
                                "__global__ void k(__nv_bfloat16 *b, __half *h, float *o)\n"
                                "{\n"
                                "    o[0] = b[0] < h[0];\n"
                                "}\n");
    expect_error("hbmix_cmp.cu:4");
    compile_as_lab("hbmix_fine", "#include <cuda_bf16.h>\n"
                                 "__global__ void k(__nv_bfloat16 *b, __half *h, float *o)\n"
                                 "{\n"
                                 "    o[0] = __half2float(h[0]) * __bfloat162float(b[0]) + (float)h[1] + (float)b[1];\n"
                                 "    o[1] = (float)(h[0] + h[1]) + (float)(b[0] * b[1]);\n"
                                 "}\n");
    expect_built("half and bf16 each converted to float");
}

/* A kernel's CUtensorMap by value without __grid_constant__: nvcc builds it
 * but copies the map to local memory, where TMA cannot read it; refused
 * here with the declaration to write. By pointer, or with the qualifier,
 * it builds. */
static void test_tensor_map_needs_grid_constant(void **state)
{
    (void)state;
    compile_as_lab("tmap", "#include <cuda.h>\n"
                           "__global__ void k(float *o,\n"
                           "                  const CUtensorMap map)\n"
                           "{\n"
                           "    o[0] = (float)sizeof(map);\n"
                           "}\n");
    expect_error("tmap.cu:3");
    expect_error("const __grid_constant__ CUtensorMap");
    compile_as_lab("tmap_fine", "#include <cuda.h>\n"
                                "__global__ void k(float *o, const __grid_constant__ CUtensorMap map, const CUtensorMap *p,\n"
                                "                  CUtensorMapSwizzle swz)\n"
                                "{\n"
                                "    o[0] = (float)sizeof(map) + (p ? 1.0f : 0.0f) + (float)swz;\n"
                                "}\n"
                                "static void host_side(CUtensorMap m) { (void)m; }\n"
                                "void use(void) { CUtensorMap m = {}; host_side(m); }\n");
    expect_built("a __grid_constant__ tensor map");
}

/* A host function template called with template arguments from a kernel:
 * nvcc refuses it, and so does the emulator's build; the __device__
 * template, and a comparison that only looks like template arguments, build. */
static void test_host_template_call(void **state)
{
    (void)state;
    compile_as_lab("tcall", "template <int N> float scaled(float x) { return x * N; }\n"
                            "__global__ void k(float *o)\n"
                            "{\n"
                            "    o[0] = scaled<4>(o[1]);\n"
                            "}\n");
    expect_error("tcall.cu:4");
    expect_error("calling a __host__ function(\"scaled\") from a __global__ function(\"k\")");
    compile_as_lab("tcall_fine", "template <int N> __device__ float scaled(float x) { return x * N; }\n"
                                 "__global__ void k(float *o, int a, int b)\n"
                                 "{\n"
                                 "    int lt = 0;\n"
                                 "    o[0] = scaled<4>(o[1]) + (float)(a < b) + (float)(lt < a && b > (a));\n"
                                 "}\n");
    expect_built("a __device__ template call");
}

/* Compile text as dir/name.cu with simtcc -MMD -MP, expecting the compile to
 * succeed or fail as ok says, and check that the dependency file names the
 * .cu and not the rewritten copy in simtcc's temporary folder. */
static void expect_depfile_names_source(const char *name, const char *text, int ok)
{
    char dep[512], src[512], line[1024];
    run_on(name, text, "'" SIMTCC "' -O2 -MMD -MP -c '%s' -o '%s/%s.o' 2>&1");
    if ((status == 0) != ok) {
        print_error("%s: expected exit %s, got %d:\n%s\n", name, ok ? "0" : "!= 0", status, out);
        fail();
    }
    snprintf(dep, sizeof dep, "%s/%s.d", dir, name);
    snprintf(src, sizeof src, "%s/%s.cu", dir, name);
    FILE *f = fopen(dep, "r");
    if (!f) {
        print_error("%s: no dependency file %s (exit %d)\n", name, dep, status);
        fail();
    }
    int names_source = 0, names_temp = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, src)) names_source = 1;
        if (strstr(line, "simtcc.")) names_temp = 1;
    }
    fclose(f);
    if (!names_source || names_temp) {
        print_error("%s (exit %d): the dependency file %s the source and %s the temporary copy\n", name, status,
                    names_source ? "names" : "does not name", names_temp ? "names" : "does not name");
        fail();
    }
}

static const char *const dep_ok = "__global__ void k(float *o) { o[threadIdx.x] = 1.0f; }\n";
static const char *const dep_error = "__global__ void k(float *o) { o[threadIdx.x] = undeclared; }\n";

/* simtcc -MMD -MP names the student's .cu in the dependency file, not the
 * rewritten copy in a temporary folder, when the compile fails as well as
 * when it succeeds: a temporary name left there made every later make stop
 * with "No rule to make target /tmp/simtcc...", after the error was fixed. */
static void test_depfile_names_source_after_error(void **state)
{
    (void)state;
    expect_depfile_names_source("dep0", dep_ok, 1);
    expect_depfile_names_source("dep1", dep_error, 0);
}

/* The same with a space in TMPDIR, as the grader's temporary folder may
 * have: the compiler writes the copy's name with the space escaped
 * ("tmp\ dir"), which a replacement of the plain name missed, and the
 * grader's next build of that object stopped with "No rule to make target". */
static void test_depfile_names_source_with_space_in_tmpdir(void **state)
{
    (void)state;
    char tmpdir[512], *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp dir", dir);
    assert_int_equal(mkdir(tmpdir, 0755), 0);
    setenv("TMPDIR", tmpdir, 1);
    expect_depfile_names_source("dep_space0", dep_ok, 1);
    expect_depfile_names_source("dep_space1", dep_error, 0);
    if (old) setenv("TMPDIR", old, 1);
    else unsetenv("TMPDIR");
    free(old);
}

/* --- the rewritten text ------------------------------------------------------ */

/* The C++ that simt-rewrite wrote for dir/name.cu must be want, byte for
 * byte, where each "@F" in want stands for the .cu file's path. */
static void expect_text(const char *name, const char *want)
{
    static char text[1 << 14], exp[1 << 14];
    char cu[512], cpp[512];
    snprintf(cu, sizeof cu, "%s/%s.cu", dir, name);
    snprintf(cpp, sizeof cpp, "%s/%s.cpp", dir, name);
    FILE *f = fopen(cpp, "rb");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    size_t k = 0;
    for (const char *w = want; *w && k + strlen(cu) + 1 < sizeof exp; w++) {
        if (w[0] == '@' && w[1] == 'F') {
            k += (size_t)snprintf(exp + k, sizeof exp - k, "%s", cu);
            w++;
        } else {
            exp[k++] = *w;
        }
    }
    exp[k] = 0;
    /* n, not strlen: a stray NUL byte in the output is a difference too. */
    if (n != k || memcmp(text, exp, n) != 0) {
        print_error("expected %zu bytes:\n%s\ngot %zu bytes:\n%s\n", k, exp, n, text);
        fail();
    }
}

/* Launches (qualified, template-ids, spread over lines, in a #define), the
 * two forms of extern __shared__, the calls after static __shared__
 * declarations and at the start of a kernel with __launch_bounds__, and
 * the host-code marks with their #line directives; and all that left alone
 * inside comments, string and character literals (after digit separators,
 * escaped quotes and the closing quote of another literal) and #if 0 text.
 * Each line keeps its number: the lines a rewrite joins are made up after
 * it. Of the static __shared__ in stores, only st is stored to and never
 * read (neither the comment that names it, with the word define, nor stx
 * is a read of it); eq is compared, cnt is not an array, q is read by a
 * #define continued onto a second line, and sel's type holds a "<=", which
 * is no initializer. */
static void test_rewritten_text(void **state)
{
    (void)state;
    rewrite("text",
            "#include <cstdio>\n"
            "#define LAUNCH(n) k<<<1, n>>>(0)\n"
            "#define NAMED(k) puts(#k), k<<<1, 1>>>(0)\n"
            "#define MAXT(a, b) ((a) > (b) ? (a) : (b))\n"
            "#define DECL_K(name) __global__ void __launch_bounds__(64 \\\n"
            ") name(int *p) { p[0] = 1; }\n"
            "#if 0\n"
            "it's off: k<<<1, 1>>>(p);\n"
            "#endif\n"
            "#if 0 /* the launch\n"
            "k<<<1, 1>>>(p) is below */\n"
            "#endif\n"
            "namespace ns { __global__ void k(int *p) {} }\n"
            "extern\n"
            "__shared__ __align__ (16) float ext[];\n"
            "int twice(int x) { return 2 * x; }\n"
            "extern \"C\" {\n"
            "extern __shared__ float\n"
            "    ec[];\n"
            "}\n"
            "__shared__ float g[4];\n"
            "template <typename T> struct W {};\n"
            "template <bool B> struct Sel { float v; };\n"
            "template <int N, int M> __global__ void t(int *p) {}\n"
            "__global__ void __launch_bounds__(256) declared(int *p);\n"
            "__global__ void plain(int *p) { p[0] = 0; }\n"
            "__global__ void __launch_bounds__(MAXT(256, 128), 2) lb(int *p)\n"
            "{\n"
            "    extern __shared__ alignas(sizeof(float2)) float dyn\n"
            "        [];\n"
            "    __shared__ float tile[32][33];\n"
            "    __shared__ __align__(16) float w[MAXT(4, 8)];\n"
            "    tile[threadIdx.x][0] = dyn[0] + w[0];\n"
            "    p[0] = tile[0][threadIdx.x] + 1'000 + 'x' + '\\'';\n"
            "}\n"
            "#define READ_Q(i) \\\n"
            "    q[i]\n"
            "__global__ void stores(int *idx)\n"
            "{\n"
            "    __shared__ float st[4];\n"
            "    __shared__ float eq[4];\n"
            "    __shared__ int cnt;\n"
            "    __shared__ float q[4];\n"
            "    __shared__ Sel<4 <= 8> sel;\n"
            "    st[idx[0]] = 1; // define st\n"
            "    float stx = 2;\n"
            "    eq[0] = stx;\n"
            "    cnt = 1;\n"
            "    q[0] = 1;\n"
            "    if (eq[0] == 1) idx[1] = sel.v;\n"
            "}\n"
            "  int host(int *p)\n"
            "  {\n"
            "    int n = 1'000; ns::k<<<1, n>>>(p); char c = 'a';\n"
            "    int m = 0xAB'CD; ns::k<<<1 /* >>> */, m>>>(p); c = 'b';\n"
            "    puts(\"a\"); ns::k <<<1, m>>>(p); puts(\"b\");\n"
            "    *p = 2 /* two */*p; ns::k<<<c, 1>>>(p); /* end */\n"
            "    /*/ ns::k<<<1, 1>>>(p); */\n"
            "    return n;\n"
            "  }\n"
            "int main()\n"
            "{\n"
            "    const char *s = \"k<<<1, 2>>>(x) \\\" <<<\";\n"
            "    ns::k<<<dim3(2, (3)), 4>>>(0 /* ) */);\n"
            "    t<sizeof(W<int>) + 1, 2><<<1, 32, 0, 0>>>\n"
            "        (nullptr);\n"
            "    ns::k<<<1,\n"
            "            1>>>((int *)(s + twice(1)));\n"
            "    LAUNCH(32);\n"
            "    return s[0];\n"
            "}");
    expect_accepted();
    expect_text("text",
            "#line 1 \"@F\"\n"
            "#include <cstdio>\n"
            "#define LAUNCH(n) ::simt::launch(::simt::LaunchConfig(1, n), k)(0)\n"
            "#define NAMED(k) puts(#k), ::simt::launch(::simt::LaunchConfig(1, 1), k)(0)\n"
            "#define MAXT(a, b) ((a) > (b) ? (a) : (b))\n"
            "#define DECL_K(name) __global__ void __launch_bounds__(64 \\\n"
            ") name(int *p) { simt_check_launch_bounds((unsigned long long)(64   ), __FILE__, __LINE__); p[0] = 1; }\n"
            "#if 0\n"
            "it's off: k<<<1, 1>>>(p);\n"
            "#endif\n"
            "#if 0 /* the launch\n"
            "k<<<1, 1>>>(p) is below */\n"
            "#endif\n"
            "namespace ns { __global__ void k(int *p) {} }\n"
            "static const ::simt::DynShared<  float > ext;\n"
            "\n"
            "SIMT_HOST_CODE_BEGIN\n"
            "#line 16 \"@F\"\n"
            "int twice(int x) { return 2 * x; } SIMT_HOST_CODE_END\n"
            "extern \"C\" {\n"
            "static const ::simt::DynShared< float     > ec;\n"
            "\n"
            "}\n"
            "__shared__ float g[4];\n"
            "template <typename T> struct W {};\n"
            "template <bool B> struct Sel { float v; };\n"
            "template <int N, int M> __global__ void t(int *p) {}\n"
            "__global__ void __launch_bounds__(256) declared(int *p);\n"
            "__global__ void plain(int *p) { p[0] = 0; }\n"
            "__global__ void __launch_bounds__(MAXT(256, 128), 2) lb(int *p)\n"
            "{ simt_check_launch_bounds((unsigned long long)(MAXT(256, 128)), __FILE__, __LINE__);\n"
            "      float  *const dyn __attribute__((unused)) = (  float  *)simt_dynamic_shared();\n"
            "\n"
            "    __shared__ float tile[32][33]; simt_shared_first_use(&tile, sizeof(tile), \"tile\", __FILE__, __LINE__);\n"
            "    __shared__ __align__(16) float w[MAXT(4, 8)]; simt_shared_first_use(&w, sizeof(w), \"w\", __FILE__, __LINE__);\n"
            "    tile[threadIdx.x][0] = dyn[0] + w[0];\n"
            "    p[0] = tile[0][threadIdx.x] + 1'000 + 'x' + '\\'';\n"
            "}\n"
            "#define READ_Q(i) \\\n"
            "    q[i]\n"
            "__global__ void stores(int *idx)\n"
            "{\n"
            "    __shared__ float st[4]; int st_is_stored_to_but_never_read; st_is_stored_to_but_never_read = 0; simt_shared_first_use(&st, sizeof(st), \"st\", __FILE__, __LINE__);\n"
            "    __shared__ float eq[4]; simt_shared_first_use(&eq, sizeof(eq), \"eq\", __FILE__, __LINE__);\n"
            "    __shared__ int cnt; simt_shared_first_use(&cnt, sizeof(cnt), \"cnt\", __FILE__, __LINE__);\n"
            "    __shared__ float q[4]; simt_shared_first_use(&q, sizeof(q), \"q\", __FILE__, __LINE__);\n"
            "    __shared__ Sel<4 <= 8> sel; simt_shared_first_use(&sel, sizeof(sel), \"sel\", __FILE__, __LINE__);\n"
            "    st[idx[0]] = 1; // define st\n"
            "    float stx = 2;\n"
            "    eq[0] = stx;\n"
            "    cnt = 1;\n"
            "    q[0] = 1;\n"
            "    if (eq[0] == 1) idx[1] = sel.v;\n"
            "}\n"
            "SIMT_HOST_CODE_BEGIN\n"
            "#line 52 \"@F\"\n"
            "  int host(int *p)\n"
            "  {\n"
            "    int n = 1'000; ::simt::launch(::simt::LaunchConfig(1, n), ns::k)(p); char c = 'a';\n"
            "    int m = 0xAB'CD; ::simt::launch(::simt::LaunchConfig(1 /* >>> */, m), ns::k)(p); c = 'b';\n"
            "    puts(\"a\"); ::simt::launch(::simt::LaunchConfig(1, m), ns::k)(p); puts(\"b\");\n"
            "    *p = 2 /* two */*p; ::simt::launch(::simt::LaunchConfig(c, 1), ns::k)(p); /* end */\n"
            "    /*/ ns::k<<<1, 1>>>(p); */\n"
            "    return n;\n"
            "  } SIMT_HOST_CODE_END\n"
            "SIMT_HOST_CODE_BEGIN\n"
            "#line 61 \"@F\"\n"
            "int main()\n"
            "{\n"
            "    const char *s = \"k<<<1, 2>>>(x) \\\" <<<\";\n"
            "    ::simt::launch(::simt::LaunchConfig(dim3(2, (3)), 4), ns::k)(0 /* ) */);\n"
            "    ::simt::launch(::simt::LaunchConfig(1, 32, 0, 0), t<sizeof(W<int>) + 1, 2>)(nullptr)\n"
            ";\n"
            "    ::simt::launch(::simt::LaunchConfig(1,\n"
            "            1), ns::k)((int *)(s + twice(1)));\n"
            "    LAUNCH(32);\n"
            "    return s[0];\n"
            "} SIMT_HOST_CODE_END");
}

/* The last byte of the file ends a host function, or a line comment. */
static void test_rewritten_text_at_end_of_file(void **state)
{
    (void)state;
    rewrite("eof_brace", "__global__ void k(int *p) { p[0] = 1; }\n"
                         "int f() { return 0; }");
    expect_accepted();
    expect_text("eof_brace", "#line 1 \"@F\"\n"
                             "__global__ void k(int *p) { p[0] = 1; }\n"
                             "SIMT_HOST_CODE_BEGIN\n"
                             "#line 2 \"@F\"\n"
                             "int f() { return 0; } SIMT_HOST_CODE_END");
    rewrite("eof_comment", "int g;\n"
                           "// end");
    expect_accepted();
    expect_text("eof_comment", "#line 1 \"@F\"\n"
                               "int g;\n"
                               "// end");
}

/* The C++ simt-rewrite wrote for dir/name.cu, where the file's path in
 * its #lines is written as quoted, must be the file's #line then body. */
static void expect_line_text(const char *name, const char *quoted, const char *body)
{
    char path[512], want[1024], text[1024];
    snprintf(path, sizeof path, "%s/%s.cpp", dir, name);
    snprintf(want, sizeof want, "#line 1 \"%s/%s.cu\"\n%s", dir, quoted, body);
    for (char *at; (at = strstr(want, "@L")) != NULL;) { /* each @L: the #line of a host-code mark */
        char tail[1024];
        snprintf(tail, sizeof tail, "%s", at + 2);
        snprintf(at, sizeof want - (size_t)(at - want), "#line 1 \"%s/%s.cu\"%s", dir, quoted, tail);
    }
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_string_equal(text, want);
}

/* A quote or a backslash in the file's name is escaped in both #lines,
 * and a line break is written \n: as it was, it ended the #line and
 * the compiler refused the file. */
static void test_line_directive_escapes_path(void **state)
{
    (void)state;
    rewrite("q\"b\\s", "int f() { return 0; }\n");
    expect_accepted();
    expect_line_text("q\"b\\s", "q\\\"b\\\\s", "SIMT_HOST_CODE_BEGIN\n@L\nint f() { return 0; } SIMT_HOST_CODE_END\n");
    rewrite("new\nline", "int f() { return 0; }\n");
    expect_accepted();
    expect_line_text("new\nline", "new\\nline", "SIMT_HOST_CODE_BEGIN\n@L\nint f() { return 0; } SIMT_HOST_CODE_END\n");
}

/* A template argument may compare in parentheses, as nvcc allows: the '>'
 * there closes nothing. Walking back from <<< over the arguments took it
 * for the end of a template-id, ran on into the text before (a string
 * here), and wrote a launch g++ could not read; and a launch of a host
 * function template written so went unreported. */
static void test_launch_template_argument_compares(void **state)
{
    (void)state;
    rewrite("tcmp", "template <bool B, int N> __global__ void t(int *p) { p[0] = B + N; }\n"
                    "int main()\n"
                    "{\n"
                    "    const char *s = \"<\";\n"
                    "    t<(2 > 1), 4><<<1, 32>>>(0);\n"
                    "    return s[0];\n"
                    "}\n");
    expect_accepted();
    expect_text("tcmp", "#line 1 \"@F\"\n"
                        "template <bool B, int N> __global__ void t(int *p) { p[0] = B + N; }\n"
                        "SIMT_HOST_CODE_BEGIN\n"
                        "#line 2 \"@F\"\n"
                        "int main()\n"
                        "{\n"
                        "    const char *s = \"<\";\n"
                        "    ::simt::launch(::simt::LaunchConfig(1, 32), t<(2 > 1), 4>)(0);\n"
                        "    return s[0];\n"
                        "} SIMT_HOST_CODE_END\n");
    rewrite("tcmp_host", "template <int N> void hf(int *p) { p[0] = N; }\n"
                         "int main() { hf<(2 > 1)><<<1, 1>>>(0); return 0; }\n");
    expect_error("tcmp_host.cu:2: error: a host function call cannot be configured");
}

/* A host function whose closing brace is under #if on __SIMT_EMULATOR__
 * (or __CUDA_ARCH__) gets no marks: the brace the scanner pairs with its
 * opening one may not be the one the compiler keeps. */
static void test_host_marks_left_out_under_arch(void **state)
{
    (void)state;
    static const char text[] = "int f()\n"
                               "{\n"
                               "#ifdef __SIMT_EMULATOR__\n"
                               "    return 1;\n"
                               "}\n"
                               "#else\n"
                               "    return 2;\n"
                               "}\n"
                               "#endif\n";
    rewrite("arch_brace", text);
    expect_accepted();
    char want[512];
    snprintf(want, sizeof want, "#line 1 \"@F\"\n%s", text);
    expect_text("arch_brace", want);
}

/* A function whose opening line differs between the branches of an #if,
 * each branch with its own '{', and one '}' after the #endif: only the
 * first branch's braces count (the compiler sees one branch), so the
 * functions after it still get their marks and a kernel after it its
 * launch-bounds check. Braces that pair within a later branch still count:
 * a function defined once in each branch is marked in both. */
static void test_braces_split_across_branches(void **state)
{
    (void)state;
    rewrite("split_brace", "#ifdef __SIMT_EMULATOR__\n"
                           "void f(int x) {\n"
                           "#else\n"
                           "void f(long x) {\n"
                           "#endif\n"
                           "    (void)x;\n"
                           "}\n"
                           "#ifdef FAST\n"
                           "int h() { return 1; }\n"
                           "#else\n"
                           "int h() { return 2; }\n"
                           "#endif\n"
                           "int g() { return h(); }\n"
                           "__global__ void __launch_bounds__(32) k(int *p) { p[0] = 0; }\n");
    expect_accepted();
    expect_text("split_brace", "#line 1 \"@F\"\n"
                               "#ifdef __SIMT_EMULATOR__\n"
                               "void f(int x) {\n"
                               "#else\n"
                               "void f(long x) {\n"
                               "#endif\n"
                               "    (void)x;\n"
                               "}\n"
                               "#ifdef FAST\n"
                               "SIMT_HOST_CODE_BEGIN\n"
                               "#line 9 \"@F\"\n"
                               "int h() { return 1; } SIMT_HOST_CODE_END\n"
                               "#else\n"
                               "SIMT_HOST_CODE_BEGIN\n"
                               "#line 11 \"@F\"\n"
                               "int h() { return 2; } SIMT_HOST_CODE_END\n"
                               "#endif\n"
                               "SIMT_HOST_CODE_BEGIN\n"
                               "#line 13 \"@F\"\n"
                               "int g() { return h(); } SIMT_HOST_CODE_END\n"
                               "__global__ void __launch_bounds__(32) k(int *p) { simt_check_launch_bounds("
                               "(unsigned long long)(32), __FILE__, __LINE__); p[0] = 0; }\n");
}

/* The block in which a static __shared__ variable's reads are looked for
 * ends where the compiler sees it end, by the same rule for braces split
 * across #if branches: t's block does not end at the #else branch's '}'
 * (t read after it, was taken for stored to and never read, which stopped
 * a correct lab build), and u's goes on past the #else branch's '{' (u,
 * never named again, was taken for used, and the build nvcc refuses went
 * through). */
static void test_shared_use_across_branches(void **state)
{
    (void)state;
    static const char read[] = "__global__ void k(const float *a, float *o)\n"
                               "{\n"
                               "    __shared__ float t[32];\n"
                               "    t[threadIdx.x] = a[threadIdx.x];\n"
                               "    if (threadIdx.x == 0) {\n"
                               "#ifdef EXTRA\n"
                               "        o[32] = 1;\n"
                               "    }\n"
                               "#else\n"
                               "    }\n"
                               "#endif\n"
                               "    __syncthreads();\n"
                               "    o[threadIdx.x] = t[31 - threadIdx.x];\n"
                               "}\n"
                               "void launch(const float *a, float *o) { k<<<1, 32>>>(a, o); }\n";
    compile_as_lab("shared_split_read", read);
    expect_built("a __shared__ array read after an #endif");
    compile_as_lab("shared_split_unused", "__global__ void g(float *o)\n"
                                          "{\n"
                                          "    __shared__ float u[32];\n"
                                          "#ifdef WIDE\n"
                                          "    if (threadIdx.x < 32) {\n"
                                          "#else\n"
                                          "    if (threadIdx.x < 16) {\n"
                                          "#endif\n"
                                          "        o[threadIdx.x] = 1;\n"
                                          "    }\n"
                                          "}\n"
                                          "void launch(float *o) { g<<<1, 32>>>(o); }\n");
    expect_error("shared_split_unused.cu:3:22: error: unused variable");
}

/* What the rewrite cannot read stops the build with a message at its line. */
/* A launch whose <<< is on a line after the kernel's name: the line break
 * between them goes after the launch, as those before its arguments do, so
 * the lines after it keep their numbers (they were one short: messages
 * named the line above). */
static void test_launch_keeps_lines(void **state)
{
    (void)state;
    rewrite("lines", "__global__ void k(int *p) { p[0] = 1; }\n"
                     "int main()\n"
                     "{\n"
                     "    k\n"
                     "        <<<1, 1>>>\n"
                     "        (0);\n"
                     "    return 0;\n"
                     "}\n");
    expect_accepted();
    expect_text("lines", "#line 1 \"@F\"\n"
                         "__global__ void k(int *p) { p[0] = 1; }\n"
                         "SIMT_HOST_CODE_BEGIN\n"
                         "#line 2 \"@F\"\n"
                         "int main()\n"
                         "{\n"
                         "    ::simt::launch(::simt::LaunchConfig(1, 1), k)(0)\n"
                         "\n"
                         ";\n"
                         "    return 0;\n"
                         "} SIMT_HOST_CODE_END\n");
}

/* Comments in __launch_bounds__: the check the kernel's body starts with
 * gets the bound on one line, each comment a space (a // comment copied
 * there hid the check's closing parenthesis and the rest of the line). */
static void test_launch_bounds_comment(void **state)
{
    (void)state;
    rewrite("bounds_comment", "__global__ void __launch_bounds__(256 // threads per block\n"
                              ") k(int *p) { p[0] = 1; }\n"
                              "__global__ void __launch_bounds__(/* max */ 128, 2) k2(int *p) { p[0] = 2; }\n");
    expect_accepted();
    expect_text("bounds_comment",
                "#line 1 \"@F\"\n"
                "__global__ void __launch_bounds__(256 // threads per block\n"
                ") k(int *p) { simt_check_launch_bounds((unsigned long long)(256   ), __FILE__, __LINE__); p[0] = 1; }\n"
                "__global__ void __launch_bounds__(/* max */ 128, 2) k2(int *p) { simt_check_launch_bounds((unsigned "
                "long long)(  128), __FILE__, __LINE__); p[0] = 2; }\n");
}

static void test_rewrite_errors(void **state)
{
    (void)state;
    static const char head[] = "__global__ void k(int *p) { p[0] = 1; }\n"
                               "int main()\n"
                               "{\n";
    char text[512];
    snprintf(text, sizeof text, "%s    (k)<<<1, 1>>>(0);\n}\n", head);
    rewrite("no_name", text);
    expect_error("no_name.cu:4: error: simt-rewrite: a kernel launch <<<...>>> must follow the kernel's name\n");
    /* A template-id's '<' left out: the name is looked for in its own
     * statement, not in the file's text before it (which became the name). */
    snprintf(text, sizeof text, "%s    for (int i = 0; i < 2; i++)\n        k1><<<1, 1>>>(0);\n}\n", head);
    rewrite("no_template_open", text);
    expect_error("no_template_open.cu:5: error: simt-rewrite: a kernel launch <<<...>>> must follow the kernel's name\n");
    snprintf(text, sizeof text, "%s    k<<<1, 1>>>;\n}\n", head);
    rewrite("no_args", text);
    expect_error("no_args.cu:4: error: simt-rewrite: expected (arguments) after <<<...>>>\n");
    snprintf(text, sizeof text, "%s    k<<<1, 1", head);
    rewrite("no_config_end", text);
    expect_error("no_config_end.cu:4: error: simt-rewrite: unterminated <<<...>>> launch configuration\n");
    snprintf(text, sizeof text, "%s    k<<<1, 1>>>(0;\n}\n", head);
    rewrite("no_args_end", text);
    expect_error("no_args_end.cu:4: error: simt-rewrite: unterminated kernel argument list\n");
    rewrite("not_array", "__global__ void k(float *p)\n"
                         "{\n"
                         "    extern __shared__ float x;\n"
                         "    p[0] = x;\n"
                         "}\n");
    expect_error("not_array.cu:3: error: simt-rewrite: extern __shared__ must declare an array: "
                 "extern __shared__ T name[];\n");
}

/* A '{' that no '}' closes (a kernel or a helper missing its last brace)
 * is left as it is, and so is everything after it: no marks, no checks, so
 * the compiler says "expected '}' at end of input" with a note at that
 * '{'. The scan used to take the rest of the file for its body: the host
 * code after a kernel was checked as the kernel's calls (a false "calling
 * a __host__ function" that stopped the build before the compiler could
 * name the brace), and a host function's closing mark was put where the
 * token one past the last said (here before the function's first word,
 * which made g++ read SIMT_HOST_CODE_ENDvoid). A '}' that no '{' opens is
 * the compiler's to report at its line too. */
static void test_unclosed_brace_left_to_compiler(void **state)
{
    (void)state;
    static const char host[] = "__global__ void k(float *x) { x[0] = 1; }\n"
                               "void init(float *x, int n)\n"
                               "{\n"
                               "    for (int i = 0; i < n; i++) {\n"
                               "        x[i] = 0;\n"
                               "    }\n";
    rewrite("open_host", host);
    expect_accepted();
    char want[512];
    snprintf(want, sizeof want, "#line 1 \"@F\"\n%s", host);
    expect_text("open_host", want);
    static const char kernel[] = "static void fill(float *x, int n) { for (int i = 0; i < n; i++) x[i] = 0; }\n"
                                 "__global__ void scale(float *x, int n)\n"
                                 "{\n"
                                 "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                 "    if (i < n) {\n"
                                 "        x[i] *= 2;\n"
                                 "}\n"
                                 "static void init(float *x, int n) { fill(x, n); }\n"
                                 "void launch(float *x, int n)\n"
                                 "{\n"
                                 "    init(x, n);\n"
                                 "    scale<<<1, 32>>>(x, n);\n"
                                 "}\n";
    rewrite("open_kernel", kernel);
    expect_accepted();
    compile_as_lab("open_kernel", kernel);
    expect_error("at end of input");
    expect_error("open_kernel.cu:3:1: note: to match this");
    static const char stray[] = "__global__ void scale(float *x, int n)\n"
                                "{\n"
                                "    if (threadIdx.x < n)\n"
                                "        x[threadIdx.x] *= 2;\n"
                                "    }\n"
                                "}\n"
                                "void init(float *x) { x[0] = 0; }\n";
    rewrite("stray_brace", stray);
    expect_accepted();
    compile_as_lab("stray_brace", stray);
    expect_error("stray_brace.cu:6:1: error: expected declaration before");
}

/* Every prefix of a file, cut inside a declaration, after __global__,
 * inside <<<...>>>, a string or a comment, or with a brace open, is
 * rewritten (what it cannot read left to the compiler) or refused with a
 * message at a line; and each SIMT_HOST_CODE_END the rewrite writes comes
 * right after the '}' that closes a host function. */
static void test_truncated_files(void **state)
{
    (void)state;
    static const char full[] = "// a comment with a { in it\n"
                               "__global__ void __launch_bounds__(64) k(float *x, int n)\n"
                               "{\n"
                               "    __shared__ float t[64];\n"
                               "    t[threadIdx.x] = x[threadIdx.x];\n"
                               "    __syncthreads();\n"
                               "    if (threadIdx.x < n) x[threadIdx.x] = t[63 - threadIdx.x];\n"
                               "}\n"
                               "static const char *name = \"k { <<<\";\n"
                               "void init(float *x, int n)\n"
                               "{\n"
                               "    for (int i = 0; i < n; i++) { x[i] = 0; }\n"
                               "}\n"
                               "int main()\n"
                               "{\n"
                               "    init(0, 0);\n"
                               "    k<<<1, 64>>>(0, 64);\n"
                               "    return name[0];\n"
                               "}\n";
    static char text[sizeof full], cpp[1 << 12];
    char path[512];
    snprintf(path, sizeof path, "%s/cut.cpp", dir);
    for (size_t n = 0; n < sizeof full; n++) {
        memcpy(text, full, n);
        text[n] = 0;
        remove(path);
        rewrite("cut", text);
        if (status == 1 && strstr(out, "/cut.cu:") && strstr(out, ": error: simt-rewrite: ")) continue;
        if (status != 0) {
            print_error("the first %zu bytes: exit %d:\n%s\n", n, status, out);
            fail();
        }
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t k = fread(cpp, 1, sizeof cpp - 1, f);
        fclose(f);
        cpp[k] = 0;
        for (const char *e = cpp; (e = strstr(e, "SIMT_HOST_CODE_END")) != NULL; e++)
            if (e - cpp < 2 || e[-1] != ' ' || e[-2] != '}') {
                print_error("the first %zu bytes: a mark after no '}':\n%s\n", n, cpp);
                fail();
            }
    }
}

/* The conditionals and macros the execution-space check follows: a macro
 * continued onto a second line, one that stands for __global__ alone, an
 * #elif on __CUDA_ARCH__, an #if nested in one on __SIMT_EMULATOR__, and a
 * member reached with -> that shares a __device__ variable's name. */
static void test_accepts_conditionals_and_macros(void **state)
{
    (void)state;
    rewrite("cond", "float host_only(float x) { return x; }\n"
                    "__device__ float scale;\n"
                    "struct P { float scale; };\n"
                    "float get(P *p) { return p->scale; }\n"
                    "#define hd \\\n"
                    "    __host__ __device__\n"
                    "hd float f(float x) { return host_only(x); }\n"
                    "#define kern __global__\n"
                    "kern void kk(int *p) { p[0] = 1; }\n"
                    "__host__ __device__ float g(float x)\n"
                    "{\n"
                    "#if defined(USE_FAST)\n"
                    "    return x;\n"
                    "#elif !defined(__CUDA_ARCH__)\n"
                    "    return host_only(x);\n"
                    "#else\n"
                    "    return x;\n"
                    "#endif\n"
                    "}\n"
                    "__global__ void k3(float *p)\n"
                    "{\n"
                    "#ifdef __SIMT_EMULATOR__\n"
                    "#if 1\n"
                    "    p[0] = host_only(p[0]);\n"
                    "#endif\n"
                    "#endif\n"
                    "}\n"
                    "int main() { kk<<<1, 1>>>(0); return 0; }\n");
    expect_accepted();
}

/* After an #endif the check is back on; a kernel inside extern "C" { } and
 * a launch of a host function template are checked too. */
static void test_checks_after_conditionals(void **state)
{
    (void)state;
    rewrite("after_endif", "float host_only(float x) { return x; }\n"
                           "template <int N> void tf(int *p) { p[0] = N; }\n"
                           "__global__ void k2(float *p)\n"
                           "{\n"
                           "#ifdef __CUDA_ARCH__\n"
                           "    p[1] = 1;\n"
                           "#endif\n"
                           "    p[0] = host_only(p[0]);\n"
                           "}\n"
                           "extern \"C\" {\n"
                           "__global__ void kc(float *p) { p[0] = host_only(p[0]); }\n"
                           "}\n"
                           "int main() { tf<2><<<1, 1>>>(0); return 0; }\n");
    expect_error("after_endif.cu:8: error: calling a __host__ function(\"host_only\") from a __global__ "
                 "function(\"k2\") is not allowed");
    expect_error("after_endif.cu:11: error: calling a __host__ function(\"host_only\") from a __global__ "
                 "function(\"kc\") is not allowed");
    expect_error("after_endif.cu:13: error: a host function call cannot be configured");
    assert_int_equal(count("error:"), 3);
}

/* Only the conditional directives themselves open, split or close a
 * conditional: "#ifd" or "#ifnde" (in an #if 0 group, where the
 * preprocessor skips them) opens none, and #elifdef and #elifndef start a
 * branch as #elif does. A prefix of "ifdef" used to open a conditional
 * that the next #endif closed, so the #endif after it was taken for the
 * one of the #ifdef __CUDA_ARCH__ around them, and the kernel after that
 * was taken for code under __CUDA_ARCH__, whose calls go unchecked. */
static void test_only_real_directives_are_conditionals(void **state)
{
    (void)state;
    rewrite("ifd", "float host_only(float x) { return x; }\n"
                   "#ifdef __CUDA_ARCH__\n"
                   "#if 0\n"
                   "#ifd NOTE\n"
                   "#ifnde NOTE\n"
                   "#endif\n"
                   "#endif\n"
                   "__global__ void k(float *p) { p[0] = host_only(p[0]); }\n");
    expect_error("ifd.cu:8: error: calling a __host__ function(\"host_only\") from a __global__ function(\"k\")");
    /* Each branch opens f's body: one '{' counts, so g gets its marks. */
    rewrite("elifdef", "#ifdef WIDE\n"
                       "__device__ void f(long x) {\n"
                       "#elifdef NARROW\n"
                       "__device__ void f(short x) {\n"
                       "#elifndef INT\n"
                       "__device__ void f(char x) {\n"
                       "#else\n"
                       "__device__ void f(int x) {\n"
                       "#endif\n"
                       "    (void)x;\n"
                       "}\n"
                       "int g() { return 1; }\n");
    expect_accepted();
    expect_text("elifdef", "#line 1 \"@F\"\n"
                           "#ifdef WIDE\n"
                           "__device__ void f(long x) {\n"
                           "#elifdef NARROW\n"
                           "__device__ void f(short x) {\n"
                           "#elifndef INT\n"
                           "__device__ void f(char x) {\n"
                           "#else\n"
                           "__device__ void f(int x) {\n"
                           "#endif\n"
                           "    (void)x;\n"
                           "}\n"
                           "SIMT_HOST_CODE_BEGIN\n"
                           "#line 12 \"@F\"\n"
                           "int g() { return 1; } SIMT_HOST_CODE_END\n");
}

/* A kernel template launched with its template arguments left for the
 * compiler to deduce from the launch's, as nvcc does: after the kernel's
 * first declaration the rewrite declares a helper with its parameters,
 * whose call deduces them, and the launch takes the kernel's address as
 * the type the helper returns. Packs, defaults of template parameters, a
 * kernel in a namespace launched by its qualified name, a kernel declared
 * before it is defined, and the arguments evaluated once. */
static void test_launch_deduced(void **state)
{
    (void)state;
    rewrite("deduced_text", "template <typename T> __global__ void fill(T *p, T v) { p[threadIdx.x] = v; }\n"
                            "void f(float *p) { fill<<<1, 32>>>(p, 1.0f); }\n");
    expect_text("deduced_text",
                "#line 1 \"@F\"\n"
                "template <typename T> __global__ void fill(T *p, T v) { p[threadIdx.x] = v; } template <typename T> "
                "auto simt_kernel_of_fill(T *p, T v) -> decltype(&fill<T>);\n"
                "SIMT_HOST_CODE_BEGIN\n"
                "#line 2 \"@F\"\n"
                "void f(float *p) { [&](auto &&...simt_a) { ::simt::launch(::simt::LaunchConfig(1, 32), "
                "static_cast<decltype(simt_kernel_of_fill(simt_a...))>(&fill))(static_cast<decltype(simt_a) "
                "&&>(simt_a)...); }(p, 1.0f); } SIMT_HOST_CODE_END\n");
    run_on("deduced_run",
           "#include <cstdio>\n"
           "namespace ns {\n"
           "template <typename T, int N = 2> __global__ void fill(T *p, T v) { p[threadIdx.x] = v * (T)N; }\n"
           "}\n"
           "template <class... Ts> __global__ void count(float *o, Ts... xs) { o[threadIdx.x] = (float)sizeof...(xs); }\n"
           "template <typename T>\n"
           "__global__ void late(T *p,\n"
           "                     T v);\n"
           "template <typename T> static void run(T *p, T v) { late<<<1, 4>>>(p, v); }\n"
           "int main()\n"
           "{\n"
           "    float *p;\n"
           "    int *q, calls = 0;\n"
           "    cudaMallocManaged(&p, 64 * sizeof(float));\n"
           "    cudaMallocManaged(&q, 64 * sizeof(int));\n"
           "    ns::fill<<<1, 32>>>(p, (calls++, 1.5f));\n"
           "    count<<<1, 4>>>(p + 32, 1, 2.0, 3u);\n"
           "    run(q, 7);\n"
           "    cudaDeviceSynchronize();\n"
           "    printf(\"%g %g %d %d\\n\", p[0], p[32], q[3], calls);\n"
           "    return 0;\n"
           "}\n"
           "template <typename T> __global__ void late(T *p, T v) { p[threadIdx.x] = v; }\n",
           "f='%s'; '" SIMTCC "' -O1 " SIMT_LAB_WERROR " \"$f\" -o \"$f.bin\" 2>&1 && \"$f.bin\" 2>&1");
    if (status != 0 || !strstr(out, "3 3 7 1")) fail_msg("deduced launches, exit %d:\n%s", status, out);
}

/* A launch that leaves a kernel's default arguments out gets them as nvcc
 * gives them to a call: their text, from the declaration that has them
 * (here one before the definition), after the launch's own arguments, with
 * the launch's lines kept. */
static void test_launch_default_arguments(void **state)
{
    (void)state;
    rewrite("defaults_text", "__global__ void set(float *p, int n = 4, float s = 0.5f) { p[threadIdx.x] = n * s; }\n"
                             "void f(float *p) { set<<<1, 32>>>(p); set<<<1, 32>>>(p, 2); }\n");
    expect_text("defaults_text",
                "#line 1 \"@F\"\n"
                "__global__ void set(float *p, int n = 4, float s = 0.5f) { p[threadIdx.x] = n * s; }\n"
                "SIMT_HOST_CODE_BEGIN\n"
                "#line 2 \"@F\"\n"
                "void f(float *p) { ::simt::launch(::simt::LaunchConfig(1, 32), set)(p, 4, 0.5f); "
                "::simt::launch(::simt::LaunchConfig(1, 32), set)(p, 2, 0.5f); } SIMT_HOST_CODE_END\n");
    run_on("defaults_run",
           "#include <cstdio>\n"
           "#define WIDTH 8\n"
           "__global__ void count(int *c = nullptr);\n"
           "__global__ void scale(float *x, int n, float by = 2.0f,\n"
           "                      int stride = WIDTH / 4)\n"
           "{\n"
           "    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x) * stride;\n"
           "    if (i < n) x[i] *= by;\n"
           "}\n"
           "int main()\n"
           "{\n"
           "    float *x;\n"
           "    int *c;\n"
           "    cudaMallocManaged(&x, 64 * sizeof(float));\n"
           "    cudaMallocManaged(&c, sizeof(int));\n"
           "    for (int i = 0; i < 64; i++) x[i] = 1;\n"
           "    *c = 0;\n"
           "    scale<<<1, 32>>>(x, 64);\n"
           "    scale<<<1, 32>>>(x, 64, 3.0f);\n"
           "    scale<<<1, 64>>>(x, 64, 0.5f,\n"
           "                     1);\n"
           "    count<<<1, 32>>>();\n"
           "    count<<<1, 32>>>(c);\n"
           "    cudaDeviceSynchronize();\n"
           "    printf(\"%g %g %d line %d\\n\", x[2], x[1], *c, __LINE__);\n"
           "    return 0;\n"
           "}\n"
           "__global__ void count(int *c) { if (c) atomicAdd(c, 1); }\n",
           "f='%s'; '" SIMTCC "' -O1 " SIMT_LAB_WERROR " \"$f\" -o \"$f.bin\" 2>&1 && \"$f.bin\" 2>&1");
    /* x[2]: 1 * 2 * 3 * 0.5 (stride 2 reaches it); x[1]: only the last launch, * 0.5. */
    if (status != 0 || !strstr(out, "3 0.5 32 line 25")) fail_msg("default arguments at launches, exit %d:\n%s", status, out);
}

/* Launches nvcc resolves as calls and the emulator's launch cannot: a
 * kernel template's arguments deduced from the launch's where a template
 * parameter has no name, overloaded kernels, a kernel template's default
 * arguments left out. Each is an error that says what to write instead;
 * the forms it suggests build. A wrong count of arguments is named as nvcc
 * names it, where g++ would speak of simt::Launcher. */
static void test_launch_forms_not_emulated(void **state)
{
    (void)state;
    /* A template parameter without a name cannot be named in the helper
     * that deduces the others (see test_launch_deduced). */
    rewrite("launch_deduced", "template <typename T, typename> __global__ void fill(T *p, T v) { p[threadIdx.x] = v; }\n"
                              "void f(float *p) { fill<<<1, 32>>>(p, 1.0f); }\n");
    expect_error("launch_deduced.cu:2: error: the emulator cannot deduce the template arguments of kernel fill");
    expect_error("fill<...><<<grid, block>>>(...)");
    rewrite("launch_overload", "__global__ void scale(float *p, float s) { p[threadIdx.x] *= s; }\n"
                               "__global__ void scale(double *p, double s) { p[threadIdx.x] *= s; }\n"
                               "void f(float *p) { scale<<<1, 32>>>(p, 2.0f); }\n");
    expect_error("launch_overload.cu:3: error: the emulator cannot choose among overloaded kernels named scale");
    /* A kernel template's defaults may name its template parameters. */
    rewrite("launch_default", "template <typename T> __global__ void set(T *p, T v = T(4)) { p[threadIdx.x] = v; }\n"
                              "void f(float *p)\n"
                              "{\n"
                              "    set<float><<<1, 32>>>(p, 2.0f);\n"
                              "    set<float><<<1, 32>>>(p);\n"
                              "}\n");
    expect_error("launch_default.cu:5: error: the emulator does not fill in the default arguments of kernel template "
                 "set at a launch, as nvcc does: it takes 2, the launch passes 1");
    assert_int_equal(count("launch_default.cu:4"), 0); /* every argument passed: fine */
    /* A count nvcc refuses is named in nvcc's words; one a macro may make up
     * (ARGS, __VA_ARGS__) is left to the compiler, which counts after it. */
    rewrite("launch_count", "#define ARGS p, 1\n"
                            "#define L(...) k<<<1, 1>>>(__VA_ARGS__)\n"
                            "__global__ void k(float *p, int n) { p[threadIdx.x] = (float)n; }\n"
                            "void f(float *p)\n"
                            "{\n"
                            "    k<<<1, 1>>>(ARGS);\n"
                            "    L(p, 2);\n"
                            "    k<<<1, 1>>>(p);\n"
                            "    k<<<1, 1>>>(p, 1, 2);\n"
                            "    k<<<1, 1>>>(p, W<1, 2>::n);\n"
                            "}\n");
    expect_error("launch_count.cu:8: error: too few arguments in the launch of kernel k: it takes 2, the launch passes 1");
    expect_error("launch_count.cu:9: error: too many arguments in the launch of kernel k: it takes 2, the launch "
                 "passes 3");
    assert_int_equal(count("launch_count.cu:6"), 0);
    assert_int_equal(count("launch_count.cu:7"), 0);
    assert_int_equal(count("launch_count.cu:10"), 0); /* a template-id's comma */
    /* Not overloads: one kernel in the two branches of an #if, and kernels
     * of one name in two namespaces, each launched by its own. */
    rewrite("launch_not_overloads", "#ifdef FAST\n"
                                    "__global__ void k(float *p, int n) { p[threadIdx.x] = (float)n; }\n"
                                    "#else\n"
                                    "__global__ void k(float *p, int n) { p[threadIdx.x] = 2.0f * (float)n; }\n"
                                    "#endif\n"
                                    "namespace a { __global__ void q(float *p) { p[0] = 1; } void f(float *p) { q<<<1, 1>>>(p); } }\n"
                                    "namespace b { __global__ void q(float *p, int n) { p[0] = (float)n; } void g(float *p) { q<<<1, 1>>>(p, 1); } }\n"
                                    "void h(float *p) { k<<<1, 1>>>(p, 1); }\n");
    expect_accepted();
    compile_as_lab("launch_named", "template <typename T> __global__ void fill(T *p, T v) { p[threadIdx.x] = v; }\n"
                                   "void f(float *p) { fill<float><<<1, 32>>>(p, 1.0f); }\n");
    expect_built("a kernel template launched with its arguments named");
}

/* Cooperative groups: a warp reduction written as llm.c writes its kernels
 * builds with the labs' flags; a header the emulator does not have says
 * so, instead of failing inside the toolkit's own headers, and so does a
 * group it does not have (grid groups need a cooperative launch). */
static void test_cooperative_groups_headers(void **state)
{
    (void)state;
    compile_as_lab("cg_reduce", "#include <cooperative_groups.h>\n"
                                "#include <cooperative_groups/reduce.h>\n"
                                "namespace cg = cooperative_groups;\n"
                                "__global__ void rowsum(const float *x, float *out, int n)\n"
                                "{\n"
                                "    cg::thread_block block = cg::this_thread_block();\n"
                                "    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
                                "    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();\n"
                                "    float s = 0.0f;\n"
                                "    for (int i = warp.thread_rank(); i < n; i += warp.size()) s += x[row * n + i];\n"
                                "    s = cg::reduce(warp, s, cg::plus<float>());\n"
                                "    if (warp.thread_rank() == 0) out[row] = s;\n"
                                "}\n");
    expect_built("a cooperative-groups warp reduction");
    compile_as_lab("cg_scan", "#include <cooperative_groups/scan.h>\n");
    expect_error("cooperative_groups/scan.h is not emulated");
    compile_as_lab("cg_grid", "#include <cooperative_groups.h>\n"
                              "__global__ void k(int *p) { cooperative_groups::this_grid().sync(); p[0] = 1; }\n");
    expect_error("this_grid");
}

/* static __shared__ (the block reduction's partial sums) and __shared__
 * static build, as nvcc builds them: the word is blanked, since __shared__
 * is static here already, and the columns after it stay. A volatile
 * __shared__ flag gets its call as any other variable; a static in a string
 * is left alone. __shared__ alignas(16), which g++ refuses after the
 * static thread_local of __shared__, has the alignas moved first. */
static void test_shared_specifiers(void **state)
{
    (void)state;
    static const char text[] = "static __shared__ float g[32];\n"
                               "__global__ void k(const float *x, float *o)\n"
                               "{\n"
                               "    static /* one per warp */ __shared__ float partial[32];\n"
                               "    __shared__ static int n;\n"
                               "    volatile __shared__ int flag;\n"
                               "    __shared__  alignas(16) float al[4];\n"
                               "    const char *s = \"static __shared__\";\n"
                               "    partial[threadIdx.x % 32] = x[threadIdx.x];\n"
                               "    if (threadIdx.x == 0) n = s[0], flag = 1;\n"
                               "    g[0] = 1;\n"
                               "    __syncthreads();\n"
                               "    o[0] = partial[0] + n + flag + g[0] + al[0];\n"
                               "}\n";
    compile_as_lab("shared_static", text);
    expect_built("static and volatile __shared__ variables");
    rewrite("shared_static", text);
    expect_accepted();
    expect_text("shared_static",
                "#line 1 \"@F\"\n"
                "       __shared__ float g[32];\n"
                "__global__ void k(const float *x, float *o)\n"
                "{\n"
                "           /* one per warp */ __shared__ float partial[32];"
                " simt_shared_first_use(&partial, sizeof(partial), \"partial\", __FILE__, __LINE__);\n"
                "    __shared__        int n; simt_shared_first_use(&n, sizeof(n), \"n\", __FILE__, __LINE__);\n"
                "    volatile __shared__ int flag; simt_shared_first_use(&flag, sizeof(flag), \"flag\", __FILE__, __LINE__);\n"
                "    alignas(16)  __shared__ float al[4]; simt_shared_first_use(&al, sizeof(al), \"al\", __FILE__, __LINE__);\n"
                "    const char *s = \"static __shared__\";\n"
                "    partial[threadIdx.x % 32] = x[threadIdx.x];\n"
                "    if (threadIdx.x == 0) n = s[0], flag = 1;\n"
                "    g[0] = 1;\n"
                "    __syncthreads();\n"
                "    o[0] = partial[0] + n + flag + g[0] + al[0];\n"
                "}\n");
}

/* A declaration of several __shared__ variables gets a call for each that
 * its block uses (the tiled matmul's As and Bs), so that each starts as
 * 0xff bytes and cp.async, ldmatrix and wmma know it for shared memory; one
 * never used still draws g++'s "unused variable". A comma inside template
 * arguments ends no declarator: that declaration is left without calls. */
static void test_shared_several_declarators(void **state)
{
    (void)state;
    static const char text[] = "template <int A, int B> struct P { float x; };\n"
                               "__global__ void k(float *p)\n"
                               "{\n"
                               "    __shared__ __align__(16) float As[2][4], Bs[2][4] /* , Cs */, *q;\n"
                               "    __shared__ P<1, 2> r;\n"
                               "    q = &Bs[1][0];\n"
                               "    As[0][threadIdx.x] = 1;\n"
                               "    p[0] = As[1][0] + Bs[0][1] + q[0] + r.x;\n"
                               "}\n";
    compile_as_lab("shared_several", text);
    expect_built("several __shared__ variables in one declaration");
    rewrite("shared_several", text);
    expect_accepted();
    expect_text("shared_several",
                "#line 1 \"@F\"\n"
                "template <int A, int B> struct P { float x; };\n"
                "__global__ void k(float *p)\n"
                "{\n"
                "    __shared__ __align__(16) float As[2][4], Bs[2][4] /* , Cs */, *q;"
                " simt_shared_first_use(&As, sizeof(As), \"As\", __FILE__, __LINE__);"
                " simt_shared_first_use(&Bs, sizeof(Bs), \"Bs\", __FILE__, __LINE__);"
                " simt_shared_first_use(&q, sizeof(q), \"q\", __FILE__, __LINE__);\n"
                "    __shared__ P<1, 2> r;\n"
                "    q = &Bs[1][0];\n"
                "    As[0][threadIdx.x] = 1;\n"
                "    p[0] = As[1][0] + Bs[0][1] + q[0] + r.x;\n"
                "}\n");
    compile_as_lab("shared_several_unused", "__global__ void k(float *o)\n"
                                            "{\n"
                                            "    __shared__ float As[32], Bs[32];\n"
                                            "    As[threadIdx.x] = 1.0f;\n"
                                            "    __syncthreads();\n"
                                            "    o[threadIdx.x] = As[31 - threadIdx.x];\n"
                                            "}\n"
                                            "void launch(float *o) { k<<<1, 32>>>(o); }\n");
    expect_error("shared_several_unused.cu:3:30: error: unused variable"); /* column 30: Bs */
}

/* Comments and literals inside a __shared__ declaration are no part of it:
 * the ';' in a comment after an extern __shared__ array was taken for the
 * declaration's end (and the rest of the comment was written as code), a
 * comment between extern and __shared__ or before the name stayed in the
 * one-line text the rewrite writes (a // comment there hid the rest of
 * it), and an '=' in a comment or a character literal was taken for an
 * initializer, which stopped the build. */
static void test_shared_declaration_comments(void **state)
{
    (void)state;
    static const char text[] = "template <char C> struct S { float x; };\n"
                               "__global__ void k(float *p)\n"
                               "{\n"
                               "    extern __shared__ float s[] /* s[i]; */;\n"
                               "    extern /* dynamic */ __shared__ float // the tile\n"
                               "        t /* [] */ [];\n"
                               "    __shared__ float u[4] /* = 0, */;\n"
                               "    __shared__ S<'='> v;\n"
                               "    u[0] = s[0] + t[0] + v.x;\n"
                               "    p[0] = u[1];\n"
                               "}\n";
    compile_as_lab("shared_comment", text);
    expect_built("comments in __shared__ declarations");
    rewrite("shared_comment", text);
    expect_accepted();
    expect_text("shared_comment",
                "#line 1 \"@F\"\n"
                "template <char C> struct S { float x; };\n"
                "__global__ void k(float *p)\n"
                "{\n"
                "     float  *const s __attribute__((unused)) = ( float  *)simt_dynamic_shared();\n"
                "     float            *const t __attribute__((unused)) = ( float            *)simt_dynamic_shared();\n"
                "\n"
                "    __shared__ float u[4] /* = 0, */; simt_shared_first_use(&u, sizeof(u), \"u\", __FILE__, __LINE__);\n"
                "    __shared__ S<'='> v; simt_shared_first_use(&v, sizeof(v), \"v\", __FILE__, __LINE__);\n"
                "    u[0] = s[0] + t[0] + v.x;\n"
                "    p[0] = u[1];\n"
                "}\n");
}

/* A macro that opens or closes a brace (#define OPEN {) is legal, and the
 * code that uses it pairs the brace it stands for with one of its own.
 * The scan sees no brace where the macro is used, so the macro's own
 * brace is left out too, and its braces pair only within it: OPEN, defined
 * in k's body, left the scan inside a function after k's end, so k2 got
 * no launch-bounds check and the extern __shared__ array after it was
 * written as a function's local; and CLOSE was taken for the end of the
 * block in which t's reads are looked for, so t, read after it, was taken
 * for stored to and never read, which stopped the lab's build. */
static void test_directive_braces_left_out(void **state)
{
    (void)state;
    static const char text[] = "__global__ void k(float *p)\n"
                               "{\n"
                               "#define OPEN {\n"
                               "    p[0] = 1;\n"
                               "}\n"
                               "__global__ void __launch_bounds__(64) k2(int *p) { p[0] = 2; }\n"
                               "extern __shared__ float dyn[];\n"
                               "__global__ void g(float *o)\n"
                               "{\n"
                               "    __shared__ float t[32];\n"
                               "    t[threadIdx.x] = dyn[0];\n"
                               "#define CLOSE }\n"
                               "    __syncthreads();\n"
                               "    o[threadIdx.x] = t[0];\n"
                               "}\n"
                               "int one() OPEN return 1; CLOSE\n"
                               "#define K3 __global__ void k3(float *o) { __shared__ float w[2]; w[0] = 1; o[0] = w[1]; }\n";
    rewrite("directive_braces", text);
    expect_accepted();
    expect_text("directive_braces",
                "#line 1 \"@F\"\n"
                "__global__ void k(float *p)\n"
                "{\n"
                "#define OPEN {\n"
                "    p[0] = 1;\n"
                "}\n"
                "__global__ void __launch_bounds__(64) k2(int *p) { simt_check_launch_bounds((unsigned long long)(64), "
                "__FILE__, __LINE__); p[0] = 2; }\n"
                "static const ::simt::DynShared< float > dyn;\n"
                "__global__ void g(float *o)\n"
                "{\n"
                "    __shared__ float t[32]; simt_shared_first_use(&t, sizeof(t), \"t\", __FILE__, __LINE__);\n"
                "    t[threadIdx.x] = dyn[0];\n"
                "#define CLOSE }\n"
                "    __syncthreads();\n"
                "    o[threadIdx.x] = t[0];\n"
                "}\n"
                "int one() OPEN return 1; CLOSE\n"
                "#define K3 __global__ void k3(float *o) { __shared__ float w[2]; simt_shared_first_use(&w, "
                "sizeof(w), \"w\", __FILE__, __LINE__); w[0] = 1; o[0] = w[1]; }\n");
    compile_as_lab("directive_braces", text);
    expect_built("braces in #define lines");
}

/* A __launch_bounds__ written in a #define that defines no kernel (the
 * bound alone, with a parameter, or with __global__ void before it) is
 * used where the macro is, which the rewrite does not follow: no check is
 * added for it anywhere. Before, its check waited for the next '{' and went
 * into the struct's body, a compile error. A bound in the code waits past a
 * #define in between for the kernel's own body, not the #define's brace. */
static void test_launch_bounds_in_macros(void **state)
{
    (void)state;
    static const char text[] = "#define LB __launch_bounds__(256)\n"
                               "#define LB_N(n) __launch_bounds__(n)\n"
                               "#define KERNEL __global__ void __launch_bounds__(128)\n"
                               "struct pair { int a, b; };\n"
                               "__global__ void LB k1(int *p) { p[0] = 1; }\n"
                               "KERNEL k2(int *p) { p[0] = 2; }\n"
                               "__global__ void LB_N(64) k3(int *p) { p[0] = 3; }\n"
                               "int twice(int x) { return 2 * x; }\n"
                               "__global__ void __launch_bounds__(32) k4(int *p)\n"
                               "#define OPEN {\n"
                               "{ p[0] = 4; }\n";
    rewrite("lb_macros", text);
    expect_accepted();
    expect_text("lb_macros", "#line 1 \"@F\"\n"
                             "#define LB __launch_bounds__(256)\n"
                             "#define LB_N(n) __launch_bounds__(n)\n"
                             "#define KERNEL __global__ void __launch_bounds__(128)\n"
                             "struct pair { int a, b; };\n"
                             "__global__ void LB k1(int *p) { p[0] = 1; }\n"
                             "KERNEL k2(int *p) { p[0] = 2; }\n"
                             "__global__ void LB_N(64) k3(int *p) { p[0] = 3; }\n"
                             "SIMT_HOST_CODE_BEGIN\n"
                             "#line 8 \"@F\"\n"
                             "int twice(int x) { return 2 * x; } SIMT_HOST_CODE_END\n"
                             "__global__ void __launch_bounds__(32) k4(int *p)\n"
                             "#define OPEN {\n"
                             "{ simt_check_launch_bounds((unsigned long long)(32), __FILE__, __LINE__); p[0] = 4; }\n");
    compile_as_lab("lb_macros", text);
    expect_built("kernels with launch bounds from macros");
}

/* A NUL byte in a comment: g++ ignores it, and the comment ends at its
 * star-slash. Before, the search for that end stopped at the NUL, so the
 * comment ran to the end of the file and nothing after it was rewritten
 * (the launch reached g++ as <<<...>>>); and a NUL in the text before a
 * brace hid the "namespace" that makes it no function body, so a kernel in
 * the namespace lost its launch-bounds check. */
static void test_nul_byte_in_comment(void **state)
{
    (void)state;
    static const char text[] = "/* a \0 b */\n"
                               "__global__ void __launch_bounds__(32) k(int *p)\n"
                               "{\n"
                               "    __shared__ int s[4];\n"
                               "    s[threadIdx.x] = 1; /* \0 */ p[0] = s[0];\n"
                               "}\n"
                               "/*\0*/ namespace n { __global__ void __launch_bounds__(16) k2(int *p) { p[0] = 2; } }\n"
                               "void run(int *p) { k<<<1, 32>>>(p); }\n";
    static const char want[] = "/* a \0 b */\n"
                               "__global__ void __launch_bounds__(32) k(int *p)\n"
                               "{ simt_check_launch_bounds((unsigned long long)(32), __FILE__, __LINE__);\n"
                               "    __shared__ int s[4]; simt_shared_first_use(&s, sizeof(s), \"s\", __FILE__, __LINE__);\n"
                               "    s[threadIdx.x] = 1; /* \0 */ p[0] = s[0];\n"
                               "}\n"
                               "/*\0*/ namespace n { __global__ void __launch_bounds__(16) k2(int *p) { "
                               "simt_check_launch_bounds((unsigned long long)(16), __FILE__, __LINE__); p[0] = 2; } }\n"
                               "SIMT_HOST_CODE_BEGIN\n";
    static const char tail[] = "void run(int *p) { ::simt::launch(::simt::LaunchConfig(1, 32), k)(p); } "
                               "SIMT_HOST_CODE_END\n";
    run_on_bytes("nul_comment", text, sizeof text - 1, "'" SIMT_REWRITE "' '%s' '%s/%s.cpp' 2>&1");
    expect_accepted();
    static char got[1 << 12];
    char cpp[512];
    snprintf(cpp, sizeof cpp, "%s/nul_comment.cpp", dir);
    FILE *f = fopen(cpp, "rb");
    assert_non_null(f);
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    /* Past the first #line; the host mark's #line names the file, then the
     * host function. */
    const char *body = memchr(got, '\n', n);
    assert_non_null(body);
    body++;
    size_t rest = n - (size_t)(body - got);
    if (rest < sizeof want - 1 + sizeof tail - 1 || memcmp(body, want, sizeof want - 1) != 0 ||
        memcmp(got + n - (sizeof tail - 1), tail, sizeof tail - 1) != 0) {
        print_error("a NUL byte in a comment must not hide the code after it, got %zu bytes:\n%.*s\n", n, (int)n, got);
        fail();
    }
    run_on_bytes("nul_comment", text, sizeof text - 1, "'" SIMTCC "' -O2 " SIMT_LAB_WERROR " -c '%s' -o '%s/%s.o' 2>&1");
    expect_built("a NUL byte in a comment");
    /* g++ ignores a NUL byte in code too: this is still an initializer. */
    static const char init[] = "__global__ void k(int *p) { __shared__ int s \0= 1; p[0] = s; }\n";
    run_on_bytes("nul_init", init, sizeof init - 1, "'" SIMT_REWRITE "' '%s' '%s/%s.cpp' 2>&1");
    expect_error("initializer not allowed for __shared__ variable");
    /* Nor is it a token: a host function's body still follows its ')'. */
    static const char host[] = "int one() \0{ return 1; }\n";
    run_on_bytes("nul_host", host, sizeof host - 1,
                 "'" SIMT_REWRITE "' '%1$s' '%2$s/%3$s.cpp' && cat '%2$s/%3$s.cpp'");
    if (status != 0 || count("SIMT_HOST_CODE_BEGIN") != 1) {
        print_error("a NUL byte between a host function's ')' and '{', got exit %d:\n%s\n", status, out);
        fail();
    }
}

/* Namespaces nested far deeper than any course file (nvcc has limits of
 * its own, but the rewrite must not be the one to crash): the scan of
 * declarations kept each level in a recursion, and 100000 levels overflowed
 * the stack. The kernel, the host functions and the launch at the bottom
 * still get their rewrite. */
static void test_deep_namespaces(void **state)
{
    (void)state;
    enum { LEVELS = 100000 };
    static const char open_ns[] = "namespace a {\n";
    static const char body[] = "__global__ void __launch_bounds__(32) k(int *p) { p[0] = 1; }\n"
                               "int h() { return 1; }\n"
                               "void g(int *p) { k<<<1, 32>>>(p); }\n";
    size_t n = LEVELS * (sizeof open_ns - 1) + sizeof body - 1 + LEVELS * 2;
    char *text = malloc(n), *w = text;
    assert_non_null(text);
    for (int l = 0; l < LEVELS; l++, w += sizeof open_ns - 1) memcpy(w, open_ns, sizeof open_ns - 1);
    memcpy(w, body, sizeof body - 1);
    w += sizeof body - 1;
    for (int l = 0; l < LEVELS; l++, w += 2) memcpy(w, "}\n", 2);
    /* The C++ less the namespaces' lines, into out. */
    run_on_bytes("deep_ns", text, n,
                 "'" SIMT_REWRITE "' '%1$s' '%2$s/%3$s.cpp' 2>&1 && grep -v -e '^namespace a {$' -e '^}$' '%2$s/%3$s.cpp'");
    free(text);
    if (status != 0 || count("{ simt_check_launch_bounds((unsigned long long)(32), __FILE__, __LINE__); p[0] = 1; }") != 1 ||
        count("SIMT_HOST_CODE_BEGIN") != 2 || count("::simt::launch(::simt::LaunchConfig(1, 32), k)(p);") != 1) {
        print_error("deeply nested namespaces, got exit %d:\n%s\n", status, out);
        fail();
    }
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* --- inline PTX ---------------------------------------------------------------
 * An asm statement of PTX becomes the emulator's instruction, on its own
 * line (the lines after it keep their numbers); an asm that is not PTX is
 * copied as it is; PTX the emulator does not model stops the build at its
 * line with a message that names it. */
static void test_inline_ptx_rewritten(void **state)
{
    (void)state;
    rewrite("ptx_mov", "__global__ void k(unsigned *o)\n"
                       "{\n"
                       "    unsigned l;\n"
                       "    asm volatile(\"mov.u32 %0, %%laneid;\"\n"
                       "                 : \"=r\"(l));\n"
                       "    asm volatile(\"\" ::: \"memory\");\n"
                       "    __asm__ __volatile__(\"pause\");\n"
                       "    asm(\".byte 0x90\");\n"
                       "    o[0] = l;\n"
                       "}\n");
    expect_accepted();
    expect_text("ptx_mov", "#line 1 \"@F\"\n"
                           "__global__ void k(unsigned *o)\n"
                           "{\n"
                           "    unsigned l;\n"
                           "    do { ::simt::ptx::device_only(\"mov.u32\", __FILE__, __LINE__); ::simt::ptx::reg __simt_p[2]; const int __simt_scratch = 1; (void)__simt_p, "
                           "(void)__simt_scratch; auto &&__simt_o0 = (l); __simt_p[0] = "
                           "::simt::ptx::reg((unsigned int)::simt::ptx::sreg_laneid()); "
                           "::simt::ptx::put(__simt_o0, __simt_p[0]); } while (0)\n"
                           ";\n"
                           "    asm volatile(\"\" ::: \"memory\");\n"
                           "    __asm__ __volatile__(\"pause\");\n"
                           "    asm(\".byte 0x90\");\n"
                           "    o[0] = l;\n"
                           "}\n");
    /* In a #define the replacement keeps the macro's line continuations. */
    rewrite("ptx_define", "#define CP_ASYNC_16(dst, src) \\\n"
                          "    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" \\\n"
                          "                 :: \"r\"(dst), \"l\"(src))\n");
    expect_accepted();
    expect_text("ptx_define", "#line 1 \"@F\"\n"
                              "#define CP_ASYNC_16(dst, src) \\\n"
                              "    do { ::simt::ptx::device_only(\"cp.async.cg.shared.global\", __FILE__, __LINE__); "
                              "::simt::ptx::reg __simt_p[3]; const int __simt_scratch = 2; (void)__simt_p, "
                              "(void)__simt_scratch; __simt_p[0] = ::simt::ptx::reg((dst)); __simt_p[1] = "
                              "::simt::ptx::reg((src)); ::simt::ptx::cp_async(__simt_p[0], 0ll, __simt_p[1], 0ll, "
                              "::simt::ptx::reg(16ull), ::simt::ptx::reg(16ull), 1, __FILE__, __LINE__); } while (0) \\\n"
                              "\n");
}

static void test_inline_ptx_builds(void **state)
{
    (void)state;
    /* As a lab's file is built: warnings are errors, and the asm sits where
     * a statement may, in an if with an else, and in a macro. */
    compile_as_lab("ptx_lab", "#include <stdint.h>\n"
                              "#define WAIT(n) asm volatile(\"cp.async.wait_group %0;\" ::\"n\"(n) : \"memory\")\n"
                              "__global__ void k(const float *src, float *o, int early)\n"
                              "{\n"
                              "    __shared__ __align__(16) float s[128];\n"
                              "    uint32_t a = (uint32_t)__cvta_generic_to_shared(s + 4 * threadIdx.x);\n"
                              "    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" :: \"r\"(a),\n"
                              "                 \"l\"(src + 4 * threadIdx.x));\n"
                              "    if (early) asm volatile(\"cp.async.wait_all;\" ::: \"memory\");\n"
                              "    else asm volatile(\"cp.async.commit_group;\");\n"
                              "    WAIT(0);\n"
                              "    __syncthreads();\n"
                              "    o[threadIdx.x] = s[threadIdx.x];\n"
                              "}\n"
                              "extern \"C\" void launch(const float *src, float *o) { k<<<1, 32>>>(src, o, 0); }\n");
    expect_built("a kernel with inline PTX");
}

static void test_inline_ptx_not_emulated(void **state)
{
    (void)state;
    compile_as_lab("ptx_wgmma", "__global__ void k(float *o)\n"
                                "{\n"
                                "    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
                                "    o[0] = 1;\n"
                                "}\n");
    expect_error("ptx_wgmma.cu:3:");
    expect_error("inline PTX 'wgmma.fence.sync.aligned': not emulated");
    expect_error("use common/hopper.cuh");
    compile_as_lab("ptx_smid", "__global__ void k(unsigned *o)\n"
                               "{\n"
                               "    unsigned x;\n"
                               "    asm(\"mov.u32 %0, %%smid;\" : \"=r\"(x));\n"
                               "    o[0] = x;\n"
                               "}\n");
    expect_error("ptx_smid.cu:4:");
    expect_error("inline PTX 'mov.u32 %smid': not emulated");
    compile_as_lab("ptx_block", "__global__ void k(unsigned *o)\n"
                                "{\n"
                                "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %0, 0;\\n}\\n\" ::\"r\"(o[0]));\n"
                                "}\n");
    expect_error("ptx_block.cu:3:");
    expect_error("a block of PTX");
    compile_as_lab("ptx_named", "__global__ void k(unsigned *o)\n"
                                "{\n"
                                "    unsigned x;\n"
                                "    asm(\"mov.u32 %[x], %%laneid;\" : [x] \"=r\"(x));\n"
                                "    o[0] = x;\n"
                                "}\n");
    expect_error("symbolic operand reference not supported");
    compile_as_lab("ptx_two", "__global__ void k(unsigned *o)\n"
                              "{\n"
                              "    asm volatile(\"cp.async.commit_group;\\ncp.async.wait_group 0;\\n\" ::: \"memory\");\n"
                              "    o[0] = 0;\n"
                              "}\n");
    expect_error("more than one instruction");
    compile_as_lab("ptx_size", "__global__ void k(float *s, const float *g)\n"
                               "{\n"
                               "    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 8;\" :: \"r\"(0u), \"l\"(g));\n"
                               "    s[0] = 0;\n"
                               "}\n");
    expect_error("a copy with .cg is 16 bytes");
    compile_as_lab("ptx_size_reg", "__global__ void k(float *s, const float *g, int n)\n"
                                   "{\n"
                                   "    asm volatile(\"cp.async.ca.shared.global [%0], [%1], %2;\" :: \"r\"(0u), \"l\"(g), \"r\"(n));\n"
                                   "    s[0] = 0;\n"
                                   "}\n");
    expect_error("cp-size must be an immediate");
    /* PTX in a host function builds here (nvcc refuses it: host code goes
     * to the host compiler) and stops the program where it runs. */
    run_on("ptx_host",
           "#include <cstdio>\n"
           "static unsigned lane() { unsigned l; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(l)); return l; }\n"
           "int main() { printf(\"%u\\n\", lane()); return 0; }\n",
           "f='%s'; '" SIMTCC "' -O1 \"$f\" -o \"$f.bin\" 2>&1 && \"$f.bin\" 2>&1");
    if (status == 0 || !strstr(out, "inline PTX 'mov.u32' at ") || !strstr(out, "ptx_host.cu:2 ran in host code"))
        fail_msg("PTX run in host code, exit %d:\n%s", status, out);
    /* PTX whose text comes from a macro reaches the x86 assembler; simtcc
     * says why. */
    compile_as_lab("ptx_macro_text", "#define LANE \"mov.u32 %0, %%laneid;\"\n"
                                     "__device__ unsigned lane_id() { unsigned l; asm volatile(LANE : \"=r\"(l)); return l; }\n"
                                     "__global__ void k(unsigned *o) { o[threadIdx.x] = lane_id(); }\n");
    expect_error("ptx_macro_text.cu: note: inline PTX reached the x86 assembler");
    compile_as_lab("other_asm_error", "__global__ void k(unsigned *o) { o[0] = undeclared; }\n");
    if (strstr(out, "inline PTX")) fail_msg("a note on inline PTX for a file that has none:\n%s", out);
}

/* --- the file's own headers ---------------------------------------------------
 * nvcc compiles a header's launches, PTX and __shared__ variables as it does
 * the .cu file's. So simtcc rewrites the headers that a .cu file includes
 * with "...", found where the compiler finds them (the including file's
 * folder, -iquote, -I), into copies that keep their names in messages. */

/* Write text to dir/rel (rel's folders made first). */
static void put_file(const char *rel, const char *text)
{
    char p[600], cmd[700];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", p);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Build dir/name.cu in dir with flags and run it, its output into out. */
static void build_and_run(const char *name, const char *text, const char *flags)
{
    char fmt[1024];
    snprintf(fmt, sizeof fmt,
             "cd '%%2$s' && '" SIMTCC "' -O1 -g %s -MMD -MF '%%3$s.d' '%%3$s.cu' -o '%%3$s.bin' 2>&1 && './%%3$s.bin' 2>&1",
             flags);
    run_on(name, text, fmt);
}

/* A kernel template of a header launched from the .cu file with its
 * template arguments left to deduce, as nvcc deduces them: the header's
 * copy declares the deduction helper after the kernel, in its namespace,
 * and the launch takes the deduced form. One whose template parameter has
 * no name draws the error a kernel of the same file would; one launched
 * with its arguments named needs no helper. */
static void test_header_kernel_deduced(void **state)
{
    (void)state;
    put_file("ded/fill.cuh", "#pragma once\n"
                             "template <typename T> __global__ void fill(T *p, T v, int n)\n"
                             "{\n"
                             "    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
                             "    if (i < n) p[i] = v;\n"
                             "}\n");
    put_file("dedinc/ops.cuh", "#pragma once\n"
                               "namespace ops {\n"
                               "template <typename T, int N = 2>\n"
                               "__global__ void scale(T *p, T by, int n)\n"
                               "{\n"
                               "    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
                               "    if (i < n) p[i] *= by * (T)N;\n"
                               "}\n"
                               "template <typename T> __global__ void add(T *p, T v) { p[threadIdx.x] += v; }\n"
                               "}\n");
    build_and_run("ded_main",
                  "#include <stdio.h>\n"
                  "#include \"ded/fill.cuh\"\n"
                  "#include \"ops.cuh\"\n"
                  "int main()\n"
                  "{\n"
                  "    float *p;\n"
                  "    int *q;\n"
                  "    cudaMallocManaged(&p, 64 * sizeof(float));\n"
                  "    cudaMallocManaged(&q, 64 * sizeof(int));\n"
                  "    fill<<<2, 32>>>(p, 2.5f, 64);\n"
                  "    fill<<<2, 32>>>(q, 7, 64);\n"
                  "    ops::scale<<<2, 32>>>(p, 3.0f, 64);\n"
                  "    ops::add<int><<<1, 32>>>(q, 1);\n"
                  "    cudaDeviceSynchronize();\n"
                  "    printf(\"%g %g %d %d\\n\", p[0], p[63], q[0], q[63]);\n"
                  "    return 0;\n"
                  "}\n",
                  "-I dedinc");
    if (status != 0 || !strstr(out, "15 15 8 7")) fail_msg("deduced launches of header kernels, exit %d:\n%s", status, out);

    put_file("ded/odd.cuh", "#pragma once\n"
                            "template <typename T, typename> __global__ void odd(T *p, T v) { p[0] = v; }\n");
    build_and_run("ded_odd",
                  "#include \"ded/odd.cuh\"\n"
                  "void f(float *p) { odd<<<1, 1>>>(p, 1.0f); }\n"
                  "int main() { return 0; }\n",
                  "");
    if (status == 0 || !strstr(out, "ded_odd.cu:2: error: the emulator cannot deduce the template arguments of kernel odd"))
        fail_msg("a header kernel whose helper cannot be written, exit %d:\n%s", status, out);
}

static void test_headers_rewritten(void **state)
{
    (void)state;
    /* The layout of a kernel ladder: each kernel in a header of a folder,
     * one header that includes them and launches them, a .cu file with
     * main. tile.cuh has a static __shared__ tile and PTX; util.cuh, beside
     * it, needs no rewrite, but launch.cuh's copy must still find it;
     * inc/scale.cuh is found through -I. Headers include each other
     * (guards) and one is included twice. */
    put_file("kernels/util.cuh", "#pragma once\n"
                                 "__device__ inline float twice(float x) { return 2.0f * x; }\n");
    put_file("kernels/tile.cuh", "#pragma once\n"
                                 "#include \"util.cuh\"\n"
                                 "__device__ inline unsigned lane() { unsigned l; asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(l)); return l; }\n"
                                 "__global__ void reverse(const float *a, float *b, int n)\n"
                                 "{\n"
                                 "    __shared__ float t[64];\n"
                                 "    int i = threadIdx.x;\n"
                                 "    t[i] = a[i] + (float)(lane() != (unsigned)(i % 32));\n"
                                 "    __syncthreads();\n"
                                 "    b[i] = twice(t[n - 1 - i]);\n"
                                 "}\n");
    put_file("kernels/launch.cuh", "#ifndef LAUNCH_CUH\n"
                                   "#define LAUNCH_CUH\n"
                                   "#include \"tile.cuh\"\n"
                                   "#include \"util.cuh\"\n"
                                   "#include \"scale.cuh\"\n"
                                   "static void run_reverse(const float *a, float *b, int n)\n"
                                   "{\n"
                                   "    reverse<<<1, n>>>(a, b, n);\n"
                                   "    scale<<<1, n>>>(b, 0.5f);\n"
                                   "}\n"
                                   "#endif\n");
    put_file("inc/scale.cuh", "#ifndef SCALE_CUH\n"
                              "#define SCALE_CUH\n"
                              "#include \"kernels/launch.cuh\"\n"
                              "__global__ void scale(float *x, float s) { x[threadIdx.x] *= s; }\n"
                              "#endif\n");
    build_and_run("hdr_main",
                  "#include <stdio.h>\n"
                  "#include \"kernels/launch.cuh\"\n"
                  "int main()\n"
                  "{\n"
                  "    float h[64], *a, *b;\n"
                  "    for (int i = 0; i < 64; i++) h[i] = (float)i;\n"
                  "    cudaMalloc(&a, sizeof h);\n"
                  "    cudaMalloc(&b, sizeof h);\n"
                  "    cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);\n"
                  "    run_reverse(a, b, 64);\n"
                  "    cudaMemcpy(h, b, sizeof h, cudaMemcpyDeviceToHost);\n"
                  "    printf(\"%g %g %s\\n\", h[0], h[63], cudaGetErrorString(cudaGetLastError()));\n"
                  "    return 0;\n"
                  "}\n",
                  "-I inc");
    if (status != 0 || !strstr(out, "63 0 no error")) fail_msg("kernels in headers, exit %d:\n%s", status, out);
    /* The dependency file names the headers, not their copies. */
    char dep[600], text[4096];
    snprintf(dep, sizeof dep, "%s/hdr_main.d", dir);
    FILE *f = fopen(dep, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    const char *deps = strstr(text, ".cu "); /* after the target, which names simtcc's temporary object */
    if (!deps || !strstr(deps, "kernels/launch.cuh") || !strstr(deps, "kernels/tile.cuh") ||
        !strstr(deps, "kernels/util.cuh") || !strstr(deps, "inc/scale.cuh") || strstr(deps, "simtcc."))
        fail_msg("the dependency file must name each header and no copy:\n%s", text);

    /* A fault in a header's kernel names the header's line; so do a
     * compile error and PTX the emulator does not run. */
    put_file("kernels/bad.cuh", "__global__ void over(float *b, int n)\n"
                                "{\n"
                                "    __shared__ float t[32];\n"
                                "    t[threadIdx.x] = 1.0f;\n"
                                "    __syncthreads();\n"
                                "    b[threadIdx.x] = t[n];\n"
                                "}\n"
                                "static void run_over(float *b, int n) { over<<<1, 32>>>(b, n); }\n");
    build_and_run("hdr_fault",
                  "#include <stdio.h>\n"
                  "#include \"kernels/bad.cuh\"\n"
                  "int main()\n"
                  "{\n"
                  "    float *b;\n"
                  "    cudaMalloc(&b, 128);\n"
                  "    run_over(b, 32);\n"
                  "    cudaError_t e = cudaDeviceSynchronize();\n"
                  "    printf(\"%s\\n\", cudaGetErrorString(e));\n"
                  "    return e == cudaSuccess;\n"
                  "}\n",
                  "");
    if (status != 0 || !strstr(out, "out of bounds") || !strstr(out, "kernels/bad.cuh:6"))
        fail_msg("an index past a header's __shared__ array, exit %d:\n%s", status, out);
    put_file("kernels/smid.cuh", "__device__ inline unsigned sm() { unsigned s; asm(\"mov.u32 %0, %%smid;\" : \"=r\"(s)); return s; }\n");
    compile_as_lab("hdr_smid", "#include \"kernels/smid.cuh\"\n"
                               "__global__ void k(unsigned *o) { o[0] = sm(); }\n");
    expect_error("kernels/smid.cuh:1:");
    expect_error("inline PTX 'mov.u32 %smid': not emulated");
    /* nvcc's execution-space check runs on a header too. */
    put_file("kernels/host_call.cuh", "float host_only(float x);\n"
                                      "__global__ void k(float *o) { o[0] = host_only(o[0]); }\n");
    compile_as_lab("hdr_space", "#include \"kernels/host_call.cuh\"\n"
                                "float host_only(float x) { return x; }\n");
    expect_error("kernels/host_call.cuh:2");
    expect_error("host_only");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_calls_host_helper),
        cmocka_unit_test(test_device_function_calls_host_helper),
        cmocka_unit_test(test_both_spaces_call_one),
        cmocka_unit_test(test_kernel_calls_constexpr_host),
        cmocka_unit_test(test_host_calls_device_function),
        cmocka_unit_test(test_kernel_called_without_launch),
        cmocka_unit_test(test_launch_of_non_kernel),
        cmocka_unit_test(test_every_call_reported),
        cmocka_unit_test(test_kernel_calls_std_library),
        cmocka_unit_test(test_host_uses_device_variable),
        cmocka_unit_test(test_accepts_device_and_both),
        cmocka_unit_test(test_accepts_what_it_cannot_see),
        cmocka_unit_test(test_accepts_other_meanings),
        cmocka_unit_test(test_accepts_std_where_allowed),
        cmocka_unit_test(test_accepts_symbol_api),
        cmocka_unit_test(test_accepts_host_code),
        cmocka_unit_test(test_host_functions_marked),
        cmocka_unit_test(test_host_code_warnings_are_errors),
        cmocka_unit_test(test_unused_shared_is_an_error),
        cmocka_unit_test(test_vla_in_kernel_is_an_error),
        cmocka_unit_test(test_toolkit_libraries_named),
        cmocka_unit_test(test_inline_ptx_rewritten),
        cmocka_unit_test(test_inline_ptx_builds),
        cmocka_unit_test(test_inline_ptx_not_emulated),
        cmocka_unit_test(test_headers_rewritten),
        cmocka_unit_test(test_header_kernel_deduced),
        cmocka_unit_test(test_launch_deduced),
        cmocka_unit_test(test_memtrace_refuses_no_sanitize),
        cmocka_unit_test(test_memtrace_notes_arch_branches),
        cmocka_unit_test(test_shared_initializer_refused),
        cmocka_unit_test(test_half_min_max),
        cmocka_unit_test(test_half_bf16_mixed),
        cmocka_unit_test(test_tensor_map_needs_grid_constant),
        cmocka_unit_test(test_host_template_call),
        cmocka_unit_test(test_depfile_names_source_after_error),
        cmocka_unit_test(test_depfile_names_source_with_space_in_tmpdir),
        cmocka_unit_test(test_launch_default_arguments),
        cmocka_unit_test(test_launch_forms_not_emulated),
        cmocka_unit_test(test_cooperative_groups_headers),
        cmocka_unit_test(test_shared_specifiers),
        cmocka_unit_test(test_shared_several_declarators),
        cmocka_unit_test(test_rewritten_text),
        cmocka_unit_test(test_rewritten_text_at_end_of_file),
        cmocka_unit_test(test_line_directive_escapes_path),
        cmocka_unit_test(test_launch_template_argument_compares),
        cmocka_unit_test(test_host_marks_left_out_under_arch),
        cmocka_unit_test(test_braces_split_across_branches),
        cmocka_unit_test(test_shared_use_across_branches),
        cmocka_unit_test(test_launch_keeps_lines),
        cmocka_unit_test(test_launch_bounds_comment),
        cmocka_unit_test(test_rewrite_errors),
        cmocka_unit_test(test_unclosed_brace_left_to_compiler),
        cmocka_unit_test(test_truncated_files),
        cmocka_unit_test(test_accepts_conditionals_and_macros),
        cmocka_unit_test(test_checks_after_conditionals),
        cmocka_unit_test(test_only_real_directives_are_conditionals),
        cmocka_unit_test(test_shared_declaration_comments),
        cmocka_unit_test(test_directive_braces_left_out),
        cmocka_unit_test(test_launch_bounds_in_macros),
        cmocka_unit_test(test_nul_byte_in_comment),
        cmocka_unit_test(test_deep_namespaces),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
