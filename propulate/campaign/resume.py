"""Resume an evolve run after a failed or killed job, start afresh when its settings changed.

The evolve rule's output is the run's ``summary.json``, not its directory: when a job fails or is
killed, Snakemake deletes only that file and the evaluation logs stay, so the next attempt resumes
(``evolve`` continues a run directory it finds). Before each attempt :func:`prepare_run` compares
the job's settings (its command-line options and the content of its space and task files) with
those recorded in the directory by the previous attempt: the same settings resume, different ones
(the config changed) clear the directory, as a fresh run must not continue another one's history.
A directory that still has a live owner (an evolve job of an earlier, killed workflow run) is
left alone until that owner ends (:mod:`propulate.runs.lease`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from propulate.runs.lease import wait_until_free

#: The file in a run directory that records the settings of the job that writes it.
JOB_FILE = "campaign-job.json"


def fingerprint(settings: str, files: Sequence[str | Path]) -> dict[str, object]:
    """What makes two attempts the same run: the settings text and the files' SHA-256 digests."""
    digests = [hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in files]
    return {"settings": settings, "files": digests}


def prepare_run(directory: str | Path, settings: str, files: Sequence[str | Path] = ()) -> str:
    """Make ``directory`` ready for an evolve attempt with ``settings``.

    Parameters
    ----------
    directory : str or Path
        The run directory.
    settings : str
        The job's settings as text (objective, method, seed, options).
    files : sequence of paths
        Input files whose content belongs to the settings (space file, task spec).

    Returns
    -------
    str
        ``"new"`` (nothing there), ``"resume"`` (an earlier attempt with the same settings) or
        ``"restart"`` (the directory held another run, now removed).
    """
    folder = Path(directory)
    wanted = fingerprint(settings, files)
    # A job of an earlier workflow run (e.g. orphaned by a killed Snakemake) may still own the
    # directory: wait for it to end before deciding what to keep.
    wait_until_free(
        folder,
        on_wait=lambda owner: print(
            f"{folder}: waiting for its owner {owner.describe()}", flush=True
        ),
    )
    job = folder / JOB_FILE
    state = "new"
    if folder.exists() and any(folder.iterdir()):
        try:
            recorded = json.loads(job.read_text())
        except (OSError, json.JSONDecodeError):
            recorded = None
        if recorded == wanted:
            return "resume"
        shutil.rmtree(folder)
        state = "restart"
    folder.mkdir(parents=True, exist_ok=True)
    job.write_text(json.dumps(wanted, indent=1) + "\n")
    return state


def stopped_early(directory: str | Path) -> str | None:
    """Why an evolve run's job must not count as done, or ``None``.

    ``evolve`` stops cleanly on SIGTERM or SIGINT, writes the summary of what it evaluated
    (``stop_reason`` ``signal``) and exits with status 0, as a user's Ctrl-C should end. In the
    workflow that run is not finished: a signal to one rank (a node's OOM killer, a Slurm job
    step cancelled) would otherwise leave the campaign with a run short of its budget. The
    evolve job then fails, Snakemake deletes the summary and the next run resumes.
    """
    from propulate.runs.summary import read_summary

    summary = read_summary(directory)
    if summary is None or summary.stop_reason != "signal":
        return None
    return (
        f"{directory}: stopped by a signal after {summary.evaluations} evaluations, before its "
        "budget or time limit; the next snakemake resumes it"
    )
