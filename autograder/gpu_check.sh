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
    local status=ok
    [ $rc -eq 0 ] || { status="FAIL($rc)"; bad=1; }
    # The key figure: a bench's last table row, a test run's "N passed, N failed" line.
    local fig; fig=$(grep -v '^ *$' "$log" | tail -n 1 | tr -s ' ' | cut -c1-70)
    rows+=("$(printf '%-40s %-9s %5ss  %s' "$name" "$status" "$dt" "$fig")")
    echo "--- $name: $status (${dt}s)"
}

step build make -j"$(nproc)" CUDA_ARCH=90a TARGET=cuda all
step unit-tests make test-run CUDA_ARCH=90a TARGET=cuda
for lab in $(ls -d labs/[0-9][0-9]-* 2>/dev/null | xargs -n1 basename); do
    nn=${lab%%-*}
    step "check $lab (solutions)" make check LAB="$nn" SRC=solutions TARGET=cuda CUDA_ARCH=90a
    if [ -f "labs/$lab/bench.c" ]; then
        step "bench $lab (solutions)" make bench LAB="$nn" SRC=solutions TARGET=cuda CUDA_ARCH=90a \
            ARGS="--json $out/bench-$lab.json"
    fi
done

echo
echo "gpu-check summary ($(cat "$out/device.txt"); $(( $(date +%s) - start ))s; logs in $out)"
printf '%-40s %-9s %6s  %s\n' "item" "status" "time" "figure"
printf '%s\n' "${rows[@]}"
exit $bad
