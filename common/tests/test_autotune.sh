#!/usr/bin/env bash
# Lab 03's autotuner, without a GPU or nvcc: which configurations it would
# try (autotune.sh --list), for every kernel and both trees.
#
#   - every configuration satisfies the kernel's static_asserts, written out
#     again here from the .cu files (so a rule the script gets wrong shows),
#     and none is listed twice;
#   - the file's own #ifndef defaults come first, with or without --max;
#   - --max N lists the first N of the full order: the defaults, then one
#     configuration of each block tile (BM x BN x BK) before a second of any,
#     so 40 configurations of the warp tile span its whole grid (they used to
#     be its first 40, all BM = 64, without the defaults);
#   - the warp tile's grid reaches BK = 32, BM and BN = 256, WM and WN = 128,
#     and holds no configuration with more than 128 accumulators per thread;
#   - the starter and the solution give the same list (same defaults).
# Prints one line per failed check and, last, "autotune selection: N checks
# passed" or "autotune selection: N of M checks failed"; exits non-zero on a
# failure. Run from anywhere: bash common/tests/test_autotune.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
tune=labs/03-register-tiling/autotune.sh
lab=03-register-tiling
checks=0 failed=0
check() { # check DESCRIPTION COMMAND...: one check, quiet when it passes
    local what=$1; shift
    checks=$((checks + 1))
    if ! "$@"; then failed=$((failed + 1)); echo "FAIL: $what"; fi
}

# The file's defaults, read here with sed rather than the script's awk.
defaults_of() { # FILE NAME...
    local f=$1 n v line=""; shift
    for n in "$@"; do
        v=$(sed -n "/^#ifndef $n\$/{n;s/^#define $n \([0-9][0-9]*\)\$/\1/p;}" "$f" | head -n 1)
        line="$line${line:+ }$n=$v"
    done
    echo "$line"
}

# valid KERNEL < list: every line obeys the kernel's static_asserts (C
# integer division throughout, as the macros compute it).
valid() {
    awk -v k="$1" '
    function bad(why) { printf "  %s: %s\n", $0, why; nbad++ }
    {
        delete v
        for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
        BM = v["BM"]; BN = v["BN"]; BK = v["BK"]; TM = v["TM"]; TN = ("TN" in v) ? v["TN"] : 1
        if (BM < 1 || BN < 1 || BK < 1 || TM < 1 || TN < 1) { bad("missing a size"); next }
        if ((BM * BK + BK * BN) * 4 > 48 * 1024) bad("over 48 KB of static shared memory")
        if (k == "1d") {
            T = int(BM * BN / TM)
            if (BM % TM) bad("TM does not divide BM")
        } else if (k == "2d" || k == "vectorized") {
            T = int(BM / TM) * int(BN / TN)
            if (BM % TM || BN % TN) bad("TM, TN do not divide BM, BN")
        } else {
            T = v["NTHREADS"]; WM = v["WM"]; WN = v["WN"]; WI = v["WNITER"]
            WMITER = int((WM * WN) / (32 * TM * TN * WI))
            if (BM % WM || BN % WN) bad("warp tiles do not tile the block tile")
            else if (int(BM / WM) * int(BN / WN) != int(T / 32)) bad("not one warp per warp tile")
            if (WMITER < 1 || WMITER * 32 * TM * TN * WI != WM * WN) bad("lanes x sub-tiles do not cover the warp tile")
            else {
                if (WM % WMITER || WN % WI) bad("sub-tiles do not tile the warp tile")
                WSUBM = int(WM / WMITER); WSUBN = int(WN / WI)
                if (int(WSUBM / TM) * int(WSUBN / TN) != 32 || WSUBM % TM || WSUBN % TN)
                    bad("the 32 lanes do not tile a sub-tile")
            }
            if (WM * WN / 32 > 128) bad("more than 128 accumulators per thread")
        }
        if (T % 32 || T > 1024 || T < 32) bad("threads " T ": not whole warps or over 1024")
        if (k == "vectorized" || k == "warptile") {
            if (TM % 4 || TN % 4 || BK % 4) bad("float4 reads need multiples of 4")
            else if ((BM * BK / 4) % T || (BK * BN / 4) % T) bad("float4 loads do not divide among the threads")
        }
    }
    END { exit nbad > 0 }'
}

