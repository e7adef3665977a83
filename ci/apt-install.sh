#!/usr/bin/env bash
# Usage: bash ci/apt-install.sh LABEL PACKAGE...
# Install the Debian packages that are missing (apt-get, as root). Does nothing when all are
# installed; not as root it names the missing ones (prefixed with LABEL) and exits with 1.
set -euo pipefail
label=$1
shift
missing=()
for pkg in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -ne 0 ]]; then
    echo "$label: missing Debian packages: ${missing[*]}; install them with apt-get" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
