"""The ``evidence`` table: the paired re-measurement stored with a tuning-database row.

A row the paired rounds chose over the tuning's pick (reason ``paired``), or confirmed, keeps
their verdict (:func:`propulate.remeasure.verdict.verdict`) as JSON in ``evidence``, keyed by the
row's id like the ``pareto`` table. :func:`beaten` tells whether a configuration offered later
is one that verdict ruled against.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from propulate.tuningdb.schema import statements


def write(conn: sqlite3.Connection, result_id: int, evidence: Mapping[str, Any]) -> None:
    """Store ``evidence`` for the row ``result_id`` (in the caller's transaction); creates the
    table in a database from before it."""
    for statement in statements():
        if "evidence" in statement:
            conn.execute(statement)
    conn.execute(
        "INSERT INTO evidence (result_id, kind, data) VALUES (?, 'paired', ?)",
        (result_id, json.dumps(dict(evidence))),
    )


def read(conn: sqlite3.Connection, result_id: int) -> dict[str, Any] | None:
    """The evidence stored for the row ``result_id`` (``None``: none, or no table yet)."""
    try:
        found = conn.execute(
            "SELECT data FROM evidence WHERE result_id = ?", (result_id,)
        ).fetchone()
    except sqlite3.OperationalError:  # a database from before the evidence table
        return None
    return None if found is None else json.loads(found[0])


def beaten(evidence: Mapping[str, Any] | None, params: Mapping[str, Any]) -> bool:
    """Whether ``params`` is one of the configurations a paired verdict ruled against."""
    if not evidence:
        return False
    measured = [dict(p) for p in evidence.get("configs", [])]
    return dict(params) in measured and dict(params) != dict(evidence["params"])
