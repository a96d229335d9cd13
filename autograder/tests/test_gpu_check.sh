#!/usr/bin/env bash
# autograder/gpu_check.sh (`make gpu-check`) without a GPU: the script runs for
# real, but in a scratch folder with stand-ins for nvidia-smi, nvcc and make,
# so that what each item prints and returns is chosen here. What is checked is
# the script itself, which otherwise runs only when a GPU is lent, for a few
# minutes, where a mistake in it would cost the whole measurement:
#
#   - no GPU visible: it says so and exits 0;
#   - a GPU bundle (.gpu-bundle/debs/*.deb, as common/tools/gpu_bundle.sh
#     packs it) is unpacked into the bundle's own root, and the tools in it
#     are the ones used (here the stand-in make comes from a .deb only);
#   - a toolkit without cuBLAS next to nvcc links NVIDIA's cuBLAS wheel (the
#     CUDA 12 and the CUDA 13 layouts);
#   - every item runs, in the documented order, and a clean run is "ok"
#     everywhere with the runner's, cmocka's, the grader's or the bench's
#     figure, and exits 0;
#   - each kind of bad result gets its status and the exit status is 1:
#     SKIPPED (all skipped), SKIPS(n) (some), FAIL(rc), TIMEOUT, NO-GPU (a
#     bench that timed nothing) and 0-POINTS (the grader gave the solutions
#     nothing);
#   - the emulator-only memory-pattern checks, which skip on a GPU by design,
#     leave an item "ok" and are named in its figure; any other skip beside
#     them is still SKIPS(n);
#   - past GPU_CHECK_BUDGET the remaining items are listed as not run.
# Prints one line per failed check and, last, "gpu-check script: N checks
# passed" or "gpu-check script: N of M checks failed"; exits non-zero on a
# failure. Run from anywhere: bash autograder/tests/test_gpu_check.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
script=$(pwd)/autograder/gpu_check.sh
checks=0 failed=0
check() { # check DESCRIPTION COMMAND...: one check, quiet when it passes
    local what=$1; shift
    checks=$((checks + 1))
    if ! "$@"; then failed=$((failed + 1)); echo "FAIL: $what"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/test_gpu_check.XXXXXX") || exit 2
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# ---- the stand-ins ---------------------------------------------------------
# emit KEY: what the item KEY prints and returns, by its kind in $FAKE_PLAN
# ("KEY KIND" lines; an item not named there passes).
mkdir -p "$work/bin" "$work/fake-make/usr/bin" "$work/cuda/bin" "$work/cuda/lib64"
cat > "$work/bin/emit" <<'EOF'
#!/usr/bin/env bash
key=$1
kind=$(awk -v k="$key" '$1 == k { print $2 }' "$FAKE_PLAN" 2>/dev/null | tail -n 1)
echo "$key" >> "$FAKE_DIR/ran"
case "${kind:-pass}" in
    pass)
        case "$key" in
            build) echo "built" ;;
            unit) printf '[  PASSED  ] 4 test(s).\n[  PASSED  ] 8 test(s).\n\n12 passed, 0 failed, 0 skipped\n' ;;
            grade) echo "TOTAL 50 / 50 points (100.0%); graded in 9 s" ;;
            bench-05-profile) printf '#   category  ms\n#   matmul    8.5\ncublas+flash  23.86\n' ;;
            bench-*) printf 'size  kernel  cublas  ratio\n4096  55.10   60.20   0.92\n' ;;
            autotune) printf 'rank config\n1 BM=128 BN=128 best\n' ;;
            sweep) printf '[ 1/2] MMA_BK=32  400 TFLOP/s\nrank TFLOP/s\n   1     400.1     52.2   200      0 MMA_BK=32\nbest: -DMMA_BK=32\n' ;;
            *) printf '[==========] 3 test(s) run.\n[  PASSED  ] 3 test(s).\n' ;;
        esac ;;
    allskip) printf '[  PASSED  ] 0 test(s).\n[  SKIPPED ] 2 test(s), listed below:\n' ;;
    someskip) printf '[  PASSED  ] 10 test(s).\n[  SKIPPED ] 2 test(s), listed below:\n\n10 passed, 0 failed, 2 skipped\n' ;;
    emuskip|emuskipmore) # two emulator-only pattern checks skip, as on every GPU; "more": a third skip too
        printf '[ RUN      ] a: test_memory_pattern\nmemory access patterns are counted on the emulator (TARGET=emu); on a GPU, make bench LAB=01 times them; skipped, not passed\n[  SKIPPED ] a: test_memory_pattern\n'
        printf '[ RUN      ] b: test_memory_pattern\nmemory access patterns are counted on the emulator (TARGET=emu); on a GPU, make bench LAB=01 times them; skipped, not passed\n[  SKIPPED ] b: test_memory_pattern\n'
        printf '[  PASSED  ] 16 test(s).\n[  SKIPPED ] %d test(s), listed below:\n' "$([ "$kind" = emuskip ] && echo 2 || echo 3)" ;;
    fail) printf '[  FAILED  ] 1 test(s), listed below:\n'; exit 3 ;;
    hang) exec sleep 60 ;;
    slow) sleep 2; echo "built" ;;
    nogpu) echo "bench: no GPU here; build with TARGET=emu to run on the CPU emulator" ;;
    zero) echo "TOTAL 0 / 50 points (0.0%); graded in 3 s" ;;
