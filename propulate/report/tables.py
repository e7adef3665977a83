"""The report's tables: the aggregated summary (``summary.csv``) and the transfer results."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from propulate.report.collect import Run, Tla1, read_runs

#: Columns of the aggregated summary, in order.
SUMMARY_COLUMNS = (
    "task",
    "method",
    "best_loss",
    "best_params",
    "best_repeats",
    "evaluations",
    "failures",
    "wall_time",
    "runs",
)


def summary_table(runs: Iterable[Run]) -> pd.DataFrame:
    """One row per task and method: the best configuration over its runs (seeds), its loss,
    the evaluations spent and the wall time, both summed over the runs.

    Parameters
    ----------
    runs : iterable of Run
        The runs.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS`; ``best_params`` is a JSON object string holding every
        parameter of the best configuration, ``best_repeats`` the spread of its repeated
        measurements (``"n=3: 0.021-0.024"``; empty for an objective measured once),
        ``wall_time`` is in seconds. Sorted by task and method.
    """
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.task, run.method), []).append(run)
    rows = []
    for (task, method), members in groups.items():
        scored = [m for m in members if m.summary.best_loss is not None]
        best_run = min(scored, key=lambda m: float(m.summary.best_loss or 0.0)) if scored else None
        best = best_run.summary if best_run else None
        repeats = best_run.repeats_of(best.best_params) if best_run and best else []
        rows.append(
            {
                "task": task,
                "method": method,
                "best_loss": best.best_loss if best else float("nan"),
                "best_params": json.dumps(best.best_params, sort_keys=True) if best else "",
                "best_repeats": _spread(repeats),
                "evaluations": int(sum(m.summary.evaluations or 0 for m in members)),
                "failures": int(sum(m.summary.failures or 0 for m in members)),
                "wall_time": float(sum(m.summary.wall_time or 0.0 for m in members)),
                "runs": len(members),
            }
        )
    df = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    return df.sort_values(["task", "method"], kind="stable").reset_index(drop=True)


def _spread(values: Sequence[float]) -> str:
    """The spread of repeated measurements as text (empty for fewer than two)."""
    if len(values) < 2:
        return ""
    return f"n={len(values)}: {min(values):.4g}-{max(values):.4g}"


def aggregate(paths: Iterable[str | Path]) -> pd.DataFrame:
    """:func:`summary_table` of run directories (or folders of them, see
    :func:`~propulate.report.collect.expand_runs`)."""
    return summary_table(read_runs(paths))


def transfer_table(
    tasks: Sequence[str], tla1: Mapping[str, Tla1], tla2: Mapping[str, Run]
) -> pd.DataFrame:
    """Per new task: the TLA1 configuration (with the GPs' std), its measured loss, and
    TLA2's best configuration, its loss and the evaluations spent.

    Parameters
    ----------
    tasks : sequence of str
        The new tasks, in row order.
    tla1 : mapping of str to (prediction, measured loss)
        TLA1's results per task.
    tla2 : mapping of str to Run
        TLA2's run per task.
    """
    rows = []
    for task in tasks:
        spec, loss = tla1.get(task, ({}, None))
        row: dict[str, Any] = {
            "task": task,
            "TLA1 params": json.dumps(spec.get("params"), sort_keys=True) if spec else "",
            "TLA1 std": json.dumps(spec.get("std"), sort_keys=True) if spec else "",
            "TLA1 measured loss": loss if loss is not None else float("nan"),
        }
        run = tla2.get(task)
        evaluated = run.evaluated() if run is not None else []
        if run is not None and evaluated:
            params, best = min(evaluated, key=lambda e: e[1])
            row["TLA2 best params"] = json.dumps(params, sort_keys=True)
            row["TLA2 best loss"] = best
            row["TLA2 evaluations"] = len(run.records)
        rows.append(row)
    return pd.DataFrame(rows)


def html_table(df: pd.DataFrame) -> str:
    """A table as inline HTML (cells escaped, floats to 6 significant digits)."""
    return df.to_html(index=False, escape=True, float_format=lambda v: f"{v:.6g}", border=0)
