"""Reading a campaign's run directories: which runs there are, their summaries and histories.

A run directory holds ``evals/`` (the evaluation logs, :mod:`propulate.runs.log`) and, once a
session has finished, ``summary.json`` (:mod:`propulate.runs.summary`). A TLA1 run also holds
``prediction.json``, a TLA2 run its extended ``model.json``. Task, method and run id come from
the summary, or from the records while a run has no summary yet; parameter names come from the
summary's ``parameters`` and from the records' ``params``, never from column names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from propulate.methods import is_search
from propulate.runs.files import read_json
from propulate.runs.log import EVAL_DIR, Record, clean_mapping, iter_records
from propulate.runs.summary import (
    SUMMARY_FILE,
    RunSummary,
    read_summary,
    record_loss,
    summarize,
)
from propulate.runs.table import read_history

#: TLA1's result: its ``prediction.json`` and the measured loss of the predicted configuration.
Tla1 = tuple[dict[str, Any], float | None]


def transfer_points(
    tla1: Tla1 | None, tla2: Run | None
) -> list[tuple[str, Mapping[str, Any], float]]:
    """The measured configurations of a new task: ``(method, params, loss)`` for TLA1's
    prediction (when it was measured) and every TLA2 evaluation."""
    spec, loss = tla1 if tla1 else ({}, None)
    points: list[tuple[str, Mapping[str, Any], float]] = []
    if spec.get("params") and loss is not None:
        points.append(("TLA1", spec["params"], float(loss)))
    if tla2 is not None:
        points += [("TLA2", params, value) for params, value in tla2.evaluated()]
    return points


def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` is a run directory (holds ``evals/`` or ``summary.json``)."""
    p = Path(path)
    return (p / EVAL_DIR).is_dir() or (p / SUMMARY_FILE).is_file()


def expand_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories of ``paths``: each path itself if it is one, else its run subdirectories.

    The MLA stage writes one run directory per task under one output folder; passing the folder
    stands for all of them.

    Parameters
    ----------
    paths : iterable of path
        Run directories or folders of run directories.

    Returns
    -------
    list of Path
        The run directories, in the given order (subdirectories sorted by name).
    """
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if is_run_dir(p):
            out.append(p)
        elif p.is_dir():
            out.extend(sorted(c for c in p.iterdir() if c.is_dir() and is_run_dir(c)))
    return out


def summary_from_records(directory: str | Path, records: list[Record]) -> RunSummary:
    """The summary of a run that has written none yet (or never does, e.g. a TLA1 measurement):
    :func:`propulate.runs.summary.summarize` over its records, the task from its ``task.json``
    when the records name none."""
    summary = summarize(records)
    if summary.task is None:
        task = (read_json(Path(directory) / "task.json") or {}).get("id")
        summary.task = None if task is None else str(task)
    return summary


@dataclass
class Run:
    """One run directory of a campaign.

    Attributes
    ----------
    directory : Path
        The run directory.
    summary : RunSummary
        Its ``summary.json``, or one derived from its records when it has none.
    records : list of Record
        Its evaluation records.
    has_summary : bool
        Whether ``summary.json`` exists (and is readable).
    prediction : dict or None
        TLA1's ``prediction.json`` (``task``, ``params``, ``std``).
    """

    directory: Path
    summary: RunSummary
    records: list[Record] = field(repr=False)
    has_summary: bool
    prediction: dict[str, Any] | None = None

    @property
    def task(self) -> str:
        """The task id, as the tables show it.

        A run of an objective without tasks has none; it is labelled by the folder holding its
        directory (the workflow's ``results/runs/<label>/``; for a benchmark suite the
        function), the only name such a run has.
        """
        return self.summary.task if self.summary.task is not None else self.directory.parent.name

    @property
    def method(self) -> str:
        """The optimizer (``propulate``, ``random``, ``optuna``, ``mla``, ``tla1``, ``tla2``)."""
        return self.summary.method

    @property
    def label(self) -> str:
        """Method and run id, e.g. ``"propulate seed1"`` (a figure legend)."""
        return f"{self.method} {self.summary.run}"

    @cached_property
    def history(self) -> pd.DataFrame:
        """The run's evaluations (:func:`propulate.compat.history.read_history`)."""
        return read_history(self.directory)

    def repeats_of(self, params: dict[str, Any] | None) -> list[float]:
        """Every measured loss of the configuration ``params`` (a command objective's repeats
        and re-measurements, over all its ok records); empty when none were kept."""
        if not params:
            return []
        out: list[float] = []
        for rec in self.records:
            if record_loss(rec) is None or rec.get("params") != params:
                continue
            losses = (rec.get("details") or {}).get("losses")
            if isinstance(losses, list):
                out += [float(v) for v in losses if isinstance(v, int | float)]
        return out

    def evaluated(self) -> list[tuple[dict[str, Any], float]]:
        """The successful evaluations as ``(params, loss)``, in log order."""
        out = []
        for rec in self.records:
            loss = record_loss(rec)
            if loss is not None:
                out.append((clean_mapping(rec["params"]), loss))
        return out


