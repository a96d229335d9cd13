#!/usr/bin/env bash
# Link one program the grader runs (a lab's check or bench, see
# autograder/autograder.mk) and refuse it when the student's objects define
# or call what a submission must not.
#
#   check_link.sh [-s STUDENT.o]... [-h HARNESS.o]... -- LINK COMMAND...
#
# Why: the student's objects come first on the link line, so a global symbol
# they define wins over the same name in everything linked after them:
# cmocka (an empty _fail() and no check can fail), the C library (a
# clock_gettime() that runs slow and every timer lies), the CUDA runtime or
# the emulator, the course's libraries, the checks themselves. Calls can do
# the work for them: OpenBLAS, cuBLAS, the course's CPU references and GPU
# ops, or dlopen()/dlsym() to reach any of them by name.
#
# So the program is linked with the linker's trace (-t, every file it
# opens), and the symbols of each student object are compared with those of
# every other input. Refused:
#   - a defined global symbol that another input also defines. Allowed only
#     a weak C++ definition (an inline function or a template instance from a
#     shared header, which the linker keeps once) where every other
#     definition is weak too;
#   - a symbol another input references weakly (its code calls it only when
#     something defines it: crti.o's __gmon_start__ runs before main) or a
#     shared library references at all (the program's definition would
#     replace the one the library was built against), and the linker's own
#     names (__wrap_*, __real_*, see --wrap);
#   - an indirect function (ifunc), a .preinit_array entry and constructors
#     of priority 101 or less: they run before the grader's harness reads its
#     secret (autograder/harness/grade_main.c);
#   - a reference to a symbol of BLAS, cuBLAS, the course's kernels (CPU
#     references, GPU ops, the cuBLAS wrappers, the GEMM harness), cmocka or
#     the harness, and to dlopen, dlmopen, dlsym and dlvsym;
#   - a call to the instruments the checks set on the device: the emulator's
#     guard zones (simt_memtrace_guard/unguard: lifting them lets a read past
#     a buffer's end pass), its memory tracer (simt_memtrace_start/stop: the
#     memory-pattern checks count what it saw), refused launches
#     (gpu_refuse_next_launch, simt_refuse_next_launch: cancelling one hides a
#     launch whose error goes unchecked) and the fence around device memory
#     (simt_host_access: lifting it lets host code do a kernel's work through
#     device pointers, a segmentation fault on a GPU).
# Each refusal is an "error:" line naming the file, the symbol and why; the
# program is then not built, so every test of the lab is a build error.
# Exit status: the link's, or 1 when something was refused.
set -u

students=() harness=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case "$1" in
        -s) students+=("$2"); shift 2 ;;
        -h) harness+=("$2"); shift 2 ;;
        *) echo "check_link.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: check_link.sh [-s STUDENT.o]... [-h HARNESS.o]... -- LINK COMMAND..." >&2; exit 2; }

out=
prev=
for a in "$@"; do
    [ "$prev" = -o ] && out=$a
    prev=$a
done
[ -n "$out" ] || { echo "check_link.sh: the link command has no -o OUTPUT" >&2; exit 2; }
work=$(mktemp -d "${out}.check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

"$@" -Wl,-t > "$work/trace" 2> "$work/log"
st=$?
export LC_ALL=C # bytes, not characters, from here on (the magic numbers, awk)

# The inputs the linker opened: "path", "path(member)" or "(path)member"
# (older ld). Each file is named once, by its real path (one realpath call for
# all: a process per file is most of this script's time otherwise).
cands=()
declare -A listed=()
while IFS= read -r line; do
    case "$line" in
        "("*")"*) p=${line#(}; p=${p%%)*} ;;
        *"("*")") p=${line%(*} ;;
        *) p=$line ;;
    esac
    [ -f "$p" ] && [ -z "${listed[$p]:-}" ] || continue
    listed[$p]=1
    cands+=("$p")
