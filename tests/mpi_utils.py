"""Running code under ``mpiexec`` from pytest."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
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


def _children() -> dict[int, list[int]]:
    """Every live process's children, from ``/proc`` (parent pid -> child pids)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def _descendants(pid: int) -> list[int]:
    children, found, todo = _children(), [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def kill_job(proc: subprocess.Popen[str], timeout: float = 30.0) -> None:
    """SIGKILL an MPI job started by :func:`popen_mpi` and return once every rank is dead.

    Killing mpiexec's process group does not reach the ranks: the launcher starts each in a
    session of its own, and they die only when the launcher's proxy, once scheduled, takes them
    down. On a loaded machine a rank could go on writing records meanwhile, after a test had
    read them. So every descendant of mpiexec is killed directly, as a batch system kills all
    tasks of a job, and waited for.
    """
    ranks = _descendants(proc.pid)
    os.killpg(proc.pid, signal.SIGKILL)
    for pid in ranks:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.communicate(timeout=timeout)
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in ranks):
        if time.monotonic() > deadline:
            raise AssertionError(f"ranks {[p for p in ranks if alive(p)]} outlived SIGKILL")
        time.sleep(0.05)
