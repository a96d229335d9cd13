#!/usr/bin/env bash
# Lab 04 step B sweep: time matmul_mma under a few tile configurations on the
# GPU of this machine and rank them by TFLOP/s, with cuBLAS bf16 timed in the
# same process as the yardstick.
#
# Each configuration is a list of -D overrides of the file's #ifndef defaults
# (MMA_BM, MMA_BN, MMA_BK, MMA_STAGES, MMA_WARPS_M, MMA_WARPS_N, MMA_GROUP_M).
# The .cu file is compiled once per configuration and linked into a
# one-kernel benchmark on the lab's harness (gemm_bench_main in
# kernels/gemm_harness.c), so a sweep costs one nvcc run per configuration,
# in parallel, not a rebuild of the course per configuration as
# `make bench LAB_DEFS=...` would. The file's static_asserts are the rules:
# a configuration they reject is reported as "does not build".
#
# Run from the repository root:
#   labs/04-tensor-cores/sweep_mma.sh                       # your file, the default list
#   labs/04-tensor-cores/sweep_mma.sh --src solutions 'MMA_BK=32 MMA_STAGES=4' 'MMA_STAGES=4'
#   labs/04-tensor-cores/sweep_mma.sh --list                 # the configurations, then stop
#   labs/04-tensor-cores/sweep_mma.sh --dry-run              # compile and link the first only
# Without a GPU it says so and exits 1, since nothing was timed (--list
# works anywhere, --dry-run with nvcc alone). Everything goes under $BUILD/sweep_mma.
set -u

usage() {
    cat <<USAGE
usage: labs/04-tensor-cores/sweep_mma.sh [options] [CONFIG ...]
  CONFIG         "NAME=VALUE NAME=VALUE": -D overrides for one configuration
                 (default: the file's defaults and four variations of them)
  --src S        labs (your file, default) or solutions
  --size N       square size to time, N^3 (default 8192)
  --reps R       timed repetitions per configuration, median reported (default 5)
  --timeout S    seconds allowed per compile and per run (default 120)
  --build DIR    build folder (default: build; outputs go to DIR/sweep_mma)
  --list         print the configurations and stop
  --dry-run      compile and link the first configuration only
  -h, --help     this text
USAGE
}

src=labs size=8192 reps=5 limit=120 dry=0 list=0
BUILD=${BUILD:-build}
configs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --src) src=${2:-}; shift 2 ;;
        --size) size=${2:-}; shift 2 ;;
        --reps) reps=${2:-}; shift 2 ;;
        --timeout) limit=${2:-}; shift 2 ;;
        --build) BUILD=${2:-}; shift 2 ;;
        --list) list=1; shift ;;
        --dry-run) dry=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "sweep_mma: unknown option '$1'"; usage; exit 2 ;;
        *) configs+=("$1"); shift ;;
    esac
done
case "$src" in labs|solutions) ;; *) echo "sweep_mma: --src $src must be labs or solutions"; exit 2 ;; esac
for v in size reps limit; do
    [[ ${!v} =~ ^[0-9]+$ ]] && [ "${!v}" -ge 1 ] || { echo "sweep_mma: --$v must be a positive whole number (got '${!v}')"; exit 2; }
done
for cfg in "${configs[@]}"; do
    for d in $cfg; do
        [[ $d =~ ^MMA_[A-Z_]+=[0-9]+$ ]] || { echo "sweep_mma: '$d' is not NAME=VALUE with an MMA_ name and a whole number"; exit 2; }
    done
done
srcfile=$src/04-tensor-cores/matmul_mma.cu
[ -f "$srcfile" ] && [ -f Makefile ] || { echo "sweep_mma: run me from the repository root (no $srcfile here)"; exit 2; }

# The defaults (no override), the other block-tile orientation, a deeper
# pipeline (192 KB: Hopper only), half the K step with 4 stages (96 KB), and
# a 128 x 128 tile of four 64 x 64 warps (two blocks per SM).
if [ ${#configs[@]} -eq 0 ]; then
    configs=("MMA_GROUP_M=16"
             "MMA_BM=256 MMA_BN=128 MMA_WARPS_M=4 MMA_WARPS_N=2"
             "MMA_STAGES=4"
             "MMA_BK=32 MMA_STAGES=4"
             "MMA_BN=128 MMA_WARPS_N=2")
fi
if [ $list = 1 ]; then printf '%s\n' "${configs[@]}"; exit 0; fi

have_gpu=0
nvidia-smi -L 2>/dev/null | grep -q '^GPU' && have_gpu=1
if [ $have_gpu = 0 ] && [ $dry = 0 ]; then
    echo "sweep_mma: no NVIDIA GPU visible (nvidia-smi -L); tile sizes can only be timed on a GPU."
    echo "sweep_mma: --list prints the configurations; --dry-run also checks that the first compiles."
    exit 1
fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
who=sweep_mma lab=04-tensor-cores
. common/tools/gemm_tune_lib.sh
tune_find_nvcc

# Step B runs on sm_80 and later; the course builds Hopper as sm_90a.
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
case "$cap" in ""|90) arch=90a ;; *) arch=$cap ;; esac

