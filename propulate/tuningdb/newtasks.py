"""New tasks from a file that an application (or its CI) appends to.

A campaign config may name ``new_tasks_file:``. The file is CSV (a header row with the task
space's names, optionally an ``id`` column) or YAML (a list of mappings of task values, each
optionally with an ``id``, or a mapping ``id: {values}``). A scheduled run transfers to the
tasks it lists (TLA2) and leaves the campaign's other results untouched.

A task without an ``id`` is named after its values (``m1400_n400``), so appending rows never
renames the tasks already there; a task listed twice is kept once.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

#: Characters a derived task id may hold (others become ``-``).
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def task_id_of(values: Mapping[str, Any]) -> str:
    """A readable id made of a task's values, in the given order: ``{"m": 1400, "n": 400}``
    gives ``m1400_n400``."""
    parts = []
    for name, value in values.items():
        text = f"{value:g}" if isinstance(value, float) else str(value)
        parts.append(_UNSAFE.sub("-", f"{name}{text}"))
    return "_".join(parts)


def _rows(path: Path) -> list[dict[str, Any]]:
    """The file's rows as mappings (text values for CSV, YAML's types otherwise)."""
    text = path.read_text()
    if path.suffix.lower() == ".csv":
        lines = [
            line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
        ]
        return [dict(row) for row in csv.DictReader(lines, skipinitialspace=True)]
    data = yaml.safe_load(text)
    if data is None:
        return []
    if isinstance(data, Mapping) and "tasks" in data:
        data = data["tasks"]
    if isinstance(data, Mapping):
        return [
            {"id": k, **dict(v)} if isinstance(v, Mapping) else {"id": k, "?": v}
            for k, v in data.items()
        ]
    if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
        raise ValueError(f"{path}: expected a list of task mappings or a mapping id: task")
    return [dict(r) for r in data]


def read_new_tasks(path: str | Path, task_space: Any) -> dict[str, dict[str, Any]]:
    """The tasks of a new-tasks file: ``{id: values}`` in file order (a missing file: none).

    Parameters
    ----------
    path : path
        The CSV or YAML file.
    task_space : SearchSpace
        The campaign's task space: every row must name exactly its parameters, within bounds.

    Raises
    ------
    ValueError
        Naming the file and row of a task that cannot be used (one line).
    """
    from propulate.tuningdb.suggest import check_task

    path = Path(path)
    if not path.is_file():
        return {}
    out: dict[str, dict[str, Any]] = {}
    seen: dict[str, str] = {}
    for number, row in enumerate(_rows(path), start=1):
        given = row.pop("id", None)
        try:
            values = check_task(row, task_space, extrapolate=False)
        except ValueError as err:
            raise ValueError(f"{path}: task {number}: {err}") from None
        key = repr(sorted(values.items()))
        if key in seen:
            continue
        task_id = str(given).strip() if given not in (None, "") else task_id_of(values)
        if task_id in out:
            raise ValueError(f"{path}: task {number}: id {task_id!r} is used twice")
        seen[key] = task_id
        out[task_id] = values
    return out
