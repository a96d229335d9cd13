#!/usr/bin/env bash
# Packs the Debian packages that `make gpu-check` needs beyond a CUDA image, for
# a GPU machine that cannot reach a package registry.
#
# Run it where apt works (the course's CI image, a laptop with Debian 12):
#     common/tools/gpu_bundle.sh            # writes .gpu-bundle/debs/*.deb (git ignores it)
# then take .gpu-bundle along to the GPU machine, next to the course, and run
#     bash autograder/gpu_check.sh
# which unpacks the packages into .gpu-bundle/root (never into /) and points
# the compiler, the linker and the loader there. The bundle holds make, the
# cmocka test runner, OpenBLAS (the CPU references) and jansson (the grader):
# about 13 MB. Not in it: Open MPI (the GPU checks need no MPI; without mpicc
# the communicator and its tests are left out of the build) and Doxygen.
set -euo pipefail
dir=${1:-.gpu-bundle}
pkgs=(make libcmocka0 libcmocka-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev libopenblas-dev
      libgfortran5 libquadmath0 libjansson4 libjansson-dev)
command -v apt-get >/dev/null || { echo "gpu_bundle: needs apt-get (a Debian or Ubuntu machine)"; exit 1; }
mkdir -p "$dir/debs"
cd "$dir/debs"
rm -f ./*.deb
if ! apt-get download "${pkgs[@]}" >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1
    apt-get download "${pkgs[@]}" >/dev/null || {
        echo "gpu_bundle: apt-get download failed; run 'apt-get update' (as root) and try again"; exit 1; }
fi
echo "gpu_bundle: $(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1), in $dir/debs"
