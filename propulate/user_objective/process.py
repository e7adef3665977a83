"""Running one program: its own process group, a clean environment, a timeout that kills all.

The program runs in a new session (so in a process group of its own) with stdout and stderr in
temporary files, never pipes: a background grandchild that keeps a pipe open cannot block the
tuner, and a chatty program cannot fill a pipe and stall. When the run ends -- normally, by
its timeout, or because the tuner is interrupted -- every process left in the group is sent
SIGTERM, then SIGKILL after a short grace. (A process that starts a session of its own escapes
the group; MPI launchers and shells do not do that.)
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO

#: Variables an MPI launcher sets for its ranks. Inherited by a program that itself runs
#: ``mpiexec`` they make it join the tuner's MPI job instead of starting its own, so they are
#: dropped from the program's environment. (``OMPI_MCA_*`` user settings go too: give them in
#: the command's ``env``.)
LAUNCHER_PREFIXES = (
    "PMI_",
    "PMIX_",
    "HYDRA_",
    "HYDI_",
    "MPIR_",
    "OMPI_",
    "PRTE_",
    "PALS_",
    "MPI_LOCALNRANKS",
    "MPI_LOCALRANKID",
)

#: Slurm variables that describe the current job *step* and task (set by ``srun`` for the
#: tuner's ranks): a nested ``srun`` would read them as its own options. The job's variables
#: (``SLURM_JOB_ID``, ``SLURM_CONF``, ...) stay, so ``srun`` starts a new step of the same job.
SLURM_STEP_VARIABLES = frozenset(
    {
        "SLURM_STEP_ID",
        "SLURM_STEPID",
        "SLURM_STEP_NODELIST",
        "SLURM_STEP_NUM_NODES",
        "SLURM_STEP_NUM_TASKS",
        "SLURM_STEP_TASKS_PER_NODE",
        "SLURM_STEP_LAUNCHER_PORT",
        "SLURM_STEP_RESV_PORTS",
        "SLURM_PROCID",
        "SLURM_LOCALID",
        "SLURM_NODEID",
        "SLURM_TASK_PID",
        "SLURM_GTIDS",
        "SLURM_LAUNCH_NODE_IPADDR",
        "SLURM_SRUN_COMM_HOST",
        "SLURM_SRUN_COMM_PORT",
        "SLURM_CPU_BIND",
        "SLURM_CPU_BIND_LIST",
        "SLURM_CPU_BIND_TYPE",
        "SLURM_CPU_BIND_VERBOSE",
        "SLURM_DISTRIBUTION",
        "SLURM_NTASKS",
        "SLURM_NPROCS",
        "SLURM_NNODES",
        "SLURM_UMASK",
        "SLURM_PRIO_PROCESS",
        "SLURM_MPI_TYPE",
        "SLURM_STEP_GPUS",
        "SLURM_TASKS_PER_NODE",
    }
)

#: Lines of stderr kept in a failed run's record.
STDERR_LINES = 20


def clean_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) without launcher and Slurm-step variables.

    See :data:`LAUNCHER_PREFIXES` and :data:`SLURM_STEP_VARIABLES`.
    """
    env = os.environ if base is None else base
    return {
        k: v
        for k, v in env.items()
        if not k.startswith(LAUNCHER_PREFIXES) and k not in SLURM_STEP_VARIABLES
    }


@dataclass
class Run:
    """One finished (or killed) run of the program.

    Attributes
    ----------
    exit_code : int or None
        The exit status; ``-N`` when killed by signal N; ``None`` when it could not start.
    stdout : str
        Everything the program wrote to stdout.
    stderr_tail : str
        The last :data:`STDERR_LINES` lines of stderr.
    seconds : float
        Wall-clock time of the run, start to exit.
    timed_out : bool
        Whether it was killed for exceeding its timeout.
    stopped : bool
        Whether it was killed because ``on_line`` asked to stop it.
    """

    exit_code: int | None
    stdout: str
    stderr_tail: str
    seconds: float
    timed_out: bool = False
    stopped: bool = False


