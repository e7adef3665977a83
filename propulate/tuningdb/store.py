"""The tuning database: one SQLite file per campaign, versioned rows, transactional writers.

``results/<campaign>/tuning.sqlite`` holds, per task, every configuration that was the task's
best at some point. Rows are never updated or deleted (triggers refuse it): a newer result is a
new row with the next ``version`` of its task, and :meth:`TuningDB.current` returns each task's
highest version.
Every write runs in one ``BEGIN IMMEDIATE`` transaction in WAL mode, so a reader (``suggest``,
the report) sees either all of an update or none of it, and never waits for a writer.

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
``meta``
    The campaign's spaces (so ``suggest`` needs nothing but this file) and the TLA1 predictor.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from propulate.tuningdb.fingerprint import canonical_json, fingerprint_hash

#: File name of the database inside a campaign's results directory.
DB_FILE = "tuning.sqlite"
SCHEMA_VERSION = 1
#: Seconds a writer waits for another writer's transaction before giving up.
BUSY_TIMEOUT = 60.0

_SCHEMA = """
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
CREATE TRIGGER IF NOT EXISTS results_never_updated BEFORE UPDATE ON results
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never changed'); END;
CREATE TRIGGER IF NOT EXISTS results_never_deleted BEFORE DELETE ON results
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS revalidations_never_updated BEFORE UPDATE ON revalidations
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never changed'); END;
CREATE TRIGGER IF NOT EXISTS revalidations_never_deleted BEFORE DELETE ON revalidations
BEGIN SELECT RAISE(ABORT, 'tuning database rows are never deleted'); END;
"""


def task_key(task: Mapping[str, Any]) -> str:
    """The identity of a task: its values as canonical JSON (ids are labels only)."""
    return canonical_json(dict(task))


def utc_now() -> str:
    """The current UTC time as ISO 8601 with seconds (``2026-12-03T11:24:16Z``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class TuningRow:
    """One version of one task's best configuration.

    Attributes
    ----------
    task_id : str
        The task's id in its campaign (e.g. ``train00``, ``tall``).
    task : dict
        The task's values.
    params : dict
        The configuration.
    loss : float or None
        Its loss in the objective's units (mean over ``repeats`` when there are several).
    method : str
        The stage that found it: ``evolve``, ``mla``, ``tla1`` or ``tla2``.
    algorithm : str
        The run's method as its summary names it (``propulate``, ``random``, ``optuna``, ...).
    evaluations : int
        Evaluations of the run that found it.
    repeats : list of float
        Every measured loss of this configuration (several for a repeated measurement).
    loss_std : float or None
        Sample standard deviation of ``repeats`` (``None`` with fewer than two).
    source : str or None
        The run directory it was read from.
    reason : str
        ``tuned`` (from a campaign's runs), ``revalidated`` (re-measured on a changed machine)
        or ``retuned`` (TLA2 after drift).
    config_hash, package_version, created : str
        Provenance: hash of the campaign config, ``propulate.__version__``, UTC date.
    fingerprint : dict
        The machine it was measured on (:func:`propulate.tuningdb.fingerprint.machine_fingerprint`).
    version, id : int
        Set by the database: the task's version number (1, 2, ...) and the row's id.
    """

    task_id: str
    task: dict[str, Any]
    params: dict[str, Any]
    loss: float | None
    method: str
    algorithm: str
    evaluations: int
    repeats: list[float] = field(default_factory=list)
    loss_std: float | None = None
    source: str | None = None
    reason: str = "tuned"
    config_hash: str | None = None
    package_version: str = ""
    created: str = ""
    fingerprint: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    id: int = 0

    @property
    def key(self) -> str:
        """The task's identity (:func:`task_key`)."""
        return task_key(self.task)

    @property
    def fingerprint_hash(self) -> str:
        """Short hash of :attr:`fingerprint`."""
        return fingerprint_hash(self.fingerprint)

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data (with its fingerprint hash)."""
        return {**asdict(self), "fingerprint_hash": self.fingerprint_hash}


_ROW_COLUMNS = (
    "id",
    "task_id",
    "task",
    "version",
    "params",
    "loss",
    "loss_std",
    "repeats",
    "method",
    "algorithm",
    "evaluations",
    "source",
    "reason",
    "config_hash",
    "package_version",
    "created",
    "fingerprint",
)
_JSON_COLUMNS = ("task", "params", "repeats", "fingerprint")


def _row(values: Sequence[Any]) -> TuningRow:
    data = dict(zip(_ROW_COLUMNS, values, strict=True))
    for name in _JSON_COLUMNS:
        data[name] = json.loads(data[name])
    return TuningRow(**data)


class TuningDB:
    """A campaign's tuning database (created on first write).

    Parameters
    ----------
    path : path
        The SQLite file, or a campaign results directory holding ``tuning.sqlite``.
    readonly : bool
        Open for reading only; a missing file is then a ``FileNotFoundError``.
    """

    def __init__(self, path: str | Path, readonly: bool = False) -> None:
        path = Path(path)
        self.path = path / DB_FILE if path.is_dir() else path
        self.readonly = readonly
        if readonly:
            if not self.path.is_file():
                raise FileNotFoundError(f"{self.path}: no tuning database")
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self.conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            with self.transaction():
                self._create()

    def _create(self) -> None:
        for statement in _SCHEMA.split(";\n"):
            if statement.strip():
                self.conn.execute(statement)
        self.conn.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (json.dumps(SCHEMA_VERSION),)
        )

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> TuningDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ transactions
    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``): committed as a whole when the block
        ends, rolled back when it raises. Another writer waits up to :data:`BUSY_TIMEOUT`."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query in the block sees the same committed state."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            self.conn.execute("COMMIT")

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str, default: Any = None) -> Any:
        """A stored metadata value (JSON-decoded), or ``default``."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, key: str, value: Any) -> None:
        """Store a metadata value (inside the caller's transaction if there is one)."""

        def put() -> None:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

        if self.conn.in_transaction:
            put()
        else:
            with self.transaction():
                put()

    # ------------------------------------------------------------------ results
    def _insert(self, row: TuningRow) -> TuningRow:
        (version,) = self.conn.execute(
            "SELECT COALESCE(MAX(version), 0) + 1 FROM results WHERE task_key = ?", (row.key,)
        ).fetchone()
        row.version, row.created = int(version), row.created or utc_now()
        cur = self.conn.execute(
            "INSERT INTO results (task_key, task_id, task, version, params, loss, loss_std, "
            "repeats, method, algorithm, evaluations, source, reason, config_hash, "
            "package_version, created, fingerprint, fingerprint_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.key,
                row.task_id,
                canonical_json(row.task),
                row.version,
                canonical_json(row.params),
                row.loss,
                row.loss_std,
                json.dumps(row.repeats),
                row.method,
                row.algorithm,
                int(row.evaluations),
                row.source,
                row.reason,
                row.config_hash,
                row.package_version,
                row.created,
                canonical_json(row.fingerprint),
                row.fingerprint_hash,
            ),
        )
        row.id = int(cur.lastrowid or 0)
        return row

    def add(self, row: TuningRow) -> TuningRow:
        """Store ``row`` as its task's next version (inside the caller's transaction if any)."""
        if self.conn.in_transaction:
            return self._insert(row)
        with self.transaction():
            return self._insert(row)

    def offer(self, row: TuningRow) -> bool:
        """Store ``row`` as a new version if it improves on its task's current one.

        It does when the task has no row yet, when the current row was measured on another
        machine (different fingerprint), or when its loss is lower. Offering the same result
        twice therefore adds it once. Runs inside the caller's transaction if there is one.
        """
        current = self.current_row(row.task)
        better = (
            current is None
            or current.fingerprint_hash != row.fingerprint_hash
            or (row.loss is not None and (current.loss is None or row.loss < current.loss))
        )
        if better:
            self.add(row)
        return better

    def current_row(self, task: Mapping[str, Any]) -> TuningRow | None:
        """The current (highest) version of a task's row, or ``None``."""
        values = self.conn.execute(
            f"SELECT {', '.join(_ROW_COLUMNS)} FROM results WHERE task_key = ? "
            "ORDER BY version DESC LIMIT 1",
            (task_key(task),),
        ).fetchone()
        return _row(values) if values else None

    def current(self) -> list[TuningRow]:
        """Every task's current row, ordered by task id (one consistent snapshot)."""
        rows = self.conn.execute(
            f"SELECT {', '.join('r.' + c for c in _ROW_COLUMNS)} FROM results r "
            "JOIN (SELECT task_key, MAX(version) AS v FROM results GROUP BY task_key) c "
            "ON r.task_key = c.task_key AND r.version = c.v ORDER BY r.task_id, r.task_key"
        ).fetchall()
        return [_row(v) for v in rows]

    def versions(self, task: Mapping[str, Any] | None = None) -> list[TuningRow]:
        """Every row (of one task, or of all), oldest first."""
        where, args = ("WHERE task_key = ?", (task_key(task),)) if task is not None else ("", ())
        rows = self.conn.execute(
            f"SELECT {', '.join(_ROW_COLUMNS)} FROM results {where} ORDER BY id", args
        ).fetchall()
        return [_row(v) for v in rows]

    # ------------------------------------------------------------------ revalidations
    def add_revalidation(
        self,
        row: TuningRow,
        new_loss: float | None,
        repeats: list[float],
        drift: float | None,
        threshold: float,
        drifted: bool,
        changes: list[str],
        fingerprint: Mapping[str, Any],
    ) -> None:
        """Record a re-measurement of the stored row ``row`` on the machine ``fingerprint``."""

        def put() -> None:
            self.conn.execute(
                "INSERT INTO revalidations (result_id, task_key, task_id, created, old_loss, "
                "new_loss, repeats, drift, threshold, drifted, changes, fingerprint_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.id,
                    row.key,
                    row.task_id,
                    utc_now(),
                    row.loss,
                    new_loss,
                    json.dumps(repeats),
                    drift,
                    threshold,
                    int(drifted),
                    json.dumps(changes),
                    fingerprint_hash(fingerprint),
                ),
            )

        if self.conn.in_transaction:
            put()
        else:
            with self.transaction():
                put()

    def revalidations(self) -> list[dict[str, Any]]:
        """Every re-measurement, oldest first, as dicts (the report's drift table)."""
        cols = (
            "id",
            "result_id",
            "task_id",
            "created",
            "old_loss",
            "new_loss",
            "repeats",
            "drift",
            "threshold",
            "drifted",
            "changes",
            "fingerprint_hash",
        )
        out = []
        for values in self.conn.execute(
            f"SELECT {', '.join(cols)} FROM revalidations ORDER BY id"
        ).fetchall():
            data = dict(zip(cols, values, strict=True))
            data["repeats"] = json.loads(data["repeats"])
            data["changes"] = json.loads(data["changes"])
            data["drifted"] = bool(data["drifted"])
            out.append(data)
        return out
