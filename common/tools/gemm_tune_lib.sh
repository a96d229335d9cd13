# Shared by the tile-size searches (labs/03-register-tiling/autotune.sh and
# labs/04-tensor-cores/sweep_mma.sh): build the harness libraries once, then
# compile one kernel file per configuration with -D overrides and link it
# into a one-kernel benchmark on the labs' harness (gemm_bench_main in
# kernels/gemm_harness.c). Sourced from the repository root, after the caller
# has set: who (the name in messages), out (the output folder), BUILD, arch
# (nvcc's target, e.g. 90a), limit (seconds per compile), srcfile (the .cu
# file), lab (its folder under labs/) and CUDA_HOME.

# tune_find_nvcc: NVCC = nvcc on PATH, else under CUDA_HOME; exits without one.
tune_find_nvcc() {
    NVCC=$(command -v nvcc 2>/dev/null || true)
    [ -n "$NVCC" ] || { [ -x "$CUDA_HOME/bin/nvcc" ] && NVCC=$CUDA_HOME/bin/nvcc; }
    [ -n "$NVCC" ] || { echo "$who: nvcc not found (install the CUDA toolkit or set CUDA_HOME)"; exit 1; }
}

# tune_prepare MAIN_C: build the libraries the benchmark links (into libs)
# and compile the benchmark's main, whose C source is MAIN_C, into
# $out/tune_main.o. Exits with the log's tail on a failure.
tune_prepare() {
    mkdir -p "$out"
    libs="$BUILD/cuda/lib/libkernels_cuda.a $BUILD/lib/libkernels_cpu.a $BUILD/cuda/lib/libcommon_gpu.a $BUILD/lib/libcommon.a"
    echo "$who: building the harness libraries (make BUILD=$BUILD CUDA_ARCH=$arch)"
    if ! timeout "$((limit * 5))" make --no-print-directory BUILD="$BUILD" CUDA_ARCH="$arch" $libs \
            >"$out/make.log" 2>&1; then
        echo "$who: building the libraries failed; see $out/make.log"; tail -n 20 "$out/make.log"; exit 1
    fi
    printf '%s\n' "$1" >"$out/tune_main.c"
    gcc -std=c11 -O2 -Wall -Wextra -Werror -Icommon -Ikernels -I"$CUDA_HOME/include" \
        -c "$out/tune_main.c" -o "$out/tune_main.o" || { echo "$who: compiling the benchmark main failed"; exit 1; }
}

# build_one TAG "NAME=VALUE ...": compile and link one configuration into $out/TAG/bench.
build_one() {
    local tag=$1 defs=() d
    for d in $2; do defs+=("-D$d"); done
    mkdir -p "$out/$tag"
    timeout "$limit" "$NVCC" -O3 -std=c++17 -lineinfo -gencode "arch=compute_$arch,code=sm_$arch" \
        -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -Xptxas -v -Icommon -Ikernels \
        -I"labs/$lab" "${defs[@]}" -c "$srcfile" -o "$out/$tag/kernel.o" >"$out/$tag/compile.log" 2>&1 || return 1
    g++ -o "$out/$tag/bench" "$out/tune_main.o" "$out/$tag/kernel.o" $libs \
        -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart -lcublas -lcublasLt \
        -lopenblas -lcmocka -lm -fopenmp >>"$out/$tag/compile.log" 2>&1
}

# ptxas_figures DIR: ptxas's figures for the kernel built in DIR, "REGS SPILL_BYTES".
ptxas_figures() {
    local regs spill
    regs=$(grep -oE 'Used [0-9]+ registers' "$1/compile.log" | tail -n 1 | grep -oE '[0-9]+')
    spill=$(grep -oE '[0-9]+ bytes spill stores' "$1/compile.log" | tail -n 1 | grep -oE '^[0-9]+')
    echo "${regs:-?} ${spill:-0}"
}
