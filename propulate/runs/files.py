"""Small JSON files of a run directory: written atomically, read forgivingly."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_json(path: str | Path, data: Any, indent: int | None = 2) -> Path:
    """Write ``data`` as JSON to ``path`` atomically: a reader sees the old file or the new
    one, never half of one (written beside it, then renamed into place).

    Parameters
    ----------
    path : path
        The file; its folder is created when missing.
    data : JSON-ready data
        What to write.
    indent : int or None
        Indentation (``None``: one compact line, for large files).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    text = json.dumps(data, indent=indent) + ("\n" if indent is not None else "")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def read_json(path: str | Path) -> dict[str, Any] | None:
    """A JSON object file's content; ``None`` when it is missing, unreadable or not an object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
