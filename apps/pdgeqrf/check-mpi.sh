#!/usr/bin/env bash
# Usage: bash check-mpi.sh BINARY
# Check once, after the build, that BINARY loads a single MPI library. Linked against two (say
# Open MPI's libmpi.so.40 through a -lmpi that resolved to Open MPI beside MPICH's
# libmpich.so.12 that ScaLAPACK needs), every launch crashes in MPI_Comm_rank; this names both
# libraries instead. Without ldd (not Linux) there is nothing to check.
set -euo pipefail
binary=$1
if ! command -v ldd >/dev/null 2>&1; then
    exit 0
fi
# libmpi (Open MPI, Intel MPI), libmpich (MPICH), libmpi_cray (Cray MPICH): one per MPI
mapfile -t found < <(ldd "$binary" | awk '$1 ~ /^lib(mpi|mpich|mpi_cray)\.so/ {print $1 " (" $3 ")"}' | sort -u)
if [[ ${#found[@]} -gt 1 ]]; then
    echo "pdgeqrf: $binary loads ${#found[@]} MPI libraries: ${found[*]}; it would crash at" \
         "start-up. Link only the MPI of the compiler wrapper (MPICC) and the ScaLAPACK built" \
         "against it (check SCALAPACK_LIBS), see apps/pdgeqrf/README.md" >&2
    exit 1
fi
