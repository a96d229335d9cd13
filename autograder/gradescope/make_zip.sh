#!/usr/bin/env bash
# `make gradescope-zip [LAB=NN]`: the zip an instructor uploads to a
# Gradescope programming assignment. It holds setup.sh and run_autograder at
# the top and a copy of the course under course/: in a git checkout the
# tracked files only, without build outputs, git history, the reference
# solutions, the grader's wrong submissions (which are solutions with one
# defect each) or its MPI fixture lab (a solution too).
#
#   make_zip.sh [--allow-changed] OUT.zip [NN ...]
#
# With labs (NN or NN-topic), the zip's graded_labs names them and
# run_autograder grades those labs only: a student who uploads another
# lab's files to this assignment earns nothing for them. Without, it grades
# whatever labs a submission has files for, and this script says so.
#
# The student files of labs/ (every file of labs/NN-topic/ but check.c,
# bench.c, README.md and lab.mk, as the grader counts them) are the starters
# in the zip: the grader grades a file a submission lacks as the starter, and
# student code on Gradescope can read them all. So the zip is refused when
# one of them is byte for byte its solutions/ file (an instructor's copy
# made while testing: an empty submission would score full marks and every
# student could read the solution), and, in a git checkout, when one differs
# from the last commit, unless --allow-changed (make gradescope-zip
# ALLOW_CHANGED=1) says the change is meant for the starter.
set -eu
allow_changed=0
if [ "${1:-}" = --allow-changed ]; then
    allow_changed=1
    shift
fi
out=${1:?usage: make_zip.sh [--allow-changed] OUT.zip [NN ...]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v zip >/dev/null || { echo "gradescope-zip: needs zip; run: sudo apt-get install -y zip"; exit 1; }
# The files of labs/NN-topic/ a student writes: all but the harness (tree.c's lab_student_files).
is_student_file() {
    [[ $1 =~ ^labs/[0-9][0-9]-[^/]+/([^/]+)$ ]] || return 1
    case ${BASH_REMATCH[1]} in check.c | bench.c | README.md | lab.mk) return 1 ;; esac
    return 0
}
labs=()
for l in "$@"; do
    [[ $l =~ ^[0-9](-.*)?$ ]] && l=0$l # LAB=5 is lab 05, as for make check and grade
    nn=${l:0:2}
    if ! [[ $l =~ ^[0-9][0-9](-.*)?$ ]] || ! compgen -G "$root/labs/$nn-*/" >/dev/null ||
        [ ! -f "$root/autograder/rubrics/$nn.json" ]; then
        have=$(cd "$root/autograder/rubrics" 2>/dev/null && ls -- *.json 2>/dev/null | sed 's/\.json$//' | tr '\n' ' ')
        echo "gradescope-zip: no graded lab '$l' (a lab folder labs/NN-topic with autograder/rubrics/NN.json); labs: ${have:-none}" >&2
        exit 2
    fi
    labs+=("$nn")
