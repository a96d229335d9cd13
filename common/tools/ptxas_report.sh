#!/usr/bin/env bash
# Read ptxas's resource report (nvcc -Xptxas -v) on stdin and print one line
# per kernel: registers, spill stores and loads, static shared memory, and
# anything ptxas said about wgmma. Exits 1 if a kernel spills registers to
# local memory or ptxas had to serialise or patch up wgmma (its C75xx notes:
# a wait or fence it injected, or wgmma run one at a time), 0 otherwise.
# Both cost speed that no check sees, and both show without a GPU.
#
#   make ptxas LAB=04 [SRC=solutions] [PTXAS_ARCH=90a]   # runs this on a lab
#   nvcc -arch=sm_90a -Xptxas -v -c k.cu -o /dev/null 2>&1 | common/tools/ptxas_report.sh
set -u
demangle() { if command -v c++filt >/dev/null; then c++filt "$1" | sed 's/(.*//'; else echo "$1"; fi; }

kernel="" regs="-" spills="-" smem="-" notes="" bad=0 n=0 arch=""
rows=()
declare -A wgmma_notes # by mangled name: ptxas prints them before the function's report
flush() {
    [ -n "$kernel" ] || return
    local all="${notes}${wgmma_notes[$kernel]:+${notes:+; }${wgmma_notes[$kernel]}}"
    rows+=("$(printf '%-34s %5s %13s %8s  %s' "$(demangle "$kernel")" "$regs" "$spills" "$smem" "${all:-ok}")")
    n=$((n + 1))
}
seen=""
while IFS= read -r line; do
    case "$line" in ptxas*) seen=1 ;; esac
    case "$line" in
    *"Compiling entry function '"*)
        flush
        kernel=${line#*Compiling entry function \'}; kernel=${kernel%%\'*}
        arch=${line##*for \'}; arch=${arch%\'*}
        regs="-" spills="-" smem="-" notes="" ;;
    *"bytes spill stores"*)
        st=$(grep -oE '[0-9]+ bytes spill stores' <<<"$line" | grep -oE '^[0-9]+')
        ld=$(grep -oE '[0-9]+ bytes spill loads' <<<"$line" | grep -oE '^[0-9]+')
        # The properties line of a called (not inlined) function counts too.
        if [ "${st:-0}" -gt 0 ] || [ "${ld:-0}" -gt 0 ]; then
            notes="${notes:+$notes; }SPILLS"; bad=1
        fi
        [ -n "$kernel" ] && [ "$spills" = "-" ] && spills="${st:-0}/${ld:-0}" ;;
    *"Used "*" registers"*)
        regs=$(grep -oE 'Used [0-9]+ registers' <<<"$line" | grep -oE '[0-9]+')
        smem=$(grep -oE '[0-9]+ bytes smem' <<<"$line" | grep -oE '^[0-9]+' || echo 0) ;;
    *"(C75"[0-9][0-9]")"*)
        code=$(grep -oE 'C75[0-9][0-9]' <<<"$line" | head -n 1)
        case "$line" in
        *serialized*) what="wgmma serialised" ;;
        *"warpgroup.wait is injected"*) what="wait injected" ;;
        *"warpgroup.arrive is injected"*) what="fence injected" ;;
        *) what="wgmma note" ;;
        esac
        fn=$(grep -oE "function '[^']+'" <<<"$line" | head -n 1); fn=${fn#function \'}; fn=${fn%\'}
        # One note per kind per kernel, with ptxas's code to look up.
        prev=${wgmma_notes[${fn:-?}]:-}
        case "$prev" in *"$what ($code)"*) ;; *) wgmma_notes[${fn:-?}]="${prev:+$prev; }$what ($code)" ;; esac
        bad=1 ;;
    *"ptxas warning"*|*"ptxas fatal"*|*"ptxas error"*)
        echo "$line"; bad=1 ;;
    esac
done
flush

if [ "$n" -eq 0 ]; then
    # A file of host code only (a cuBLAS wrapper, say) has nothing to report;
    # input without ptxas's header lines at all is not a report.
    if grep -q . <<<"$seen"; then echo "ptxas_report: no kernels in this file"; exit "$bad"; fi
    echo "ptxas_report: no ptxas report in the input (compile with -Xptxas -v)"
    exit 1
fi
printf '%-34s %5s %13s %8s  %s\n' "kernel${arch:+ ($arch)}" "regs" "spill st/ld" "smem" "notes"
printf '%s\n' "${rows[@]}"
[ -n "${wgmma_notes[?]:-}" ] && echo "(a function ptxas did not name)      ${wgmma_notes[?]}"
if [ "$bad" -ne 0 ]; then
    notes="${wgmma_notes[*]:-}"
    echo "ptxas_report: a kernel above spills registers or has its wgmma patched up by ptxas:"
    echo "  SPILLS: fewer live values (smaller tiles, or __launch_bounds__ that leaves more registers);"
    case "$notes" in *"fence injected"*)
        echo "  fence injected: call wgmma_fence() before the first wgmma of each k-tile (PTX wants a"
        echo "    wgmma.fence before a warpgroup's first wgmma and after any write to registers it uses);" ;;
    esac
    case "$notes" in *"wait injected"*)
        echo "  wait injected: the accumulators are read or written while their group is in flight:"
        echo "    wgmma_wait_group (or wgmma_wait_all) before touching them;" ;;
    esac
    case "$notes" in *"wgmma serialised"*|*"wgmma note"*)
        echo "  wgmma serialised: touch the accumulators only after wgmma_wait_group has let their group go,"
        echo "    and keep every wgmma of a group on registers nothing else writes meanwhile." ;;
    esac
    exit 1
fi
echo "ptxas_report: $n kernel(s), no spills, no wgmma serialisation"
