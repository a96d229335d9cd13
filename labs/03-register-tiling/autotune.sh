#!/usr/bin/env bash
# Lab 03 autotuner: search tile sizes for one of this lab's kernels on the GPU
# of this machine and rank them by TFLOP/s at 4096^3, with cuBLAS (fp32, TF32
# off) timed in the same process as the yardstick.
#
# For every configuration of a grid it compiles the kernel's .cu file with -D
# overrides (BM, BN, BK, TM, TN, and for the warp-tiled kernel WM, WN, WNITER,
# NTHREADS), links it into a one-kernel benchmark built on the lab's harness
# (gemm_bench_main in kernels/gemm_harness.c), runs it under a time limit, and
# prints a ranked table and the best -D line. Configurations that break the
# kernel's rules are never generated (see valid_* below); the static_asserts
# in the .cu file are the final word, and a configuration they reject is
# reported as "invalid".
#
# The order of the configurations (see order_grid below): the file's own
# defaults first, always, so the table shows what tuning gains over them;
# then one configuration of each block tile (BM x BN x BK) in turn, the
# best-rated of each first (more outputs per thread, then a higher block-tile
# intensity, then fewer shared loads per multiply-add), block tiles in the
# order of their best-rated configuration; then the second-rated of each, and
# so on. --max N keeps the first N of that order: the defaults and a sample
# that spans the block tiles of the whole grid, not just its first corner.
# --list prints the configurations it would try and stops (no nvcc or GPU
# needed). Everything goes under $BUILD/autotune.
#
# Run from the repository root:
#   labs/03-register-tiling/autotune.sh                     # warptile, your file (labs/)
#   labs/03-register-tiling/autotune.sh --kernel vectorized --src solutions
#   labs/03-register-tiling/autotune.sh --max 40 --list     # what a 40-configuration search tries
#   labs/03-register-tiling/autotune.sh --dry-run           # list the grid, compile the first config
# Without a GPU it says so and exits 1, since nothing was tuned (--list
# works anywhere, --dry-run with nvcc alone).
set -u

usage() {
    cat <<USAGE
usage: labs/03-register-tiling/autotune.sh [options]
  --kernel K     1d | 2d | vectorized | warptile (default warptile)
  --src S        labs (your file, default) or solutions
  --size N       square size to time, N^3 (default 4096)
  --reps R       timed repetitions per configuration, median reported (default 5)
  --timeout S    seconds allowed per compile and per run (default 120)
  --max N        try at most N configurations: the file's defaults, then a
                 sample spread over the block tiles of the grid, best-rated
                 first (default: all valid ones)
  --jobs J       compile J configurations at a time (default: number of cores)
  --arch A       GPU architecture for nvcc, e.g. 90a or 80 (default: from nvidia-smi)
  --build DIR    build folder (default: build; outputs go to DIR/autotune)
  --list         print the configurations that would be tried, in order, and stop
  --dry-run      print the configurations, then compile and link the first one only
  -h, --help     this text
USAGE
}

kernel=warptile src=labs size=4096 reps=5 limit=120 max=0 arch="" dry=0 list=0
jobs=$(nproc 2>/dev/null || echo 4)
BUILD=${BUILD:-build}
while [ $# -gt 0 ]; do
    case "$1" in
        --kernel) kernel=${2:-}; shift 2 ;;
        --src) src=${2:-}; shift 2 ;;
        --size) size=${2:-}; shift 2 ;;
        --reps) reps=${2:-}; shift 2 ;;
        --timeout) limit=${2:-}; shift 2 ;;
        --max) max=${2:-}; shift 2 ;;
        --jobs) jobs=${2:-}; shift 2 ;;
        --arch) arch=${2:-}; shift 2 ;;
        --build) BUILD=${2:-}; shift 2 ;;
        --list) list=1; shift ;;
        --dry-run) dry=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "autotune: unknown option '$1'"; usage; exit 2 ;;
    esac
done

