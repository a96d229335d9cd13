#!/usr/bin/env bash
# The emulator's matmul bench (kernels/gemm_harness.c) fills FLOP/B, sect% and
# bank% from one traced run of each kernel. Those columns are what a student
# without a GPU reads off the ladder, so they are checked against what the
# solutions are built to show: the uncoalesced kernel wastes most of each
# sector, tiling raises FLOP/B step by step, the 2-D block tile has bank
# conflicts and the warp tile has none. A tracer or harness change that
# blanks, swaps or miscomputes a column fails here.
#
# Usage: check_bench_memory.sh BENCH   (lab 03's solution bench, TARGET=emu)
set -u
bench="${1:?usage: check_bench_memory.sh BENCH}"
out=$("$bench" --sizes 128 2>&1) || { printf '%s\n' "$out"; echo "check_bench_memory: the bench failed"; exit 1; }
printf '%s\n' "$out" | grep -E '^ +128 '
# A GPU-sized run on the emulator would take a day with nothing printed: it
# is refused at once (exit 2), before any kernel runs, with the reason.
big=$(timeout 60 "$bench" --sizes 128,4096 2>&1); rc=$?
if [ "$rc" -ne 2 ] || ! printf '%s\n' "$big" | grep -q 'too large for the emulator' \
        || printf '%s\n' "$big" | grep -qE '^ +128 '; then
    printf '%s\n' "$big"
    echo "check_bench_memory: --sizes 128,4096 on the emulator should be refused up front with exit 2, got $rc"
    exit 1
fi
# Fields of a row: M N K, the kernel's lab and name, ms, TFLOP/s, FLOP/B, sect%, bank%, err, status.
printf '%s\n' "$out" | awk '
    $1 == 128 { flopb[$5] = $8; sect[$5] = $9; bank[$5] = $10; seen++ }
    function need(cond, what) { if (!cond) { print "check_bench_memory: " what; bad++ } else good++ }
    END {
        need(seen == 7, "7 kernel rows expected, found " seen)
        need(sect["matmul_naive_uncoalesced"] + 0 < 30, "uncoalesced: sect% " sect["matmul_naive_uncoalesced"] " should be under 30")
        need(sect["matmul_naive"] == 100 && bank["matmul_naive"] == "-", "naive: sect% 100 and no shared memory expected")
        need(flopb["matmul_naive"] + 0 < 1, "naive: FLOP/B " flopb["matmul_naive"] " should be under 1")
        need(flopb["matmul_smem"] + 0 >= 4 && bank["matmul_smem"] == 100, "smem: FLOP/B >= 4 and bank% 100 expected")
        need(flopb["matmul_blocktile_1d"] + 0 > flopb["matmul_smem"] + 0, "1-D block tile: FLOP/B should exceed smem")
        need(flopb["matmul_blocktile_2d"] + 0 > flopb["matmul_blocktile_1d"] + 0, "2-D block tile: FLOP/B should exceed 1-D")
        need(bank["matmul_blocktile_2d"] + 0 < 60, "2-D block tile: bank% " bank["matmul_blocktile_2d"] " should show its conflicts (under 60)")
        need(sect["matmul_warptile"] == 100 && bank["matmul_warptile"] == 100, "warp tile: sect% and bank% 100 expected")
        if (bad) exit 1
        print "memory columns: " good " checks passed"
    }'
