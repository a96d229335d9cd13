#!/usr/bin/env bash
# A starter and its solution differ only inside the TODO blocks (the lab
# anatomy of the course's design): every file of solutions/NN-topic/ has a
# starter of the same name in labs/NN-topic/, both hold the same blocks in
# the same order, and with each block's inside left out the two files are
# the same, line for line. A block is
#
#     /* TODO(label) begin */
#     ... what the student writes (the starter's hints and stubs, or the solution's code) ...
#     /* TODO(label) end */
#
# so a student can see where to write, and an instructor can see that the
# solution changed nothing else: the code around the blocks is the course's,
# the same in both, and what the checks were written against.
#
# Usage: check_todo_blocks.sh [--self-test]   (from the repository root)
# Prints "todo blocks: N files checked" and exits 0, or names each file and
# the first line where the two differ outside a block and exits 1.
# --self-test runs the comparison on small made-up pairs, one right and
# several wrong, so that a comparison that cannot fail is caught.
set -u

# The file with every block's inside removed (the marker lines kept), or an
# error on stderr and status 1 for markers that do not pair up.
outside() {
    awk -v file="$1" '
        function fail(msg) { printf "%s:%d: %s\n", file, NR, msg > "/dev/stderr"; bad = 1; exit 1 }
        {
            line = $0
            sub(/^[ \t]+/, "", line); sub(/[ \t]+$/, "", line)
            if (match(line, /^\/\* TODO\([^)]*\) (begin|end) \*\/$/)) {
                label = line; sub(/^\/\* TODO\(/, "", label); sub(/\) (begin|end) \*\/$/, "", label)
                if (line ~ / begin \*\/$/) {
                    if (open != "") fail("TODO(" label ") begins inside TODO(" open ")")
                    open = label
                } else {
                    if (open != label) fail("TODO(" label ") ends " (open == "" ? "without a begin" : "inside TODO(" open ")"))
                    open = ""
                }
                print; n++; next
            }
            if (line ~ /TODO\([^)]*\) (begin|end)/) fail("a TODO marker must be a line of its own: /* TODO(label) begin */")
            if (open == "") print
        }
        END {
            if (bad) exit 1
            if (open != "") { printf "%s: TODO(%s) has no end\n", file, open > "/dev/stderr"; exit 1 }
            if (n == 0) { printf "%s: no TODO blocks\n", file > "/dev/stderr"; exit 1 }
        }' "$1"
}

# compare STARTER SOLUTION: 0 when they differ only inside their blocks.
compare() {
    local a b
    a=$(outside "$1") || return 1
    b=$(outside "$2") || return 1
    if [ "$a" != "$b" ]; then
        echo "$2: differs from $1 outside the TODO blocks (lines below: starter <, solution >; markers kept):"
        diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | head -n 12
        return 1
    fi
}

self_test() {
    local t n=0
    t=$(mktemp -d)
    trap 'rm -rf "$t"' RETURN
    printf '%s\n' 'int f(void) {' '    /* TODO(1) begin */' '    return -1; /* not implemented */' \
        '    /* TODO(1) end */' '}' > "$t/starter"
    printf '%s\n' 'int f(void) {' '    /* TODO(1) begin */' '    int x = 6;' '    return x * 7;' \
        '    /* TODO(1) end */' '}' > "$t/right"
    sed 's/^}/} \/* changed *\//' "$t/right" > "$t/outside"
    sed 's/TODO(1) end/TODO(2) end/' "$t/right" > "$t/unpaired"
    sed '/TODO(1) end/d' "$t/right" > "$t/unended"
    grep -v TODO "$t/right" > "$t/none"
    sed 's/TODO(1)/TODO(9)/' "$t/right" > "$t/relabelled"
    sed 's/^    return x \* 7;$/    return x * 7; \/* TODO(1) end *\//; /^    \/\* TODO(1) end \*\/$/d' "$t/right" > "$t/inline"
    compare "$t/starter" "$t/right" >/dev/null 2>&1 || { echo "todo blocks self-test: a right pair was refused"; return 1; }
    n=$((n + 1))
    for w in outside unpaired unended none relabelled inline; do
        if compare "$t/starter" "$t/$w" >/dev/null 2>&1; then
            echo "todo blocks self-test: the wrong pair '$w' was accepted"
            return 1
        fi
        n=$((n + 1))
    done
    echo "todo blocks self-test: $n checks passed"
}

if [ "${1:-}" = --self-test ]; then
    self_test
    exit
fi

checked=0 failed=0
for sol in solutions/[0-9][0-9]-*/*; do
    [ -f "$sol" ] || continue
    starter="labs/${sol#solutions/}"
    if [ ! -f "$starter" ]; then
        echo "$sol: no starter of that name in $(dirname "$starter")/ (solutions hold only the starter files, completed)"
        failed=$((failed + 1))
        continue
    fi
    compare "$starter" "$sol" || failed=$((failed + 1))
    checked=$((checked + 1))
done
if [ "$failed" -gt 0 ]; then
    echo "todo blocks: $failed of $checked files differ outside their TODO blocks"
    exit 1
fi
[ "$checked" -gt 0 ] || { echo "todo blocks: no solution files found (run from the repository root)"; exit 1; }
echo "todo blocks: $checked files checked"
