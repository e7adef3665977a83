#!/usr/bin/env bash
# Install bindfs (a FUSE pass-through file system) for the tuning-database test on a file system
# without shared mmap (tests/test_tuningdb_sharedfs.py mounts it with -o direct_io). Does
# nothing when it is installed; as root it runs apt-get, otherwise it names the packages.
set -euo pipefail
PACKAGES=(bindfs fuse3)
missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -ne 0 ]]; then
    echo "fuse: missing Debian packages: ${missing[*]}; install them with apt-get" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
