"""A task's tuning-database row as the paired re-measurement has it.

:func:`propulate.tuningdb.ingest.best_per_task` picks each task's configuration by its tuning
loss. When the campaign re-measured the default and the tuning runs' best configurations in
paired rounds (:mod:`propulate.remeasure.paired`), :func:`apply_paired` holds that pick against the
rounds' verdict (:func:`propulate.remeasure.verdict.verdict`): a confirmed pick keeps its row and
gains the evidence, an overruled one is replaced by the paired winner -- the default, or
another run's configuration -- with its paired measurements as repeats, reason ``paired`` and
the evidence. :meth:`propulate.tuningdb.store.TuningDB.offer` then stores it even though its
loss (a median of re-measurements) is above the pick's tuning loss (a minimum).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from propulate.methods import stage_of
from propulate.remeasure.paired import DEFAULT
from propulate.remeasure.verdict import verdict
from propulate.runs.summary import read_summary
from propulate.space import SearchSpace
from propulate.tuningdb.rows import TuningRow


def read_comparisons(paths: Iterable[str | Path]) -> dict[str, dict[str, Any]]:
    """Paired comparison files by their task id.

    Raises
    ------
    ValueError
        When a file is not a paired comparison or names no task.
    """
    out: dict[str, dict[str, Any]] = {}
    for path in map(Path, paths):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "speedups" not in data or "contenders" not in data:
            raise ValueError(f"{path}: not a paired comparison (no 'speedups' / 'contenders')")
        if not data.get("task"):
            raise ValueError(f"{path}: the paired comparison names no task")
        out[str(data["task"])] = {**data, "file": str(path)}
    return out


def _canonical(space: SearchSpace, params: dict[str, Any]) -> dict[str, Any]:
    try:
        return space.canonical(params)
    except (KeyError, TypeError, ValueError):
        return dict(params)


def apply_paired(row: TuningRow, data: dict[str, Any], space: SearchSpace) -> TuningRow:
    """``row`` held against its task's paired comparison ``data``.

    Returns
    -------
    TuningRow
        ``row`` itself when the comparison did not measure its configuration (or measured no
        pair); ``row`` with ``evidence`` when the rounds confirm it; else a new row of the
        paired winner (reason ``paired``, ``loss`` the median of its paired measurements,
        ``repeats`` those measurements, ``evidence`` the verdict).
    """
    canonical = {
        **data,
        "default": _canonical(space, data["default"]),
        "configs": [_canonical(space, c) for c in data["configs"]],
        "contenders": [{**c, "params": _canonical(space, c["params"])} for c in data["contenders"]],
    }
    evidence = verdict(canonical, row.params)
    if evidence is None:
        return row
    if not evidence["overruled"]:
        row.evidence = evidence
        return row
    losses = evidence["losses"]
    run = evidence["run"]
    summary = read_summary(run) if run and Path(run).is_dir() else None
    method = evidence["method"]
    return TuningRow(
        task_id=row.task_id,
        task=dict(row.task),
        params=dict(evidence["params"]),
        loss=evidence["loss"],
        method=DEFAULT if method == DEFAULT else stage_of(method) or method,
        algorithm=method,
        evaluations=int(summary.evaluations) if summary is not None else 0,
        repeats=list(losses),
        loss_std=statistics.stdev(losses) if len(losses) > 1 else None,
        source=str(data.get("file") or run or ""),
        reason="paired",
        fingerprint=dict(row.fingerprint),
        pareto=row.pareto,
        evidence=evidence,
    )
