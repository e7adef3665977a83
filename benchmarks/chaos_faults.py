"""Faults for the chaos test of whole campaigns (benchmarks/chaos.py): finding a trial's
processes, signalling them as a scheduler does, and filling a disk.

Every process of a trial carries the environment variable :data:`MARK` (its value names the
trial), so the faults find the trial's processes in ``/proc`` whatever started them
(Snakemake, its jobs' shells, ``mpiexec`` and its proxies, the MPI ranks), and the driver
waits until none is left before it checks the invariants.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The environment variable that marks a trial's processes.
MARK = "PROPULATE_CHAOS_TRIAL"


@dataclass(frozen=True)
class Proc:
    """One process: id, parent id and command line (arguments)."""

    pid: int
    ppid: int
    argv: tuple[str, ...]

    @property
    def line(self) -> str:
        """The command line as one string."""
        return " ".join(self.argv)


def _ppid(pid: str) -> int:
    stat = Path("/proc", pid, "stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def trial_processes(trial: str) -> list[Proc]:
    """The live (not zombie) processes whose environment marks them as the trial's."""
    needle = f"{MARK}={trial}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue
            found.append(
                Proc(int(entry.name), _ppid(entry.name), tuple(a.decode() for a in argv if a))
            )
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
    return found


def subtree(procs: list[Proc], root: int) -> list[Proc]:
    """``root`` and its descendants among ``procs``."""
    children: dict[int, list[Proc]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p)
    out = [p for p in procs if p.pid == root]
    frontier = [root]
    while frontier:
        for child in children.get(frontier.pop(), []):
            out.append(child)
            frontier.append(child.pid)
    return out


def is_python_of(proc: Proc, *words: str) -> bool:
    """Whether ``proc`` is ``python -m propulate WORDS...`` (not a shell that runs it)."""
    argv = proc.argv
    if not argv or "python" not in Path(argv[0]).name:
        return False
    try:
        at = argv.index("propulate")
    except ValueError:
        return False
    return argv[at - 1] == "-m" and list(argv[at + 1 : at + 1 + len(words)]) == list(words)


def stage(proc: Proc) -> str:
    """The stage a ``python -m propulate STAGE`` process runs (``""`` for other processes)."""
    argv = proc.argv
    if not argv or "python" not in Path(argv[0]).name or "propulate" not in argv:
        return ""
    at = argv.index("propulate")
    return argv[at + 1] if argv[at - 1] == "-m" and at + 1 < len(argv) else ""


def evolve_ranks(procs: list[Proc]) -> list[Proc]:
    """The MPI ranks of evolve jobs."""
    return [p for p in procs if is_python_of(p, "evolve")]


def evolve_jobs(procs: list[Proc]) -> list[Proc]:
    """The shells of evolve jobs (each runs ``prepare-run``, then ``mpiexec ... evolve``)."""
    return [
        p
        for p in procs
        if p.argv and Path(p.argv[0]).name in ("bash", "sh") and "propulate evolve" in p.line
    ]


def writers(procs: list[Proc]) -> list[Proc]:
    """The tuning database's writers (``tuningdb update``)."""
    return [p for p in procs if is_python_of(p, "tuningdb", "update")]


def signal_all(pids: list[int], sig: int) -> list[int]:
    """Send ``sig`` to each process; the ids that were still there."""
    hit = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
            hit.append(pid)
    return hit


def terminate(pids: list[int], mode: str, grace: float) -> None:
    """``kill``: SIGKILL now; ``term``: SIGTERM now, SIGKILL to those left after ``grace``
    seconds, as Slurm ends a job at its time limit or on ``scancel``."""
    if mode == "kill":
        signal_all(pids, signal.SIGKILL)
        return
    signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    signal_all([p for p in pids if _alive(p)], signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path("/proc", str(pid), "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_for(
    find: Callable[[], list[Proc]], until: Callable[[], bool], poll: float = 0.02
) -> list[Proc]:
    """Poll ``find`` until it returns processes (returned) or ``until()`` is true (``[]``)."""
    while True:
        found = find()
        if found:
            return found
        if until():
            return []
        time.sleep(poll)


def wait_until_gone(trial: str, timeout: float = 180.0) -> list[Proc]:
    """Wait until none of the trial's processes is left; those left at the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = trial_processes(trial)
        if not left:
            return []
        time.sleep(0.1)
    return trial_processes(trial)


# ----------------------------------------------------------------------------- the disk
def mount_tmpfs(where: Path, size_mb: int) -> str | None:
    """Mount a tmpfs of ``size_mb`` MB at ``where``; ``None``, or why it cannot be mounted
    (mounting needs root, or CAP_SYS_ADMIN in a container)."""
    where.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return f"cannot mount a tmpfs at {where}: {(proc.stderr or proc.stdout).strip()}"
    return None


def unmount(where: Path) -> None:
    """Unmount a tmpfs mounted by :func:`mount_tmpfs` (lazily, if something still holds it)."""
    proc = subprocess.run(["umount", str(where)], capture_output=True, check=False)
    if proc.returncode != 0:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def fill_disk(filler: Path) -> int:
    """Write ``filler`` until its file system is full; the bytes written."""
    block = b"\0" * (1 << 16)
    written = 0
    with open(filler, "wb", buffering=0) as fh:
        while True:
            try:
                written += fh.write(block)
            except OSError as err:
                if err.errno != errno.ENOSPC:
                    raise
                break
    # the last partial block: down to the byte, so that even a one-line append fails
    with open(filler, "ab", buffering=0) as fh:
        for size in (4096, 512, 64, 1):
            while True:
                try:
                    written += fh.write(b"\0" * size)
                except OSError:
                    break
    return written
