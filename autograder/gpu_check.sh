#!/usr/bin/env bash
# `make gpu-check`: on a GPU machine, build for sm_90a and run every GPU test
# and benchmark that exists, then print one summary table. Without a GPU it
# says so and exits 0. Designed to finish within about 6 minutes on an H100/H200.
set -u
BUILD=${BUILD:-build}
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "gpu-check: no NVIDIA GPU visible (nvidia-smi -L); nothing to do here."
    echo "gpu-check: every check also runs on the CPU: make test (TARGET=emu)."
    exit 0
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "gpu-check: a GPU is present but nvcc is not; install the CUDA toolkit first."
    exit 1
fi

out="$BUILD/gpu-check"
# A build of its own, for sm_90a only: objects in $BUILD may carry other flags.
gbuild="$out/build"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
start=$(date +%s)
rows=() bad=0

# step NAME CMD...: run one item with a time limit, record status and time.
step() {
    local name="$1"; shift
    local t0=$(date +%s) rc
    local log="$out/${name//[^A-Za-z0-9_-]/_}.log"
    timeout --kill-after=10 240 "$@" >"$log" 2>&1; rc=$?
    local dt=$(( $(date +%s) - t0 ))
    local status=ok fig
    local p s
    p=$(grep -oE '\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -n 1)
    s=$(grep -oE '\[  SKIPPED \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | tail -n 1)
    if [ $rc -ne 0 ]; then
        status="FAIL($rc)"; bad=1
    elif [ -n "$s" ] && [ "${p:-0}" -eq 0 ]; then
        status="SKIPPED"; bad=1 # on a GPU machine nothing should be skipped wholesale
    fi
    if grep -qE '^[0-9]+ passed, [0-9]+ failed' "$log"; then # the test runner's summary
        fig=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    elif [ -n "$p$s" ]; then
        fig="${p:-0} passed, ${s:-0} skipped"
    else # a bench's last table row, a test run's "N passed, N failed" line
        fig=$(grep -v '^ *$' "$log" | tail -n 1 | tr -s ' ' | cut -c1-70)
    fi
    rows+=("$(printf '%-40s %-9s %5ss  %s' "$name" "$status" "$dt" "$fig")")
    echo "--- $name: $status (${dt}s)"
}

step build make -j"$(nproc)" BUILD="$gbuild" CUDA_ARCH=90a TARGET=cuda all
step unit-tests make test-run BUILD="$gbuild" CUDA_ARCH=90a TARGET=cuda
for lab in $(ls -d labs/[0-9][0-9]-* 2>/dev/null | xargs -n1 basename); do
    nn=${lab%%-*}
    step "check $lab (solutions)" make check BUILD="$gbuild" LAB="$nn" SRC=solutions TARGET=cuda CUDA_ARCH=90a
    if [ -f "labs/$lab/bench.c" ]; then
        step "bench $lab (solutions)" make bench BUILD="$gbuild" LAB="$nn" SRC=solutions TARGET=cuda CUDA_ARCH=90a \
            ARGS="--json $out/bench-$lab.json"
    fi
done
# Lab 05's model: where a step's time goes (the log holds the table), then with
# the stored T x T attention instead of the fused one, and on the lab-04 step B
# solution instead of cuBLAS (the --matmul switch).
if [ -f labs/05-single-gpu-training/bench.c ]; then
    step "bench 05 --profile 1 (solutions)" make bench BUILD="$gbuild" LAB=05 SRC=solutions TARGET=cuda \
        CUDA_ARCH=90a ARGS="--profile 1"
    step "bench 05 --attention naive (solutions)" make bench BUILD="$gbuild" LAB=05 SRC=solutions TARGET=cuda \
        CUDA_ARCH=90a ARGS="--attention naive --json $out/bench-05-naive.json"
    step "bench 05 --matmul mma (solutions)" make bench BUILD="$gbuild" LAB=05 SRC=solutions TARGET=cuda \
        CUDA_ARCH=90a ARGS="--matmul mma --json $out/bench-05-mma.json"
fi
# Last, as it is the longest: a bounded search of lab 03's warp-tiled kernel
# (its ranked table and best -D line are in the step's log).
if [ -x labs/03-register-tiling/autotune.sh ]; then
    step "autotune 03 warptile (24 configs)" labs/03-register-tiling/autotune.sh --src solutions --max 24 \
        --reps 3 --arch 90a --build "$gbuild"
fi

echo
echo "gpu-check summary ($(cat "$out/device.txt"); $(( $(date +%s) - start ))s; logs in $out)"
printf '%-40s %-9s %6s  %s\n' "item" "status" "time" "figure"
printf '%s\n' "${rows[@]}"
exit $bad
