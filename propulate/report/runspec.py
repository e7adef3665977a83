"""What a campaign's runs were started with, as the report shows it: the objective, the search
space (each parameter's type, range, scale and condition), the budget, the methods and the
machines, read from each run's ``run.json`` (:mod:`propulate.runs.metadata`) and summary.

Runs written before ``run.json`` existed, or whose file cannot be read, contribute what their
summaries hold and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from propulate.report.collect import Run
from propulate.runs.metadata import RunMetadata, RunMismatch, read_run_metadata


def run_metadata(run: Run) -> RunMetadata | None:
    """The run's ``run.json``, or ``None`` when it has none or it cannot be read."""
    try:
        return read_run_metadata(run.directory)
    except RunMismatch:
        return None


def parameter_specs(runs: Sequence[Run]) -> dict[str, dict[str, Any]]:
    """Each parameter's specification (``type``, ``low``/``high``/``log`` or ``choices``,
    ``when``) as the runs' spaces declare it, in the order the parameters first appear."""
    specs: dict[str, dict[str, Any]] = {}
    for run in runs:
        meta = run_metadata(run)
        if meta is None:
            continue
        for name, spec in (meta.space.get("parameters") or {}).items():
            if isinstance(spec, dict):
                specs.setdefault(name, spec)
    return specs


def log_parameters(runs: Sequence[Run]) -> set[str]:
    """The parameters the runs' spaces search on a log scale (``log: true``)."""
    return {name for name, spec in parameter_specs(runs).items() if spec.get("log")}
