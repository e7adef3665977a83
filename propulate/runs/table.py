"""A run's records as a pandas table: :func:`read_history` and :func:`best_so_far`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from propulate.runs.columns import META_COLUMNS, PARAM_PREFIX, parameter_column
from propulate.runs.log import iter_records

#: Prefix of the table column of an objective named like a log or parameter column.
OBJECTIVE_PREFIX = "objective."
OBJECTIVE = object()  # key of an objective's value in a row before its column is known

if TYPE_CHECKING:  # pandas is imported by the readers only: workers start without it
    import pandas as pd


def read_history(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Read a run's evaluation logs into a DataFrame, one row per evaluation.

    Parameters
    ----------
    paths : path or iterable of paths
        Run directories (holding ``evals/``) or single ``.jsonl`` files.

    Returns
    -------
    pandas.DataFrame
        The log's own columns (:data:`~propulate.runs.columns.META_COLUMNS`) present in the
        records, then one column per parameter, then any other field of the records; rows
        ordered by start time. ``loss`` is NaN for evaluations without a loss (failed,
        interrupted, pruned). A parameter's column is named as the parameter, except that a
        parameter named like a log column (``loss``, ``status``, ``rank``, ...) gets the column
        ``"param.<name>"`` (:func:`~propulate.runs.columns.parameter_column`);
        ``df.attrs["parameters"]`` lists the parameter columns in the space's order. A run with
        declared objectives (:mod:`propulate.runs.declared_objectives`) has one column per objective,
        after the parameters, named as the objective (``"objective.<name>"`` when a log column
        or a parameter column has that name; NaN where the evaluation gave no value);
        ``df.attrs["objectives"]`` lists them (empty without a declaration). Other record
        fields named like a parameter column are left out. An empty frame (with the log's
        columns) when there are no records.
    """
    import pandas as pd

    rows = []
    columns: dict[str, str] = {}  # parameter name -> column, in first-seen (space) order
    extras: dict[str, None] = {}
    objectives: dict[str, None] = {}
    for rec in iter_records(paths):
        row = {}
        for key, value in rec.items():
            if key == "params":
                continue
            if key == "objectives" and isinstance(value, dict):
                for name, number in value.items():
                    row[(OBJECTIVE, name)] = number
                    objectives.setdefault(name)
                continue
            row[key] = value
            if key not in META_COLUMNS:
                extras.setdefault(key)
        for name, value in rec["params"].items():
            col = columns.get(name) or columns.setdefault(name, parameter_column(name))
            row[col] = value
        rows.append(row)
    if not rows:
        empty = pd.DataFrame(columns=list(META_COLUMNS))
        empty.attrs["parameters"] = []
        empty.attrs["objectives"] = []
        return empty
    params = list(columns.values())
    taken = set(META_COLUMNS) | set(params)
    names = {
        name: OBJECTIVE_PREFIX + name if name in taken or name.startswith(PARAM_PREFIX) else name
        for name in objectives
    }
    if names:
        for row in rows:
            for name, column in names.items():
                if (OBJECTIVE, name) in row:
                    row[column] = row.pop((OBJECTIVE, name))
    df = pd.DataFrame.from_records(rows)
    meta = [c for c in META_COLUMNS if c in df.columns]
    objective_columns = list(names.values())
    rest = [c for c in extras if c not in taken and c not in set(objective_columns)]
    df = df[meta + params + objective_columns + rest].copy()
    for column in objective_columns:
        df[column] = pd.to_numeric(df[column], errors="coerce")
    df["loss"] = pd.to_numeric(df["loss"], errors="coerce")
    df = df.sort_values(["start", "rank", "seq"], kind="stable").reset_index(drop=True)
    df.attrs["parameters"] = params
    df.attrs["objectives"] = objective_columns
    return df


def best_so_far(df: pd.DataFrame) -> pd.DataFrame:
    """Add ``evaluation`` (1-based count), ``elapsed`` (seconds since the first start) and
    ``best_loss`` (running minimum over successful evaluations) to a frame from
    :func:`read_history`, ordered by finish time."""
    out = df.copy()
    out["finish"] = out["start"] + out["seconds"]
    out = out.sort_values("finish", kind="stable").reset_index(drop=True)
    out["evaluation"] = range(1, len(out) + 1)
    out["elapsed"] = out["finish"] - (out["start"].min() if len(out) else 0.0)
    best = out["loss"].fillna(float("inf")).cummin()
    out["best_loss"] = best.where(best < float("inf"))
    return out
