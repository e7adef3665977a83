#!/usr/bin/env bash
# Install Debian's headless Chromium for the report's and the dashboard's browser tests
# (tests/test_browser.py). Does nothing when it is installed; as root it runs apt-get,
# otherwise it names the package.
set -euo pipefail
exec bash "$(dirname "$0")/../apt-install.sh" chromium chromium
