#!/usr/bin/env bash
# Installs the Debian packages the course needs, or says exactly how to.
#
# Each package is checked by a file or command it provides, so an installed
# system is left alone (no apt-get, no network). As root the missing ones are
# installed with apt-get; otherwise the exact command is printed and we stop.
# The CUDA toolkit is not a Debian package here: without nvcc everything except
# the real-GPU builds still builds and is tested.
set -u

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_hdr() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ] ||
             [ -e "/usr/include/aarch64-linux-gnu/$1" ]; }

have_cmd gcc              || need+=(gcc)
have_cmd g++              || need+=(g++)
have_cmd make             || need+=(make)
have_cmd mpicc            || need+=(libopenmpi-dev)
have_cmd mpirun           || need+=(openmpi-bin)
have_hdr cmocka.h         || need+=(libcmocka-dev)
have_cmd doxygen          || need+=(doxygen)
# OpenBLAS itself, not any cblas.h: netlib's libblas-dev has one too, without
# the openblas_* thread controls the CPU kernels call.
have_hdr openblas/openblas_config.h || [ -n "$(ls /usr/include/*/openblas*/openblas_config.h 2>/dev/null)" ] ||
                             need+=(libopenblas-dev)
have_hdr jansson.h        || need+=(libjansson-dev)
have_cmd timeout          || need+=(coreutils)
have_cmd zip              || need+=(zip)
have_cmd patch            || need+=(patch)
have_cmd unzip            || need+=(unzip)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi

cmd="apt-get install -y --no-install-recommends ${need[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing Debian packages: ${need[*]}"
    echo "deps: install them with:"
    echo "    sudo apt-get update && sudo $cmd"
    echo "deps: then run make again."
    exit 1
fi
if ! have_cmd apt-get; then
    echo "deps: missing packages (${need[*]}) and no apt-get on this system;"
    echo "deps: install the equivalents with your package manager, then run make again."
    exit 1
fi
echo "deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && $cmd -qq || {
    echo "deps: apt-get failed; run by hand: apt-get update && $cmd"
    exit 1
}
