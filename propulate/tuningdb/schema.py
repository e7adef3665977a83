"""The tuning database's SQLite schema: its tables, and triggers that keep rows immutable.

Tables
------
``results``
    One row per (task, version): the configuration, its loss (mean of ``repeats`` when there
    are several), the stage that found it (``evolve``, ``mla``, ``tla1``, ``tla2``) and its
    algorithm, the evaluations that stage spent, why the row was added (``tuned``,
    ``revalidated``, ``retuned``) and its provenance (config hash, package version, UTC date,
    machine fingerprint).
``revalidations``
    One row per re-measurement of a stored configuration on a changed machine: the stored and
    the new loss, their relative drift and whether it exceeded the threshold.
``pareto``
    A row of a task tuned for several objectives: its Pareto set (the objectives' directions
    and the points, JSON).
``evidence``
    A row the paired re-measurement chose or confirmed: its verdict
    (:func:`propulate.remeasure.verdict.verdict`, JSON).
``meta``
    The campaign's spaces (so ``suggest`` needs nothing but this file) and the TLA1 predictor.

Rows of ``results``, ``pareto``, ``evidence`` and ``revalidations`` are never updated or deleted: triggers refuse it.
:class:`propulate.tuningdb.store.TuningDB` creates the schema on first write.
"""

from __future__ import annotations

__all__ = ["SCHEMA", "SCHEMA_VERSION", "statements"]

#: Version of the schema, stored as the ``meta`` key ``schema_version``.
SCHEMA_VERSION = 1

#: The tables and triggers (``CREATE ... IF NOT EXISTS``: safe to run on an existing file).
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_key TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task TEXT NOT NULL,
    version INTEGER NOT NULL,
    params TEXT NOT NULL,
    loss REAL,
    loss_std REAL,
    repeats TEXT NOT NULL,
    method TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    evaluations INTEGER NOT NULL,
    source TEXT,
    reason TEXT NOT NULL,
    config_hash TEXT,
    package_version TEXT NOT NULL,
    created TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    fingerprint_hash TEXT NOT NULL,
    UNIQUE (task_key, version)
);
CREATE TABLE IF NOT EXISTS revalidations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    result_id INTEGER NOT NULL REFERENCES results(id),
    task_key TEXT NOT NULL,
    task_id TEXT NOT NULL,
    created TEXT NOT NULL,
    old_loss REAL,
    new_loss REAL,
    repeats TEXT NOT NULL,
    drift REAL,
    threshold REAL NOT NULL,
    drifted INTEGER NOT NULL,
    changes TEXT NOT NULL,
    fingerprint_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pareto (
    result_id INTEGER PRIMARY KEY REFERENCES results(id),
    objectives TEXT NOT NULL,
    points TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS evidence (
    result_id INTEGER PRIMARY KEY REFERENCES results(id),
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS evidence_never_updated BEFORE UPDATE ON evidence
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never changed'); END;
CREATE TRIGGER IF NOT EXISTS evidence_never_deleted BEFORE DELETE ON evidence
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS pareto_never_updated BEFORE UPDATE ON pareto
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never changed'); END;
CREATE TRIGGER IF NOT EXISTS pareto_never_deleted BEFORE DELETE ON pareto
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS results_never_updated BEFORE UPDATE ON results
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never changed'); END;
CREATE TRIGGER IF NOT EXISTS results_never_deleted BEFORE DELETE ON results
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS revalidations_never_updated BEFORE UPDATE ON revalidations
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never changed'); END;
CREATE TRIGGER IF NOT EXISTS revalidations_never_deleted BEFORE DELETE ON revalidations
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never deleted'); END;
"""


def statements() -> list[str]:
    """The schema's SQL statements, one by one (``sqlite3`` runs one per ``execute``).

    Returns
    -------
    list of str
        The non-empty statements of :data:`SCHEMA`.
    """
    return [statement for statement in SCHEMA.split(";\n") if statement.strip()]
