#!/usr/bin/env bash
# Install bindfs (a FUSE pass-through file system) for the tuning-database test on a file system
# without shared mmap (tests/test_tuningdb_sharedfs.py mounts it with -o direct_io). Does
# nothing when it is installed; as root it runs apt-get, otherwise it names the packages.
set -euo pipefail
exec bash "$(dirname "$0")/../apt-install.sh" fuse bindfs fuse3
