"""Benchmark tables a campaign's report shows next to its own results.

A benchmark script (e.g. ``benchmarks/mla_demo.py --json FILE``) writes its measured tables
as JSON; the config key ``report.benchmarks`` lists such files and the report renders each as
a section. The format, one object per file::

    {"title": "...", "command": "...", "commit": "...", "date": "...", "note": "...",
     "tables": [{"caption": "...", "columns": ["method", ...], "rows": [[...], ...]}],
     "targets": [{"caption": "...", "value": 0.7, "target": 0.65, "better": "higher"}]}

``tables`` are shown as they are (numbers rounded to 4 significant digits); each ``targets``
entry becomes a line saying whether the measured value meets its target.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


class BenchmarkFileError(ValueError):
    """A benchmark file that cannot be read or does not have the documented format."""


def load_benchmark(path: str | Path) -> dict[str, Any]:
    """Read and check one benchmark file.

    Raises
    ------
    BenchmarkFileError
        With the file's name and what is wrong.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise BenchmarkFileError(f"benchmark file {path}: {err}") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("title"), str):
        raise BenchmarkFileError(f"benchmark file {path}: an object with a 'title' is needed")
    for i, table in enumerate(data.get("tables", [])):
        columns, rows = table.get("columns"), table.get("rows")
        if not isinstance(columns, list) or not isinstance(rows, list):
            raise BenchmarkFileError(f"benchmark file {path}: table {i} needs columns and rows")
        if any(len(row) != len(columns) for row in rows):
            raise BenchmarkFileError(
                f"benchmark file {path}: a row of table {i} does not have {len(columns)} cells"
            )
    for t in data.get("targets", []):
        if t.get("better") not in ("higher", "lower") or "value" not in t or "target" not in t:
            raise BenchmarkFileError(
                f"benchmark file {path}: a target needs value, target and better "
                "('higher' or 'lower')"
            )
    return dict(data)


def target_met(target: Mapping[str, Any]) -> bool:
    """Whether a ``targets`` entry's value meets its target (ties meet it)."""
    value, goal = float(target["value"]), float(target["target"])
    return value >= goal if target["better"] == "higher" else value <= goal


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


def _table(table: Mapping[str, Any]) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table["columns"])
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in table["rows"]
    )
    caption = table.get("caption")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def benchmark_section(paths: Iterable[str | Path]) -> str:
    """The report's HTML for the benchmark files ``paths`` (empty for none)."""
    parts: list[str] = []
    for path in paths:
        data = load_benchmark(path)
        parts.append(f"<h2>{html.escape(data['title'])}</h2>")
        origin = ", ".join(
            f"{key} {html.escape(str(data[key]))}" for key in ("commit", "date") if data.get(key)
        )
        if data.get("command"):
            parts.append(
                f"<p>Measured by <code>{html.escape(data['command'])}</code>"
                + (f" ({origin})" if origin else "")
                + ".</p>"
            )
        if data.get("note"):
            parts.append(f"<p>{html.escape(data['note'])}</p>")
        parts += [_table(t) for t in data.get("tables", [])]
        targets = data.get("targets", [])
        if targets:
            items = "".join(
                f"<li>{html.escape(t.get('caption', ''))}: {_cell(float(t['value']))} "
                f"({'&ge;' if t['better'] == 'higher' else '&le;'} {_cell(float(t['target']))}"
                f" wanted): <b>{'met' if target_met(t) else 'not met'}</b></li>"
                for t in targets
            )
            parts.append(f"<ul>{items}</ul>")
    return "\n".join(parts)