class _Lines:
    """The complete lines a running program appended to its stdout file since the last call."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.fd = fh.fileno()
        self.offset = 0
        self.partial = b""

    def new(self, final: bool) -> list[str]:
        chunks = []
        while chunk := os.pread(self.fd, 1 << 16, self.offset):
            self.offset += len(chunk)
            chunks.append(chunk)
        data = self.partial + b"".join(chunks)
        lines = data.split(b"\n")
        self.partial = b"" if final else lines.pop()
        return [line.decode("utf-8", errors="replace") for line in lines if line or not final]


def _follow(
    proc: subprocess.Popen[bytes],
    out: IO[bytes],
    timeout: float | None,
    on_line: Callable[[str], bool],
) -> tuple[bool, bool]:
    """Wait for ``proc`` while handing each new stdout line to ``on_line`` (polled with
    backoff, 10 to 250 ms); returns ``(timed_out, stopped)``: ``on_line`` returned True."""
    lines = _Lines(out)
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = 0.01
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        exited = _wait(proc, delay if left is None else max(min(delay, left), 0.0))
        for line in lines.new(final=exited):
            if on_line(line):
                return False, True
        if exited:
            return False, False
        if deadline is not None and time.monotonic() >= deadline:
            return True, False
        delay = min(2 * delay, 0.25)


def _tail(fh: IO[bytes], lines: int = STDERR_LINES, max_bytes: int = 64 * 1024) -> str:
    size = fh.seek(0, os.SEEK_END)
    fh.seek(max(0, size - max_bytes))
    text = fh.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed its user: it exists
        return True
    return True


def kill_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to ``proc``'s process group, SIGKILL to whatever is left after ``grace`` s.

    ``proc`` leads the group (it was started in a new session); it is reaped here.
    """
    pgid = proc.pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    delay = 0.001
    while time.monotonic() < deadline:
        proc.poll()  # reap the leader: a zombie still counts as a member of its group
        if proc.returncode is not None and not _group_alive(pgid):
            return
        time.sleep(delay)
        delay = min(2 * delay, 0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _wait(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait for ``proc`` at most ``timeout`` seconds; whether it exited (and was reaped).

    Waits on a pidfd where Linux has one, so the end of a run is seen at once rather than at the
    next poll of :meth:`subprocess.Popen.wait`'s sleep loop.
    """
    if timeout is None:
        proc.wait()
        return True
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    if ready:
        proc.wait()
        return True
    return proc.poll() is not None


class _Terminated(BaseException):
    """SIGTERM arrived while this process had no handler of its own for it."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated


def run_once(
    argv: list[str],
    env: Mapping[str, str],
    cwd: str,
    timeout: float | None,
    grace: float,
    on_line: Callable[[str], bool] | None = None,
) -> Run:
    """Run ``argv`` once and wait for it, at most ``timeout`` seconds.

    Parameters
    ----------
    argv : list of str
        Program and arguments (no shell).
    env : mapping
        The program's whole environment.
    cwd : str
        Its working directory.
    timeout : float or None
        Seconds before the process group is killed (``None``: wait for ever).
    grace : float
        Seconds between SIGTERM and SIGKILL.
    on_line : callable, optional
        Called with each line of stdout while the program runs (read from its output file,
        polled); when it returns True the program's process group is ended as for a timeout
        and the run is marked ``stopped``.

    Raises
    ------
    OSError
        When the program cannot be started (not found, not executable, bad ``cwd``).
    BaseException
        Whatever interrupts the wait (``KeyboardInterrupt``, an exception raised by a signal
        handler), after the process group was killed. If SIGTERM arrives while this process
        has no handler for it, the group is killed and the process then dies of SIGTERM as it
        would have without the program running.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
        timed_out = stopped = False
        own_handler = (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        )
        if own_handler:
            signal.signal(signal.SIGTERM, _raise_terminated)
        try:
            if on_line is None:
                timed_out = not _wait(proc, timeout)
            else:
                timed_out, stopped = _follow(proc, out, timeout, on_line)
            seconds = time.perf_counter() - t0
            kill_group(proc, grace)  # a timeout's victims, or leftovers of a normal exit
            proc.wait()
        except BaseException as exc:
            kill_group(proc, grace)
            proc.wait()
            if own_handler and isinstance(exc, _Terminated):
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTERM)
            raise
        finally:
            if own_handler and signal.getsignal(signal.SIGTERM) is _raise_terminated:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
        out.seek(0)
        stdout = out.read().decode("utf-8", errors="replace")
        return Run(proc.returncode, stdout, _tail(err), seconds, timed_out, stopped)