for kernel in 1d 2d vectorized warptile; do
    case "$kernel" in
        1d) file=matmul_1d_blocktile names="BM BN BK TM" ;;
        2d) file=matmul_2d_blocktile names="BM BN BK TM TN" ;;
        vectorized) file=matmul_vectorized names="BM BN BK TM TN" ;;
        warptile) file=matmul_warptile names="BM BN BK TM TN WM WN WNITER NTHREADS" ;;
    esac
    # shellcheck disable=SC2086
    def=$(defaults_of "solutions/$lab/$file.cu" $names)
    full=$("$tune" --kernel "$kernel" --src solutions --list 2>/dev/null)
    check "$kernel: --list exits 0 with configurations" test -n "$full"
    n=$(grep -c . <<<"$full")
    check "$kernel: every listed configuration obeys the static_asserts" valid "$kernel" <<<"$full"
    check "$kernel: no configuration listed twice" test "$(sort -u <<<"$full" | grep -c .)" = "$n"
    check "$kernel: the file's defaults ($def) come first" test "$(head -n 1 <<<"$full")" = "$def"
    labs_list=$("$tune" --kernel "$kernel" --src labs --list 2>/dev/null)
    check "$kernel: the starter's list is the solution's" test "$labs_list" = "$full"
    # Block tiles that have a configuration besides the defaults.
    ntiles=$(tail -n +2 <<<"$full" | awk '{print $1, $2, $3}' | sort -u | wc -l)
    for m in 1 2 10 40; do
        part=$("$tune" --kernel "$kernel" --src solutions --list --max $m 2>/dev/null)
        want=$((m < n ? m : n))
        check "$kernel --max $m: $want configurations" test "$(grep -c . <<<"$part")" = "$want"
        check "$kernel --max $m: the first $want of the full order" test "$part" = "$(head -n "$want" <<<"$full")"
        check "$kernel --max $m: the defaults first" test "$(head -n 1 <<<"$part")" = "$def"
        # After the defaults, a new block tile each time until all were seen.
        spread=$(tail -n +2 <<<"$part" | awk '{print $1, $2, $3}' | sort -u | wc -l)
        rest=$((want - 1))
        check "$kernel --max $m: $rest others from $((rest < ntiles ? rest : ntiles)) block tiles" \
            test "$spread" = "$((rest < ntiles ? rest : ntiles))"
    done
    msg=$("$tune" --kernel "$kernel" --src solutions --list --max 2 2>&1 >/dev/null)
    check "$kernel --max 2: says what --max does" grep -q "the file's defaults, then" <<<"$msg"
done

# The warp tile's grid, widened to what fits sm_90's 48 KB and 255 registers.
full=$("$tune" --kernel warptile --src solutions --list 2>/dev/null)
for want in BK=32 BM=256 BN=256 WM=128 WN=128; do
    check "warptile: the grid has $want" grep -qw "$want" <<<"$full"
done
max40=$("$tune" --kernel warptile --src solutions --list --max 40 2>/dev/null)
for want in BM=64 BM=128 BM=256 BK=8 BK=16 BK=32; do
    check "warptile --max 40: has $want" grep -qw "$want" <<<"$max40"
done

# Bad --max values are refused.
check "--max x is refused" test "$("$tune" --list --max x >/dev/null 2>&1; echo $?)" = 2

if [ "$failed" -gt 0 ]; then
    echo "autotune selection: $failed of $checks checks failed"
    exit 1
fi
echo "autotune selection: $checks checks passed"