def read_run(directory: str | Path) -> Run:
    """Read one run directory (summary, records, TLA1 prediction).

    Parameters
    ----------
    directory : path
        A run directory.

    Returns
    -------
    Run
        The run; its summary is derived from the records when it has no ``summary.json``.
    """
    p = Path(directory)
    records = list(iter_records(p))
    summary = read_summary(p)  # None also for a summary.json missing required fields
    has_summary = summary is not None
    if summary is None:
        summary = summary_from_records(p, records)
    else:
        summary.run = str(summary.run)
        if summary.task is not None:
            summary.task = str(summary.task)
    return Run(p, summary, records, has_summary, read_json(p / "prediction.json"))


def read_runs(paths: Iterable[str | Path]) -> list[Run]:
    """Every run directory of ``paths`` (see :func:`expand_runs`), read."""
    return [read_run(p) for p in expand_runs(paths)]


@dataclass
class Campaign:
    """A campaign's runs by role.

    Attributes
    ----------
    runs : list of Run
        Every run directory.
    searches : list of Run
        The runs that tune a task (evolutionary, baselines, MLA) and have evaluations; runs that
        only measure given configurations (methods ``default`` and ``grid``) are not.
    tla1 : dict of str to Tla1
        New task id to TLA1's prediction and measured loss.
    tla2 : dict of str to Run
        New task id to its TLA2 run.
    """

    runs: list[Run]
    searches: list[Run]
    tla1: dict[str, Tla1]
    tla2: dict[str, Run]

    def histories(self) -> dict[str, dict[str, pd.DataFrame]]:
        """Task to run label (``"<method> <run>"``) to history, for the convergence figures."""
        out: dict[str, dict[str, pd.DataFrame]] = {}
        for run in self.searches:
            out.setdefault(run.task, {})[run.label] = run.history
        return out

    def new_tasks(self) -> list[str]:
        """The new tasks of the transfer stage, sorted."""
        return sorted(set(self.tla1) | set(self.tla2))

    def tla2_model(self, task: str) -> Path | None:
        """The extended model TLA2 wrote for ``task``, if any."""
        run = self.tla2.get(task)
        path = run.directory / "model.json" if run is not None else None
        return path if path is not None and path.is_file() else None


def collect(paths: Iterable[str | Path]) -> Campaign:
    """Read and sort a campaign's runs by role.

    Parameters
    ----------
    paths : iterable of path
        Run directories (or folders of them): evolutionary runs, MLA, TLA1, TLA2.

    Returns
    -------
    Campaign
        The runs; a TLA1 run is recognised by its ``prediction.json`` or its method.
    """
    runs = read_runs(paths)
    searches: list[Run] = []
    tla1: dict[str, Tla1] = {}
    tla2: dict[str, Run] = {}
    for run in runs:
        if run.prediction is not None or run.method == "tla1":
            spec = run.prediction or {}
            tla1[str(spec.get("task", run.task))] = (spec, run.summary.best_loss)
        elif run.method == "tla2":
            tla2[run.task] = run
        elif run.records and is_search(run.method):
            searches.append(run)  # measured references (default, grid) are no searches
    return Campaign(runs, searches, tla1, tla2)