done < "$work/trace"
all=("${students[@]}" "${harness[@]}" "${cands[@]}")
mapfile -t keys < <(realpath -m -- "${all[@]}")
[ "${#keys[@]}" -eq "${#all[@]}" ] || { echo "check_link.sh: realpath failed on the link's inputs" >&2; exit 1; }
declare -A is_student=() is_harness=() seen=()
ns=${#students[@]} nh=${#harness[@]}
for ((i = 0; i < ns; i++)); do is_student[${keys[i]}]=1; done
for ((i = ns; i < ns + nh; i++)); do is_harness[${keys[i]}]=1; done
inputs=() input_keys=()
for ((i = ns + nh; i < ${#all[@]}; i++)); do
    k=${keys[i]}
    [ -n "${seen[$k]:-}" ] && continue
    seen[$k]=1
    [ -n "${is_student[$k]:-}" ] && continue
    inputs+=("${all[i]}")
    input_keys+=("$k")
done

# What input i is, into $what, for the messages; "work" marks the inputs a
# submission may not call into.
describe() {
    local p=${inputs[$1]} b=${inputs[$1]##*/}
    if [ -n "${is_harness[${input_keys[$1]}]:-}" ]; then what="work|the lab's checks and the grader's harness ($b)"; return; fi
    case "$b" in
        libcmocka*) what="work|cmocka (the test framework, $b)" ;;
        libopenblas*|libblas*|libcblas*|liblapack*) what="work|BLAS ($b)" ;;
        libcublas*) what="work|cuBLAS ($b)" ;;
        libkernels_*|matmul_switch.o) what="work|the course's kernels ($b)" ;;
        libc.so*|libc_nonshared.a|ld-linux*|libdl*|librt*) what="lib|the C library ($b)" ;;
        libm.so*|libm.a|libmvec*) what="lib|the math library ($b)" ;;
        libpthread*) what="lib|the threads library ($b)" ;;
        libstdc++*|libgcc*|libsupc++*) what="lib|the C++ runtime ($b)" ;;
        libgomp*) what="lib|OpenMP ($b)" ;;
        libcudart*|libcuda.*) what="lib|the CUDA runtime ($b)" ;;
        libsimt*) what="lib|the GPU emulator ($b)" ;;
        libcommon*|libcomm.a) what="lib|the course's library ($b)" ;;
        libmpi*|libopen-*|libpmix*) what="lib|MPI ($b)" ;;
        *crt*.o) what="lib|the program's start-up code ($b)" ;;
        *) case "$p" in
               */obj/kernels/*) what="work|the course's kernels ($b)" ;;
               *) what="lib|the course's code ($b)" ;;
           esac ;;
    esac
}

# One table of every other input's symbols, "KIND name what" with what =
# "class|description": D defined, w referenced weakly, r referenced by a
# shared library (an executable's definition would replace the one it was
# built against, even in a library this link does not name, such as one
# OpenBLAS needs). Shared objects are read with nm -D, the rest with nm -g;
# a linker script (libc.so) is skipped: the files it names are in the trace
# too. Each nm reads all its files at once (-A names the file on each line);
# the table lists the inputs in link order (a message names the first
# input that defines a symbol), each one's definitions first.
elves=() archives=()
: > "$work/map"
for ((i = 0; i < ${#inputs[@]}; i++)); do
    magic=
    IFS= read -r -N 4 magic < "${inputs[i]}" 2>/dev/null
    case "$magic" in
        $'\x7f'ELF) elves+=("${inputs[i]}") ;;
        '!<ar') archives+=("${inputs[i]}") ;;
        *) continue ;;
    esac
    describe "$i"
    printf '%s\t%s\t%s\n' "$i" "${inputs[i]}" "$what" >> "$work/map"
done
shared=() static=("${archives[@]}")
if [ ${#elves[@]} -gt 0 ]; then
    # With two or more files readelf names each ("File: path") before its header.
    declare -A is_dyn=()
    f=
    while IFS= read -r line; do
        case "$line" in
            "File: "*) f=${line#File: } ;;
            *"Type:"*DYN*) is_dyn[$f]=1 ;;
        esac
    done < <(readelf -h -- "${elves[@]}" "${elves[0]}" 2>/dev/null)
    for p in "${elves[@]}"; do
        if [ -n "${is_dyn[$p]:-}" ]; then shared+=("$p"); else static+=("$p"); fi
    done
fi
: > "$work/nm.gd"; : > "$work/nm.gu"; : > "$work/nm.dd"; : > "$work/nm.du"
if [ ${#static[@]} -gt 0 ]; then
    nm -A -P -g --defined-only -- "${static[@]}" > "$work/nm.gd" 2>/dev/null
    nm -A -P -g --undefined-only -- "${static[@]}" > "$work/nm.gu" 2>/dev/null
fi
if [ ${#shared[@]} -gt 0 ]; then
    nm -A -P -D --defined-only -- "${shared[@]}" > "$work/nm.dd" 2>/dev/null
    nm -A -P -D --undefined-only -- "${shared[@]}" > "$work/nm.du" 2>/dev/null
fi
# Both awk programs below read nm -A's lines, "path: name type ..." or
# "archive[member]: name type ...": the file is the first prefix before ": "
# that idx[] knows (a path may hold ": "; an archive's member is known by the
# archive's path). nm_file() sets file ("" when none) and rest, the part after it.
nm_file='
function nm_file(line,    p, off, cand) {
    file = ""; rest = line; off = 0
    while ((p = index(substr(line, off + 1), ": ")) > 0) {
        cand = substr(line, 1, off + p - 1)
        if (!(cand in idx) && cand ~ /\]$/) sub(/\[[^\[]*\]$/, "", cand)
        if (cand in idx) { file = cand; rest = substr(line, off + p + 2); return }
        off += p + 1
    }
}'
awk -F'\t' "$nm_file"'
FILENAME ~ /\/map$/ { idx[$2] = $1; what[$1] = $3; next }
{
    nm_file($0)
    if (file == "") next
    k = split(rest, f, " ")
    if (k < 2) next
    nm = f[1]; sub(/@.*/, "", nm); i = idx[file]; w = what[i]
    mode = FILENAME; sub(/.*\/nm\./, "", mode)
    if (mode ~ /d$/) {
        if (length(f[2]) == 1) print i "\t0\t" ((f[2] ~ /^[WVu]$/) ? "DW" : "D") " " nm " " w
    } else if (f[2] == "w" || f[2] == "v") print i "\t1\tw " nm " " w
    else if (mode == "du") print i "\t1\tr " nm " " w
}
' "$work/map" "$work/nm.gd" "$work/nm.gu" "$work/nm.dd" "$work/nm.du" | sort -s -t $'\t' -k1,1n -k2,2n | cut -f3- > "$work/others"