out=$BUILD/sweep_mma
echo "sweep_mma: matmul_mma from $srcfile, ${#configs[@]} configurations, sm_$arch, ${size}^3, $reps reps"
# A one-kernel benchmark on the lab's harness (common/tools/gemm_tune_lib.sh
# builds it, and each configuration with build_one TAG CONFIG).
tune_prepare '#include <stdint.h>
#include "gemm_harness.h"
int matmul_mma(int M, int N, int K, float alpha, const uint16_t *A, const uint16_t *B, float beta, float *C);
int main(int argc, char **argv) {
    const gemm_kernel_t k[] = {{"matmul_mma", NULL, matmul_mma}};
    return gemm_bench_main("04", "lab 04 step B sweep: one configuration", k, 1, argc, argv);
}'

if [ $dry = 1 ]; then
    if build_one dry "${configs[0]}"; then
        read -r regs spill < <(ptxas_figures "$out/dry")
        echo "sweep_mma: ok: ${configs[0]} -> $out/dry/bench ($regs registers, $spill bytes spilled)"
        exit 0
    fi
    echo "sweep_mma: the first configuration did not build; see $out/dry/compile.log"
    tail -n 20 "$out/dry/compile.log"; exit 1
fi

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1
# Compiling needs no GPU and is the slow part: all at once; then the timed
# runs one at a time, so they do not disturb each other.
i=0
for cfg in "${configs[@]}"; do
    i=$((i + 1))
    tag=$(printf 'c%02d' $i)
    rm -rf "${out:?}/$tag"
    ( build_one "$tag" "$cfg" && touch "$out/$tag/built" ) &
done
wait
results="$out/results.txt"
: >"$results"
i=0
for cfg in "${configs[@]}"; do
    i=$((i + 1))
    tag=$(printf 'c%02d' $i)
    if [ ! -f "$out/$tag/built" ]; then
        printf '[%2d/%d] %-56s does not build (%s)\n' $i ${#configs[@]} "$cfg" "$out/$tag/compile.log"
        continue
    fi
    read -r regs spill < <(ptxas_figures "$out/$tag")
    timeout --kill-after=10 "$limit" "$out/$tag/bench" --sizes "$size" --reps "$reps" >"$out/$tag/run.log" 2>&1
    rc=$?
    # The kernel's row: M N K name ms TFLOP/s %cuBLAS err status.
    row=$(awk '$4 == "matmul_mma"' "$out/$tag/run.log" | tail -n 1)
    read -r _ _ _ _ ms tf pct _ status <<<"$row"
    if [ $rc -ne 0 ] || [ "${status:-}" != ok ]; then
        why=${status:-no result}; [ $rc -eq 124 ] && why="timed out after ${limit}s"
        printf '[%2d/%d] %-56s failed (%s; rc %d; %s)\n' $i ${#configs[@]} "$cfg" "$why" $rc "$out/$tag/run.log"
        continue
    fi
    printf '[%2d/%d] %-56s %8s TFLOP/s %6s%% of cuBLAS  %s regs, %s B spilled\n' \
        $i ${#configs[@]} "$cfg" "$tf" "$pct" "$regs" "$spill"
    echo "$tf $pct $regs $spill $cfg" >>"$results"
done
echo
[ -s "$results" ] || { echo "sweep_mma: no configuration ran; see the logs under $out"; exit 1; }
echo "sweep_mma: matmul_mma at ${size}^3, best first (cuBLAS bf16 timed in each run)"
printf '%4s %9s %8s %5s %6s  %s\n' rank TFLOP/s %cuBLAS regs spill configuration
sort -k1,1 -g -r "$results" | awk '{ c = ""; for (i = 5; i <= NF; i++) c = c " " $i;
    printf "%4d %9s %8s %5s %6s %s\n", NR, $1, $2, $3, $4, c }'
best=$(sort -k1,1 -g -r "$results" | head -n 1 | cut -d' ' -f5-)
dline=""
for d in $best; do dline="$dline -D$d"; done
echo "best:$dline"
echo "apply it: set these values in the #ifndef defaults at the top of $srcfile, then run make check LAB=04."
