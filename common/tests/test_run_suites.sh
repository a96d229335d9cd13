#!/usr/bin/env bash
# common/tests/run_suites.sh (the runner behind `make test`) on stand-in
# programs, so that what each prints, returns and how long it takes is chosen
# here. The runner decides what a CI run reports, so a fault in it could hide
# every other failure:
#
#   - a cmocka summary is added up; a program with no summary, or one that
#     exits non-zero with no failure reported, or one past its time limit,
#     counts as one failure, named in the list at the end;
#   - test_grade runs in the background: its output comes after the other
#     programs' and its failures count the same; RUN_SUITES_SERIAL=1 runs it
#     in turn, before the programs after it;
#   - the last line is "N passed, N failed, N skipped" and the exit status
#     is 0 only when nothing failed;
#   - stopped by SIGTERM or SIGINT, the runner ends the background test_grade
#     too (nothing is left running) and exits 143 or 130.
# Prints one line per failed check and, last, "run_suites self-test: N checks
# passed" or "run_suites self-test: N of M checks failed"; exits non-zero on a
# failure. Run from anywhere: bash common/tests/test_run_suites.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
runner=$(pwd)/common/tests/run_suites.sh
checks=0 failed=0
check() { # check DESCRIPTION COMMAND...: one check, quiet when it passes
    local what=$1; shift
    checks=$((checks + 1))
    if ! "$@"; then failed=$((failed + 1)); echo "FAIL: $what"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/test_run_suites.XXXXXX") || exit 2
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# stand_in DIR NAME KIND: a program DIR/NAME that behaves as KIND says.
stand_in() {
    local body
    case "$3" in
        pass2) body='echo "[==========] 2 test(s) run."; echo "[  PASSED  ] 2 test(s)."' ;;
        pass1) body='echo "[  PASSED  ] 1 test(s)."' ;;
        fail) body='echo "[  PASSED  ] 3 test(s)."; echo "[  FAILED  ] 1 test(s), listed below:"; exit 1' ;;
        silent) body='echo "nothing to report"' ;;
        crash) body='echo "[  PASSED  ] 2 test(s)."; exit 3' ;;
        skip) body='echo "[  SKIPPED ] 1 test(s)."; echo "[  PASSED  ] 1 test(s)."' ;;
        hang) body="echo \$\$ > '$1/$2.pid'; exec sleep 300" ;;
        # Slow, and says when it ended, so that the order of the output can be checked.
        slow) body="sleep 1; echo \"[  PASSED  ] 2 test(s).\"" ;;
    esac
    printf '#!/usr/bin/env bash\n%s\n' "$body" > "$1/$2"
    chmod +x "$1/$2"
}

# run NAME UNITS... (with the environment given before the call): the runner
# on these stand-ins, its output in $work/NAME.out and exit status in rc.
run() {
    local name=$1; shift
    RUN_SUITES_DOCS=0 bash "$runner" --unit "$*" > "$work/$name.out" 2>&1
    rc=$?
}
last_line() { tail -n 1 "$work/$1.out"; }
says() { grep -qE -- "$2" "$work/$1.out"; }
# line_of NAME PATTERN: the number of the first line matching PATTERN (0: none).
line_of() { local n; n=$(grep -nE -- "$2" "$work/$1.out" | head -n 1 | cut -d: -f1); echo "${n:-0}"; }

d=$work/bin
mkdir -p "$d"
stand_in "$d" test_grade pass2
stand_in "$d" test_a pass1
stand_in "$d" test_b skip

# ---- all pass: the counts, and test_grade's output after the others' ----------------
run clean "$d/test_grade" "$d/test_a" "$d/test_b"
check "clean: exit status 0 (was $rc)" test "$rc" = 0
check "clean: the last line counts 4 passed, 1 skipped (was '$(last_line clean)')" \
    test "$(last_line clean)" = "4 passed, 0 failed, 1 skipped"
check "clean: says test_grade started in the background" says clean '^=== test_grade: started in the background'
check "clean: test_grade's results come after test_b's" \
    test "$(line_of clean '^=== test_grade \(ran in the background\)')" -gt "$(line_of clean '^=== test_b$')"
check "clean: the timings name test_grade" says clean '^ +[0-9]+s +[0-9]+s  test_grade$'

