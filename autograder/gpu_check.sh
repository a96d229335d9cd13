#!/usr/bin/env bash
# `make gpu-check`: on a GPU machine, build for sm_90a and run every GPU test
# and benchmark that exists, then print one summary table. Without a GPU it
# says so and exits 0.
#
# The items run in order of what they tell us, under a time budget
# (GPU_CHECK_BUDGET seconds from the start, build included, default 300):
# once it is spent, the remaining items are listed as "budget" instead of
# run, and GPU_CHECK_BUDGET=0 runs them all. Each item has its own time limit
# (240 s, the grader 330 s), cut to what is left of the budget plus 30 s, so
# the whole run ends within about GPU_CHECK_BUDGET + 30 seconds (a GPU lent
# for a few minutes is not overrun by the item that happened to start last).
set -u
BUILD=${BUILD:-build}
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "gpu-check: no NVIDIA GPU visible (nvidia-smi -L); nothing to do here."
    echo "gpu-check: every check also runs on the CPU: make test (TARGET=emu)."
    exit 0
fi
# A GPU machine that cannot reach a package registry: unpack the packages that
# common/tools/gpu_bundle.sh packed elsewhere (into the bundle's own root,
# never into /) and point the tools there. GPU_BUNDLE names another bundle.
bundle=${GPU_BUNDLE:-.gpu-bundle}
root=
if [ -d "$bundle/debs" ] && ls "$bundle"/debs/*.deb >/dev/null 2>&1; then
    root=$(cd "$bundle" && pwd)/root
    if [ ! -e "$root/.unpacked" ]; then
        mkdir -p "$root"
        for d in "$bundle"/debs/*.deb; do
            if command -v dpkg-deb >/dev/null; then
                dpkg-deb -x "$d" "$root"
            else # ar and tar alone: a .deb is an ar archive holding data.tar.*
                member=$(ar t "$d" | grep '^data\.tar')
                ar p "$d" "$member" | tar -x -C "$root" -f - || { echo "gpu-check: cannot unpack $d"; exit 1; }
            fi || { echo "gpu-check: cannot unpack $d"; exit 1; }
        done
        touch "$root/.unpacked"
    fi
    multi=$root/usr/lib/x86_64-linux-gnu
    export PATH="$root/usr/bin:$PATH"
    export CPATH="$root/usr/include:$root/usr/include/x86_64-linux-gnu:$root/usr/include/x86_64-linux-gnu/openblas-pthread${CPATH:+:$CPATH}"
    export LIBRARY_PATH="$multi:$multi/openblas-pthread${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$multi:$multi/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "gpu-check: using the packages of $bundle ($(ls "$bundle"/debs/*.deb | wc -l) .deb files)"
fi
for tool in make gcc g++; do
    command -v "$tool" >/dev/null || { echo "gpu-check: $tool is missing; bring it in the bundle (common/tools/gpu_bundle.sh)"; exit 1; }
done
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "gpu-check: a GPU is present but nvcc is not; install the CUDA toolkit first."
    exit 1
fi

# What the build will use, for the log: a build that fails on a new machine
# usually fails here (no cuBLAS or NCCL next to nvcc).
make --no-print-directory help 2>/dev/null | grep -E '^found:' | sed 's/^/gpu-check: /'
cuda_home=$(make --no-print-directory -s -f Makefile print-CUDA_HOME 2>/dev/null || true)
[ -n "$cuda_home" ] && echo "gpu-check: CUDA_HOME=$cuda_home; cuBLAS: $(ls "$cuda_home"/lib64/libcublas.so* 2>/dev/null | head -n 1 || true)"
# A toolkit without cuBLAS next to nvcc, on a machine whose Python has NVIDIA's
# cuBLAS wheel: link against the wheel's libraries (they carry only versioned
# names, so -lcublas gets links of its own) and read its headers. CUDA 12's
# wheel has them in nvidia/cublas/{lib,include}; CUDA 13's wheels share
# nvidia/cu13/{lib,include}.
if [ -n "$cuda_home" ] && ! ls "$cuda_home"/lib64/libcublas.so >/dev/null 2>&1; then
    nv=$(python3 -c 'import nvidia, sys; sys.stdout.write(list(nvidia.__path__)[0])' 2>/dev/null || true)
    wheel=
    for w in "$nv/cu13" "$nv/cublas"; do
        if [ -n "$nv" ] && ls "$w"/lib/libcublas.so.* >/dev/null 2>&1; then wheel=$w; break; fi
    done
    if [ -n "$wheel" ]; then
        # An absolute path: the grader builds in copies of the course elsewhere.
        mkdir -p "$BUILD/gpu-check/wheel-libs"
        links=$(cd "$BUILD/gpu-check/wheel-libs" && pwd)
        for l in "$wheel"/lib/libcublas.so.* "$wheel"/lib/libcublasLt.so.*; do
            [ -e "$l" ] && ln -sf "$l" "$links/$(basename "$l" | sed 's/\.so\..*/.so/')"
        done
        export LIBRARY_PATH="$links:$wheel/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
        export LD_LIBRARY_PATH="$wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        export CPATH="$wheel/include${CPATH:+:$CPATH}"
        echo "gpu-check: no cuBLAS in $cuda_home/lib64; using the one in $wheel"
    fi