case "$kernel" in
    1d) file=matmul_1d_blocktile fn=matmul_blocktile_1d ;;
    2d) file=matmul_2d_blocktile fn=matmul_blocktile_2d ;;
    vectorized) file=matmul_vectorized fn=matmul_vectorized ;;
    warptile) file=matmul_warptile fn=matmul_warptile ;;
    *) echo "autotune: --kernel $kernel: pick one of 1d, 2d, vectorized, warptile"; exit 2 ;;
esac
case "$src" in labs|solutions) ;; *) echo "autotune: --src $src must be labs or solutions"; exit 2 ;; esac
for v in size reps limit max jobs; do
    [[ ${!v} =~ ^[0-9]+$ ]] || { echo "autotune: --$v must be a whole number (got '${!v}')"; exit 2; }
done
[ "$jobs" -ge 1 ] || jobs=1
lab=03-register-tiling
srcfile=$src/$lab/$file.cu
[ -f "$srcfile" ] && [ -f Makefile ] || { echo "autotune: run me from the repository root (no $srcfile here)"; exit 2; }

# ---- the search space ----------------------------------------------------------
# Each line of configs() is one configuration: NAME=VALUE pairs for -D. The
# valid_* functions apply the rules the kernels' static_asserts state:
#  - threads per block = (BM / TM) * (BN / TN) (BM * BN / TM for 1d) is a
#    whole number of warps and at most 1024;
#  - static shared memory (BM * BK + BK * BN) * 4 bytes is at most 48 KB;
#    the warp tile keeps two buffers of each tile and pads the rows of its
#    transposed A tile by 4 floats: 2 ((BM + 4) BK + BK BN) 4 bytes;
#  - float4 kernels: TM, TN, BK are multiples of 4, and each tile is a whole
#    number of float4s per thread ((BM * BK / 4) % threads == 0, same for B),
#    so every thread issues the same loads;
#  - warptile: one warp per WM x WN warp tile ((BM / WM) * (BN / WN) warps =
#    NTHREADS / 32); a warp's 32 lanes x WMITER x WNITER micro-tiles of
#    TM x TN cover the warp tile exactly, with
#    WMITER = WM * WN / (32 * TM * TN * WNITER), and the lanes of one sub-tile
#    form a (WM / WMITER / TM) x (WN / WNITER / TN) grid of 32.
# And for the warp tile one rule that is not a static_assert, the registers
# (regs_ok_warp): at most 128 accumulators per thread (a thread has at most
# 255 registers), and the accumulators plus the floats a thread stages per
# tile (4 per float4 it loads) plus 52 (operands, addresses, loop state)
# within what __launch_bounds__(NTHREADS) leaves a thread: 255, or 65536 /
# NTHREADS above 256 threads. Calibrated with nvcc 13.0 for sm_90a on the
# solution before it was double-buffered (every configuration the rule kept
# compiled without spilling but one, 8 bytes); rechecked on the
# double-buffered solution, which holds the slice in flight and two sets of
# operands, for the 60 with 128 accumulators that stage 48 to 64 floats per
# thread: 252 to 255 registers, and 17 of them spill, 8 to 332 bytes (those
# that stage 32 or 40 do not). Another kernel may need more
# registers; the table's spill column shows what ptxas did with yours.
smem_ok() { [ $(( ($1 * $3 + $3 * $2) * 4 )) -le 49152 ]; }           # BM BN BK
valid_1d() {  # BM BN BK TM
    local t=$(( $1 * $2 / $4 ))
    [ $(( $1 % $4 )) -eq 0 ] && [ $t -le 1024 ] && [ $(( t % 32 )) -eq 0 ] && smem_ok "$1" "$2" "$3"
}
valid_2d() {  # BM BN BK TM TN
    [ $(( $1 % $4 )) -eq 0 ] && [ $(( $2 % $5 )) -eq 0 ] || return 1
    local t=$(( ($1 / $4) * ($2 / $5) ))
    [ $t -le 1024 ] && [ $t -ge 32 ] && [ $(( t % 32 )) -eq 0 ] && smem_ok "$1" "$2" "$3"
}
valid_vec() {  # BM BN BK TM TN
    valid_2d "$@" || return 1
    local t=$(( ($1 / $4) * ($2 / $5) ))
    [ $(( $4 % 4 )) -eq 0 ] && [ $(( $5 % 4 )) -eq 0 ] && [ $(( $3 % 4 )) -eq 0 ] &&
        [ $(( ($1 * $3 / 4) % t )) -eq 0 ] && [ $(( ($3 * $2 / 4) % t )) -eq 0 ]
}
valid_warp() {  # BM BN BK TM TN WM WN WNITER NTHREADS
    local BM=$1 BN=$2 BK=$3 TM=$4 TN=$5 WM=$6 WN=$7 WNITER=$8 T=$9
    [ $(( BM % WM )) -eq 0 ] && [ $(( BN % WN )) -eq 0 ] || return 1
    [ $(( (BM / WM) * (BN / WN) * 32 )) -eq $T ] && [ $T -le 1024 ] || return 1
    local per=$(( 32 * TM * TN * WNITER ))
    [ $(( (WM * WN) % per )) -eq 0 ] || return 1
    local WMITER=$(( WM * WN / per ))
    [ $WMITER -ge 1 ] && [ $(( WM % WMITER )) -eq 0 ] && [ $(( WN % WNITER )) -eq 0 ] || return 1
    local WSUBM=$(( WM / WMITER )) WSUBN=$(( WN / WNITER ))
    [ $(( WSUBM % TM )) -eq 0 ] && [ $(( WSUBN % TN )) -eq 0 ] || return 1
    [ $(( (WSUBM / TM) * (WSUBN / TN) )) -eq 32 ] || return 1
    [ $(( TM % 4 )) -eq 0 ] && [ $(( TN % 4 )) -eq 0 ] && [ $(( BK % 4 )) -eq 0 ] || return 1
    [ $(( (BM * BK / 4) % T )) -eq 0 ] && [ $(( (BK * BN / 4) % T )) -eq 0 ] || return 1
    [ $(( 2 * ((BM + 4) * BK + BK * BN) * 4 )) -le 49152 ]   # double-buffered, padded A
}
regs_ok_warp() {  # BM BN BK TM TN WM WN WNITER NTHREADS
    local BM=$1 BN=$2 BK=$3 WM=$6 WN=$7 T=$9
    local acc=$(( WM * WN / 32 ))                      # accumulators per thread
    local ld=$(( (BM * BK + BK * BN) / 4 / T ))        # float4s a thread loads per tile
    local cap=$(( 65536 / T > 255 ? 255 : 65536 / T ))  # what __launch_bounds__(T) allows
    [ $acc -le 128 ] && [ $(( acc + 4 * ld + 52 )) -le $cap ]
}
configs() {
    local BM BN BK TM TN WM WN WI T
    if [ "$kernel" = warptile ]; then
        # NTHREADS follows from the warp tiles: one warp per WM x WN tile.
        for BM in 64 128 256; do for BN in 64 128 256; do for BK in 8 16 32; do
        for TM in 4 8; do for TN in 4 8; do for WM in 32 64 128; do for WN in 32 64 128; do
        for WI in 1 2 4 8; do
            [ $(( BM % WM )) -eq 0 ] && [ $(( BN % WN )) -eq 0 ] || continue
            T=$(( (BM / WM) * (BN / WN) * 32 ))
            valid_warp $BM $BN $BK $TM $TN $WM $WN $WI $T && regs_ok_warp $BM $BN $BK $TM $TN $WM $WN $WI $T &&
                echo "BM=$BM BN=$BN BK=$BK TM=$TM TN=$TN WM=$WM WN=$WN WNITER=$WI NTHREADS=$T"
        done; done; done; done; done; done; done; done
        return
    fi
    for BM in 64 128; do for BN in 64 128; do for BK in 8 16; do
        case "$kernel" in
            1d) for TM in 4 8; do
                    valid_1d $BM $BN $BK $TM && echo "BM=$BM BN=$BN BK=$BK TM=$TM"
                done ;;
            2d|vectorized) for TM in 4 8; do for TN in 4 8; do
                    if [ "$kernel" = 2d ]; then valid_2d $BM $BN $BK $TM $TN || continue
                    else valid_vec $BM $BN $BK $TM $TN || continue; fi
                    echo "BM=$BM BN=$BN BK=$BK TM=$TM TN=$TN"
                done; done ;;
        esac
    done; done; done
}
# The -D names of each kernel's tile sizes, in the order configs() writes them.
case "$kernel" in
    1d) names="BM BN BK TM" ;;
    2d|vectorized) names="BM BN BK TM TN" ;;
    warptile) names="BM BN BK TM TN WM WN WNITER NTHREADS" ;;
