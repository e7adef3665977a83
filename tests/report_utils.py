"""Synthetic run directories for tests of aggregation and the report."""

from __future__ import annotations

from pathlib import Path

from propulate.compat.history import EvaluationLog


def make_run(directory: Path, task: str, method: str, run: str, losses: list[float | None]) -> Path:
    """A run directory with one evaluation per loss (None: a failure), no summary.json."""
    meta = {"task": task, "run": run, "method": method}
    with EvaluationLog(directory, rank=0, meta=meta) as log:
        for i, loss in enumerate(losses):
            log.append({"x": i / 10}, loss, island=0, generation=i, start=100.0 + i, seconds=0.5)
    return directory
