"""The report's tables: the aggregated summary (``summary.csv``) and the transfer results."""

from __future__ import annotations

import json
import math
import re
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
            "TLA1 std": json.dumps(_rounded(spec.get("std")), sort_keys=True) if spec else "",
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


#: Significant digits of the report's numbers. Timings on a shared machine scatter by several
#: percent between repeated measurements (the paired rounds of the default campaign range
#: over tens of percent), so a fourth digit would be noise.
DIGITS = 3


def _empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and not value.strip()


def tidy(df: pd.DataFrame) -> pd.DataFrame:
    """The table as shown: columns without any value left out, missing values as NaN."""
    keep = [c for c in df.columns if not all(_empty(v) for v in df[c])]
    out = df[keep].copy()
    for column in out.columns:
        if out[column].dtype == object and any(isinstance(v, float) for v in out[column]):
            out[column] = [math.nan if v is None else v for v in out[column]]
    return out


def _rounded(values: Any, digits: int = 2) -> Any:
    """A mapping of standard deviations to ``digits`` significant digits (an uncertainty has
    no more)."""
    if not isinstance(values, Mapping):
        return values
    return {
        k: float(f"{v:.{digits}g}") if isinstance(v, float) and math.isfinite(v) else v
        for k, v in values.items()
    }


#: Significant digits of a float parameter value inside a configuration's JSON in a table (a
#: configuration is an input, not a measurement; ``summary.csv`` keeps every digit).
PARAM_DIGITS = 4


def short_json(value: Any) -> Any:
    """A JSON object text with its floats to :data:`PARAM_DIGITS` significant digits (other
    values unchanged)."""
    if not isinstance(value, str) or not value.startswith("{"):
        return value
    try:
        data = json.loads(value)
    except ValueError:
        return value
    if not isinstance(data, dict):
        return value
    return json.dumps(
        {
            k: float(f"{v:.{PARAM_DIGITS}g}") if isinstance(v, float) and math.isfinite(v) else v
            for k, v in data.items()
        },
        sort_keys=True,
    )


def html_table(df: pd.DataFrame) -> str:
    """A table as inline HTML: cells escaped, columns without values left out, floats to
    :data:`DIGITS` significant digits (parameter values in configurations to
    :data:`PARAM_DIGITS`), a missing value as ``-`` in every table."""
    shown = tidy(df)
    for column in shown.columns:
        if not pd.api.types.is_numeric_dtype(shown[column]):
            shown[column] = [short_json(v) for v in shown[column]]
    return shown.to_html(
        index=False,
        escape=True,
        float_format=lambda v: f"{v:.{DIGITS}g}",
        na_rep="-",
        border=0,
    )


_SPREAD = re.compile(r"^n=\d+: (-?[0-9.]+(?:e[-+]?\d+)?)-(-?[0-9.]+(?:e[-+]?\d+)?)$")


def _spread_of(text: Any) -> float | None:
    """``max - min`` of a ``best_repeats`` text (``"n=3: 0.021-0.024"``)."""
    m = _SPREAD.match(str(text or ""))
    return float(m.group(2)) - float(m.group(1)) if m else None


def spread_notes(table: pd.DataFrame) -> list[str]:
    """Per row of the aggregated summary: the other methods on its task whose best loss differs
    from this one by less than the spread of the repeated measurements of either (then the
    table cannot tell the two apart), as a note; empty when none does."""
    notes = []
    rows = list(table.itertuples())
    for r in rows:
        close = []
        for other in rows:
            if other.task != r.task or other.method == r.method:
                continue
            spreads = [s for s in (_spread_of(r.best_repeats), _spread_of(other.best_repeats)) if s]
            diff = abs(float(r.best_loss) - float(other.best_loss))
            if spreads and math.isfinite(diff) and diff < max(spreads):
                close.append(str(other.method))
        notes.append(
            "differs from " + ", ".join(close) + " by less than the spread of repeated measurements"
            if close
            else ""
        )
    return notes


def summary_html(table: pd.DataFrame) -> str:
    """The aggregated summary as HTML, with :func:`spread_notes` beside the losses."""
    shown = table.copy()
    if "best_repeats" in shown.columns and not shown.empty:
        shown.insert(list(shown.columns).index("best_repeats") + 1, "note", spread_notes(shown))
    return html_table(shown)