esac
EOF
# make: names the item from its arguments, as gpu_check.sh calls it.
cat > "$work/fake-make/usr/bin/make" <<'EOF'
#!/usr/bin/env bash
args=" $* "
case "$args" in
    *" help "*) echo "found: nvcc (stand-in)"; exit 0 ;;
    *" print-CUDA_HOME "*) echo "$FAKE_DIR/cuda"; exit 0 ;;
esac
lab=$(sed -n 's/.* LAB=\([0-9]*\) .*/\1/p' <<<"$args")
echo "$args" >> "$FAKE_DIR/calls"
case "$args" in
    *" all-cuda "*) printf 'CPATH=%s\nLIBRARY_PATH=%s\nLD_LIBRARY_PATH=%s\n' "${CPATH:-}" "${LIBRARY_PATH:-}" \
                   "${LD_LIBRARY_PATH:-}" > "$FAKE_DIR/env"; exec emit build ;;
    *"/test_hopper_cuda "*) # built here, run by gpu_check.sh
        p=${args%/test_hopper_cuda *}; p=${p##* }/test_hopper_cuda
        mkdir -p "$(dirname "$p")" && printf '#!/bin/sh\nexec emit hopper\n' > "$p" && chmod +x "$p"; exit 0 ;;
    *" test-gpu-run "*) exec emit unit ;;
    *" grade-run "*) exec emit grade ;;
    *" check "*) exec emit "check-$lab" ;;
    *" bench "*"--profile"*) exec emit bench-05-profile ;;
    *" bench "*"--batch 16"*) exec emit bench-05-batch16 ;;
    *" bench "*"--attention naive"*) exec emit bench-05-naive ;;
    *" bench "*"--matmul mma"*) exec emit bench-05-mma ;;
    *" bench "*"--matmul wgmma"*) exec emit bench-05-wgmma ;;
    *" bench "*) exec emit "bench-$lab" ;;
esac
echo "make (stand-in): no rule for:$args"; exit 2
EOF
cat > "$work/bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
[ -n "${FAKE_NO_GPU:-}" ] && { echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"; exit 9; }
case "$*" in
    -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
    "") echo "| NVIDIA-SMI 560.35.03    Driver Version: 560.35.03    CUDA Version: ${FAKE_DRIVER_CUDA:-12.6} |" ;;
    *) echo "NVIDIA H200, 560.35.03, 143771 MiB" ;;
esac
EOF
# FAKE_NVCC_RELEASE: the release nvcc --version names (none by default).
printf '#!/bin/sh\necho "nvcc (stand-in)"\n[ -n "$FAKE_NVCC_RELEASE" ] && echo "Cuda compilation tools, release $FAKE_NVCC_RELEASE, V$FAKE_NVCC_RELEASE.0"\nexit 0\n' \
    > "$work/cuda/bin/nvcc"
chmod +x "$work/bin/"* "$work/fake-make/usr/bin/make" "$work/cuda/bin/nvcc"

# A .deb holding the stand-in make, as gpu_bundle.sh would bring the real one.
have_deb=0
if command -v dpkg-deb >/dev/null; then
    mkdir -p "$work/fake-make/DEBIAN"
    printf 'Package: make\nVersion: 0.0-test\nArchitecture: all\nMaintainer: none <none@example.org>\nDescription: stand-in\n' \
        > "$work/fake-make/DEBIAN/control"
    dpkg-deb --build "$work/fake-make" "$work/make.deb" >/dev/null 2>&1 && have_deb=1
