#!/usr/bin/env bash
# Install what the PDGEQRF driver needs on Debian/Ubuntu: MPICH (compiler wrapper and launcher),
# ScaLAPACK built against it, and OpenBLAS as the system BLAS (the reference BLAS that ScaLAPACK
# pulls in otherwise is about ten times slower). Does nothing when they are installed, or when
# SCALAPACK_LIBS names a site ScaLAPACK (clusters: see apps/pdgeqrf/README.md).
#
# As root it runs apt-get; otherwise it names the packages and exits with status 1.
set -euo pipefail

PACKAGES=(libscalapack-mpich-dev libmpich-dev mpich libopenblas0-serial gcc make)

if [[ -n "${SCALAPACK_LIBS:-}" ]]; then
    exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "pdgeqrf: not a Debian system: set SCALAPACK_LIBS (and MPICC) to the site's ScaLAPACK," \
         "see apps/pdgeqrf/README.md" >&2
    exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "pdgeqrf: missing Debian packages: ${missing[*]}; install them with" >&2
    echo "  sudo apt-get install --no-install-recommends ${missing[*]}" >&2
    exit 1
fi
echo "pdgeqrf: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