esac
# The file's defaults as a configuration line: the value of each
# "#ifndef NAME / #define NAME VALUE" pair; nothing if one is missing.
file_defaults() {
    local n v line=""
    for n in $names; do
        v=$(awk -v n="$n" '$1 == "#ifndef" && $2 == n { getline; if ($1 == "#define" && $2 == n) print $3; exit }' "$srcfile")
        [[ $v =~ ^[0-9]+$ ]] || return 1
        line="$line${line:+ }$n=$v"
    done
    echo "$line"
}
# order_grid DEFAULTS: the configurations on stdin in the order they are
# tried. First DEFAULTS (when given), then rounds over the block tiles
# (BM x BN x BK): each round takes the best-rated configuration of every
# block tile not yet used up, the block tiles in the order of their own
# best-rated configuration. The rating, a guess at speed before any timing:
# more outputs per thread (register reuse and independent FMAs), then a
# larger block-tile intensity BM BN / (BM + BN) (fewer global loads per FMA),
# then more FMAs per value read from shared memory, then the squarer warp
# tile and the larger micro-tile, then BK 16, 8, 32, then 128 or 256 threads,
# then the fewest threads. So a prefix (--max) holds the
# defaults and, round by round, the likeliest configurations of every block
# tile, rather than a corner of the grid.
order_grid() {
    local def=$1
    [ -n "$def" ] && echo "$def"
    awk -v kernel="$kernel" -v def="$def" '
    NF > 0 && $0 != def {
        delete v
        for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        bm = v["BM"]; bn = v["BN"]; bk = v["BK"]; tm = v["TM"]; tn = ("TN" in v) ? v["TN"] : 1
        if (kernel == "warptile") {
            o = v["WM"] * v["WN"] / 32
            reads = o / (tm * tn * v["WNITER"]) * tm + v["WNITER"] * tn
            t = v["NTHREADS"]
        } else if (kernel == "1d") { o = tm; reads = tm + 1; t = bm * bn / tm }
        else { o = tm * tn; reads = tm + tn; t = (bm / tm) * (bn / tn) }
        # A warp tile as square as can be (WM / WN or WN / WM), then the
        # larger micro-tile: the shapes the CUTLASS and SGEMM_CUDA kernels use.
        sq = kernel == "warptile" ? (v["WM"] > v["WN"] ? v["WM"] / v["WN"] : v["WN"] / v["WM"]) : 1
        bkp = bk == 16 ? 0 : bk == 8 ? 1 : 2
        tp = (t == 128 || t == 256) ? 0 : 1
        printf "%d %.4f %.4f %d %d %d %d %d %s\n", o, bm * bn / (bm + bn), o / reads, sq, tm * tn,
               bkp, tp, t, $0
    }' | LC_ALL=C sort -k1,1nr -k2,2gr -k3,3gr -k4,4n -k5,5nr -k6,6n -k7,7n -k8,8n -k9 | cut -d' ' -f9- |
    awk '{ tile = $1 " " $2 " " $3
           if (!(tile in order)) order[tile] = ++ntiles
           print round[tile]++, order[tile], $0 }' |
    LC_ALL=C sort -s -k1,1n -k2,2n | cut -d' ' -f3-
}