fi
# NVIDIA's cuBLAS wheel, as pip lays it out (the nvidia namespace package):
# CUDA 12's in nvidia/cublas, CUDA 13's in nvidia/cu13 with the other libraries.
mkdir -p "$work/py/nvidia/cublas/lib" "$work/py/nvidia/cublas/include" "$work/py13/nvidia/cu13/lib" \
    "$work/py13/nvidia/cu13/include"
: > "$work/py/nvidia/cublas/lib/libcublas.so.12"
: > "$work/py/nvidia/cublas/lib/libcublasLt.so.12"
: > "$work/py13/nvidia/cu13/lib/libcublas.so.13"
: > "$work/py13/nvidia/cu13/lib/libcublasLt.so.13"
: > "$work/py13/nvidia/cu13/lib/libcudart.so.13"
have_py=0
command -v python3 >/dev/null && python3 -c 'import sys' 2>/dev/null && have_py=1

# A course in miniature: what gpu_check.sh looks for in labs/.
new_tree() { # new_tree DIR
    rm -rf "$1"
    mkdir -p "$1/labs/00-hello" "$1/labs/01-naive-matmul" "$1/labs/03-register-tiling" "$1/labs/04-tensor-cores" \
        "$1/labs/05-single-gpu-training"
    touch "$1/labs/01-naive-matmul/bench.c" "$1/labs/04-tensor-cores/bench.c" "$1/labs/05-single-gpu-training/bench.c"
    printf '#!/bin/sh\nexec emit autotune\n' > "$1/labs/03-register-tiling/autotune.sh"
    printf '#!/bin/sh\nexec emit sweep\n' > "$1/labs/04-tensor-cores/sweep_mma.sh"
    chmod +x "$1/labs/03-register-tiling/autotune.sh" "$1/labs/04-tensor-cores/sweep_mma.sh"
}

# run_check NAME [VAR=VALUE...]: gpu_check.sh in $work/NAME, output in
# $work/NAME.out, exit status in rc, the build's environment in $work/NAME.env,
# the arguments of each make call in $work/NAME.calls. The stand-in make is on PATH unless a
# bundle brings it (BUNDLE=1).
run_check() {
    local name=$1; shift
    local tree="$work/$name" path="$work/bin:$PATH"
    new_tree "$tree"
    : > "$work/ran"; : > "$work/calls"
    if [ "${BUNDLE:-0}" = 1 ]; then
        mkdir -p "$tree/.gpu-bundle/debs" && cp "$work/make.deb" "$tree/.gpu-bundle/debs/"
    else
        path="$work/fake-make/usr/bin:$path"
    fi
    (cd "$tree" && env PATH="$path" FAKE_DIR="$work" FAKE_PLAN="$work/$name.plan" BUILD=build "$@" \
        bash "$script") > "$work/$name.out" 2>&1
    rc=$?
    [ -e "$work/env" ] && mv "$work/env" "$work/$name.env"
    mv "$work/calls" "$work/$name.calls"
}
# status_of NAME ITEM: the status column of ITEM's row in the summary table.
status_of() {
    awk -v item="$2" 'p && substr($0, 1, 44) ~ "^" item " *$" { print substr($0, 46, 9) } /^gpu-check summary/ { p = 1 }' \
        "$work/$1.out" | tr -d ' '
}
says() { grep -qE -- "$2" "$work/$1.out"; } # says NAME ERE: the output has a line matching ERE
rc_is() { [ "$rc" -eq "$1" ]; }

# ---- no GPU ----------------------------------------------------------------
run_check nogpu FAKE_NO_GPU=1
check "no GPU: exit status 0 (was $rc)" rc_is 0
check "no GPU: says that no GPU is visible" says nogpu '^gpu-check: no NVIDIA GPU visible'
check "no GPU: nothing was run" test ! -s "$work/ran"

# ---- a toolkit newer than the driver ---------------------------------------
run_check olddriver FAKE_DRIVER_CUDA=12.6 FAKE_NVCC_RELEASE=13.0
check "old driver: exit status 1 (was $rc)" rc_is 1
check "old driver: names both versions" says olddriver '^gpu-check: nvcc is CUDA 13\.0; the driver runs CUDA 12\.6 at most$'
check "old driver: says what to do" says olddriver 'newer than the driver.*Use a CUDA 12\.x toolkit'
check "old driver: nothing was built or run" test ! -s "$work/ran"

