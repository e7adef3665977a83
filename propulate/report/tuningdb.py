"""The report's tuning-database section: current rows, how each was found, and drift.

Reads a campaign's ``tuning.sqlite`` (:mod:`propulate.tuningdb.store`) in one snapshot and
renders three tables: each task's current row, the machines (fingerprints) the rows were
measured on, and every re-validation with its drift.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd

from propulate.report.tables import html_table
from propulate.runs.fingerprint import FIELDS
from propulate.tuningdb.store import TuningDB

_TEXT = (
    "<p>The configuration each task runs with (<code>python -m propulate suggest</code>): "
    "its current version in the campaign's tuning database, the loss measured for it (mean "
    "and standard deviation over repeated measurements), the stage that found it and the "
    "evaluations that stage spent, and why the version was added: <em>tuned</em> by the "
    "campaign, <em>revalidated</em> (re-measured on a changed machine) or <em>retuned</em> "
    "(TLA2 after drift). Older versions stay in the database.</p>"
)
_DRIFT_TEXT = (
    "<p>When a scheduled run finds a row measured on another machine (its fingerprint "
    "differs), it re-measures the configuration; drift is the relative change of the loss, "
    "and a task whose |drift| exceeds the threshold is re-tuned with TLA2.</p>"
)


def current_table(db: TuningDB) -> pd.DataFrame:
    """One row per task: its current version's configuration, loss and provenance."""
    rows = [
        {
            "task": r.task_id,
            "values": json.dumps(r.task, sort_keys=True),
            "params": json.dumps(r.params, sort_keys=True),
            "loss": r.loss,
            "loss_std": r.loss_std,
            "repeats": len(r.repeats),
            "method": r.method if r.method == r.algorithm else f"{r.method} ({r.algorithm})",
            "evaluations": r.evaluations,
            "version": r.version,
            "reason": r.reason,
            "date": r.created,
            "machine": r.fingerprint_hash,
        }
        for r in db.current()
    ]
    return pd.DataFrame(rows)


def machines_table(db: TuningDB) -> pd.DataFrame:
    """The fingerprints of every stored row: one line per machine."""
    seen: dict[str, dict[str, object]] = {}
    for r in db.versions():
        seen.setdefault(
            r.fingerprint_hash,
            {"machine": r.fingerprint_hash, **{k: r.fingerprint.get(k) for k in FIELDS}},
        )
    return pd.DataFrame(list(seen.values()))


def drift_table(db: TuningDB) -> pd.DataFrame:
    """Every re-validation: stored and re-measured loss, drift, threshold and what changed."""
    rows = [
        {
            "task": d["task_id"],
            "date": d["created"],
            "stored loss": d["old_loss"],
            "re-measured loss": d["new_loss"],
            "repeats": len(d["repeats"]),
            "drift": d["drift"],
            "threshold": d["threshold"],
            "drifted": "yes" if d["drifted"] else "no",
            "machine change": "; ".join(d["changes"]),
        }
        for d in db.revalidations()
    ]
    return pd.DataFrame(rows)


def tuningdb_section(path: str | Path) -> str:
    """The section's HTML for the database at ``path`` (file or campaign directory); a note
    when it does not exist or is empty."""
    try:
        db = TuningDB(path, readonly=True)
    except FileNotFoundError:
        return (
            "<h2>Tuning database</h2>"
            f'<p class="note">No tuning database at {html.escape(str(path))}.</p>'
        )
    with db, db.snapshot():
        current, machines, drift = current_table(db), machines_table(db), drift_table(db)
    parts = ["<h2>Tuning database</h2>", _TEXT]
    if current.empty:
        parts.append('<p class="note">The database holds no rows yet.</p>')
        return "\n".join(parts)
    parts += [
        html_table(current),
        "<h3>Machines</h3>",
        html_table(machines),
        "<h3>Re-validation and drift</h3>",
        _DRIFT_TEXT,
    ]
    if drift.empty:
        parts.append(
            '<p class="note">No re-validation yet: every row was measured on the '
            "machine it was tuned on.</p>"
        )
    else:
        parts.append(html_table(drift))
    return "\n".join(parts)
