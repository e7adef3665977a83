"""Running code under ``mpiexec`` from pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from propulate.engine.launch import find_mpiexec

SCRIPTS = Path(__file__).parent / "mpi_scripts"


def mpiexec() -> str:
    """The launcher the MPI tests use (see :func:`propulate.engine.launch.find_mpiexec`)."""
    return find_mpiexec()


def run_mpi(
    n: int,
    args: list[str],
    timeout: float = 120.0,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run ``python ARGS`` on ``n`` ranks; fail the test with the output on a non-zero exit."""
    cmd = [mpiexec(), "-n", str(n), sys.executable, *args]
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=full_env
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} exited {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\n"
            f"stderr:\n{proc.stderr[-4000:]}"
        )
    return proc


def popen_mpi(
    n: int, args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start ``python ARGS`` on ``n`` ranks in its own process group (for kill tests)."""
    cmd = [mpiexec(), "-n", str(n), sys.executable, *args]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