# The student's objects: "S file name type" (defined), "U file name" (used),
# "I file name" (an ifunc), "E file section" (runs early), each object's in
# that order, the objects in the order given. As above, each tool reads all
# of them at once; readelf gets the first twice so that it names every file
# ("File: path"), and the second reading is skipped.
: > "$work/smap"
for o in "${students[@]}"; do
    src=$o
    case "$o" in */labs/*) src=labs/${o##*/labs/} ;; esac
    printf '%s\t%s\n' "$o" "${src%.o}" >> "$work/smap"
done
: > "$work/s.d"; : > "$work/s.u"; : > "$work/s.sym"; : > "$work/s.sec"
if [ ${#students[@]} -gt 0 ]; then
    nm -A -P -g --defined-only -- "${students[@]}" > "$work/s.d" 2>/dev/null
    nm -A -P -g --undefined-only -- "${students[@]}" > "$work/s.u" 2>/dev/null
    readelf -sW -- "${students[@]}" "${students[0]}" > "$work/s.sym" 2>/dev/null
    readelf -SW -- "${students[@]}" "${students[0]}" > "$work/s.sec" 2>/dev/null
fi
awk -F'\t' "$nm_file"'
FILENAME ~ /\/smap$/ { if (!($1 in idx)) { idx[$1] = FNR - 1; src[FNR - 1] = $2 }; next }
FILENAME ~ /\/s\.[du]$/ {
    nm_file($0)
    if (file == "") next
    k = split(rest, f, " ")
    i = idx[file]
    if (FILENAME ~ /d$/) { if (k >= 2 && length(f[2]) == 1) print i "\t0\tS " src[i] " " f[1] " " f[2] }
    else if (k >= 2) print i "\t1\tU " src[i] " " f[1]
    next
}
/^File: / {
    # A file named again is the repeat that made readelf name the first one.
    cur = substr($0, 7); key = FILENAME SUBSEP cur
    if (key in done || !(cur in idx)) cur = ""; else done[key] = 1
    next
}
cur == "" { next }
FILENAME ~ /\/s\.sym$/ { split($0, f, " "); if (f[4] == "IFUNC") print idx[cur] "\t2\tI " src[idx[cur]] " " f[8]; next }
FILENAME ~ /\/s\.sec$/ && match($0, /^ *\[ *[0-9]*\] [^ ]* /) {
    name = substr($0, RSTART, RLENGTH); sub(/^ *\[ *[0-9]*\] /, "", name); sub(/ $/, "", name)
    i = idx[cur]
    if (name ~ /^\.preinit_array/) print i "\t3\tE " src[i] " " name
    else if (name ~ /^\.init_array\.[0-9]+$/) { if (substr(name, 13) + 0 <= 101) print i "\t3\tE " src[i] " " name }
    else if (name ~ /^\.ctors\.[0-9]+$/) { if (65535 - substr(name, 8) <= 101) print i "\t3\tE " src[i] " " name }
}
' "$work/smap" "$work/s.d" "$work/s.u" "$work/s.sym" "$work/s.sec" | sort -s -t $'\t' -k1,1n -k2,2n | cut -f3- > "$work/student"

awk '
function base(n) { sub(/@.*/, "", n); return n }
function desc(w) { sub(/^[^|]*\|/, "", w); return w }
FNR == NR {
    what = $0; sub(/^[^ ]+ [^ ]+ /, "", what); n = $2
    if ($1 == "D" || $1 == "DW") {
        if (!(n in def)) def[n] = what
        if ($1 == "D" && !(n in strong)) strong[n] = what
        if (what ~ /^work\|/ && !(n in work)) work[n] = what
    } else if ($1 == "w") { if (!(n in wref)) wref[n] = what }
    else if ($1 == "r") { if (!(n in soref)) soref[n] = what }
    next
}
$1 == "S" {
    f = $2; n = base($3); t = $4
    if (n ~ /^__(wrap|real)_/)
        print f ": error: defines \047" n "\047, a name the linker gives a meaning of its own (--wrap): the grader routes its calls through such names"
    else if (n in def && !(t ~ /^[WVu]$/ && !(n in strong) && n ~ /^(_Z|DW\.ref\.)/))
        print f ": error: defines \047" n "\047, which " desc((n in strong) ? strong[n] : def[n]) " also defines: the submission is linked first, so its \047" n "\047 would replace that one for the whole program; rename it, or make it static"
    else if (n in wref)
        print f ": error: defines \047" n "\047, which " desc(wref[n]) " calls only if something defines it: defining it would run this code inside " desc(wref[n])
    else if (n in soref)
        print f ": error: defines \047" n "\047, which " desc(soref[n]) " calls: the definition would replace the one that library was built against; rename it, or make it static"
    next
}
$1 == "U" {
    f = $2; n = base($3)
    if (n ~ /^(dlopen|dlmopen|dlsym|dlvsym|__libc_dl.*|_dl_.*)$/)
        print f ": error: calls \047" n "\047, which loads or looks up code by name at run time; a submission does its work in its own code"
    else if (n ~ /^(simt_memtrace_(guard|unguard|start|stop)|simt_refuse_next_launch|gpu_refuse_next_launch|simt_host_access)$/)
        print f ": error: calls \047" n "\047, one of the instruments the checks set on the device (guard zones, the memory tracer, refused launches, the fence around device memory); a submission leaves them to the checks"
    else if (n in work)
        print f ": error: calls \047" n "\047 from " desc(work[n]) "; a submission does the work in its own kernels, not by calling a library or the course code that does it"
    else if (n ~ /^(cblas_|cublas|openblas_)/)
        print f ": error: calls \047" n "\047, a BLAS or cuBLAS function; a submission does the work in its own kernels"
    next
}
$1 == "I" {
    print $2 ": error: defines \047" $3 "\047 as an indirect function (ifunc): its resolver runs while the program is being loaded, before the grader\047s harness has started"
    next
}
$1 == "E" {
    print $2 ": error: has a " $3 " section: code there runs before the grader\047s harness has started (constructor priorities up to 101 are the harness\047s)"
}
' "$work/others" "$work/student" > "$work/refused"

if [ -s "$work/refused" ]; then
    # c++filt writes C++ names (kernels, helpers) as the student wrote them.
    { if command -v c++filt > /dev/null; then c++filt; else cat; fi; } < "$work/refused" | awk '!seen[$0]++' >&2
    echo "check_link.sh: $(wc -l < "$work/refused") thing(s) above in the submission's objects are not allowed; the program was not linked and nothing of it ran" >&2
    rm -f -- "$out"
    exit 1
fi
cat "$work/log" >&2
exit $st