# ---- a clean run, with make from a bundle and cuBLAS from the wheel --------
items=("build" "bench 04-tensor-cores (solutions)" "bench 05 --profile 1 (solutions)" "bench 05 --batch 16 (solutions)"
       "sweep 04 mma tiles (solutions)"
       "hopper.cuh on the GPU (emulator model)" "unit tests (GPU suites)"
       "grade solutions (cuda)" "check 00-hello (solutions)" "check 01-naive-matmul (solutions)"
       "check 03-register-tiling (solutions)" "check 04-tensor-cores (solutions)"
       "check 05-single-gpu-training (solutions)"
       "bench 01-naive-matmul (solutions)" "bench 05 --attention naive (solutions)"
       "bench 05 --matmul mma (solutions)" "bench 05 --matmul wgmma (solutions)" "autotune 03 warptile (24 configs)")
re() { sed 's/[][().*+?^$|\\]/\\&/g' <<<"$1"; } # an item's name as an ERE
if [ "$have_deb" = 1 ] && [ "$have_py" = 1 ]; then
    BUNDLE=1 run_check clean PYTHONPATH="$work/py"
    check "clean: exit status 0 (was $rc; $work/clean.out)" rc_is 0
    check "clean: under the table, lab 05's profile" says clean '^  #   matmul    8\.5$'
    check "clean: under the table, the sweep's ranked rows and best line" \
        bash -c "grep -qE '^     1     400\.1 ' '$work/clean.out' && grep -qE '^  best: -DMMA_BK=32$' '$work/clean.out'"
    check "clean: not its progress lines" bash -c "! grep -qE '^  \[ 1/2\]' '$work/clean.out'"
    check "clean: the bundle's .deb was unpacked into its root" test -x "$work/clean/.gpu-bundle/root/usr/bin/make"
    check "clean: says it uses the bundle" says clean '^gpu-check: using the packages of \.gpu-bundle \(1 \.deb files\)'
    check "clean: the build saw the bundle's headers (CPATH)" grep -qE "^CPATH=(.*:)?$work/clean/.gpu-bundle/root/usr/include(:|$)" "$work/clean.env"
    # The grader builds in copies of the course elsewhere: a relative entry would point nowhere there.
    check "clean: every search path the build gets is absolute" \
        test -z "$(sed 's/^[A-Z_]*=//' "$work/clean.env" | tr ':' '\n' | grep -v '^/' | grep -v '^$')"
    check "clean: says it links the cuBLAS wheel" says clean "^gpu-check: no cuBLAS in $work/cuda/lib64; using the one in $work/py/nvidia/cublas"
    check "clean: the build links the wheel's libraries" grep -q "^LIBRARY_PATH=.*$work/py/nvidia/cublas/lib" "$work/clean.env"
    # make check and make bench would look for the packages with deps.sh, which
    # cannot see a bundle's, and try apt-get; the real Makefile must skip it then.
    check "clean: every make check and make bench is told NO_DEPS=1" \
        test -z "$(grep -E ' (check|bench) ' "$work/clean.calls" | grep -v ' NO_DEPS=1 ')"
    check "clean: the Makefile's deps skips deps.sh with NO_DEPS=1" \
        test -z "$(make --no-print-directory -n deps NO_DEPS=1 2>&1 | grep deps.sh)"
    check "clean: the Makefile's deps runs deps.sh without it" \
        test -n "$(make --no-print-directory -n deps 2>&1 | grep deps.sh)"
    check "clean: the wheel's libcublas.so link was made" test -L "$work/clean/build/gpu-check/wheel-libs/libcublas.so"
    check "clean: the summary names the device" says clean '^gpu-check summary \(NVIDIA H200, 560\.35\.03, 143771 MiB; '
    n=0
    for it in "${items[@]}"; do
        s=$(status_of clean "$(re "$it")")
        check "clean: '$it' is ok (was '$s')" test "$s" = ok
        n=$((n + 1))
    done
    # the table: from its header to the first blank line (the details from the logs follow it)
    rows=$(awk '/^gpu-check summary/ { p = 1; getline; next } p && !NF { exit } p' "$work/clean.out" | cut -c1-44 |
        sed 's/ *$//')
    check "clean: the table lists the ${#items[@]} items in order" test "$rows" = "$(printf '%s\n' "${items[@]}")"
    check "clean: the GPU suites' figure is the runner's total" says clean '^unit tests \(GPU suites\) +ok +[0-9]+s  12 passed, 0 failed, 0 skipped$'
    check "clean: the grader's figure is its TOTAL" says clean '^grade solutions \(cuda\) +ok +[0-9]+s  TOTAL 50 / 50 points \(100\.0%\)'
    check "clean: a check's figure is cmocka's count" says clean '^check 00-hello \(solutions\) +ok +[0-9]+s  3 passed, 0 skipped$'
    check "clean: a bench's figure is its last row" says clean '^bench 04-tensor-cores \(solutions\) +ok +[0-9]+s  4096 55\.10 60\.20 0\.92$'
