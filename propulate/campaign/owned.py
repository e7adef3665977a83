"""Run a stage's command as the one owner of its run directory (the workflow's MLA and
transfer jobs).

An MLA or transfer job writes a run directory that its command resumes from the records
(:mod:`propulate.models.loop`). Its Snakemake output is a flag inside that directory
(:data:`DONE`, touched by Snakemake once the job succeeded), not the directory itself:
Snakemake deleted a failed or incomplete job's directory output before the re-run, so every
evaluation the killed attempt had made was spent again, and when Snakemake itself had been
killed its job went on, orphaned, writing into the folder the re-run had just recreated.

:func:`run_owned` therefore readies the directory as ``prepare-run`` does for evolve runs
(:func:`propulate.campaign.resume.prepare_run`: wait while an earlier attempt's job still owns
it, resume with the same settings, clear it when they changed), then holds the directory's lease
(:mod:`propulate.runs.lease`) while the command runs, so that a re-run's job waits for an
orphaned one instead of running beside it. The command dies with this process (Linux: the
parent-death signal), so the lease never outlives its writer unseen.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from propulate.campaign.resume import prepare_run
from propulate.runs.lease import Lease

#: The flag file Snakemake touches inside the run directory of a finished MLA or transfer job.
DONE = "job.done"

#: Signals passed on to the command (a scheduler's or a user's stop).
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Ask Linux to SIGKILL this (child) process when its parent dies."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the command then outlives a SIGKILLed owner, as without this


def run_owned(
    directory: str | Path, settings: str, files: Sequence[str | Path], command: Sequence[str]
) -> int:
    """Run ``command`` as the owner of the run directory ``directory``; its exit status.

    Parameters
    ----------
    directory : path
        The run directory the command writes.
    settings : str
        The job's settings as text; with the content of ``files`` they decide whether an
        earlier attempt is resumed or cleared.
    files : sequence of paths
        Input files whose content belongs to the settings.
    command : sequence of str
        The program and its arguments.

    Returns
    -------
    int
        The command's exit status (``128 + N`` when signal N ended it).
    """
    folder = Path(directory)
    state = prepare_run(folder, settings, files)
    print(f"{folder}: {state}", flush=True)
    lease = Lease(folder)
    lease.acquire(
        on_wait=lambda owner: print(
            f"{folder}: waiting for its owner {owner.describe()}", flush=True
        )
    )
    try:
        child = subprocess.Popen(list(command), preexec_fn=_die_with_parent)
        previous = {
            sig: signal.signal(sig, lambda number, _frame: child.send_signal(number))
            for sig in FORWARDED
        }
        try:
            code = child.wait()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        lease.release()
    return 128 - code if code < 0 else code
