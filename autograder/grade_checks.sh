#!/usr/bin/env bash
# Interim grader: runs each lab's checks on $SRC (labs or solutions) for
# $TARGET and prints one row per lab. A lab is "not started" while its
# functions still return LAB_NOT_IMPLEMENTED, "build error" if it does not
# compile, "skipped" if there is nowhere to run kernels. Exit code 0 when
# every lab passes, 1 otherwise.
set -u
SRC=${SRC:-labs}
TARGET=${TARGET:-emu}
BUILD=${BUILD:-build}
[ $# -gt 0 ] || { echo "grade: no labs found under labs/"; exit 1; }

logdir="$BUILD/grade/$SRC-$TARGET"
mkdir -p "$logdir"
rows=() all_ok=1
for lab in "$@"; do
    nn=${lab%%-*}
    log="$logdir/$lab.log"
    make --no-print-directory check LAB="$nn" SRC="$SRC" TARGET="$TARGET" >"$log" 2>&1
    rc=$?
    p=$(grep -oE '\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
    f=$(grep -oE '\[  FAILED  \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | tail -1)
    s=$(grep -oE '\[  SKIPPED \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | tail -1)
    p=${p:-0} f=${f:-0} s=${s:-0}
    total=$((p + f + s))
    if [ $rc -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ] && [ "$p" -gt 0 ]; then
        status="pass"; msg=""
    elif grep -q "not implemented" "$log"; then
        status="not started"; msg=$(grep -m1 -oE "not implemented: [^(]*" "$log")
    elif grep -qE "error:|Error [0-9]" "$log" && [ "$total" -eq 0 ]; then
        status="build error"; msg=$(grep -m1 -E "error" "$log" | cut -c1-70)
    elif [ "$s" -gt 0 ] && [ "$f" -eq 0 ]; then
        status="skipped"; msg="no device to run kernels (see log)"
    else
        status="fail"; msg=$(grep -m1 -E "^\[  ERROR   \]|error:" "$log" | cut -c1-70)
    fi
    [ "$status" = pass ] || all_ok=0
    rows+=("$(printf '%-28s %-12s %7s   %s' "$lab" "$status" "$p/$total" "$msg")")
done

echo
echo "Grade of $SRC/ (TARGET=$TARGET; logs in $logdir)"
printf '%-28s %-12s %7s   %s\n' "lab" "status" "checks" "message"
printf '%s\n' "-----------------------------------------------------------------------------"
printf '%s\n' "${rows[@]}"
[ $all_ok = 1 ]
