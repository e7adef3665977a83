"""Finding the MPI launcher for local runs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def find_mpiexec() -> str:
    """The ``mpiexec`` beside this interpreter (the ``mpich`` wheel's), else the one on PATH.

    Raises
    ------
    FileNotFoundError
        When there is none, with the remedy in the message.
    """
    local = Path(sys.executable).parent / "mpiexec"
    if local.exists():
        return str(local)
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError("no mpiexec found: install the 'mpi' extra (pip install .[mpi])")
    return found
