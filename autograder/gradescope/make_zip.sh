#!/usr/bin/env bash
# `make gradescope-zip`: the zip an instructor uploads to a Gradescope
# programming assignment. It holds setup.sh and run_autograder at the top and
# a copy of the course under course/, without build outputs, git history,
# the reference solutions, the grader's wrong submissions (which are
# solutions with one defect each) or its MPI fixture lab (a solution too).
set -eu
out=${1:?usage: make_zip.sh OUT.zip}
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v zip >/dev/null || { echo "gradescope-zip: needs zip; run: sudo apt-get install -y zip"; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/course"
tar -C "$root" --exclude=./build --exclude=./.git --exclude=./solutions \
    --exclude=./autograder/wrong --exclude=./autograder/tests/mpi-lab -cf - . | tar -C "$stage/course" -xf -
cp "$root/autograder/gradescope/setup.sh" "$root/autograder/gradescope/run_autograder" "$stage/"
chmod +x "$stage/setup.sh" "$stage/run_autograder"
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
rm -f "$out"
(cd "$stage" && zip -qr -X "$out" setup.sh run_autograder course)
echo "gradescope-zip: wrote $out ($(unzip -Z1 "$out" | wc -l) files); upload it as the autograder of a programming assignment"
