#!/usr/bin/env bash
# LAB_DEFS rebuilds the lab objects when it changes, and only then
# (labs/labs.mk keeps the value in $(BUILD)/lab-defs). Make's own up-to-date
# question (make -q) on one object of a scratch BUILD, with the object made
# newer than its prerequisites by hand, so nothing is compiled.
# Usage: check_lab_defs.sh   (from the repository root; prints "lab-defs: N checks passed")
set -u
if [ "$(make -s --no-print-directory print-HAVE_CUDA 2>/dev/null)" != 1 ]; then
    echo "lab-defs: no nvcc, so no cuda objects to ask about; 0 checks passed"
    exit 0
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
obj="$t/cuda/solutions/01-naive-matmul/matmul_naive.cu.o"
n=0
q() { # q WANT LAB_DEFS: make -q's answer for obj must be WANT (0 up to date, 1 not)
    make --no-print-directory -q BUILD="$t" NO_DEPS=1 LAB_DEFS="$2" "$obj" >/dev/null 2>&1
    local rc=$?
    if [ "$rc" -ne "$1" ]; then
        echo "lab-defs: LAB_DEFS='$2': make -q answered $rc, want $1 (stamp: '$(cat "$t/lab-defs" 2>/dev/null)')"
        exit 1
    fi
    n=$((n + 1))
}
q 1 ""                      # no object yet; writes the stamp
mkdir -p "$(dirname "$obj")" && sleep 0.05 && touch "$obj"
q 0 ""                      # same value: up to date
q 1 "-DLAB_DEFS_TEST=1"     # new value: the stamp is newer than the object
sleep 0.05 && touch "$obj"
q 0 "-DLAB_DEFS_TEST=1"     # rebuilt (by hand) with it: up to date again
q 1 ""                      # back to none: rebuild again
[ "$(cat "$t/lab-defs")" = "" ] || { echo "lab-defs: the stamp should hold the empty value"; exit 1; }
echo "lab-defs: $n checks passed"