fi

# A toolkit newer than the driver builds fine, but its programs then find no
# GPU (cudaErrorInsufficientDriver) and every check would be skipped: stop
# here instead, before minutes of building. nvidia-smi's header names the
# newest CUDA the driver runs.
nvcc_bin=nvcc
[ -n "$cuda_home" ] && [ -x "$cuda_home/bin/nvcc" ] && nvcc_bin=$cuda_home/bin/nvcc
drv_cuda=$(nvidia-smi 2>/dev/null | grep -oE 'CUDA Version: *[0-9]+\.[0-9]+' | grep -oE '[0-9]+\.[0-9]+' | head -n 1)
nvcc_cuda=$("$nvcc_bin" --version 2>/dev/null | grep -oE 'release [0-9]+\.[0-9]+' | grep -oE '[0-9]+\.[0-9]+' | head -n 1)
if [ -n "$drv_cuda" ] && [ -n "$nvcc_cuda" ]; then
    echo "gpu-check: nvcc is CUDA $nvcc_cuda; the driver runs CUDA $drv_cuda at most"
    if [ "${nvcc_cuda%%.*}" -gt "${drv_cuda%%.*}" ]; then
        echo "gpu-check: this toolkit is newer than the driver: its programs would find no GPU. Use a CUDA ${drv_cuda%%.*}.x toolkit (make gpu-check CUDA_HOME=...) or a newer driver."
        exit 1
    fi
fi

out="$BUILD/gpu-check"
# A build of its own, for sm_90a only: objects in $BUILD may carry other flags.
gbuild="$out/build"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
start=$(date +%s)
rows=() bad=0

budget=${GPU_CHECK_BUDGET:-300}