all=()
mapfile -t all < <(configs)
defcfg=$(file_defaults) || defcfg=""
mapfile -t grid < <(printf '%s\n' "${all[@]}" | order_grid "$defcfg")
ingrid=0
[ -n "$defcfg" ] && printf '%s\n' "${all[@]}" | grep -qxF "$defcfg" && ingrid=1
total=${#grid[@]}
[ "$max" -gt 0 ] && [ "$total" -gt "$max" ] && grid=("${grid[@]:0:$max}")
# What was chosen, in words: on stderr with --list, whose stdout is the list.
tiles_of() { printf '%s\n' "$@" | awk '{print $1, $2, $3}' | sort -u | wc -l; }
msgfd=1
[ $list = 1 ] && msgfd=2
{
    if [ -z "$defcfg" ]; then
        echo "autotune: could not read the #ifndef defaults of $srcfile ($names); the search starts without them"
    elif [ $ingrid = 0 ]; then
        echo "autotune: the file's defaults ($defcfg) are not in the grid; they are timed first all the same"
    fi
    if [ ${#grid[@]} -lt "$total" ]; then
        lead=""
        [ -n "$defcfg" ] && lead="the file's defaults, then "
        echo "autotune: --max $max: trying ${#grid[@]} of $total configurations: ${lead}the" \
             "best-rated configuration of each block tile (BM x BN x BK) in turn, so the" \
             "sample covers $(tiles_of "${grid[@]}") of the grid's $(tiles_of "${all[@]}") block tiles;" \
             "without --max all $total are tried"
    else
        first=""
        [ -n "$defcfg" ] && first=", the file's defaults first"
        echo "autotune: trying all $total configurations$first"
    fi
} >&$msgfd
if [ $list = 1 ]; then
    printf '%s\n' "${grid[@]}"
    exit 0
fi

have_gpu=0
nvidia-smi -L 2>/dev/null | grep -q '^GPU' && have_gpu=1
if [ $have_gpu = 0 ] && [ $dry = 0 ]; then
    echo "autotune: no NVIDIA GPU visible (nvidia-smi -L); tile sizes can only be tuned on a GPU."
    echo "autotune: --list prints the configurations it would try; --dry-run also checks that the first compiles."
    exit 1
fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
who=autotune
. common/tools/gemm_tune_lib.sh
tune_find_nvcc
if [ -z "$arch" ]; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
    case "$cap" in
        "") arch=90a ;;          # dry run without a GPU: the course's Hopper target
        90) arch=90a ;;          # Hopper: the arch-specific target the course builds
        *) arch=$cap ;;
    esac