done
in_git=0
if command -v git >/dev/null && git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    in_git=1
fi
# A solution as a starter: refused whatever else is given, before anything is packed.
solved=()
for f in "$root"/labs/[0-9][0-9]-*/*; do
    rel=${f#"$root"/}
    is_student_file "$rel" || continue
    sol=$root/solutions/${rel#labs/}
    [ -f "$f" ] && [ -f "$sol" ] && cmp -s "$f" "$sol" && solved+=("$rel")
done
if [ "${#solved[@]}" -gt 0 ]; then
    echo "gradescope-zip: error: these starters are byte for byte their solutions/ files, so the zip would ship" >&2
    echo "  the solutions (student code on Gradescope can read them, and an empty submission would score full marks):" >&2
    printf '  %s\n' "${solved[@]}" >&2
    if [ "$in_git" = 1 ]; then
        echo "  Restore the starters (git -C '$root' checkout -- ${solved[*]}) and make the zip again." >&2
    else
        echo "  Put the starters back in labs/ and make the zip again." >&2
    fi
    exit 1
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/course"
# In a git checkout the course is the files git tracks, as they are in the
# working tree, and nothing else: never a grades.csv or a submissions/ folder
# lying about, which student code on Gradescope could read.
if [ "$in_git" = 1 ]; then
    # A student file that differs from the last commit (changed, staged, deleted)
    # is a starter no one has reviewed as one: part of a solution, a test edit.
    edited=()
    while IFS= read -r -d '' f; do
        is_student_file "$f" && edited+=("$f")
    done < <(git -C "$root" diff --name-only --relative -z HEAD -- labs 2>/dev/null) # no HEAD yet: nothing to compare
    if [ "${#edited[@]}" -gt 0 ] && [ "$allow_changed" = 0 ]; then
        echo "gradescope-zip: error: these student files of labs/ differ from the last commit, and the zip would ship" >&2
        echo "  them as the starters (a student who leaves a file out is graded on it, and every student can read it):" >&2
        printf '  %s\n' "${edited[@]}" >&2
        echo "  Commit them if they are the new starters, or restore them (git -C '$root' checkout -- FILE);" >&2
        lab_arg=
        [ "${#labs[@]}" -eq 1 ] && lab_arg=" LAB=${labs[0]}"
        [ "${#labs[@]}" -gt 1 ] && lab_arg=" LAB='${labs[*]}'"
        echo "  to ship them as they are: make gradescope-zip$lab_arg ALLOW_CHANGED=1 (make_zip.sh --allow-changed)." >&2
        exit 1
    fi
    changed=$(git -C "$root" status --porcelain --untracked-files=no -- . | head -n 20)
    if [ -n "$changed" ]; then
        echo "gradescope-zip: warning: tracked files have uncommitted changes; the zip holds them as they are now:" >&2
        printf '%s\n' "$changed" | sed 's/^/  /' >&2
    fi
    skip='^(build|solutions|autograder/wrong|autograder/tests/mpi-lab|\.ci)(/|$)' # .ci: the course's own CI
    git -C "$root" ls-files -z -- . | while IFS= read -r -d '' f; do
        [[ $f =~ $skip ]] && continue
        [ -e "$root/$f" ] || [ -L "$root/$f" ] || continue # deleted, not yet committed
        printf '%s\0' "$f"
    done | tar -C "$root" --no-recursion --null -T - -cf - | tar -C "$stage/course" -xf -
else
    echo "gradescope-zip: warning: $root is not a git checkout, so the zip holds every file of the tree," >&2
    echo "  untracked ones too (a grades.csv, students' submissions): student code can read them on Gradescope." >&2
    echo "  Check the list: unzip -l $out" >&2
    tar -C "$root" --exclude=./build --exclude=./.git --exclude=./solutions \
        --exclude=./autograder/wrong --exclude=./autograder/tests/mpi-lab --exclude=./.ci -cf - . |
        tar -C "$stage/course" -xf -
fi
cp "$root/autograder/gradescope/setup.sh" "$root/autograder/gradescope/run_autograder" "$stage/"
chmod +x "$stage/setup.sh" "$stage/run_autograder"
extra=()
if [ "${#labs[@]}" -gt 0 ]; then
    echo "${labs[*]}" > "$stage/graded_labs"
    extra=(graded_labs)
fi
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
rm -f "$out"
(cd "$stage" && zip -qr -X "$out" setup.sh run_autograder "${extra[@]}" course)
echo "gradescope-zip: wrote $out ($(unzip -Z1 "$out" | wc -l) files); upload it as the autograder of a programming assignment"
if [ "${#labs[@]}" -gt 0 ]; then
    echo "gradescope-zip: it grades lab ${labs[*]} only; other labs' files in a submission are ignored"
else
    echo "gradescope-zip: warning: no LAB= given, so this autograder grades any lab a submission has files for:" >&2
    echo "  a student who uploads another lab's files to this assignment earns that lab's points." >&2
    echo "  For one assignment per lab: make gradescope-zip LAB=NN (e.g. LAB=05, or LAB='04 05')" >&2
fi
