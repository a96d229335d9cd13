#!/usr/bin/env bash
# The test runner behind `make test`.
#
# Runs every cmocka program (directly, or under mpirun for the MPI suites),
# the docs check and each lab's check (solutions must pass, unmodified
# starters must fail with "not implemented"), each with a time limit.
# cmocka's own summary lines are added up; a program that crashes, times out
# or exits non-zero without reporting a failure counts as one failed test, so
# nothing broken can pass quietly. The last line is "N passed, N failed".
set -u
unit="" mpi="" labs=""
while [ $# -gt 0 ]; do
    case "$1" in
        --unit) unit="$2"; shift 2 ;;
        --mpi)  mpi="$2"; shift 2 ;;
        --labs) labs="$2"; shift 2 ;;
        *) echo "run_suites: unknown argument '$1'"; exit 2 ;;
    esac
done
BUILD=${BUILD:-build}
NP=${NP:-4}
TIMEOUT=${TEST_TIMEOUT:-600}
# The grader's self-test grades over a hundred submissions, each in a fresh
# copy of the course, so it gets a longer leash (about 14 minutes on 2 cores).
GRADE_TIMEOUT=${GRADE_TEST_TIMEOUT:-1800}
MPIRUN=${MPIRUN:-mpirun --oversubscribe}
export MPIRUN
# Open MPI refuses root unless told; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Keep Open MPI off the network interfaces: the tests run on one machine.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none

passed=0 failed=0 skipped=0
failures=()
# What each failure printed that says why, repeated at the end: a CI log that
# keeps only its head and tail still shows it.
details=()
# excerpt LABEL OUTPUT: the lines of OUTPUT that report a failure (cmocka's,
# the scripts' "FAIL:" and "ERROR", compilers' "error:"), else its last lines.
excerpt() {
    local lines
    lines=$(grep -E 'FAIL|ERROR|[Ee]rror:|Assertion|Segmentation|Aborted|timed out' <<<"$2" | head -n 12)
    [ -n "$lines" ] || lines=$(tail -n 8 <<<"$2")
    details+=("--- $1:" "$(sed 's/^/    /' <<<"$lines")")
}
# "SECONDS CPU LABEL" per item, for the list of the slowest at the end: where
# make test's time goes, on any machine. CPU is the seconds its processes
# ran on a core (user + system): an item whose wall time is far above it
# spends most of that time waiting (timeouts, sleeps), not computing.
timings=()
# cpu_now: the user + system CPU of every child this shell has waited for,
# in clock ticks (fields 16 and 17 of /proc/PID/stat, after the command name;
# read for $$, since `times` in a command substitution sees the subshell's).
# cpu_now [PID]: the same for the shell PID (a background subshell passes its
# $BASHPID).
cpu_now() {
    local st; st=$(cat /proc/"${1:-$$}"/stat 2>/dev/null) || { echo 0; return; }
    st=${st##*) }
    awk '{ print $14 + $15 }' <<<"$st"
}
TICKS=$(getconf CLK_TCK 2>/dev/null || echo 100)
# cpu_since TICKS [PID]: the seconds of CPU since cpu_now [PID] said TICKS.
cpu_since() { echo $((($(cpu_now "${2:-$$}") - $1 + TICKS / 2) / TICKS)); }

count() { # sum the N of every "[  TAG ] N test(s)" line in $1
    grep -oE "\[  $2 *\] [0-9]+ test" <<<"$1" | grep -oE '[0-9]+ test' | grep -oE '[0-9]+' |
        awk '{s += $1} END {print s + 0}'
}

# run_suite LABEL CMD...: run a cmocka program and add up its results.
run_suite() {
    local label="$1"; shift
    echo "=== $label"
    local out rc
    local limit=$TIMEOUT t0=$SECONDS c0; c0=$(cpu_now)
    case "$label" in test_grade*) limit=$GRADE_TIMEOUT ;; esac
    out=$(timeout --kill-after=10 "$limit" "$@" 2>&1); rc=$?
    printf '%s\n' "$out"
    timings+=("$((SECONDS - t0)) $(cpu_since "$c0") $label")
    tally_suite "$label" "$out" "$rc" "$limit"
}