else
    echo "gpu-check script: dpkg-deb or python3 missing: the bundle and wheel checks are left out"
fi

# ---- each kind of bad result -----------------------------------------------
cat > "$work/bad.plan" <<'EOF'
hopper allskip
unit someskip
check-01 fail
bench-04 hang
bench-01 nogpu
grade zero
check-03 emuskip
check-05 emuskipmore
EOF
run_check bad STEP_LIMIT=2 PYTHONPATH="$work/py13"
check "bad: exit status 1 (was $rc; $work/bad.out)" rc_is 1
if [ "$have_py" = 1 ]; then
    check "bad: says it links CUDA 13's cuBLAS wheel" says bad "^gpu-check: no cuBLAS in $work/cuda/lib64; using the one in $work/py13/nvidia/cu13\$"
    check "bad: the build links CUDA 13's wheel" grep -q "^LIBRARY_PATH=.*$work/py13/nvidia/cu13/lib" "$work/bad.env"
    check "bad: the wheel's libcublasLt.so link was made" test -L "$work/bad/build/gpu-check/wheel-libs/libcublasLt.so"
fi
check "bad: without a bundle, make check and make bench are not told NO_DEPS=1" \
    test -z "$(grep NO_DEPS "$work/bad.calls")" -a -n "$(grep -E ' (check|bench) ' "$work/bad.calls")"
expect_status() { # ITEM STATUS
    local s
    s=$(status_of bad "$(re "$1")")
    check "bad: '$1' is $2 (was '$s')" test "$s" = "$2"
}
expect_status "hopper.cuh on the GPU (emulator model)" SKIPPED
expect_status "unit tests (GPU suites)" "SKIPS(2)"
expect_status "check 01-naive-matmul (solutions)" "FAIL(3)"
expect_status "bench 04-tensor-cores (solutions)" TIMEOUT
expect_status "bench 01-naive-matmul (solutions)" NO-GPU
expect_status "grade solutions (cuda)" 0-POINTS
expect_status "check 00-hello (solutions)" ok
expect_status "check 03-register-tiling (solutions)" ok
expect_status "check 05-single-gpu-training (solutions)" "SKIPS(1)"
check "bad: the emulator-only checks are named in the figure" \
    says bad '^check 03-register-tiling \(solutions\) +ok +[0-9]+s +16 passed, 0 skipped, 2 emulator-only$'
expect_status "autotune 03 warptile (24 configs)" ok
check "bad: a timed-out item's log says after how long" grep -q '^(stopped after 2s)$' \
    "$work/bad/build/gpu-check/bench_04-tensor-cores__solutions_.log"

# ---- past the budget -------------------------------------------------------
# A budget of 2 s, not 1: the script reads whole seconds from date, so a
# second can tick over between its start and the first item however little
# time passes, and a 1 s budget would then be spent before the build began.
# The build takes 2 s, so every item after it is past the budget.
echo "build slow" > "$work/budget.plan"
run_check budget GPU_CHECK_BUDGET=2
check "budget: exit status 0 (was $rc)" rc_is 0
check "budget: the build ran and is ok" test "$(status_of budget build)" = ok
check "budget: only the build ran" test "$(cat "$work/ran")" = build
notrun=$(awk '/^gpu-check summary/ { p = 1; getline; next } p && NF' "$work/budget.out" | grep -c ' budget  *-s  not run: [0-9]*s of 2s spent$')
check "budget: the other $((${#items[@]} - 1)) items are listed as not run (were $notrun)" test "$notrun" = $((${#items[@]} - 1))

if [ "$failed" -gt 0 ]; then
    echo "gpu-check script: $failed of $checks checks failed"
    exit 1
fi
echo "gpu-check script: $checks checks passed"
