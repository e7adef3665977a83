"""Helpers of :mod:`propulate.user_objective.command`: checking a program before any run, and the
details of runs a command objective's records keep."""

from __future__ import annotations

import os
import shlex
import shutil
from typing import Any

from propulate.user_objective.process import Run


def check_program(program: str, workdir: str, path: str | None) -> None:
    """``ValueError`` unless ``program`` exists and is executable (a path, relative to
    ``workdir``, or a name on ``path``)."""
    if "/" in program:
        full = program if os.path.isabs(program) else os.path.join(workdir, program)
        if not os.path.isfile(full):
            raise ValueError(
                f"objective command: program {program!r} not found (looked for {full!r})"
            )
        if not os.access(full, os.X_OK):
            raise ValueError(f"objective command: program {program!r} is not executable")
    elif shutil.which(program, path=path) is None:
        raise ValueError(f"objective command: program {program!r} not found on PATH")


def runs_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The record details of a command's runs: each run, their losses and their times."""
    return {
        "runs": runs,
        "losses": [r.get("loss") for r in runs],
        "times": [r.get("seconds") for r in runs],
    }


class MeasuredValues(dict):
    """One value per objective (the median over a command's repeats), with the details of
    its runs (:func:`propulate.runs.outcome.outcome_of` copies them into the record)."""

    details: dict[str, Any]


def measured_values(runs: list[dict[str, Any]]) -> MeasuredValues:
    """The per-objective medians of runs whose ``loss`` is ``{name: value}``."""
    from statistics import median

    names = list(runs[-1]["loss"])
    out = MeasuredValues({n: median(r["loss"][n] for r in runs) for n in names})
    out.details = runs_summary(runs)
    return out


def failure_details(argv: list[str], run: Run | None, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What a failed evaluation's record keeps of a program's run: the command line, the
    runs' summary, the exit code, whether it timed out, the last lines of stderr and stdout."""
    details: dict[str, Any] = {"command": shlex.join(argv), **runs_summary(runs)}
    details["exit_code"] = run.exit_code if run else None
    details["timed_out"] = run.timed_out if run else False
    details["stderr"] = run.stderr_tail if run else ""
    if run is not None:
        details["stdout"] = "\n".join(run.stdout.splitlines()[-5:])
    return details