# tally_suite LABEL OUTPUT RC LIMIT: add up one cmocka program's results.
tally_suite() {
    local label="$1" out="$2" rc="$3" limit="$4"
    local p f s
    p=$(count "$out" PASSED); f=$(count "$out" FAILED); s=$(count "$out" SKIPPED)
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "--- $label: timed out after ${limit}s"
        f=$((f + 1)); failures+=("$label (timed out)"); excerpt "$label" "$out"
    elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
        echo "--- $label: no test summary (exit code $rc): counted as a failure"
        f=1; failures+=("$label (no summary, exit $rc)"); excerpt "$label" "$out"
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "--- $label: exit code $rc although no test reported a failure"
        f=1; failures+=("$label (exit $rc)"); excerpt "$label" "$out"
    elif [ "$f" -gt 0 ]; then
        failures+=("$label ($f failed)"); excerpt "$label" "$out"
    fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

# expect LABEL WANT_RC(0|nonzero) GREP CMD...: a single pass/fail test.
expect() {
    local label="$1" want="$2" pattern="$3"; shift 3
    echo "=== $label"
    local out rc t0=$SECONDS c0; c0=$(cpu_now)
    out=$(timeout --kill-after=10 "$TIMEOUT" "$@" 2>&1); rc=$?
    printf '%s\n' "$out" | tail -n 25
    timings+=("$((SECONDS - t0)) $(cpu_since "$c0") $label")
    local ok=1
    if [ "$want" = 0 ] && [ "$rc" -ne 0 ]; then ok=0; fi
    if [ "$want" != 0 ] && { [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; }; then ok=0; fi
    if [ -n "$pattern" ] && ! grep -qE "$pattern" <<<"$out"; then ok=0; fi
    # A check that passes must have run something: all-skipped is not a pass.
    if [ "$want" = 0 ] && grep -q '\[  SKIPPED \]' <<<"$out" &&
        ! grep -qE '\[  PASSED  \] [1-9]' <<<"$out"; then ok=0; fi
    if [ $ok = 1 ]; then
        passed=$((passed + 1)); echo "--- $label: ok"
    else
        failed=$((failed + 1)); failures+=("$label (exit $rc)"); echo "--- $label: FAILED (exit $rc)"
        excerpt "$label" "$out"
    fi
}

# The grader's self-test is most of make test's time (about 11 of 14 minutes
# on 2 cores) and leaves a third of the machine idle while it waits on the
# programs it grades, so it runs in the background beside everything else;
# its output is shown, and its results counted, once it ends.
# RUN_SUITES_SERIAL=1 runs it in turn, like the rest.
bg_prog="" bg_dir=""
if [ "${RUN_SUITES_SERIAL:-0}" != 1 ]; then
    for prog in $unit; do
        [ "$(basename "$prog")" = test_grade ] && bg_prog=$prog
    done
fi
if [ -n "$bg_prog" ]; then
    bg_dir=$(mktemp -d) || exit 2
    # Stopped early (Ctrl-C, a CI limit), the background run must end too:
    # it would otherwise go on grading for up to GRADE_TIMEOUT, unseen.
    # (An asynchronous command of a script ignores SIGINT, hence the TERM. The
    # traps give the usual exit statuses; bash runs them once the item in the
    # foreground, which a Ctrl-C also reaches, has ended.)
    trap '[ -s "$bg_dir/pid" ] && kill -TERM "$(cat "$bg_dir/pid")" 2>/dev/null; rm -rf "$bg_dir"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    echo "=== test_grade: started in the background; its output follows the other items'"
    (
        me=$BASHPID
        t0=$(date +%s) c0=$(cpu_now "$me")
        timeout --kill-after=10 "$GRADE_TIMEOUT" "$bg_prog" > "$bg_dir/out" 2>&1 &
        echo $! > "$bg_dir/pid"
        wait $!
        echo $? > "$bg_dir/rc"
        rm -f "$bg_dir/pid"
        echo "$(($(date +%s) - t0)) $(cpu_since "$c0" "$me") test_grade" > "$bg_dir/timing"
    ) &
    bg_pid=$!
fi
# collect_background: wait for the background test_grade and count it.
collect_background() {
    [ -n "$bg_prog" ] || return 0
    echo "=== test_grade (ran in the background)"
    wait "$bg_pid"
    local out rc
    out=$(cat "$bg_dir/out" 2>/dev/null)
    rc=$(cat "$bg_dir/rc" 2>/dev/null || echo 1)
    printf '%s\n' "$out"
    [ -s "$bg_dir/timing" ] && timings+=("$(cat "$bg_dir/timing")")
    tally_suite test_grade "$out" "$rc" "$GRADE_TIMEOUT"
}

for prog in $unit; do
    [ "$prog" = "$bg_prog" ] && continue
    run_suite "$(basename "$prog")" "$prog"
done

for prog in $mpi; do
    for np in $(printf '%s\n' 2 "$NP" | sort -un); do
        run_suite "$(basename "$prog") (mpirun -np $np)" $MPIRUN -np "$np" "$prog"
    done
    # Once more with the communicator's argument check and its watchdog on (common/comm.h): a
    # program whose ranks agree must pass both unchanged, no call of it waiting anywhere near
    # COMM_TIMEOUT. Off above, as the labs run by default.
    run_suite "$(basename "$prog") (mpirun -np $NP, COMM_CHECK_ARGS=1 COMM_TIMEOUT=60)" \
        env COMM_CHECK_ARGS=1 COMM_TIMEOUT=60 $MPIRUN -np "$NP" "$prog"
done

# Each lab: the solution passes its checks, the unmodified starter does not.
for lab in $labs; do
    nn=${lab%%-*}
    expect "lab $lab: solution passes" 0 "" make --no-print-directory check LAB="$nn" SRC=solutions
    expect "lab $lab: starter fails with 'not implemented'" nonzero "not implemented" \
        make --no-print-directory check LAB="$nn" SRC=labs
done

# make check SANITIZE=thread, the emulator's race detector for a lab: builds,
# and is silent on lab 02's solution (its two barriers in place).
if [ -n "$labs" ] && [ -d labs/02-shared-memory-tiling ]; then
    expect "lab 02 under ThreadSanitizer (make check SANITIZE=thread): solution clean" 0 "PASSED" \
        make --no-print-directory check LAB=02 SRC=solutions TARGET=emu SANITIZE=thread
fi
# The double-buffered kernels under the race detector: lab 03's warp tile
# (one barrier a slice guards both buffers), lab 04's step B cp.async stages
# and step C's TMA loads, mbarrier waits and warpgroups, whose every missing
# wait or barrier is a race the schedule alone may not show.
if [ -n "$labs" ] && [ -d labs/03-register-tiling ]; then
    expect "lab 03 warp tile under ThreadSanitizer (make check SANITIZE=thread): solution clean" 0 "PASSED" \
        make --no-print-directory check LAB=03 SRC=solutions TARGET=emu SANITIZE=thread ONLY='warptile:*'
fi
if [ -n "$labs" ] && [ -d labs/04-tensor-cores ]; then
    expect "lab 04 under ThreadSanitizer (make check SANITIZE=thread): solution clean" 0 "PASSED" \
        make --no-print-directory check LAB=04 SRC=solutions TARGET=emu SANITIZE=thread
fi
# Lab 05's kernels one by one (block reductions in shared memory, AdamW):
# a few seconds. The whole-model checks take about nine minutes under the
# race detector and add no kernel of the lab's, so they stay out.
if [ -n "$labs" ] && [ -d labs/05-single-gpu-training ]; then
    expect "lab 05 kernels under ThreadSanitizer (make check SANITIZE=thread): solution clean" 0 "PASSED  \] 5 test" \
        make --no-print-directory check LAB=05 SRC=solutions TARGET=emu SANITIZE=thread \
        ONLY='rmsnorm backward|attention softmax backward|swiglu backward|adamw|mixed precision: bf16 copy of fp32 masters'
fi
# make check SANITIZE=address poisons the matmul harness's guard zones around
# A, B and C: a correct kernel (lab 03's float4 paths, which stop at each edge)
# never reads them.
if [ -n "$labs" ] && [ -d labs/03-register-tiling ]; then
    expect "lab 03 under AddressSanitizer (make check SANITIZE=address): solution clean" 0 "PASSED" \
        make --no-print-directory check LAB=03 SRC=solutions TARGET=emu SANITIZE=address ONLY='vectorized:*'
fi
# Lab 05's backward kernels and fused AdamW under the bounds checker: each
# buffer is exactly its size, so a read past a row's or a tensor's end fails.
if [ -n "$labs" ] && [ -d labs/05-single-gpu-training ]; then
    expect "lab 05 under AddressSanitizer (make check SANITIZE=address): solution clean" 0 "PASSED" \
        make --no-print-directory check LAB=05 SRC=solutions TARGET=emu SANITIZE=address
fi

# make check ONLY=: runs just the matching tests, and a pattern that matches
# none is an error that lists the names, not an empty pass.
if [ -n "$labs" ] && [ -d labs/00-hello ]; then
    expect "lab 00 make check ONLY='*large': one test runs" 0 "1 test\(s\) run" \
        make --no-print-directory check LAB=00 SRC=solutions ONLY='*large'
    expect "lab 00 make check ONLY='*large|*partial*': both tests run" 0 "2 test\(s\) run" \
        make --no-print-directory check LAB=00 SRC=solutions ONLY='*large|*partial*'
    expect "lab 00 make check LAB=labs/00-hello/ SRC=solutions/ (completed paths) checks the solution" 0 \
        "== lab 00-hello checks \(solutions," make --no-print-directory check LAB=labs/00-hello/ SRC=solutions/
    expect "lab 00 make check ONLY= matching nothing is refused with the names" nonzero \
        "matches none of these tests" make --no-print-directory check LAB=00 SRC=solutions ONLY='no-such-test'
fi

# The lab-05 train program's GPU-backend flags: a bad choice is refused with what to pass instead.
t05="$BUILD/emu/solutions/05-single-gpu-training/train"
if [ -n "$labs" ] && [ -x "$t05" ]; then
    expect "lab 05 train: --attention flash with head size 8 is refused" nonzero "head size .* of 16, 32, 64 or 128" \
        "$t05" --backend emu --attention flash --d-model 32 --heads 4 --steps 1
    expect "lab 05 train: an unknown --matmul is refused" nonzero "unknown kernel; pass one of" \
        "$t05" --backend emu --matmul cublass --steps 1
    # A shape for a GPU warns, before anything runs, how long the emulator will be silent
    # (here about a minute a step; the unwritable --log then ends the run at once).
    expect "lab 05 train: a large shape on the emulator warns how long a step takes" nonzero \
        "warning: on the emulator each forward and backward of 8 x 256 tokens takes about" \
        "$t05" --backend emu --d-model 256 --layers 4 --heads 4 --ffn 512 --seq 256 --batch 8 --steps 1 \
        --log "$BUILD/no-such-folder/x.csv"
    for m in mma wgmma; do
        expect "lab 05 train: --matmul $m trains on the emulator" 0 "step 2/2" \
            "$t05" --backend emu --matmul $m --d-model 32 --layers 1 --heads 2 --ffn 64 --seq 16 --batch 2 \
            --steps 2 --print-every 1 --eval-every 0 --eval-batches 1
    done
fi

# A benchmark told to write its JSON where it cannot stops before it times
# anything, with the reason (on a GPU, lab 05's run takes minutes).
for lab in 00-hello 01-naive-matmul 05-single-gpu-training; do
    b="$BUILD/emu/solutions/$lab/bench"
    [ -n "$labs" ] && [ -x "$b" ] || continue
    expect "lab ${lab%%-*} bench: an unwritable --json is refused before the run" nonzero \
        "^bench: --json $BUILD/no-such-folder/x.json: cannot create the file \(No such file or directory\); give a path" \
        "$b" --json "$BUILD/no-such-folder/x.json"
done

b="$BUILD/emu/solutions/05-single-gpu-training/bench"
if [ -n "$labs" ] && [ -x "$b" ]; then
    expect "lab 05 bench: a large shape on the emulator warns how long it will take" nonzero \
        "warning: on the emulator these 5 steps of 8 x 256 tokens take about" \
        "$b" --d-model 256 --layers 4 --heads 4 --ffn 512 --seq 256 --batch 8 --json "$BUILD/no-such-folder/x.json"
fi

# LAB_DEFS rebuilds the lab objects when it changes and only then (labs/labs.mk);
# asked of a cuda object, so where nvcc is.
if [ -n "$labs" ] && [ "$(make -s --no-print-directory print-HAVE_CUDA 2>/dev/null)" = 1 ]; then
    expect "LAB_DEFS: a new value rebuilds the lab objects, the same one nothing" 0 \
        "lab-defs: [1-9][0-9]* checks passed" bash common/tests/check_lab_defs.sh
fi

# The emulator's ladder bench reports how each kernel meets memory (FLOP/B,
# sect%, bank% from a traced run): the figures a student without a GPU reads.
b="$BUILD/emu/solutions/03-register-tiling/bench"
if [ -n "$labs" ] && [ -x "$b" ]; then
    expect "lab 03 bench on the emulator: the memory columns show the ladder" 0 \
        "memory columns: [0-9]+ checks passed" bash common/tests/check_bench_memory.sh "$b"
fi

# Speed costs the checks cannot see, visible without a GPU: the solutions'
# kernels compile for sm_90a without register spills and without ptxas
# serialising or patching up their wgmma (make ptxas). The reader itself must
# catch both, on ptxas reports saved from real compiles: one kernel forced
# down to 32 registers, and step C's kernel with an accumulator written
# between two wgmma of a group.
if [ -n "$labs" ] && [ "${HAVE_CUDA:-0}" = 1 ]; then
    for lab in $labs; do
        ls solutions/"$lab"/*.cu >/dev/null 2>&1 || continue
        expect "lab $lab: solution kernels have no spills or serialised wgmma (ptxas, sm_90a)" 0 "no spills" \
            make --no-print-directory ptxas LAB="${lab%%-*}" SRC=solutions
    done
    expect "course kernels (kernels/cuda) have no spills (ptxas, sm_90a)" 0 "no spills" \
        make --no-print-directory ptxas-kernels
fi
if [ -n "$labs" ]; then
    expect "ptxas report: register spills are caught" nonzero "tile_kernel .*SPILLS" \
        bash common/tools/ptxas_report.sh <common/tests/ptxas_spills.log
    expect "ptxas report: serialised wgmma is caught" nonzero "matmul_wgmma_kernel .*wgmma serialised \(C7511\)" \
        bash common/tools/ptxas_report.sh <common/tests/ptxas_wgmma_serialised.log
fi

# Lab 03's autotuner: which configurations --list and --max choose (valid
# ones, the file's defaults first, spread over the grid); no GPU or nvcc needed.
if [ -n "$labs" ] && [ -x labs/03-register-tiling/autotune.sh ]; then
    expect "lab 03 autotune: --list and --max choose valid configurations, defaults first" 0 \
        "autotune selection: [0-9]+ checks passed" bash common/tests/test_autotune.sh
fi
# make gpu-check's script, with stand-ins for the GPU, nvcc and make: a GPU is
# lent for minutes, and a fault in the script itself would cost all of them.
if [ -n "$labs" ]; then
    expect "gpu-check script: bundle, statuses, budget (stand-in GPU)" 0 \
        "gpu-check script: [0-9]+ checks passed" bash autograder/tests/test_gpu_check.sh
fi
# Lab 03's autotuner only times on a GPU, but its generated build must not rot:
# with nvcc present, compile and link its first configuration.
if [ -n "$labs" ] && [ "${HAVE_CUDA:-0}" = 1 ] && [ -x labs/03-register-tiling/autotune.sh ]; then
    expect "lab 03 autotune: a configuration compiles and links" 0 "autotune: ok" \
        labs/03-register-tiling/autotune.sh --dry-run --src solutions --arch 90a --build "$BUILD"
fi

# The lab anatomy: a solution differs from its starter only inside the
# TODO(...) begin/end blocks, so the code around them is the course's in both.
# The comparison's self-test first: made-up wrong pairs must be refused.
if [ -n "$labs" ]; then
    expect "todo blocks: the comparison refuses made-up wrong pairs" 0 \
        "todo blocks self-test: [0-9]+ checks passed" bash common/tests/check_todo_blocks.sh --self-test
    expect "todo blocks: every solution differs from its starter only inside the blocks" 0 \
        "todo blocks: [1-9][0-9]* files checked" bash common/tests/check_todo_blocks.sh
fi

# This runner itself, on stand-in programs: what it counts and how it stops.
if [ -n "$labs" ]; then
    expect "make test's runner: counts, failures, time limits and the background grader test" 0 \
        "run_suites self-test: [0-9]+ checks passed" bash common/tests/test_run_suites.sh
fi

# RUN_SUITES_DOCS=0 leaves these two out (make test-gpu-run: the GPU suites only).
if [ "${RUN_SUITES_DOCS:-1}" != 0 ]; then
    expect "docs: Doxygen without warnings" 0 "" make --no-print-directory docs
    expect "slides: decks well formed" 0 "" bash slides/check_decks.sh
fi

collect_background

echo
if [ ${#timings[@]} -gt 0 ]; then
    total=0
    for t in "${timings[@]}"; do total=$((total + ${t%% *})); done
    beside=""
    [ -n "$bg_prog" ] && beside=", test_grade beside the rest; the run took ${SECONDS}s"
    echo "Slowest of ${#timings[@]} items (${total}s in all$beside; wall, then CPU seconds of its processes):"
    printf '%s\n' "${timings[@]}" | sort -k1,1nr | head -n 12 |
        while read -r t c l; do printf '  %5ss %5ss  %s\n' "$t" "$c" "$l"; done
fi
if [ ${#failures[@]} -gt 0 ]; then
    echo "What the failures printed (their full output is above):"
    printf '%s\n' "${details[@]}"
    echo "Failures:"
    printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