# step NAME CMD...: run one item with a time limit, record status and time;
# past the budget, record it as not run. STEP_LIMIT=S before it: its own limit.
step() {
    local name="$1"; shift
    local spent=$(( $(date +%s) - start ))
    if [ "$budget" -gt 0 ] && [ "$spent" -ge "$budget" ]; then
        rows+=("$(printf '%-44s %-9s %5ss  %s' "$name" "budget" "-" "not run: ${spent}s of ${budget}s spent")")
        echo "--- $name: not run (budget)"
        return
    fi
    local t0=$(date +%s) rc limit=${STEP_LIMIT:-240}
    if [ "$budget" -gt 0 ] && [ $(( budget - spent + 30 )) -lt "$limit" ]; then
        limit=$(( budget - spent + 30 ))
    fi
    local log="$out/${name//[^A-Za-z0-9_-]/_}.log"
    timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1; rc=$?
    local dt=$(( $(date +%s) - t0 ))
    local status=ok fig
    local p s
    p=$(grep -oE '\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -n 1)
    s=$(grep -oE '\[  SKIPPED \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | tail -n 1)
    # The test runner's own summary adds up every suite it ran (cmocka's last
    # lines are only the last suite's).
    local summary
    summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n 1)
    if [ -n "$summary" ]; then
        p=${summary%% passed*}
        s=$(sed -E 's/.* ([0-9]+) skipped.*/\1/' <<<"$summary")
    fi
    # The memory-pattern checks of labs 01-03 count coalescing and bank
    # conflicts on the emulator only; on a GPU they skip by design, saying
    # so in these words (kernels/gemm_harness.c), and are no fault here.
    local emu_only
    emu_only=$(grep -c 'counted on the emulator (TARGET=emu)' "$log")
    if [ -n "$s" ] && [ "$emu_only" -gt 0 ]; then
        s=$(( s > emu_only ? s - emu_only : 0 ))
    fi
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        status="TIMEOUT"; bad=1
        echo "(stopped after ${limit}s)" >>"$log"
    elif [ $rc -ne 0 ]; then
        status="FAIL($rc)"; bad=1
    elif [ -n "$s" ] && [ "$s" -gt 0 ] && [ "${p:-0}" -eq 0 ]; then
        status="SKIPPED"; bad=1 # on a GPU machine nothing should be skipped wholesale
    elif [ -n "$s" ] && [ "$s" -gt 0 ]; then
        # Nor in part: on an H100 or H200 with an sm_90a build every GPU test
        # and check can run (Hopper-only steps included), so a skip means a
        # test did not find the device it needs. Its log says which.
        status="SKIPS($s)"; bad=1
    elif grep -qE '^bench: no GPU' "$log"; then
        status="NO-GPU"; bad=1 # a bench that found no device exits 0, but timed nothing
    elif grep -qE '^TOTAL 0 / ' "$log"; then
        status="0-POINTS"; bad=1 # the grader finished, but the solutions earned nothing
    fi
    if grep -qE '^[0-9]+ passed, [0-9]+ failed' "$log"; then # the test runner's summary
        fig=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    elif grep -qE '^TOTAL ' "$log"; then # the grader's total
        fig=$(grep -E '^TOTAL ' "$log" | tail -n 1 | cut -c1-70)
    elif [ -n "$p$s" ]; then
        fig="${p:-0} passed, ${s:-0} skipped"
        [ "$emu_only" -gt 0 ] && fig="$fig, $emu_only emulator-only"
    else # a bench's last table row
        fig=$(grep -v '^ *$' "$log" | tail -n 1 | tr -s ' ' | cut -c1-70)
    fi
    rows+=("$(printf '%-44s %-9s %5ss  %s' "$name" "$status" "$dt" "$fig")")
    echo "--- $name: $status (${dt}s)"
}

# (an array, not a function: timeout runs a program)
mk=(make --no-print-directory BUILD="$gbuild" CUDA_ARCH=90a TARGET=cuda)
# make check and make bench first look for the Debian packages (make deps),
# which cannot see a bundle's: they would try apt-get and fail.
[ -n "${root:-}" ] && mk+=(NO_DEPS=1)
labs=$(ls -d labs/[0-9][0-9]-* 2>/dev/null | xargs -n1 basename)

# 1. Build, then the course's headline figures first, as a GPU lent for a few
#    minutes may not last the whole list: the matmul ladder against cuBLAS in
#    one table (lab 04's bench times labs 01-03 too; its 4096 and 8192 rows
#    hold labs 03 and 04's targets), and lab 05's MFU at the default shape
#    with where a step's device time goes.
step build "${mk[@]}" -j"$(nproc)" all-cuda
if [ -f labs/04-tensor-cores/bench.c ]; then
    step "bench 04-tensor-cores (solutions)" "${mk[@]}" bench LAB=04 SRC=solutions ARGS="--json $out/bench-04-tensor-cores.json"
fi
if [ -f labs/05-single-gpu-training/bench.c ]; then
    step "bench 05 --profile 1 (solutions)" "${mk[@]}" bench LAB=05 SRC=solutions \
        ARGS="--profile 1 --json $out/bench-05.json"
    # The same shape at twice the batch: per-step costs that do not grow with
    # it (AdamW, the gradient norm, launches) weigh half as much, and the
    # matmuls are taller. Whether that moves MFU decides the bench's default.
    step "bench 05 --batch 16 (solutions)" "${mk[@]}" bench LAB=05 SRC=solutions \
        ARGS="--batch 16 --json $out/bench-05-batch16.json"
fi
# Step B's tile sizes: a handful of configurations of the solution, ranked
# against cuBLAS bf16 (the lab's own sweep; its table and best -D line are in
# the step's log).
if [ -x labs/04-tensor-cores/sweep_mma.sh ]; then
    step "sweep 04 mma tiles (solutions)" labs/04-tensor-cores/sweep_mma.sh --src solutions --build "$gbuild"
fi
# 2. The suites that run on the device (kernels against the CPU references,
#    the fused attention, the model's variants, NCCL's refusal), and the
#    emulator's model of TMA, mbarriers and wgmma against the hardware: the
#    same test passes on the emulator in CI (lab 04 step C is checked there).
hopper_test="$gbuild/tests/test_hopper_cuda"
step "hopper.cuh on the GPU (emulator model)" bash -c "$(printf '%q ' "${mk[@]}") $hopper_test && $hopper_test"
step "unit tests (GPU suites)" "${mk[@]}" test-gpu-run
# 3. The grader on the solutions with a GPU: every lab's checks and every speed
#    rubric measured, and the time of `make grade SRC=solutions` on a GPU (its
#    TOTAL line). The longest item, with the most in it.
STEP_LIMIT=330 step "grade solutions (cuda)" "${mk[@]}" grade-run SRC=solutions GRADE_ARGS="--json $out/grade.json"
# 4. Every lab's checks on their own (the grader ran them too; these say more on a failure).
for lab in $labs; do
    step "check $lab (solutions)" "${mk[@]}" check LAB="${lab%%-*}" SRC=solutions
done
# 5. The other labs' benches, from the top of the ladder down.
for lab in $(printf '%s\n' $labs | sort -r); do
    case "$lab" in 04-*|05-*) continue ;; esac
    if [ -f "labs/$lab/bench.c" ]; then
        step "bench $lab (solutions)" "${mk[@]}" bench LAB="${lab%%-*}" SRC=solutions ARGS="--json $out/bench-$lab.json"
    fi
