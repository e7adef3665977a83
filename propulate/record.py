"""The fields of an evaluation record, shared by the log (``history``) and the spaces.

Parameter names may not take these names: a record's parameters become columns beside them.
"""

from __future__ import annotations

#: The non-parameter fields of a record, in the column order of ``history.read_history``.
META_COLUMNS: tuple[str, ...] = (
    "task",
    "run",
    "method",
    "island",
    "rank",
    "generation",
    "loss",
    "status",
    "error",
    "start",
    "seconds",
    "session",
    "seq",
)