fi

echo "autotune: $fn from $srcfile, ${#grid[@]} configurations, sm_$arch, ${size}^3, $reps reps"

# ---- build pieces shared by every configuration ----------------------------------
# (common/tools/gemm_tune_lib.sh: the libraries, the benchmark's main,
# build_one TAG CONFIG and ptxas_figures DIR)
out=$BUILD/autotune/$kernel
# A one-kernel benchmark: the lab's harness, timing only the configuration
# under test (and cuBLAS, which gemm_bench_main always times first).
tune_prepare "#include \"gemm_harness.h\"
int $fn(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C);
int main(int argc, char **argv) {
    const gemm_kernel_t k[] = {{\"$fn\", $fn, NULL}};
    return gemm_bench_main(\"03\", \"lab 03 autotune: one configuration\", k, 1, argc, argv);
}"

if [ $dry = 1 ]; then
    printf '%s\n' "${grid[@]}"
    [ ${#grid[@]} -gt 0 ] || { echo "autotune: the grid is empty"; exit 1; }
    what="the first configuration"
    [ -n "$defcfg" ] && what="the first configuration (the file's defaults)"
    echo "autotune: dry run: compiling and linking $what only"
    if build_one dry "${grid[0]}"; then
        read -r regs spill < <(ptxas_figures "$out/dry")
        echo "autotune: ok: ${grid[0]} -> $out/dry/bench ($regs registers, $spill bytes spilled)"
        exit 0
    fi
    echo "autotune: the first configuration did not build; see $out/dry/compile.log"
    tail -n 20 "$out/dry/compile.log"; exit 1
fi

# ---- the search --------------------------------------------------------------------
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1
results="$out/results.txt"
: >"$results"
# Compiling is the slow part and needs no GPU: all configurations first, in
# parallel; then the timed runs, one at a time so they do not disturb each other.
echo "autotune: compiling ${#grid[@]} configurations, $jobs at a time"
i=0
for cfg in "${grid[@]}"; do
    i=$((i + 1))
    tag=$(printf 'c%03d' $i)
    rm -rf "${out:?}/$tag"
    ( build_one "$tag" "$cfg" && touch "$out/$tag/built" ) &
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
done
wait
echo "autotune: timing each configuration at ${size}^3"
i=0
for cfg in "${grid[@]}"; do
    i=$((i + 1))
    tag=$(printf 'c%03d' $i)
    if [ ! -f "$out/$tag/built" ]; then
        printf '[%3d/%d] %-70s invalid (does not compile; %s)\n' $i ${#grid[@]} "$cfg" "$out/$tag/compile.log"
        continue
    fi
    read -r regs spill < <(ptxas_figures "$out/$tag")
    timeout --kill-after=10 "$limit" "$out/$tag/bench" --sizes "$size" --reps "$reps" \
        >"$out/$tag/run.log" 2>&1
    rc=$?
    # The kernel's row: M N K name ms TFLOP/s %cuBLAS err status.
    row=$(awk -v k="$fn" '$4 == k' "$out/$tag/run.log" | tail -n 1)
    read -r _ _ _ _ ms tf pct _ status <<<"$row"
    if [ $rc -ne 0 ] || [ "${status:-}" != ok ]; then
        why=${status:-no result}; [ $rc -eq 124 ] && why="timed out after ${limit}s"
        printf '[%3d/%d] %-70s failed (%s; rc %d; %s)\n' $i ${#grid[@]} "$cfg" "$why" $rc "$out/$tag/run.log"
        continue
    fi
    mark=""
    [ "$cfg" = "$defcfg" ] && mark="  (the file's defaults)"
    printf '[%3d/%d] %-70s %8s TFLOP/s %6s%% of cuBLAS  %s regs, %s B spilled%s\n' \
        $i ${#grid[@]} "$cfg" "$tf" "$pct" "$regs" "$spill" "$mark"
    echo "$tf $pct $regs $spill $cfg" >>"$results"
done

echo
if [ ! -s "$results" ]; then
    echo "autotune: no configuration ran successfully; see the logs under $out"; exit 1
fi
echo "autotune: $fn at ${size}^3, best first (cuBLAS timed in each run; logs under $out)"
printf '%4s %9s %9s %5s %7s  %s\n' rank TFLOP/s %cuBLAS regs spill configuration
sort -k1,1 -g -r "$results" | awk -v def="$defcfg" '{ cfg = ""; for (i = 5; i <= NF; i++) cfg = cfg " " $i;
    printf "%4d %9s %9s %5s %7s %s%s\n", NR, $1, $2, $3, $4, cfg, substr(cfg, 2) == def ? "  <- the file'"'"'s defaults" : "" }'
best=$(sort -k1,1 -g -r "$results" | head -n 1 | cut -d' ' -f5-)
dline=""
for d in $best; do dline="$dline -D$d"; done
echo
if [ ${#grid[@]} -lt "$total" ]; then
    echo "autotune: searched ${#grid[@]} of the $total configurations of the grid (--max $max)"
fi
if [ -n "$defcfg" ]; then
    deftf=$(awk -v def="$defcfg" '{ cfg = $5; for (i = 6; i <= NF; i++) cfg = cfg " " $i; if (cfg == def) print $1 }' "$results")
    if [ -z "$deftf" ]; then
        echo "autotune: the file's defaults did not run (see their line above)"
    elif [ "$best" = "$defcfg" ]; then
        echo "autotune: the file's defaults are the fastest of those timed ($deftf TFLOP/s)"
    else
        echo "autotune: the file's defaults ran at $deftf TFLOP/s"
    fi
fi
echo "best:$dline"
echo "apply it: set these values in the #ifndef defaults at the top of $srcfile,"
echo "then run make check LAB=03 and make bench LAB=03 ARGS=\"--sizes $size\" to confirm."