done
# 6. Lab 05 with the stored T x T attention, and on the lab-04 step B and
#    step C solutions instead of cuBLAS (the --matmul switch).
if [ -f labs/05-single-gpu-training/bench.c ]; then
    step "bench 05 --attention naive (solutions)" "${mk[@]}" bench LAB=05 SRC=solutions \
        ARGS="--attention naive --json $out/bench-05-naive.json"
    step "bench 05 --matmul mma (solutions)" "${mk[@]}" bench LAB=05 SRC=solutions \
        ARGS="--matmul mma --json $out/bench-05-mma.json"
    step "bench 05 --matmul wgmma (solutions)" "${mk[@]}" bench LAB=05 SRC=solutions \
        ARGS="--matmul wgmma --json $out/bench-05-wgmma.json"
fi
# 7. Last, as it is the longest: a bounded search of lab 03's warp-tiled kernel
#    (its ranked table and best -D line are in the step's log).
if [ -x labs/03-register-tiling/autotune.sh ]; then
    step "autotune 03 warptile (24 configs)" labs/03-register-tiling/autotune.sh --src solutions --max 24 \
        --reps 3 --arch 90a --build "$gbuild"
fi

echo
echo "gpu-check summary ($(cat "$out/device.txt"); $(( $(date +%s) - start ))s of a ${budget}s budget; logs in $out)"
printf '%-44s %-9s %6s  %s\n' "item" "status" "time" "figure"
printf '%s\n' "${rows[@]}"
# What a row cannot hold, from the logs of the items that ran: the ladder at
# the target sizes, where lab 05's step goes (each category's TB/s and
# TFLOP/s) and the best tile sizes the sweeps found, so one run's output says
# what to change next.
details() { # details ITEM ERE: the lines of ITEM's log that match ERE, indented
    local log="$out/${1//[^A-Za-z0-9_-]/_}.log"
    [ -s "$log" ] && grep -qE -- "$2" "$log" || return 0
    echo
    echo "  from $1:"
    grep -E -- "$2" "$log" | head -n 40 | sed 's/^/  /'
}
details "bench 04-tensor-cores (solutions)" '^# +M |^ +(4096|8192) +(4096|8192) +(4096|8192) '
details "bench 05 --profile 1 (solutions)" '^# |^[a-z]+\+[a-z]+ '
details "sweep 04 mma tiles (solutions)" '^ *rank |^ *[0-9]+ +[0-9.]+ +[0-9.]+ |^best:'
details "autotune 03 warptile (24 configs)" '^ *rank |^ *[0-9]+ +[0-9.]+ +[0-9.]+ |^best:|^autotune: the file'
exit $bad
