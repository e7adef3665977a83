"""Running ``python -m propulate evolve`` from tests: the 2-D sphere and its space, the
command line of a run, and the one-line error messages the command promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: The space of :data:`SPHERE`: two floats a and b in [-5.12, 5.12] (b in the short form).
SPACE = """\
parameters:
  a: {type: float, low: -5.12, high: 5.12}
  b: [-5.12, 5.12]
"""
SPHERE = "propulate.problems.benchmark:sphere"


def cli(
    *args: str, cwd: Path | None = None, flags: tuple[str, ...] = (), timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python [FLAGS] -m propulate ARGS`` as one process (one MPI rank)."""
    return subprocess.run(
        [sys.executable, *flags, "-m", "propulate", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def evolve_args(space: Path, out: Path, *extra: str, objective: str = SPHERE) -> list[str]:
    """The arguments of ``propulate evolve`` for ``objective`` on ``space``, writing to ``out``."""
    return ["evolve", "--objective", objective, "--space", str(space), "--out", str(out), *extra]


def one_error_line(err: str) -> str:
    """The single line of an error message (fails on more, on a traceback or on nothing)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]