# ---- RUN_SUITES_SERIAL=1: test_grade in its turn --------------------------------------
RUN_SUITES_SERIAL=1 run serial "$d/test_a" "$d/test_grade" "$d/test_b"
check "serial: exit status 0 (was $rc)" test "$rc" = 0
check "serial: the same counts (was '$(last_line serial)')" test "$(last_line serial)" = "4 passed, 0 failed, 1 skipped"
check "serial: test_grade runs between test_a and test_b" \
    test "$(line_of serial '^=== test_a$')" -lt "$(line_of serial '^=== test_grade$')" -a \
    "$(line_of serial '^=== test_grade$')" -lt "$(line_of serial '^=== test_b$')"
check "serial: nothing ran in the background" test "$(line_of serial 'background')" = 0

# ---- a failure of the background test_grade counts, and is named ----------------------
f=$work/fail
mkdir -p "$f"
stand_in "$f" test_grade fail
stand_in "$f" test_a pass1
run bgfail "$f/test_grade" "$f/test_a"
check "background failure: exit status 1 (was $rc)" test "$rc" = 1
check "background failure: 4 passed, 1 failed (was '$(last_line bgfail)')" \
    test "$(last_line bgfail)" = "4 passed, 1 failed, 0 skipped"
check "background failure: listed as test_grade (1 failed)" says bgfail '^  test_grade \(1 failed\)$'

# ---- no summary, or a non-zero exit with none failed: one failure each ----------------
s=$work/silent
mkdir -p "$s"
stand_in "$s" test_grade silent
stand_in "$s" test_c crash
run silent "$s/test_grade" "$s/test_c"
check "no summary: exit status 1 (was $rc)" test "$rc" = 1
check "no summary: 2 passed, 2 failed (was '$(last_line silent)')" \
    test "$(last_line silent)" = "2 passed, 2 failed, 0 skipped"
check "no summary: test_grade is listed as having none" says silent '^  test_grade \(no summary, exit 0\)$'
check "no summary: a crash after passes is listed with its exit status" says silent '^  test_c \(exit 3\)$'

# ---- past the time limit: counted, and the program is gone ----------------------------
h=$work/hang
mkdir -p "$h"
stand_in "$h" test_grade hang
stand_in "$h" test_a pass1
GRADE_TEST_TIMEOUT=2 run hang "$h/test_grade" "$h/test_a"
check "time limit: exit status 1 (was $rc)" test "$rc" = 1
check "time limit: 1 passed, 1 failed (was '$(last_line hang)')" test "$(last_line hang)" = "1 passed, 1 failed, 0 skipped"
check "time limit: test_grade is listed as timed out" says hang '^  test_grade \(timed out\)$'
check "time limit: the program was ended" bash -c "! kill -0 \$(cat '$h/test_grade.pid') 2>/dev/null"

# ---- stopped: the background test_grade ends too --------------------------------------
# The runner is started under job control (set -m), so that it keeps SIGINT
# at its default as from a terminal (a script's background job ignores it),
# and stopped while test_grade runs and a slow program is in the foreground.
stand_in "$h" test_slow slow
for sig in TERM INT; do
    rm -f "$h/test_grade.pid"
    (
        set -m
        RUN_SUITES_DOCS=0 bash "$runner" --unit "$h/test_grade $h/test_slow" > /dev/null 2>&1 &
        p=$!
        for _ in $(seq 100); do [ -s "$h/test_grade.pid" ] && break; sleep 0.1; done
        kill -"$sig" "$p"
        wait "$p"
        echo "rc $?"
    ) > "$work/stop-$sig.out" 2>&1
    want=$([ "$sig" = TERM ] && echo 143 || echo 130)
    check "stopped by SIG$sig: exit status $want ($(tr '\n' ' ' < "$work/stop-$sig.out"))" \
        grep -qx "rc $want" "$work/stop-$sig.out"
    gone=0
    for _ in $(seq 20); do
        pid=$(cat "$h/test_grade.pid" 2>/dev/null) || break
        kill -0 "$pid" 2>/dev/null || { gone=1; break; }
        sleep 0.5
    done
    [ "$gone" = 1 ] || kill "$(cat "$h/test_grade.pid" 2>/dev/null)" 2>/dev/null
    check "stopped by SIG$sig: the background test_grade was ended" test "$gone" = 1
done

if [ "$failed" -gt 0 ]; then
    echo "run_suites self-test: $failed of $checks checks failed"
    exit 1
fi
echo "run_suites self-test: $checks checks passed"
