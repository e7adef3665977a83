#!/usr/bin/env bash
# Install Debian's headless Chromium for the report's and the dashboard's browser tests
# (tests/test_browser.py). Does nothing when it is installed; as root it runs apt-get,
# otherwise it names the package.
set -euo pipefail
PACKAGES=(chromium)
missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -ne 0 ]]; then
    echo "chromium: missing Debian packages: ${missing[*]}; install them with apt-get" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
